//! The public simulation step: the table of (θ, summary) pairs, computed by the library
//! (`dpinfer::abc::pairs::PublicPairs::simulate`, on the rayon pool).
//!
//! Row `j` of generation `g` is drawn from `SimStream::with_domain(run_seed,
//! pairs_domain(g), j)` — the library's stream domain, so `dpinfer simulate` and a library
//! user produce the same table for the same seed — (prior or PMC-kernel draw, then
//! simulation, redrawing θ from the same stream after a recoverable simulator failure), and
//! then reduced to its summary: the random-feature mean embedding of the pseudo-data set
//! (`rff-mmd`, the library's `dpinfer::abc::summary::Embedded`) or the simulator output
//! itself (`l2`). No private data is touched, so rows can
//! be computed anywhere, in any order, by any number of workers, and the table is the same
//! bit for bit.

use crate::error::{Context, Result, bail};
use dpinfer::abc::pairs::{Proposal, PublicPairs};
use dpinfer::abc::pmc::PmcKernel;
use dpinfer::abc::smc::{Privatized, Replicate};
use dpinfer::abc::summary::{Bandwidth, Embedded, RffSummary};
use dpinfer::distances::RandomFourierFeatures;
use dpinfer::simulators::Rowless;
use dpinfer::simulators::Simulator;

use crate::config::{Config, DistanceConfig};
use crate::model::{BuildModel as _, Model, ModelPrior, ModelSim};
use dpinfer_ledger::shard::ShardHeader;

/// How a simulation becomes the row's summary.
#[derive(Debug, Clone)]
pub enum Summary {
    /// The simulator output is the summary vector.
    Raw,
    /// The random-feature mean embedding of a Gaussian kernel (public frequencies and
    /// bandwidth from the run seed: `dpinfer::abc::summary`).
    Rff(RffSummary),
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
    /// Hash of what determines the table ([`Config::table_hash`]: model, summary map, rows,
    /// run seed; and, for SMC generation g ≥ 1, population g−1), written into its shards.
    pub config_hash: u64,
    /// The hash tables written before issue 31 carry for this config
    /// ([`Config::legacy_public_hash`], likewise with the population): still accepted.
    pub legacy_hash: u64,
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
        let total =
            cfg.sampler.pairs().ok_or_else(
                || crate::error::err!(key = "sampler.pairs"; "sampler.pairs is required"),
            )? as u64;
        let summary = match &cfg.distance {
            DistanceConfig::L2(_) => Summary::Raw,
            DistanceConfig::RffMmd(d) => {
                let bandwidth = d
                    .bandwidth
                    .map_or(Bandwidth::MedianHeuristic, Bandwidth::Given);
                let rff = RffSummary::setup(
                    &ModelPrior(&model),
                    &ModelSim(&model),
                    cfg.seeds.run,
                    model.row_dim(),
                    d.features,
                    bandwidth,
                )
                .map_err(|e| model.explain(e.into(), "public random-feature setup"))?
                .with_kernel_version(d.kernel_version()?);
                Summary::Rff(rff)
            }
        };
        // A data file that sizes the model (no `model.n`) sizes its pseudo-data sets.
        let data_n = (cfg.model.n.is_none() && cfg.data.path.is_some() && model.iid_rows())
            .then(|| model.output_len() / model.row_dim().max(1));
        Ok(Self {
            config_hash: cfg.table_hash(data_n),
            legacy_hash: cfg.legacy_public_hash(),
            model,
            summary,
            seed: cfg.seeds.run,
            total,
            kernel: None,
            replica: None,
        })
    }

    /// Whether the table of shard header `h` is this step's table (or a range of it): the
    /// same determinants ([`Config::table_hash`], or the hash of an earlier version for this
    /// config), run seed, rows, θ and summary widths. `Err` names what differs.
    ///
    /// # Errors
    /// What differs, in words.
    pub fn fits(&self, h: &ShardHeader) -> core::result::Result<(), String> {
        let mut differs = Vec::new();
        if h.run_seed != self.seed {
            differs.push(format!(
                "run seed {} (this config: {})",
                h.run_seed, self.seed
            ));
        }
        if h.total_rows != self.total {
            differs.push(format!(
                "{} pairs (this config: sampler.pairs = {})",
                h.total_rows, self.total
            ));
        }
        let (t, s) = (self.theta_dim(), self.summary_dim());
        if h.theta_dim as usize != t || h.out_dim as usize != s {
            differs.push(format!(
                "rows of θ ({}) + summary ({}) values (this config: {t} + {s})",
                h.theta_dim, h.out_dim
            ));
        }
        if differs.is_empty()
            && h.config_hash != self.config_hash
            && h.config_hash != self.legacy_hash
        {
            differs.push(format!(
                "the model, prior, summary or distance features (table hash {:016x}, this \
                 config {:016x})",
                h.config_hash, self.config_hash
            ));
        }
        if differs.is_empty() {
            Ok(())
        } else {
            Err(differs.join("; "))
        }
    }

    /// The random-feature map, for `rff-mmd`.
    ///
    /// # Errors
    /// Invalid frequencies or bandwidth.
    pub fn features(&self) -> Result<Option<RandomFourierFeatures<'_>>> {
        match &self.summary {
            Summary::Raw => Ok(None),
            Summary::Rff(rff) => Ok(Some(rff.features()?)),
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
            Summary::Rff(rff) => rff.num_features(),
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
        let row_dim = self.model.row_dim();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .with_context(|| {
                format!("cannot start {threads} worker threads; use fewer --threads")
            })?;
        let command = match (&self.model, &self.replica) {
            (Model::User(m), None) => Some(m),
            _ => None,
        };
        if let Some(m) = command {
            // Start every worker now: their start-up (a Python worker imports numpy and
            // pyarrow) overlaps the θ draws of the first block.
            m.sim.pool().start(resolve_threads(threads))?;
        }
        let built_in = Privatized::new(ModelSim(&self.model), self.replica);
        // Pieces for the progress bar (rows are independent: the split never changes a number).
        let piece = (n as u64 / 50).max(4096);
        let mut lo = start;
        while lo < end {
            let hi = end.min(lo + piece);
            let part = match (command, &features) {
                (Some(m), None) => PublicPairs::simulate(
                    &proposal,
                    &m.sim.on(resolve_threads(threads)),
                    self.seed,
                    lo..hi,
                ),
                (Some(m), Some(f)) => {
                    let sim = Embedded::rows(m.sim.on(resolve_threads(threads)), f, row_dim)?;
                    PublicPairs::simulate(&proposal, &sim, self.seed, lo..hi)
                }
                (None, None) => pool.install(|| {
                    PublicPairs::simulate_parallel(
                        &proposal,
                        &Rowless(&built_in),
                        self.seed,
                        lo..hi,
                    )
                }),
                (None, Some(f)) => {
                    let sim = Embedded::new(&built_in, f, row_dim)?;
                    pool.install(|| {
                        PublicPairs::simulate_parallel(&proposal, &Rowless(&sim), self.seed, lo..hi)
                    })
                }
            };
            let part = match part {
                Ok(p) => p,
                // An external model keeps the typed error of a failed batch (rows, exit
                // status, stderr tail); the library reports the `SimError` it was given.
                // Typed: `Error::Worker` or `Error::Abc` (carrying the `SimError`).
                Err(e) => {
                    let cause = match command.and_then(|m| m.take_error()) {
                        Some(why) => crate::error::Error::from(why),
                        None => crate::error::Error::from(e),
                    };
                    return Err(cause.context(format!("simulating rows {lo}..{hi}")));
                }
            };
            out.extend_from_slice(&part.to_table());
            progress(hi - lo);
            lo = hi;
        }
        Ok(out)
    }
}

/// `threads`, with 0 meaning the available parallelism.
pub(crate) fn resolve_threads(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    } else {
        threads
    }
}
