//! The Laplace mechanism on a grid, with exact discrete Laplace noise.

use dpinfer_accountants::Event;

use crate::MechanismError;
use crate::error::positive;
use crate::grid::{Bridge, Grid, LAPLACE_PRECISION_BITS, release_all_or_nothing};
use crate::rng::NoiseRng;
use crate::sampling::discrete_laplace;

/// The Laplace mechanism for a scalar or a `dim`-vector with ℓ₁ sensitivity Δ, sampled
/// exactly on a public grid.
///
/// Releases `g · (round(clamp(x)/g) + Z)` per coordinate, with `Z` i.i.d. discrete Laplace
/// of scale `b/g` ([`crate::sampling::discrete_laplace`]) and `g = 2^k` chosen by
/// [`Grid::for_scale`] with [`LAPLACE_PRECISION_BITS`]. Every output is an exactly
/// representable grid point; no floating-point noise is ever computed.
///
/// # Privacy
///
/// Pure ε-DP with `ε = Δ′/b`, where `Δ′ = g·(⌈min(Δ, dim·(hi−lo))/g⌉ + dim − 1)` is the ℓ₁
/// sensitivity of the *rounded* vector (see [`crate::grid`]). The discrete Laplace with
/// integer shift `Δ′/g` has likelihood ratio at most `exp(Δ′/b)` everywhere.
/// The neighbouring relation is whichever relation the declared Δ was computed for; the
/// mechanism itself is relation-agnostic. The cost is reported as
/// [`Event::PureEpsilon`] rather than [`Event::Laplace`]: the Laplace RDP curve is
/// derived for continuous noise, while the pure-ε bound holds exactly for the discrete one.
///
/// # References
///
/// Dwork, McSherry, Nissim, Smith (2006); Canonne, Kamath, Steinke (2020) Algorithm 2 and
/// Proposition 5 (discrete Laplace is ε-DP); Mironov (2012) for why continuous
/// floating-point Laplace noise is not.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::Laplace;
/// // scale 2, sensitivity 1, values clamped to [0, 100]
/// let mech = Laplace::new(2.0, 1.0, 0.0, 100.0).unwrap();
/// let mut noise_rng = ChaCha20Rng::from_os_rng_or_seed(7);
/// let y = mech.release(42.0, &mut noise_rng).unwrap();
/// assert!(y.is_finite());
/// assert!(mech.epsilon() >= 0.5 && mech.epsilon() < 0.5 * (1.0 + 1e-9));
/// # trait Seed { fn from_os_rng_or_seed(s: u64) -> Self; }
/// # impl Seed for ChaCha20Rng { fn from_os_rng_or_seed(s: u64) -> Self { Self::seed_from_u64(s) } }
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Laplace {
    scale: f64,
    sensitivity: f64,
    dim: usize,
    bridge: Bridge,
    noise_t: u64,
    noise_s: u64,
    sens_units: u64,
}

impl Laplace {
    /// A scalar Laplace mechanism with scale `b`, sensitivity Δ and public bounds `[lo, hi]`.
    ///
    /// # Errors
    ///
    /// Non-finite or non-positive `scale`/`sensitivity` ([`MechanismError::NonFinite`],
    /// [`MechanismError::NotPositive`]); bad bounds ([`MechanismError::EmptyInterval`]);
    /// parameters outside the grid's range ([`MechanismError::OutOfRange`],
    /// [`MechanismError::Overflow`]).
    pub fn new(scale: f64, sensitivity: f64, lo: f64, hi: f64) -> Result<Self, MechanismError> {
        Self::vector(1, scale, sensitivity, lo, hi)
    }

    /// A Laplace mechanism for vectors of length `dim` with ℓ₁ sensitivity Δ; every
    /// coordinate is clamped to `[lo, hi]`.
    ///
    /// # Errors
    ///
    /// As [`Laplace::new`], and [`MechanismError::OutOfRange`] for `dim == 0`.
    pub fn vector(
        dim: usize,
        scale: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
    ) -> Result<Self, MechanismError> {
        let scale = positive("scale", scale)?;
        let sensitivity = positive("sensitivity", sensitivity)?;
        if dim == 0 {
            return Err(MechanismError::OutOfRange { param: "dim" });
        }
        let grid = Grid::for_scale(scale, lo, hi, LAPLACE_PRECISION_BITS)?;
        let bridge = Bridge::new(grid, lo, hi)?;
        let (noise_t, noise_s) = grid.dyadic_units(scale)?;
        let sens_units = l1_units(grid, sensitivity, dim, lo, hi)?;
        Ok(Self {
            scale,
            sensitivity,
            dim,
            bridge,
            noise_t,
            noise_s,
            sens_units,
        })
    }

    /// The scalar mechanism whose cost is at most `epsilon`: the scale is
    /// `b = Δ′/ε` (rounded up) with the grid-inflated sensitivity Δ′.
    ///
    /// # Errors
    ///
    /// As [`Laplace::new`] for `epsilon` and `sensitivity`.
    pub fn from_epsilon(
        epsilon: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
    ) -> Result<Self, MechanismError> {
        Self::vector_from_epsilon(1, epsilon, sensitivity, lo, hi)
    }

    /// The vector mechanism whose cost is at most `epsilon`.
    ///
    /// # Errors
    ///
    /// As [`Laplace::vector`].
    pub fn vector_from_epsilon(
        dim: usize,
        epsilon: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
    ) -> Result<Self, MechanismError> {
        let epsilon = positive("epsilon", epsilon)?;
        let sensitivity = positive("sensitivity", sensitivity)?;
        if dim == 0 {
            return Err(MechanismError::OutOfRange { param: "dim" });
        }
        // The grid depends on the scale and the inflated sensitivity on the grid: start from
        // the grid of Δ/ε; when the inflated scale crosses a power of two the mechanism's own
        // grid is coarser (Δ′ grows by up to dim−1 units of it), so start again from that
        // scale (once is enough: the next grid is the same; four rounds bound the loop).
        let mut guide = positive("scale", sensitivity / epsilon)?;
        for _ in 0..4 {
            let grid = Grid::for_scale(guide, lo, hi, LAPLACE_PRECISION_BITS)?;
            let units = l1_units(grid, sensitivity, dim, lo, hi)?;
            let inflated = units_to_f64(grid, units)?;
            let mut scale = positive("scale", (inflated / epsilon).next_up())?;
            // Make sure the certified ε does not exceed the target despite rounding.
            for _ in 0..64 {
                let mech = Self::vector(dim, scale, sensitivity, lo, hi)?;
                if mech.epsilon() <= epsilon {
                    return Ok(mech);
                }
                scale = positive("scale", scale.next_up())?;
            }
            guide = scale;
        }
        Err(MechanismError::OutOfRange { param: "epsilon" })
    }

    /// Releases one noisy value of the private scalar `x` (for `dim == 1`).
    ///
    /// NaN maps to `lo` and values are clamped to `[lo, hi]` before rounding.
    ///
    /// # Errors
    ///
    /// [`MechanismError::LengthMismatch`] if the mechanism is a vector mechanism;
    /// [`MechanismError::Entropy`] if the noise RNG fails; [`MechanismError::Overflow`]
    /// with negligible probability (a noise draw beyond `i64`).
    pub fn release<R: NoiseRng + ?Sized>(
        &self,
        x: f64,
        rng: &mut R,
    ) -> Result<f64, MechanismError> {
        check_len(self.dim, 1)?;
        let v = self.bridge.to_grid(x);
        let z = discrete_laplace(rng, self.noise_t, self.noise_s)?;
        Ok(self.bridge.release(v, z))
    }

    /// Releases the private vector `x` into `out` (both of length `dim`).
    ///
    /// All noise is drawn before anything is written, so on error `out` is untouched.
    ///
    /// # Errors
    ///
    /// [`MechanismError::LengthMismatch`] unless `x.len() == out.len() == dim`; as
    /// [`Laplace::release`] otherwise.
    pub fn release_into<R: NoiseRng + ?Sized>(
        &self,
        x: &[f64],
        out: &mut [f64],
        rng: &mut R,
    ) -> Result<(), MechanismError> {
        check_len(self.dim, x.len())?;
        check_len(self.dim, out.len())?;
        release_all_or_nothing(
            out,
            || discrete_laplace(rng, self.noise_t, self.noise_s),
            |e, z| Ok(self.bridge.release(self.bridge.to_grid(x[e]), z)),
        )
    }

    /// The requested noise scale `b`.
    #[must_use]
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The declared ℓ₁ sensitivity Δ.
    #[must_use]
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// The vector length.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The grid the mechanism works on.
    #[must_use]
    pub fn grid(&self) -> Grid {
        self.bridge.grid()
    }

    /// The bridge and the discrete Laplace scale `β = t/s` in grid steps (exact in `f64`, see
    /// [`Laplace::exact_event`]), for the noise map.
    pub(crate) fn noise_parts(&self) -> (Bridge, f64) {
        #[allow(clippy::cast_precision_loss)]
        let beta = self.noise_t as f64 / self.noise_s as f64;
        (self.bridge, beta)
    }

    /// The ℓ₁ sensitivity after clamping and rounding, `Δ′` (a multiple of the grid).
    #[must_use]
    pub fn effective_sensitivity(&self) -> f64 {
        units_to_f64(self.bridge.grid(), self.sens_units).unwrap_or(f64::INFINITY)
    }

    /// The exact pure-DP cost `ε = Δ′/b`, rounded up.
    #[must_use]
    pub fn epsilon(&self) -> f64 {
        pure_epsilon(self.sens_units, self.noise_t, self.noise_s)
    }

    /// The cost as an accountants event ([`Event::PureEpsilon`] with [`Laplace::epsilon`]).
    #[must_use]
    pub fn event(&self) -> Event<'static> {
        Event::PureEpsilon {
            epsilon: self.epsilon(),
        }
    }

    /// The noise the sampler actually draws, as an accountants event in **grid units**:
    /// [`Event::DiscreteLaplace`] with scale `β = t/s = b/g` (the exact dyadic rational
    /// passed to [`crate::sampling::discrete_laplace`]; `t/s` is computed exactly in `f64`
    /// because `s` is a power of two and `t` a 53-bit significand times a power of two)
    /// and integer sensitivity `k = Δ′/g` (the same rounded, clamp-capped
    /// `min(⌈Δ/g⌉, max(W, 1))` grid steps that [`Laplace::epsilon`] uses, `W` the width of
    /// the clamped range in steps).
    ///
    /// It describes the same mechanism as [`Laplace::event`]: its pure ε is `k/β = Δ′/b`
    /// (Canonne, Kamath, Steinke 2020, Prop. 5: discrete Laplace with integer shift `k` has
    /// likelihood ratio at most `e^{k/β}`), equal to [`Laplace::epsilon`] up to rounding.
    /// Unlike [`Event::PureEpsilon`], the numerical PLD accountant
    /// ([`dpinfer_accountants::PldAccountant`]) uses its exact lattice privacy-loss
    /// distribution, so composed (ε, δ) costs are tighter than pure-ε composition — the
    /// release's accounting matches its sampler exactly. Same neighbouring relation as
    /// the declared Δ.
    ///
    /// # Errors
    ///
    /// [`MechanismError::OutOfRange`] (`param: "dim"`) for a vector mechanism (`dim > 1`).
    /// The accountants' discrete events describe one integer coordinate; for a vector the
    /// ℓ₁ budget `k` can be split over several coordinates, and that the single-coordinate
    /// shift is the worst case for the exact discrete PLD is not proven here. Use
    /// [`Laplace::event`] (pure ε, valid for every split) for vectors.
    pub fn exact_event(&self) -> Result<Event<'static>, MechanismError> {
        if self.dim != 1 {
            return Err(MechanismError::OutOfRange { param: "dim" });
        }
        // t = m·2^d (m < 2^53) and s = 2^e are exact in f64, so is their quotient.
        #[allow(clippy::cast_precision_loss)]
        let scale = self.noise_t as f64 / self.noise_s as f64;
        Ok(Event::DiscreteLaplace {
            scale,
            sensitivity: self.sens_units,
        })
    }
}

/// `ε = units · s / t`, rounded up (two `next_up`s cover the two roundings).
pub(crate) fn pure_epsilon(units: u64, t: u64, s: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let (u, t, s) = (units as f64, t as f64, s as f64);
    // Conversions of integers > 2^53 may round down: nudge those up too.
    let (u, s, t) = (u.next_up(), s.next_up(), t.next_down());
    (u * s).next_up() / t
}

/// The scale of a pure ε-DP discrete Laplace release with ℓ₁ sensitivity `sens_units` grid
/// steps: from `Δ′/ε` rounded up, the first of at most 64 `next_up` steps whose grid units
/// `(t, s)` certify `pure_epsilon(sens_units, t, s) ≤ ε`; returned with `(t, s)`.
///
/// # Errors
///
/// [`MechanismError::OutOfRange`] (`epsilon`) when no step certifies ε, or when the scale is
/// more than 2⁵⁰ grid steps (for ε below ~2⁻⁴⁰ the grid step exceeds Δ and the noise would
/// risk `i64` overflow at release); grid errors.
pub(crate) fn certified_scale(
    grid: Grid,
    sens_units: u64,
    epsilon: f64,
) -> Result<(f64, u64, u64), MechanismError> {
    let inflated = units_to_f64(grid, sens_units)?;
    let mut scale = positive("scale", (inflated / epsilon).next_up())?;
    for _ in 0..64 {
        let (t, s) = grid.dyadic_units(scale)?;
        if u128::from(t) > u128::from(s) << 50 {
            return Err(MechanismError::OutOfRange { param: "epsilon" });
        }
        if pure_epsilon(sens_units, t, s) <= epsilon {
            return Ok((scale, t, s));
        }
        scale = scale.next_up();
    }
    Err(MechanismError::OutOfRange { param: "epsilon" })
}

pub(crate) fn check_len(expected: usize, found: usize) -> Result<(), MechanismError> {
    if expected == found {
        Ok(())
    } else {
        Err(MechanismError::LengthMismatch { expected, found })
    }
}

/// ℓ₁ sensitivity in grid units after clamping and rounding: `⌈min(Δ, dim·(hi−lo))/g⌉ + dim − 1`.
pub(crate) fn l1_units(
    grid: Grid,
    sensitivity: f64,
    dim: usize,
    lo: f64,
    hi: f64,
) -> Result<u64, MechanismError> {
    let dim_u = u64::try_from(dim).map_err(|_| MechanismError::Overflow)?;
    // The clamp cap: each rounded coordinate lies in [round(lo), round(hi)].
    let width = grid
        .round(hi)?
        .checked_sub(grid.round(lo)?)
        .and_then(|w| u64::try_from(w).ok())
        .ok_or(MechanismError::Overflow)?;
    let cap = width.checked_mul(dim_u).ok_or(MechanismError::Overflow)?;
    let units = grid
        .ceil_units(sensitivity)?
        .checked_add(dim_u - 1)
        .ok_or(MechanismError::Overflow)?;
    Ok(units.min(cap.max(1)))
}

/// `units · g` as an exact `f64` (requires `units ≤ 2⁵³`).
pub(crate) fn units_to_f64(grid: Grid, units: u64) -> Result<f64, MechanismError> {
    if units > 1u64 << 53 {
        return Err(MechanismError::Overflow);
    }
    let v = i64::try_from(units).map_err(|_| MechanismError::Overflow)?;
    Ok(grid.to_f64(v))
}
