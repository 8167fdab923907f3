//! The `dpinfer` command: private simulation-based inference from a config file, the
//! accountants from the command line, and sharded public simulation for clusters.
#![allow(clippy::print_stderr)]

use dpinfer_cli::files::take_stdout_error;
use dpinfer_cli::{account, errln, jobs};

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Differentially private simulation-based Bayesian inference.
#[derive(Debug, Parser)]
#[command(name = "dpinfer", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run a whole inference described by CONFIG.toml and write a results folder.
    Run {
        /// The run configuration.
        config: PathBuf,
        /// Results folder (overrides output.dir).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads of the public simulation step (overrides output.threads).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Privacy accounting: ε/δ of a composition, σ for a budget, maximum steps.
    Account(account::AccountArgs),
    /// Simulation-based calibration of CONFIG's sampler, mechanism included: are its credible
    /// intervals honest at this ε? Resumable; shards merge by copying their files together.
    Calibrate(jobs::CalibrateArgs),
    /// Compute one shard of the public (θ, summary) pairs and write it atomically.
    Simulate {
        /// The run configuration.
        config: PathBuf,
        /// Shard index i (0-based).
        #[arg(long)]
        shard: u32,
        /// Number of shards N.
        #[arg(long)]
        shards: u32,
        /// Shard folder.
        #[arg(long)]
        out: PathBuf,
        /// Generation (SMC-ABC); 0 for single-pass samplers.
        #[arg(long, default_value_t = 0)]
        generation: u32,
        /// SMC-ABC generation g ≥ 1: the population file of generation g−1.
        #[arg(long)]
        population: Option<PathBuf>,
        /// Worker threads (0 = all cores).
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
    /// List missing or corrupt shards in a folder (exit 1 unless complete).
    Verify {
        /// Shard folder.
        dir: PathBuf,
        /// Generation.
        #[arg(long, default_value_t = 0)]
        generation: u32,
    },
    /// Assemble complete shards into one pairs file.
    Merge {
        /// Shard folder.
        dir: PathBuf,
        /// Merged file (never an input shard or a non-regular file).
        #[arg(long)]
        out: PathBuf,
        /// Generation.
        #[arg(long, default_value_t = 0)]
        generation: u32,
        /// Replace an existing regular file at --out.
        #[arg(long)]
        force: bool,
    },
    /// Convert a shard or merged pairs file to an Arrow IPC file (pandas, polars, R, DuckDB).
    Export {
        /// Shard or merged pairs file.
        pairs: PathBuf,
        /// Arrow IPC file to write (never the input or a non-regular file).
        #[arg(long)]
        out: PathBuf,
        /// Name the θ columns after this config's model (checked against the file).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Replace an existing regular file at --out.
        #[arg(long)]
        force: bool,
    },
    /// SMC-ABC (sharded PMC): the central step of one generation over its merged table.
    SmcStep {
        /// The run configuration.
        config: PathBuf,
        /// Merged table of this generation.
        #[arg(long)]
        pairs: PathBuf,
        /// Generation.
        #[arg(long)]
        generation: u32,
        /// Population of the previous generation (g ≥ 1).
        #[arg(long)]
        population: Option<PathBuf>,
        /// Folder for the population file (overrides output.dir).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The data owner's private pass over merged pairs and the observed data.
    PrivateStep {
        /// The run configuration.
        config: PathBuf,
        /// Merged pairs file (from `dpinfer merge`).
        #[arg(long)]
        pairs: PathBuf,
        /// Results folder (overrides output.dir).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    // Negative numbers are values (`--x -1`), not options, in every subcommand.
    fn negatives(c: clap::Command) -> clap::Command {
        c.allow_negative_numbers(true).mut_subcommands(negatives)
    }
    let cli = match negatives(Cli::command())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e) => {
            // --help / --version print to stdout; usage errors to stderr (exit 2). A closed
            // or full stream is not worth a panic.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let r = match &cli.cmd {
        Cmd::Run {
            config,
            out,
            threads,
        } => jobs::run(config, out.as_deref(), *threads),
        Cmd::Account(a) => account::run(a).map(|()| ExitCode::SUCCESS),
        Cmd::Calibrate(a) => jobs::calibrate(a),
        Cmd::Simulate {
            config,
            shard,
            shards,
            out,
            generation,
            population,
            threads,
        } => jobs::simulate(
            config,
            (*shard, *shards),
            out,
            *generation,
            population.as_deref(),
            *threads,
        ),
        Cmd::SmcStep {
            config,
            pairs,
            generation,
            population,
            out,
        } => jobs::smc_step(
            config,
            pairs,
            *generation,
            population.as_deref(),
            out.as_deref(),
        ),
        Cmd::Verify { dir, generation } => jobs::verify(dir, *generation),
        Cmd::Merge {
            dir,
            out,
            generation,
            force,
        } => jobs::merge(dir, out, *generation, *force),
        Cmd::Export {
            pairs,
            out,
            config,
            force,
        } => jobs::export(pairs, out, config.as_deref(), *force),
        Cmd::PrivateStep { config, pairs, out } => {
            jobs::private_step(config, pairs, out.as_deref())
        }
    };
    // Standard output that failed: a closed pipe ends quietly (as `head` expects of other Unix
    // tools); any other failure (a full disk, /dev/full) is an error.
    let r = match (r, take_stdout_error()) {
        (Ok(code), None) => Ok(code),
        (_, Some(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
        (Ok(_), Some(e)) => Err(anyhow::Error::new(e).context("writing to standard output")),
        (Err(e), Some(_)) => Err(e),
        (Err(e), None) => Err(e),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            errln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}
