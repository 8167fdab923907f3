//! The [`BatchSimulator`] trait: one call simulates a block of θ rows, each row drawing only
//! from its own random stream.
//!
//! Samplers that give every proposal its own reproducible stream (public pair generation,
//! rejection ABC and SMC-ABC with per-row [`SimStream`](crate::SimStream)s) hand whole blocks
//! to a `BatchSimulator`, so a vectorised model (numpy, a GPU kernel, SIMD code) pays its
//! per-call overhead once per block instead of once per θ. Every [`Simulator`] is a
//! `BatchSimulator` through a blanket implementation that simulates the rows in order, so row
//! `i` of a block is bit for bit what [`Simulator::simulate`] writes with stream `i`.

use rand_core::Rng;

use crate::error::{SimError, check_len};
use crate::simulator::Simulator;
use crate::stream::SimStream;

/// A stochastic model that simulates `n` rows per call: θ block `n × param_dim` (row-major)
/// and one random stream per row → output block `n × output_dim` plus a per-row flag.
///
/// Contract (what makes batched samplers reproducible):
/// - row `i` reads only `thetas[i·d..(i+1)·d]`, draws only from `streams[i]` and writes only
///   `out[i·k..(i+1)·k]`; the result of a row never depends on the other rows, the block size
///   or the order in which rows are processed;
/// - `ok[i] = false` is the per-row *recoverable rejection* (the batched counterpart of a
///   [`SimError::is_recoverable`] error: θ outside the support, a degenerate draw); the
///   sampler treats that row as a failed simulation and ignores `out`'s row;
/// - an `Err` is fatal for the whole call (the sampler stops with an error).
///
/// The dimension methods have their own names so that they never clash with
/// [`Simulator::param_dim`] / [`Simulator::output_dim`] on types implementing both.
pub trait BatchSimulator {
    /// Length of θ (columns of the θ block).
    fn batch_param_dim(&self) -> usize;

    /// Length of one output row (columns of the output block).
    fn batch_output_dim(&self) -> usize;

    /// Simulates `streams.len()` rows (see the trait docs for the contract).
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] if `thetas`, `out` or `ok` do not have `n · param_dim`,
    /// `n · output_dim` and `n` entries; any fatal model error. Recoverable failures are not
    /// errors: they set `ok[i] = false`.
    fn simulate_batch<R: Rng>(
        &self,
        thetas: &[f64],
        streams: &mut [R],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError>;
}

/// A block simulator that is also told each row's index in the pairs table (for simulators
/// behind a protocol that names rows, e.g. external worker processes). Contract as
/// [`BatchSimulator`]; `rows[i]` is the table index of row `i` of the block, and row `i` must
/// still depend only on `thetas`' row `i` and `streams[i]`. Any `BatchSimulator` is one
/// through [`Rowless`].
pub trait RowSimulator {
    /// dim θ.
    fn row_param_dim(&self) -> usize;
    /// Output values per row.
    fn row_output_dim(&self) -> usize;
    /// Simulates the block (see [`BatchSimulator::simulate_batch`]).
    ///
    /// # Errors
    /// A fatal failure of the whole call.
    fn simulate_rows(
        &self,
        rows: &[u64],
        thetas: &[f64],
        streams: &mut [SimStream],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError>;
}

/// A [`BatchSimulator`] as a [`RowSimulator`] (the row indices are not needed).
#[derive(Clone, Copy, Debug)]
pub struct Rowless<'a, S: ?Sized>(pub &'a S);

impl<S: BatchSimulator + ?Sized> RowSimulator for Rowless<'_, S> {
    fn row_param_dim(&self) -> usize {
        self.0.batch_param_dim()
    }
    fn row_output_dim(&self) -> usize {
        self.0.batch_output_dim()
    }
    fn simulate_rows(
        &self,
        _rows: &[u64],
        thetas: &[f64],
        streams: &mut [SimStream],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        self.0.simulate_batch(thetas, streams, out, ok)
    }
}

/// Checks the block shapes of [`BatchSimulator::simulate_batch`] for `rows` rows.
///
/// # Errors
/// [`SimError::DimensionMismatch`] naming the first buffer of the wrong length.
pub fn check_batch(
    param_dim: usize,
    output_dim: usize,
    rows: usize,
    thetas: &[f64],
    out: &[f64],
    ok: &[bool],
) -> Result<(), SimError> {
    check_len("thetas", rows.saturating_mul(param_dim), thetas.len())?;
    check_len("out", rows.saturating_mul(output_dim), out.len())?;
    check_len("ok", rows, ok.len())
}

/// Every [`Simulator`] simulates a block row by row, in order, with the row's own stream.
impl<S: Simulator + ?Sized> BatchSimulator for S {
    fn batch_param_dim(&self) -> usize {
        self.param_dim()
    }

    fn batch_output_dim(&self) -> usize {
        self.output_dim()
    }

    fn simulate_batch<R: Rng>(
        &self,
        thetas: &[f64],
        streams: &mut [R],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        let (d, k) = (self.param_dim(), self.output_dim());
        check_batch(d, k, streams.len(), thetas, out, ok)?;
        for (i, (rng, flag)) in streams.iter_mut().zip(ok.iter_mut()).enumerate() {
            let th = &thetas[i * d..(i + 1) * d];
            let y = &mut out[i * k..(i + 1) * k];
            *flag = row_ok(self.simulate(th, rng, y))?;
        }
        Ok(())
    }
}

/// `Ok(true)` for success, `Ok(false)` for a recoverable failure, the error otherwise.
fn row_ok(r: Result<(), SimError>) -> Result<bool, SimError> {
    match r {
        Ok(()) => Ok(true),
        Err(e) if e.is_recoverable() => Ok(false),
        Err(e) => Err(e),
    }
}

// The tests build their blocks in `Vec`s.
#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// y = θ + U(0, 1); θ < 0 is a recoverable failure after one draw.
    fn toy() -> Result<impl Simulator, SimError> {
        crate::FnSimulator::new(1, 2, |theta: &[f64], rng: &mut dyn Rng, out: &mut [f64]| {
            let u = crate::dist::uniform01(rng);
            if theta[0] < 0.0 {
                return Err(SimError::OutsideSupport { index: 0 });
            }
            out[0] = theta[0] + u;
            out[1] = crate::dist::uniform01(rng);
            Ok(())
        })
    }

    #[test]
    fn blanket_rows_equal_per_row_simulation() {
        let n = 37_u32;
        let thetas: Vec<f64> = (0..n).map(|i| f64::from(i) * 0.1 - 1.0).collect();
        let mut streams: Vec<SimStream> = (0..n).map(|i| SimStream::new(5, u64::from(i))).collect();
        let mut out = alloc::vec![0.0; 2 * thetas.len()];
        let mut ok = alloc::vec![false; thetas.len()];
        toy()
            .unwrap()
            .simulate_batch(&thetas, &mut streams, &mut out, &mut ok)
            .unwrap();
        for (i, th) in thetas.iter().enumerate() {
            let mut rng = SimStream::new(5, i as u64);
            let mut y = [0.0; 2];
            let r = toy().unwrap().simulate(&[*th], &mut rng, &mut y);
            assert_eq!(r.is_ok(), ok[i], "row {i}");
            if r.is_ok() {
                assert_eq!(y[0].to_bits(), out[2 * i].to_bits());
                assert_eq!(y[1].to_bits(), out[2 * i + 1].to_bits());
            }
            // the batch advanced each stream exactly as the per-row call did
            assert_eq!(rng, streams[i]);
        }
        assert!(ok.iter().any(|&o| o) && ok.iter().any(|&o| !o));
    }

    #[test]
    fn shapes_are_checked() {
        let m = toy().unwrap();
        let mut streams = [SimStream::new(1, 0), SimStream::new(1, 1)];
        let mut ok = [false; 2];
        assert!(matches!(
            m.simulate_batch(&[0.0], &mut streams, &mut [0.0; 4], &mut ok),
            Err(SimError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            m.simulate_batch(&[0.0; 2], &mut streams, &mut [0.0; 3], &mut ok),
            Err(SimError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            m.simulate_batch(&[0.0; 2], &mut streams, &mut [0.0; 4], &mut [false]),
            Err(SimError::DimensionMismatch { .. })
        ));
    }
}
