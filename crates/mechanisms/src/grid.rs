//! The real ↔ grid bridge: exact conversion between `f64` values and integers on a
//! public power-of-two grid.
//!
//! A mechanism that releases a real value never adds floating-point noise. It
//!
//! 1. picks a public grid spacing `g = 2^k` from the public noise scale (and the public
//!    bounds), see [`Grid::for_scale`];
//! 2. clamps the private input to the declared public bounds `[lo, hi]`
//!    (NaN maps to `lo`, so a bad record never turns into an error);
//! 3. rounds the clamped value to the grid *exactly*, with the fixed tie rule
//!    "round half up" (`⌊x/g + ½⌋`), computed on the integer significand of the `f64`;
//! 4. adds integer noise from [`crate::sampling`];
//! 5. converts back exactly: every released value is `v·2^k` for an integer `|v| ≤ 2⁵³`,
//!    which is an exactly representable `f64` (the noisy integer is clamped to `±2⁵³`,
//!    a post-processing step).
//!
//! # Sensitivity inflation
//!
//! Rounding is monotone and `⌊a + d⌋ − ⌊a⌋ ≤ ⌈d⌉`, so if two neighbouring inputs differ by
//! at most `Δ` in one coordinate, their grid integers differ by at most `⌈Δ/g⌉`. Over `d`
//! coordinates with L1 distance `Δ`, the integer L1 distance is at most `⌈Δ/g⌉ + d − 1`;
//! with L2 distance `Δ` the integer L2 distance is at most `Δ/g + √d`. Mechanisms charge
//! their privacy cost with these inflated sensitivities.

use crate::MechanismError;

/// Bits of resolution below the noise scale for Laplace-type noise (`scale/g ∈ (2³⁹, 2⁴⁰]`).
pub const LAPLACE_PRECISION_BITS: i32 = 40;
/// Bits of resolution below σ for Gaussian noise (`σ/g ∈ (2²³, 2²⁴]`, then rounded up to an
/// integer number of grid steps).
pub const GAUSSIAN_PRECISION_BITS: i32 = 24;
/// The clamping bounds are at most `2^VALUE_BITS` grid steps from zero.
pub const VALUE_BITS: i32 = 50;
/// Released grid integers are clamped to `±2⁵³` so that they convert to `f64` exactly.
pub const MAX_RELEASE: i64 = 1 << 53;

/// `x = sign · m · 2^e` exactly, for finite non-zero `x` (`m < 2⁵³`).
fn decompose(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let exp_bits = i32::try_from((bits >> 52) & 0x7ff).unwrap_or(0);
    let frac = bits & ((1u64 << 52) - 1);
    if exp_bits == 0 {
        (neg, frac, -1074)
    } else {
        (neg, frac | (1u64 << 52), exp_bits - 1075)
    }
}

/// `⌈log₂ x⌉` for finite `x > 0`, exactly.
pub(crate) fn ceil_log2(x: f64) -> i32 {
    let (_, m, e) = decompose(x);
    // m > 0 because x > 0.
    let floor_m = 63 - i32::try_from(m.leading_zeros()).unwrap_or(0);
    if m.is_power_of_two() {
        floor_m + e
    } else {
        floor_m + e + 1
    }
}

/// A public grid with spacing `2^k`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    k: i32,
}

impl Grid {
    /// The grid `2^k`.
    ///
    /// # Errors
    ///
    /// [`MechanismError::OutOfRange`] unless `−1074 ≤ k ≤ 970` (so that every value
    /// `v·2^k` with `|v| ≤ 2⁵³` is a finite `f64`).
    pub fn new(k: i32) -> Result<Self, MechanismError> {
        if (-1074..=970).contains(&k) {
            Ok(Self { k })
        } else {
            Err(MechanismError::OutOfRange {
                param: "grid exponent",
            })
        }
    }

    /// The grid for noise of scale `scale` with `precision_bits` bits of resolution below
    /// it, coarsened if needed so that `max(|lo|, |hi|) ≤ 2^VALUE_BITS` grid steps:
    /// `k = max(⌈log₂ scale⌉ − precision_bits, ⌈log₂ max(|lo|,|hi|)⌉ − VALUE_BITS)`.
    ///
    /// # Errors
    ///
    /// Non-finite or non-positive `scale`, non-finite bounds, `lo ≥ hi`, or a grid exponent
    /// outside [`Grid::new`]'s range.
    pub fn for_scale(
        scale: f64,
        lo: f64,
        hi: f64,
        precision_bits: i32,
    ) -> Result<Self, MechanismError> {
        crate::error::positive("scale", scale)?;
        check_bounds(lo, hi)?;
        let k_scale = ceil_log2(scale) - precision_bits;
        let bound = lo.abs().max(hi.abs());
        let k = if bound > 0.0 {
            k_scale.max(ceil_log2(bound) - VALUE_BITS)
        } else {
            k_scale
        };
        Self::new(k)
    }

    /// `Grid::new` for constants whose exponent is known to be in range.
    pub(crate) const fn from_exponent_unchecked(k: i32) -> Self {
        Self { k }
    }

    /// The exponent `k` of the spacing `2^k`.
    #[must_use]
    pub fn exponent(&self) -> i32 {
        self.k
    }

    /// The spacing `2^k` as an `f64` (exact).
    #[must_use]
    pub fn spacing(&self) -> f64 {
        libm::scalbn(1.0, self.k)
    }

    /// `⌊x/2^k + ½⌋` (round half up), computed exactly.
    ///
    /// # Errors
    ///
    /// [`MechanismError::NonFinite`] for NaN/±∞ and [`MechanismError::Overflow`] if the
    /// result does not fit in `±2⁶²`.
    pub fn round(&self, x: f64) -> Result<i64, MechanismError> {
        if !x.is_finite() {
            return Err(MechanismError::NonFinite { param: "x" });
        }
        if x == 0.0 {
            return Ok(0);
        }
        let (neg, m, e) = decompose(x);
        let val = if neg { -i128::from(m) } else { i128::from(m) };
        let shift = e - self.k;
        let out: i128 = if shift >= 0 {
            if shift > 62 {
                return Err(MechanismError::Overflow);
            }
            val << shift
        } else {
            let s = -shift;
            if s > 100 {
                0
            } else {
                // ⌊(2·val + 2^s) / 2^{s+1}⌋ = ⌊val/2^s + ½⌋; >> is floor division for i128.
                ((val << 1) + (1i128 << s)) >> (s + 1)
            }
        };
        if out.unsigned_abs() > 1u128 << 62 {
            return Err(MechanismError::Overflow);
        }
        i64::try_from(out).map_err(|_| MechanismError::Overflow)
    }

    /// `v·2^k` as an `f64`, after clamping `v` to `±2⁵³` ([`MAX_RELEASE`]); exact.
    #[must_use]
    pub fn to_f64(&self, v: i64) -> f64 {
        let v = v.clamp(-MAX_RELEASE, MAX_RELEASE);
        // |v| ≤ 2^53 converts exactly; scaling by 2^k with −1074 ≤ k ≤ 970 is exact
        // (the result is a multiple of 2^−1074 below 2^1024).
        #[allow(clippy::cast_precision_loss)]
        let vf = v as f64;
        libm::scalbn(vf, self.k)
    }

    /// `⌈x/2^k⌉` for finite `x ≥ 0`, exactly, as `u64`.
    ///
    /// # Errors
    ///
    /// Non-finite or negative `x`; [`MechanismError::Overflow`] above `2⁶²`.
    pub fn ceil_units(&self, x: f64) -> Result<u64, MechanismError> {
        let x = crate::error::non_negative("sensitivity", x)?;
        if x == 0.0 {
            return Ok(0);
        }
        let (_, m, e) = decompose(x);
        let shift = e - self.k;
        let out: u128 = if shift >= 0 {
            if shift > 62 {
                return Err(MechanismError::Overflow);
            }
            u128::from(m) << shift
        } else {
            let s = -shift;
            if s > 100 {
                1
            } else {
                (u128::from(m) + (1u128 << s) - 1) >> s
            }
        };
        if out > 1u128 << 62 {
            return Err(MechanismError::Overflow);
        }
        u64::try_from(out).map_err(|_| MechanismError::Overflow)
    }

    /// `x/2^k` as an exact dyadic rational `t/s` with `t, s ≥ 1` (for `x > 0`).
    ///
    /// # Errors
    ///
    /// Non-finite or non-positive `x`; [`MechanismError::OutOfRange`] if `t` or `s` would
    /// exceed `2⁶³` (the grid is absurdly coarse or fine relative to `x`).
    pub fn dyadic_units(&self, x: f64) -> Result<(u64, u64), MechanismError> {
        let x = crate::error::positive("scale", x)?;
        let (_, m, e) = decompose(x);
        let tz = m.trailing_zeros();
        let m = m >> tz;
        let e = e + i32::try_from(tz).unwrap_or(0);
        let d = e - self.k;
        if d >= 0 {
            if d + (64 - i32::try_from(m.leading_zeros()).unwrap_or(0)) > 63 {
                return Err(MechanismError::OutOfRange { param: "scale" });
            }
            Ok((m << d, 1))
        } else {
            if -d > 63 {
                return Err(MechanismError::OutOfRange { param: "scale" });
            }
            Ok((m, 1u64 << (-d)))
        }
    }
}

/// Validates public clamping bounds.
pub(crate) fn check_bounds(lo: f64, hi: f64) -> Result<(), MechanismError> {
    if !lo.is_finite() || !hi.is_finite() {
        return Err(MechanismError::NonFinite { param: "bounds" });
    }
    if lo < hi {
        Ok(())
    } else {
        Err(MechanismError::EmptyInterval { param: "bounds" })
    }
}

/// Clamps a private value to public bounds: NaN ↦ `lo`, ±∞ ↦ the nearer bound.
#[inline]
pub(crate) fn clamp_private(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() { lo } else { x.clamp(lo, hi) }
}

/// Clamp-and-round on a fixed grid with public bounds: the input side of the bridge.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Bridge {
    grid: Grid,
    lo: f64,
    hi: f64,
}

impl Bridge {
    /// A bridge on `grid` for inputs clamped to `[lo, hi]`.
    ///
    /// # Errors
    ///
    /// Non-finite bounds, `lo ≥ hi`, or bounds more than `2⁶²` grid steps from zero.
    pub fn new(grid: Grid, lo: f64, hi: f64) -> Result<Self, MechanismError> {
        check_bounds(lo, hi)?;
        grid.round(lo)?;
        grid.round(hi)?;
        Ok(Self { grid, lo, hi })
    }

    /// The grid.
    #[must_use]
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// The public bounds `(lo, hi)`.
    #[must_use]
    pub fn bounds(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// Clamps a private value (NaN ↦ `lo`) and rounds it to the grid. Never fails:
    /// the bounds were checked to be representable at construction.
    #[must_use]
    pub fn to_grid(&self, x: f64) -> i64 {
        let c = clamp_private(x, self.lo, self.hi);
        // round is monotone and both bounds round without overflow, so this cannot fail;
        // the `0` fallback is unreachable but deterministic (never data-dependent errors).
        self.grid.round(c).unwrap_or(0)
    }

    /// Adds integer noise and converts back exactly (clamped to `±2⁵³` grid steps).
    #[must_use]
    pub fn release(&self, v: i64, noise: i64) -> f64 {
        self.grid.to_f64(v.saturating_add(noise))
    }
}

/// Releases `out.len()` noisy values all or nothing: every integer noise draw (`noise()`) is
/// made first and stored bit-exactly in `out`, and only then is each entry replaced by
/// `release(e, z_e)`; so a failing noise RNG leaves no released value behind. The draws are
/// made in index order, once each, as the mechanisms' pinned outputs expect.
pub(crate) fn release_all_or_nothing(
    out: &mut [f64],
    mut noise: impl FnMut() -> Result<i64, MechanismError>,
    mut release: impl FnMut(usize, i64) -> Result<f64, MechanismError>,
) -> Result<(), MechanismError> {
    for o in out.iter_mut() {
        *o = f64::from_bits(noise()?.cast_unsigned());
    }
    for (e, o) in out.iter_mut().enumerate() {
        *o = release(e, o.to_bits().cast_signed())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A noise RNG failing at the third draw leaves `out` with no released value: `release`
    /// is never called; with every draw made, each entry is released from its own draw.
    #[test]
    fn release_all_or_nothing_draws_every_noise_first() {
        let mut out = [7.0; 4];
        let mut draws = 0;
        let mut released = 0;
        let r = release_all_or_nothing(
            &mut out,
            || {
                draws += 1;
                if draws == 3 {
                    Err(MechanismError::Entropy)
                } else {
                    Ok(draws)
                }
            },
            |_, z| {
                released += 1;
                Ok(f64::from(i32::try_from(z).unwrap()))
            },
        );
        assert_eq!(r, Err(MechanismError::Entropy));
        assert_eq!(released, 0);
        let mut next = 10;
        release_all_or_nothing(
            &mut out,
            || {
                next -= 1;
                Ok(next)
            },
            |e, z| {
                Ok(f64::from(u32::try_from(e).unwrap()) * 100.0
                    + f64::from(i32::try_from(z).unwrap()))
            },
        )
        .unwrap();
        assert_eq!(
            out.map(f64::to_bits),
            [9.0, 108.0, 207.0, 306.0].map(f64::to_bits)
        );
    }

    #[test]
    fn ceil_log2_exact() {
        assert_eq!(ceil_log2(1.0), 0);
        assert_eq!(ceil_log2(1.5), 1);
        assert_eq!(ceil_log2(2.0), 1);
        assert_eq!(ceil_log2(0.75), 0);
        assert_eq!(ceil_log2(0.5), -1);
        assert_eq!(ceil_log2(f64::MIN_POSITIVE), -1022);
        assert_eq!(ceil_log2(5e-324), -1074);
        assert_eq!(ceil_log2(f64::MAX), 1024);
    }

    #[test]
    fn round_half_up() {
        let g = Grid::new(-1).unwrap(); // spacing 0.5
        assert_eq!(g.round(0.25).unwrap(), 1); // tie 0.5 → up
        assert_eq!(g.round(-0.25).unwrap(), 0); // tie −0.5 → up
        assert_eq!(g.round(0.74).unwrap(), 1);
        assert_eq!(g.round(0.76).unwrap(), 2);
        assert_eq!(g.round(-0.76).unwrap(), -2);
        assert_eq!(g.round(-0.74).unwrap(), -1);
        assert_eq!(g.round(3.0).unwrap(), 6);
        assert_eq!(g.round(5e-324).unwrap(), 0);
        assert_eq!(g.round(-5e-324).unwrap(), 0);
        let fine = Grid::new(-1074).unwrap();
        assert_eq!(fine.round(5e-324).unwrap(), 1);
        assert!(fine.round(1.0).is_err());
    }

    #[test]
    fn ceil_units_exact() {
        let g = Grid::new(-2).unwrap();
        assert_eq!(g.ceil_units(1.0).unwrap(), 4);
        assert_eq!(g.ceil_units(1.1).unwrap(), 5);
        assert_eq!(g.ceil_units(0.0).unwrap(), 0);
        assert_eq!(Grid::new(10).unwrap().ceil_units(1e-300).unwrap(), 1);
        assert!(g.ceil_units(-1.0).is_err());
    }

    #[test]
    fn dyadic_units_exact() {
        let g = Grid::new(-3).unwrap();
        assert_eq!(g.dyadic_units(1.0).unwrap(), (8, 1));
        assert_eq!(g.dyadic_units(0.0625).unwrap(), (1, 2));
        assert_eq!(g.dyadic_units(3.0).unwrap(), (24, 1));
        let (t, s) = g.dyadic_units(0.1).unwrap();
        #[allow(clippy::cast_precision_loss)]
        let back = (t as f64) / (s as f64) / 8.0;
        assert_eq!(back.to_bits(), 0.1f64.to_bits());
    }
}
