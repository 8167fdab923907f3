//! The Gaussian mechanism on a grid, with exact discrete Gaussian noise.

use dpinfer_accountants::Event;

use crate::MechanismError;
use crate::error::positive;
use crate::grid::{Bridge, GAUSSIAN_PRECISION_BITS, Grid, release_all_or_nothing};
use crate::laplace::check_len;
use crate::rng::NoiseRng;
use crate::sampling::discrete_gaussian;

/// The Gaussian mechanism for a scalar or a `dim`-vector with ℓ₂ sensitivity Δ, sampled
/// exactly on a public grid with the discrete Gaussian.
///
/// Releases `g · (round(clamp(x)/g) + Y)` per coordinate with `Y` i.i.d. discrete Gaussian
/// `N_ℤ(0, σ_u²)`, where `g = 2^k` comes from [`Grid::for_scale`] with
/// [`GAUSSIAN_PRECISION_BITS`] and `σ_u = ⌈σ/g⌉` is an integer number of grid steps. The
/// noise actually used therefore has the *effective* standard-deviation parameter
/// `σ_eff = σ_u·g ≥ σ` (relative increase below 2⁻²³), which is what the cost uses.
///
/// # Privacy
///
/// ρ-zCDP with `ρ = Δ′²/(2σ_eff²)`, where Δ′ is the ℓ₂ sensitivity of the rounded vector:
/// `Δ′ = g·min(⌈Δ/g⌉, W)` for a scalar and `Δ′ = g·min(⌈Δ/g⌉ + √dim, √dim·W)` for vectors,
/// with `W = round(hi) − round(lo)` grid steps (see [`crate::grid`]). Canonne, Kamath &
/// Steinke (2020) Theorem 14 show that the (multivariate) discrete Gaussian satisfies the
/// same ρ = Δ²/(2σ²) bound as the continuous one, hence also the RDP curve `α·ρ`. The
/// cost is reported as [`Event::Zcdp`]: the continuous-Gaussian privacy-loss distribution
/// of [`Event::Gaussian`] is not proven to dominate the discrete one. The neighbouring
/// relation is whichever relation the declared Δ was computed for.
///
/// # References
///
/// Canonne, Kamath, Steinke. *The Discrete Gaussian for Differential Privacy*, NeurIPS 2020,
/// Algorithm 3, Theorem 14; Bun & Steinke (2016) for zCDP.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::Gaussian;
/// let mech = Gaussian::from_zcdp(0.5, 1.0, -10.0, 10.0).unwrap();
/// assert!(mech.rho() <= 0.5);
/// let mut noise_rng = ChaCha20Rng::seed_from_u64(7); // use a secret seed in practice
/// let y = mech.release(3.25, &mut noise_rng).unwrap();
/// assert!(y.is_finite());
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Gaussian {
    sigma: f64,
    sensitivity: f64,
    dim: usize,
    bridge: Bridge,
    sigma_units: u64,
    sens_units: f64,
    /// The scalar sensitivity in grid steps, `min(⌈Δ/g⌉, W)` (`None` for vectors).
    scalar_units: Option<u64>,
}

impl Gaussian {
    /// A scalar Gaussian mechanism with noise σ, sensitivity Δ and public bounds `[lo, hi]`.
    ///
    /// # Errors
    ///
    /// Non-finite or non-positive σ or Δ; bad bounds; parameters outside the grid's range.
    pub fn new(sigma: f64, sensitivity: f64, lo: f64, hi: f64) -> Result<Self, MechanismError> {
        Self::vector(1, sigma, sensitivity, lo, hi)
    }

    /// A Gaussian mechanism for vectors of length `dim` with ℓ₂ sensitivity Δ.
    ///
    /// # Errors
    ///
    /// As [`Gaussian::new`], and [`MechanismError::OutOfRange`] for `dim == 0`.
    pub fn vector(
        dim: usize,
        sigma: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
    ) -> Result<Self, MechanismError> {
        let sigma = positive("sigma", sigma)?;
        let grid = Grid::for_scale(sigma, lo, hi, GAUSSIAN_PRECISION_BITS)?;
        let sigma_units = grid.ceil_units(sigma)?.max(1);
        Self::on_grid(dim, sigma, sensitivity, lo, hi, grid, sigma_units)
    }

    fn on_grid(
        dim: usize,
        sigma: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
        grid: Grid,
        sigma_units: u64,
    ) -> Result<Self, MechanismError> {
        let sensitivity = positive("sensitivity", sensitivity)?;
        if dim == 0 {
            return Err(MechanismError::OutOfRange { param: "dim" });
        }
        if sigma_units > 1 << 26 {
            return Err(MechanismError::OutOfRange { param: "sigma" });
        }
        let bridge = Bridge::new(grid, lo, hi)?;
        let sens_units = l2_units(grid, sensitivity, dim, lo, hi)?;
        let scalar_units = if dim == 1 {
            Some(scalar_l2_units(grid, sensitivity, lo, hi)?)
        } else {
            None
        };
        Ok(Self {
            sigma,
            sensitivity,
            dim,
            bridge,
            sigma_units,
            sens_units,
            scalar_units,
        })
    }

    /// The scalar mechanism with the smallest grid σ whose cost is at most `rho`.
    ///
    /// # Errors
    ///
    /// Non-finite or non-positive `rho` or Δ; bad bounds.
    pub fn from_zcdp(rho: f64, sensitivity: f64, lo: f64, hi: f64) -> Result<Self, MechanismError> {
        Self::vector_from_zcdp(1, rho, sensitivity, lo, hi)
    }

    /// The vector mechanism with the smallest grid σ whose cost is at most `rho`.
    ///
    /// # Errors
    ///
    /// As [`Gaussian::from_zcdp`] and [`Gaussian::vector`].
    pub fn vector_from_zcdp(
        dim: usize,
        rho: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
    ) -> Result<Self, MechanismError> {
        let rho = positive("rho", rho)?;
        let sensitivity = positive("sensitivity", sensitivity)?;
        if dim == 0 {
            return Err(MechanismError::OutOfRange { param: "dim" });
        }
        let root = libm::sqrt(2.0 * rho);
        let sigma0 = positive("sigma", sensitivity / root)?;
        let grid = Grid::for_scale(sigma0, lo, hi, GAUSSIAN_PRECISION_BITS)?;
        let sens_units = l2_units(grid, sensitivity, dim, lo, hi)?;
        let target = sens_units / root;
        if !target.is_finite() || target > f64::from(1u32 << 26) {
            return Err(MechanismError::OutOfRange { param: "rho" });
        }
        // target ∈ (0, 2^26]: the cast is exact after ceil.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let first = (libm::ceil(target) as u64).max(1);
        for sigma_units in first..first + 64 {
            let sigma =
                grid.to_f64(i64::try_from(sigma_units).map_err(|_| MechanismError::Overflow)?);
            let mech = Self::on_grid(dim, sigma, sensitivity, lo, hi, grid, sigma_units)?;
            if mech.rho() <= rho {
                return Ok(mech);
            }
        }
        Err(MechanismError::OutOfRange { param: "rho" })
    }

    /// The scalar mechanism calibrated to (ε, δ)-DP through zCDP: ρ is the largest value
    /// with `ρ`-zCDP ⇒ (ε, δ)-DP by the accountants' conversion
    /// ([`dpinfer_accountants::convert::rho_for_approx`]).
    ///
    /// # Errors
    ///
    /// Invalid ε (≤ 0, non-finite) or δ (outside (0, 1)) give [`MechanismError::OutOfRange`];
    /// otherwise as [`Gaussian::from_zcdp`].
    pub fn from_epsilon_delta(
        epsilon: f64,
        delta: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
    ) -> Result<Self, MechanismError> {
        Self::vector_from_epsilon_delta(1, epsilon, delta, sensitivity, lo, hi)
    }

    /// The vector mechanism calibrated to (ε, δ)-DP through zCDP.
    ///
    /// # Errors
    ///
    /// As [`Gaussian::from_epsilon_delta`].
    pub fn vector_from_epsilon_delta(
        dim: usize,
        epsilon: f64,
        delta: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
    ) -> Result<Self, MechanismError> {
        positive("epsilon", epsilon)?;
        if !(delta > 0.0 && delta < 1.0) {
            return Err(MechanismError::OutOfRange { param: "delta" });
        }
        let rho = dpinfer_accountants::convert::rho_for_approx(epsilon, delta)
            .map_err(|_| MechanismError::OutOfRange { param: "epsilon" })?;
        Self::vector_from_zcdp(dim, rho, sensitivity, lo, hi)
    }

    /// Releases one noisy value of the private scalar `x` (for `dim == 1`).
    ///
    /// # Errors
    ///
    /// [`MechanismError::LengthMismatch`] for a vector mechanism; [`MechanismError::Entropy`]
    /// if the noise RNG fails.
    pub fn release<R: NoiseRng + ?Sized>(
        &self,
        x: f64,
        rng: &mut R,
    ) -> Result<f64, MechanismError> {
        check_len(self.dim, 1)?;
        let v = self.bridge.to_grid(x);
        let y = discrete_gaussian(rng, self.sigma_units * self.sigma_units, 1)?;
        Ok(self.bridge.release(v, y))
    }

    /// Releases the private vector `x` into `out` (both of length `dim`); on error `out`
    /// holds no released value.
    ///
    /// # Errors
    ///
    /// As [`Gaussian::release`] and [`MechanismError::LengthMismatch`].
    pub fn release_into<R: NoiseRng + ?Sized>(
        &self,
        x: &[f64],
        out: &mut [f64],
        rng: &mut R,
    ) -> Result<(), MechanismError> {
        check_len(self.dim, x.len())?;
        check_len(self.dim, out.len())?;
        let var = self.sigma_units * self.sigma_units;
        release_all_or_nothing(
            out,
            || discrete_gaussian(rng, var, 1),
            |e, y| Ok(self.bridge.release(self.bridge.to_grid(x[e]), y)),
        )
    }

    /// The requested σ.
    #[must_use]
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The σ actually used, `σ_eff = ⌈σ/g⌉·g ≥ σ`.
    #[must_use]
    pub fn effective_sigma(&self) -> f64 {
        self.bridge
            .grid()
            .to_f64(i64::try_from(self.sigma_units).unwrap_or(i64::MAX))
    }

    /// The declared ℓ₂ sensitivity Δ.
    #[must_use]
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// The ℓ₂ sensitivity after clamping and rounding, Δ′ (an upper bound).
    #[must_use]
    pub fn effective_sensitivity(&self) -> f64 {
        libm::scalbn(self.sens_units, self.bridge.grid().exponent()).next_up()
    }

    /// The vector length.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The grid.
    #[must_use]
    pub fn grid(&self) -> Grid {
        self.bridge.grid()
    }

    /// The bridge and `σ_u` (the discrete Gaussian's σ in grid steps, `≤ 2²⁶`: exact in
    /// `f64`), for the noise map.
    pub(crate) fn noise_parts(&self) -> (Bridge, f64) {
        #[allow(clippy::cast_precision_loss)]
        let sigma_units = self.sigma_units as f64;
        (self.bridge, sigma_units)
    }

    /// The exact zCDP cost `ρ = Δ′²/(2σ_eff²)` (computed in grid units, rounded up).
    #[must_use]
    pub fn rho(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let s = self.sigma_units as f64; // ≤ 2^26: exact
        let num = (self.sens_units * self.sens_units).next_up();
        (num / (2.0 * s * s)).next_up()
    }

    /// The cost as an accountants event ([`Event::Zcdp`] with [`Gaussian::rho`]).
    #[must_use]
    pub fn event(&self) -> Event<'static> {
        Event::Zcdp { rho: self.rho() }
    }

    /// The noise the sampler actually draws, as an accountants event in **grid units**:
    /// [`Event::DiscreteGaussian`] with `σ = σ_u = ⌈σ/g⌉` (the integer whose square is the
    /// variance parameter passed to [`crate::sampling::discrete_gaussian`]) and integer
    /// sensitivity `k = min(⌈Δ/g⌉, W)` grid steps (`W` the width of the clamped range in
    /// steps) — the same integers [`Gaussian::rho`] is computed from.
    ///
    /// It describes the same mechanism as [`Gaussian::event`]: its zCDP cost is
    /// `ρ = k²/(2σ_u²)` (Canonne, Kamath, Steinke 2020, Theorem 14), equal to
    /// [`Gaussian::rho`] up to rounding. The numerical PLD accountant
    /// ([`dpinfer_accountants::PldAccountant`], which rejects [`Event::Zcdp`]) uses the
    /// exact lattice privacy-loss distribution of `N_ℤ(0, σ_u²)` shifted by `k`, so the
    /// release's accounting matches its sampler exactly, and its (ε, δ) is tighter than the
    /// zCDP conversion. Same neighbouring relation as the declared Δ. The PLD accountant's
    /// lattice range covers `k/σ_u ≤ 2·10⁻⁶·σ_u` (`σ_u ∈ (2²³, 2²⁴]` on the default grids,
    /// so every ρ ≤ 140 is accepted, up to ρ ≈ 560 for σ_u near 2²⁴); beyond it, it
    /// returns a typed `InvalidParameter` error rather than a number.
    ///
    /// # Errors
    ///
    /// [`MechanismError::OutOfRange`] (`param: "dim"`) for a vector mechanism (`dim > 1`).
    /// The accountants' discrete events describe one integer coordinate; the multivariate
    /// discrete Gaussian is not rotation invariant, so an ℓ₂ budget spread over several
    /// integer coordinates is not reducible to a one-coordinate shift, and no exact event
    /// for it exists. Use [`Gaussian::event`] (ρ-zCDP, Theorem 14 holds for the
    /// multivariate case) for vectors.
    pub fn exact_event(&self) -> Result<Event<'static>, MechanismError> {
        match (self.dim, self.scalar_units) {
            (1, Some(k)) => {
                // σ_u ≤ 2^26: exact in f64.
                #[allow(clippy::cast_precision_loss)]
                let sigma = self.sigma_units as f64;
                Ok(Event::DiscreteGaussian {
                    sigma,
                    sensitivity: k,
                })
            }
            _ => Err(MechanismError::OutOfRange { param: "dim" }),
        }
    }
}

/// Scalar ℓ₂ (= ℓ₁) sensitivity in grid steps after clamping and rounding:
/// `min(⌈Δ/g⌉, W)` with `W = round(hi) − round(lo)`.
fn scalar_l2_units(grid: Grid, sensitivity: f64, lo: f64, hi: f64) -> Result<u64, MechanismError> {
    let width = width_units(grid, lo, hi)?;
    Ok(grid.ceil_units(sensitivity)?.min(width))
}

/// `round(hi) − round(lo)` in grid steps.
fn width_units(grid: Grid, lo: f64, hi: f64) -> Result<u64, MechanismError> {
    grid.round(hi)?
        .checked_sub(grid.round(lo)?)
        .and_then(|w| u64::try_from(w).ok())
        .ok_or(MechanismError::Overflow)
}

/// ℓ₂ sensitivity in grid units after clamping and rounding (an upper bound, as `f64`).
fn l2_units(
    grid: Grid,
    sensitivity: f64,
    dim: usize,
    lo: f64,
    hi: f64,
) -> Result<f64, MechanismError> {
    if dim == 1 {
        // (k as f64).next_up() is monotone in k, so this is bit-identical to taking the
        // minimum of the two nudged values.
        #[allow(clippy::cast_precision_loss)]
        return Ok((scalar_l2_units(grid, sensitivity, lo, hi)? as f64).next_up());
    }
    let width = width_units(grid, lo, hi)?;
    let ceil = grid.ceil_units(sensitivity)?;
    #[allow(clippy::cast_precision_loss)]
    let (ceil, width, d) = (
        (ceil as f64).next_up(),
        (width as f64).next_up(),
        (dim as f64).next_up(),
    );
    let root = libm::sqrt(d).next_up();
    let a = (ceil + root).next_up();
    let b = (root * width).next_up();
    Ok(a.min(b))
}
