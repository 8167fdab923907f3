//! Simulation-based calibration of a configured run (`dpinfer calibrate`,
//! `dpinfer.calibrate`): is the posterior this config reports at its ε honest?
//!
//! For replicates k = 0..K the engine of `dpinfer-calibration` draws θₖ from the config's
//! prior, [`Calibration`] simulates the confidential data xₖ at θₖ (one simulation, as the
//! embedded data set is one simulation at the true θ), applies the release's mechanism and
//! runs the configured sampler, and the engine ranks θₖ among L of the posterior draws.
//!
//! # Privacy
//!
//! A replicate is synthetic: nothing in it is private data, and a calibration run releases
//! nothing and claims nothing. Its mechanism noise therefore comes from a **public** seed,
//! two 64-bit numbers read from the replicate's `NOISE_STREAM` (`dpinfer_calibration`): the
//! same ChaCha20 generator a run with `seeds.noise = <integer>` uses ("reproducible, NOT
//! private"), never the operating system's entropy (the privacy-noise generator of a real
//! release). The config's `seeds.noise` is ignored.
//!
//! # One shape for every sampler
//!
//! The sampler family is chosen once, as [`run`](crate::run()) chooses it (a private pass over
//! a public pairs table, SMC-ABC, or an MCMC kernel), and each family is one `Sampler`
//! implementation that calls the code path of a real run: the pass of
//! [`crate::private`] (without its ledger), [`crate::smc::run`], [`crate::mcmc::run`]. The
//! replicate loop only sees the trait. The pairs passes (rejection, SVT-ABC, Gaussian ABCDP,
//! soft-ABC) share **one** public pairs table across all replicates: it depends on the config
//! and the run seed, never on the observed data.
//!
//! # Files
//!
//! The results folder holds `calibration.json` (the config's fingerprint and the settings:
//! results of another config or settings are refused), one `replicates-<i>-of-<n>.jsonl`
//! per shard (one finished replicate per line, appended and flushed as it finishes: an
//! interrupted run loses at most the replicates in flight, and a rerun computes only the
//! missing ones), and once all K replicates are present `summary.json` and the SVG plots.
//! Every `replicates-*.jsonl` file in the folder is read: copying the shard files of a
//! cluster run into one folder and running again merges them, bit-identical to one machine.

use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use dpinfer::abc::pairs::PublicPairs;
use dpinfer::simulators::{Prior as _, SimStream, Simulator as _};
use dpinfer_calibration::{
    self as sbc, MAX_BAND_CELLS, MIN_REPLICATES, Output, Problem, ReplicateError, ReplicateResult,
    Settings, Summary, SummaryOptions,
};
use dpinfer_ledger::files::{Replace, write_atomic};
use dpinfer_plots::{Chart, Series};
use rand::Rng as _;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::config::{Config, NoiseSeed, SamplerKind};
use crate::error::{Context as _, Result, bail, err};
use crate::model::{Model, ModelPrior, ModelSim};
use crate::observe::{Observer, Quiet};
use crate::private::noise_rng;
use crate::public::Public;
use crate::release::Mech;

/// Format tag of `calibration.json`.
const FORMAT: &str = "dpinfer-calibration-1";

/// What one replicate's sampler returned: θ rows, their weights, and whether they are the
/// successive states of Markov chains.
#[derive(Debug, Clone)]
pub struct Draws {
    /// Row-major θ.
    pub samples: Vec<f64>,
    /// Normalised weights (soft-ABC, SMC-ABC), else `None`.
    pub weights: Option<Vec<f64>>,
    /// `true` for MCMC output (thinned evenly), `false` for exchangeable or weighted draws.
    pub chain: bool,
}

/// A sampler family as one shape: (a replicate's config, the model, its released data) in,
/// a posterior sample out — through the same code path as a real run of that family.
trait Sampler: Send + Sync {
    fn sample(&self, cfg: &Config, model: &Model, obs: &[f64]) -> Result<Draws>;
}

/// The private passes over a public pairs table (and the rejection reference): the table is
/// simulated once and shared by every replicate.
struct Pairs {
    public: Public,
    pairs: PublicPairs,
}

impl Sampler for Pairs {
    fn sample(&self, cfg: &Config, _: &Model, obs: &[f64]) -> Result<Draws> {
        let r = crate::private::simulated_release(cfg, &self.public, &self.pairs, obs)?;
        Ok(Draws {
            samples: r.samples,
            weights: r.weights,
            chain: false,
        })
    }
}

/// SMC-ABC (on the privatized statistic when `privacy.release` is set).
struct Smc;

impl Sampler for Smc {
    fn sample(&self, cfg: &Config, model: &Model, obs: &[f64]) -> Result<Draws> {
        let o = crate::smc::run(cfg, model, obs, Path::new("."), 1, &Quiet)?;
        Ok(Draws {
            samples: o.samples,
            weights: o.weights,
            chain: false,
        })
    }
}

/// The MCMC kernels (RWMH, HMC, DP penalty, DP Barker, DP HMC).
struct Mcmc;

impl Sampler for Mcmc {
    fn sample(&self, cfg: &Config, model: &Model, obs: &[f64]) -> Result<Draws> {
        let o = crate::mcmc::run(cfg, model, obs, Path::new("."), &mut || Ok(()), &Quiet)?;
        Ok(Draws {
            samples: o.samples,
            weights: o.weights,
            chain: true,
        })
    }
}

/// A configured run as a calibration [`Problem`]: the config's prior and model, the release's
/// mechanism on public noise, the configured sampler.
pub struct Calibration {
    cfg: Config,
    model: Model,
    sampler: Box<dyn Sampler>,
    /// `privacy.release`'s mechanism, applied to the simulated statistic (SMC-ABC).
    mech: Option<Mech>,
    /// Seconds spent on the shared public pairs table (0 without one).
    pub table_seconds: f64,
    /// Rows of the shared public pairs table (0 without one).
    pub table_rows: u64,
}

impl core::fmt::Debug for Calibration {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Calibration")
            .field("model", &self.model.name())
            .field("sampler", &self.cfg.sampler.name())
            .field("table_rows", &self.table_rows)
            .finish_non_exhaustive()
    }
}

/// A replicate's release: the simulated data (the privatized statistic when the mechanism is
/// a statistic release) and the public seed of the sampler's own mechanism noise.
#[derive(Debug, Clone)]
pub struct Simulated {
    /// What the sampler conditions on.
    pub obs: Vec<f64>,
    /// Public seed of the pass's or chain's noise.
    pub noise: u64,
}

impl Calibration {
    /// Builds the model and the sampler of `cfg`; a pairs sampler simulates its public table
    /// here, once (`threads` workers, 0 = all cores; progress to `observer`).
    ///
    /// # Errors
    /// Models or samplers the config refuses; a sharded PMC (`smc-abc` with `sampler.pairs`),
    /// whose generations are files of a run folder.
    pub fn new(cfg: &Config, threads: usize, observer: &dyn Observer) -> Result<Self> {
        let threads = crate::run::check_threads(threads)?;
        let kind = cfg.kind();
        // The model is sized as a run sizes it (by the data file when one is given); the data
        // values themselves are never used.
        let model = crate::run::sized_model(cfg)?;
        let mut mech = None;
        let (mut table_seconds, mut table_rows) = (0.0, 0);
        let sampler: Box<dyn Sampler> = if kind.uses_pairs() {
            let t0 = Instant::now();
            let public = Public::new(cfg, model.clone())?;
            observer.start("simulating pairs", public.total);
            let rows = public.rows(0, public.total, threads, &|k| observer.advance(k));
            observer.finish();
            let rows = rows?;
            let pairs = PublicPairs::from_table(public.theta_dim(), public.summary_dim(), &rows)?;
            table_seconds = t0.elapsed().as_secs_f64();
            table_rows = public.total;
            observer.note(&format!(
                "public step: {} pairs in {table_seconds:.1} s, shared by every replicate",
                public.total
            ));
            Box::new(Pairs { public, pairs })
        } else if kind == SamplerKind::SmcAbc {
            if cfg.sampler.pairs().is_some() {
                bail!(
                    key = "sampler.pairs";
                    "sampler.pairs: calibrate runs smc-abc in-process; leave sampler.pairs out \
                     (the sharded PMC's generations are files of a run folder)"
                );
            }
            mech = crate::release::mechanism(cfg, &model)?.map(|(m, _)| m);
            if let Some(m) = &mech {
                // The release's cost must fit privacy.epsilon, as `dpinfer run` requires.
                crate::release::claim(m, model.output_len(), cfg.privacy.epsilon)?;
            }
            Box::new(Smc)
        } else if cfg.sampler.mcmc().is_some() {
            Box::new(Mcmc)
        } else {
            // The neural samplers (sppe, sple): a replicate would train a flow for every
            // simulated data set; their calibration is the neural crate's SBC example.
            bail!(
                key = "sampler.kind";
                "sampler.kind: calibrate does not run {} (each replicate would train a neural \
                 flow); calibrate the pairs, smc-abc or MCMC samplers",
                cfg.sampler.name()
            );
        };
        Ok(Self {
            cfg: cfg.clone(),
            model,
            sampler,
            mech,
            table_seconds,
            table_rows,
        })
    }

    /// The parameters' names: the model's declared ones, `θ[j]` when it has none.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        parameter_names(&self.model)
    }

    /// The prior's standard deviation per coordinate from the run's public prior draws (TARP's
    /// distance scales); `None` for a prior that cannot be sampled or a degenerate one.
    fn prior_sd(&self) -> Option<Vec<f64>> {
        use dpinfer::abc::weights::{weighted_covariance, weighted_mean};
        let d = self.dim();
        let draws = crate::run::prior_draws(&self.model, self.cfg.seeds.run)?;
        let w = vec![1.0; draws.len() / d.max(1)];
        let (mut mean, mut cov) = (vec![0.0; d], vec![0.0; d * d]);
        weighted_mean(&draws, d, &w, &mut mean).ok()?;
        weighted_covariance(&draws, d, &w, &mean, &mut cov).ok()?;
        let sd: Vec<f64> = (0..d).map(|j| cov[j * d + j].sqrt()).collect();
        sd.iter().all(|s| s.is_finite() && *s > 0.0).then_some(sd)
    }
}

impl Problem for Calibration {
    type Release = Simulated;
    type Error = crate::Error;

    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn prior(&self, rng: &mut SimStream, theta: &mut [f64]) -> Result<()> {
        ModelPrior(&self.model).sample(rng, theta)?;
        Ok(())
    }

    fn release(
        &self,
        theta: &[f64],
        data: &mut SimStream,
        noise: &mut SimStream,
    ) -> Result<Simulated> {
        let sim = ModelSim(&self.model);
        let mut x = vec![0.0; sim.output_dim()];
        sim.simulate(theta, data, &mut x)?;
        // Public seeds from the replicate's noise stream: one for a statistic release, one for
        // the sampler's own mechanism (a pass's or a chain's noise).
        let (release_seed, sampler_seed) = (noise.next_u64(), noise.next_u64());
        let obs = match &self.mech {
            Some(m) => {
                crate::release::privatize(m, &x, &mut noise_rng(NoiseSeed::Fixed(release_seed))?)?
            }
            None => x,
        };
        Ok(Simulated {
            obs,
            noise: sampler_seed,
        })
    }

    fn posterior(
        &self,
        release: &Simulated,
        rng: &mut SimStream,
        n: usize,
        out: &mut Vec<f64>,
    ) -> Result<()> {
        let mut cfg = self.cfg.clone();
        // The replicate's own sampler stream and public noise seed (a pairs table was
        // simulated once, before: its seed is the config's).
        cfg.seeds.run = rng.next_u64();
        cfg.seeds.noise = NoiseSeed::Fixed(release.noise);
        let d = self.sampler.sample(&cfg, &self.model, &release.obs)?;
        let output = match (&d.weights, d.chain) {
            (_, true) => Output::Chain,
            (Some(w), false) => Output::Weighted(w),
            (None, false) => Output::Exchangeable,
        };
        sbc::pick_draws(&d.samples, self.dim(), output, n, rng, out).map_err(|e| match e {
            sbc::CalibrationError::LengthMismatch {
                name: "released draws",
                expected,
                found,
            } => err!(
                key = "draws";
                "the sampler released {found} draws, fewer than the {expected} kept per \
                 replicate (--draws × --thin): ask for fewer draws or let the sampler accept more"
            ),
            e => e.into(),
        })
    }
}

/// How to calibrate: K, L, thinning, the family-wise α, the shard and the threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// K, the number of replicates (≥ 10 for a summary).
    pub replicates: u64,
    /// L, the posterior draws kept per replicate (ranks in 0..=L).
    pub draws: u32,
    /// Thinning: `draws · thin` draws are asked of the sampler, every `thin`-th kept.
    pub thin: u32,
    /// Family-wise level of the uniformity tests after Holm's adjustment.
    pub alpha: f64,
    /// This process's shard `i` of `n` (replicates `shard_range(K, i, n)`).
    pub shard: (u32, u32),
    /// Worker threads (0 = all cores); results do not depend on it.
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            replicates: 200,
            draws: 19,
            thin: 1,
            alpha: 0.05,
            shard: (0, 1),
            threads: 0,
        }
    }
}

/// `calibration.json`: what the stored replicates were computed for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    format: String,
    /// Fingerprint of the model, sampler, privacy and distance settings and the run seed.
    fingerprint: String,
    settings: Settings,
}

/// `summary.json`: the summary of a calibration run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Model name.
    pub model: String,
    /// Sampler kind.
    pub sampler: String,
    /// The configured ε (`None`: the sampler is not private, ε = ∞).
    pub epsilon: Option<f64>,
    /// The configured δ (private samplers).
    pub delta: Option<f64>,
    /// Names of θ's coordinates.
    pub parameters: Vec<String>,
    /// The replicate settings (seed, L, thinning, TARP scales).
    pub settings: Settings,
    /// The multiple-testing rule applied to the per-parameter p-values.
    pub multiple_testing: String,
    /// The verdict line (starts with `WARNING:` when over-confident).
    pub verdict_line: String,
    /// Everything the statistics report (ranks' histograms, tests, bands, TARP, verdict).
    pub summary: Summary,
}

impl Report {
    /// A table of the tests and the verdict line, as `dpinfer calibrate` prints it.
    #[must_use]
    pub fn text(&self) -> String {
        use core::fmt::Write as _;
        let mut s = String::new();
        let eps = self
            .epsilon
            .map_or_else(|| "∞ (not private)".to_string(), |e| format!("{e}"));
        let _ = writeln!(
            s,
            "calibration of {} on {} at ε = {eps}: K = {} replicates, L = {} draws",
            self.sampler, self.model, self.summary.replicates, self.summary.draws
        );
        let _ = writeln!(
            s,
            "{:<14} {:>9} {:>10} {:>11} {:>9}  status",
            "parameter", "p-value", "Holm p", "dispersion", "cov 90%"
        );
        let row = |s: &mut String, name: &str, u: &sbc::Uniformity, cov: Option<f64>| {
            let _ = writeln!(
                s,
                "{name:<14} {:>9.4} {:>10.4} {:>+11.4} {:>9}  {:?}",
                u.test.p_value,
                u.p_holm,
                u.dispersion,
                cov.map_or_else(|| "-".into(), |c| format!("{c:.3}")),
                u.status
            );
        };
        for (name, p) in self.parameters.iter().zip(&self.summary.parameters) {
            let cov = p
                .coverage
                .iter()
                .find(|(l, _)| (*l - 0.9).abs() < 1e-12)
                .map(|&(_, c)| c);
            row(&mut s, name, &p.uniformity, cov);
        }
        row(&mut s, "TARP", &self.summary.tarp.uniformity, None);
        let _ = writeln!(s, "multiple testing: {}", self.multiple_testing);
        let _ = write!(s, "{}", self.verdict_line);
        s
    }
}

/// What [`run`] did.
#[derive(Debug, Clone)]
pub struct Done {
    /// The summary, once all K replicates are in the folder.
    pub report: Option<Report>,
    /// Replicates of `0..K` in the folder now.
    pub present: u64,
    /// Replicates this call computed.
    pub computed: u64,
    /// Replicates of this shard found finished (not recomputed).
    pub reused: u64,
    /// Seconds spent on the shared pairs table (0 without one or when nothing was computed).
    pub table_seconds: f64,
    /// Seconds spent computing replicates.
    pub replicate_seconds: f64,
}

/// The names a report shows: the model's declared names, `θ[j]` for every coordinate when
/// it does not declare one non-empty name per coordinate.
fn parameter_names(model: &Model) -> Vec<String> {
    let names = model.names();
    if names.len() == model.dim() && names.iter().all(|n| !n.is_empty()) {
        names
    } else {
        (0..model.dim()).map(|j| format!("θ[{j}]")).collect()
    }
}

/// The name of shard `i` of `n`'s replicate file.
#[must_use]
pub fn replicate_file_name(i: u32, n: u32) -> String {
    format!("replicates-{i:05}-of-{n:05}.jsonl")
}

/// The fingerprint of what the replicates depend on: the model, sampler, privacy and
/// distance settings, the run seed (of a pairs table) and the model's output size.
fn fingerprint(cfg: &Config) -> Result<String> {
    let settings = (
        &cfg.model,
        &cfg.sampler,
        &cfg.privacy,
        &cfg.distance,
        cfg.seeds.run,
        cfg.data.path.is_some(),
    );
    Ok(dpinfer_ledger::fingerprint(&[], &[], &settings)?.into())
}

/// Reads every `replicates-*.jsonl` in `dir`. A last line without its newline (a write cut
/// short) is ignored; any other unreadable line is an error.
fn read_results(dir: &Path) -> Result<Vec<ReplicateResult>> {
    let mut all = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(all),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("replicates-") && n.ends_with(".jsonl"))
        })
        .collect();
    paths.sort();
    for path in paths {
        let text = dpinfer_ledger::files::read_bounded(&path, "replicate results", None)?;
        let text = String::from_utf8(text)
            .map_err(|_| err!(Data, "{} is not UTF-8 text", path.display()))?;
        let complete = text.rfind('\n').map_or(0, |i| i + 1);
        for (n, line) in text[..complete].lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let r: ReplicateResult = serde_json::from_str(line).map_err(|e| {
                err!(
                    Data,
                    "{} line {}: not a replicate result ({e})",
                    path.display(),
                    n + 1
                )
            })?;
            all.push(r);
        }
    }
    Ok(all)
}

/// Opens this shard's replicate file for appending, cutting a last line left without its
/// newline by an interrupted write.
fn open_shard_file(path: &Path) -> Result<fs::File> {
    let mut f = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let mut text = Vec::new();
    f.read_to_end(&mut text)?;
    let complete = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete < text.len() {
        f.set_len(complete as u64)?;
        f.seek(std::io::SeekFrom::End(0))?;
    }
    Ok(f)
}

/// Calibrates `cfg` into the folder `dir`: computes the replicates of this shard that are not
/// there yet (each line flushed to disk as it finishes), and — when the folder then holds all
/// K — writes `summary.json` and the plots and returns the report. Progress to `observer`.
///
/// # Errors
/// Invalid options, a folder holding results of another config or settings, conflicting
/// results, a replicate's failure (the replicates finished before it are kept), I/O.
pub fn run(cfg: &Config, dir: &Path, options: &Options, observer: &dyn Observer) -> Result<Done> {
    let Options {
        replicates: k,
        draws,
        thin,
        alpha,
        shard: (i, n),
        threads,
    } = *options;
    if k < MIN_REPLICATES as u64 || k > u64::from(u32::MAX) {
        bail!(
            key = "replicates";
            "--replicates must be in {MIN_REPLICATES}..={} (got {k}): a summary needs at least {MIN_REPLICATES}",
            u32::MAX
        );
    }
    if n == 0 || i >= n || u64::from(n) > k {
        bail!(
            key = "shard";
            "--shard must be in 0..--shards and --shards in 1..=--replicates (got shard {i} of {n}, {k} replicates)"
        );
    }
    dpinfer::math::check::open_unit("alpha", alpha)
        .map_err(|_| err!(key = "alpha"; "--alpha must be in (0, 1), got {alpha}"))?;
    if u64::from(draws).saturating_mul(k + 1) > MAX_BAND_CELLS {
        bail!(
            key = "draws";
            "--draws {draws} × (--replicates {k} + 1) is above the summary's limit of {MAX_BAND_CELLS} band cells"
        );
    }
    let threads = crate::run::check_threads(threads)?;
    let mut settings = Settings::new(cfg.seeds.run, draws, thin)
        .map_err(|e| err!(key = "draws"; "--draws and --thin must be ≥ 1 ({e})"))?;

    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let header_path = dir.join("calibration.json");
    let fp = fingerprint(cfg)?;
    let existing = sbc::merge([read_results(dir)?])?;
    // A header without results (a run that failed before its first replicate) protects
    // nothing: it is replaced.
    let stored: Option<Header> = match fs::read(&header_path) {
        Ok(_) if existing.is_empty() => None,
        Ok(b) => Some(
            serde_json::from_slice(&b)
                .with_context(|| format!("reading {}", header_path.display()))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", header_path.display())),
    };
    if let Some(h) = &stored {
        if h.format != FORMAT || h.fingerprint != fp {
            bail!(
                Data,
                "{} holds replicates of another configuration; use another folder (--out)",
                dir.display()
            );
        }
        if (h.settings.seed(), h.settings.draws(), h.settings.thin())
            != (cfg.seeds.run, draws, thin)
        {
            bail!(
                Data,
                "{} holds replicates with other settings (seed {}, --draws {}, --thin {}); use \
                 another folder (--out)",
                dir.display(),
                h.settings.seed(),
                h.settings.draws(),
                h.settings.thin()
            );
        }
    }

    let have: BTreeSet<u64> = existing.iter().map(|r| r.index).collect();
    let (start, end) = dpinfer_ledger::shard::shard_range(k, i, n);
    let todo: Vec<u64> = (start..end).filter(|x| !have.contains(x)).collect();
    let reused = (end - start) - todo.len() as u64;

    let mut fresh: Vec<ReplicateResult> = Vec::new();
    let (mut table_seconds, mut replicate_seconds) = (0.0, 0.0);
    let mut names = None;
    if !todo.is_empty() {
        if reused > 0 {
            observer.note(&format!(
                "{reused} of this shard's {} replicates are finished already; computing the other {}",
                end - start,
                todo.len()
            ));
        }
        let problem = Calibration::new(cfg, threads, observer)?;
        table_seconds = problem.table_seconds;
        names = Some(problem.names());
        if let Some(sd) = problem.prior_sd() {
            settings = settings.with_tarp_scale(sd)?;
        }
        match &stored {
            Some(h) if h.settings != settings => bail!(
                Data,
                "{} holds replicates with other TARP scales; use another folder (--out)",
                dir.display()
            ),
            Some(_) => {}
            None => {
                let h = Header {
                    format: FORMAT.into(),
                    fingerprint: fp.clone(),
                    settings: settings.clone(),
                };
                write_atomic(
                    &header_path,
                    &serde_json::to_vec_pretty(&h)?,
                    Replace::Owned,
                )?;
            }
        }
        let t0 = Instant::now();
        fresh = compute(&problem, &settings, &todo, threads, dir, (i, n), observer)?;
        replicate_seconds = t0.elapsed().as_secs_f64();
    }

    let all = sbc::merge([existing, fresh.clone()])?;
    let results: Vec<ReplicateResult> = all.into_iter().filter(|r| r.index < k).collect();
    let present = results.len() as u64;
    let mut done = Done {
        report: None,
        present,
        computed: fresh.len() as u64,
        reused,
        table_seconds,
        replicate_seconds,
    };
    if present < k {
        return Ok(done);
    }
    let stored = match stored {
        Some(h) => h,
        None => serde_json::from_slice(
            &fs::read(&header_path)
                .with_context(|| format!("reading {}", header_path.display()))?,
        )?,
    };
    let names = match names {
        Some(n) => n,
        None => parameter_names(&crate::run::sized_model(cfg)?),
    };
    let summary = Summary::new(
        &results,
        &SummaryOptions {
            alpha,
            ..SummaryOptions::default()
        },
    )?;
    let private = cfg.kind().is_private() || cfg.privacy.release.is_some();
    let report = Report {
        model: cfg.model.name.clone(),
        sampler: cfg.sampler.name().into(),
        epsilon: private.then_some(cfg.privacy.epsilon),
        delta: (private && cfg.kind().needs_delta()).then_some(cfg.privacy.delta),
        settings: stored.settings,
        multiple_testing: format!(
            "Holm's step-down rule over the {} parameters and TARP, family-wise α = {alpha}; \
             p-values of the ECDF uniformity test (Säilynoja et al. 2022) by {} simulations",
            summary.parameters.len(),
            summary.options.band_sims
        ),
        verdict_line: summary.named(&names).to_string(),
        parameters: names,
        summary,
    };
    write_outputs(dir, &report)?;
    done.report = Some(report);
    Ok(done)
}

/// Computes the replicates `todo` on `threads` workers, appending each finished one to this
/// shard's file (one line, flushed and synced) as it arrives. On a failure the replicates in
/// flight finish, the rest are skipped, and the first error is returned.
fn compute(
    problem: &Calibration,
    settings: &Settings,
    todo: &[u64],
    threads: usize,
    dir: &Path,
    (i, n): (u32, u32),
    observer: &dyn Observer,
) -> Result<Vec<ReplicateResult>> {
    let path = dir.join(replicate_file_name(i, n));
    let mut file = open_shard_file(&path)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(crate::public::resolve_threads(threads))
        .build()?;
    let stop = AtomicBool::new(false);
    let (tx, rx) =
        mpsc::channel::<core::result::Result<ReplicateResult, ReplicateError<crate::Error>>>();
    let mut out = Vec::with_capacity(todo.len());
    let mut first: Option<crate::Error> = None;
    observer.start("calibrating", todo.len() as u64);
    pool.in_place_scope(|s| {
        let stop = &stop;
        s.spawn(move |_| {
            todo.par_iter().for_each_with(tx, |tx, &k| {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let r = sbc::run_replicate(problem, settings, k);
                if r.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
                let _ = tx.send(r);
            });
        });
        for r in rx {
            let stored = r
                .map_err(|e| match e {
                    ReplicateError::Problem { index, error } => {
                        error.context(format!("replicate {index}"))
                    }
                    ReplicateError::Calibration(e) => e.into(),
                    e => err!(Internal, "{e}"),
                })
                .and_then(|res| {
                    let mut line = serde_json::to_vec(&res)?;
                    line.push(b'\n');
                    file.write_all(&line)
                        .and_then(|()| file.sync_data())
                        .with_context(|| format!("writing {}", path.display()))?;
                    Ok(res)
                });
            match stored {
                Ok(res) => {
                    out.push(res);
                    observer.advance(1);
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    first.get_or_insert(e);
                }
            }
        }
    });
    observer.finish();
    match first {
        Some(e) => Err(e.context(format!(
            "calibrating ({} finished replicates kept in {})",
            out.len(),
            path.display()
        ))),
        None => Ok(out),
    }
}

/// File-name-safe form of a parameter name.
fn stem(name: &str, j: usize) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || name == format!("θ[{j}]") {
        format!("theta{j}")
    } else {
        s
    }
}

/// `summary.json`, per parameter a rank histogram and an ECDF-difference plot with the
/// simultaneous band, and the TARP expected-coverage curve.
fn write_outputs(dir: &Path, report: &Report) -> Result<()> {
    let s = &report.summary;
    let mut json = serde_json::to_vec_pretty(report)?;
    json.push(b'\n');
    write_atomic(&dir.join("summary.json"), &json, Replace::Owned)?;
    let l1 = f64::from(s.draws) + 1.0;
    let z: Vec<f64> = s.band.iter().map(|b| b.0).collect();
    for (j, (name, p)) in report.parameters.iter().zip(&s.parameters).enumerate() {
        let bins = p.histogram.len();
        let width = l1 / bins as f64;
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for (b, &c) in p.histogram.iter().enumerate() {
            x.extend([b as f64 * width, (b + 1) as f64 * width]);
            y.extend([c as f64, c as f64]);
        }
        let expected = s.replicates as f64 / bins as f64;
        let hist = Chart {
            stem: format!("ranks-{}", stem(name, j)),
            title: format!(
                "SBC rank histogram of {name} (K = {}, L = {})",
                s.replicates, s.draws
            ),
            xlabel: "rank of the prior draw among the posterior draws".into(),
            ylabel: "replicates".into(),
            series: vec![
                Series::new("ranks", x, y),
                Series::new("uniform", vec![0.0, l1], vec![expected, expected]),
            ],
            log_y: false,
        };
        let ecdf = Chart {
            stem: format!("ecdf-{}", stem(name, j)),
            title: format!(
                "ECDF difference of {name}'s ranks, {:.0} % simultaneous band",
                100.0 * s.options.band_level
            ),
            xlabel: "fractional rank z".into(),
            ylabel: "ECDF(z) − z".into(),
            series: vec![
                Series::new("ECDF − z", z.clone(), p.uniformity.test.ecdf_diff.clone()),
                Series::new(
                    "band lower",
                    z.clone(),
                    s.band.iter().map(|b| b.1).collect(),
                ),
                Series::new(
                    "band upper",
                    z.clone(),
                    s.band.iter().map(|b| b.2).collect(),
                ),
            ],
            log_y: false,
        };
        for c in [hist, ecdf] {
            write_atomic(
                &dir.join(format!("{}.svg", c.stem)),
                c.svg()?.as_bytes(),
                Replace::Owned,
            )?;
        }
    }
    let (a, ecp): (Vec<f64>, Vec<f64>) = s.tarp.curve.iter().copied().unzip();
    let tarp = Chart {
        stem: "tarp".into(),
        title: "TARP expected coverage".into(),
        xlabel: "credibility level".into(),
        ylabel: "expected coverage".into(),
        series: vec![
            Series::new("ECP", a, ecp),
            Series::new("calibrated", vec![0.0, 1.0], vec![0.0, 1.0]),
        ],
        log_y: false,
    };
    write_atomic(
        &dir.join("tarp.svg"),
        tarp.svg()?.as_bytes(),
        Replace::Owned,
    )?;
    Ok(())
}
