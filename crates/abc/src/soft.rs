//! Soft-ABC with differential privacy (Park & Jitkrittum, arXiv, Algorithm 2, Theorems
//! 3.2–3.3; the private version of K2-ABC): every public pair gets the weight
//! `ω_t ∝ exp(−D̃_t)` with the noisy scaled distance `D̃_t = min(ρ_t, B)/ε_abc + N(0, σ²)`;
//! negative values are projected to a small positive floor (post-processing) and the weights
//! are normalised in log space (no 0/0).
//!
//! The query released per pair is `ρ_t/ε_abc`, whose sensitivity is **Δ_ρ/ε_abc** (not Δ_ρ —
//! dividing by ε_abc scales the sensitivity too; Theorem 3.2's `αΔ²/(2σ²ε_abc²)`).
//!
//! # Privacy
//!
//! σ is calibrated through the accountants crate: the per-pair zCDP budget is
//! `ρ_step = rho_for_approx(ε_total, δ_total) / T` and the mechanisms crate's exact discrete
//! Gaussian with sensitivity `Δ_ρ/ε_abc` and bounds `[0, B/ε_abc]` is built from it. The ledger
//! is `T` adaptive repetitions of its [`Event::Zcdp`] (RDP `αρ` at every order, exactly
//! Theorem 3.3's `α Δ² T / (2σ² ε_abc²)` with the grid-rounded Δ′ and σ_eff), and
//! [`SoftAbcdp::epsilon`] converts it at δ_total with the accountants' zCDP conversion (never
//! looser than Proposition 1 of the paper). Neighbouring relation: the one `sensitivity` is
//! computed for.
//!
//! # References
//!
//! Park & Jitkrittum, *ABCDP: Approximate Bayesian Computation Meets Differential Privacy*,
//! arXiv (2022), Algorithm 2, Theorems 3.2–3.3; Park, Jitkrittum & Sejdinovic, K2-ABC,
//! AISTATS 2016.

use alloc::vec::Vec;

use dpinfer_accountants::{
    Accountant, AccountantKind, Claim, ConversionRule, Event, EventBuf, Neighbouring,
    ZcdpAccountant,
};
use dpinfer_distances::Sensitivity;
use dpinfer_mechanisms::{Gaussian, NoiseRng};

use crate::discrepancy::{Ahead, Discrepancy};
use crate::error::{AbcError, positive};
use crate::pairs::PublicPairs;
use crate::pass::{PrivatePass, Released};
use crate::weights::normalize_log_weights;

/// Settings of [`SoftAbcdp`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoftAbcdpSettings {
    /// Soft threshold ε_abc (> 0): the kernel is `exp(−ρ/ε_abc)`.
    pub epsilon_abc: f64,
    /// Total ε over all `T` pairs.
    pub epsilon_total: f64,
    /// Total δ, in (0, 1).
    pub delta_total: f64,
    /// Sensitivity Δ_ρ of the clipped distance `min(ρ, bound)` with the neighbouring relations
    /// it holds for; the pass's claim is stated under [`Sensitivity::relation`].
    pub sensitivity: Sensitivity,
    /// Clipping bound B of the distance.
    pub bound: f64,
    /// Floor for negative noisy distances (post-processing), `> 0` and finite.
    pub floor: f64,
}

impl SoftAbcdpSettings {
    /// The default [`floor`](Self::floor): `1e-12`, far below any distance scale of the
    /// papers' experiments, so flooring (post-processing) only keeps `exp(−D̃)` finite.
    pub const FLOOR: f64 = 1e-12;

    /// Checks the settings (as [`SoftAbcdp::new`] does before calibrating).
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidParameter`] naming the first of `epsilon_abc`, `epsilon_total`,
    /// `bound`, `floor` that is not finite and positive, or `delta_total` outside (0, 1) (a
    /// [`Sensitivity`] is finite and positive by construction).
    pub fn validate(&self) -> Result<(), AbcError> {
        positive("epsilon_abc", self.epsilon_abc)?;
        positive("epsilon_total", self.epsilon_total)?;
        let delta = self.delta_total;
        if !(delta > 0.0 && delta < 1.0) {
            return Err(AbcError::InvalidParameter {
                name: "delta_total",
                value: delta,
            });
        }
        positive("bound", self.bound)?;
        positive("floor", self.floor)?;
        Ok(())
    }
}

/// Algorithm 2 over public pairs.
pub struct SoftAbcdp<'a, D> {
    pairs: &'a PublicPairs,
    dist: D,
    ahead: Ahead,
    settings: SoftAbcdpSettings,
    mech: Gaussian,
    relation: Neighbouring,
    noisy: Vec<f64>,
}

impl<D> core::fmt::Debug for SoftAbcdp<'_, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SoftAbcdp")
            .field("settings", &self.settings)
            .field("mech", &self.mech)
            .field("released", &self.noisy.len())
            .finish_non_exhaustive()
    }
}

impl<'a, D: Discrepancy> SoftAbcdp<'a, D> {
    /// Calibrates the per-pair Gaussian mechanism (see the [module docs](self)). The claim is
    /// stated under the relation of the settings' `sensitivity` ([`Sensitivity::relation`]).
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidParameter`] for bad settings (δ outside (0, 1), non-positive ε,
    /// Δ, bound, floor or ε_abc), [`AbcError::Accounting`]/[`AbcError::Mechanism`] if the
    /// accountant or mechanism rejects the derived parameters.
    pub fn new(
        pairs: &'a PublicPairs,
        dist: D,
        settings: SoftAbcdpSettings,
    ) -> Result<Self, AbcError> {
        settings.validate()?;
        let (eps_abc, eps, delta) = (
            settings.epsilon_abc,
            settings.epsilon_total,
            settings.delta_total,
        );
        let (sens, bound) = (settings.sensitivity.value(), settings.bound);
        let relation = settings.sensitivity.relation();
        let rho_total = largest_rho(eps, delta, relation)?;
        #[allow(clippy::cast_precision_loss)]
        let rho_step = rho_total / pairs.len() as f64;
        let mech =
            Gaussian::from_zcdp(rho_step, sens / eps_abc, 0.0, bound / eps_abc).map_err(|e| {
                // ρ follows from the (ε, δ) budget; the scaled Δ/ε_abc and bound/ε_abc
                // from ε_abc.
                crate::error::mechanism_rejected(
                    e,
                    &[
                        ("rho", "epsilon_total", eps),
                        ("sigma", "epsilon_total", eps),
                        ("sensitivity", "epsilon_abc", eps_abc),
                        ("bounds", "epsilon_abc", eps_abc),
                    ],
                )
            })?;
        let s = Self {
            pairs,
            dist,
            ahead: Ahead::default(),
            settings,
            mech,
            relation,
            noisy: Vec::with_capacity(pairs.len()),
        };
        // Belt and braces: the composed ledger must meet the budget.
        if s.epsilon()? > eps {
            return Err(AbcError::Accounting);
        }
        Ok(s)
    }

    /// Releases the noisy scaled distance of the next pair (floored); `Ok(None)` when done.
    ///
    /// # Errors
    ///
    /// [`AbcError::Mechanism`] if the noise RNG fails (nothing released).
    pub fn step<R: NoiseRng + ?Sized>(
        &mut self,
        noise_rng: &mut R,
    ) -> Result<Option<f64>, AbcError> {
        let t = self.noisy.len();
        if t >= self.pairs.len() {
            return Ok(None);
        }
        let rho = self.ahead.get(&self.dist, self.pairs, t);
        let q = rho / self.settings.epsilon_abc; // clamped to [0, B/ε_abc] by the mechanism
        let d = self
            .mech
            .release(q, noise_rng)
            .map_err(crate::error::mechanism_failed)?;
        let d = if d < self.settings.floor {
            self.settings.floor
        } else {
            d
        };
        self.noisy.push(d);
        Ok(Some(d))
    }

    /// Releases all `T` noisy distances.
    ///
    /// # Errors
    ///
    /// As [`SoftAbcdp::step`].
    pub fn run<R: NoiseRng + ?Sized>(&mut self, noise_rng: &mut R) -> Result<(), AbcError> {
        while self.step(noise_rng)?.is_some() {}
        Ok(())
    }

    /// The released (floored) noisy distances `D̃_t`.
    #[must_use]
    pub fn noisy_distances(&self) -> &[f64] {
        &self.noisy
    }

    /// Normalised weights `ω_t = exp(−D̃_t) / Σ_j exp(−D̃_j)` of the released pairs, computed in
    /// log space, into `out` (length = number released).
    ///
    /// # Errors
    ///
    /// [`AbcError::Empty`] before the first release, [`AbcError::LengthMismatch`] for a
    /// wrong `out` length.
    pub fn weights(&self, out: &mut [f64]) -> Result<(), AbcError> {
        if self.noisy.is_empty() {
            return Err(AbcError::Empty { name: "released" });
        }
        let lw: Vec<f64> = self.noisy.iter().map(|d| -d).collect();
        normalize_log_weights(&lw, out).map(|_| ())
    }

    /// The weighted posterior mean of θ into `out` (length `theta_dim`).
    ///
    /// # Errors
    ///
    /// As [`SoftAbcdp::weights`].
    pub fn posterior_mean(&self, out: &mut [f64]) -> Result<(), AbcError> {
        let n = self.noisy.len();
        let mut w = alloc::vec![0.0; n];
        self.weights(&mut w)?;
        let d = self.pairs.theta_dim();
        crate::weights::weighted_mean(&self.pairs.thetas()[..n * d], d, &w, out)
    }

    /// σ actually used (in units of the scaled distance ρ/ε_abc).
    #[must_use]
    pub fn sigma(&self) -> f64 {
        self.mech.effective_sigma()
    }

    /// The per-pair mechanism (its event is [`Event::Zcdp`]).
    #[must_use]
    pub fn mechanism(&self) -> &Gaussian {
        &self.mech
    }

    /// The per-pair ledger event; the whole run is `T` adaptive repetitions of it.
    #[must_use]
    pub fn step_event(&self) -> Event<'static> {
        self.mech.event()
    }

    /// Number of releases `T` charged (all pairs: the budget is for the whole run).
    #[must_use]
    pub fn releases(&self) -> u64 {
        self.pairs.len() as u64
    }

    /// Total ε at δ_total of `T` releases, from the accountants crate's zCDP accountant.
    ///
    /// # Errors
    ///
    /// [`AbcError::Accounting`] if the accountant cannot evaluate the bound.
    pub fn epsilon(&self) -> Result<f64, AbcError> {
        let mut acc = ZcdpAccountant::new(self.relation);
        acc.compose_n(&self.step_event(), self.releases())
            .map_err(|_| AbcError::Accounting)?;
        acc.epsilon(self.settings.delta_total)
            .map(|r| r.epsilon)
            .map_err(|_| AbcError::Accounting)
    }

    /// The pass's privacy claim as a value: `T` adaptive repetitions of the per-pair
    /// [`Event::Zcdp`] in the zCDP accountant under the pass's neighbouring relation,
    /// converted to (ε, δ_total) (Park & Jitkrittum, Theorems 3.2–3.3); its ε is
    /// [`SoftAbcdp::epsilon`].
    ///
    /// # Errors
    ///
    /// [`AbcError::Accounting`] if the accountant cannot evaluate the bound.
    pub fn claim(&self) -> Result<Claim, AbcError> {
        Claim::account(
            self.relation,
            AccountantKind::Zcdp,
            ConversionRule::Tightest,
            alloc::vec![(EventBuf::from(&self.step_event()), self.releases())],
            self.settings.delta_total,
        )
        .map_err(|_| AbcError::Accounting)
    }
}

impl<R: NoiseRng + ?Sized, D: Discrepancy> PrivatePass<R> for SoftAbcdp<'_, D> {
    fn claim(&self) -> Result<Claim, AbcError> {
        Self::claim(self)
    }

    fn run(&mut self, noise: &mut R) -> Result<(), AbcError> {
        Self::run(self, noise)
    }

    /// Every released pair's θ with its weight; facts `gaussian_sigma` and `ess`
    /// (`1/Σω²`).
    fn release(&self) -> Result<Released, AbcError> {
        let mut w = alloc::vec![0.0; self.noisy.len()];
        self.weights(&mut w)?;
        let ess = 1.0 / w.iter().map(|x| x * x).sum::<f64>();
        let samples = self.pairs.thetas()[..w.len() * self.pairs.theta_dim()].to_vec();
        Ok(Released {
            samples,
            weights: Some(w),
            facts: alloc::vec![("gaussian_sigma", self.sigma()), ("ess", ess)],
        })
    }
}

/// The largest total zCDP ρ whose (ε, δ) conversion by the accountants crate's
/// [`ZcdpAccountant`] is `≤ epsilon` (bisection between the closed-form budget
/// `rho_for_approx`, which is valid but looser, and 16 times it).
///
/// Private helper, to be folded into the accountants crate's calibration API.
fn largest_rho(epsilon: f64, delta: f64, relation: Neighbouring) -> Result<f64, AbcError> {
    let eps_of = |rho: f64| -> Result<f64, AbcError> {
        let mut acc = ZcdpAccountant::new(relation);
        acc.compose(&Event::Zcdp { rho })
            .map_err(|_| AbcError::Accounting)?;
        acc.epsilon(delta)
            .map(|r| r.epsilon)
            .map_err(|_| AbcError::Accounting)
    };
    let mut lo = dpinfer_accountants::convert::rho_for_approx(epsilon, delta)
        .map_err(|_| AbcError::Accounting)?;
    if lo.is_nan() || lo <= 0.0 || eps_of(lo)? > epsilon {
        return Err(AbcError::Accounting);
    }
    let mut hi = lo * 16.0;
    if eps_of(hi)? <= epsilon {
        return Ok(hi);
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if eps_of(mid)? <= epsilon {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}
