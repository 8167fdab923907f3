//! Clamped sums and means with declared public bounds (exact integer accumulation).

use dpinfer_accountants::{Event, Neighbouring};

use crate::MechanismError;
use crate::error::positive;
use crate::grid::{Grid, LAPLACE_PRECISION_BITS, ceil_log2, check_bounds, clamp_private};
use crate::laplace::{certified_scale, pure_epsilon};
use crate::rng::NoiseRng;
use crate::sampling::discrete_laplace;
use crate::suffstats::{ceil_div_pow2, round_ratio};

/// Records are quantised to `2^−DATA_BITS · max(|lo|, |hi|)` (rounded to a power of two)
/// before summing, so the sum is an exact integer.
const DATA_BITS: i32 = 40;

/// What is released.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Sum,
    Mean { n: u64 },
}

/// ε-DP release of a clamped **sum** `Σ clamp(x_i, lo, hi)` or **mean**
/// `(1/n) Σ clamp(x_i, lo, hi)` with discrete Laplace noise on a grid.
///
/// Records are clamped to the public bounds (NaN ↦ `lo`), quantised to a fine power-of-two
/// grid `g_d ≈ max(|lo|, |hi|)·2⁻⁴⁰`, and summed exactly as integers, so no floating-point
/// accumulation error can break the sensitivity bound. The exact (rational) statistic is then
/// rounded to the noise grid (round half up) and discrete Laplace noise is added.
///
/// # Privacy
///
/// Pure ε-DP, with the sensitivity of the *quantised* statistic:
///
/// * sum, add/remove one record ([`Neighbouring::AddRemove`]): `Δ = max(|q(lo)|, |q(hi)|)·g_d`;
/// * sum, replace one record ([`Neighbouring::ReplaceOne`]): `Δ = (q(hi) − q(lo))·g_d`;
/// * mean over a public `n`, replace one record: `Δ = (q(hi) − q(lo))·g_d / n`,
///
/// where `q(·)` is the quantised bound (so Δ exceeds the textbook `max(|lo|,|hi|)` or
/// `(hi − lo)/n` by at most one data-grid step). After rounding to the noise grid `g` the
/// integer sensitivity is `⌈Δ/g⌉` and `ε = g·⌈Δ/g⌉/b ≤` the requested ε.
///
/// # References
///
/// Dwork, McSherry, Nissim, Smith (2006) (Laplace mechanism); Canonne, Kamath, Steinke (2020)
/// (discrete Laplace); Xiong, Ju & Zhang §4.2 for clamping before releasing sufficient
/// statistics.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::{ClampedStat, Neighbouring};
/// let ages = [23.0, 41.0, 67.0, 35.0, 120.0];
/// let mean = ClampedStat::mean(0.0, 100.0, ages.len() as u64, 1.0).unwrap();
/// let mut noise_rng = ChaCha20Rng::seed_from_u64(11); // a secret seed in practice
/// let m = mean.release(&ages, &mut noise_rng).unwrap();
/// assert!(m.is_finite() && mean.epsilon() <= 1.0);
/// let sum = ClampedStat::sum(0.0, 100.0, 10_000, Neighbouring::AddRemove, 1.0).unwrap();
/// let s = sum.release(&ages, &mut noise_rng).unwrap();
/// # let _ = s;
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ClampedStat {
    kind: Kind,
    relation: Neighbouring,
    lo: f64,
    hi: f64,
    max_records: u64,
    data_grid: Grid,
    grid: Grid,
    sens_units: u64,
    t: u64,
    s: u64,
    scale: f64,
}

impl ClampedStat {
    /// A clamped sum of at most `max_records` records (the bound sizes the output grid),
    /// under `relation`, with target `epsilon`.
    ///
    /// # Errors
    ///
    /// Non-finite or empty bounds, `max_records == 0` or so large that the sum range is not
    /// finite, non-finite or non-positive `epsilon`, or `epsilon` so small that the noise
    /// grid would exceed the sensitivity ([`MechanismError::OutOfRange`]).
    pub fn sum(
        lo: f64,
        hi: f64,
        max_records: u64,
        relation: Neighbouring,
        epsilon: f64,
    ) -> Result<Self, MechanismError> {
        Self::build(Kind::Sum, relation, lo, hi, max_records, epsilon)
    }

    /// A clamped mean over exactly `n` records (`n` public), replace-one neighbours.
    ///
    /// # Errors
    ///
    /// As [`ClampedStat::sum`] (with `n` for `max_records`).
    pub fn mean(lo: f64, hi: f64, n: u64, epsilon: f64) -> Result<Self, MechanismError> {
        Self::build(
            Kind::Mean { n },
            Neighbouring::ReplaceOne,
            lo,
            hi,
            n,
            epsilon,
        )
    }

    fn build(
        kind: Kind,
        relation: Neighbouring,
        lo: f64,
        hi: f64,
        max_records: u64,
        epsilon: f64,
    ) -> Result<Self, MechanismError> {
        let epsilon = positive("epsilon", epsilon)?;
        check_bounds(lo, hi)?;
        if max_records == 0 {
            return Err(MechanismError::OutOfRange { param: "n" });
        }
        let big = lo.abs().max(hi.abs());
        let data_grid = Grid::new(ceil_log2(big) - DATA_BITS)?;
        let q_lo = data_grid.round(lo)?;
        let q_hi = data_grid.round(hi)?;
        // Sensitivity numerator in data-grid units.
        let d_units = match (kind, relation) {
            (Kind::Sum, Neighbouring::AddRemove) => q_lo.unsigned_abs().max(q_hi.unsigned_abs()),
            _ => q_hi.abs_diff(q_lo),
        };
        let (divisor, out_lo, out_hi) = match kind {
            Kind::Mean { n } => (n, lo, hi),
            Kind::Sum => {
                #[allow(clippy::cast_precision_loss)]
                let m = max_records as f64;
                let (a, b) = ((lo * m).min(0.0), (hi * m).max(0.0));
                if !a.is_finite() || !b.is_finite() {
                    return Err(MechanismError::OutOfRange {
                        param: "max_records",
                    });
                }
                (1, a.min(lo), b.max(hi))
            }
        };
        // Real-valued sensitivity (approximate, only to pick the grid).
        #[allow(clippy::cast_precision_loss)]
        let delta0 = data_grid.spacing() * d_units.max(1) as f64 / divisor as f64;
        let b0 = positive("scale", delta0 / epsilon)?;
        let grid = Grid::for_scale(b0, out_lo, out_hi, LAPLACE_PRECISION_BITS)?;
        let rel = grid.exponent() - data_grid.exponent();
        let sens_units = ceil_div_pow2(d_units, divisor, rel)?.max(1);
        let (scale, t, s) = certified_scale(grid, sens_units, epsilon)?;
        Ok(Self {
            kind,
            relation,
            lo,
            hi,
            max_records,
            data_grid,
            grid,
            sens_units,
            t,
            s,
            scale,
        })
    }

    /// The exact clamped, quantised statistic of `x` (noiseless; for public or simulated
    /// data only), as the nearest `f64`.
    ///
    /// # Errors
    ///
    /// [`MechanismError::LengthMismatch`] if `x` has more than `max_records` records (sum)
    /// or not exactly `n` (mean).
    pub fn statistic(&self, x: &[f64]) -> Result<f64, MechanismError> {
        let sum = self.exact_sum(x)?;
        #[allow(clippy::cast_precision_loss)]
        let v = libm::scalbn(sum as f64, self.data_grid.exponent());
        Ok(match self.kind {
            Kind::Sum => v,
            #[allow(clippy::cast_precision_loss)]
            Kind::Mean { n } => v / n as f64,
        })
    }

    fn exact_sum(&self, x: &[f64]) -> Result<i128, MechanismError> {
        let len = u64::try_from(x.len()).map_err(|_| MechanismError::Overflow)?;
        let ok = match self.kind {
            Kind::Sum => len <= self.max_records,
            Kind::Mean { n } => len == n,
        };
        if !ok {
            return Err(MechanismError::LengthMismatch {
                expected: usize::try_from(self.max_records).unwrap_or(usize::MAX),
                found: x.len(),
            });
        }
        Ok(x.iter()
            .map(|&v| {
                let c = clamp_private(v, self.lo, self.hi);
                // within the checked bounds: cannot fail; deterministic fallback
                i128::from(self.data_grid.round(c).unwrap_or(0))
            })
            .sum())
    }

    /// Releases the noisy statistic of the private records `x`.
    ///
    /// # Errors
    ///
    /// As [`ClampedStat::statistic`]; [`MechanismError::Entropy`] if the noise RNG fails.
    pub fn release<R: NoiseRng + ?Sized>(
        &self,
        x: &[f64],
        rng: &mut R,
    ) -> Result<f64, MechanismError> {
        let sum = self.exact_sum(x)?;
        let divisor = match self.kind {
            Kind::Sum => 1,
            Kind::Mean { n } => n,
        };
        let v = round_ratio(
            sum,
            divisor,
            self.grid.exponent() - self.data_grid.exponent(),
        )?;
        let z = discrete_laplace(rng, self.t, self.s)?;
        Ok(self.grid.to_f64(v.saturating_add(z)))
    }

    /// The noise grid.
    #[must_use]
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// The Laplace scale `b`.
    #[must_use]
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The sensitivity after quantisation and rounding to the noise grid.
    #[must_use]
    pub fn effective_sensitivity(&self) -> f64 {
        crate::laplace::units_to_f64(self.grid, self.sens_units).unwrap_or(f64::INFINITY)
    }

    /// The neighbouring relation of the guarantee.
    #[must_use]
    pub fn relation(&self) -> Neighbouring {
        self.relation
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
}
