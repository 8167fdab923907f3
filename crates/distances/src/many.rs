//! One distance per simulated set, over many sets, on the rayon thread pool (`parallel`).
//!
//! ABC compares thousands of simulated data sets with one observed set; each comparison is
//! independent, so the sets are distributed over the pool's threads (work-stealing) and each is
//! computed by exactly the sequential code of its single-set method, at the caller's SIMD
//! dispatch level. Every output is therefore bit-identical to the single-set call — for any
//! thread count and any split (tested for 1, 2 and 7 threads). Choose the thread count with
//! `rayon::ThreadPool::install`; the global pool uses all cores.

use rayon::prelude::*;

use crate::simd::{Level, with_level};
use crate::{
    BoundedKernel, DistanceError, MmdReference, RandomFourierFeatures, RffReference, Rows,
};

/// Runs `f(i, out_i)` for every set on the pool at the caller's dispatch level; the first error
/// in set order wins (all sets are still computed).
fn each_set<T: Send, F>(sets: &[Rows<'_>], out: &mut [T], f: F) -> Result<(), DistanceError>
where
    F: Fn(Rows<'_>, &mut T) -> Result<(), DistanceError> + Sync,
{
    if out.len() < sets.len() {
        return Err(DistanceError::BufferTooSmall {
            needed: sets.len(),
            found: out.len(),
        });
    }
    let level = Level::current();
    let errors: alloc::vec::Vec<Result<(), DistanceError>> = sets
        .par_iter()
        .zip(out.par_iter_mut())
        .map(|(s, o)| with_level(level, || f(*s, o)).unwrap_or_else(|| f(*s, o)))
        .collect();
    errors.into_iter().collect()
}

impl<K: BoundedKernel + Sync> MmdReference<'_, K> {
    /// [`MmdReference::mmd`] of every set in `sets` into `out[i]`, the sets spread over the
    /// current rayon pool. `out[i]` is bit-identical to `self.mmd(sets[i])` for any thread
    /// count. (For one large set, [`MmdReference::mmd_parallel`] splits its rows instead.)
    ///
    /// # Errors
    /// [`DistanceError::BufferTooSmall`] if `out` is shorter than `sets`; otherwise the first
    /// (in set order) error of [`MmdReference::mmd`].
    pub fn mmd_many(&self, sets: &[Rows<'_>], out: &mut [f64]) -> Result<(), DistanceError> {
        each_set(sets, out, |s, o| {
            *o = self.mmd(s)?;
            Ok(())
        })
    }
}

impl<E: AsRef<[f64]> + Sync> RffReference<'_, E> {
    /// [`RffReference::mmd`] of every set in `sets` into `out[i]`, the sets spread over the
    /// current rayon pool; `out[i]` is bit-identical to `self.mmd(sets[i])` for any thread
    /// count.
    ///
    /// # Errors
    /// [`DistanceError::BufferTooSmall`] if `out` is shorter than `sets`; otherwise the first
    /// (in set order) error of [`RffReference::mmd`].
    pub fn mmd_many(&self, sets: &[Rows<'_>], out: &mut [f64]) -> Result<(), DistanceError> {
        each_set(sets, out, |s, o| {
            *o = self.mmd(s)?;
            Ok(())
        })
    }
}

impl RandomFourierFeatures<'_> {
    /// The mean embedding of every set in `sets` into `out[i·D..(i+1)·D]` (`D` =
    /// [`RandomFourierFeatures::num_features`]), the sets spread over the current rayon pool;
    /// each block is bit-identical to [`RandomFourierFeatures::mean_embedding`] of its set for
    /// any thread count.
    ///
    /// # Errors
    /// [`DistanceError::BufferTooSmall`] if `out` is shorter than `sets.len()·D`; otherwise the
    /// first (in set order) error of [`RandomFourierFeatures::mean_embedding`].
    pub fn mean_embeddings(&self, sets: &[Rows<'_>], out: &mut [f64]) -> Result<(), DistanceError> {
        let d = self.num_features();
        let needed = sets.len().saturating_mul(d);
        if out.len() < needed {
            return Err(DistanceError::BufferTooSmall {
                needed,
                found: out.len(),
            });
        }
        let mut blocks: alloc::vec::Vec<&mut [f64]> = out[..needed].chunks_exact_mut(d).collect();
        each_set(sets, &mut blocks, |s, o| self.mean_embedding(s, o))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::cast_precision_loss)]
mod tests {
    use super::*;
    use crate::Gaussian;
    use alloc::vec::Vec;

    fn data(len: usize, a: f64, b: f64) -> Vec<f64> {
        (0..len)
            .map(|i| libm::sin(i as f64 * a) + b * libm::cos(i as f64 * 0.013))
            .collect()
    }

    /// Every output of the many-set methods equals the single-set method bit for bit, on pools
    /// of 1, 2 and 7 threads and at every dispatch level this CPU has.
    #[test]
    fn many_sets_bit_identical_for_1_2_7_threads() {
        let obs = data(600, 0.37, 0.2);
        let sims: Vec<Vec<f64>> = (0..23)
            .map(|k| data(90 + 37 * k, 0.11 + 0.01 * k as f64, 0.05 * k as f64))
            .collect();
        let z = data(50 * 2, 1.3, 0.0);
        for d in [1usize, 2, 5] {
            let sets: Vec<Rows<'_>> = sims
                .iter()
                .map(|s| Rows::new(&s[..s.len() / d * d], d).unwrap())
                .collect();
            let obs_rows = Rows::new(&obs[..obs.len() / d * d], d).unwrap();
            let exact = MmdReference::new(Gaussian::new(0.7).unwrap(), obs_rows).unwrap();
            let f = RandomFourierFeatures::new(&z[..z.len() / d * d], d, 0.9).unwrap();
            let rff = RffReference::new(f, obs_rows).unwrap();
            let dd = f.num_features();
            let seq_exact: Vec<f64> = sets.iter().map(|s| exact.mmd(*s).unwrap()).collect();
            let seq_rff: Vec<f64> = sets.iter().map(|s| rff.mmd(*s).unwrap()).collect();
            let mut seq_emb = alloc::vec![0.0; sets.len() * dd];
            for (s, o) in sets.iter().zip(seq_emb.chunks_exact_mut(dd)) {
                f.mean_embedding(*s, o).unwrap();
            }
            for level in Level::available() {
                for t in [1usize, 2, 7] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(t)
                        .build()
                        .unwrap();
                    let (e, r, m) = with_level(level, || {
                        pool.install(|| {
                            let mut e = alloc::vec![0.0; sets.len()];
                            exact.mmd_many(&sets, &mut e).unwrap();
                            let mut r = alloc::vec![0.0; sets.len()];
                            rff.mmd_many(&sets, &mut r).unwrap();
                            let mut m = alloc::vec![0.0; sets.len() * dd];
                            f.mean_embeddings(&sets, &mut m).unwrap();
                            (e, r, m)
                        })
                    })
                    .unwrap();
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(
                        bits(&e),
                        bits(&seq_exact),
                        "exact d={d} {t} threads {level:?}"
                    );
                    assert_eq!(bits(&r), bits(&seq_rff), "rff d={d} {t} threads {level:?}");
                    assert_eq!(bits(&m), bits(&seq_emb), "emb d={d} {t} threads {level:?}");
                }
            }
        }
    }

    #[test]
    fn many_sets_errors() {
        let obs = [0.1, 0.2, 0.3, 0.4];
        let exact =
            MmdReference::new(Gaussian::new(1.0).unwrap(), Rows::one_dim(&obs).unwrap()).unwrap();
        let two = [0.0, 1.0];
        let sets = [Rows::one_dim(&obs).unwrap(), Rows::new(&two, 2).unwrap()];
        let mut out = [0.0; 1];
        assert!(matches!(
            exact.mmd_many(&sets, &mut out),
            Err(DistanceError::BufferTooSmall {
                needed: 2,
                found: 1
            })
        ));
        let mut out = [0.0; 2];
        assert!(matches!(
            exact.mmd_many(&sets, &mut out),
            Err(DistanceError::DimensionMismatch { .. })
        ));
        let z = [0.5, -0.5];
        let f = RandomFourierFeatures::new(&z, 1, 1.0).unwrap();
        let mut emb = [0.0; 3];
        assert!(matches!(
            f.mean_embeddings(&sets[..1], &mut emb),
            Err(DistanceError::BufferTooSmall {
                needed: 4,
                found: 3
            })
        ));
        assert!(exact.mmd_many(&[], &mut []).is_ok());
    }
}
