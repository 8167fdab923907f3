//! Discrepancies between a simulated output and the observed one.
//!
//! Samplers only need `ρ(simulated)` with the observation captured inside the discrepancy.
//! Any `Fn(&[f64]) -> f64` is a [`Discrepancy`]; [`Euclidean`] is the common L2 distance on
//! summaries and also supports exact early rejection ([`PrefixDiscrepancy`]).
//!
//! A NaN distance is treated by every sampler as `+∞` (the proposal is rejected).
//!
//! The samplers ask for distances a block of pairs at a time ([`Discrepancy::distances`]):
//! [`Euclidean`] and [`ClippedL2`] split the block's rows over the rayon pool, and the set
//! distances [`RffMmd`] and [`ExactMmd`] (each output a whole simulated data set, compared with
//! a cached observed set) call the batched `mmd_many` of `dpinfer-distances` — with the
//! `parallel` feature; without it they loop. Every batched value is bit-identical to the
//! one-row [`Discrepancy::distance`], for any thread count.
//!
//! ```
//! use dpinfer_abc::discrepancy::{Discrepancy, RffMmd};
//! use dpinfer_distances::{RandomFourierFeatures, RffReference, Rows};
//! let z = [0.3, -1.2, 0.7, 1.9, -0.1]; // public frequencies: D = 10 features
//! let obs = [0.2, 0.4, -0.3, 0.8]; // private observed set, 1-D
//! let reference = RffReference::new(RandomFourierFeatures::new(&z, 1, 1.0)?, Rows::one_dim(&obs)?)?;
//! let rho = RffMmd::new(reference)?;
//! // Two simulated sets of 3 points each, as the outputs of two pairs.
//! let outputs = [0.1, 0.5, -0.2, 3.0, 2.5, 4.0];
//! let mut d = [0.0; 2];
//! rho.distances(&outputs, 3, &mut d);
//! assert_eq!(d[0].to_bits(), rho.distance(&outputs[..3]).to_bits());
//! assert!(d[0] < d[1] && d[1] <= 2.0);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

use dpinfer_distances::{BoundedKernel, ClippedWeightedL2, MmdReference, RffReference, Rows};

use crate::error::AbcError;
#[cfg(feature = "alloc")]
use crate::pairs::PublicPairs;

/// A distance from a simulated output to the (captured) observed output.
pub trait Discrepancy {
    /// `ρ(simulated, observed)`; may be `+∞`, and NaN is read as `+∞`.
    fn distance(&self, simulated: &[f64]) -> f64;

    /// `out[i] = self.distance(row i)` for the `width`-wide rows of `outputs` (e.g. a block
    /// of a pairs table's outputs), for `i < out.len()`: what the samplers call. It must
    /// equal [`Discrepancy::distance`] row by row, bit for bit; the default is that loop, and
    /// types backed by a batched or multi-threaded kernel override it. Entries of `out`
    /// without a whole row in `outputs`, and all of them for `width == 0`, are set to `+∞`.
    fn distances(&self, outputs: &[f64], width: usize, out: &mut [f64]) {
        let n = whole_rows(outputs, width, out);
        for (o, y) in out[..n].iter_mut().zip(outputs.chunks_exact(width.max(1))) {
            *o = self.distance(y);
        }
    }
}

/// Sets `out[n..]` to `+∞` where `n` is the number of whole `width`-wide rows of `outputs`
/// that fit in `out`, and returns `n`.
fn whole_rows(outputs: &[f64], width: usize, out: &mut [f64]) -> usize {
    let n = outputs
        .len()
        .checked_div(width)
        .map_or(0, |rows| rows.min(out.len()));
    for o in &mut out[n..] {
        *o = f64::INFINITY;
    }
    n
}

/// `out[i] = f(row i)` over the rayon pool in work items of 256 rows (`parallel`), or
/// in a loop; either way each value is exactly `f` of its row.
fn rows_each<F: Fn(&[f64]) -> f64 + Sync>(outputs: &[f64], width: usize, out: &mut [f64], f: F) {
    let n = whole_rows(outputs, width, out);
    if n == 0 {
        return;
    }
    let (out, outputs) = (&mut out[..n], &outputs[..n * width]);
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        const ROWS: usize = 256;
        out.par_chunks_mut(ROWS)
            .zip(outputs.par_chunks(ROWS * width))
            .for_each(|(o, y)| {
                for (oi, yi) in o.iter_mut().zip(y.chunks_exact(width)) {
                    *oi = f(yi);
                }
            });
    }
    #[cfg(not(feature = "parallel"))]
    for (o, y) in out.iter_mut().zip(outputs.chunks_exact(width)) {
        *o = f(y);
    }
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

    /// On the rayon pool with `parallel` (same bits as the row-by-row loop).
    fn distances(&self, outputs: &[f64], width: usize, out: &mut [f64]) {
        rows_each(outputs, width, out, |y| self.distance(y));
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

/// The clipped weighted L2 distance `min(√(Σ_k w_k (s_k − s*_k)²), C)` of
/// [`ClippedWeightedL2`] to an observed summary `s*` (Park, Vinaroz & Jitkrittum 2021, §6.2);
/// a summary of another length, or an error of the distance, reads as `+∞`.
#[derive(Clone, Copy, Debug)]
pub struct ClippedL2<'a> {
    l2: ClippedWeightedL2<'a>,
    observed: &'a [f64],
}

impl<'a> ClippedL2<'a> {
    /// Captures the observed summary.
    ///
    /// # Errors
    ///
    /// [`AbcError::LengthMismatch`] if `observed` does not have one value per weight;
    /// [`AbcError::NonFiniteValue`] for a non-finite observed value.
    pub fn new(l2: ClippedWeightedL2<'a>, observed: &'a [f64]) -> Result<Self, AbcError> {
        let k = l2.weighted_l2().len();
        crate::error::check_len("observed", k, observed.len())?;
        if observed.iter().any(|x| !x.is_finite()) {
            return Err(AbcError::NonFiniteValue { name: "observed" });
        }
        Ok(Self { l2, observed })
    }
}

impl Discrepancy for ClippedL2<'_> {
    #[inline]
    fn distance(&self, simulated: &[f64]) -> f64 {
        self.l2
            .distance(simulated, self.observed)
            .unwrap_or(f64::INFINITY)
    }

    /// On the rayon pool with `parallel` (same bits as the row-by-row loop).
    fn distances(&self, outputs: &[f64], width: usize, out: &mut [f64]) {
        rows_each(outputs, width, out, |y| self.distance(y));
    }
}

/// The random-feature MMD `‖μ̂(Y*) − μ̂(Y)‖` ([`RffReference::mmd`], in `[0, 2]`; Park,
/// Vinaroz & Jitkrittum 2021, §2.1 and Lemma 1: sensitivity `2/N` under replace-one on `Y*`)
/// from each simulated data set — an output of `rows × d` values, row-major, `d` the
/// features' row dimension — to the cached observed embedding. An output that is not whole
/// rows reads as `+∞`. Batched: `RffReference::mmd_many` with `parallel`.
#[derive(Clone, Debug)]
pub struct RffMmd<'f, E> {
    reference: RffReference<'f, E>,
}

impl<'f, E: AsRef<[f64]>> RffMmd<'f, E> {
    /// Wraps the cached observed side.
    ///
    /// # Errors
    ///
    /// None at present (the reference was validated when it was built); the `Result`
    /// keeps the constructors of the crate's discrepancies alike.
    pub fn new(reference: RffReference<'f, E>) -> Result<Self, AbcError> {
        Ok(Self { reference })
    }

    /// The cached observed side.
    #[must_use]
    pub fn reference(&self) -> &RffReference<'f, E> {
        &self.reference
    }
}

impl<E: AsRef<[f64]> + Sync> Discrepancy for RffMmd<'_, E> {
    fn distance(&self, simulated: &[f64]) -> f64 {
        Rows::new(simulated, self.reference.features().dim())
            .and_then(|y| self.reference.mmd(y))
            .unwrap_or(f64::INFINITY)
    }

    fn distances(&self, outputs: &[f64], width: usize, out: &mut [f64]) {
        #[cfg(feature = "parallel")]
        if sets_of(
            outputs,
            width,
            self.reference.features().dim(),
            out,
            |sets, o| self.reference.mmd_many(sets, o).is_ok(),
        )
        .is_some()
        {
            return;
        }
        let n = whole_rows(outputs, width, out);
        for (o, y) in out[..n].iter_mut().zip(outputs.chunks_exact(width.max(1))) {
            *o = self.distance(y);
        }
    }
}

/// The exact biased MMD `√MMD²_b(Y*, Y)` with a bounded kernel ([`MmdReference::mmd`], in
/// `[0, 2√B_k]`; Park, Vinaroz & Jitkrittum 2021, §2.1 and Lemma 1: sensitivity `2√B_k/N`
/// under replace-one on `Y*`) from each simulated data set — an output of `rows × d` values,
/// row-major, `d` the observed rows' dimension — to the cached observed Gram sums. An output
/// that is not whole rows reads as `+∞`. Batched: `MmdReference::mmd_many` with
/// `parallel`.
#[derive(Clone, Copy, Debug)]
pub struct ExactMmd<'a, K> {
    reference: MmdReference<'a, K>,
}

impl<'a, K: BoundedKernel> ExactMmd<'a, K> {
    /// Wraps the cached observed side.
    ///
    /// # Errors
    ///
    /// None at present (see [`RffMmd::new`]).
    pub fn new(reference: MmdReference<'a, K>) -> Result<Self, AbcError> {
        Ok(Self { reference })
    }

    /// The cached observed side.
    #[must_use]
    pub fn reference(&self) -> &MmdReference<'a, K> {
        &self.reference
    }
}

impl<K: BoundedKernel + Sync> Discrepancy for ExactMmd<'_, K> {
    fn distance(&self, simulated: &[f64]) -> f64 {
        Rows::new(simulated, self.reference.dim())
            .and_then(|y| self.reference.mmd(y))
            .unwrap_or(f64::INFINITY)
    }

    fn distances(&self, outputs: &[f64], width: usize, out: &mut [f64]) {
        #[cfg(feature = "parallel")]
        if sets_of(outputs, width, self.reference.dim(), out, |sets, o| {
            self.reference.mmd_many(sets, o).is_ok()
        })
        .is_some()
        {
            return;
        }
        let n = whole_rows(outputs, width, out);
        for (o, y) in out[..n].iter_mut().zip(outputs.chunks_exact(width.max(1))) {
            *o = self.distance(y);
        }
    }
}

/// Splits the whole `width`-wide rows of `outputs` (at most `out.len()`) into data sets of
/// `dim`-wide rows and runs the batched `many(sets, out)`; `None` (nothing promised about
/// `out`) if a set is not whole rows or `many` fails, so the caller falls back to the loop.
#[cfg(feature = "parallel")]
fn sets_of(
    outputs: &[f64],
    width: usize,
    dim: usize,
    out: &mut [f64],
    many: impl FnOnce(&[Rows<'_>], &mut [f64]) -> bool,
) -> Option<usize> {
    let n = whole_rows(outputs, width, out);
    let sets: Option<alloc::vec::Vec<Rows<'_>>> = outputs[..n * width]
        .chunks_exact(width.max(1))
        .map(|y| Rows::new(y, dim).ok())
        .collect();
    let sets = sets?;
    many(&sets, &mut out[..n]).then_some(n)
}

/// Distances of a pairs table's rows, computed ahead a block at a time through
/// [`Discrepancy::distances`] (blocks of 64 pairs, doubling up to 8192): the one-pass private
/// samplers read pair `t`'s distance from here. Distances of pairs after a sampler's
/// stopping time may be computed but are never used or released.
#[cfg(feature = "alloc")]
#[derive(Debug, Default)]
pub(crate) struct Ahead {
    start: usize,
    buf: alloc::vec::Vec<f64>,
}

#[cfg(feature = "alloc")]
impl Ahead {
    const FIRST: usize = 64;
    const MAX: usize = 8192;

    /// `ρ` of pair `t` (NaN read as `+∞`; `+∞` for `t` out of range).
    pub(crate) fn get<D: Discrepancy + ?Sized>(
        &mut self,
        dist: &D,
        pairs: &PublicPairs,
        t: usize,
    ) -> f64 {
        if t < self.start || t - self.start >= self.buf.len() {
            let w = pairs.output_dim();
            let len = (self.buf.len() * 2)
                .clamp(Self::FIRST, Self::MAX)
                .min(pairs.len().saturating_sub(t));
            let Some(rows) = pairs.outputs().get(t * w..(t + len) * w) else {
                return f64::INFINITY;
            };
            self.buf.clear();
            self.buf.resize(len, f64::INFINITY);
            dist.distances(rows, w, &mut self.buf);
            self.start = t;
        }
        self.buf
            .get(t - self.start)
            .map_or(f64::INFINITY, |&d| sanitize(d))
    }
}

/// Reads a NaN distance as `+∞`.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
#[inline]
pub(crate) fn sanitize(d: f64) -> f64 {
    if d.is_nan() { f64::INFINITY } else { d }
}

#[cfg(test)]
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
