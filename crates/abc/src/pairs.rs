//! The modeler's public parameter/pseudo-data pairs `{(θ_t, Y_t)}` of the two-party ABCDP
//! workflow (Park, Vinaroz & Jitkrittum 2021, §3): generated here from a prior and a simulator
//! with one reproducible [`SimStream`] per pair, or loaded from
//! elsewhere (e.g. merged shards).
//!
//! Everything in a [`PublicPairs`] is public (an adversary may see it); the private step only
//! reads it.

use alloc::vec::Vec;
use core::ops::Range;

use dpinfer_simulators::{BatchSimulator, Prior, RowSimulator, Rowless, SimStream};

use crate::batch::{Gather, gather_call, row_streams};
use crate::error::AbcError;

/// Stream domain of [`PublicPairs::generate`] (generation 0 of [`pairs_domain`]).
pub const PAIRS_DOMAIN: u64 = 0x0050_4149_5253; // "PAIRS"

/// Stream domain of the rows of generation `g` of a pairs table: [`PAIRS_DOMAIN`] for
/// generation 0 (the one-pass samplers' table, [`PublicPairs::generate`]), and
/// `PAIRS_DOMAIN + g·2⁴⁸` for the proposals of population Monte Carlo generation `g ≥ 1`
/// ([`crate::pmc`]); distinct for every `g < 2¹⁶` and from every other domain of the crate.
#[must_use]
pub const fn pairs_domain(generation: u32) -> u64 {
    PAIRS_DOMAIN.wrapping_add((generation as u64) << 48)
}

/// Where the θ of each row of a pairs table comes from, and so the table's stream domain
/// ([`pairs_domain`]).
#[derive(Clone, Copy, Debug)]
pub enum Proposal<'a, P: ?Sized> {
    /// θ from the prior: the one-pass table and PMC generation 0 (domain [`PAIRS_DOMAIN`]).
    Prior(&'a P),
    /// θ from the perturbation kernel of population `g − 1`, redrawn while outside the
    /// prior's support: PMC generation `g ≥ 1` ([`crate::pmc`]).
    Kernel {
        /// The prior (support and density).
        prior: &'a P,
        /// The kernel of the previous population.
        kernel: &'a crate::pmc::PmcKernel,
    },
}

impl<P: Prior + ?Sized> Proposal<'_, P> {
    /// The generation whose rows this proposal draws.
    #[must_use]
    pub fn generation(&self) -> u32 {
        match self {
            Self::Prior(_) => 0,
            Self::Kernel { kernel, .. } => kernel.generation().saturating_add(1),
        }
    }

    fn dim(&self) -> usize {
        match self {
            Self::Prior(p) | Self::Kernel { prior: p, .. } => p.dim(),
        }
    }

    fn draw(&self, rng: &mut SimStream, theta: &mut [f64]) -> Result<(), AbcError> {
        match self {
            Self::Prior(p) => p.sample(rng, theta).map_err(AbcError::Model),
            Self::Kernel { prior, kernel } => kernel.draw_in_support(*prior, rng, theta),
        }
    }
}

/// θ drawn at most for one row of a pairs table: after this many consecutive recoverable
/// simulator failures of one row, generation stops with [`AbcError::Redraws`].
pub const MAX_REDRAWS: u64 = 1000;

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
    /// from the same stream (up to [`MAX_REDRAWS`] times). Equal to [`PublicPairs::generate_range`]
    /// over `0..t`.
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
    /// [`AbcError::Model`] with the prior's or simulator's error for a fatal failure,
    /// [`AbcError::Redraws`] for [`MAX_REDRAWS`] consecutive recoverable ones of one row.
    pub fn generate<P: Prior + ?Sized, S: BatchSimulator + ?Sized>(
        prior: &P,
        sim: &S,
        t: usize,
        seed: u64,
    ) -> Result<Self, AbcError> {
        Self::generate_range(prior, sim, seed, 0..t as u64)
    }

    /// Rows `rows` of the table [`PublicPairs::generate`] makes with `seed` — a **shard**:
    /// row `j` is drawn from `SimStream::with_domain(seed, PAIRS_DOMAIN, j)` whatever the
    /// range, so shards computed anywhere and concatenated in row order with
    /// [`PublicPairs::concat`] are bit for bit the single-process table.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidCount`] for an empty range (`rows.start >= rows.end`) or one whose
    /// table does not fit in memory, otherwise as [`PublicPairs::generate`].
    pub fn generate_range<P: Prior + ?Sized, S: BatchSimulator + ?Sized>(
        prior: &P,
        sim: &S,
        seed: u64,
        rows: Range<u64>,
    ) -> Result<Self, AbcError> {
        Self::simulate(&Proposal::Prior(prior), &Rowless(sim), seed, rows)
    }

    /// Rows `rows` of the pairs table of `proposal`'s generation `g`: row `j` draws θ and
    /// simulates from `SimStream::with_domain(seed, pairs_domain(g), j)` (θ redrawn from
    /// the same stream after a recoverable failure, up to [`MAX_REDRAWS`] times), in blocks of
    /// [`PAIRS_BLOCK`] rows. Any split of a table into row ranges gives the same rows.
    ///
    /// # Errors
    ///
    /// As [`PublicPairs::generate_range`]; [`AbcError::SupportMissed`] if a kernel proposal
    /// stays outside the prior's support.
    pub fn simulate<P: Prior + ?Sized, S: RowSimulator + ?Sized>(
        proposal: &Proposal<'_, P>,
        sim: &S,
        seed: u64,
        rows: Range<u64>,
    ) -> Result<Self, AbcError> {
        let (d, od, t) = check_generate(proposal, sim, &rows)?;
        let domain = pairs_domain(proposal.generation());
        let mut thetas = alloc::vec![0.0; t * d];
        let mut outputs = alloc::vec![0.0; t * od];
        let mut g = Gather::default();
        for (b, (th, out)) in thetas
            .chunks_mut(PAIRS_BLOCK * d)
            .zip(outputs.chunks_mut(PAIRS_BLOCK * od))
            .enumerate()
        {
            let first = rows.start + (b * PAIRS_BLOCK) as u64;
            generate_block(proposal, sim, seed, domain, first, th, out, &mut g)?;
        }
        Self::from_parts(d, od, thetas, outputs)
    }

    /// [`PublicPairs::simulate`] on the current rayon thread pool, in work items of 256
    /// rows; bit-identical to it for every thread count.
    ///
    /// # Errors
    ///
    /// As [`PublicPairs::simulate`].
    #[cfg(feature = "parallel")]
    pub fn simulate_parallel<P, S>(
        proposal: &Proposal<'_, P>,
        sim: &S,
        seed: u64,
        rows: Range<u64>,
    ) -> Result<Self, AbcError>
    where
        P: Prior + Sync + ?Sized,
        S: RowSimulator + Sync + ?Sized,
    {
        use rayon::prelude::*;
        let (d, od, t) = check_generate(proposal, sim, &rows)?;
        let domain = pairs_domain(proposal.generation());
        let mut thetas = alloc::vec![0.0; t * d];
        let mut outputs = alloc::vec![0.0; t * od];
        thetas
            .par_chunks_mut(PAR_BLOCK * d)
            .zip(outputs.par_chunks_mut(PAR_BLOCK * od))
            .enumerate()
            .try_for_each_init(Gather::default, |g, (b, (th, out))| {
                let first = rows.start + (b * PAR_BLOCK) as u64;
                generate_block(proposal, sim, seed, domain, first, th, out, g)
            })?;
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
        P: Prior + Sync + ?Sized,
        S: BatchSimulator + Sync + ?Sized,
    {
        Self::generate_range_parallel(prior, sim, seed, 0..t as u64)
    }

    /// [`PublicPairs::generate_range`] on the current rayon thread pool; bit-identical to it
    /// for every thread count.
    ///
    /// # Errors
    ///
    /// As [`PublicPairs::generate_range`].
    #[cfg(feature = "parallel")]
    pub fn generate_range_parallel<P, S>(
        prior: &P,
        sim: &S,
        seed: u64,
        rows: Range<u64>,
    ) -> Result<Self, AbcError>
    where
        P: Prior + Sync + ?Sized,
        S: BatchSimulator + Sync + ?Sized,
    {
        Self::simulate_parallel(&Proposal::Prior(prior), &Rowless(sim), seed, rows)
    }

    /// Concatenates tables in order (e.g. shards `0..n` of one table, in shard order).
    ///
    /// # Errors
    ///
    /// [`AbcError::Empty`] for no parts, [`AbcError::LengthMismatch`] for parts of different
    /// dimensions.
    pub fn concat(parts: &[Self]) -> Result<Self, AbcError> {
        let first = parts.first().ok_or(AbcError::Empty { name: "parts" })?;
        let (d, k) = (first.theta_dim, first.output_dim);
        let mut thetas = Vec::new();
        let mut outputs = Vec::new();
        for p in parts {
            if p.theta_dim != d || p.output_dim != k {
                return Err(AbcError::LengthMismatch {
                    name: "parts",
                    expected: d + k,
                    found: p.theta_dim + p.output_dim,
                });
            }
            thetas.extend_from_slice(&p.thetas);
            outputs.extend_from_slice(&p.outputs);
        }
        Self::from_parts(d, k, thetas, outputs)
    }

    /// Reads a row-major table whose rows are θ (`theta_dim` values) then the output
    /// (`output_dim` values), e.g. a shard file's body.
    ///
    /// # Errors
    ///
    /// As [`PublicPairs::from_parts`]; [`AbcError::LengthMismatch`] if `table` is not whole
    /// rows.
    pub fn from_table(
        theta_dim: usize,
        output_dim: usize,
        table: &[f64],
    ) -> Result<Self, AbcError> {
        let width = theta_dim.saturating_add(output_dim);
        if theta_dim == 0 || output_dim == 0 || !table.len().is_multiple_of(width) {
            return Err(AbcError::LengthMismatch {
                name: "table",
                expected: table.len() / width.max(1) * width,
                found: table.len(),
            });
        }
        let t = table.len() / width;
        let mut thetas = Vec::with_capacity(t * theta_dim);
        let mut outputs = Vec::with_capacity(t * output_dim);
        for row in table.chunks_exact(width) {
            thetas.extend_from_slice(&row[..theta_dim]);
            outputs.extend_from_slice(&row[theta_dim..]);
        }
        Self::from_parts(theta_dim, output_dim, thetas, outputs)
    }

    /// The row-major table of [`PublicPairs::from_table`]: per row θ, then the output.
    #[must_use]
    pub fn to_table(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.thetas.len() + self.outputs.len());
        for (th, y) in self
            .thetas
            .chunks_exact(self.theta_dim)
            .zip(self.outputs.chunks_exact(self.output_dim))
        {
            out.extend_from_slice(th);
            out.extend_from_slice(y);
        }
        out
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

/// Validates the arguments of a generation over `rows`; returns `(dim θ, output dim, rows)`.
fn check_generate<P: Prior + ?Sized, S: RowSimulator + ?Sized>(
    draw: &Proposal<'_, P>,
    sim: &S,
    rows: &Range<u64>,
) -> Result<(usize, usize, usize), AbcError> {
    let n = rows.end.saturating_sub(rows.start);
    let t = usize::try_from(n).unwrap_or(usize::MAX);
    if t == 0 {
        return Err(AbcError::InvalidCount {
            name: "t",
            value: 0,
        });
    }
    let d = draw.dim();
    if d == 0 || sim.row_param_dim() != d {
        return Err(AbcError::LengthMismatch {
            name: "simulator param_dim",
            expected: d,
            found: sim.row_param_dim(),
        });
    }
    let od = sim.row_output_dim();
    if od == 0 {
        return Err(AbcError::InvalidCount {
            name: "output_dim",
            value: 0,
        });
    }
    if t.checked_mul(d.saturating_add(od))
        .is_none_or(|v| v > isize::MAX as usize / 8)
    {
        return Err(AbcError::InvalidCount {
            name: "t",
            value: t,
        });
    }
    Ok((d, od, t))
}

/// Rows `first..first + n` into `thetas` (`n·d`) and `out` (`n·k`): every pending row draws
/// θ from its stream, then the pending rows are simulated in one batch; rows that failed
/// recoverably stay pending (at most [`MAX_REDRAWS`] rounds).
#[allow(clippy::too_many_arguments)]
fn generate_block<P: Prior + ?Sized, S: RowSimulator + ?Sized>(
    draw: &Proposal<'_, P>,
    sim: &S,
    seed: u64,
    domain: u64,
    first: u64,
    thetas: &mut [f64],
    out: &mut [f64],
    g: &mut Gather,
) -> Result<(), AbcError> {
    let d = draw.dim();
    let k = sim.row_output_dim();
    let n = thetas.len() / d;
    let mut streams = row_streams(seed, domain, first, n);
    let mut ok = alloc::vec![false; n];
    let mut pending: Vec<usize> = (0..n).collect();
    let mut ids: Vec<u64> = Vec::with_capacity(n);
    for _ in 0..MAX_REDRAWS {
        for &i in &pending {
            draw.draw(&mut streams[i], &mut thetas[i * d..(i + 1) * d])?;
        }
        ids.clear();
        ids.extend(pending.iter().map(|&i| first + i as u64));
        gather_call(
            d,
            k,
            thetas,
            &mut streams,
            out,
            &mut ok,
            &pending,
            g,
            |th, st, o, okk| sim.simulate_rows(&ids, th, st, o, okk),
        )?;
        pending.retain(|&i| !ok[i]);
        if pending.is_empty() {
            return Ok(());
        }
    }
    Err(AbcError::Redraws { tries: MAX_REDRAWS })
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
