//! The modeler's public parameter/pseudo-data pairs `{(θ_t, Y_t)}` of the two-party ABCDP
//! workflow (Park, Vinaroz & Jitkrittum 2021, §3): generated here from a prior and a simulator
//! with one reproducible [`SimStream`](dpinfer_simulators::SimStream) per pair, or loaded from
//! elsewhere (e.g. merged shards).
//!
//! Everything in a [`PublicPairs`] is public (an adversary may see it); the private step only
//! reads it.

use alloc::vec::Vec;

use dpinfer_simulators::{BatchSimulator, Prior};

use crate::batch::{Gather, row_streams, simulate_rows};
use crate::error::AbcError;

/// Stream domain of [`PublicPairs::generate`].
pub const PAIRS_DOMAIN: u64 = 0x0050_4149_5253; // "PAIRS"

/// Rows per [`BatchSimulator::simulate_batch`] call of [`PublicPairs::generate`] (the rows are
/// independent, so the block size never changes a number).
pub const PAIRS_BLOCK: usize = 4096;

/// Rows per work item of `PublicPairs::generate_parallel` (feature `parallel`).
#[cfg(feature = "parallel")]
const PAR_BLOCK: usize = 256;

/// `T` public pairs `(θ_t, Y_t)`, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct PublicPairs {
    theta_dim: usize,
    output_dim: usize,
    thetas: Vec<f64>,
    outputs: Vec<f64>,
}

impl PublicPairs {
    /// Wraps loaded pairs.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidCount`] for a zero dimension, [`AbcError::Empty`] for no pairs,
    /// [`AbcError::LengthMismatch`] if the buffers disagree with the dimensions or each other,
    /// [`AbcError::NonFiniteValue`] for a non-finite θ.
    pub fn from_parts(
        theta_dim: usize,
        output_dim: usize,
        thetas: Vec<f64>,
        outputs: Vec<f64>,
    ) -> Result<Self, AbcError> {
        if theta_dim == 0 {
            return Err(AbcError::InvalidCount {
                name: "theta_dim",
                value: 0,
            });
        }
        if output_dim == 0 {
            return Err(AbcError::InvalidCount {
                name: "output_dim",
                value: 0,
            });
        }
        if thetas.is_empty() {
            return Err(AbcError::Empty { name: "thetas" });
        }
        if !thetas.len().is_multiple_of(theta_dim) {
            return Err(AbcError::LengthMismatch {
                name: "thetas",
                expected: thetas.len() / theta_dim * theta_dim,
                found: thetas.len(),
            });
        }
        let t = thetas.len() / theta_dim;
        if t.checked_mul(output_dim) != Some(outputs.len()) {
            return Err(AbcError::LengthMismatch {
                name: "outputs",
                expected: t.saturating_mul(output_dim),
                found: outputs.len(),
            });
        }
        if thetas.iter().any(|x| !x.is_finite()) {
            return Err(AbcError::NonFiniteValue { name: "thetas" });
        }
        Ok(Self {
            theta_dim,
            output_dim,
            thetas,
            outputs,
        })
    }

    /// Generates `t` pairs: pair `i` uses `SimStream::with_domain(seed, PAIRS_DOMAIN, i)` for
    /// both its prior draw and its simulation, so any subset of pairs can be regenerated (or
    /// computed on another machine) bit for bit. A recoverable simulator failure redraws θ
    /// from the same stream (up to 1000 times).
    ///
    /// The simulator is called on blocks of up to [`PAIRS_BLOCK`] rows
    /// ([`BatchSimulator`]; every `Simulator` is one, simulating the rows in order), and rows
    /// that failed recoverably are re-drawn and re-simulated together; row `i` is bit for bit
    /// what the per-row loop above gives.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidCount`] for `t == 0` or a zero output dimension,
    /// [`AbcError::LengthMismatch`] if prior and simulator disagree on dim θ,
    /// [`AbcError::Model`] for a fatal failure or 1000 consecutive recoverable ones.
    pub fn generate<P: Prior, S: BatchSimulator + ?Sized>(
        prior: &P,
        sim: &S,
        t: usize,
        seed: u64,
    ) -> Result<Self, AbcError> {
        let (d, od) = check_generate(prior, sim, t)?;
        let mut thetas = alloc::vec![0.0; t * d];
        let mut outputs = alloc::vec![0.0; t * od];
        let mut g = Gather::default();
        for (b, (th, out)) in thetas
            .chunks_mut(PAIRS_BLOCK * d)
            .zip(outputs.chunks_mut(PAIRS_BLOCK * od))
            .enumerate()
        {
            generate_block(prior, sim, seed, b * PAIRS_BLOCK, th, out, &mut g)?;
        }
        Self::from_parts(d, od, thetas, outputs)
    }

    /// [`PublicPairs::generate`] on the current rayon thread pool (blocks of 256 rows;
    /// choose the thread count with `rayon::ThreadPool::install`). Bit-identical to
    /// `generate` for every thread count: each row has its own stream.
    ///
    /// # Errors
    ///
    /// As [`PublicPairs::generate`].
    #[cfg(feature = "parallel")]
    pub fn generate_parallel<P, S>(
        prior: &P,
        sim: &S,
        t: usize,
        seed: u64,
    ) -> Result<Self, AbcError>
    where
        P: Prior + Sync,
        S: BatchSimulator + Sync + ?Sized,
    {
        use rayon::prelude::*;
        let (d, od) = check_generate(prior, sim, t)?;
        let mut thetas = alloc::vec![0.0; t * d];
        let mut outputs = alloc::vec![0.0; t * od];
        thetas
            .par_chunks_mut(PAR_BLOCK * d)
            .zip(outputs.par_chunks_mut(PAR_BLOCK * od))
            .enumerate()
            .try_for_each_init(Gather::default, |g, (b, (th, out))| {
                generate_block(prior, sim, seed, b * PAR_BLOCK, th, out, g)
            })?;
        Self::from_parts(d, od, thetas, outputs)
    }

    /// Number of pairs `T`.
    #[must_use]
    pub fn len(&self) -> usize {
        self.thetas.len() / self.theta_dim
    }

    /// `true` if there are no pairs (never, by construction).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.thetas.is_empty()
    }

    /// Dimension of θ.
    #[must_use]
    pub fn theta_dim(&self) -> usize {
        self.theta_dim
    }

    /// Length of each pseudo-data/summary vector.
    #[must_use]
    pub fn output_dim(&self) -> usize {
        self.output_dim
    }

    /// θ_t (empty slice for `t` out of range).
    #[must_use]
    pub fn theta(&self, t: usize) -> &[f64] {
        row(&self.thetas, t, self.theta_dim)
    }

    /// Y_t (empty slice for `t` out of range).
    #[must_use]
    pub fn output(&self, t: usize) -> &[f64] {
        row(&self.outputs, t, self.output_dim)
    }

    /// All θs, row-major.
    #[must_use]
    pub fn thetas(&self) -> &[f64] {
        &self.thetas
    }

    /// All outputs, row-major.
    #[must_use]
    pub fn outputs(&self) -> &[f64] {
        &self.outputs
    }
}

/// Validates the arguments of [`PublicPairs::generate`]; returns `(dim θ, output dim)`.
fn check_generate<P: Prior, S: BatchSimulator + ?Sized>(
    prior: &P,
    sim: &S,
    t: usize,
) -> Result<(usize, usize), AbcError> {
    if t == 0 {
        return Err(AbcError::InvalidCount {
            name: "t",
            value: 0,
        });
    }
    let d = prior.dim();
    if d == 0 || sim.batch_param_dim() != d {
        return Err(AbcError::LengthMismatch {
            name: "simulator param_dim",
            expected: d,
            found: sim.batch_param_dim(),
        });
    }
    let od = sim.batch_output_dim();
    if od == 0 {
        return Err(AbcError::InvalidCount {
            name: "output_dim",
            value: 0,
        });
    }
    Ok((d, od))
}

/// Rows `first..first + n` of [`PublicPairs::generate`] into `thetas` (`n·d`) and `out`
/// (`n·k`): every pending row draws θ from its stream, then the pending rows are simulated in
/// one batch; rows that failed recoverably stay pending (at most 1000 rounds).
fn generate_block<P: Prior, S: BatchSimulator + ?Sized>(
    prior: &P,
    sim: &S,
    seed: u64,
    first: usize,
    thetas: &mut [f64],
    out: &mut [f64],
    g: &mut Gather,
) -> Result<(), AbcError> {
    let d = prior.dim();
    let k = sim.batch_output_dim();
    let n = thetas.len() / d;
    let mut streams = row_streams(seed, PAIRS_DOMAIN, first as u64, n);
    let mut ok = alloc::vec![false; n];
    let mut pending: Vec<usize> = (0..n).collect();
    for _ in 0..1000 {
        for &i in &pending {
            prior
                .sample(&mut streams[i], &mut thetas[i * d..(i + 1) * d])
                .map_err(|_| AbcError::Model)?;
        }
        simulate_rows(sim, d, k, thetas, &mut streams, out, &mut ok, &pending, g)?;
        pending.retain(|&i| !ok[i]);
        if pending.is_empty() {
            return Ok(());
        }
    }
    Err(AbcError::Model)
}

/// Row `t` of a row-major buffer with rows of length `d` (empty if out of range; no overflow).
fn row(buf: &[f64], t: usize, d: usize) -> &[f64] {
    match (
        t.checked_mul(d),
        t.checked_add(1).and_then(|u| u.checked_mul(d)),
    ) {
        (Some(a), Some(b)) => buf.get(a..b).unwrap_or(&[]),
        _ => &[],
    }
}
