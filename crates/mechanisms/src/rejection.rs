//! The Gaussian one-step rejection mechanism of rejection ABCDP (Park & Jitkrittum,
//! Definition 3.1 and Theorem 3.1), sampled exactly on a grid.

use dpinfer_accountants::Event;

use crate::MechanismError;
use crate::error::{finite, positive};
use crate::grid::{Bridge, GAUSSIAN_PRECISION_BITS, Grid};
use crate::rng::NoiseRng;
use crate::sampling::discrete_gaussian;

const SQRT_2PI: f64 = 2.5066282746310002;

/// The paper's privacy function
/// `h(σ) = min(1, Δ/√(2πσ²)) · [Φ(min(ε_abc − B_ρ, −ε_abc)/σ)]⁻¹` (Theorem 3.1, eq. 11),
/// for real-valued (continuous) Gaussian noise.
///
/// Returns `+∞` when Φ underflows. Strictly decreasing in σ.
///
/// # Errors
///
/// Non-finite or non-positive σ, Δ or `B_ρ`; non-finite `ε_abc`.
///
/// # References
///
/// Park & Jitkrittum, *ABCDP with Gaussian mechanisms / soft ABC*, Theorem 3.1.
pub fn rejection_h(
    sigma: f64,
    sensitivity: f64,
    bound: f64,
    threshold: f64,
) -> Result<f64, MechanismError> {
    let sigma = positive("sigma", sigma)?;
    let sensitivity = positive("sensitivity", sensitivity)?;
    let bound = positive("bound", bound)?;
    let threshold = finite("threshold", threshold)?;
    // In log space so that neither factor under- or overflows on its own; rounded up.
    let ln_num = (libm::log(sensitivity) - libm::log(SQRT_2PI) - libm::log(sigma)).min(0.0);
    let arg = (threshold - bound).min(-threshold) / sigma;
    let ln_den = dpinfer_math::ln_norm_cdf(arg);
    if !ln_den.is_finite() {
        return Ok(f64::INFINITY);
    }
    let h = libm::exp(ln_num - ln_den) * (1.0 + 1e-13);
    // A true value below the smallest subnormal is reported as that subnormal, never 0.
    Ok(h.max(f64::from_bits(1)))
}

/// `σ = h⁻¹(ε)` by bisection on `log σ` (h is strictly decreasing): the smallest σ (to
/// relative precision 1e-12, rounded up) with `h(σ) ≤ ε`.
///
/// # Errors
///
/// As [`rejection_h`], and for a non-finite or non-positive `epsilon`;
/// [`MechanismError::OutOfRange`] if no σ in `[1e-300, 1e300]` works.
pub fn rejection_h_inverse(
    epsilon: f64,
    sensitivity: f64,
    bound: f64,
    threshold: f64,
) -> Result<f64, MechanismError> {
    let epsilon = positive("epsilon", epsilon)?;
    let (mut lo, mut hi) = (-690.0f64, 690.0f64); // ln σ
    let h = |ls: f64| rejection_h(libm::exp(ls), sensitivity, bound, threshold);
    if h(hi)? > epsilon {
        return Err(MechanismError::OutOfRange { param: "epsilon" });
    }
    if h(lo)? <= epsilon {
        return Ok(libm::exp(lo));
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if h(mid)? <= epsilon {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo < 1e-13 {
            break;
        }
    }
    Ok(libm::exp(hi).next_up())
}

/// The one-step rejection mechanism `τ = 1[ρ + n ≤ ε_abc]` with Gaussian noise, released
/// as a single bit and sampled exactly: `τ = 1[round(ρ) + Y ≤ round(ε_abc)]` with `Y`
/// discrete Gaussian on a grid (no float is compared or released).
///
/// The private distance ρ is clamped to `[0, B_ρ]` (NaN ↦ 0).
///
/// # Privacy
///
/// Pure ε-DP per call, under whichever neighbouring relation Δ_ρ was computed for. The
/// proof of Theorem 3.1 carries over to the grid with two changes, both conservative:
/// the largest discrete-Gaussian probability is `1/Z ≤ 1/(√(2π)σ_u)` (Poisson summation),
/// so a shift of at most `Δ_u = ⌈Δ/g⌉` grid steps changes `P(τ = 1)` by at most
/// `min(1, Δ_u/(√(2π)σ_u))`; and the discrete tails satisfy
/// `P(Y ≥ a) ≥ c·Φ(−max(a, 0)/σ_u)` with `c = √(2π)σ_u/(1 + √(2π)σ_u)` (integral
/// comparison and `Z ≤ 1 + √(2π)σ_u`). Hence
/// `ε = min(1, Δ_u/(√(2π)σ_u)) / min(P_lo(R_B − T), P_lo(T + 1))` with `T = round(ε_abc)`
/// and `R_B = round(B_ρ)`, which exceeds the paper's `h(σ_eff)` by a relative
/// `O(1/σ_u) ≈ 2⁻²⁴` only. [`GaussianRejection::epsilon`] reports this value.
///
/// # References
///
/// Park & Jitkrittum, Definition 3.1 and Theorem 3.1 (with its proof, Appendix A);
/// Canonne, Kamath & Steinke (2020) for the discrete Gaussian.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::GaussianRejection;
/// // per-call ε = 0.1, Δ_ρ = 0.01, ρ ≤ B_ρ = 2, ε_abc = 0.3
/// let mech = GaussianRejection::from_epsilon(0.1, 0.01, 2.0, 0.3).unwrap();
/// assert!(mech.epsilon() <= 0.1);
/// let mut noise_rng = ChaCha20Rng::seed_from_u64(4); // a secret seed in practice
/// let accept: bool = mech.decide(0.25, &mut noise_rng).unwrap();
/// # let _ = accept;
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct GaussianRejection {
    sigma: f64,
    sensitivity: f64,
    bound: f64,
    threshold: f64,
    bridge: Bridge,
    sigma_units: u64,
    threshold_int: i64,
    epsilon: f64,
}

impl GaussianRejection {
    /// The mechanism with noise σ for a distance with sensitivity Δ_ρ, bounded by `B_ρ`,
    /// and ABC threshold `ε_abc`.
    ///
    /// # Errors
    ///
    /// Non-finite or non-positive σ, Δ or `B_ρ`; non-finite `ε_abc`; parameters outside the
    /// grid's range.
    pub fn new(
        sigma: f64,
        sensitivity: f64,
        bound: f64,
        threshold: f64,
    ) -> Result<Self, MechanismError> {
        let sigma = positive("sigma", sigma)?;
        let sensitivity = positive("sensitivity", sensitivity)?;
        let bound = positive("bound", bound)?;
        let threshold = finite("threshold", threshold)?;
        let lo = threshold.min(0.0);
        let hi = threshold.max(bound);
        let grid = Grid::for_scale(sigma, lo, hi, GAUSSIAN_PRECISION_BITS)?;
        let bridge = Bridge::new(grid, 0.0, bound)?;
        let sigma_units = grid.ceil_units(sigma)?.max(1);
        if sigma_units > 1 << 26 {
            return Err(MechanismError::OutOfRange { param: "sigma" });
        }
        let threshold_int = grid.round(threshold)?;
        let r_b = grid.round(bound)?;
        let sens_units = grid.ceil_units(sensitivity)?.min(r_b.unsigned_abs().max(1));
        let epsilon = discrete_epsilon(sigma_units, sens_units, r_b, threshold_int);
        if !epsilon.is_finite() {
            return Err(MechanismError::OutOfRange { param: "sigma" });
        }
        Ok(Self {
            sigma,
            sensitivity,
            bound,
            threshold,
            bridge,
            sigma_units,
            threshold_int,
            epsilon,
        })
    }

    /// The mechanism with per-call cost at most `epsilon`: σ from [`rejection_h_inverse`],
    /// then increased in steps of 2⁻²⁰ (relative) until the grid-exact cost fits.
    ///
    /// # Errors
    ///
    /// As [`GaussianRejection::new`] and [`rejection_h_inverse`].
    pub fn from_epsilon(
        epsilon: f64,
        sensitivity: f64,
        bound: f64,
        threshold: f64,
    ) -> Result<Self, MechanismError> {
        let mut sigma = rejection_h_inverse(epsilon, sensitivity, bound, threshold)?;
        for _ in 0..256 {
            let m = Self::new(sigma, sensitivity, bound, threshold)?;
            if m.epsilon <= epsilon {
                return Ok(m);
            }
            sigma *= 1.0 + 1.0 / f64::from(1u32 << 20);
        }
        Err(MechanismError::OutOfRange { param: "epsilon" })
    }

    /// One decision: `true` (accept) iff `round(clamp(ρ)) + Y ≤ round(ε_abc)`.
    ///
    /// # Errors
    ///
    /// [`MechanismError::Entropy`] if the noise RNG fails.
    pub fn decide<R: NoiseRng + ?Sized>(
        &self,
        distance: f64,
        rng: &mut R,
    ) -> Result<bool, MechanismError> {
        let r = self.bridge.to_grid(distance);
        let y = discrete_gaussian(rng, self.sigma_units * self.sigma_units, 1)?;
        Ok(r.saturating_add(y) <= self.threshold_int)
    }

    /// The requested σ.
    #[must_use]
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The σ actually used, `⌈σ/g⌉·g`.
    #[must_use]
    pub fn effective_sigma(&self) -> f64 {
        self.bridge
            .grid()
            .to_f64(i64::try_from(self.sigma_units).unwrap_or(i64::MAX))
    }

    /// The paper's `h(σ_eff)` for comparison (not the reported cost).
    #[must_use]
    pub fn paper_epsilon(&self) -> f64 {
        rejection_h(
            self.effective_sigma(),
            self.sensitivity,
            self.bound,
            self.threshold,
        )
        .unwrap_or(f64::INFINITY)
    }

    /// The per-call pure-DP cost on the grid (see the type's `# Privacy`), rounded up.
    #[must_use]
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The per-call cost as an accountants event ([`Event::PureEpsilon`]).
    #[must_use]
    pub fn event(&self) -> Event<'static> {
        Event::PureEpsilon {
            epsilon: self.epsilon,
        }
    }
}

/// The grid-exact per-call ε (upper bound), see [`GaussianRejection`]'s `# Privacy`.
fn discrete_epsilon(sigma_units: u64, sens_units: u64, r_b: i64, t: i64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let (s, d) = (sigma_units as f64, sens_units as f64); // both ≤ 2^62; s ≤ 2^26 exact
    let root = SQRT_2PI * s;
    let c = root / (1.0 + root);
    // Lower bound of P(Y ≥ a) for integer a.
    let p_lo = |a: i64| {
        #[allow(clippy::cast_precision_loss)]
        let a = a.max(0) as f64;
        // 1e-12 relative slack covers the rounding of Φ, c and the division.
        c * dpinfer_math::norm_cdf(-a / s) * (1.0 - 1e-12)
    };
    let num = (d.next_up() / root.next_down()).min(1.0);
    let den = p_lo(r_b.saturating_sub(t)).min(p_lo(t.saturating_add(1)));
    if den > 0.0 {
        (num / den).next_up()
    } else {
        f64::INFINITY
    }
}
