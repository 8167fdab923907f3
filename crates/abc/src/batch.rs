//! Block simulation with one reproducible stream per row, shared by the batched samplers
//! (public pairs, rejection ABC, SMC-ABC): the rows still pending in a block are gathered
//! into one [`BatchSimulator::simulate_batch`] call and scattered back, so every row sees
//! exactly the draws of the per-row path whatever the block size or thread count.

use alloc::vec::Vec;

use dpinfer_simulators::{BatchSimulator, SimError, SimStream};

use crate::error::AbcError;

/// Scratch buffers of [`simulate_rows`] (reused across rounds).
#[derive(Debug, Default)]
pub(crate) struct Gather {
    thetas: Vec<f64>,
    streams: Vec<SimStream>,
    out: Vec<f64>,
    ok: Vec<bool>,
}

/// Simulates rows `pending` (increasing indices into the block) of a block of `d`-wide θ rows
/// and `k`-wide outputs, each with its own stream; sets `ok[i]` for those rows.
///
/// # Errors
/// [`AbcError::Model`] with the simulator's error for a fatal failure.
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_rows<S: BatchSimulator + ?Sized>(
    sim: &S,
    d: usize,
    k: usize,
    thetas: &[f64],
    streams: &mut [SimStream],
    out: &mut [f64],
    ok: &mut [bool],
    pending: &[usize],
    g: &mut Gather,
) -> Result<(), AbcError> {
    gather_call(
        d,
        k,
        thetas,
        streams,
        out,
        ok,
        pending,
        g,
        |th, st, o, okk| sim.simulate_batch(th, st, o, okk),
    )
}

/// [`simulate_rows`] with any block call `f(thetas, streams, out, ok)` on the gathered
/// pending rows (in `pending` order).
///
/// # Errors
/// [`AbcError::Model`] with `f`'s error if it fails.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_call<F>(
    d: usize,
    k: usize,
    thetas: &[f64],
    streams: &mut [SimStream],
    out: &mut [f64],
    ok: &mut [bool],
    pending: &[usize],
    g: &mut Gather,
    f: F,
) -> Result<(), AbcError>
where
    F: FnOnce(&[f64], &mut [SimStream], &mut [f64], &mut [bool]) -> Result<(), SimError>,
{
    if pending.is_empty() {
        return Ok(());
    }
    if pending.len() == streams.len() {
        // every row, in order: no gathering
        return f(thetas, streams, out, ok).map_err(AbcError::Model);
    }
    let m = pending.len();
    g.thetas.clear();
    g.streams.clear();
    for &i in pending {
        g.thetas.extend_from_slice(&thetas[i * d..(i + 1) * d]);
        g.streams.push(streams[i].clone());
    }
    g.out.clear();
    g.out.resize(m * k, 0.0);
    g.ok.clear();
    g.ok.resize(m, false);
    f(&g.thetas, &mut g.streams, &mut g.out, &mut g.ok).map_err(AbcError::Model)?;
    for (j, &i) in pending.iter().enumerate() {
        out[i * k..(i + 1) * k].copy_from_slice(&g.out[j * k..(j + 1) * k]);
        ok[i] = g.ok[j];
        streams[i] = g.streams[j].clone();
    }
    Ok(())
}

/// Per-row streams `SimStream::with_domain(seed, domain, first + i)` for `i < n`.
pub(crate) fn row_streams(seed: u64, domain: u64, first: u64, n: usize) -> Vec<SimStream> {
    (0..n as u64)
        .map(|i| SimStream::with_domain(seed, domain, first.wrapping_add(i)))
        .collect()
}

/// Values (θ and output, f64) one block may hold: 2²⁴ ≈ 128 MiB.
const MAX_BLOCK_VALUES: usize = 1 << 24;

/// The block size actually used for a requested one: at least 1 row, and at most as many rows
/// as keep the block's θ and output buffers under [`MAX_BLOCK_VALUES`]. Rows are independent,
/// so this never changes a number; it keeps a huge `batch` from exhausting memory.
pub(crate) fn block_rows(requested: usize, d: usize, k: usize) -> usize {
    let cap = (MAX_BLOCK_VALUES / d.saturating_add(k).saturating_add(1)).max(1);
    requested.clamp(1, cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_rows_is_at_least_one_and_memory_capped() {
        assert_eq!(block_rows(0, 3, 4), 1);
        assert_eq!(block_rows(4096, 3, 4), 4096);
        assert_eq!(block_rows(usize::MAX, 3, 4), MAX_BLOCK_VALUES / 8);
        assert_eq!(block_rows(usize::MAX, usize::MAX, usize::MAX), 1);
    }
}
