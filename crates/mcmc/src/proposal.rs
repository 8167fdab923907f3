//! Symmetric random-walk proposals (thesis §3.1; Yildirim & Ermiş 2019), and a Gaussian
//! walk in public sheared coordinates (thesis §2.3, Definition 8).

use alloc::vec::Vec;
use rand_core::Rng;

use dpinfer_simulators::{BatchClipSum, Prior, RowLikelihood};

use crate::McmcError;
use crate::rng::{below, std_normal};

/// How a random-walk sampler proposes `θ'` from `θ`. All four are symmetric
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
    /// A Gaussian walk in the sheared coordinates `φ(θ) = (θ₁, θ₂ + a(θ₁ − m)², θ₃, …)`:
    /// `φ(θ') = φ(θ) + s ⊙ z`, `z ~ N(0, I)` ([`Shear`]). `φ` is a bijection with Jacobian
    /// determinant 1 (the map `g⁻¹` of the banana distribution, thesis §2.3 Definition 8, with
    /// its shift `b` cancelled), so `q(θ'|θ) = N(φ(θ') − φ(θ); 0, diag(s²)) = q(θ|θ')`: the
    /// walk is symmetric. On a banana posterior Ban(μ, Σ, a, b, m) (thesis Theorem 5) with the
    /// same `a` and `m` it is a Gaussian random walk on the Gaussian N(μ, Σ).
    ///
    /// # Privacy
    ///
    /// `a` and `m` are public settings (for the banana model they are its prior's), never
    /// computed from the data, so the walk costs no privacy.
    Sheared {
        /// Per-coordinate step sizes in the sheared coordinates (length `d ≥ 2`).
        scale: Vec<f64>,
        /// The shear.
        shear: Shear,
    },
}

/// The shear `φ(θ) = (θ₁, θ₂ + a(θ₁ − m)², θ₃, …)` of [`Proposal::Sheared`]: the curvature
/// `a` and centre `m` of the banana distribution (thesis §2.3, Definition 8).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Shear {
    /// Curvature `a` (finite).
    pub a: f64,
    /// Centre `m` (finite).
    pub m: f64,
}

impl Shear {
    /// `a(θ₁ − m)²`, the shift of the second coordinate at `θ₁`.
    fn shift(self, theta1: f64) -> f64 {
        let x = theta1 - self.m;
        self.a * x * x
    }
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
        if let Self::Sheared { shear, .. } = self {
            // The shear acts on two coordinates, θ₁ and θ₂.
            if dim < 2 {
                return Err(McmcError::WrongLength {
                    name: "shear",
                    expected: dim,
                    got: 2,
                });
            }
            for (name, x) in [("shear.a", shear.a), ("shear.m", shear.m)] {
                if !x.is_finite() {
                    return Err(McmcError::param(name, x));
                }
            }
        }
        Ok(())
    }
    fn scale(&self) -> &[f64] {
        match self {
            Self::Gaussian { scale }
            | Self::OneCoordinate { scale }
            | Self::GuidedRandomWalk { scale }
            | Self::Sheared { scale, .. } => scale,
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
            Proposal::Sheared { scale, shear } => {
                // φ(θ') = φ(θ) + s ⊙ z, then θ' = φ⁻¹(φ(θ')): the first and the k ≥ 3
                // coordinates move as in the Gaussian walk, the second by its step minus the
                // change of the shift a(θ₁ − m)².
                for j in 0..theta.len() {
                    out[j] += scale[j] * std_normal(rng);
                }
                out[1] -= shear.shift(out[0]) - shear.shift(theta[0]);
                let mut sq = 0.0;
                for j in 0..theta.len() {
                    let step = out[j] - theta[j];
                    sq += step * step;
                }
                libm::sqrt(sq)
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

#[cfg(test)]
mod tests {
    use super::{Proposal, ProposalState, Shear};
    use crate::McmcError;
    use crate::rng::std_normal;
    use alloc::vec::Vec;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    const SHEAR: Shear = Shear { a: 20.0, m: 0.3 };

    /// `φ(θ) = (θ₁, θ₂ + a(θ₁ − m)², θ₃, …)`, written out independently of the proposal.
    fn phi(t: &[f64]) -> Vec<f64> {
        let mut v = t.to_vec();
        v[1] += SHEAR.a * (t[0] - SHEAR.m) * (t[0] - SHEAR.m);
        v
    }

    #[test]
    fn the_sheared_walk_is_a_gaussian_step_in_the_sheared_coordinates() {
        // φ(θ') − φ(θ) is exactly the s ⊙ z the Gaussian walk would add, z drawn from the same
        // stream (the same draws in the same order as `Proposal::Gaussian`), and the step
        // −s ⊙ z from θ' returns to θ: the map is the bijection the symmetry argument needs.
        let scale = alloc::vec![0.1, 0.03, 0.5];
        let mut st = ProposalState::new(
            Proposal::Sheared {
                scale: scale.clone(),
                shear: SHEAR,
            },
            3,
        );
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut again = rng.clone();
        let mut theta = alloc::vec![0.2, 2.5, -1.0];
        let mut out = alloc::vec![0.0; 3];
        for _ in 0..200 {
            let dist = st.propose(&mut rng, &theta, &mut out);
            let z: Vec<f64> = (0..3).map(|_| std_normal(&mut again)).collect();
            let (pt, po) = (phi(&theta), phi(&out));
            for j in 0..3 {
                let want = scale[j] * z[j];
                assert!((po[j] - pt[j] - want).abs() <= 1e-12, "{j}: {po:?} {pt:?}");
            }
            let back = {
                let mut v: Vec<f64> = (0..3).map(|j| po[j] - scale[j] * z[j]).collect();
                v[1] -= SHEAR.a * (v[0] - SHEAR.m) * (v[0] - SHEAR.m);
                v
            };
            for j in 0..3 {
                assert!((back[j] - theta[j]).abs() <= 1e-12);
            }
            let d2: f64 = (0..3)
                .map(|j| (out[j] - theta[j]) * (out[j] - theta[j]))
                .sum();
            assert!((dist - libm::sqrt(d2)).abs() <= 1e-12);
            theta.copy_from_slice(&out);
        }
    }

    #[test]
    fn a_shear_needs_two_coordinates_and_finite_settings() {
        let sheared = |scale: Vec<f64>, a, m| Proposal::Sheared {
            scale,
            shear: Shear { a, m },
        };
        assert_eq!(
            sheared(alloc::vec![0.1], 20.0, 0.0).validate(1),
            Err(McmcError::WrongLength {
                name: "shear",
                expected: 1,
                got: 2,
            })
        );
        assert!(matches!(
            sheared(alloc::vec![0.1, 0.1], f64::NAN, 0.0).validate(2),
            Err(McmcError::InvalidParameter {
                name: "shear.a",
                ..
            })
        ));
        assert!(matches!(
            sheared(alloc::vec![0.1, 0.1], 20.0, f64::INFINITY).validate(2),
            Err(McmcError::InvalidParameter {
                name: "shear.m",
                ..
            })
        ));
        assert!(matches!(
            sheared(alloc::vec![0.1, -0.1], 20.0, 0.0).validate(2),
            Err(McmcError::InvalidParameter { .. })
        ));
        assert_eq!(
            sheared(alloc::vec![0.1, 0.1], 20.0, 0.0).validate(3),
            Err(McmcError::DimensionMismatch {
                expected: 3,
                got: 2
            })
        );
        assert_eq!(
            sheared(alloc::vec![0.1, 0.1], -3.0, 1.0).validate(2),
            Ok(())
        );
    }
}
