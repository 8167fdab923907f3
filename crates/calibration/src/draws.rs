//! Turning a sampler's output into the `n` posterior draws a [`Problem`](crate::Problem)
//! returns: a chain is thinned evenly, a set of exchangeable (accepted) θ is subsampled without
//! replacement, a weighted population is resampled systematically.

use alloc::vec;
use alloc::vec::Vec;

use dpinfer_math::systematic_resample;
use dpinfer_simulators::SimStream;
use rand_core::Rng;

use crate::CalibrationError;
use crate::engine::below;

/// What a sampler released, as far as picking posterior draws from it goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Output<'a> {
    /// Successive states of Markov chains (chain after chain): autocorrelated, so the draws
    /// are spread evenly over them (indices `⌊(i + 1)·m/n⌋ − 1`, `i = 0..n`, of the `m` rows).
    Chain,
    /// Exchangeable draws (accepted θ of rejection or SVT ABC): `n ≤ m` of them, chosen
    /// uniformly without replacement (a random subset in random order), so θₖ stays
    /// exchangeable with the chosen ones.
    Exchangeable,
    /// A weighted population (soft-ABC, SMC-ABC): `n` draws by systematic resampling with a
    /// uniform offset (with replacement; each draw has the weighted law).
    Weighted(&'a [f64]),
}

/// Appends `n` draws (row-major, `n · dim` values) from `samples` (`m` rows of `dim` values)
/// to `out`, as `output` says; randomness from the public `rng`.
///
/// # Errors
/// [`CalibrationError::InvalidSize`] for `dim` of 0 or a `samples` length that is not a
/// multiple of it; [`CalibrationError::LengthMismatch`] for no rows, fewer than `n` rows of
/// exchangeable draws (`"released draws"`: ask for fewer draws) or weights of another length;
/// [`CalibrationError::InvalidParameter`] for negative, non-finite or all-zero weights.
pub fn pick_draws(
    samples: &[f64],
    dim: usize,
    output: Output<'_>,
    n: usize,
    rng: &mut SimStream,
    out: &mut Vec<f64>,
) -> Result<(), CalibrationError> {
    let size = |v: usize| u64::try_from(v).unwrap_or(u64::MAX);
    if dim == 0 || !samples.len().is_multiple_of(dim) {
        return Err(CalibrationError::InvalidSize {
            name: "dim",
            value: size(dim),
        });
    }
    let m = samples.len() / dim;
    if m == 0 {
        return Err(CalibrationError::LengthMismatch {
            name: "released draws",
            expected: n,
            found: 0,
        });
    }
    let row = |i: usize| &samples[i * dim..(i + 1) * dim];
    match output {
        Output::Chain => {
            for i in 0..n {
                // ⌊(i + 1)·m/n⌋ − 1 in 0..m, without overflow for any sizes
                let at = u128::try_from(i + 1).unwrap_or(u128::MAX) * m as u128 / n as u128;
                let at = usize::try_from(at).unwrap_or(m).clamp(1, m) - 1;
                out.extend_from_slice(row(at));
            }
        }
        Output::Exchangeable => {
            if m < n {
                return Err(CalibrationError::LengthMismatch {
                    name: "released draws",
                    expected: n,
                    found: m,
                });
            }
            // partial Fisher–Yates: positions 0..n of a uniform random permutation
            let mut idx: Vec<usize> = (0..m).collect();
            for i in 0..n {
                let j = i + usize::try_from(below(rng, size(m - i))).unwrap_or(0);
                idx.swap(i, j);
                out.extend_from_slice(row(idx[i]));
            }
        }
        Output::Weighted(w) => {
            if w.len() != m {
                return Err(CalibrationError::LengthMismatch {
                    name: "weights",
                    expected: m,
                    found: w.len(),
                });
            }
            // a uniform offset in [0, 1) from 53 random bits
            #[allow(clippy::cast_precision_loss)]
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let mut picked = vec![0usize; n];
            if n > 0 {
                systematic_resample(w, u, &mut picked).map_err(|_| {
                    CalibrationError::InvalidParameter {
                        name: "weights",
                        value: w
                            .iter()
                            .copied()
                            .find(|x| !(x.is_finite() && *x >= 0.0))
                            .unwrap_or(0.0),
                    }
                })?;
            }
            for i in picked {
                out.extend_from_slice(row(i));
            }
        }
    }
    Ok(())
}
