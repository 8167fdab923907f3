//! The commands: `run`, `simulate`, `verify`, `merge`, `private-step`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::config::{Config, SamplerKind};
use crate::files::{DirLock, Replace};
use crate::model::{BuildModel as _, Model, read_data};
use crate::public::Public;
use crate::results::Outcome;
use crate::shard::{self, ShardHeader};

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

fn check_threads(t: usize) -> Result<usize> {
    if t > MAX_THREADS {
        bail!("--threads {t} is above the maximum of {MAX_THREADS} (0 = all cores)");
    }
    Ok(t)
}

fn out_dir(cfg: &Config, out: Option<&Path>) -> PathBuf {
    out.map_or_else(|| cfg.output.dir.clone(), Path::to_path_buf)
}

/// `dpinfer run CONFIG`.
///
/// # Errors
/// Any failure; nothing is written before the config, data and settings are checked.
pub fn run(config: &Path, out: Option<&Path>, threads: Option<usize>) -> Result<ExitCode> {
    let cfg = Config::load(config)?;
    let kind = cfg.kind();
    let (model, obs) = load(&cfg)?;
    let prior = prior_draws(&model, cfg.seeds.run);
    let dir = out_dir(&cfg, out);
    let threads = check_threads(threads.unwrap_or(cfg.output.threads))?;
    let t0 = Instant::now();
    // A DP MCMC run's fingerprint, once its once-only ledger is marked started.
    let mut once: Option<String> = None;
    let outcome: (Outcome, DirLock) = if kind.uses_pairs() {
        let public = Public::new(&cfg, model)?;
        // The private step's own checks run before any simulation is spent.
        crate::private::check(&cfg, &public, &obs)?;
        let pb = crate::progress::bar(public.total, "simulating pairs");
        let rows = public.rows(0, public.total, threads, &|k| pb.inc(k))?;
        pb.finish_and_clear();
        crate::errln!(
            "public step: {} pairs in {:.1} s",
            public.total,
            t0.elapsed().as_secs_f64()
        );
        // From the ledger check to the last result file, the folder is this process's.
        let lock = DirLock::acquire(&dir)?;
        let (release, reproduced) =
            crate::private::private_step(&cfg, &public, &rows, &obs, &lock)?;
        let h = header(&public, 0, 0, 1, 0, public.total);
        shard::write_atomic(&dir.join("pairs-gen000.dpshard"), &h, &rows, Replace::Owned)?;
        (release_outcome(&cfg, &public, release, reproduced), lock)
    } else if kind == SamplerKind::SmcAbc {
        // On a privatized statistic: release it once (restart-safe), then post-process.
        let (released, lock) = if cfg.privacy.release.is_some() {
            let (r, reproduced, lock) = crate::release::release(&cfg, &model, &obs, &dir)?;
            (Some((r, reproduced)), lock)
        } else {
            (None, DirLock::acquire(&dir)?)
        };
        let target = released
            .as_ref()
            .map_or(obs.as_slice(), |(r, _)| r.s_dp.as_slice());
        let mut o = if cfg.sampler.pairs().is_some() {
            crate::pmc::run(&cfg, &model, target, &dir, threads)?
        } else {
            crate::smc::run(&cfg, &model, target, &dir)?
        };
        if let Some((r, reproduced)) = released {
            o.ledger = r.ledger;
            o.reproduced = reproduced;
        }
        (o, lock)
    } else {
        // MCMC writes nothing before it finishes: checks fail before the folder exists. A
        // private chain takes the folder's lock and marks its once-only ledger right before
        // its first noise draw; its results are the release, so a rerun is refused.
        let fp = crate::private::fingerprint(&cfg, &[], &obs)?;
        let mut lock: Option<DirLock> = None;
        let o = crate::mcmc::run(&cfg, &model, &obs, &dir, &mut || {
            let l = DirLock::acquire(&dir)?;
            crate::private::once_start(&l, &fp)?;
            lock = Some(l);
            Ok(())
        })?;
        if lock.is_some() {
            once = Some(fp);
        }
        let lock = match lock {
            Some(l) => l,
            None => DirLock::acquire(&dir)?,
        };
        (o, lock)
    };
    let (mut outcome, lock) = outcome;
    outcome.diagnose(prior.as_deref());
    let files = outcome.write(&dir)?;
    if let Some(fp) = &once {
        crate::private::once_done(&lock, fp)?;
    }
    drop(lock);
    crate::out!("{}", outcome.report());
    crate::outln!(
        "\nresults in {} ({} files) after {:.1} s",
        dir.display(),
        files.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Stream domain of the prior draws the posterior is compared with (public randomness).
const PRIOR_CHECK_DOMAIN: u64 = 0x5052_494f_5200_0000; // "PRIOR"

/// [`crate::results::PRIOR_DRAWS`] draws of the model's prior, row-major, one stream per
/// draw; `None` when the prior cannot be sampled (an improper prior).
fn prior_draws(model: &Model, seed: u64) -> Option<Vec<f64>> {
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

fn pairs_public(cfg: &Config, generation: u32, population: Option<&Path>) -> Result<Public> {
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
    let model = if cfg.data.path.is_some() {
        load(cfg)?.0
    } else {
        Model::build(&cfg.model, None)?
    };
    if smc {
        let pop = population.map(crate::pmc::Population::read).transpose()?;
        crate::pmc::public_for(cfg, model, generation, pop.as_ref())
    } else {
        Public::new(cfg, model)
    }
}

/// `dpinfer simulate CONFIG --shard i --shards N --out DIR`.
///
/// # Errors
/// Bad shard indices, simulator failures, I/O.
pub fn simulate(
    config: &Path,
    i: u32,
    n: u32,
    out: &Path,
    generation: u32,
    population: Option<&Path>,
    threads: usize,
) -> Result<ExitCode> {
    let threads = check_threads(threads)?;
    if n == 0 || i >= n || n > shard::MAX_SHARDS {
        bail!(
            "--shard must be in 0..--shards and --shards in 1..={} (got shard {i} of {n})",
            shard::MAX_SHARDS
        );
    }
    let cfg = Config::load(config)?;
    let public = pairs_public(&cfg, generation, population)?;
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
    crate::errln!("shard {i}/{n}: rows {start}..{end} -> {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// `dpinfer verify DIR`.
///
/// # Errors
/// I/O; an incomplete folder is exit code 1, not an error.
pub fn verify(dir: &Path, generation: u32) -> Result<ExitCode> {
    let rep = shard::verify_dir(dir, generation)?;
    let Some(h) = rep.header else {
        bail!("no readable shard in {}", dir.display());
    };
    for i in &rep.missing {
        let name = shard::shard_file_name(generation, *i, h.shards);
        // A damaged file is reported once, as corrupt.
        if !rep.corrupt.iter().any(|(p, _)| p.ends_with(&name)) {
            crate::outln!("missing {name}");
        }
    }
    for (p, why) in &rep.corrupt {
        crate::outln!("corrupt {} ({why})", p.display());
    }
    if rep.complete() {
        crate::outln!(
            "complete: {} shards, {} rows, generation {generation}",
            h.shards,
            h.total_rows
        );
        Ok(ExitCode::SUCCESS)
    } else {
        crate::outln!(
            "incomplete: {} of {} shards ok, {} missing, {} corrupt",
            rep.ok.len(),
            h.shards,
            rep.missing.len(),
            rep.corrupt.len()
        );
        Ok(ExitCode::from(1))
    }
}

/// `dpinfer merge DIR --out FILE [--force]`: never replaces a shard it read, a non-regular
/// file, or (without `force`) any existing file.
///
/// # Errors
/// Incomplete or inconsistent shards, a refused `--out`, I/O.
pub fn merge(dir: &Path, out: &Path, generation: u32, force: bool) -> Result<ExitCode> {
    crate::files::check_target(out, Replace::IfForced(force))?;
    let (h, data) = shard::merge_dir(dir, generation)?;
    shard::write_atomic(out, &h, &data, Replace::IfForced(force))?;
    crate::outln!("merged {} rows into {}", h.total_rows, out.display());
    Ok(ExitCode::SUCCESS)
}

/// Refuses a pairs table with a non-finite value (a row would silently drop out).
fn finite_rows(pairs: &Path, h: &ShardHeader, rows: &[f64]) -> Result<()> {
    if let Some((r, c)) = shard::first_non_finite(rows, h.row_len()) {
        bail!(
            "{} holds a non-finite value (row {r}, column {c}); refusing to use it",
            pairs.display()
        );
    }
    Ok(())
}

/// Refuses a pairs table simulated for another configuration or run seed.
fn belongs(pairs: &Path, h: &ShardHeader, public: &Public) -> Result<()> {
    if h.config_hash != public.config_hash || h.run_seed != public.seed {
        bail!(
            "{} was simulated for a different configuration (hash {:016x}, this config {:016x})",
            pairs.display(),
            h.config_hash,
            public.config_hash
        );
    }
    Ok(())
}

/// `dpinfer export PAIRS --out FILE.arrow [--config CONFIG]`: a shard or merged pairs file
/// (checksum verified) as an Arrow IPC file, one column per θ coordinate (`theta1`, … or the
/// model's parameter names when the config is given and matches) and per output value
/// (`out1`, …); the shard header goes into the schema metadata.
///
/// # Errors
/// A corrupt pairs file, a config it was not simulated for, I/O.
pub fn export(pairs: &Path, out: &Path, config: Option<&Path>, force: bool) -> Result<ExitCode> {
    crate::files::check_target(out, Replace::IfForced(force))?;
    let (h, rows) = shard::read(pairs).with_context(|| format!("reading {}", pairs.display()))?;
    let theta_names: Vec<String> = match config {
        Some(c) => {
            let cfg = Config::load(c)?;
            let public = pairs_public(&cfg, h.generation, None).or_else(|_| {
                // SMC generations ≥ 1 need a population to build the proposal, not to name
                // columns: fall back to generation 0's description.
                pairs_public(&cfg, 0, None)
            })?;
            belongs(pairs, &h, &public)?;
            public.model.names()
        }
        None => (1..=h.theta_dim).map(|k| format!("theta{k}")).collect(),
    };
    let mut names = theta_names;
    names.extend((1..=h.out_dim).map(|k| format!("out{k}")));
    let meta = [
        ("dpinfer.format", "pairs".to_string()),
        ("dpinfer.config_hash", format!("{:016x}", h.config_hash)),
        ("dpinfer.run_seed", h.run_seed.to_string()),
        ("dpinfer.generation", h.generation.to_string()),
        ("dpinfer.shard", format!("{}/{}", h.shard, h.shards)),
        ("dpinfer.total_rows", h.total_rows.to_string()),
        ("dpinfer.row_start", h.row_start.to_string()),
        ("dpinfer.theta_dim", h.theta_dim.to_string()),
    ];
    crate::arrow::write_table(out, &names, &rows, &meta, Replace::IfForced(force))?;
    crate::outln!(
        "exported {} rows × {} columns to {}",
        h.n_rows,
        names.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `dpinfer private-step CONFIG --pairs FILE`.
///
/// # Errors
/// Pairs that do not belong to this config, refused restarts, invalid settings.
pub fn private_step(config: &Path, pairs: &Path, out: Option<&Path>) -> Result<ExitCode> {
    let cfg = Config::load(config)?;
    let public = pairs_public(&cfg, 0, None)?;
    let (_, obs) = load(&cfg)?;
    crate::private::check(&cfg, &public, &obs)?;
    let (h, rows) = shard::read(pairs).context("reading the merged pairs")?;
    belongs(pairs, &h, &public)?;
    finite_rows(pairs, &h, &rows)?;
    if h.row_start != 0 || h.n_rows != public.total || h.shards != 1 {
        bail!(
            "{} is a single shard, not the merged table (run `dpinfer merge`)",
            pairs.display()
        );
    }
    let dir = out_dir(&cfg, out);
    let lock = DirLock::acquire(&dir)?;
    let (release, reproduced) = crate::private::private_step(&cfg, &public, &rows, &obs, &lock)?;
    let mut outcome = release_outcome(&cfg, &public, release, reproduced);
    outcome.diagnose(prior_draws(&public.model, cfg.seeds.run).as_deref());
    outcome.write(&dir)?;
    drop(lock);
    crate::out!("{}", outcome.report());
    crate::outln!("\nresults in {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// `dpinfer smc-step CONFIG --pairs MERGED --generation g [--population POP] --out DIR`: the
/// central (non-private) step of a sharded SMC-ABC generation.
///
/// # Errors
/// Pairs of another config or generation, a missing population, invalid settings.
pub fn smc_step(
    config: &Path,
    pairs: &Path,
    generation: u32,
    population: Option<&Path>,
    out: Option<&Path>,
) -> Result<ExitCode> {
    let cfg = Config::load(config)?;
    let public = pairs_public(&cfg, generation, population)?;
    if cfg.kind() != SamplerKind::SmcAbc {
        bail!("smc-step needs sampler.kind = \"smc-abc\"");
    }
    let (model, obs) = load(&cfg)?;
    let dir = out_dir(&cfg, out);
    // On a privatized statistic the central step sees only the release (made by the first
    // step into `--out`, reproduced from there afterwards).
    let (obs, lock) = if cfg.privacy.release.is_some() {
        let (r, _, lock) = crate::release::release(&cfg, &model, &obs, &dir)?;
        (r.s_dp, lock)
    } else {
        (obs, DirLock::acquire(&dir)?)
    };
    let (h, rows) = shard::read(pairs).context("reading the merged pairs")?;
    finite_rows(pairs, &h, &rows)?;
    if h.config_hash != public.config_hash || h.generation != generation {
        bail!(
            "{} is not the generation-{generation} table of this config and population",
            pairs.display()
        );
    }
    if h.row_start != 0 || h.n_rows != public.total {
        bail!(
            "{} is a single shard, not the merged table (run `dpinfer merge`)",
            pairs.display()
        );
    }
    let p = crate::pmc::step(&cfg, &public, &rows, &obs, generation)?;
    p.write(&dir)?;
    drop(lock);
    crate::outln!(
        "generation {generation}: tolerance {:.6}, ESS {:.1} -> {}",
        p.tolerance,
        p.ess,
        dir.join(crate::pmc::Population::file_name(generation))
            .display()
    );
    Ok(ExitCode::SUCCESS)
}
