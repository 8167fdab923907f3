//! SVT-ABC (ABCDP, Park, Vinaroz & Jitkrittum 2021, Algorithm 1): the data owner's private
//! pass over the modeler's public pairs, using the sparse-vector mechanism of
//! `dpinfer-mechanisms` (exact discrete Laplace noise on a grid: threshold noise `Lap(b)`,
//! query noise `Lap(2b)`, stop after `c` acceptances, optional RESAMPLE, `b` from ε_total by
//! Theorem 1).
//!
//! ```
//! # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
//! use dpinfer_abc::pairs::PublicPairs;
//! use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
//! use dpinfer_abc::analysis::Resample;
//! use dpinfer_distances::{Relations, Sensitivity};
//! // Public pairs: θ_t and a 1-d summary Y_t (here loaded, not simulated).
//! let pairs = PublicPairs::from_parts(1, 1, vec![0.1, 0.2, 0.3, 0.4], vec![0.9, 0.52, 0.1, 0.48]).unwrap();
//! let observed = 0.5; // private
//! let settings = SvtAbcSettings { epsilon_abc: 0.05, epsilon_total: 1.0, c: 2,
//!     sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(), clip: 1.0,
//!     resample: Resample::Never };
//! let mut pass = SvtAbc::new(&pairs, |y: &[f64]| (y[0] - observed).abs(), settings).unwrap();
//! let mut noise = ChaCha20Rng::seed_from_u64(1); // a secret seed in practice
//! pass.run(&mut noise).unwrap();
//! assert!(pass.epsilon() <= 1.0);
//! assert!(pass.accepted_indices().len() <= 2);
//! ```
//!
//! # Privacy
//!
//! The released output — the indicator stream `τ̃_1, …, τ̃_k` up to the stopping time, hence
//! the accepted θs — is pure ε-DP with ε = [`SvtAbc::epsilon`] `≤ epsilon_total` (Theorem 1,
//! with the grid-rounded sensitivity Δ′ of the mechanism), for the neighbouring relation under
//! which `sensitivity` bounds the change of the clipped distance `min(ρ(Y*, Y), clip)` for
//! every public `Y` (replace-one with `Δ_ρ = 2√B_k/N` for MMD, Lemma 1; `Δ = clip` when the
//! distance has no bounded sensitivity). The whole budget is charged even if fewer than `c`
//! samples are accepted. Noise comes only from the caller's `NoiseRng` (a `CryptoRng`), never
//! from the simulation streams that built the pairs.
//!
//! # References
//!
//! Park, Vinaroz, Jitkrittum, Entropy 23 (2021) 961: §3 (two-party workflow), Algorithm 1,
//! Theorem 1; Lyu, Su & Li, PVLDB 10 (2017) (RESAMPLE = False).

use alloc::vec::Vec;

use dpinfer_accountants::{AccountantKind, Claim, ConversionRule, Event, EventBuf, Neighbouring};
use dpinfer_distances::Sensitivity;
use dpinfer_mechanisms::{MechanismError, NoiseRng, SparseVector, SparseVectorSettings};

use crate::analysis::Resample;
use crate::discrepancy::{Ahead, Discrepancy};
use crate::error::{AbcError, positive};
use crate::pairs::PublicPairs;
use crate::pass::{PrivatePass, Released};

/// Settings of the private pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SvtAbcSettings {
    /// ABC threshold ε_abc (public).
    pub epsilon_abc: f64,
    /// Total privacy budget ε_total (> 0).
    pub epsilon_total: f64,
    /// Stop after `c ≥ 1` acceptances.
    pub c: u64,
    /// Sensitivity Δ_ρ of the clipped distance with the neighbouring relations it holds
    /// for; the pass's claim is stated under [`Sensitivity::relation`].
    pub sensitivity: Sensitivity,
    /// Clipping bound C: distances are clamped to `[0, C]` before noise.
    pub clip: f64,
    /// Threshold-noise policy (RESAMPLE).
    pub resample: Resample,
}

impl SvtAbcSettings {
    /// Checks the settings.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidParameter`] for a non-positive or non-finite `epsilon_abc` (the
    /// ABC threshold of Algorithm 1 is a tolerance `ε_abc > 0`), `epsilon_total` or `clip`
    /// (a [`Sensitivity`] is finite and positive by construction); [`AbcError::InvalidCount`]
    /// for `c == 0`.
    pub fn validate(&self) -> Result<(), AbcError> {
        positive("epsilon_abc", self.epsilon_abc)?;
        positive("epsilon_total", self.epsilon_total)?;
        positive("clip", self.clip)?;
        if self.c == 0 {
            return Err(AbcError::InvalidCount {
                name: "c",
                value: 0,
            });
        }
        Ok(())
    }
}

/// What one step of the private pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SvtStep {
    /// Pair `t` was accepted (`τ̃_t = 1`).
    Accepted(usize),
    /// Pair `t` was rejected (`τ̃_t = 0`).
    Rejected(usize),
    /// The pass is over: `c` acceptances, or all pairs used.
    Done,
}

/// The data owner's private pass (Algorithm 1) over borrowed public pairs, with a
/// [`Discrepancy`] that captures the private observation.
pub struct SvtAbc<'a, D> {
    pairs: &'a PublicPairs,
    dist: D,
    ahead: Ahead,
    svt: SparseVector,
    relation: Neighbouring,
    next: usize,
    indicators: Vec<bool>,
    accepted: Vec<usize>,
    done: bool,
}

impl<D> core::fmt::Debug for SvtAbc<'_, D> {
    /// Public progress only (never distances or noise).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SvtAbc")
            .field("svt", &self.svt)
            .field("next", &self.next)
            .field("accepted", &self.accepted.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

fn mech(e: MechanismError) -> AbcError {
    match e {
        MechanismError::BudgetExhausted => AbcError::Finished,
        _ => crate::error::mechanism_failed(e),
    }
}

impl<'a, D: Discrepancy> SvtAbc<'a, D> {
    /// Calibrates the sparse-vector mechanism (Theorem 1: `b = (c+1)Δ′/ε` or `2cΔ′/ε`, with
    /// the mechanism's grid-rounded Δ′ and rounded up so that ε ≤ `epsilon_total`).
    ///
    /// # Errors
    ///
    /// As [`SvtAbcSettings::validate`]; [`AbcError::Mechanism`] if the mechanism rejects
    /// the parameters (e.g. a noise scale out of its grid range for an extreme
    /// `epsilon_total`), naming the setting it follows from.
    pub fn new(
        pairs: &'a PublicPairs,
        dist: D,
        settings: SvtAbcSettings,
    ) -> Result<Self, AbcError> {
        settings.validate()?;
        let svt = SparseVector::from_epsilon(
            SparseVectorSettings {
                threshold: settings.epsilon_abc,
                sensitivity: settings.sensitivity.value(),
                lo: 0.0,
                hi: settings.clip,
                c: settings.c,
                resample: settings.resample == Resample::AfterAccept,
            },
            settings.epsilon_total,
        )
        .map_err(|e| {
            // b = kΔ/ε: an out-of-range scale comes from the budget (Δ and c are bounded
            // by the distance and the user's count).
            crate::error::mechanism_rejected(
                e,
                &[
                    ("epsilon", "epsilon_total", settings.epsilon_total),
                    ("scale", "epsilon_total", settings.epsilon_total),
                    ("threshold", "epsilon_abc", settings.epsilon_abc),
                    ("sensitivity", "sensitivity", settings.sensitivity.value()),
                    ("bounds", "clip", settings.clip),
                ],
            )
        })?;
        Ok(Self {
            pairs,
            dist,
            ahead: Ahead::default(),
            svt,
            relation: settings.sensitivity.relation(),
            next: 0,
            indicators: Vec::new(),
            accepted: Vec::new(),
            done: false,
        })
    }

    /// Processes the next pair: computes `ρ(Y*, Y_t)` (NaN read as `+∞`), clamps it to
    /// `[0, clip]` and asks the sparse-vector mechanism. The distances are computed ahead in
    /// blocks ([`Discrepancy::distances`]: batched, multi-threaded for the crate's
    /// discrepancies); those of pairs after the stopping time are never used.
    ///
    /// # Errors
    ///
    /// [`AbcError::Mechanism`] if the noise RNG fails (nothing is released for this pair and
    /// the step may be retried).
    pub fn step<R: NoiseRng + ?Sized>(&mut self, noise_rng: &mut R) -> Result<SvtStep, AbcError> {
        if self.done {
            return Ok(SvtStep::Done);
        }
        if self.next >= self.pairs.len() || self.svt.is_exhausted() {
            self.done = true;
            return Ok(SvtStep::Done);
        }
        let t = self.next;
        let rho = self.ahead.get(&self.dist, self.pairs, t);
        let accept = self.svt.query(rho, noise_rng).map_err(mech)?;
        self.next += 1;
        self.indicators.push(accept);
        if accept {
            self.accepted.push(t);
        }
        if self.svt.is_exhausted() || self.next >= self.pairs.len() {
            self.done = true;
        }
        Ok(if accept {
            SvtStep::Accepted(t)
        } else {
            SvtStep::Rejected(t)
        })
    }

    /// Runs the pass to the end.
    ///
    /// # Errors
    ///
    /// As [`SvtAbc::step`].
    pub fn run<R: NoiseRng + ?Sized>(&mut self, noise_rng: &mut R) -> Result<(), AbcError> {
        while self.step(noise_rng)? != SvtStep::Done {}
        Ok(())
    }

    /// The released indicator stream `τ̃_1..τ̃_k` (k = pairs processed).
    #[must_use]
    pub fn indicators(&self) -> &[bool] {
        &self.indicators
    }

    /// Indices of the accepted pairs.
    #[must_use]
    pub fn accepted_indices(&self) -> &[usize] {
        &self.accepted
    }

    /// The accepted θs, row-major (public post-processing of the indicators).
    #[must_use]
    pub fn accepted_thetas(&self) -> Vec<f64> {
        let mut v = Vec::with_capacity(self.accepted.len() * self.pairs.theta_dim());
        for &t in &self.accepted {
            v.extend_from_slice(self.pairs.theta(t));
        }
        v
    }

    /// `true` once the pass is over.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.done
    }

    /// The threshold-noise scale `b` in use (query noise `2b`).
    #[must_use]
    pub fn noise_scale(&self) -> f64 {
        self.svt.scale()
    }

    /// The grid-rounded sensitivity Δ′ the privacy guarantee is computed with.
    #[must_use]
    pub fn effective_sensitivity(&self) -> f64 {
        self.svt.effective_sensitivity()
    }

    /// The ledger entry: [`Event::SparseVector`] with `c`, `b`, Δ′ and RESAMPLE.
    #[must_use]
    pub fn event(&self) -> Event<'static> {
        self.svt.event()
    }

    /// The total ε of the pass (Theorem 1), charged in full: `≤ epsilon_total`.
    #[must_use]
    pub fn epsilon(&self) -> f64 {
        self.svt.epsilon()
    }

    /// The pass's privacy claim as a value: its [`Event::SparseVector`], released once,
    /// composed in the pure-ε accountant under the neighbouring relation the settings'
    /// sensitivity Δ holds for ([`Sensitivity::relation`]; ABCDP Theorem 1, Park, Vinaroz &
    /// Jitkrittum 2021; e.g. replace-one for the RFF MMD of Lemma 1). The accountant evaluates Theorem 1's
    /// `kΔ′/b` with exact upward rounding (the smallest `f64` not below it) and composes the
    /// single release exactly, so the claim is the true cost of the session rounded up to the
    /// next `f64`, and never above `epsilon_total` (the mechanism calibrates `b` so that the
    /// exact cost fits; tested for 840 settings in `dpinfer-mechanisms`' `claims_fit`).
    ///
    /// # Errors
    ///
    /// [`AbcError::Accounting`] if the accountant rejects the event.
    pub fn claim(&self) -> Result<Claim, AbcError> {
        pure_claim(&self.event(), self.relation)
    }
}

/// The claim of one pure-ε release `event` under `relation` (pure-ε accountant, δ = 0).
pub(crate) fn pure_claim(event: &Event<'_>, relation: Neighbouring) -> Result<Claim, AbcError> {
    Claim::account(
        relation,
        AccountantKind::Pure,
        ConversionRule::Tightest,
        alloc::vec![(EventBuf::from(event), 1)],
        0.0,
    )
    .map_err(|_| AbcError::Accounting)
}

impl<R: NoiseRng + ?Sized, D: Discrepancy> PrivatePass<R> for SvtAbc<'_, D> {
    fn claim(&self) -> Result<Claim, AbcError> {
        Self::claim(self)
    }

    fn run(&mut self, noise: &mut R) -> Result<(), AbcError> {
        Self::run(self, noise)
    }

    /// The accepted θs; facts `laplace_scale_b`, `accepted`, `examined`.
    #[allow(clippy::cast_precision_loss)]
    fn release(&self) -> Result<Released, AbcError> {
        let samples = self.accepted_thetas();
        let facts = alloc::vec![
            ("laplace_scale_b", self.noise_scale()),
            ("accepted", (samples.len() / self.pairs.theta_dim()) as f64),
            ("examined", self.indicators.len() as f64),
        ];
        Ok(Released {
            samples,
            weights: None,
            facts,
        })
    }
}
