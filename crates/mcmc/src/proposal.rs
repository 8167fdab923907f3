//! Symmetric random-walk proposals (thesis §3.1; Yildirim & Ermiş 2019).

use alloc::vec::Vec;
use rand_core::Rng;

use dpinfer_simulators::{BatchClipSum, Prior, RowLikelihood};

use crate::McmcError;
use crate::rng::{below, std_normal};

/// How a random-walk sampler proposes `θ'` from `θ`. All three are symmetric
/// (`q(θ'|θ) = q(θ|θ')`; the guided walk on the extended space of (θ, directions)), so the
/// proposal ratio in λ is 0.
#[derive(Clone, Debug, PartialEq)]
pub enum Proposal {
    /// `θ' = θ + s ⊙ z`, `z ~ N(0, I)`: moves every coordinate.
    Gaussian {
        /// Per-coordinate step sizes (length `d`).
        scale: Vec<f64>,
    },
    /// Pick one coordinate `i` uniformly and set `θ'_i = θ_i + s_i z`. Smaller `‖θ' − θ‖`
    /// means less DP-penalty noise (YE19).
    OneCoordinate {
        /// Per-coordinate step sizes.
        scale: Vec<f64>,
    },
    /// Guided random walk (YE19): one coordinate `i`, `θ'_i = θ_i + dir_i · s_i |z|`;
    /// the direction is kept after an accept and flipped after a reject.
    GuidedRandomWalk {
        /// Per-coordinate step sizes.
        scale: Vec<f64>,
    },
}

impl Proposal {
    pub(crate) fn validate(&self, dim: usize) -> Result<(), McmcError> {
        let s = self.scale();
        if s.len() != dim {
            return Err(McmcError::DimensionMismatch {
                expected: dim,
                got: s.len(),
            });
        }
        for &x in s {
            crate::error::positive("proposal scale", x)?;
        }
        Ok(())
    }
    fn scale(&self) -> &[f64] {
        match self {
            Self::Gaussian { scale }
            | Self::OneCoordinate { scale }
            | Self::GuidedRandomWalk { scale } => scale,
        }
    }
}

/// Proposal state (directions of the guided walk) plus the last proposed coordinate.
#[derive(Clone, Debug)]
pub(crate) struct ProposalState {
    pub(crate) proposal: Proposal,
    directions: Vec<f64>,
    last_coord: usize,
}

impl ProposalState {
    pub(crate) fn new(proposal: Proposal, dim: usize) -> Self {
        Self {
            proposal,
            directions: alloc::vec![1.0; dim],
            last_coord: 0,
        }
    }

    /// Writes θ' into `out`; returns ‖θ' − θ‖₂.
    pub(crate) fn propose<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        theta: &[f64],
        out: &mut [f64],
    ) -> f64 {
        out.copy_from_slice(theta);
        match &self.proposal {
            Proposal::Gaussian { scale } => {
                let mut sq = 0.0;
                for j in 0..theta.len() {
                    let step = scale[j] * std_normal(rng);
                    out[j] += step;
                    sq += step * step;
                }
                libm::sqrt(sq)
            }
            Proposal::OneCoordinate { scale } => {
                let i = below(rng, theta.len());
                self.last_coord = i;
                let step = scale[i] * std_normal(rng);
                out[i] += step;
                step.abs()
            }
            Proposal::GuidedRandomWalk { scale } => {
                let i = below(rng, theta.len());
                self.last_coord = i;
                let step = scale[i] * std_normal(rng).abs();
                out[i] += self.directions[i] * step;
                step
            }
        }
    }

    /// Updates the guided-walk direction after the acceptance decision.
    pub(crate) fn after(&mut self, accepted: bool) {
        if !accepted && matches!(self.proposal, Proposal::GuidedRandomWalk { .. }) {
            self.directions[self.last_coord] = -self.directions[self.last_coord];
        }
    }
}

/// A proposal θ′ (held in [`Walker::proposed`]): its distance `‖θ′ − θ‖₂` and `ln p(θ′)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Proposed {
    pub(crate) dist: f64,
    pub(crate) log_prior: f64,
}

/// The state of a random-walk chain (DP penalty, subsampled penalty, Barker): position, the
/// proposal buffer, `ln p(θ)` and the proposal state. One place proposes and moves.
#[derive(Clone, Debug)]
pub(crate) struct Walker {
    pub(crate) theta: Vec<f64>,
    pub(crate) proposed: Vec<f64>,
    pub(crate) log_prior: f64,
    state: ProposalState,
}

impl Walker {
    /// Checks the model, temperature, initial point and proposal; starts at `init`.
    pub(crate) fn new<P: Prior, L: RowLikelihood>(
        prior: &P,
        lik: &L,
        proposal: Proposal,
        temperature: f64,
        init: &[f64],
    ) -> Result<Self, McmcError> {
        let log_prior = crate::penalty::check_common(prior, lik, temperature, init)?;
        proposal.validate(init.len())?;
        Ok(Self {
            state: ProposalState::new(proposal, init.len()),
            theta: init.to_vec(),
            proposed: init.to_vec(),
            log_prior,
        })
    }

    /// Proposes θ' into `proposed`.
    pub(crate) fn propose<R: Rng + ?Sized, P: Prior>(
        &mut self,
        rng: &mut R,
        prior: &P,
    ) -> Proposed {
        let dist = self.state.propose(rng, &self.theta, &mut self.proposed);
        Proposed {
            dist,
            log_prior: prior.ln_density(&self.proposed),
        }
    }

    /// The ratios `r_j(θ, θ′)` of the listed rows (a minibatch) against the proposal, clipped
    /// to `±b` ([`RowLikelihood::clipped_log_ratio_rows`]): Σ, Σ² and the clipped count.
    pub(crate) fn clipped_rows<L: RowLikelihood>(
        &self,
        lik: &L,
        rows: &[usize],
        b: f64,
    ) -> Result<BatchClipSum, McmcError> {
        Ok(lik.clipped_log_ratio_rows(&self.theta, &self.proposed, rows, b)?)
    }

    /// The decision that needs no data (DP penalty, subsampled DP penalty): reject θ′ with a
    /// non-finite log prior or distance, accept θ′ = θ (every ratio is 0), reject when the
    /// per-row bound `clip · ‖θ′−θ‖₂` is not usable ([`crate::model::usable_bound`]); `None`
    /// when the data must decide.
    pub(crate) fn data_free_decision(p: Proposed, clip: Option<f64>) -> Option<bool> {
        let Proposed { dist, log_prior } = p;
        if !log_prior.is_finite() || !dist.is_finite() {
            Some(false)
        } else if dist == 0.0 {
            Some(true)
        } else if clip.is_some_and(|l| crate::model::usable_bound(l * dist).is_none()) {
            Some(false)
        } else {
            None
        }
    }

    /// Moves to θ' if `accepted` (with its log prior `lp_new`) and updates the proposal.
    pub(crate) fn decide(&mut self, accepted: bool, lp_new: f64) {
        if accepted {
            self.theta.copy_from_slice(&self.proposed);
            self.log_prior = lp_new;
        }
        self.state.after(accepted);
    }
}
