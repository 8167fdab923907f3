//! Discrepancies between a simulated output and the observed one.
//!
//! Samplers only need `ρ(simulated)` with the observation captured inside the discrepancy.
//! Any `Fn(&[f64]) -> f64` is a [`Discrepancy`]; [`Euclidean`] is the common L2 distance on
//! summaries and also supports exact early rejection ([`PrefixDiscrepancy`]).
//!
//! A NaN distance is treated by every sampler as `+∞` (the proposal is rejected).

use crate::error::AbcError;

/// A distance from a simulated output to the (captured) observed output.
pub trait Discrepancy {
    /// `ρ(simulated, observed)`; may be `+∞`, and NaN is read as `+∞`.
    fn distance(&self, simulated: &[f64]) -> f64;
}

impl<F: Fn(&[f64]) -> f64> Discrepancy for F {
    #[inline]
    fn distance(&self, simulated: &[f64]) -> f64 {
        self(simulated)
    }
}

/// A discrepancy whose value on a full output is never below its value on any prefix, so a
/// run can be abandoned as soon as a prefix already exceeds the tolerance (exact early
/// rejection with [`dpinfer_simulators::IncrementalSimulator`]).
pub trait PrefixDiscrepancy: Discrepancy {
    /// `true` if every completion of `prefix` has distance `> tolerance`.
    fn prefix_exceeds(&self, prefix: &[f64], tolerance: f64) -> bool;
}

/// Euclidean (L2) distance to an observed vector: `ρ(s) = ‖s − s_obs‖₂`.
#[derive(Clone, Copy, Debug)]
pub struct Euclidean<'a> {
    observed: &'a [f64],
}

impl<'a> Euclidean<'a> {
    /// Captures the observed summary.
    ///
    /// # Errors
    ///
    /// [`AbcError::Empty`] for an empty observation, [`AbcError::NonFiniteValue`] for a
    /// non-finite entry.
    pub fn new(observed: &'a [f64]) -> Result<Self, AbcError> {
        if observed.is_empty() {
            return Err(AbcError::Empty { name: "observed" });
        }
        if observed.iter().any(|x| !x.is_finite()) {
            return Err(AbcError::NonFiniteValue { name: "observed" });
        }
        Ok(Self { observed })
    }

    /// The observed vector.
    #[must_use]
    pub fn observed(&self) -> &'a [f64] {
        self.observed
    }

    #[inline]
    fn sq(&self, s: &[f64]) -> f64 {
        let mut acc = 0.0;
        for (a, b) in s.iter().zip(self.observed) {
            let d = a - b;
            acc += d * d;
        }
        acc
    }
}

impl Discrepancy for Euclidean<'_> {
    #[inline]
    fn distance(&self, simulated: &[f64]) -> f64 {
        if simulated.len() != self.observed.len() {
            return f64::INFINITY;
        }
        let d = libm::sqrt(self.sq(simulated));
        if d.is_nan() { f64::INFINITY } else { d }
    }
}

impl PrefixDiscrepancy for Euclidean<'_> {
    #[inline]
    fn prefix_exceeds(&self, prefix: &[f64], tolerance: f64) -> bool {
        let n = prefix.len().min(self.observed.len());
        let sq = self.sq(&prefix[..n]);
        if tolerance.is_nan() || tolerance < 0.0 {
            return true;
        }
        // Compare squared values; a NaN prefix counts as exceeding.
        sq.is_nan() || sq > tolerance * tolerance
    }
}

/// Reads a NaN distance as `+∞`.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
#[inline]
pub(crate) fn sanitize(d: f64) -> f64 {
    if d.is_nan() { f64::INFINITY } else { d }
}

#[cfg(test)]
#[allow(
    clippy::float_cmp,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation
)]
mod tests {
    use super::*;

    #[test]
    fn euclidean_values_and_prefix() {
        let obs = [1.0, 2.0, 3.0];
        let e = Euclidean::new(&obs).unwrap();
        assert!((e.distance(&[1.0, 2.0, 5.0]) - 2.0).abs() < 1e-15);
        assert_eq!(e.distance(&[1.0, f64::NAN, 3.0]), f64::INFINITY);
        assert_eq!(e.distance(&[1.0]), f64::INFINITY);
        assert!(e.prefix_exceeds(&[4.0], 2.9));
        assert!(!e.prefix_exceeds(&[4.0], 3.0));
        assert!(e.prefix_exceeds(&[f64::NAN], 3.0));
        assert!(e.prefix_exceeds(&[1.0], -1.0));
        assert!(Euclidean::new(&[]).is_err());
        assert!(Euclidean::new(&[f64::INFINITY]).is_err());
        let f = |s: &[f64]| s[0].abs();
        assert!((f.distance(&[-2.0]) - 2.0).abs() < 1e-15);
    }
}
