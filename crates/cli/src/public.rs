//! The public simulation step: the table of (θ, summary) pairs.
//!
//! Row `j` of generation `g` is drawn from `SimStream::with_domain(run_seed, PAIRS_DOMAIN + g, j)`
//! (prior draw, then simulation, redrawing θ from the same stream after a recoverable
//! simulator failure), and then reduced to its summary: the random-feature mean embedding of
//! the pseudo-data set (`rff-mmd`) or the simulator output itself (`l2`). No private data is
//! touched, so rows can be computed anywhere, in any order, by any number of workers, and the
//! table is the same bit for bit.

use anyhow::{Context, Result, bail};
use dpinfer::distances::{RandomFourierFeatures, Rows, median_heuristic};
use dpinfer::simulators::{Prior, SimStream, Simulator};

use crate::config::Config;
use crate::model::{Model, ModelPrior, ModelSim};

/// Stream domain base of the pairs table (plus the generation).
pub const PAIRS_DOMAIN: u64 = 0x5041_4952_0000_0000; // "PAIR"
/// Stream domain of the public setup (bandwidth data set, random frequencies).
pub const SETUP_DOMAIN: u64 = 0x5345_5455_0000_0000; // "SETU"
/// Recoverable simulator failures tolerated per row before the run fails.
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
    pub kernel: Option<crate::pmc::Kernel>,
    /// SMC-ABC on a privatized statistic: the public replica applied to every simulation.
    pub replica: Option<crate::release::Replica>,
}

impl Public {
    /// Builds the public step: for `rff-mmd`, the bandwidth (configured, or the median
    /// heuristic on one prior-predictive data set) and the frequencies, both from the public
    /// setup stream.
    ///
    /// # Errors
    /// Invalid sizes or simulator failures.
    pub fn new(cfg: &Config, model: Model) -> Result<Self> {
        let total = cfg.sampler.pairs.context("sampler.pairs is required")? as u64;
        let summary = match cfg.distance.kind.as_str() {
            "l2" => Summary::Raw,
            _ => {
                let rd = model.row_dim();
                let bandwidth = if let Some(b) = cfg.distance.bandwidth {
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
                let z = (0..cfg.distance.features / 2 * rd)
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

    /// Computes rows `start..end` of generation `generation` (θ then summary, row-major),
    /// with `threads` workers (0 = available parallelism) and a progress callback.
    ///
    /// # Errors
    /// Simulator failures (a fatal one, or 1000 consecutive recoverable ones in a row).
    pub fn rows(
        &self,
        generation: u32,
        start: u64,
        end: u64,
        threads: usize,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f64>> {
        if start > end || end > self.total {
            bail!("row range {start}..{end} outside 0..{}", self.total);
        }
        if let (Model::Command(m), None) = (&self.model, &self.replica) {
            return self.rows_external(m, generation, start, end, threads, progress);
        }
        let width = self.theta_dim() + self.summary_dim();
        let n = usize::try_from(end - start)?;
        let mut out = crate::limits::alloc_zeroed(
            n.checked_mul(width).context("pairs table size overflows")?,
            "the pairs table",
        )?;
        let threads = resolve_threads(threads).clamp(1, n.max(1));
        let per = n.div_ceil(threads).max(1);
        let features = self.features()?;
        let results: Vec<Result<()>> = std::thread::scope(|s| {
            let handles: Vec<_> = out
                .chunks_mut(per * width)
                .enumerate()
                .map(|(k, chunk)| {
                    let first = start + (k * per) as u64;
                    let features = features.as_ref();
                    std::thread::Builder::new().spawn_scoped(s, move || -> Result<()> {
                        let mut sim = vec![0.0; ModelSim(&self.model).output_dim()];
                        for (i, row) in chunk.chunks_exact_mut(width).enumerate() {
                            let j = first + i as u64;
                            self.row(generation, j, features, &mut sim, row)?;
                            progress(1);
                        }
                        Ok(())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h
                        .join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a simulation worker failed"))),
                    Err(e) => Err(anyhow::anyhow!(
                        "cannot start {threads} worker threads ({e}); use fewer --threads"
                    )),
                })
                .collect()
        });
        for r in results {
            r?;
        }
        Ok(out)
    }

    /// [`Public::rows`] for an external simulator: the same per-row streams, θ draws and
    /// redraws as the in-process path (θ, then the row's simulation seed from the same stream;
    /// a rejected θ is redrawn from it), with the simulations sent in batches to a pool of
    /// `threads` worker processes. Bit-identical to the per-row path for any batch size and
    /// worker count.
    fn rows_external(
        &self,
        m: &crate::declared::CommandModel,
        generation: u32,
        start: u64,
        end: u64,
        threads: usize,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f64>> {
        use crate::external::{Answer, Request};
        use rand::Rng as _;
        /// Rows simulated per round trip to the pool (bounds memory, paces progress).
        const BLOCK: u64 = 16_384;
        let d = self.theta_dim();
        let width = d + self.summary_dim();
        let workers = resolve_threads(threads);
        let features = self.features()?;
        let mut out = Vec::with_capacity(usize::try_from(end - start)? * width);
        let mut lo = start;
        while lo < end {
            let hi = (lo + BLOCK).min(end);
            let n = usize::try_from(hi - lo)?;
            let mut rngs: Vec<SimStream> = (lo..hi)
                .map(|j| SimStream::with_domain(self.seed, PAIRS_DOMAIN + u64::from(generation), j))
                .collect();
            let mut thetas = vec![0.0; n * d];
            let mut sims: Vec<Option<Vec<f64>>> = vec![None; n];
            let mut pending: Vec<usize> = (0..n).collect();
            for _ in 0..MAX_REDRAWS {
                if pending.is_empty() {
                    break;
                }
                let mut requests = Vec::with_capacity(pending.len());
                for &i in &pending {
                    let j = lo + i as u64;
                    let th = &mut thetas[i * d..(i + 1) * d];
                    crate::pmc::draw_theta(self, &mut rngs[i], th)
                        .with_context(|| format!("row {j}"))?;
                    requests.push(Request {
                        row: j,
                        seed: rngs[i].next_u64(),
                        theta: th.to_vec(),
                    });
                }
                let answers = m.pool.run(&requests, workers)?;
                let mut still = Vec::new();
                for (&i, a) in pending.iter().zip(answers) {
                    match a {
                        Answer::Output(v) => {
                            sims[i] = Some(v);
                            progress(1);
                        }
                        Answer::Reject => still.push(i),
                    }
                }
                pending = still;
            }
            if let Some(&i) = pending.first() {
                bail!(
                    "row {}: {MAX_REDRAWS} consecutive θ draws the simulator rejected",
                    lo + i as u64
                );
            }
            let mut summ = vec![0.0; self.summary_dim()];
            for (i, sim) in sims.into_iter().enumerate() {
                let sim = sim.context("internal: a row without a simulation")?;
                out.extend_from_slice(&thetas[i * d..(i + 1) * d]);
                match &features {
                    None => out.extend_from_slice(&sim),
                    Some(f) => {
                        f.mean_embedding(Rows::new(&sim, self.model.row_dim())?, &mut summ)?;
                        out.extend_from_slice(&summ);
                    }
                }
            }
            lo = hi;
        }
        Ok(out)
    }

    fn row(
        &self,
        generation: u32,
        j: u64,
        features: Option<&RandomFourierFeatures<'_>>,
        sim: &mut [f64],
        row: &mut [f64],
    ) -> Result<()> {
        let d = self.theta_dim();
        let (th, summ) = row.split_at_mut(d);
        let mut rng = SimStream::with_domain(self.seed, PAIRS_DOMAIN + u64::from(generation), j);
        let simulator = crate::release::WithReplica {
            model: &self.model,
            replica: self.replica,
        };
        let mut ok = false;
        for _ in 0..MAX_REDRAWS {
            crate::pmc::draw_theta(self, &mut rng, th).with_context(|| format!("row {j}"))?;
            match simulator.simulate(th, &mut rng, sim) {
                Ok(()) => {
                    ok = true;
                    break;
                }
                Err(e) if e.is_recoverable() => {}
                Err(e) => bail!("simulation of row {j}: {e}"),
            }
        }
        if !ok {
            bail!("row {j}: {MAX_REDRAWS} consecutive prior draws the simulator could not run");
        }
        match features {
            None => summ.copy_from_slice(sim),
            Some(f) => f.mean_embedding(Rows::new(sim, self.model.row_dim())?, summ)?,
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
