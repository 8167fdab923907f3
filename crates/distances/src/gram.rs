//! Gram sums of multi-dimensional rows (`2 ≤ d ≤` [`MAX_DIM`]) over a **coordinate-major copy**
//! of the rows, bit-identical to the row sums of `kernel.rs`.
//!
//! The row sums of `kernel.rs` read 8 row-major rows at a time and must transpose them (8 rows
//! × `d` coordinates into `d` vectors of 8) to sum each row's squares in coordinate order —
//! shuffles on one port, once per row of `x` per chunk of `y`. Here a segment of `y`'s rows is
//! copied (and sanitised) once into a stack buffer, coordinate by coordinate, and a block of
//! [`XB`] rows of `x` runs over it: each chunk of 8 rows is then `d` unaligned vector loads,
//! `d` differences, `d` squares and `d − 1` additions, with no shuffle, and the copy costs
//! `d` scalar moves per `y` row per block of `x` rows.
//!
//! **Same bits as the row sums.** Every row `i` of `x` keeps its own four lanes; its `y` rows
//! are visited in order in chunks of 8 starting at its first row (row `j` of its range into
//! lane `j mod 4`, the first four then the last four of a chunk), the rest one at a time, the
//! lanes are added as `(l0 + l1) + (l2 + l3)`, and the row sums are Neumaier-added in row
//! order — what `radial_row_sum` and `mmd::self_sums_here` / `cross_sum_here` do. Each
//! squared distance is `Σ_k (x_k − y_k)²` summed in coordinate order; it starts from the first
//! square instead of `0 + (x_0 − y_0)²`, the same value (a square is never `−0`). Unit test:
//! `kernel::tests::row_sums_equal_the_defining_order` (every dimension, level and kernel) and
//! `tests::tiled_gram_sums_equal_the_row_sums` below (the upper triangle, every block and
//! segment boundary).

use dpinfer_math::NeumaierSum;

use crate::rows::sanitize;

/// `f64`s in the coordinate-major segment buffer (16 KiB on the stack).
const BUF: usize = 2048;
/// Rows of `x` run over one segment (each keeps four lanes and its next chunk).
const XB: usize = 64;
/// The largest row dimension served here (larger rows use the row sums).
pub(crate) const MAX_DIM: usize = 16;
/// Rows per chunk (one AVX-512 vector, two AVX2 vectors of squared distances).
const R: usize = 8;

/// Whether [`tiled`] serves rows of dimension `dim`.
#[inline(always)]
pub(crate) fn serves(dim: usize) -> bool {
    (2..=MAX_DIM).contains(&dim)
}

/// `Σ_i RS_i` (Neumaier, in row order) over the rows `x_i` of `x`, where `RS_i` is the row sum
/// `Σ_j f(‖x_i − y_j‖²)` over every row of `y` (`UPPER = false`), or over the rows `j > i`
/// of `y = x` (`UPPER = true`; rows with no such `j` are skipped), in the lane order of the
/// module docs. `x` and `y` are row-major with `dim` columns. `None` unless [`serves`]`(dim)`.
#[inline(always)]
pub(crate) fn tiled<const UPPER: bool>(
    x: &[f64],
    y: &[f64],
    dim: usize,
    f: impl Fn(f64) -> f64,
) -> Option<f64> {
    if !serves(dim) {
        return None;
    }
    let (n, m) = (x.len() / dim, y.len() / dim);
    // Rows per buffered segment, and chunk starts per segment (the chunk starting at the last
    // of them still lies inside the buffer).
    let cap = BUF / dim;
    let step = cap - (R - 1);
    let mut buf = [0.0f64; BUF];
    let mut total = NeumaierSum::new();
    let mut a = 0;
    while a < n {
        let b = (a + XB).min(n);
        let rows = b - a;
        let mut xs = [0.0f64; XB * MAX_DIM];
        for (o, v) in xs.iter_mut().zip(&x[a * dim..b * dim]) {
            *o = sanitize(*v);
        }
        let mut acc = [[0.0f64; 4]; XB];
        // The first `y` row of each row's range, then its next unvisited chunk.
        let mut next = [0usize; XB];
        for (i, nx) in next[..rows].iter_mut().enumerate() {
            *nx = if UPPER { a + i + 1 } else { 0 };
        }
        let mut s0 = if UPPER { a + 1 } else { 0 };
        while s0 + R <= m {
            let len = cap.min(m - s0);
            for (r, row) in y[s0 * dim..(s0 + len) * dim].chunks_exact(dim).enumerate() {
                for (k, &v) in row.iter().enumerate() {
                    buf[k * cap + r] = sanitize(v);
                }
            }
            let s1 = s0 + step;
            for ((xi, lanes), nx) in xs
                .chunks_exact(dim)
                .zip(&mut acc[..rows])
                .zip(&mut next[..rows])
            {
                let mut j = *nx;
                while j < s1 && j + R <= m {
                    let off = j - s0;
                    let mut t = [0.0f64; R];
                    for (ti, &v) in t.iter_mut().zip(&buf[off..off + R]) {
                        let d = xi[0] - v;
                        *ti = d * d;
                    }
                    for (k, &xk) in xi.iter().enumerate().skip(1) {
                        let col = k * cap + off;
                        for (ti, &v) in t.iter_mut().zip(&buf[col..col + R]) {
                            let d = xk - v;
                            *ti += d * d;
                        }
                    }
                    for ti in &mut t {
                        *ti = f(*ti);
                    }
                    for (l, v) in lanes.iter_mut().zip(&t[..4]) {
                        *l += *v;
                    }
                    for (l, v) in lanes.iter_mut().zip(&t[4..]) {
                        *l += *v;
                    }
                    j += R;
                }
                *nx = j;
            }
            s0 = s1;
        }
        for (i, ((xi, lanes), &nx)) in xs
            .chunks_exact(dim)
            .zip(&mut acc[..rows])
            .zip(&next[..rows])
            .enumerate()
        {
            if UPPER && a + i + 1 >= m {
                continue;
            }
            // The last `< 8` rows, one at a time (`nx` is a multiple of 8 past the range's
            // first row, so row `q` of the rest goes to lane `q mod 4`).
            for (q, yr) in y[nx * dim..].chunks_exact(dim).enumerate() {
                let mut s = 0.0;
                for (p, v) in xi.iter().zip(yr) {
                    let d = p - sanitize(*v);
                    s += d * d;
                }
                lanes[q & 3] += f(s);
            }
            total.add((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]));
        }
        a = b;
    }
    Some(total.sum())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::cast_precision_loss)]
mod tests {
    use super::{BUF, MAX_DIM, R, XB, serves};
    use crate::{Gaussian, Kernel, KernelVersion, Laplace, Matern32, Rows};
    use dpinfer_math::NeumaierSum;

    /// The defining order: row sums `row_i` with row `j` of the range in lane `j mod 4`,
    /// Neumaier-added in row order, skipping empty ranges (upper triangle).
    fn reference<K: Kernel>(k: &K, x: &[f64], y: &[f64], dim: usize, upper: bool) -> f64 {
        let mut total = NeumaierSum::new();
        for (i, xi) in x.chunks_exact(dim).enumerate() {
            let from = if upper { i + 1 } else { 0 };
            let rest = y.get(from * dim..).unwrap_or(&[]);
            if upper && rest.is_empty() {
                continue;
            }
            let mut acc = [0.0f64; 4];
            for (j, yj) in rest.chunks_exact(dim).enumerate() {
                acc[j & 3] += k.eval(xi, yj);
            }
            total.add((acc[0] + acc[1]) + (acc[2] + acc[3]));
        }
        total.sum()
    }

    fn check<K: Kernel>(k: &K, name: &str, x: &[f64], y: &[f64], dim: usize) {
        let (xr, yr) = (Rows::new(x, dim).unwrap(), Rows::new(y, dim).unwrap());
        let up = k.upper_gram_sum(xr).unwrap();
        let cross = k.cross_gram_sum(xr, yr).unwrap();
        let (n, m) = (xr.rows(), yr.rows());
        assert_eq!(
            up.to_bits(),
            reference(k, x, x, dim, true).to_bits(),
            "{name} upper, dim {dim}, n {n}"
        );
        assert_eq!(
            cross.to_bits(),
            reference(k, x, y, dim, false).to_bits(),
            "{name} cross, dim {dim}, n {n}, m {m}"
        );
        // Through the dispatched Gram sums (the tiled loop inside), on every level.
        #[cfg(feature = "std")]
        for level in crate::simd::Level::available() {
            let (s, c) = crate::simd::with_level(level, || {
                (
                    crate::mmd::self_sums(k, xr),
                    crate::mmd::cross_sum(k, xr, yr),
                )
            })
            .unwrap();
            assert_eq!(
                s.0.to_bits(),
                (s.1 + 2.0 * up).to_bits(),
                "{name} {level:?}"
            );
            assert_eq!(c.to_bits(), cross.to_bits(), "{name} {level:?}");
        }
    }

    /// The tiled upper-triangle and cross sums equal the defining one-row order bit for bit:
    /// dimensions 2..=16 (17 is not served), `x` blocks of 64 rows and their remainders, `y`
    /// segments of `BUF / dim` rows crossed (the chunks straddling a segment's end), lengths
    /// ≡ 0..7 (mod 8), NaN / ±∞ / 1e200 values, all three kernels, both versions, every
    /// dispatch level.
    #[test]
    fn tiled_gram_sums_equal_the_row_sums() {
        assert!(!serves(1) && serves(2) && serves(MAX_DIM) && !serves(MAX_DIM + 1));
        let mut s: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            2.0 * ((s >> 11) as f64 / (1u64 << 53) as f64) - 1.0
        };
        let mut data = [0.0f64; 2 * 1100];
        for (i, v) in data.iter_mut().enumerate() {
            *v = match i % 211 {
                5 => f64::NAN,
                17 => f64::NEG_INFINITY,
                40 => 1e200,
                77 => f64::INFINITY,
                _ => next(),
            };
        }
        for version in [KernelVersion::V1, KernelVersion::V2, KernelVersion::V3] {
            let g = Gaussian::new(0.9).unwrap().with_kernel_version(version);
            let l = Laplace::new(1.3).unwrap().with_kernel_version(version);
            let m = Matern32::new(0.7).unwrap().with_kernel_version(version);
            for dim in [2, 3, 5, 8, 9, 16] {
                let cap_rows = BUF / dim;
                // y crosses one segment boundary; x one block boundary (upper triangle too).
                let m_rows = (cap_rows + 2 * R + 3).min(data.len() / dim);
                for n_rows in [1, 2, 9, XB - 1, XB + 13] {
                    let x = &data[..n_rows * dim];
                    let y = &data[dim..dim + (m_rows - 1) * dim];
                    check(&g, "gauss", x, y, dim);
                    check(&l, "laplace", x, y, dim);
                    check(&m, "matern", x, y, dim);
                }
                // The upper triangle of a set longer than a segment.
                let big = &data[..m_rows * dim];
                assert_eq!(
                    g.upper_gram_sum(Rows::new(big, dim).unwrap())
                        .unwrap()
                        .to_bits(),
                    reference(&g, big, big, dim, true).to_bits(),
                    "upper, dim {dim}, {m_rows} rows"
                );
            }
            let x17 = Rows::new(&data[..17 * 3], 17).unwrap();
            assert!(g.upper_gram_sum(x17).is_none() && g.cross_gram_sum(x17, x17).is_none());
            let x1 = Rows::one_dim(&data[..10]).unwrap();
            assert!(g.upper_gram_sum(x1).is_none());
        }
    }
}
