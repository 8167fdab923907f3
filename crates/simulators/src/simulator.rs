//! The [`Simulator`] and [`IncrementalSimulator`] traits.

use crate::error::{SimError, check_len};
use rand_core::Rng;

/// A stochastic model: θ and public simulation randomness → an output vector (raw pseudo-data or
/// a summary) written into a caller buffer. The interface needs no allocation; all models
/// except the tuberculosis model (whose population is unbounded) allocate nothing per call.
///
/// Failures follow nuts-rs: [`SimError::is_recoverable`] errors (degenerate draw, θ outside the
/// model's support) mean "reject this θ"; all others are fatal.
pub trait Simulator {
    /// Length of θ.
    fn param_dim(&self) -> usize;

    /// Length of the output vector.
    fn output_dim(&self) -> usize;

    /// Simulates once at θ into `out` (length [`output_dim`](Simulator::output_dim)).
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] for wrong slice lengths (fatal); recoverable
    /// [`SimError::OutsideSupport`] / [`SimError::Degenerate`] for θ the model cannot simulate.
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError>;
}

/// `Simulator` for a pointer to a simulator `S` (`&S`, `Arc<S>`): every method forwards to
/// the pointee (a macro: one impl body for several pointer types).
macro_rules! forward_simulator {
    ($(#[$attr:meta])* $ptr:ty) => {
        $(#[$attr])*
        impl<S: Simulator + ?Sized> Simulator for $ptr {
            fn param_dim(&self) -> usize {
                (**self).param_dim()
            }
            fn output_dim(&self) -> usize {
                (**self).output_dim()
            }
            fn simulate<R: Rng + ?Sized>(
                &self,
                theta: &[f64],
                rng: &mut R,
                out: &mut [f64],
            ) -> Result<(), SimError> {
                (**self).simulate(theta, rng, out)
            }
        }
    };
}

forward_simulator!(&S);
forward_simulator!(
    /// A shared simulator (`alloc`, on targets with pointer-sized atomics) is a simulator.
    #[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
    alloc::sync::Arc<S>
);

/// How an incremental run ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// All blocks were simulated; the output buffer is complete.
    Completed,
    /// The caller's stop rule fired after `blocks` blocks; only the first
    /// `blocks * block_len` output values are written.
    Abandoned {
        /// Number of observation blocks simulated.
        blocks: usize,
    },
}

/// A simulator whose output is a sequence of `n_blocks` observation blocks (e.g. the state at
/// successive observation times), each `block_len` values long, that can be produced one block
/// at a time. A sampler can then stop a run as soon as a partial distance already exceeds its
/// tolerance — *exact* early rejection, since distances that are sums over blocks only grow.
///
/// Contract: driving [`begin`](IncrementalSimulator::begin) and then
/// [`next_block`](IncrementalSimulator::next_block) `n_blocks` times with the same RNG writes
/// exactly (bit for bit) what [`Simulator::simulate`] writes, consuming the same random numbers.
pub trait IncrementalSimulator: Simulator {
    /// State of one trajectory between blocks (small, `Copy`-able, no allocation).
    type Run;

    /// Number of observation blocks; `n_blocks() * block_len() == output_dim()`.
    fn n_blocks(&self) -> usize;

    /// Values per observation block.
    fn block_len(&self) -> usize;

    /// Starts a trajectory at θ.
    ///
    /// # Errors
    /// As [`Simulator::simulate`].
    fn begin(&self, theta: &[f64]) -> Result<Self::Run, SimError>;

    /// Simulates up to the next observation time and writes its block (`block_len` values).
    ///
    /// # Errors
    /// [`SimError::Exhausted`] after `n_blocks` blocks; [`SimError::DimensionMismatch`] for a
    /// wrong `out` length; recoverable errors as in [`Simulator::simulate`].
    fn next_block<R: Rng + ?Sized>(
        &self,
        run: &mut Self::Run,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError>;

    /// Runs block by block into `out` (length `output_dim`), calling `stop(blocks_done,
    /// written_prefix)` after each block but the last; as soon as it returns `true` the run is
    /// abandoned. With a `stop` that never fires, the output equals [`Simulator::simulate`]'s.
    ///
    /// # Errors
    /// As [`next_block`](IncrementalSimulator::next_block).
    fn simulate_until<R, F>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
        mut stop: F,
    ) -> Result<RunEnd, SimError>
    where
        R: Rng + ?Sized,
        F: FnMut(usize, &[f64]) -> bool,
    {
        check_len("out", self.output_dim(), out.len())?;
        let bl = self.block_len();
        check_len(
            "n_blocks * block_len",
            self.output_dim(),
            self.n_blocks().saturating_mul(bl),
        )?;
        let mut run = self.begin(theta)?;
        for b in 0..self.n_blocks() {
            let (_, rest) = out.split_at_mut(b * bl);
            let (block, _) = rest.split_at_mut(bl);
            self.next_block(&mut run, rng, block)?;
            if b + 1 < self.n_blocks() && stop(b + 1, &out[..(b + 1) * bl]) {
                return Ok(RunEnd::Abandoned { blocks: b + 1 });
            }
        }
        Ok(RunEnd::Completed)
    }
}

/// `n` independent data sets at one θ: [`Simulator::simulate`] runs the inner simulator `n`
/// times in a row on the caller's stream and writes the outputs one after the other
/// (`n · output_dim` values, data set `j` at `j · output_dim`). The first data set is what
/// the inner simulator alone writes from the same stream, bit for bit.
///
/// This is the design of ABCDP's tuberculosis experiment (Park, Vinaroz & Jitkrittum 2021,
/// §6.3: "two sets of observations y* (n = 100 and n = 1000)"): the private data are `n`
/// independent data sets, each simulated data set `j` is compared with observed data set `j`,
/// and the mean of the `n` clipped distances has sensitivity `C/n` under replace-one of one
/// whole data set (`dpinfer_distances::ClippedWeightedL2::mean_sensitivity`).
///
/// A recoverable failure of any of the `n` simulations is returned as is, so a sampler
/// rejects θ (the pairs table redraws it from the same stream): θ enters the table only if
/// all `n` simulations succeed, with probability `(1 − p(θ))ⁿ` for a per-simulation failure
/// probability `p(θ)` — the same rule as for one data set, applied to the collection.
///
/// ```
/// use dpinfer_simulators::models::gaussian::GaussianMean;
/// use dpinfer_simulators::{Replicates, SimStream, Simulator};
/// let one = GaussianMean::new(3, 1.0, 0.0, 10.0)?;
/// let four = Replicates::new(&one, 4)?;
/// assert_eq!(four.output_dim(), 12);
/// let mut all = [0.0; 12];
/// four.simulate(&[1.0], &mut SimStream::new(7, 0), &mut all)?;
/// let mut first = [0.0; 3];
/// one.simulate(&[1.0], &mut SimStream::new(7, 0), &mut first)?;
/// assert_eq!(all[..3], first);
/// # Ok::<(), dpinfer_simulators::SimError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Replicates<S> {
    inner: S,
    n: usize,
}

impl<S: Simulator> Replicates<S> {
    /// `n` data sets of `inner` per simulation.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] (name `"datasets"`) for `n = 0` or when `n · output_dim`
    /// overflows `usize`.
    pub fn new(inner: S, n: usize) -> Result<Self, SimError> {
        if n == 0 || inner.output_dim().checked_mul(n).is_none() {
            return Err(SimError::InvalidSize {
                name: "datasets",
                value: u64::try_from(n).unwrap_or(u64::MAX),
            });
        }
        Ok(Self { inner, n })
    }

    /// `new` without its checks, for a caller that made them (`models::registry`).
    #[cfg(feature = "alloc")]
    pub(crate) const fn checked_before(inner: S, n: usize) -> Self {
        Self { inner, n }
    }

    /// The number of data sets `n`.
    #[must_use]
    pub const fn datasets(&self) -> usize {
        self.n
    }

    /// The simulator of one data set.
    #[must_use]
    pub const fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: Simulator> Simulator for Replicates<S> {
    fn param_dim(&self) -> usize {
        self.inner.param_dim()
    }
    fn output_dim(&self) -> usize {
        // Checked in `new`.
        self.inner.output_dim().saturating_mul(self.n)
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        check_len("out", self.output_dim(), out.len())?;
        let d = self.inner.output_dim();
        if d == 0 {
            return Ok(());
        }
        for set in out.chunks_exact_mut(d) {
            self.inner.simulate(theta, rng, set)?;
        }
        Ok(())
    }
}
