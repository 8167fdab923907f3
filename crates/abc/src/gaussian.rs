//! Gaussian rejection ABCDP (Park & Jitkrittum, arXiv, Algorithm 1 and Theorem 3.1): each of
//! `T` public pairs is accepted when `min(ρ_t, B_ρ) + n_t ≤ ε_abc` with `n_t ~ N(0, σ²)`,
//! `σ = h⁻¹(ε_total / T)`, composed linearly.
//!
//! # Privacy
//!
//! Theorem 3.1 bounds one decision by `h(σ) = min(1, Δ_ρ/√(2πσ²)) / Φ(min(ε_abc − B_ρ, −ε_abc)/σ)`
//! for a distance with sensitivity Δ_ρ that is clipped to `[0, B_ρ]`. The noise here is the
//! mechanisms crate's exact **discrete** Gaussian on a grid of spacing `g` (no floating-point
//! attack surface), so the ledger uses [`grid_epsilon`], which redoes the proof on the grid:
//! the discrete Gaussian's largest mass is `≤ 1/(√(2π)σ_eff)` (Poisson summation), which gives
//! the same Lipschitz bound with the grid-rounded Δ′ and σ_eff; and its CDF below the mode is
//! `≥ Φ(k/σ_eff)/(1 + 3e^{−2π²σ_u²})` (each mass dominates the integral of the increasing
//! density over the unit to its left), evaluated `2g` further into the tail to cover the
//! rounding of ε_abc, B_ρ and ρ. The result is therefore an upper bound for the implemented
//! mechanism; it exceeds `h(σ_eff)` by a relative `O(g/σ)`. Neighbouring relation: whichever
//! relation `sensitivity` is computed for (replace-one for MMD, Lemma 3.1).
//!
//! # References
//!
//! M. Park, W. Jitkrittum. *ABCDP: Approximate Bayesian Computation Meets Differential
//! Privacy*, arXiv (2022), Algorithm 1, Theorem 3.1, Lemma 3.1.

use dpinfer_math::{ln_norm_cdf, norm_cdf};

use crate::error::{AbcError, positive};

/// `1/√(2π)`.
const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

fn check(sensitivity: f64, bound: f64, epsilon_abc: f64) -> Result<(), AbcError> {
    positive("sensitivity", sensitivity)?;
    positive("bound", bound)?;
    positive("epsilon_abc", epsilon_abc)?;
    if epsilon_abc >= bound {
        return Err(AbcError::InvalidParameter {
            name: "epsilon_abc",
            value: epsilon_abc,
        });
    }
    Ok(())
}

/// `h(σ)` of Theorem 3.1 (eq. 11): the ε of one continuous-noise decision, rounded up.
///
/// # Errors
///
/// [`AbcError::InvalidParameter`] unless σ, Δ_ρ, B_ρ are finite and positive and
/// `0 < ε_abc < B_ρ`.
pub fn theorem31_epsilon(
    sigma: f64,
    sensitivity: f64,
    bound: f64,
    epsilon_abc: f64,
) -> Result<f64, AbcError> {
    positive("sigma", sigma)?;
    check(sensitivity, bound, epsilon_abc)?;
    Ok(h(sigma, sensitivity, bound, epsilon_abc, 0.0))
}

fn h(sigma: f64, sensitivity: f64, bound: f64, epsilon_abc: f64, margin: f64) -> f64 {
    let lip = (sensitivity * INV_SQRT_2PI / sigma).min(1.0);
    let x = ((epsilon_abc - bound).min(-epsilon_abc) - margin) / sigma;
    let ln = libm::log(lip) - ln_norm_cdf(x);
    let e = libm::exp(ln);
    if e.is_finite() {
        e.next_up()
    } else {
        f64::INFINITY
    }
}

/// `σ = h⁻¹(ε)` for Theorem 3.1: the smallest σ (to bisection accuracy, rounded toward the
/// safe side) with `h(σ) ≤ epsilon_step`; `h` is strictly decreasing.
///
/// # Errors
///
/// As [`theorem31_epsilon`], and [`AbcError::InvalidParameter`] for a non-positive
/// `epsilon_step` or one no σ in `[1e-300, 1e300]` achieves.
pub fn theorem31_sigma(
    epsilon_step: f64,
    sensitivity: f64,
    bound: f64,
    epsilon_abc: f64,
) -> Result<f64, AbcError> {
    let eps = positive("epsilon_step", epsilon_step)?;
    check(sensitivity, bound, epsilon_abc)?;
    let f = |s: f64| h(s, sensitivity, bound, epsilon_abc, 0.0);
    let (mut lo, mut hi) = (bound, bound);
    let mut k = 0;
    while f(hi) > eps {
        hi *= 2.0;
        k += 1;
        if k > 2000 || !hi.is_finite() {
            return Err(AbcError::InvalidParameter {
                name: "epsilon_step",
                value: epsilon_step,
            });
        }
    }
    k = 0;
    while f(lo) <= eps {
        lo *= 0.5;
        k += 1;
        if k > 2000 || lo < 1e-300 {
            return Ok(lo.max(1e-300));
        }
    }
    for _ in 0..200 {
        let mid = libm::sqrt(lo * hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid) <= eps { hi = mid } else { lo = mid }
    }
    Ok(hi)
}

/// Theorem 3.1 redone for the grid mechanism (see the [module docs](self)): an upper bound on
/// the ε of one decision with effective noise `sigma_eff` (grid units `sigma_eff / spacing ≥ 1`),
/// grid-rounded sensitivity `sensitivity_eff` and grid `spacing`.
///
/// # Errors
///
/// As [`theorem31_epsilon`]; [`AbcError::InvalidParameter`] if `spacing` is not finite and
/// positive or `sigma_eff < spacing`.
pub fn grid_epsilon(
    sigma_eff: f64,
    sensitivity_eff: f64,
    bound: f64,
    epsilon_abc: f64,
    spacing: f64,
) -> Result<f64, AbcError> {
    positive("sigma_eff", sigma_eff)?;
    positive("spacing", spacing)?;
    check(sensitivity_eff, bound, epsilon_abc)?;
    let su = sigma_eff / spacing;
    if su < 1.0 {
        return Err(AbcError::InvalidParameter {
            name: "sigma_eff",
            value: sigma_eff,
        });
    }
    let lip = (sensitivity_eff * INV_SQRT_2PI / sigma_eff).min(1.0);
    let x = ((epsilon_abc - bound).min(-epsilon_abc) - 2.0 * spacing) / sigma_eff;
    let corr =
        1.0 + 3.0 * libm::exp(-2.0 * core::f64::consts::PI * core::f64::consts::PI * su * su);
    let ln = libm::log(lip * corr) - ln_norm_cdf(x);
    let e = libm::exp(ln) * (1.0 + 4.0 * f64::EPSILON);
    if e.is_finite() {
        Ok(e.next_up())
    } else {
        Ok(f64::INFINITY)
    }
}

/// Probability that one continuous-noise decision accepts a pair at clipped distance `rho`:
/// `Φ((ε_abc − ρ)/σ)` (proof of Theorem 3.1).
///
/// # Errors
///
/// [`AbcError::InvalidParameter`] for non-finite inputs or non-positive σ.
pub fn acceptance_probability(rho: f64, epsilon_abc: f64, sigma: f64) -> Result<f64, AbcError> {
    crate::error::finite("rho", rho)?;
    crate::error::finite("epsilon_abc", epsilon_abc)?;
    positive("sigma", sigma)?;
    Ok(norm_cdf((epsilon_abc - rho) / sigma))
}

#[cfg(feature = "alloc")]
pub use sampler::{GaussianRejectionAbcdp, GaussianRejectionSettings};

#[cfg(feature = "alloc")]
mod sampler {
    use alloc::vec::Vec;

    use dpinfer_accountants::{Claim, Event};
    use dpinfer_distances::Sensitivity;
    use dpinfer_mechanisms::{Gaussian, NoiseRng};

    use super::{grid_epsilon, theorem31_sigma};
    use crate::discrepancy::{Ahead, Discrepancy};
    use crate::error::{AbcError, positive};
    use crate::pairs::PublicPairs;
    use crate::pass::{PrivatePass, Released};

    /// Settings of [`GaussianRejectionAbcdp`].
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct GaussianRejectionSettings {
        /// ABC threshold ε_abc, `0 < ε_abc < bound`.
        pub epsilon_abc: f64,
        /// Total ε over all `T` decisions (`T` = number of pairs), linear composition.
        pub epsilon_total: f64,
        /// Sensitivity Δ_ρ of the clipped distance with the neighbouring relations it holds
        /// for; the pass's claim is stated under [`Sensitivity::relation`].
        pub sensitivity: Sensitivity,
        /// Clipping bound B_ρ (distances are clamped to `[0, B_ρ]`).
        pub bound: f64,
    }

    impl GaussianRejectionSettings {
        /// Checks the settings (as [`GaussianRejectionAbcdp::new`] does before calibrating).
        ///
        /// # Errors
        ///
        /// [`AbcError::InvalidParameter`] unless `epsilon_total` and `bound` are finite and
        /// positive and `0 < epsilon_abc < bound` (a [`Sensitivity`] is finite and positive by
        /// construction).
        pub fn validate(&self) -> Result<(), AbcError> {
            positive("epsilon_total", self.epsilon_total)?;
            super::check(self.sensitivity.value(), self.bound, self.epsilon_abc)
        }
    }

    /// Algorithm 1 of Park & Jitkrittum over public pairs.
    pub struct GaussianRejectionAbcdp<'a, D> {
        pairs: &'a PublicPairs,
        dist: D,
        ahead: Ahead,
        settings: GaussianRejectionSettings,
        mech: Gaussian,
        step_epsilon: f64,
        next: usize,
        indicators: Vec<bool>,
    }

    impl<D> core::fmt::Debug for GaussianRejectionAbcdp<'_, D> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("GaussianRejectionAbcdp")
                .field("settings", &self.settings)
                .field("mech", &self.mech)
                .field("next", &self.next)
                .finish_non_exhaustive()
        }
    }

    impl<'a, D: Discrepancy> GaussianRejectionAbcdp<'a, D> {
        /// Calibrates σ: `σ = h⁻¹(ε_total/T)` by Theorem 3.1, then enlarged until the grid
        /// bound [`grid_epsilon`] of the implemented mechanism is `≤ ε_total/T`.
        ///
        /// # Errors
        ///
        /// [`AbcError::InvalidParameter`] for bad settings, [`AbcError::Mechanism`] if the
        /// Gaussian mechanism rejects σ (naming `epsilon_total`, which σ follows from).
        pub fn new(
            pairs: &'a PublicPairs,
            dist: D,
            settings: GaussianRejectionSettings,
        ) -> Result<Self, AbcError> {
            settings.validate()?;
            let eps_total = settings.epsilon_total;
            #[allow(clippy::cast_precision_loss)]
            let t = pairs.len() as f64;
            let target = eps_total / t;
            let mut sigma = theorem31_sigma(
                target,
                settings.sensitivity.value(),
                settings.bound,
                settings.epsilon_abc,
            )?;
            for _ in 0..200 {
                let mech = Gaussian::new(sigma, settings.sensitivity.value(), 0.0, settings.bound)
                    .map_err(|e| {
                        // σ is Theorem 3.1's for ε_total/T.
                        crate::error::mechanism_rejected(
                            e,
                            &[
                                ("sigma", "epsilon_total", eps_total),
                                ("sensitivity", "sensitivity", settings.sensitivity.value()),
                                ("bounds", "bound", settings.bound),
                            ],
                        )
                    })?;
                let e = grid_epsilon(
                    mech.effective_sigma(),
                    mech.effective_sensitivity(),
                    settings.bound,
                    settings.epsilon_abc,
                    mech.grid().spacing(),
                )?;
                if e <= target {
                    return Ok(Self {
                        pairs,
                        dist,
                        ahead: Ahead::default(),
                        settings,
                        mech,
                        step_epsilon: e,
                        next: 0,
                        indicators: Vec::with_capacity(pairs.len()),
                    });
                }
                sigma *= 1.0 + 1e-4;
            }
            Err(AbcError::InvalidParameter {
                name: "epsilon_total",
                value: eps_total,
            })
        }

        /// One decision on the next pair; `Ok(None)` when all pairs are used.
        ///
        /// # Errors
        ///
        /// [`AbcError::Mechanism`] if the noise RNG fails (nothing released).
        pub fn step<R: NoiseRng + ?Sized>(
            &mut self,
            noise_rng: &mut R,
        ) -> Result<Option<bool>, AbcError> {
            if self.next >= self.pairs.len() {
                return Ok(None);
            }
            let rho = self.ahead.get(&self.dist, self.pairs, self.next);
            let noisy = self
                .mech
                .release(rho, noise_rng)
                .map_err(crate::error::mechanism_failed)?;
            let tau = noisy <= self.settings.epsilon_abc;
            self.next += 1;
            self.indicators.push(tau);
            Ok(Some(tau))
        }

        /// Runs all `T` decisions.
        ///
        /// # Errors
        ///
        /// As [`GaussianRejectionAbcdp::step`].
        pub fn run<R: NoiseRng + ?Sized>(&mut self, noise_rng: &mut R) -> Result<(), AbcError> {
            while self.step(noise_rng)?.is_some() {}
            Ok(())
        }

        /// The released indicators.
        #[must_use]
        pub fn indicators(&self) -> &[bool] {
            &self.indicators
        }

        /// Accepted θs, row-major.
        #[must_use]
        pub fn accepted_thetas(&self) -> Vec<f64> {
            let mut v = Vec::new();
            for (t, &a) in self.indicators.iter().enumerate() {
                if a {
                    v.extend_from_slice(self.pairs.theta(t));
                }
            }
            v
        }

        /// The noise σ actually used.
        #[must_use]
        pub fn sigma(&self) -> f64 {
            self.mech.effective_sigma()
        }

        /// ε of one decision (grid-corrected Theorem 3.1).
        #[must_use]
        pub fn step_epsilon(&self) -> f64 {
            self.step_epsilon
        }

        /// The ledger entry: `T` pure-ε decisions, charged in full.
        #[must_use]
        pub fn event(&self) -> Event<'static> {
            Event::PureEpsilon {
                epsilon: self.epsilon(),
            }
        }

        /// Total ε = `T · step_epsilon`, rounded up, `≤ epsilon_total`.
        #[must_use]
        pub fn epsilon(&self) -> f64 {
            #[allow(clippy::cast_precision_loss)]
            let t = self.pairs.len() as f64;
            (t * self.step_epsilon).next_up()
        }

        /// The pass's privacy claim as a value: [`GaussianRejectionAbcdp::event`] (the `T`
        /// decisions' total pure ε, grid-corrected Theorem 3.1 of Park & Jitkrittum, linear
        /// composition) in the pure-ε accountant under the neighbouring relation the settings'
        /// sensitivity holds for ([`Sensitivity::relation`]).
        ///
        /// # Errors
        ///
        /// [`AbcError::Accounting`] if the accountant rejects the event.
        pub fn claim(&self) -> Result<Claim, AbcError> {
            crate::svt::pure_claim(&self.event(), self.settings.sensitivity.relation())
        }
    }

    impl<R: NoiseRng + ?Sized, D: Discrepancy> PrivatePass<R> for GaussianRejectionAbcdp<'_, D> {
        fn claim(&self) -> Result<Claim, AbcError> {
            Self::claim(self)
        }

        fn run(&mut self, noise: &mut R) -> Result<(), AbcError> {
            Self::run(self, noise)
        }

        /// The accepted θs; facts `gaussian_sigma`, `step_epsilon`, `accepted`.
        #[allow(clippy::cast_precision_loss)]
        fn release(&self) -> Result<Released, AbcError> {
            let samples = self.accepted_thetas();
            let facts = alloc::vec![
                ("gaussian_sigma", self.sigma()),
                ("step_epsilon", self.step_epsilon()),
                ("accepted", (samples.len() / self.pairs.theta_dim()) as f64),
            ];
            Ok(Released {
                samples,
                weights: None,
                facts,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h_matches_closed_form_and_inverse() {
        // Independent evaluation with erfc: Φ(x) = erfc(−x/√2)/2.
        let (d, b, e, s) = (0.02_f64, 2.0_f64, 0.3_f64, 0.5_f64);
        let phi = 0.5 * libm::erfc(-((e - b).min(-e) / s) / core::f64::consts::SQRT_2);
        let want = (d / (2.0 * core::f64::consts::PI * s * s).sqrt()).min(1.0) / phi;
        let got = theorem31_epsilon(s, d, b, e).unwrap();
        assert!((got - want).abs() < 1e-13 * want, "{got} vs {want}");
        for eps in [0.01, 0.1, 1.0, 5.0] {
            let sig = theorem31_sigma(eps, d, b, e).unwrap();
            let h1 = theorem31_epsilon(sig, d, b, e).unwrap();
            assert!(h1 <= eps * (1.0 + 1e-12), "{h1} > {eps}");
            let h0 = theorem31_epsilon(sig * (1.0 - 1e-9), d, b, e).unwrap();
            assert!(h0 > eps * (1.0 - 1e-6), "not tight: {h0} vs {eps}");
        }
        assert!(theorem31_epsilon(0.5, d, 0.2, 0.3).is_err());
        assert!(theorem31_sigma(0.0, d, b, e).is_err());
    }

    #[test]
    fn grid_bound_dominates_continuous() {
        let (d, b, e, s) = (0.02_f64, 2.0_f64, 0.3_f64, 0.5_f64);
        let g = s / 1024.0;
        let hg = grid_epsilon(s, d, b, e, g).unwrap();
        let hc = theorem31_epsilon(s, d, b, e).unwrap();
        assert!(hg >= hc && hg < hc * 1.05, "{hg} vs {hc}");
        assert!(grid_epsilon(s, d, b, e, 2.0 * s).is_err());
    }
}
