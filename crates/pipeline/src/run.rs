//! Whole runs and the steps of a sharded run, from a [`Config`]: [`run`] (public step,
//! private step or SMC-ABC or MCMC, diagnostics), and for clusters [`simulate_shard`] (rows
//! of the public pairs table), [`private_step`] (the data owner's pass over the merged table)
//! and [`smc_step`] (the central step of a sharded SMC-ABC generation).
//!
//! Every private release goes through the results folder's restart-safe ledger
//! ([`crate::private`]): the folder is locked from the ledger check until the front end has
//! written its results and called [`Finished::close`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::error::{Context, Result, bail};
use dpinfer_ledger::files::{DirLock, Replace};
use dpinfer_ledger::shard::{self, ShardHeader};

use crate::config::{Config, SamplerKind};
use crate::model::{BuildModel as _, Model, read_data};
use crate::observe::Observer;
use crate::public::Public;
use crate::results::Outcome;

/// Seed offset of the embedded data set when `data.seed` is not given.
const DEFAULT_DATA_SEED: u64 = 0x0DA7_A5E7;

/// Builds the model and loads the observed data (file or embedded default).
///
/// # Errors
/// Unknown model, unreadable or malformed data, mismatched dimensions.
pub fn load(cfg: &Config) -> Result<(Model, Vec<f64>)> {
    let model = Model::build(&cfg.model, None)?;
    let Some(path) = &cfg.data.path else {
        let data = model.default_data(cfg.data.seed.unwrap_or(DEFAULT_DATA_SEED))?;
        return Ok((model, data));
    };
    let rd = model.row_dim();
    let data = model.observe(read_data(path, rd, model.iid_rows())?, cfg.distance.kind())?;
    if model.iid_rows() {
        if data.len() % rd != 0 {
            bail!(
                Data,
                "data file {}: {} values do not form rows of dimension {rd}",
                path.display(),
                data.len()
            );
        }
        let n = data.len() / rd;
        let model = if cfg.model.n.is_none() {
            Model::build(&cfg.model, Some(n))?
        } else {
            model
        };
        Ok((model, data))
    } else {
        let len = model.output_len();
        if data.len() != len {
            bail!(
                Data,
                "data file {} holds {} values, the {} model observes {len}",
                path.display(),
                data.len(),
                model.name()
            );
        }
        Ok((model, data))
    }
}

pub use crate::limits::MAX_THREADS;

/// Checks a worker-thread count (0 = all cores).
///
/// # Errors
/// More than [`MAX_THREADS`].
pub fn check_threads(t: usize) -> Result<usize> {
    if t > MAX_THREADS {
        bail!("--threads {t} is above the maximum of {MAX_THREADS} (0 = all cores)");
    }
    Ok(t)
}

/// The results folder: `out` if given, else `output.dir`.
#[must_use]
pub fn out_dir(cfg: &Config, out: Option<&Path>) -> PathBuf {
    out.map_or_else(|| cfg.output.dir.clone(), Path::to_path_buf)
}

/// A finished run that still holds its results folder's lock: write the results, then
/// [`close`](Self::close).
#[derive(Debug)]
pub struct Finished {
    /// The diagnosed outcome.
    pub outcome: Outcome,
    lock: DirLock,
    /// A DP MCMC run's fingerprint, its once-only ledger marked started.
    once: Option<String>,
}

impl Finished {
    /// Marks a DP MCMC run's once-only ledger released and unlocks the folder.
    ///
    /// # Errors
    /// I/O writing the ledger.
    pub fn close(self) -> Result<Outcome> {
        if let Some(fp) = &self.once {
            crate::private::once_done(&self.lock, fp)?;
        }
        drop(self.lock);
        Ok(self.outcome)
    }
}

/// A whole inference described by `cfg` into the results folder `dir` (`threads` workers for
/// the public simulation, 0 = all cores), its notes and progress on stderr ([`run_with`] and
/// [`Stderr`](crate::Stderr)).
///
/// # Errors
/// Any failure; nothing is written before the config, data and settings are checked.
pub fn run(cfg: &Config, dir: &Path, threads: usize) -> Result<Finished> {
    run_with(cfg, dir, threads, &crate::Stderr::shared())
}

/// [`run`], its notes, warnings, a user model's fatal errors and progress told to `observer`
/// ([`Quiet`](crate::Quiet) for none). The observer never changes a number or a file.
///
/// # Errors
/// As [`run`].
pub fn run_with(
    cfg: &Config,
    dir: &Path,
    threads: usize,
    observer: &Arc<dyn Observer>,
) -> Result<Finished> {
    let kind = cfg.kind();
    let (model, obs) = load(cfg)?;
    model.observe_with(observer);
    // A user model's fatal worker error replaces the library's bare `SimError` code in the
    // run's one error (where a step has not put it there already).
    let handle = model.clone();
    let steps = || -> Result<Finished> {
        let observer: &dyn Observer = &**observer;
        let prior = prior_of(&model, cfg.seeds.run);
        let threads = check_threads(threads)?;
        let t0 = Instant::now();
        // A DP MCMC run's fingerprint, once its once-only ledger is marked started.
        let mut once: Option<String> = None;
        let (mut outcome, lock): (Outcome, DirLock) = if kind.uses_pairs() {
            let public = Public::new(cfg, model)?;
            // The private step's own checks (the ledger key's too) run before any
            // simulation is spent.
            crate::private::check(cfg, &public, &obs)?;
            let table = dir.join(PAIRS_FILE);
            // A rerun into a folder that holds this input's release (or its unfinished
            // start) takes the folder's own table: reproduced or refused, nothing simulated.
            let (locked, stored) = stored_input(&public, dir)?;
            let (rows, lock, simulated) = match (stored, locked) {
                (Some(rows), Some(lock)) => (rows, lock, false),
                (_, locked) => {
                    observer.start("simulating pairs", public.total);
                    let rows = public.rows(0, public.total, threads, &|k| observer.advance(k));
                    observer.finish();
                    let rows = rows?;
                    observer.note(&format!(
                        "public step: {} pairs in {:.1} s",
                        public.total,
                        t0.elapsed().as_secs_f64()
                    ));
                    // From the ledger check to the last result file, the folder is this
                    // process's.
                    let lock = match locked {
                        Some(l) => l,
                        None => DirLock::acquire(dir)?,
                    };
                    (rows, lock, true)
                }
            };
            let h = header(&public, 0, 0, 1, 0, public.total);
            // A first release puts its table into the folder before the ledger says
            // `started`, so a rerun after any crash finds the input it would refuse.
            let first = simulated && !has_ledger(dir);
            if first {
                shard::write_atomic(&table, &h, &rows, Replace::Owned)?;
            }
            let (release, reproduced) =
                crate::private::private_step(cfg, &public, &rows, &obs, &lock)?;
            if simulated && !first {
                shard::write_atomic(&table, &h, &rows, Replace::Owned)?;
            }
            (release_outcome(cfg, &public, release, reproduced), lock)
        } else if let Some(sequential) = cfg.sampler.sequential() {
            // On a privatized statistic: release it once (restart-safe; or reproduce it),
            // then post-process (SPPE/SPLE train on simulations of its mechanism).
            let (released, lock) = if cfg.privacy.release.is_some() {
                let (r, reproduced, lock) = crate::release::release(cfg, &model, &obs, dir)?;
                (Some((r, reproduced)), lock)
            } else {
                (None, DirLock::acquire(dir)?)
            };
            let target = released
                .as_ref()
                .map_or(obs.as_slice(), |(r, _)| r.s_dp.as_slice());
            let mech = crate::release::mechanism(cfg, &model)?.map(|(m, _)| m);
            let mut o = sequential.run(&crate::sampler::SequentialRun {
                cfg,
                model: &model,
                target,
                mech: mech.as_ref(),
                dir,
                threads,
                observer,
            })?;
            if let Some((r, reproduced)) = released {
                o.ledger = r.ledger;
                o.reproduced = reproduced;
            }
            (o, lock)
        } else {
            // MCMC writes nothing before it finishes: checks fail before the folder exists. A
            // private chain takes the folder's lock and marks its once-only ledger right before
            // its first noise draw; its results are the release, so a rerun is refused.
            let fp = crate::private::fingerprint(cfg, &[], &obs)?;
            let mut lock: Option<DirLock> = None;
            let o = crate::mcmc::run(
                cfg,
                &model,
                &obs,
                dir,
                &mut || {
                    // A bad ledger key stops the chain before its folder is created.
                    dpinfer_ledger::mac::Key::from_env()?;
                    let l = DirLock::acquire(dir)?;
                    crate::private::once_start(&l, &fp)?;
                    lock = Some(l);
                    Ok(())
                },
                observer,
            )?;
            if lock.is_some() {
                once = Some(fp);
            }
            let lock = match lock {
                Some(l) => l,
                None => DirLock::acquire(dir)?,
            };
            (o, lock)
        };
        if kind.uses_pairs() || kind == SamplerKind::SmcAbc {
            record_kernel_version(cfg, &mut outcome.facts)?;
        }
        outcome.diagnose(prior);
        Ok(Finished {
            outcome,
            lock,
            once,
        })
    };
    steps().map_err(|e| handle.explain(e, "the external simulator failed"))
}

/// The public pairs table a pairs-based `run` writes into its results folder.
pub const PAIRS_FILE: &str = "pairs-gen000.dpshard";

/// The public input of an earlier release in the results folder `dir`, found without
/// simulating. When the folder has a ledger, its lock is taken and returned (the caller keeps
/// the folder while it simulates otherwise), with the folder's own table ([`PAIRS_FILE`],
/// which a first release writes before its ledger says `started`) when that table is this
/// config's whole table ([`Public::fits`], every value finite): the table is a function of
/// what [`Public::fits`] checks, so [`crate::private::private_step`] on it reproduces the
/// release or refuses (unfinished, another input) exactly as after a simulation. No ledger:
/// nothing (a first run simulates).
///
/// # Errors
/// I/O taking the lock.
fn stored_input(public: &Public, dir: &Path) -> Result<(Option<DirLock>, Option<Vec<f64>>)> {
    if !has_ledger(dir) {
        return Ok((None, None));
    }
    let lock = DirLock::acquire(dir)?;
    // Unreadable, damaged, partial or foreign: simulate instead, as before.
    let rows = shard::read_owned(&dir.join(PAIRS_FILE))
        .ok()
        .filter(|(h, rows)| {
            public.fits(h).is_ok()
                && (h.generation, h.row_start, h.n_rows) == (0, 0, public.total)
                && shard::first_non_finite(rows, h.row_len()).is_none()
        })
        .map(|(_, rows)| rows);
    Ok((Some(lock), rows))
}

/// Whether the folder `dir` has a ledger file (of any input or status; a link counts).
fn has_ledger(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(dpinfer_ledger::LEDGER_FILE)).is_ok()
}

/// Stream domain of the prior draws the posterior is compared with (public randomness).
const PRIOR_CHECK_DOMAIN: u64 = 0x5052_494f_5200_0000; // "PRIOR"

/// [`crate::results::PRIOR_DRAWS`] draws of the model's prior, row-major, one stream per
/// draw; `None` when the prior cannot be sampled (an improper prior).
pub(crate) fn prior_draws(model: &Model, seed: u64) -> Option<Vec<f64>> {
    use dpinfer::simulators::{Prior, SimStream};
    let prior = crate::model::ModelPrior(model);
    let d = prior.dim();
    let mut out = vec![0.0; crate::results::PRIOR_DRAWS * d];
    for (i, row) in out.chunks_exact_mut(d.max(1)).enumerate() {
        let mut rng = SimStream::with_domain(seed, PRIOR_CHECK_DOMAIN, i as u64);
        prior.sample(&mut rng, row).ok()?;
    }
    Some(out)
}

/// The model's prior as the outcome keeps it: [`prior_draws`] and the exact marginal
/// densities ([`crate::model::marginal_ln_density`]); `None` when the prior cannot be
/// sampled.
fn prior_of(model: &Model, seed: u64) -> Option<crate::results::PriorDraws> {
    Some(crate::results::PriorDraws {
        draws: prior_draws(model, seed)?,
        marginal: Some(crate::model::marginal_ln_density(model)),
    })
}

/// Records the random-feature map's kernel version (`[distance] kernel_version`, default 1)
/// as the fact `kernel_version` of a run whose distance is `rff-mmd` (printed, in
/// `summary.json`): with the seeds, it is what reproduces the distances. A rounding-allowance
/// version other than 1 (`[distance] allowance_version`, which sized the sensitivity and so
/// the noise) is recorded as the fact `allowance_version`; runs of version 1 print and store
/// the facts they always did.
///
/// # Errors
/// A version number that names no version (refused by the config's checks before).
fn record_kernel_version(cfg: &Config, facts: &mut Vec<(String, f64)>) -> Result<()> {
    if let crate::config::DistanceConfig::RffMmd(d) = &cfg.distance {
        facts.push((
            "kernel_version".into(),
            f64::from(d.kernel_version()?.number()),
        ));
        let allowance = d.allowance_version()?;
        if allowance != dpinfer::distances::AllowanceVersion::V1 {
            facts.push(("allowance_version".into(), f64::from(allowance.number())));
        }
    }
    Ok(())
}

/// The results of a pairs-based private step.
fn release_outcome(
    cfg: &Config,
    public: &Public,
    release: crate::private::Release,
    reproduced: bool,
) -> Outcome {
    Outcome {
        model: public.model.name().into(),
        sampler: cfg.sampler.name().into(),
        names: public.model.names(),
        samples: release.samples,
        weights: release.weights,
        truth: public.model.truth(),
        ledger: release.ledger,
        facts: release.facts,
        diagnostics: Vec::new(),
        charts: Vec::new(),
        reproduced,
        warnings: Vec::new(),
        prior_draws: None,
    }
}

fn header(
    public: &Public,
    generation: u32,
    shard: u32,
    shards: u32,
    start: u64,
    end: u64,
) -> ShardHeader {
    ShardHeader {
        config_hash: public.config_hash,
        run_seed: public.seed,
        generation,
        shard,
        shards,
        total_rows: public.total,
        row_start: start,
        n_rows: end - start,
        theta_dim: public.theta_dim() as u32,
        out_dim: public.summary_dim() as u32,
    }
}

/// The public step of a pairs-based sampler (`generation` 0) or of a sharded SMC-ABC
/// generation (its proposal built from the population file `population`); the model is built
/// (and sized by the data file) without reading private data values into the table.
///
/// # Errors
/// A sampler without a pairs table, generation/population flags that do not fit the
/// sampler, model or population errors.
pub fn pairs_public(cfg: &Config, generation: u32, population: Option<&Path>) -> Result<Public> {
    let kind = cfg.kind();
    let smc = kind == SamplerKind::SmcAbc && cfg.sampler.pairs().is_some();
    if !kind.uses_pairs() && !smc {
        bail!(
            "sampler {} does not use a public pairs table (shards serve rejection, svt-abc, \
             soft-abc, gaussian-abc, and smc-abc with sampler.pairs set)",
            cfg.sampler.name()
        );
    }
    if generation == 0 && population.is_some() {
        bail!("--population belongs to generations ≥ 1 (generation 0 draws from the prior)");
    }
    if !smc && (generation != 0 || population.is_some()) {
        bail!(
            "--generation/--population belong to smc-abc; {} has one pass",
            cfg.sampler.name()
        );
    }
    // The public step needs the model (and its size) but never the private data values.
    let model = sized_model(cfg)?;
    if smc {
        let pop = population.map(crate::pmc::Population::read).transpose()?;
        crate::pmc::public_for(cfg, model, generation, pop.as_ref())
    } else {
        Public::new(cfg, model)
    }
}

/// The model of `cfg`, sized by the data file when one is given (its values are not used).
///
/// # Errors
/// As [`load`] with a data file, else as the model's build.
pub fn sized_model(cfg: &Config) -> Result<Model> {
    if cfg.data.path.is_some() {
        Ok(load(cfg)?.0)
    } else {
        Model::build(&cfg.model, None)
    }
}

/// Shard `i` of `n` of the public pairs table of generation `generation` (SMC-ABC: the
/// population of generation − 1 at `population`), written atomically into `out`; returns the
/// file and its row range.
///
/// # Errors
/// Bad shard indices, a sampler without a pairs table, simulator failures, I/O.
pub fn simulate_shard(
    cfg: &Config,
    (i, n): (u32, u32),
    out: &Path,
    generation: u32,
    population: Option<&Path>,
    threads: usize,
) -> Result<(PathBuf, u64, u64)> {
    let threads = check_threads(threads)?;
    if n == 0 || i >= n || n > shard::MAX_SHARDS {
        bail!(
            "--shard must be in 0..--shards and --shards in 1..={} (got shard {i} of {n})",
            shard::MAX_SHARDS
        );
    }
    let public = pairs_public(cfg, generation, population)?;
    if u64::from(n) > public.total {
        bail!(
            "{n} shards for {} rows: some shards would be empty",
            public.total
        );
    }
    let (start, end) = shard::shard_range(public.total, i, n);
    let rows = public.rows(start, end, threads, &|_| {})?;
    let path = out.join(shard::shard_file_name(generation, i, n));
    shard::write_atomic(
        &path,
        &header(&public, generation, i, n, start, end),
        &rows,
        Replace::Owned,
    )?;
    Ok((path, start, end))
}

/// Refuses a pairs table with a non-finite value (a row would silently drop out).
fn finite_rows(pairs: &Path, h: &ShardHeader, rows: &[f64]) -> Result<()> {
    if let Some((r, c)) = shard::first_non_finite(rows, h.row_len()) {
        bail!(
            Data,
            "{} holds a non-finite value (row {r}, column {c}); refusing to use it",
            pairs.display()
        );
    }
    Ok(())
}

/// Refuses a pairs table that is not this config's table: simulated from another model,
/// prior, summary map, run seed or pair count ([`Public::fits`]). Tables of any private-step
/// settings (a non-private run's, another clip, sensitivity, ε or sampler) are accepted.
///
/// # Errors
/// A header of another table, [`Error::Data`](crate::Error::Data) naming what differs.
pub fn belongs(pairs: &Path, h: &ShardHeader, public: &Public) -> Result<()> {
    if let Err(what) = public.fits(h) {
        bail!(
            Data,
            "{} was simulated for another public step: {what}",
            pairs.display()
        );
    }
    Ok(())
}

/// The data owner's private pass of `cfg` over the merged pairs table at `pairs` (or the
/// stored release, reproduced) into the results folder `dir`.
///
/// # Errors
/// Pairs that do not belong to this config, refused restarts, invalid settings.
pub fn private_step(cfg: &Config, pairs: &Path, dir: &Path) -> Result<Finished> {
    let public = pairs_public(cfg, 0, None)?;
    let (_, obs) = load(cfg)?;
    crate::private::check(cfg, &public, &obs)?;
    let (h, rows) = shard::read(pairs).context("reading the merged pairs")?;
    belongs(pairs, &h, &public)?;
    finite_rows(pairs, &h, &rows)?;
    if h.row_start != 0 || h.n_rows != public.total || h.shards != 1 {
        bail!(
            Data,
            "{} is a single shard, not the merged table (run `dpinfer merge`)",
            pairs.display()
        );
    }
    let lock = DirLock::acquire(dir)?;
    let (release, reproduced) = crate::private::private_step(cfg, &public, &rows, &obs, &lock)?;
    let mut outcome = release_outcome(cfg, &public, release, reproduced);
    record_kernel_version(cfg, &mut outcome.facts)?;
    outcome.diagnose(prior_of(&public.model, cfg.seeds.run));
    Ok(Finished {
        outcome,
        lock,
        once: None,
    })
}

/// The central (non-private) step of generation `generation` of a sharded SMC-ABC over the
/// merged table at `pairs` (`population`: generation − 1's file); writes the new population
/// into `dir` and returns it.
///
/// # Errors
/// Pairs of another config or generation, a missing population, invalid settings.
pub fn smc_step(
    cfg: &Config,
    pairs: &Path,
    generation: u32,
    population: Option<&Path>,
    dir: &Path,
) -> Result<crate::pmc::Population> {
    let public = pairs_public(cfg, generation, population)?;
    if cfg.kind() != SamplerKind::SmcAbc {
        bail!("smc-step needs sampler.kind = \"smc-abc\"");
    }
    let (model, obs) = load(cfg)?;
    // On a privatized statistic the central step sees only the release (made by the first
    // step into `dir`, reproduced from there afterwards).
    let (obs, lock) = if cfg.privacy.release.is_some() {
        let (r, _, lock) = crate::release::release(cfg, &model, &obs, dir)?;
        (r.s_dp, lock)
    } else {
        (obs, DirLock::acquire(dir)?)
    };
    let (h, rows) = shard::read(pairs).context("reading the merged pairs")?;
    finite_rows(pairs, &h, &rows)?;
    if public.fits(&h).is_err() || h.generation != generation {
        bail!(
            Data,
            "{} is not the generation-{generation} table of this config and population",
            pairs.display()
        );
    }
    if h.row_start != 0 || h.n_rows != public.total {
        bail!(
            Data,
            "{} is a single shard, not the merged table (run `dpinfer merge`)",
            pairs.display()
        );
    }
    let p = crate::pmc::step(cfg, &public, &rows, &obs, generation)?;
    p.write(dir)?;
    drop(lock);
    Ok(p)
}
