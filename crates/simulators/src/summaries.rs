//! Summary statistics of a data set of `n` scalar observations with **declared clipping**,
//! and their sensitivity under the **replace-one** neighbouring relation (two data sets of the
//! same size `n` that differ in one observation).
//!
//! Every observation is clipped to the declared `[lo, hi]` before the summary is computed, so
//! the sensitivities below hold for *any* data — the clip is what makes them true, not an
//! assumption about the data. Apply the same summary to the observed and to the simulated data.
//!
//! | summary | value | L1 sensitivity (replace-one) |
//! |---|---|---|
//! | identity | the `n` clipped values | `hi − lo` (one coordinate changes) |
//! | mean | (1/n) Σ x_i | `(hi − lo)/n` |
//! | quantiles at levels p_1 < … < p_m | order statistics x_(⌈p n⌉) (inverse ECDF, type 1) | `hi − lo` |
//! | lag products at lags h_1 < … < h_m | γ_h = (1/(n − h)) Σ_t x_t x_{t+h} | Σ_h Δ_h, Δ_0 = R₀/n, Δ_h = 2R/(n − h) |
//!
//! Quantiles: replacing one observation moves each order statistic at most to its neighbour,
//! monotonically, so the changes over distinct order statistics telescope to at most `hi − lo`
//! (levels that select the same order statistic are counted once per level). Lag products (an
//! uncentred autocovariance of a series, the usual ingredient of autocorrelation summaries):
//! one x_t enters at most two products at lag h ≥ 1 (one at lag 0), each product ranging over
//! an interval of length R (R₀ for squares) computed exactly from `[lo, hi]`. The L2
//! sensitivity is returned too (√ of the sum of squared per-coordinate bounds; for quantiles
//! and identity it equals the L1 bound).
//!
//! [`SummarySensitivity::clipped_weighted_l2`] carries the summary's L2 sensitivity through
//! the clipped weighted L2 distance to the observed summary, the Δ a private ABC sampler needs.
//!
//! With `alloc`, `DeclaredSummary` is what a user declares for an own simulator: a library
//! summary of its raw outputs (sensitivity proven) or its outputs as the summary with an
//! optional user-declared, labelled sensitivity.

use crate::error::{SimError, check_len, finite};

#[cfg(feature = "alloc")]
mod declared;
#[cfg(feature = "alloc")]
pub use declared::{
    DeclaredSummary, OwnedSummaryKind, PROVEN_RELATION, SummaryError, SummarySpec, USER_ADD_REMOVE,
    USER_REPLACE_ONE,
};

/// Which statistic (levels and lags borrowed from the caller, sorted and distinct).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum SummaryKind<'a> {
    /// The clipped values themselves (`n` outputs).
    Identity,
    /// The mean of the clipped values (1 output).
    Mean,
    /// Empirical quantiles at the given levels in (0, 1] (one output per level).
    Quantiles(&'a [f64]),
    /// Uncentred lag products γ_h at the given lags (one output per lag).
    LagProducts(&'a [usize]),
}

/// Global sensitivity of a summary vector and the relation under which it holds.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SummarySensitivity {
    /// L1 sensitivity.
    pub l1: f64,
    /// L2 sensitivity.
    pub l2: f64,
    /// The neighbouring relation (always replace-one for the library's summaries: same n,
    /// one observation changed).
    pub relation: dpinfer_distances::Neighbouring,
}

impl SummarySensitivity {
    /// Sensitivity of the distance `ρ(y) = min(C, d_w(s(x), s(y)))` to the observed data `y`
    /// (under this summary's relation), where `d_w(a, b) = √(Σ_i w_i (a_i − b_i)²)` is the
    /// weighted L2 distance of `dpinfer_distances::ClippedWeightedL2` and `s(x)` any fixed
    /// simulated summary:
    ///
    /// `Δρ ≤ min(C, √(max_i w_i) · Δ₂(s))`.
    ///
    /// Proof: by the triangle inequality `|d_w(a, b) − d_w(a, b′)| ≤ d_w(b, b′) ≤
    /// √(max w) ‖b − b′‖₂`, with `‖s(y) − s(y′)‖₂ ≤ Δ₂` for neighbouring y, y′; `t ↦ min(C, t)`
    /// is 1-Lipschitz, and both distances lie in `[0, C]`.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for no weights; [`SimError::InvalidParameter`] for a negative
    /// or non-finite weight or a clip `C` that is not finite and > 0.
    pub fn clipped_weighted_l2(&self, weights: &[f64], clip: f64) -> Result<f64, SimError> {
        if weights.is_empty() {
            return Err(SimError::InvalidSize {
                name: "weights",
                value: 0,
            });
        }
        let mut w_max: f64 = 0.0;
        for &w in weights {
            if !(w.is_finite() && w >= 0.0) {
                return Err(SimError::InvalidParameter {
                    name: "weights",
                    value: w,
                });
            }
            w_max = w_max.max(w);
        }
        if !(clip.is_finite() && clip > 0.0) {
            return Err(SimError::InvalidParameter {
                name: "clip",
                value: clip,
            });
        }
        Ok(clip.min(libm::sqrt(w_max) * self.l2))
    }
}

/// A summary with its declared clipping range.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ClippedSummary<'a> {
    kind: SummaryKind<'a>,
    lo: f64,
    hi: f64,
}

impl<'a> ClippedSummary<'a> {
    /// `kind` over observations clipped to `[lo, hi]`.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for non-finite or empty `[lo, hi]`, quantile levels
    /// outside (0, 1] or not strictly increasing; [`SimError::InvalidSize`] for no levels or
    /// lags, or lags not strictly increasing.
    pub fn new(kind: SummaryKind<'a>, lo: f64, hi: f64) -> Result<Self, SimError> {
        let lo = finite("lo", lo)?;
        let hi = finite("hi", hi)?;
        if !(hi > lo && (hi - lo).is_finite()) {
            return Err(SimError::InvalidParameter {
                name: "hi",
                value: hi,
            });
        }
        match kind {
            SummaryKind::Quantiles(p) => {
                if p.is_empty() {
                    return Err(SimError::InvalidSize {
                        name: "levels",
                        value: 0,
                    });
                }
                let mut prev = 0.0;
                for &q in p {
                    if !(q > prev && q <= 1.0) {
                        return Err(SimError::InvalidParameter {
                            name: "levels",
                            value: q,
                        });
                    }
                    prev = q;
                }
            }
            SummaryKind::LagProducts(h) => {
                if h.is_empty() || h.windows(2).any(|w| w[1] <= w[0]) {
                    return Err(SimError::InvalidSize {
                        name: "lags",
                        value: h.len() as u64,
                    });
                }
            }
            SummaryKind::Identity | SummaryKind::Mean => {}
        }
        Ok(Self { kind, lo, hi })
    }

    /// Outputs for `n` observations.
    #[must_use]
    pub fn output_len(&self, n: usize) -> usize {
        match self.kind {
            SummaryKind::Identity => n,
            SummaryKind::Mean => 1,
            SummaryKind::Quantiles(p) => p.len(),
            SummaryKind::LagProducts(h) => h.len(),
        }
    }

    fn check_n(&self, n: usize) -> Result<(), SimError> {
        let min = match self.kind {
            SummaryKind::LagProducts(h) => h.last().map_or(1, |&m| m + 1),
            _ => 1,
        };
        if n < min {
            return Err(SimError::InvalidSize {
                name: "n",
                value: n as u64,
            });
        }
        Ok(())
    }

    /// Computes the summary of `data` (length n) into `out` (length
    /// [`output_len(n)`](Self::output_len)); `scratch` (length n) is needed by quantiles and
    /// may be empty otherwise.
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] for wrong buffer lengths; [`SimError::InvalidSize`] when
    /// n is 0 or not above the largest lag; [`SimError::InvalidParameter`] for NaN data.
    pub fn compute(
        &self,
        data: &[f64],
        out: &mut [f64],
        scratch: &mut [f64],
    ) -> Result<(), SimError> {
        let n = data.len();
        self.check_n(n)?;
        check_len("out", self.output_len(n), out.len())?;
        if let Some(&v) = data.iter().find(|v| v.is_nan()) {
            return Err(SimError::InvalidParameter {
                name: "data",
                value: v,
            });
        }
        let c = |v: f64| v.clamp(self.lo, self.hi);
        #[allow(clippy::cast_precision_loss)]
        let nf = n as f64;
        match self.kind {
            SummaryKind::Identity => {
                for (o, &v) in out.iter_mut().zip(data) {
                    *o = c(v);
                }
            }
            SummaryKind::Mean => {
                out[0] = data.iter().map(|&v| c(v)).sum::<f64>() / nf;
            }
            SummaryKind::Quantiles(levels) => {
                check_len("scratch", n, scratch.len())?;
                for (s, &v) in scratch.iter_mut().zip(data) {
                    *s = c(v);
                }
                scratch.sort_unstable_by(f64::total_cmp);
                for (o, &p) in out.iter_mut().zip(levels) {
                    *o = scratch[order_index(p, n)];
                }
            }
            SummaryKind::LagProducts(lags) => {
                for (o, &h) in out.iter_mut().zip(lags) {
                    let s: f64 = (0..n - h).map(|t| c(data[t]) * c(data[t + h])).sum();
                    #[allow(clippy::cast_precision_loss)]
                    let m = (n - h) as f64;
                    *o = s / m;
                }
            }
        }
        Ok(())
    }

    /// The sensitivity for data sets of `n` observations (see the [module docs](self)).
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] when n is 0 or not above the largest lag.
    pub fn sensitivity(&self, n: usize) -> Result<SummarySensitivity, SimError> {
        self.check_n(n)?;
        let w = self.hi - self.lo;
        #[allow(clippy::cast_precision_loss)]
        let nf = n as f64;
        let (l1, l2) = match self.kind {
            SummaryKind::Identity => (w, w),
            SummaryKind::Mean => (w / nf, w / nf),
            SummaryKind::Quantiles(levels) => {
                // Levels selecting the same order statistic count once each.
                let mut max_mult = 1_u32;
                let mut run = 1_u32;
                for pair in levels.windows(2) {
                    if order_index(pair[0], n) == order_index(pair[1], n) {
                        run += 1;
                        max_mult = max_mult.max(run);
                    } else {
                        run = 1;
                    }
                }
                let l1 = w * f64::from(max_mult);
                // Each coordinate moves at most w; the changes of distinct order statistics
                // sum to at most w, so Σ δ_k² ≤ w · max δ_k ≤ w², times the multiplicity.
                (l1, w * libm::sqrt(f64::from(max_mult)))
            }
            SummaryKind::LagProducts(lags) => {
                let (lo, hi) = (self.lo, self.hi);
                let corners = [lo * lo, hi * hi, lo * hi];
                let pmax = corners.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let pmin = corners.iter().copied().fold(f64::INFINITY, f64::min);
                let r = pmax - pmin;
                let sq_max = (lo * lo).max(hi * hi);
                let sq_min = if lo <= 0.0 && hi >= 0.0 {
                    0.0
                } else {
                    (lo * lo).min(hi * hi)
                };
                let r0 = sq_max - sq_min;
                let mut l1 = 0.0;
                let mut l2 = 0.0;
                for &h in lags {
                    #[allow(clippy::cast_precision_loss)]
                    let m = (n - h) as f64;
                    let d = if h == 0 { r0 / m } else { 2.0 * r / m };
                    l1 += d;
                    l2 += d * d;
                }
                (l1, libm::sqrt(l2))
            }
        };
        Ok(SummarySensitivity {
            l1,
            l2,
            relation: dpinfer_distances::Neighbouring::ReplaceOne,
        })
    }
}

/// Index of the order statistic x_(⌈p n⌉) (1-based), as a 0-based index.
fn order_index(p: f64, n: usize) -> usize {
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let k = libm::ceil(p * n as f64) as usize;
    k.clamp(1, n) - 1
}
