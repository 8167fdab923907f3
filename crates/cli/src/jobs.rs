//! The commands: `run`, `calibrate`, `simulate`, `verify`, `merge`, `export`, `private-step`,
//! `smc-step` — each reads its config, calls [`dpinfer_pipeline`], and writes and prints.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use dpinfer_ledger::shard;
use dpinfer_pipeline::config::Config;
use dpinfer_pipeline::run::{self as pipeline, out_dir};

use crate::files::Replace;
use crate::results::OutcomeFiles as _;

/// `dpinfer run CONFIG`.
///
/// # Errors
/// Any failure; nothing is written before the config, data and settings are checked.
pub fn run(config: &Path, out: Option<&Path>, threads: Option<usize>) -> Result<ExitCode> {
    let cfg = Config::load(config)?;
    let dir = out_dir(&cfg, out);
    let t0 = Instant::now();
    // The pipeline writes ledger, pairs and tables, the CLI the samples, summary and plots:
    // the count printed is of the files this run left new or replaced in the folder.
    let before = crate::files::snapshot(&dir);
    let finished = pipeline::run(&cfg, &dir, threads.unwrap_or(cfg.output.threads))?;
    finished
        .outcome
        .write(&dir, crate::results::model_title(&cfg, &finished.outcome))?;
    let outcome = finished.close()?;
    let files = crate::files::written_since(&dir, &before);
    crate::out!("{}", outcome.report());
    crate::outln!(
        "\nresults in {} ({} files) after {:.1} s",
        dir.display(),
        files,
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// `dpinfer simulate CONFIG --shard i --shards N --out DIR`.
///
/// # Errors
/// Bad shard indices, simulator failures, I/O.
pub fn simulate(
    config: &Path,
    shard: (u32, u32),
    out: &Path,
    generation: u32,
    population: Option<&Path>,
    threads: usize,
) -> Result<ExitCode> {
    let cfg = Config::load(config)?;
    let (path, start, end) =
        pipeline::simulate_shard(&cfg, shard, out, generation, population, threads)?;
    let (i, n) = shard;
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
            let public = pipeline::pairs_public(&cfg, h.generation, None).or_else(|_| {
                // SMC generations ≥ 1 need a population to build the proposal, not to name
                // columns: fall back to generation 0's description.
                pipeline::pairs_public(&cfg, 0, None)
            })?;
            pipeline::belongs(pairs, &h, &public)?;
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
    dpinfer_pipeline::arrow::write_table(out, &names, &rows, &meta, Replace::IfForced(force))?;
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
    let dir = out_dir(&cfg, out);
    let finished = pipeline::private_step(&cfg, pairs, &dir)?;
    finished
        .outcome
        .write(&dir, crate::results::model_title(&cfg, &finished.outcome))?;
    let outcome = finished.close()?;
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
    let dir = out_dir(&cfg, out);
    let p = pipeline::smc_step(&cfg, pairs, generation, population, &dir)?;
    crate::outln!(
        "generation {generation}: tolerance {:.6}, ESS {:.1} -> {}",
        p.tolerance,
        p.ess,
        dir.join(dpinfer_pipeline::pmc::Population::file_name(generation))
            .display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `dpinfer calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// The run configuration (its model, prior, release mechanism and sampler).
    pub config: std::path::PathBuf,
    /// K, the number of replicates (at least 10 for a summary).
    #[arg(long)]
    pub replicates: u64,
    /// This process's shard i (0-based) of --shards.
    #[arg(long, default_value_t = 0)]
    pub shard: u32,
    /// Number of shards n (replicates split into n contiguous ranges).
    #[arg(long, default_value_t = 1)]
    pub shards: u32,
    /// Worker threads (0 = all cores); results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// L, the posterior draws kept per replicate (ranks in 0..=L).
    #[arg(long, default_value_t = 19)]
    pub draws: u32,
    /// Ask the sampler for draws × thin draws and keep every thin-th.
    #[arg(long, default_value_t = 1)]
    pub thin: u32,
    /// Family-wise level of the uniformity tests (Holm).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Results folder (default: output.dir/calibration).
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

/// `dpinfer calibrate CONFIG --replicates K [--shard i --shards n] [--threads t]`: exit 0 when
/// calibrated or over-dispersed (or a shard is done), 1 when over-confident.
///
/// # Errors
/// Invalid options, a folder of another config, a failed replicate (finished ones are kept), I/O.
pub fn calibrate(a: &CalibrateArgs) -> Result<ExitCode> {
    let cfg = Config::load(&a.config)?;
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| cfg.output.dir.join("calibration"));
    let options = dpinfer_pipeline::calibrate::Options {
        replicates: a.replicates,
        draws: a.draws,
        thin: a.thin,
        alpha: a.alpha,
        shard: (a.shard, a.shards),
        threads: a.threads.unwrap_or(cfg.output.threads),
    };
    let t0 = Instant::now();
    let observer = dpinfer_pipeline::Stderr::shared();
    let done = dpinfer_pipeline::calibrate::run(&cfg, &dir, &options, &*observer)?;
    crate::errln!(
        "{} replicates computed, {} found finished; {} of {} in {} ({:.1} s)",
        done.computed,
        done.reused,
        done.present,
        a.replicates,
        dir.display(),
        t0.elapsed().as_secs_f64()
    );
    if done.table_seconds > 0.0 && done.computed > 1 {
        // One public table for every replicate: a table per replicate would have cost this.
        crate::errln!(
            "shared pairs table: {:.2} s once instead of ≈ {:.1} s for {} tables (replicates \
             themselves: {:.2} s)",
            done.table_seconds,
            done.table_seconds * done.computed as f64,
            done.computed,
            done.replicate_seconds
        );
    }
    let Some(report) = done.report else {
        crate::outln!(
            "shard {} of {} done: {} of {} replicates in {}; run `dpinfer calibrate` without \
             --shard on a folder holding every shard's replicates-*.jsonl to summarise",
            a.shard,
            a.shards,
            done.present,
            a.replicates,
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    };
    crate::outln!("{}", report.text());
    crate::outln!("results in {}", dir.display());
    Ok(if report.summary.verdict.is_warning() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
