//! The [`RowLikelihood`] and [`RowGradient`] traits used by the DP MCMC samplers, and the fused
//! clip-and-sum helpers.
//!
//! DP-penalty, DP-Barker and DP-HMC (Räisä 2021, thesis ch. 3–4; Heikkilä et al. 2019) bound
//! each record's influence by clipping the per-row log-likelihood ratio
//! r_j(θ, θ′) = ln p(x_j | θ′) − ln p(x_j | θ) to `[−b, b]` (or each per-row gradient to L2 norm
//! `≤ b`) and summing. That pass is the samplers' hot loop, so it has a fused form here.

use crate::error::{SimError, check_len};

/// Rows processed per stack chunk by the default (allocation-free) implementations.
pub const CHUNK: usize = 256;

/// Result of a clip-and-sum pass.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ClipSum {
    /// Σ_j clip(r_j) (finite: at most `rows · b` in absolute value).
    pub sum: f64,
    /// Number of rows whose value was changed by clipping (non-finite rows count as clipped).
    pub clipped: usize,
}

/// Result of a clip-and-sum over a list of rows (a minibatch): the sum, the sum of squares of
/// the clipped values (for the batch variance σ_b² of subsampled DP MCMC) and the clipped count.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct BatchClipSum {
    /// Σ_j c_j with c_j = clip(r_j, b) (at most `rows · b` in absolute value).
    pub sum: f64,
    /// Σ_j c_j² (at most `rows · b²`).
    pub sum_sq: f64,
    /// Number of rows whose value was changed by clipping (non-finite rows count as clipped).
    pub clipped: usize,
}

/// Clips one value to `[−b, b]` as `x.max(−b).min(b)`: `±∞` go to `±b` and NaN goes to `−b`
/// (`f64::max` returns the non-NaN operand), so no data value can make a sum NaN and the
/// per-row contribution always lies in `[−b, b]`. This branch-free form vectorises.
#[inline]
#[must_use]
pub fn clip(x: f64, b: f64) -> f64 {
    // Written as compare-and-select so it compiles to `maxpd`/`minpd` (whose operand order
    // returns the bound for NaN) and vectorises; equal to `x.max(-b).min(b)`.
    let nb = -b;
    let y = if x > nb { x } else { nb };
    if y < b { y } else { b }
}

/// Fused "clip each value to `[−b, b]` and sum" over a slice (rows of r_j), with [`clip`]
/// semantics; `clipped` counts values that were changed (|x| > b or NaN).
///
/// Summation uses 4 interleaved accumulators combined in a fixed order, so the result is
/// deterministic (the same on every platform) and the loop vectorises.
///
/// Sensitivity of the returned sum to adding/removing one row is `b`, to substituting one row
/// `2b`, for any input.
///
/// # Errors
/// [`SimError::InvalidParameter`] unless `0 < b ≤ 1e250`.
pub fn clip_sum(values: &[f64], b: f64) -> Result<ClipSum, SimError> {
    let b = crate::error::clip_bound(b)?;
    // 4 lanes of sums and of clipped counts (counted in f64 so every lane is an f64 and the
    // loop vectorises; exact below 2⁵³ rows per call).
    let mut acc = [0.0f64; 4];
    let mut cnt = [0.0f64; 4];
    let mut chunks = values.chunks_exact(4);
    for c in &mut chunks {
        for k in 0..4 {
            acc[k] += clip(c[k], b);
            cnt[k] += if c[k].abs() <= b { 0.0 } else { 1.0 };
        }
    }
    let mut tail = 0.0;
    let mut tail_cnt = 0.0;
    for &x in chunks.remainder() {
        tail += clip(x, b);
        tail_cnt += if x.abs() <= b { 0.0 } else { 1.0 };
    }
    let clipped = ((cnt[0] + cnt[1]) + (cnt[2] + cnt[3])) + tail_cnt;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // integral, ≥ 0
    Ok(ClipSum {
        sum: ((acc[0] + acc[1]) + (acc[2] + acc[3])) + tail,
        clipped: clipped as usize,
    })
}

/// A likelihood that factorises over `n_rows` data rows: ln p(X | θ) = Σ_j ℓ_j(θ). Data are
/// stored column-wise by implementations; rows are addressed by index ranges so a sampler can
/// evaluate a (shuffled) minibatch or the full data without allocation.
///
/// Only [`row_log_lik`](RowLikelihood::row_log_lik) is required; the other methods have
/// allocation-free default implementations (stack chunks of [`CHUNK`] rows) that fast models
/// override.
///
/// # Privacy
/// Implementations touch private data. Methods return errors only for *parameter* problems
/// (θ length, buffer length, range, `b`), never depending on data values.
pub trait RowLikelihood {
    /// Dimension of θ.
    fn dim(&self) -> usize;

    /// Number of rows n.
    fn n_rows(&self) -> usize;

    /// Writes ℓ_j(θ) for rows `first, …, first + out.len() − 1` into `out`.
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] for a wrong θ length or a range past `n_rows`.
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError>;

    /// Writes r_j(θ, θ′) = ℓ_j(θ′) − ℓ_j(θ) for rows `first ..first + out.len()`.
    ///
    /// # Errors
    /// As [`row_log_lik`](RowLikelihood::row_log_lik).
    fn row_log_ratio(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        first: usize,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        let mut tmp = [0.0; CHUNK];
        let mut start = first;
        for chunk in out.chunks_mut(CHUNK) {
            let t = &mut tmp[..chunk.len()];
            self.row_log_lik(theta, start, t)?;
            self.row_log_lik(theta_new, start, chunk)?;
            for (c, &a) in chunk.iter_mut().zip(t.iter()) {
                *c -= a;
            }
            start += chunk.len();
        }
        Ok(())
    }

    /// Fused pass over rows `first ..first + count`: Σ_j clip(r_j(θ, θ′), b) with
    /// [`clip`] semantics.
    ///
    /// # Privacy
    /// Every row contributes a value in `[−b, b]` whatever its data: a row with non-finite
    /// values contributes some deterministic value in that range (which one may differ between
    /// this default and a model's fast path). Hence the sum changes by at most `b` when one row
    /// is added or removed and by at most `2b` when one row is replaced — the sensitivity the
    /// DP-penalty / DP-Barker noise must be calibrated to. Errors depend only on θ, θ′, the row
    /// range and `b`, never on data.
    ///
    /// # Errors
    /// As [`row_log_lik`](RowLikelihood::row_log_lik); [`SimError::InvalidParameter`] unless `b`
    /// is in `(0, 1e250]`.
    fn clipped_log_ratio_sum(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        first: usize,
        count: usize,
        b: f64,
    ) -> Result<ClipSum, SimError> {
        check_range(first, count, self.n_rows())?;
        chunked_clip_sum(self, theta, theta_new, first..first + count, b)
    }

    /// Clip-and-sum over the listed rows (a minibatch, in the given order):
    /// c_j = clip(r_j(θ, θ′), b) for each `j` in `rows`, returning Σ c_j, Σ c_j² and the
    /// clipped count. Each c_j equals the value the one-row pass
    /// [`clipped_log_ratio_sum`](RowLikelihood::clipped_log_ratio_sum)`(θ, θ′, j, 1, b)`
    /// gives (the default is exactly that loop; fast models compute the per-proposal
    /// constants once and gather the rows).
    ///
    /// # Privacy
    /// As [`clipped_log_ratio_sum`](RowLikelihood::clipped_log_ratio_sum): every row
    /// contributes a value in `[−b, b]`; errors depend only on θ, θ′, the row indices and `b`.
    ///
    /// # Errors
    /// As [`clipped_log_ratio_sum`](RowLikelihood::clipped_log_ratio_sum); a row index
    /// `≥ n_rows` is a [`SimError::DimensionMismatch`].
    fn clipped_log_ratio_rows(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        rows: &[usize],
        b: f64,
    ) -> Result<BatchClipSum, SimError> {
        crate::error::clip_bound(b)?;
        batch_by_rows(rows, |j| {
            self.clipped_log_ratio_sum(theta, theta_new, j, 1, b)
        })
    }

    /// Σ_j ℓ_j(θ) over all rows (the unclipped, non-private log-likelihood; for baselines).
    ///
    /// # Errors
    /// As [`row_log_lik`](RowLikelihood::row_log_lik).
    fn log_lik(&self, theta: &[f64]) -> Result<f64, SimError> {
        let n = self.n_rows();
        let mut buf = [0.0; CHUNK];
        let mut acc = 0.0;
        let mut start = 0;
        while start < n {
            let m = (n - start).min(CHUNK);
            self.row_log_lik(theta, start, &mut buf[..m])?;
            acc += buf[..m].iter().sum::<f64>();
            start += m;
        }
        Ok(acc)
    }
}

/// Per-row gradients ∇_θ ℓ_j(θ), for DP-HMC / gradient-based samplers.
pub trait RowGradient: RowLikelihood {
    /// Writes ∇_θ ℓ_j(θ) for rows `first ..first + out.len() / dim` into `out`, row-major within
    /// the call: `out[(j − first) · dim + k] = ∂ℓ_j/∂θ_k`. `out.len()` must be a multiple of
    /// `dim`.
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] for a wrong θ length, an `out` length that is not a
    /// multiple of `dim`, or a range past `n_rows`.
    fn row_grad(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError>;

    /// Fused pass: `out = Σ_j clip_{L2 ≤ b}(∇ℓ_j(θ))` over rows `first ..first + count`, where a
    /// row gradient g is scaled to `g · min(1, b/‖g‖₂)`; rows with a non-finite entry contribute
    /// 0 and count as clipped. Returns the number of clipped rows.
    ///
    /// Sensitivity of `out` (L2) is `b` under add/remove-one and `2b` under substitution.
    ///
    /// # Errors
    /// As [`row_grad`](RowGradient::row_grad); `out.len()` must equal `dim`;
    /// [`SimError::InvalidParameter`] unless `0 < b ≤ 1e250`; [`SimError::InvalidSize`] if
    /// `dim > CHUNK` (override for such models).
    fn clipped_grad_sum(
        &self,
        theta: &[f64],
        first: usize,
        count: usize,
        b: f64,
        out: &mut [f64],
    ) -> Result<usize, SimError> {
        let d = self.dim();
        check_len("out", d, out.len())?;
        check_range(first, count, self.n_rows())?;
        crate::error::clip_bound(b)?;
        if d == 0 || d > CHUNK {
            return Err(SimError::InvalidSize {
                name: "dim",
                value: d as u64,
            });
        }
        out.fill(0.0);
        let rows_per = CHUNK / d;
        let mut buf = [0.0; CHUNK];
        let mut clipped = 0usize;
        let mut start = first;
        let end = first + count;
        while start < end {
            let m = (end - start).min(rows_per);
            let g = &mut buf[..m * d];
            self.row_grad(theta, start, g)?;
            for row in g.chunks_exact(d) {
                clipped += usize::from(accumulate_clipped_row(row, b, out));
            }
            start += m;
        }
        Ok(clipped)
    }
}

/// Adds `row · min(1, b/‖row‖₂)` to `acc`; non-finite rows add nothing. Returns whether the row
/// was clipped (or dropped).
#[inline]
pub fn accumulate_clipped_row(row: &[f64], b: f64, acc: &mut [f64]) -> bool {
    let n2: f64 = row.iter().map(|x| x * x).sum();
    if !n2.is_finite() {
        if !row.iter().all(|x| x.is_finite()) {
            return true;
        }
        // finite entries whose squares overflow: rescale by the largest magnitude.
        let m = row.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let s: f64 = row.iter().map(|x| (x / m) * (x / m)).sum();
        let s = b / (m * libm::sqrt(s));
        for (a, &x) in acc.iter_mut().zip(row) {
            *a += x * s;
        }
        return true;
    }
    if n2 <= b * b {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a += x;
        }
        false
    } else {
        let s = b / libm::sqrt(n2);
        for (a, &x) in acc.iter_mut().zip(row) {
            *a += x * s;
        }
        true
    }
}

/// Σ c_j, Σ c_j² and the clipped count over `rows`, each c_j from a one-row pass `one(j)`.
/// The default [`RowLikelihood::clipped_log_ratio_sum`] pass over `rows` (after the range
/// check): [`RowLikelihood::row_log_ratio`] in chunks of [`CHUNK`], each clipped and summed by
/// [`clip_sum`]. Models whose fast path does not apply fall back to it.
pub(crate) fn chunked_clip_sum<L: RowLikelihood + ?Sized>(
    lik: &L,
    theta: &[f64],
    theta_new: &[f64],
    rows: core::ops::Range<usize>,
    b: f64,
) -> Result<ClipSum, SimError> {
    crate::error::clip_bound(b)?;
    let mut buf = [0.0; CHUNK];
    let mut acc = ClipSum {
        sum: 0.0,
        clipped: 0,
    };
    let mut start = rows.start;
    while start < rows.end {
        let m = (rows.end - start).min(CHUNK);
        lik.row_log_ratio(theta, theta_new, start, &mut buf[..m])?;
        let part = clip_sum(&buf[..m], b)?;
        acc.sum += part.sum;
        acc.clipped += part.clipped;
        start += m;
    }
    Ok(acc)
}

pub(crate) fn batch_by_rows(
    rows: &[usize],
    mut one: impl FnMut(usize) -> Result<ClipSum, SimError>,
) -> Result<BatchClipSum, SimError> {
    let mut acc = BatchClipSum {
        sum: 0.0,
        sum_sq: 0.0,
        clipped: 0,
    };
    for &j in rows {
        let c = one(j)?;
        acc.sum += c.sum;
        acc.sum_sq += c.sum * c.sum;
        acc.clipped += c.clipped;
    }
    Ok(acc)
}

/// Checks that rows `first .. first + count` lie within `0 .. n`.
///
/// # Errors
/// [`SimError::DimensionMismatch`] (`what = "rows"`) otherwise.
pub(crate) fn check_range(first: usize, count: usize, n: usize) -> Result<(), SimError> {
    match first.checked_add(count) {
        Some(end) if end <= n => Ok(()),
        _ => Err(SimError::DimensionMismatch {
            what: "rows",
            expected: n,
            got: first.saturating_add(count),
        }),
    }
}

/// Fused clip-and-sum for likelihoods whose log-ratio is *affine* in the data:
/// `Σ_j clip(c + Σ_k α_k · cols[k][j], b)` with [`clip`] semantics. Gaussian-family models
/// (the Gaussian-mean toy, the banana model) reduce r_j(θ, θ′) to this form, which evaluates
/// column by column in stack chunks and vectorises.
///
/// # Errors
/// [`SimError::DimensionMismatch`] if `cols` and `alpha` differ in length or the columns differ
/// in length; [`SimError::InvalidParameter`] unless `0 < b ≤ 1e250`.
pub fn affine_clip_sum(
    cols: &[&[f64]],
    alpha: &[f64],
    c: f64,
    b: f64,
) -> Result<ClipSum, SimError> {
    check_len("alpha", cols.len(), alpha.len())?;
    let n = cols.first().map_or(0, |c| c.len());
    for col in cols {
        check_len("column", n, col.len())?;
    }
    let b = crate::error::clip_bound(b)?;
    // Single-pass kernels for the common low dimensions (no intermediate buffer).
    match (cols, alpha) {
        ([x0], [a0]) => return Ok(fused1(x0, *a0, c, b)),
        ([x0, x1], [a0, a1]) => return Ok(fused2(x0, x1, *a0, *a1, c, b)),
        ([x0, x1, x2], [a0, a1, a2]) => {
            return Ok(fused([*x0, *x1, *x2], [*a0, *a1, *a2], c, b));
        }
        _ => {}
    }
    let mut buf = [0.0; CHUNK];
    let mut total = ClipSum {
        sum: 0.0,
        clipped: 0,
    };
    let mut start = 0;
    while start < n {
        let m = (n - start).min(CHUNK);
        let v = &mut buf[..m];
        v.fill(c);
        for (col, &a) in cols.iter().zip(alpha) {
            for (vi, &x) in v.iter_mut().zip(&col[start..start + m]) {
                *vi += a * x;
            }
        }
        let part = clip_sum(v, b)?;
        total.sum += part.sum;
        total.clipped += part.clipped;
        start += m;
    }
    Ok(total)
}

/// Lanes of the fused kernel (independent accumulators; fixed combination order).
const LANES: usize = 8;

/// One pass over `D` equal-length columns: Σ_j clip(c + Σ_k α_k x_k[j], b) with `LANES`
/// accumulators combined pairwise in a fixed order (deterministic, vectorisable).
#[inline]
#[allow(clippy::needless_range_loop)] // index arithmetic over D columns
fn fused<const D: usize>(cols: [&[f64]; D], alpha: [f64; D], c: f64, b: f64) -> ClipSum {
    let n = cols[0].len();
    let mut acc = [0.0f64; LANES];
    let mut cnt = [0.0f64; LANES];
    let full = n - n % LANES;
    let mut j = 0;
    while j < full {
        for l in 0..LANES {
            let mut v = c;
            for k in 0..D {
                v += alpha[k] * cols[k][j + l];
            }
            acc[l] += clip(v, b);
            cnt[l] += if v.abs() <= b { 0.0 } else { 1.0 };
        }
        j += LANES;
    }
    let mut tail = 0.0;
    let mut tail_cnt = 0.0;
    for jj in full..n {
        let mut v = c;
        for k in 0..D {
            v += alpha[k] * cols[k][jj];
        }
        tail += clip(v, b);
        tail_cnt += if v.abs() <= b { 0.0 } else { 1.0 };
    }
    let pair = |a: [f64; LANES]| ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // integral, ≥ 0
    ClipSum {
        sum: pair(acc) + tail,
        clipped: (pair(cnt) + tail_cnt) as usize,
    }
}

/// Clip-sum accumulator of `LANES` independent lanes.
struct Lanes {
    acc: [f64; LANES],
    cnt: [f64; LANES],
}

impl Lanes {
    #[inline(always)]
    fn add(&mut self, l: usize, v: f64, b: f64) {
        self.acc[l] += clip(v, b);
        self.cnt[l] += if v.abs() <= b { 0.0 } else { 1.0 };
    }
    #[inline]
    fn finish(&self, tail: f64, tail_cnt: f64) -> ClipSum {
        let pair =
            |a: &[f64; LANES]| ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // integral, ≥ 0
        ClipSum {
            sum: pair(&self.acc) + tail,
            clipped: (pair(&self.cnt) + tail_cnt) as usize,
        }
    }
}

/// [`fused`] for one column, with `chunks_exact` so the bounds checks vanish and it vectorises.
/// Same summation order as [`fused`].
#[inline]
#[allow(clippy::needless_range_loop)] // fixed-width lanes
fn fused1(x0: &[f64], a0: f64, c: f64, b: f64) -> ClipSum {
    let mut lanes = Lanes {
        acc: [0.0; LANES],
        cnt: [0.0; LANES],
    };
    let it = x0.chunks_exact(LANES);
    let r0 = it.remainder();
    for c0 in it {
        for l in 0..LANES {
            lanes.add(l, c + a0 * c0[l], b);
        }
    }
    let (mut tail, mut tail_cnt) = (0.0, 0.0);
    for &v0 in r0 {
        let v = c + a0 * v0;
        tail += clip(v, b);
        tail_cnt += if v.abs() <= b { 0.0 } else { 1.0 };
    }
    lanes.finish(tail, tail_cnt)
}

/// [`fused`] for two columns (see [`fused1`]).
#[inline]
#[allow(clippy::needless_range_loop)] // fixed-width lanes
fn fused2(x0: &[f64], x1: &[f64], a0: f64, a1: f64, c: f64, b: f64) -> ClipSum {
    let mut lanes = Lanes {
        acc: [0.0; LANES],
        cnt: [0.0; LANES],
    };
    let (i0, i1) = (x0.chunks_exact(LANES), x1.chunks_exact(LANES));
    let (r0, r1) = (i0.remainder(), i1.remainder());
    for (c0, c1) in i0.zip(i1) {
        for l in 0..LANES {
            lanes.add(l, c + a0 * c0[l] + a1 * c1[l], b);
        }
    }
    let (mut tail, mut tail_cnt) = (0.0, 0.0);
    for (&v0, &v1) in r0.iter().zip(r1) {
        let v = c + a0 * v0 + a1 * v1;
        tail += clip(v, b);
        tail_cnt += if v.abs() <= b { 0.0 } else { 1.0 };
    }
    lanes.finish(tail, tail_cnt)
}
