//! The observed side, cached: [`MmdReference`].

use crate::mmd::{as_f64, cross_sum, self_sums};
use crate::sensitivity::{self, Sensitivity};
use crate::{BoundedKernel, DistanceError, Rows};

/// The observed data set `Y*` with its kernel and the cached observed Gram sums, so each
/// comparison with a simulated set costs only the simulated Gram sum (upper triangle) and the
/// cross term. Holds a borrow of `Y*`; no allocation.
///
/// Only [`BoundedKernel`]s are accepted, so every value comes with a sensitivity.
///
/// # Privacy
/// [`MmdReference::mmd`] is `ρ = √(MMD²_b)` of Park, Vinaroz & Jitkrittum (2021, §2.1) with
/// sensitivity [`MmdReference::sensitivity`] under [`crate::Neighbouring::ReplaceOne`] on
/// `Y*` (Lemma 1), and output in `[0, 2√B_k]`. Non-finite observed values are mapped by
/// [`crate::sanitize`], never turned into errors. The bandwidth must not be computed from
/// `Y*` (use [`crate::median_heuristic`] on simulated data).
///
/// ```
/// use dpinfer_distances::{Gaussian, MmdReference, Rows};
/// let obs = [0.1, -0.4, 0.3, 1.2];
/// let sim = [0.0, 0.5, -0.2, 0.9, 1.1];
/// let r = MmdReference::new(Gaussian::new(1.0)?, Rows::one_dim(&obs)?)?;
/// let rho = r.mmd(Rows::one_dim(&sim)?)?;
/// assert!((0.0..=2.0).contains(&rho));
/// assert!(r.sensitivity().value() >= 2.0 / 4.0);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MmdReference<'a, K> {
    kernel: K,
    obs: Rows<'a>,
    /// `(1/N²) Σ_{i,j} k(x_i, x_j)`.
    kxx_v: f64,
    /// `(1/(N(N−1))) Σ_{i≠j} k(x_i, x_j)`, or 0 when `N = 1`.
    kxx_u: f64,
}

impl<'a, K: BoundedKernel> MmdReference<'a, K> {
    /// Caches the observed Gram sums (`O(N² d)`, once).
    ///
    /// # Errors
    /// None at present for valid [`Rows`]; the `Result` is kept for future validation
    /// ([`DistanceError::NonFiniteKernel`] cannot occur with the crate's kernels).
    pub fn new(kernel: K, obs: Rows<'a>) -> Result<Self, DistanceError> {
        let n = as_f64(obs.rows());
        let (kxx, diag) = self_sums(&kernel, obs);
        let kxx_u = if obs.rows() >= 2 {
            (kxx - diag) / (n * (n - 1.0))
        } else {
            0.0
        };
        Ok(Self {
            kernel,
            obs,
            kxx_v: kxx / (n * n),
            kxx_u,
        })
    }

    /// The kernel.
    #[must_use]
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// Number of observed rows `N`.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.obs.rows()
    }

    /// Row dimension.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.obs.dim()
    }

    /// Biased squared MMD between `Y*` and `sim`, clamped into `[0, 4B_k]`.
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`] if `sim` has another row dimension.
    pub fn mmd2(&self, sim: Rows<'_>) -> Result<f64, DistanceError> {
        self.obs.same_dim(&sim)?;
        let m = as_f64(sim.rows());
        let n = as_f64(self.obs.rows());
        let (kyy, _) = self_sums(&self.kernel, sim);
        let kxy = cross_sum(&self.kernel, self.obs, sim);
        let v = self.kxx_v + kyy / (m * m) - 2.0 * (kxy / (n * m));
        Ok(clamp_nan(v, 4.0 * self.kernel.bound()))
    }

    /// Biased MMD `ρ = √(MMD²_b)`, in `[0, 2√B_k]`.
    ///
    /// # Errors
    /// As [`MmdReference::mmd2`].
    pub fn mmd(&self, sim: Rows<'_>) -> Result<f64, DistanceError> {
        let up = 2.0 * libm::sqrt(self.kernel.bound());
        Ok(clamp_nan(libm::sqrt(self.mmd2(sim)?), up))
    }

    /// Unbiased squared MMD (raw, can be negative), reusing the cached observed Gram sum.
    ///
    /// # Errors
    /// [`DistanceError::TooFewRows`] if `N < 2` or `sim` has fewer than 2 rows;
    /// [`DistanceError::DimensionMismatch`].
    pub fn mmd2_unbiased(&self, sim: Rows<'_>) -> Result<f64, DistanceError> {
        self.obs.same_dim(&sim)?;
        for r in [self.obs.rows(), sim.rows()] {
            if r < 2 {
                return Err(DistanceError::TooFewRows {
                    needed: 2,
                    found: r,
                });
            }
        }
        let m = as_f64(sim.rows());
        let n = as_f64(self.obs.rows());
        let (kyy, dy) = self_sums(&self.kernel, sim);
        let kxy = cross_sum(&self.kernel, self.obs, sim);
        let v = self.kxx_u + (kyy - dy) / (m * (m - 1.0)) - 2.0 * (kxy / (n * m));
        let b = 4.0 * self.kernel.bound();
        Ok(if v.is_nan() { b } else { v.clamp(-b, b) })
    }

    /// Sensitivity of [`MmdReference::mmd`]: Lemma 1's `2√B_k / N` plus
    /// [`sensitivity::rounding_slack`] for simulated sets of at most `N` rows (the lemma's
    /// setting `|Y_t| = N`). Use [`MmdReference::sensitivity_for`] for larger simulated sets.
    ///
    /// # Privacy
    /// [`crate::Neighbouring::ReplaceOne`] on `Y*`.
    #[must_use]
    pub fn sensitivity(&self) -> Sensitivity {
        self.sensitivity_for(self.obs.rows())
    }

    /// As [`MmdReference::sensitivity`], with the rounding slack for simulated sets of up to
    /// `sim_rows` rows.
    #[must_use]
    pub fn sensitivity_for(&self, sim_rows: usize) -> Sensitivity {
        let b = self.kernel.bound();
        let n = self.obs.rows();
        // `b` is finite and positive for the crate's kernels and `n ≥ 1`, so both succeed;
        // fall back to the always-valid range bound otherwise.
        match (
            sensitivity::mmd(b, n),
            sensitivity::rounding_slack(b, n, sim_rows, self.dim()),
        ) {
            (Ok(s), Ok(slack)) => s.plus(slack),
            _ => Sensitivity::new(f64::MAX, crate::Relations::ANY_PAIR),
        }
    }

    /// `sup ρ = 2√B_k` (Lemma 1).
    #[must_use]
    pub fn upper_bound(&self) -> f64 {
        (2.0 * libm::sqrt(self.kernel.bound())).next_up()
    }
}

#[cfg(feature = "parallel")]
impl<K: BoundedKernel + Sync> MmdReference<'_, K> {
    /// [`MmdReference::mmd2`] on the current rayon thread pool (choose the thread count with
    /// `rayon::ThreadPool::install`). The result is bit-identical to [`MmdReference::mmd2`]
    /// for every thread count: rows are summed by the same kernel code and reduced with the
    /// same compensated sum in row order.
    ///
    /// # Errors
    /// As [`MmdReference::mmd2`].
    pub fn mmd2_parallel(&self, sim: Rows<'_>) -> Result<f64, DistanceError> {
        use dpinfer_math::NeumaierSum;
        self.obs.same_dim(&sim)?;
        use crate::mmd::RowSum;
        use crate::simd::{Level, dispatch_at};
        let k = &self.kernel;
        // The workers run at the caller's dispatch level (same bits on every level anyway).
        let level = Level::current();
        let (d, ys) = (sim.dim(), sim.as_slice());
        let self_rows = crate::mmd::parallel_rows(sim.rows(), |i| {
            ys.get((i + 1) * d..)
                .filter(|r| !r.is_empty())
                .map_or(0.0, |rest| {
                    dispatch_at(level, RowSum(k, &ys[i * d..(i + 1) * d], rest))
                })
        });
        let obs = self.obs.as_slice();
        let cross_rows = crate::mmd::parallel_rows(self.obs.rows(), |i| {
            dispatch_at(level, RowSum(k, &obs[i * d..(i + 1) * d], ys))
        });
        let mut diag = NeumaierSum::new();
        for y in sim.iter() {
            diag.add(k.eval(y, y));
        }
        let kyy = diag.sum() + 2.0 * NeumaierSum::sum_iter(self_rows);
        let kxy = NeumaierSum::sum_iter(cross_rows);
        let (m, n) = (as_f64(sim.rows()), as_f64(self.obs.rows()));
        let v = self.kxx_v + kyy / (m * m) - 2.0 * (kxy / (n * m));
        Ok(clamp_nan(v, 4.0 * self.kernel.bound()))
    }

    /// `√` of [`MmdReference::mmd2_parallel`], in `[0, 2√B_k]`; bit-identical to
    /// [`MmdReference::mmd`].
    ///
    /// # Errors
    /// As [`MmdReference::mmd2`].
    pub fn mmd_parallel(&self, sim: Rows<'_>) -> Result<f64, DistanceError> {
        let up = 2.0 * libm::sqrt(self.kernel.bound());
        Ok(clamp_nan(libm::sqrt(self.mmd2_parallel(sim)?), up))
    }
}

#[inline]
fn clamp_nan(v: f64, hi: f64) -> f64 {
    if v.is_nan() { hi } else { v.clamp(0.0, hi) }
}

#[cfg(all(test, feature = "parallel"))]
mod tests {
    use super::*;
    use crate::Gaussian;

    #[test]
    fn parallel_is_bit_identical_for_any_thread_count() {
        let obs: alloc::vec::Vec<f64> = (0..301).map(|i| libm::sin(f64::from(i) * 0.37)).collect();
        let sim: alloc::vec::Vec<f64> = (0..257)
            .map(|i| libm::cos(f64::from(i) * 0.11) + 0.2)
            .collect();
        for d in [1usize, 3] {
            let n = obs.len() / d * d;
            let m = sim.len() / d * d;
            let r = MmdReference::new(
                Gaussian::new(0.7).unwrap(),
                Rows::new(&obs[..n], d).unwrap(),
            )
            .unwrap();
            let s = Rows::new(&sim[..m], d).unwrap();
            let seq = r.mmd(s).unwrap();
            for t in [1usize, 2, 7] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap();
                let par = pool.install(|| r.mmd_parallel(s).unwrap());
                assert_eq!(par.to_bits(), seq.to_bits(), "{t} threads");
                let par2 = pool.install(|| r.mmd2_parallel(s).unwrap());
                assert_eq!(par2.to_bits(), r.mmd2(s).unwrap().to_bits(), "{t} threads");
            }
        }
    }
}
