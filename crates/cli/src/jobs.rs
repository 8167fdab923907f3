//! The commands: `run`, `simulate`, `verify`, `merge`, `export`, `private-step`,
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
