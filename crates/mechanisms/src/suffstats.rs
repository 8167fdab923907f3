//! Clamped sufficient statistics for linear regression (Xiong, Ju & Zhang §4.2).

use dpinfer_accountants::{Event, Neighbouring};

use crate::MechanismError;
use crate::error::positive;
use crate::grid::{
    Grid, LAPLACE_PRECISION_BITS, check_bounds, clamp_private, release_all_or_nothing,
};
use crate::laplace::{certified_scale, check_len, pure_epsilon};
use crate::rng::NoiseRng;
use crate::sampling::discrete_laplace;

/// Normalised values are quantised to multiples of `2^−QUANT_BITS` before any product is
/// formed, so all sums are exact integers (no floating-point accumulation error can
/// exceed the sensitivity analysis).
pub const QUANT_BITS: i32 = 20;

/// Largest supported number of predictors.
pub const MAX_PREDICTORS: usize = 64;

/// ε-DP release of the clamped, normalised sufficient statistics of a linear regression,
/// `s̃ = (x̃ᵀỹ/n, ỹᵀỹ/n, x̃ᵀx̃/n)` (the last as its upper triangle), with i.i.d. discrete
/// Laplace noise on a grid.
///
/// Each predictor `x_j` is clamped to its public bounds `[lo_j, hi_j]` and mapped affinely
/// to `[−1, 1]`; the response likewise. Normalised values are quantised to `2^−20` so the
/// statistic is computed exactly; NaN maps to the lower bound.
///
/// Output layout (length `p + 1 + p(p+1)/2`): `[x̃_jᵀỹ/n for j < p]`, then `ỹᵀỹ/n`, then
/// `x̃_jᵀx̃_k/n` for `j ≤ k` in row-major order.
///
/// # Privacy
///
/// Replace-one neighbouring ([`Neighbouring::ReplaceOne`]; `n` is public). One record
/// changes the ℓ₁ norm of `s̃` by at most `Δ₁ = (p² + 3p + 3)/n`, the bound the paper states
/// (the exhaustive neighbour test in `tests/suite/mechanisms.rs` finds the value
/// `(p+1)(p+2)/(2n) ≤ Δ₁` for `p = 1, 2`, attained e.g. by replacing the normalised record
/// `(1, …, 1)` with `(0, …, 0)`; the mechanism charges the paper's larger Δ₁). After rounding the `d = p + 1 + p(p+1)/2` entries to the grid the
/// integer ℓ₁ sensitivity is at most `⌈Δ₁/g⌉ + d − 1`, and the discrete Laplace noise of
/// scale `b` makes the release ε-DP with `ε = g·(⌈Δ₁/g⌉ + d − 1)/b ≤` the requested ε.
///
/// # References
///
/// Xiong, Ju, Zhang, *Simulation-based inference for privacy-protected data*, §4.2
/// ("Private sufficient statistics"); Ju et al. (2022) for the original analysis.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::RegressionStats;
/// let x = [1.0, 2.0, 3.0, 4.0]; // n = 4 rows, p = 1
/// let y = [2.1, 3.9, 6.2, 7.8];
/// let mech = RegressionStats::new(&[(0.0, 5.0)], (0.0, 10.0), 4, 1.0).unwrap();
/// let mut s = [0.0; 3];
/// let mut noise_rng = ChaCha20Rng::seed_from_u64(9); // a secret seed in practice
/// mech.release_into(&x, &y, &mut s, &mut noise_rng).unwrap();
/// assert!(mech.epsilon() <= 1.0);
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RegressionStats<'a> {
    x_bounds: &'a [(f64, f64)],
    y_bounds: (f64, f64),
    n: u64,
    grid: Grid,
    sens_units: u64,
    t: u64,
    s: u64,
    scale: f64,
}

/// Number of released entries for `p` predictors.
#[must_use]
pub fn regression_stats_len(p: usize) -> usize {
    p + 1 + p * (p + 1) / 2
}

impl<'a> RegressionStats<'a> {
    /// The mechanism for `n` records with `p = x_bounds.len()` predictors and target `epsilon`.
    ///
    /// # Errors
    ///
    /// [`MechanismError::OutOfRange`] for `p == 0`, `p > MAX_PREDICTORS` or `n == 0`;
    /// non-finite, empty or too wide bounds (`hi − lo` must be finite);
    /// non-finite or non-positive `epsilon`, or `epsilon` so small (below about 2⁻⁴⁰) that the
    /// grid step would exceed the sensitivity.
    pub fn new(
        x_bounds: &'a [(f64, f64)],
        y_bounds: (f64, f64),
        n: u64,
        epsilon: f64,
    ) -> Result<Self, MechanismError> {
        let epsilon = positive("epsilon", epsilon)?;
        let p = x_bounds.len();
        if p == 0 || p > MAX_PREDICTORS {
            return Err(MechanismError::OutOfRange {
                param: "predictors",
            });
        }
        if n == 0 {
            return Err(MechanismError::OutOfRange { param: "n" });
        }
        for &(lo, hi) in x_bounds.iter().chain(core::iter::once(&y_bounds)) {
            check_bounds(lo, hi)?;
            if !(hi - lo).is_finite() {
                return Err(MechanismError::OutOfRange { param: "bounds" });
            }
        }
        let p_u = u64::try_from(p).map_err(|_| MechanismError::Overflow)?;
        let big_p = p_u * p_u + 3 * p_u + 3;
        #[allow(clippy::cast_precision_loss)]
        let delta1 = (big_p as f64 / n as f64).next_up();
        let b0 = positive("scale", delta1 / epsilon)?;
        let grid = Grid::for_scale(b0, -1.0, 1.0, LAPLACE_PRECISION_BITS)?;
        let d = u64::try_from(regression_stats_len(p)).map_err(|_| MechanismError::Overflow)?;
        let sens_units = ceil_div_pow2(big_p, n, grid.exponent())?
            .checked_add(d - 1)
            .ok_or(MechanismError::Overflow)?;
        let (scale, t, s) = certified_scale(grid, sens_units, epsilon)?;
        Ok(Self {
            x_bounds,
            y_bounds,
            n,
            grid,
            sens_units,
            t,
            s,
            scale,
        })
    }

    /// Number of predictors `p`.
    #[must_use]
    pub fn predictors(&self) -> usize {
        self.x_bounds.len()
    }

    /// Output length `p + 1 + p(p+1)/2`.
    #[must_use]
    pub fn output_len(&self) -> usize {
        regression_stats_len(self.predictors())
    }

    /// The paper's ℓ₁ sensitivity `Δ₁ = (p² + 3p + 3)/n` (rounded up).
    #[must_use]
    pub fn paper_sensitivity(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let p = self.predictors() as f64;
        #[allow(clippy::cast_precision_loss)]
        let n = self.n as f64;
        ((p * p + 3.0 * p + 3.0) / n).next_up()
    }

    /// The Laplace scale `b` of each entry.
    #[must_use]
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The grid.
    #[must_use]
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// The neighbouring relation: replace one record.
    #[must_use]
    pub fn relation(&self) -> Neighbouring {
        Neighbouring::ReplaceOne
    }

    /// The exact pure-DP cost (rounded up), at most the requested ε.
    #[must_use]
    pub fn epsilon(&self) -> f64 {
        pure_epsilon(self.sens_units, self.t, self.s)
    }

    /// The cost as an accountants event ([`Event::PureEpsilon`]).
    #[must_use]
    pub fn event(&self) -> Event<'static> {
        Event::PureEpsilon {
            epsilon: self.epsilon(),
        }
    }

    fn check(&self, x: &[f64], y: &[f64], out: &[f64]) -> Result<(), MechanismError> {
        let n = usize::try_from(self.n).map_err(|_| MechanismError::Overflow)?;
        check_len(n, y.len())?;
        check_len(
            n.checked_mul(self.predictors())
                .ok_or(MechanismError::Overflow)?,
            x.len(),
        )?;
        check_len(self.output_len(), out.len())
    }

    /// Exact integer sum of entry `e`, in units of `2^(−2·QUANT_BITS)`.
    fn entry_sum(&self, x: &[f64], y: &[f64], e: usize) -> i128 {
        let p = self.predictors();
        let (a, b) = entry_pair(p, e);
        let mut sum: i128 = 0;
        for i in 0..y.len() {
            let va = self.quantised(x, y, i, a);
            let vb = self.quantised(x, y, i, b);
            sum += i128::from(va) * i128::from(vb);
        }
        sum
    }

    /// Quantised normalised value of column `col` (`col == p` is the response) in row `i`.
    fn quantised(&self, x: &[f64], y: &[f64], i: usize, col: usize) -> i64 {
        let p = self.predictors();
        let (v, (lo, hi)) = if col == p {
            (y[i], self.y_bounds)
        } else {
            (x[i * p + col], self.x_bounds[col])
        };
        let c = clamp_private(v, lo, hi);
        let z = (2.0 * ((c - lo) / (hi - lo)) - 1.0).clamp(-1.0, 1.0);
        // |z| ≤ 1, so rounding to 2^-20 cannot fail; fall back to 0 deterministically.
        QUANT_GRID.round(z).unwrap_or(0)
    }

    /// The noiseless clamped statistic `s̃` (for public or simulated data — e.g. the
    /// pseudo-data side of ABC — never release this on private data).
    ///
    /// # Errors
    ///
    /// [`MechanismError::LengthMismatch`] unless `y.len() == n`, `x.len() == n·p` and
    /// `out.len() == p + 1 + p(p+1)/2`.
    pub fn clamped_statistic_into(
        &self,
        x: &[f64],
        y: &[f64],
        out: &mut [f64],
    ) -> Result<(), MechanismError> {
        self.check(x, y, out)?;
        #[allow(clippy::cast_precision_loss)]
        let n = self.n as f64;
        for (e, o) in out.iter_mut().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let s = self.entry_sum(x, y, e) as f64;
            *o = libm::scalbn(s, -2 * QUANT_BITS) / n;
        }
        Ok(())
    }

    /// Releases the noisy statistic into `out` (row-major `x` of `n × p`, `y` of `n`).
    ///
    /// # Errors
    ///
    /// As [`RegressionStats::clamped_statistic_into`]; [`MechanismError::Entropy`] if the
    /// noise RNG fails (then `out` holds no released value).
    pub fn release_into<R: NoiseRng + ?Sized>(
        &self,
        x: &[f64],
        y: &[f64],
        out: &mut [f64],
        rng: &mut R,
    ) -> Result<(), MechanismError> {
        self.check(x, y, out)?;
        release_all_or_nothing(
            out,
            || discrete_laplace(rng, self.t, self.s),
            |e, z| {
                let v = round_ratio(
                    self.entry_sum(x, y, e),
                    self.n,
                    2 * QUANT_BITS + self.grid.exponent(),
                )?;
                Ok(self.grid.to_f64(v.saturating_add(z)))
            },
        )
    }
}

/// The release of a given statistic `s = s̃` (from [`RegressionStats::clamped_statistic_into`]
/// on simulated data): `out_e = g·(round(s_e/g) + Z_e)` with `Z_e` the discrete Laplace
/// quantile of `u_e` at the mechanism's scale, as [`RegressionStats::release_into`] adds it.
/// The release rounds the exact rational `s̃_e` to the grid and `τ` the `f64` `s_e`; the two
/// differ only when `s̃_e` lies within `f64` rounding of a grid midpoint (by one grid step,
/// `≈ b·2⁻⁴⁰`). The discrete Laplace CDF is inverted as for [`crate::Laplace`].
impl crate::NoiseMap for RegressionStats<'_> {
    /// `r = p + 1 + p(p+1)/2`, the statistic's length; any other `len` is a
    /// [`MechanismError::LengthMismatch`].
    fn noise_dim(&self, len: usize) -> Result<usize, MechanismError> {
        check_len(self.output_len(), len)?;
        Ok(len)
    }

    /// # Errors
    ///
    /// As [`crate::NoiseMap::tau`]; [`MechanismError::NonFinite`] (`"x"`) for a NaN or
    /// infinite `s_e` and [`MechanismError::Overflow`] for one too large for the grid.
    fn tau(&self, u: &[f64], s: &[f64], out: &mut [f64]) -> Result<(), MechanismError> {
        crate::noise_map::check_inputs(self.noise_dim(s.len())?, u, s, out)?;
        for &se in s {
            self.grid.round(se)?;
        }
        #[allow(clippy::cast_precision_loss)]
        let lambda = self.s as f64 / self.t as f64;
        for ((o, &ue), &se) in out.iter_mut().zip(u).zip(s) {
            let z = crate::noise_map::discrete_laplace_quantile(lambda, ue);
            let v = self.grid.round(se)?;
            *o = self.grid.to_f64(v.saturating_add(z));
        }
        Ok(())
    }
}

const QUANT_GRID: Grid = Grid::from_exponent_unchecked(-QUANT_BITS);

/// Which two columns entry `e` multiplies (`p` denotes the response).
fn entry_pair(p: usize, e: usize) -> (usize, usize) {
    if e < p {
        return (e, p);
    }
    if e == p {
        return (p, p);
    }
    let mut r = e - p - 1;
    for j in 0..p {
        let row = p - j;
        if r < row {
            return (j, j + r);
        }
        r -= row;
    }
    (p, p)
}

/// `⌈big_p / (n · 2^k)⌉` exactly.
pub(crate) fn ceil_div_pow2(big_p: u64, n: u64, k: i32) -> Result<u64, MechanismError> {
    let (num, den) = if k <= 0 {
        let sh = u32::try_from(-k).map_err(|_| MechanismError::Overflow)?;
        if sh > 60 {
            return Err(MechanismError::Overflow);
        }
        (u128::from(big_p) << sh, u128::from(n))
    } else {
        let sh = u32::try_from(k).map_err(|_| MechanismError::Overflow)?;
        if sh > 60 {
            return Ok(1);
        }
        (u128::from(big_p), u128::from(n) << sh)
    };
    u64::try_from(num.div_ceil(den)).map_err(|_| MechanismError::Overflow)
}

/// `⌊S/(n·2^e) + ½⌋` exactly (round half up).
pub(crate) fn round_ratio(sum: i128, n: u64, e: i32) -> Result<i64, MechanismError> {
    let n = i128::from(n);
    let (num, den) = if e >= 0 {
        if e > 100 {
            // |sum| < n·2^99 for every caller, so the ratio rounds to 0.
            return Ok(0);
        }
        (
            sum,
            n.checked_mul(1i128 << e).ok_or(MechanismError::Overflow)?,
        )
    } else {
        let sh = -e;
        if sh > 60 {
            return Err(MechanismError::Overflow);
        }
        (
            sum.checked_mul(1i128 << sh)
                .ok_or(MechanismError::Overflow)?,
            n,
        )
    };
    // ⌊(2·num + den) / (2·den)⌋ with checked arithmetic.
    let v = num
        .checked_mul(2)
        .and_then(|a| a.checked_add(den))
        .zip(den.checked_mul(2))
        .map(|(a, b)| a.div_euclid(b))
        .ok_or(MechanismError::Overflow)?;
    i64::try_from(v).map_err(|_| MechanismError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_pairs_cover_upper_triangle() {
        let p = 3;
        let pairs: [(usize, usize); 10] = core::array::from_fn(|e| entry_pair(p, e));
        assert_eq!(
            pairs,
            [
                (0, 3),
                (1, 3),
                (2, 3),
                (3, 3),
                (0, 0),
                (0, 1),
                (0, 2),
                (1, 1),
                (1, 2),
                (2, 2)
            ]
        );
    }

    #[test]
    fn round_ratio_exact() {
        assert_eq!(round_ratio(3, 2, 0).unwrap(), 2); // 1.5 → 2
        assert_eq!(round_ratio(-3, 2, 0).unwrap(), -1); // −1.5 → −1
        assert_eq!(round_ratio(5, 1, -2).unwrap(), 20);
        assert_eq!(round_ratio(7, 1, 2).unwrap(), 2); // 1.75 → 2
        assert_eq!(ceil_div_pow2(7, 3, 0).unwrap(), 3);
        assert_eq!(ceil_div_pow2(7, 3, -1).unwrap(), 5);
        assert_eq!(ceil_div_pow2(7, 3, 2).unwrap(), 1);
    }
}
