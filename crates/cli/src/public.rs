//! The public simulation step: the table of (θ, summary) pairs, computed by the library
//! (`dpinfer::abc::pairs::PublicPairs::simulate`, on the rayon pool).
//!
//! Row `j` of generation `g` is drawn from `SimStream::with_domain(run_seed,
//! pairs_domain(g), j)` — the library's stream domain, so `dpinfer simulate` and a library
//! user produce the same table for the same seed — (prior or PMC-kernel draw, then
//! simulation, redrawing θ from the same stream after a recoverable simulator failure), and
//! then reduced to its summary: the random-feature mean embedding of the pseudo-data set
//! (`rff-mmd`) or the simulator output itself (`l2`). No private data is touched, so rows can
//! be computed anywhere, in any order, by any number of workers, and the table is the same
//! bit for bit.

use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use dpinfer::abc::pairs::{Proposal, PublicPairs, RowSimulator, Rowless};
use dpinfer::abc::pmc::PmcKernel;
use dpinfer::abc::smc::{Privatized, Replicate};
use dpinfer::distances::{RandomFourierFeatures, Rows, median_heuristic};
use dpinfer::simulators::{Prior, SimError, SimStream, Simulator};
use rand::Rng as _;

use crate::config::{Config, DistanceConfig};
use crate::model::{Model, ModelPrior, ModelSim};

/// Stream domain of the public setup (bandwidth data set, random frequencies).
pub const SETUP_DOMAIN: u64 = 0x5345_5455_0000_0000; // "SETU"
/// Recoverable simulator failures tolerated before the setup data set fails.
const MAX_REDRAWS: usize = 1000;
/// Rows used by the median heuristic.
const MEDIAN_ROWS: usize = 1000;

/// How a simulation becomes the row's summary.
#[derive(Debug, Clone)]
pub enum Summary {
    /// The simulator output is the summary vector.
    Raw,
    /// Random Fourier features of a Gaussian kernel: frequencies `z` (standard normal, scaled
    /// by the bandwidth inside the feature map).
    Rff {
        /// Standard-normal frequencies, `D/2 × row_dim`.
        z: Vec<f64>,
        /// Kernel bandwidth.
        bandwidth: f64,
    },
}

/// Everything the public step needs, derived from the config alone.
#[derive(Debug, Clone)]
pub struct Public {
    /// The model.
    pub model: Model,
    /// Summary map.
    pub summary: Summary,
    /// Run seed.
    pub seed: u64,
    /// Table rows.
    pub total: u64,
    /// Hash of the public configuration (and, for SMC generation g ≥ 1, of population g−1).
    pub config_hash: u64,
    /// SMC-ABC generation g ≥ 1: the perturbation kernel of population g−1 (θ is drawn from
    /// it instead of the prior).
    pub kernel: Option<PmcKernel>,
    /// SMC-ABC on a privatized statistic: the public replica applied to every simulation.
    pub replica: Option<Replicate>,
}

impl Public {
    /// Builds the public step: for `rff-mmd`, the bandwidth (configured, or the median
    /// heuristic on one prior-predictive data set) and the frequencies, both from the public
    /// setup stream.
    ///
    /// # Errors
    /// Invalid sizes or simulator failures.
    pub fn new(cfg: &Config, model: Model) -> Result<Self> {
        let total = cfg.sampler.pairs().context("sampler.pairs is required")? as u64;
        let summary = match &cfg.distance {
            DistanceConfig::L2(_) => Summary::Raw,
            DistanceConfig::RffMmd(d) => {
                let rd = model.row_dim();
                let bandwidth = if let Some(b) = d.bandwidth {
                    b
                } else {
                    let mut rng = SimStream::with_domain(cfg.seeds.run, SETUP_DOMAIN, 0);
                    let sim = simulate_one(&model, &mut rng)?;
                    let rows = (sim.len() / rd).min(MEDIAN_ROWS);
                    let mut buf = vec![0.0; rows * rows.saturating_sub(1) / 2];
                    median_heuristic(Rows::new(&sim[..rows * rd], rd)?, rows, &mut buf)
                        .context("median heuristic bandwidth")?
                };
                let mut rng = SimStream::with_domain(cfg.seeds.run, SETUP_DOMAIN, 1);
                let z = (0..d.features / 2 * rd)
                    .map(|_| dpinfer::simulators::dist::std_normal(&mut rng))
                    .collect();
                Summary::Rff { z, bandwidth }
            }
        };
        Ok(Self {
            model,
            summary,
            seed: cfg.seeds.run,
            total,
            config_hash: cfg.public_hash(),
            kernel: None,
            replica: None,
        })
    }

    /// The random-feature map, for `rff-mmd`.
    ///
    /// # Errors
    /// Invalid frequencies or bandwidth.
    pub fn features(&self) -> Result<Option<RandomFourierFeatures<'_>>> {
        match &self.summary {
            Summary::Raw => Ok(None),
            Summary::Rff { z, bandwidth } => Ok(Some(RandomFourierFeatures::new(
                z,
                self.model.row_dim(),
                *bandwidth,
            )?)),
        }
    }

    /// dim θ.
    #[must_use]
    pub fn theta_dim(&self) -> usize {
        self.model.dim()
    }

    /// Summary length per row.
    #[must_use]
    pub fn summary_dim(&self) -> usize {
        match &self.summary {
            Summary::Raw => ModelSim(&self.model).output_dim(),
            Summary::Rff { z, .. } => 2 * (z.len() / self.model.row_dim()),
        }
    }

    /// Number of rows of a pseudo-data set (for the distance's sensitivity).
    #[must_use]
    pub fn pseudo_rows(&self) -> usize {
        ModelSim(&self.model).output_dim() / self.model.row_dim()
    }

    /// The generation whose rows [`Public::rows`] computes (0, or the kernel's population
    /// generation + 1).
    #[must_use]
    pub fn generation(&self) -> u32 {
        self.kernel.as_ref().map_or(0, |k| k.generation() + 1)
    }

    /// Computes rows `start..end` of this generation's table (θ then summary, row-major) with
    /// the library on a pool of `threads` workers (0 = all cores; an external model runs its
    /// own pool of `threads` worker processes), calling `progress` with the rows done.
    ///
    /// # Errors
    /// Simulator failures (a fatal one, or 1000 consecutive recoverable ones in a row).
    pub fn rows(
        &self,
        start: u64,
        end: u64,
        threads: usize,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f64>> {
        if start > end || end > self.total {
            bail!("row range {start}..{end} outside 0..{}", self.total);
        }
        let width = self.theta_dim() + self.summary_dim();
        let n = usize::try_from(end - start)?;
        let mut out = crate::limits::alloc_zeroed(
            n.checked_mul(width).context("pairs table size overflows")?,
            "the pairs table",
        )?;
        out.clear();
        if n == 0 {
            return Ok(out);
        }
        let prior = ModelPrior(&self.model);
        let proposal = match &self.kernel {
            None => Proposal::Prior(&prior),
            Some(kernel) => Proposal::Kernel {
                prior: &prior,
                kernel,
            },
        };
        let features = self.features()?;
        let failure = Mutex::new(None);
        let map = SummaryMap {
            features: features.as_ref(),
            row_dim: self.model.row_dim(),
            failure: &failure,
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .with_context(|| {
                format!("cannot start {threads} worker threads; use fewer --threads")
            })?;
        // Pieces for the progress bar (rows are independent: the split never changes a number).
        let piece = (n as u64 / 50).max(4096);
        let mut lo = start;
        while lo < end {
            let hi = end.min(lo + piece);
            let part = match (&self.model, &self.replica) {
                (Model::Command(m), None) => {
                    let sim = CommandRows {
                        model: m,
                        workers: resolve_threads(threads),
                        map,
                    };
                    PublicPairs::simulate(&proposal, &sim, self.seed, lo..hi)
                }
                _ => {
                    let sim = Summarized {
                        sim: Privatized::new(ModelSim(&self.model), self.replica),
                        map,
                    };
                    pool.install(|| {
                        PublicPairs::simulate_parallel(&proposal, &Rowless(&sim), self.seed, lo..hi)
                    })
                }
            };
            let part = match part {
                Ok(p) => p,
                Err(e) => {
                    let why = failure.lock().ok().and_then(|mut f| f.take());
                    match why {
                        Some(why) => bail!("simulating rows {lo}..{hi}: {why}"),
                        None => bail!(
                            "simulating rows {lo}..{hi}: {e} (a fatal model error, or 1000 \
                             consecutive θ draws of one row the simulator could not run)"
                        ),
                    }
                }
            };
            out.extend_from_slice(&part.to_table());
            progress(hi - lo);
            lo = hi;
        }
        Ok(out)
    }
}

/// The summary map of a table (RFF mean embedding or the raw output) and where a fatal
/// failure's message goes.
#[derive(Clone, Copy)]
struct SummaryMap<'a> {
    features: Option<&'a RandomFourierFeatures<'a>>,
    row_dim: usize,
    failure: &'a Mutex<Option<String>>,
}

impl SummaryMap<'_> {
    /// Summary length for a raw output of `raw` values.
    fn len(&self, raw: usize) -> usize {
        self.features
            .map_or(raw, RandomFourierFeatures::num_features)
    }

    /// Writes the summary of `sim` into `out`; a failure is recorded and fatal.
    fn apply(&self, sim: &[f64], out: &mut [f64]) -> Result<(), SimError> {
        let r = match self.features {
            None => {
                out.copy_from_slice(sim);
                Ok(())
            }
            Some(f) => Rows::new(sim, self.row_dim).and_then(|rows| f.mean_embedding(rows, out)),
        };
        r.map_err(|e| self.fail(format!("summary: {e}")))
    }

    /// Records a fatal failure (the library reports only that one happened).
    fn fail(&self, why: String) -> SimError {
        if let Ok(mut f) = self.failure.lock()
            && f.is_none()
        {
            *f = Some(why);
        }
        SimError::Model {
            code: 0,
            recoverable: false,
        }
    }
}

/// A simulator followed by the summary map: its output is the row's summary.
struct Summarized<'a, S> {
    sim: S,
    map: SummaryMap<'a>,
}

impl<S: Simulator> Simulator for Summarized<'_, S> {
    fn param_dim(&self) -> usize {
        self.sim.param_dim()
    }
    fn output_dim(&self) -> usize {
        self.map.len(self.sim.output_dim())
    }
    fn simulate<R: rand::Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        let mut sim = vec![0.0; self.sim.output_dim()];
        match self.sim.simulate(theta, rng, &mut sim) {
            Ok(()) => self.map.apply(&sim, out),
            Err(e) if e.is_recoverable() => Err(e),
            Err(e) => Err(self.map.fail(format!("simulation: {e}"))),
        }
    }
}

/// An external model's worker pool as a row simulator: each row's simulation seed is the
/// next draw of the row's stream (after its θ), sent with the table row id; a rejected θ is
/// a recoverable failure (redrawn from the same stream). Bit-identical to the per-row path
/// for any batch size and worker count.
struct CommandRows<'a> {
    model: &'a crate::declared::CommandModel,
    workers: usize,
    map: SummaryMap<'a>,
}

impl RowSimulator for CommandRows<'_> {
    fn row_param_dim(&self) -> usize {
        self.model.dim()
    }
    fn row_output_dim(&self) -> usize {
        self.map.len(self.model.output_dim())
    }
    fn simulate_rows(
        &self,
        rows: &[u64],
        thetas: &[f64],
        streams: &mut [SimStream],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        use crate::external::{Answer, Request};
        let d = self.model.dim();
        let k = self.row_output_dim();
        let requests: Vec<Request> = rows
            .iter()
            .zip(thetas.chunks_exact(d))
            .zip(streams.iter_mut())
            .map(|((&row, th), rng)| Request {
                row,
                seed: rng.next_u64(),
                theta: th.to_vec(),
            })
            .collect();
        let answers = self
            .model
            .pool
            .run(&requests, self.workers)
            .map_err(|e| self.map.fail(format!("{e:#}")))?;
        for ((a, o), flag) in answers.into_iter().zip(out.chunks_exact_mut(k)).zip(ok) {
            match a {
                Answer::Output(v) => {
                    self.map.apply(&v, o)?;
                    *flag = true;
                }
                Answer::Reject => *flag = false,
            }
        }
        Ok(())
    }
}

/// `threads`, with 0 meaning the available parallelism.
fn resolve_threads(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    } else {
        threads
    }
}

fn simulate_one(model: &Model, rng: &mut SimStream) -> Result<Vec<f64>> {
    let prior = ModelPrior(model);
    let simulator = ModelSim(model);
    let mut th = vec![0.0; prior.dim()];
    let mut sim = vec![0.0; simulator.output_dim()];
    for _ in 0..MAX_REDRAWS {
        prior
            .sample(rng, &mut th)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        match simulator.simulate(&th, rng, &mut sim) {
            Ok(()) => return Ok(sim),
            Err(e) if e.is_recoverable() => {}
            Err(e) => bail!("simulation: {e}"),
        }
    }
    bail!("{MAX_REDRAWS} consecutive prior draws the simulator could not run")
}
