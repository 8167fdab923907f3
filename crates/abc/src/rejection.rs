//! Rejection ABC (the non-private baseline; Pritchard et al. 1999): θ ~ π, simulate, accept
//! if `ρ ≤ ε` (threshold rule) or keep the `k` nearest of a fixed budget (quantile rule).
//!
//! The sampler is a state machine: each [`RejectionAbc::step`] is one proposal. Early
//! rejection through [`IncrementalSimulator`]s is [`RejectionAbc::step_early`].
//! [`RejectionAbc::run_batched`] gives every proposal its own `dpinfer_simulators::SimStream`
//! and hands blocks of proposals to a [`BatchSimulator`] (one call per block, e.g. one numpy
//! call); with the `parallel` feature, `RejectionAbc::run_parallel` evaluates the same
//! proposals on the rayon thread pool. Both give bit-identical results for every block size
//! and thread count.
//!
//! # Privacy
//!
//! None: this sampler reads the observation without noise. Use [`crate::svt`] (SVT-ABC) or
//! [`crate::gaussian`] for private decisions.

use alloc::vec::Vec;

use dpinfer_simulators::{
    BatchSimulator, IncrementalSimulator, Prior, RunEnd, SimError, Simulator,
};
use rand_core::Rng;

use crate::batch::{Gather, block_rows, row_streams, simulate_rows};
use crate::discrepancy::{Discrepancy, PrefixDiscrepancy, sanitize};
use crate::error::{AbcError, non_negative};
use crate::pairs::PublicPairs;

/// Stream domain of the per-proposal streams of [`RejectionAbc::run_batched`] and
/// `RejectionAbc::run_parallel` (feature `parallel`).
pub const REJECTION_DOMAIN: u64 = 0x5245_4a45_4354; // "REJECT"

/// The acceptance rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// Accept a proposal when `ρ ≤ ε`.
    Threshold(f64),
    /// Run the whole budget and keep the `k` proposals with the smallest distances (the
    /// tolerance is then the `k`-th smallest distance, a data-dependent quantile).
    Nearest(usize),
}

/// Settings of [`RejectionAbc`] (validated by [`RejectionAbc::new`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RejectionSettings {
    /// Acceptance rule.
    pub rule: Rule,
    /// Maximum number of simulations (proposals), `≥ 1`.
    pub budget: u64,
    /// With [`Rule::Threshold`], stop once this many proposals are accepted (`≥ 1`;
    /// `u64::MAX` for "run the whole budget"). Ignored by [`Rule::Nearest`].
    pub target: u64,
}

impl Default for RejectionSettings {
    fn default() -> Self {
        Self {
            rule: Rule::Threshold(0.1),
            budget: 1_000_000,
            target: 1000,
        }
    }
}

impl RejectionSettings {
    /// Checks the settings.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidParameter`] for a NaN/negative threshold (`+∞` accepts all);
    /// [`AbcError::InvalidCount`] for a zero budget, target or `k`.
    pub fn validate(&self) -> Result<(), AbcError> {
        match self.rule {
            Rule::Threshold(eps) => {
                if eps.is_nan() || eps < 0.0 {
                    return Err(AbcError::InvalidParameter {
                        name: "threshold",
                        value: eps,
                    });
                }
            }
            Rule::Nearest(0) => {
                return Err(AbcError::InvalidCount {
                    name: "k",
                    value: 0,
                });
            }
            Rule::Nearest(_) => {}
        }
        if self.budget == 0 {
            return Err(AbcError::InvalidCount {
                name: "budget",
                value: 0,
            });
        }
        if self.target == 0 {
            return Err(AbcError::InvalidCount {
                name: "target",
                value: 0,
            });
        }
        Ok(())
    }
}

/// What one [`RejectionAbc::step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectionStep {
    /// The proposal was accepted (or, under [`Rule::Nearest`], recorded).
    Accepted,
    /// The proposal was rejected (distance above the tolerance, or abandoned early).
    Rejected,
    /// The simulator reported a recoverable failure; the proposal counts as rejected.
    Failed,
    /// The sampler has finished (budget spent or target reached); stepping again is a no-op.
    Done,
}

/// The nearest-`k` rejection pass over a public pairs table (Pritchard et al. 1999 with the
/// quantile rule; also the selection step of [`crate::pmc`]): the `k` rows of `pairs` whose
/// outputs are nearest the observation, nearest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Nearest {
    /// Row indices into the table, nearest first (ties by row index).
    pub indices: Vec<usize>,
    /// Their distances (NaN read as `+∞`), non-decreasing.
    pub distances: Vec<f64>,
    /// The tolerance: the `k`-th smallest distance.
    pub tolerance: f64,
}

impl Nearest {
    /// The kept θs of `pairs`, row-major, nearest first.
    #[must_use]
    pub fn thetas(&self, pairs: &PublicPairs) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.indices.len() * pairs.theta_dim());
        for &i in &self.indices {
            out.extend_from_slice(pairs.theta(i));
        }
        out
    }
}

/// The default `k` of [`nearest`] for a table of `t` rows: the nearest 1 % (a 0.01 distance
/// quantile as tolerance), at least 1 — the `dpinfer` command's default for
/// `sampler.accept`. Never above `t` for `t ≥ 1`.
#[must_use]
pub const fn default_k(t: usize) -> usize {
    let k = t / 100;
    if k == 0 { 1 } else { k }
}

/// Keeps the `k` rows of `pairs` nearest the observation (see [`Nearest`]). **Not private**:
/// the tolerance and the selection read the observation without noise.
///
/// # Errors
///
/// [`AbcError::InvalidCount`] (`k`) unless `1 ≤ k ≤ pairs.len()`.
pub fn nearest<D: Discrepancy>(
    pairs: &PublicPairs,
    dist: D,
    k: usize,
) -> Result<Nearest, AbcError> {
    if k == 0 || k > pairs.len() {
        return Err(AbcError::InvalidCount {
            name: "k",
            value: k,
        });
    }
    let mut all = alloc::vec![0.0; pairs.len()];
    dist.distances(pairs.outputs(), pairs.output_dim(), &mut all);
    let mut idx: Vec<(f64, usize)> = all
        .into_iter()
        .enumerate()
        .map(|(i, d)| (sanitize(d), i))
        .collect();
    idx.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    idx.truncate(k);
    Ok(Nearest {
        tolerance: idx[k - 1].0,
        indices: idx.iter().map(|&(_, i)| i).collect(),
        distances: idx.iter().map(|&(d, _)| d).collect(),
    })
}

/// Rejection ABC over a [`Prior`], a [`Simulator`] and a [`Discrepancy`].
#[derive(Debug)]
pub struct RejectionAbc<P, S, D> {
    prior: P,
    sim: S,
    dist: D,
    settings: RejectionSettings,
    theta: Vec<f64>,
    out: Vec<f64>,
    simulations: u64,
    accepted: Vec<f64>,
    distances: Vec<f64>,
    tolerance: f64,
    finished: bool,
}

fn sim_error(e: SimError) -> Result<RejectionStep, AbcError> {
    if e.is_recoverable() {
        Ok(RejectionStep::Failed)
    } else {
        Err(AbcError::Model(e))
    }
}

impl<P: Prior, S: BatchSimulator, D: Discrepancy> RejectionAbc<P, S, D> {
    /// Builds the sampler (any [`Simulator`] is a [`BatchSimulator`]; a batch-only simulator
    /// can use [`RejectionAbc::run_batched`] only).
    ///
    /// # Errors
    ///
    /// As [`RejectionSettings::validate`], plus [`AbcError::LengthMismatch`] if the prior and
    /// the simulator disagree on the dimension of θ, [`AbcError::InvalidCount`] for a zero
    /// dimension.
    pub fn new(prior: P, sim: S, dist: D, settings: RejectionSettings) -> Result<Self, AbcError> {
        settings.validate()?;
        let dim = crate::error::model_dim(prior.dim(), sim.batch_param_dim())?;
        let out_dim = sim.batch_output_dim();
        let tolerance = match settings.rule {
            Rule::Threshold(e) => e,
            Rule::Nearest(_) => f64::INFINITY,
        };
        Ok(Self {
            prior,
            sim,
            dist,
            settings,
            theta: alloc::vec![0.0; dim],
            out: alloc::vec![0.0; out_dim],
            simulations: 0,
            accepted: Vec::new(),
            distances: Vec::new(),
            tolerance,
            finished: false,
        })
    }

    /// Dimension of θ.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.theta.len()
    }

    /// Simulations run so far.
    #[must_use]
    pub fn simulations(&self) -> u64 {
        self.simulations
    }

    /// `true` once the budget is spent or the target reached.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Accepted θs, row-major (`accepted().len() / dim()` of them). Under [`Rule::Nearest`]
    /// this holds every proposal until the sampler finishes, then only the `k` nearest.
    #[must_use]
    pub fn accepted(&self) -> &[f64] {
        &self.accepted
    }

    /// Distances of the accepted θs, in the same order.
    #[must_use]
    pub fn distances(&self) -> &[f64] {
        &self.distances
    }

    /// The tolerance in force: the threshold, or after a [`Rule::Nearest`] run the `k`-th
    /// smallest distance.
    #[must_use]
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// Acceptance rate so far (0 before the first simulation).
    #[must_use]
    pub fn acceptance_rate(&self) -> f64 {
        if self.simulations == 0 {
            return 0.0;
        }
        #[allow(clippy::cast_precision_loss)]
        let r = self.distances.len() as f64 / self.simulations as f64;
        r
    }

    /// Starts a proposal: `false` once finished (the simulation budget used up), else draws
    /// θ ~ π into `theta` and counts its simulation.
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<bool, AbcError> {
        if self.finished {
            return Ok(false);
        }
        if self.simulations >= self.settings.budget {
            self.finish();
            return Ok(false);
        }
        self.prior
            .sample(rng, &mut self.theta)
            .map_err(AbcError::Model)?;
        self.simulations += 1;
        Ok(true)
    }

    fn record(&mut self, d: f64) -> RejectionStep {
        let d = sanitize(d);
        match self.settings.rule {
            Rule::Threshold(eps) => {
                if d <= eps {
                    self.accepted.extend_from_slice(&self.theta);
                    self.distances.push(d);
                    if self.distances.len() as u64 >= self.settings.target {
                        self.finish();
                    }
                    RejectionStep::Accepted
                } else {
                    RejectionStep::Rejected
                }
            }
            Rule::Nearest(_) => {
                self.accepted.extend_from_slice(&self.theta);
                self.distances.push(d);
                RejectionStep::Accepted
            }
        }
    }

    fn post_step(&mut self) {
        if self.simulations >= self.settings.budget && !self.finished {
            self.finish();
        }
    }

    fn finish(&mut self) {
        self.finished = true;
        if let Rule::Nearest(k) = self.settings.rule {
            let dim = self.theta.len();
            let n = self.distances.len();
            let mut idx: Vec<usize> = (0..n).collect();
            // stable: ties keep proposal order
            idx.sort_by(|&a, &b| self.distances[a].total_cmp(&self.distances[b]));
            idx.truncate(k.min(n));
            let mut th = Vec::with_capacity(idx.len() * dim);
            let mut ds = Vec::with_capacity(idx.len());
            for &i in &idx {
                th.extend_from_slice(&self.accepted[i * dim..(i + 1) * dim]);
                ds.push(self.distances[i]);
            }
            self.tolerance = ds.last().copied().unwrap_or(f64::INFINITY);
            self.accepted = th;
            self.distances = ds;
        }
    }

    /// Evaluates proposals `first..first + n` (`n = dists.len()`), each with its own stream
    /// `SimStream::with_domain(seed, REJECTION_DOMAIN, index)`: θ rows into `thetas`,
    /// distances into `dists`, `ok[i] = false` for a recoverable simulator failure.
    fn evaluate_block(
        &self,
        seed: u64,
        first: u64,
        thetas: &mut [f64],
        dists: &mut [f64],
        ok: &mut [bool],
        g: &mut Gather,
    ) -> Result<(), AbcError> {
        let (d, k) = (self.theta.len(), self.out.len());
        let n = dists.len();
        let mut streams = row_streams(seed, REJECTION_DOMAIN, first, n);
        for (th, rng) in thetas.chunks_exact_mut(d).zip(streams.iter_mut()) {
            self.prior.sample(rng, th).map_err(AbcError::Model)?;
        }
        let all: Vec<usize> = (0..n).collect();
        let mut out = alloc::vec![0.0; n * k];
        simulate_rows(&self.sim, d, k, thetas, &mut streams, &mut out, ok, &all, g)?;
        // One batched call for the block (rows that failed are ignored by the merge).
        self.dist.distances(&out, k, dists);
        for d in dists.iter_mut() {
            *d = sanitize(*d);
        }
        Ok(())
    }

    /// Records evaluated proposals in order until the sampler finishes.
    fn merge_block(&mut self, thetas: &[f64], dists: &[f64], ok: &[bool]) {
        let d = self.theta.len();
        for (i, (&dist, &good)) in dists.iter().zip(ok).enumerate() {
            self.simulations += 1;
            if good {
                self.theta.copy_from_slice(&thetas[i * d..(i + 1) * d]);
                self.record(dist);
                if self.finished {
                    break;
                }
            }
        }
        self.post_step();
    }

    /// Size of the next block of proposals (at most `max`, within the budget).
    fn next_block(&self, max: usize) -> Result<usize, AbcError> {
        let left = self.settings.budget - self.simulations;
        usize::try_from(left.min(max as u64)).map_err(|_| AbcError::InvalidCount {
            name: "batch",
            value: usize::MAX,
        })
    }

    fn check_fresh(&self) -> Result<(), AbcError> {
        if self.simulations != 0 || self.finished {
            return Err(AbcError::Finished);
        }
        Ok(())
    }

    /// Runs to completion with one reproducible stream per proposal
    /// (`SimStream::with_domain(seed, REJECTION_DOMAIN, proposal index)`, used for the prior
    /// draw and then the simulation), calling the simulator on blocks of `batch` proposals
    /// (`batch = 0` is read as 1; blocks are capped at 2²⁴ θ-and-output values). Proposals are
    /// recorded in order, so the result is
    /// bit-identical for every `batch` and equal to `RejectionAbc::run_parallel`'s; a block
    /// may simulate a few proposals past the target that are then not counted.
    ///
    /// # Errors
    ///
    /// [`AbcError::Finished`] if the sampler was already stepped, and as
    /// [`RejectionAbc::step`].
    pub fn run_batched(&mut self, seed: u64, batch: usize) -> Result<(), AbcError> {
        self.check_fresh()?;
        let d = self.theta.len();
        let batch = block_rows(batch, d, self.out.len());
        let mut g = Gather::default();
        while !self.finished {
            let n = self.next_block(batch)?;
            let mut thetas = alloc::vec![0.0; n * d];
            let mut dists = alloc::vec![0.0; n];
            let mut ok = alloc::vec![false; n];
            self.evaluate_block(
                seed,
                self.simulations,
                &mut thetas,
                &mut dists,
                &mut ok,
                &mut g,
            )?;
            self.merge_block(&thetas, &dists, &ok);
        }
        Ok(())
    }
}

impl<P: Prior, S: Simulator, D: Discrepancy> RejectionAbc<P, S, D> {
    /// One proposal: θ ~ π, simulate, compare.
    ///
    /// # Errors
    ///
    /// [`AbcError::Model`] if the prior or simulator fails fatally (recoverable simulator
    /// failures give [`RejectionStep::Failed`]).
    pub fn step<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<RejectionStep, AbcError> {
        if !self.propose(rng)? {
            return Ok(RejectionStep::Done);
        }
        let r = match self.sim.simulate(&self.theta, rng, &mut self.out) {
            Ok(()) => {
                let d = self.dist.distance(&self.out);
                self.record(d)
            }
            Err(e) => sim_error(e)?,
        };
        self.post_step();
        Ok(r)
    }

    /// Steps until done.
    ///
    /// # Errors
    ///
    /// As [`RejectionAbc::step`].
    pub fn run<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<(), AbcError> {
        while self.step(rng)? != RejectionStep::Done {}
        Ok(())
    }
}

impl<P: Prior, S: IncrementalSimulator, D: PrefixDiscrepancy> RejectionAbc<P, S, D> {
    /// One proposal with exact early rejection: the simulation is abandoned as soon as a
    /// prefix of the output already exceeds the threshold. Decisions equal those of
    /// [`RejectionAbc::step`] on the same θ and simulation randomness; an abandoned run
    /// consumes fewer random numbers, so later proposals see a different stream unless each
    /// proposal has its own stream. Under [`Rule::Nearest`] it simulates in full.
    ///
    /// # Errors
    ///
    /// As [`RejectionAbc::step`].
    pub fn step_early<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<RejectionStep, AbcError> {
        let Rule::Threshold(eps) = self.settings.rule else {
            return self.step(rng);
        };
        if !self.propose(rng)? {
            return Ok(RejectionStep::Done);
        }
        let dist = &self.dist;
        let r = match self
            .sim
            .simulate_until(&self.theta, rng, &mut self.out, |_, prefix| {
                dist.prefix_exceeds(prefix, eps)
            }) {
            Ok(RunEnd::Completed) => {
                let d = self.dist.distance(&self.out);
                self.record(d)
            }
            Ok(RunEnd::Abandoned { .. }) => RejectionStep::Rejected,
            Err(e) => sim_error(e)?,
        };
        self.post_step();
        Ok(r)
    }
}

#[cfg(feature = "parallel")]
impl<P, S, D> RejectionAbc<P, S, D>
where
    P: Prior + Sync,
    S: BatchSimulator + Sync,
    D: Discrepancy + Sync,
{
    /// [`RejectionAbc::run_batched`] on the current rayon thread pool (choose the thread
    /// count with `rayon::ThreadPool::install`): blocks of 8192 proposals are split into work
    /// items of 256, each one simulator call, and merged in proposal order, so the result is
    /// bit-identical to `run_batched` for every thread count.
    ///
    /// # Errors
    ///
    /// As [`RejectionAbc::run_batched`].
    pub fn run_parallel(&mut self, seed: u64) -> Result<(), AbcError> {
        use rayon::prelude::*;
        const BATCH: usize = 8192;
        const CHUNK: usize = 256;
        self.check_fresh()?;
        let d = self.theta.len();
        while !self.finished {
            let n = self.next_block(BATCH)?;
            let first = self.simulations;
            let mut thetas = alloc::vec![0.0; n * d];
            let mut dists = alloc::vec![0.0; n];
            let mut ok = alloc::vec![false; n];
            let this = &*self;
            thetas
                .par_chunks_mut(CHUNK * d)
                .zip(dists.par_chunks_mut(CHUNK))
                .zip(ok.par_chunks_mut(CHUNK))
                .enumerate()
                .try_for_each_init(Gather::default, |g, (c, ((th, ds), okc))| {
                    this.evaluate_block(seed, first + (c * CHUNK) as u64, th, ds, okc, g)
                })?;
            self.merge_block(&thetas, &dists, &ok);
        }
        Ok(())
    }
}

/// Validates a tolerance-like value (finite or `+∞`, non-negative).
pub(crate) fn tolerance_ok(name: &'static str, x: f64) -> Result<f64, AbcError> {
    if x == f64::INFINITY {
        return Ok(x);
    }
    non_negative(name, x)
}
