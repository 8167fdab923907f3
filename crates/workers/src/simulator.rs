//! The pool as a dpinfer simulator: [`Simulator`] (one row at a time), [`RowSimulator`]
//! (blocks of table rows, the path of public pair tables and shards) and, on a chosen number
//! of workers ([`CommandSimulator::on`]), [`BatchSimulator`] (blocks of θ rows, the path of
//! the batched samplers: `SmcAbc::run_batched`, batched rejection ABC).

use std::sync::{Arc, Mutex};

use dpinfer_simulators::{BatchSimulator, RowSimulator};
use dpinfer_simulators::{SimError, SimStream, Simulator, check_batch};
use rand_core::Rng;

use crate::error::WorkerError;
use crate::pool::Pool;
use crate::protocol::{Answer, Request};

/// [`SimError::Model`] code of a θ the external simulator rejected (recoverable).
pub const REJECT_CODE: u32 = 1;
/// [`SimError::Model`] code of a failed external simulation (fatal); the error itself is
/// kept by the simulator ([`CommandSimulator::take_error`]).
pub const FAILED_CODE: u32 = 2;

/// A map applied to every answer's outputs (e.g. summary statistics of the raw simulation):
/// `(raw outputs, summary buffer)`; an `Err` is fatal and names the reason.
pub type OutputMap = dyn Fn(&[f64], &mut [f64]) -> Result<(), String> + Send + Sync;

/// An external simulator: a [`Pool`] of worker processes as a dpinfer simulator.
///
/// Each row's simulation seed is the next `u64` of the row's own stream (after its θ), sent
/// with the row id, so a table does not depend on the batch size, the number of workers or
/// which worker ran a row. A rejected θ is a recoverable failure ([`REJECT_CODE`]): the
/// sampler draws a fresh θ from the same stream, as for a built-in model's degenerate draw.
/// A failed batch is a fatal [`SimError::Model`] with [`FAILED_CODE`]; the typed error (rows,
/// fault, stderr tail) is kept for [`CommandSimulator::take_error`], since `SimError` carries
/// no text.
pub struct CommandSimulator {
    pool: Pool,
    workers: usize,
    map: Option<(usize, Arc<OutputMap>)>,
    error: Mutex<Option<WorkerError>>,
}

impl core::fmt::Debug for CommandSimulator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CommandSimulator")
            .field("pool", &self.pool)
            .field("workers", &self.workers)
            .field("mapped_outputs", &self.map.as_ref().map(|m| m.0))
            .finish_non_exhaustive()
    }
}

impl CommandSimulator {
    /// The pool as a simulator running batches on up to `workers` processes (at least 1).
    #[must_use]
    pub fn new(pool: Pool, workers: usize) -> Self {
        Self {
            pool,
            workers: workers.max(1),
            map: None,
            error: Mutex::new(None),
        }
    }

    /// Applies `map` to every answer: the simulator's output becomes `len` values computed
    /// from the worker's `outputs` values.
    ///
    /// # Errors
    /// [`WorkerError::InvalidSettings`] for `len == 0`.
    pub fn with_output_map(mut self, len: usize, map: Arc<OutputMap>) -> Result<Self, WorkerError> {
        if len == 0 {
            return Err(WorkerError::InvalidSettings {
                name: "map",
                reason: "an output map must produce at least one value".into(),
            });
        }
        self.map = Some((len, map));
        Ok(self)
    }

    /// The same simulator on `workers` processes (the pool, its idle workers and the output
    /// map are shared).
    #[must_use]
    pub fn on(&self, workers: usize) -> Workers<'_> {
        Workers {
            sim: self,
            workers: workers.max(1),
        }
    }

    /// The pool.
    #[must_use]
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Workers used per batch call.
    #[must_use]
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The error behind the last fatal [`SimError::Model`] with [`FAILED_CODE`], once.
    pub fn take_error(&self) -> Option<WorkerError> {
        self.error.lock().ok().and_then(|mut e| e.take())
    }

    /// Runs `requests` on `workers` processes and writes each answer (mapped) into its row of
    /// `out`: `Ok(true)` per row simulated, `Ok(false)` per rejected row.
    ///
    /// # Errors
    /// A failed batch or a refused output map.
    pub fn run_into(
        &self,
        requests: &[Request],
        workers: usize,
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), WorkerError> {
        let k = self.output_len();
        let answers = self.pool.run(requests, workers)?;
        for (((a, o), flag), r) in answers
            .into_iter()
            .zip(out.chunks_exact_mut(k))
            .zip(ok.iter_mut())
            .zip(requests)
        {
            *flag = match a {
                Answer::Output(v) => {
                    match &self.map {
                        None => o.copy_from_slice(&v),
                        Some((_, m)) => m(&v, o)
                            .map_err(|reason| WorkerError::OutputMap { row: r.row, reason })?,
                    }
                    true
                }
                Answer::Reject => false,
            };
        }
        Ok(())
    }

    fn output_len(&self) -> usize {
        self.map
            .as_ref()
            .map_or(self.pool.settings().outputs, |m| m.0)
    }

    fn fatal(&self, e: WorkerError) -> SimError {
        if let Ok(mut slot) = self.error.lock() {
            *slot = Some(e);
        }
        SimError::Model {
            code: FAILED_CODE,
            recoverable: false,
        }
    }

    /// Simulates a block on `workers` processes: row `i` is sent with the id `rows[i]` (the
    /// block index `i` when `rows` is `None`) and the seed `streams[i].next_u64()`.
    fn rows<R: Rng>(
        &self,
        workers: usize,
        rows: Option<&[u64]>,
        thetas: &[f64],
        streams: &mut [R],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        let d = self.pool.settings().param_names.len();
        let k = self.output_len();
        let n = streams.len();
        check_batch(d, k, n, thetas, out, ok)?;
        if let Some(rows) = rows
            && rows.len() != n
        {
            return Err(SimError::DimensionMismatch {
                what: "rows",
                expected: n,
                got: rows.len(),
            });
        }
        let requests: Vec<Request> = thetas
            .chunks_exact(d)
            .zip(streams.iter_mut())
            .enumerate()
            .map(|(i, (th, rng))| Request {
                row: rows.map_or(i as u64, |r| r[i]),
                seed: rng.next_u64(),
                theta: th.to_vec(),
            })
            .collect();
        self.run_into(&requests, workers, out, ok)
            .map_err(|e| self.fatal(e))
    }
}

/// A [`CommandSimulator`] on a given number of worker processes ([`CommandSimulator::on`]).
#[derive(Debug, Clone, Copy)]
pub struct Workers<'a> {
    sim: &'a CommandSimulator,
    workers: usize,
}

impl RowSimulator for Workers<'_> {
    fn row_param_dim(&self) -> usize {
        self.sim.param_dim()
    }
    fn row_output_dim(&self) -> usize {
        self.sim.output_dim()
    }
    fn simulate_rows(
        &self,
        rows: &[u64],
        thetas: &[f64],
        streams: &mut [SimStream],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        self.sim
            .rows(self.workers, Some(rows), thetas, streams, out, ok)
    }
}

/// A block of θ rows in one pool call on the chosen number of workers (split into request
/// batches of at most `PoolSettings::batch` rows): row `i` is sent with the id `i` and the
/// seed `streams[i].next_u64()`, exactly the seed [`Simulator::simulate`] sends for one θ
/// with that stream, so a batched sampler gets bit for bit the rows of its per-row path,
/// whatever the block size or the number of workers. (`CommandSimulator` itself is a
/// [`Simulator`], whose blanket `BatchSimulator` sends one row per pool call: batch through
/// [`CommandSimulator::on`].)
impl BatchSimulator for Workers<'_> {
    fn batch_param_dim(&self) -> usize {
        self.sim.param_dim()
    }
    fn batch_output_dim(&self) -> usize {
        self.sim.output_dim()
    }
    fn simulate_batch<R: Rng>(
        &self,
        thetas: &[f64],
        streams: &mut [R],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        self.sim.rows(self.workers, None, thetas, streams, out, ok)
    }
}

impl RowSimulator for CommandSimulator {
    fn row_param_dim(&self) -> usize {
        self.param_dim()
    }
    fn row_output_dim(&self) -> usize {
        self.output_dim()
    }
    fn simulate_rows(
        &self,
        rows: &[u64],
        thetas: &[f64],
        streams: &mut [SimStream],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        self.rows(self.workers, Some(rows), thetas, streams, out, ok)
    }
}

/// One θ at a time (row id 0, seed = the next `u64` of `rng`): for samplers that simulate
/// one proposal per call. Prefer the [`RowSimulator`] path for tables.
impl Simulator for CommandSimulator {
    fn param_dim(&self) -> usize {
        self.pool.settings().param_names.len()
    }
    fn output_dim(&self) -> usize {
        self.output_len()
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        let mut ok = [false];
        check_batch(self.param_dim(), self.output_dim(), 1, theta, out, &ok)?;
        let req = Request {
            row: 0,
            seed: rng.next_u64(),
            theta: theta.to_vec(),
        };
        self.run_into(core::slice::from_ref(&req), 1, out, &mut ok)
            .map_err(|e| self.fatal(e))?;
        if ok[0] {
            Ok(())
        } else {
            Err(SimError::Model {
                code: REJECT_CODE,
                recoverable: true,
            })
        }
    }
}
