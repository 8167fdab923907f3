//! Weighted L2 distance on summary statistics, with clipping.

use crate::mmd::as_f64;
use crate::sensitivity::{self, Sensitivity};
use crate::{DistanceError, Rows};

/// The weights of the tuberculosis experiment's 8-component summary (Park, Vinaroz &
/// Jitkrittum 2021, §6.2, following Lintusaari et al. 2019, Table 1; values from the
/// reference code): `1, 1, 2, 10, 100, 100, 10, 10`.
pub const TUBERCULOSIS_WEIGHTS: [f64; 8] = [1.0, 1.0, 2.0, 10.0, 100.0, 100.0, 10.0, 10.0];

/// The clipping bound `C = 200` of the tuberculosis experiment (Park, Vinaroz & Jitkrittum
/// 2021, §6.2: "we set C = 200").
pub const TUBERCULOSIS_CLIP: f64 = 200.0;

/// Weighted Euclidean distance `d_w(a, b) = √(Σ_i w_i (a_i − b_i)²)` (the convention of
/// `scipy.spatial.distance.euclidean(u, v, w)`). Borrowed weights; no allocation.
///
/// Unclipped, so it has no finite sensitivity; wrap it in [`ClippedWeightedL2`] for use on
/// private data. Components with weight 0 are ignored (so `0 · ∞` never arises); any NaN or
/// infinite difference in a weighted component gives `+∞`.
///
/// ```
/// use dpinfer_distances::WeightedL2;
/// let w = WeightedL2::new(&[1.0, 4.0])?;
/// assert_eq!(w.distance(&[0.0, 0.0], &[3.0, 2.0])?, 5.0);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightedL2<'w> {
    weights: &'w [f64],
}

impl<'w> WeightedL2<'w> {
    /// # Errors
    /// [`DistanceError::Empty`] for no weights; [`DistanceError::InvalidWeight`] for a NaN,
    /// infinite or negative weight.
    pub fn new(weights: &'w [f64]) -> Result<Self, DistanceError> {
        if weights.is_empty() {
            return Err(DistanceError::Empty);
        }
        if let Some(index) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(DistanceError::InvalidWeight { index });
        }
        Ok(Self { weights })
    }

    /// The weights.
    #[must_use]
    pub fn weights(&self) -> &'w [f64] {
        self.weights
    }

    /// Number of summary components `K`.
    #[must_use]
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// Always `false` (construction rejects empty weights).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    #[inline]
    fn raw(&self, a: &[f64], b: &[f64]) -> f64 {
        let mut s = 0.0;
        for ((w, x), y) in self.weights.iter().zip(a).zip(b) {
            if *w > 0.0 {
                let d = x - y;
                // NaN differences become +∞ (`d * d` of NaN is NaN; map it).
                let t = w * (d * d);
                s += if t.is_nan() { f64::INFINITY } else { t };
            }
        }
        libm::sqrt(s)
    }

    fn check(&self, a: &[f64]) -> Result<(), DistanceError> {
        if a.len() == self.weights.len() {
            Ok(())
        } else {
            Err(DistanceError::DimensionMismatch {
                expected: self.weights.len(),
                found: a.len(),
            })
        }
    }

    /// `d_w(a, b)` in `[0, +∞]`, never NaN.
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`] if `a` or `b` does not have `K` components.
    pub fn distance(&self, a: &[f64], b: &[f64]) -> Result<f64, DistanceError> {
        self.check(a)?;
        self.check(b)?;
        Ok(self.raw(a, b))
    }
}

/// `min(d_w(s*, s), C)`: the weighted L2 distance clipped at `C`, the bounded distance used
/// for the tuberculosis experiment (Park, Vinaroz & Jitkrittum 2021, §6.2; Park & Jitkrittum,
/// §4 "taking the minimum between the evaluated distance … and a pre-chosen bound B_ρ").
///
/// NaN and ±∞ anywhere (observed or simulated summaries) map deterministically to `C`: a NaN
/// would otherwise fail every comparison on one data set and not on its neighbour.
///
/// # Privacy
/// Single distance: sensitivity `C` for any pair of data sets ([`sensitivity::clipped`]).
/// Mean over `n` observed data sets, term `i` depending only on data set `i`:
/// `C/n` under replace-one or add/remove ([`sensitivity::clipped_mean`]). Sum: `C`
/// ([`sensitivity::clipped_sum`]).
///
/// ```
/// use dpinfer_distances::{ClippedWeightedL2, TUBERCULOSIS_CLIP, TUBERCULOSIS_WEIGHTS};
/// let d = ClippedWeightedL2::new(&TUBERCULOSIS_WEIGHTS, TUBERCULOSIS_CLIP)?;
/// let a = [0.0; 8];
/// let mut b = [0.0; 8];
/// b[4] = 1.0; // weight 100: distance 10
/// assert_eq!(d.distance(&a, &b)?, 10.0);
/// b[4] = f64::NAN;
/// assert_eq!(d.distance(&a, &b)?, 200.0);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClippedWeightedL2<'w> {
    l2: WeightedL2<'w>,
    clip: f64,
}

impl<'w> ClippedWeightedL2<'w> {
    /// # Errors
    /// As [`WeightedL2::new`]; [`DistanceError::InvalidClip`] unless `C` is finite and
    /// positive.
    pub fn new(weights: &'w [f64], clip: f64) -> Result<Self, DistanceError> {
        let l2 = WeightedL2::new(weights)?;
        if !(clip.is_finite() && clip > 0.0) {
            return Err(DistanceError::InvalidClip);
        }
        Ok(Self { l2, clip })
    }

    /// The clipping bound `C`.
    #[must_use]
    pub fn clip(&self) -> f64 {
        self.clip
    }

    /// The underlying weighted L2 distance.
    #[must_use]
    pub fn weighted_l2(&self) -> WeightedL2<'w> {
        self.l2
    }

    #[inline]
    fn clipped(&self, a: &[f64], b: &[f64]) -> f64 {
        let d = self.l2.raw(a, b);
        // Any non-finite component (including ±∞ in a zero-weight slot) maps to C.
        let all_finite = a.iter().chain(b).all(|v| v.is_finite());
        if all_finite && d < self.clip {
            d
        } else {
            self.clip
        }
    }

    /// `min(d_w(a, b), C)` in `[0, C]`; non-finite input gives `C`.
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`].
    pub fn distance(&self, a: &[f64], b: &[f64]) -> Result<f64, DistanceError> {
        self.l2.check(a)?;
        self.l2.check(b)?;
        Ok(self.clipped(a, b))
    }

    fn pairs(&self, obs: Rows<'_>, sim: Rows<'_>) -> Result<(), DistanceError> {
        let k = self.l2.len();
        for r in [obs, sim] {
            if r.dim() != k {
                return Err(DistanceError::DimensionMismatch {
                    expected: k,
                    found: r.dim(),
                });
            }
        }
        if sim.rows() != 1 && sim.rows() != obs.rows() {
            return Err(DistanceError::RowCountMismatch {
                left: obs.rows(),
                right: sim.rows(),
            });
        }
        Ok(())
    }

    fn sum_clipped(&self, obs: Rows<'_>, sim: Rows<'_>) -> f64 {
        let mut s = dpinfer_math::NeumaierSum::new();
        if sim.rows() == 1 {
            let b = sim.as_slice();
            for a in obs.iter() {
                s.add(self.clipped(a, b));
            }
        } else {
            for (a, b) in obs.iter().zip(sim.iter()) {
                s.add(self.clipped(a, b));
            }
        }
        s.sum()
    }

    /// `(1/n) Σ_i min(d_w(s*_i, s_i), C)` over `n` observed summaries (rows of `obs`, `K`
    /// columns) paired with the rows of `sim` (`n` rows, or 1 row compared with every observed
    /// row). In `[0, C]`.
    ///
    /// # Privacy
    /// Sensitivity `C/n` ([`ClippedWeightedL2::mean_sensitivity`]).
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`] unless both have `K` columns;
    /// [`DistanceError::RowCountMismatch`] unless `sim` has 1 or `n` rows.
    pub fn mean_distance(&self, obs: Rows<'_>, sim: Rows<'_>) -> Result<f64, DistanceError> {
        self.pairs(obs, sim)?;
        Ok((self.sum_clipped(obs, sim) / as_f64(obs.rows())).clamp(0.0, self.clip))
    }

    /// `Σ_i min(d_w(s*_i, s_i), C)`, pairing as in [`ClippedWeightedL2::mean_distance`].
    ///
    /// # Errors
    /// As [`ClippedWeightedL2::mean_distance`].
    pub fn sum_distance(&self, obs: Rows<'_>, sim: Rows<'_>) -> Result<f64, DistanceError> {
        self.pairs(obs, sim)?;
        Ok(self.sum_clipped(obs, sim).max(0.0))
    }

    /// Sensitivity of [`ClippedWeightedL2::distance`]: `C` ([`sensitivity::clipped`]).
    #[must_use]
    pub fn sensitivity(&self) -> Sensitivity {
        Sensitivity::new(self.clip, crate::Relations::ANY_PAIR)
    }

    /// Sensitivity of [`ClippedWeightedL2::mean_distance`] over `n` observed data sets:
    /// `C/n`.
    ///
    /// # Errors
    /// [`DistanceError::InvalidSize`] if `n = 0`.
    pub fn mean_sensitivity(&self, n: usize) -> Result<Sensitivity, DistanceError> {
        sensitivity::clipped_mean(self.clip, n)
    }

    /// Sensitivity of [`ClippedWeightedL2::sum_distance`]: `C`.
    #[must_use]
    pub fn sum_sensitivity(&self) -> Sensitivity {
        Sensitivity::new(self.clip, crate::Relations::REPLACE_ONE_OR_ADD_REMOVE)
    }
}
