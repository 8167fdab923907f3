//! Times a public pairs table computed through the worker pool (what `dpinfer simulate` does
//! for a command model, without the shard file): θ ~ U(−3, 3), `outputs` values per row.
//! `scripts/bench_external.py` runs it against ELFI and pyabc in the same run.
//!
//! Usage: `bench_pool <rows> <workers> <batch> <in_flight> <outputs> <command…>`; prints one
//! line `rows=… workers=… seconds=… rows_per_s=… startup_s=…`, where `startup_s` is the time
//! from starting a fresh pool to the answer of a one-row request (process start, imports,
//! first batch) measured before the run, on its own pool.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss
)]

use std::process::ExitCode;
use std::time::Instant;

use dpinfer_abc::pairs::{Proposal, PublicPairs};
use dpinfer_simulators::prior::Uniform;
use dpinfer_workers::{CommandSimulator, Pool, PoolSettings, Request};

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench_pool: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<String, Box<dyn core::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 6 {
        return Err(
            "usage: bench_pool <rows> <workers> <batch> <in_flight> <outputs> <command…>".into(),
        );
    }
    let rows: u64 = args[0].parse()?;
    let workers: usize = args[1].parse()?;
    let mut settings = PoolSettings::new(args[5..].to_vec(), vec!["mu".into()], args[4].parse()?);
    settings.batch = args[2].parse()?;
    settings.in_flight = args[3].parse()?;

    let t = Instant::now();
    let probe = Pool::new(settings.clone())?;
    probe.run(
        &[Request {
            row: 0,
            seed: 1,
            theta: vec![0.0],
        }],
        1,
    )?;
    let startup = t.elapsed().as_secs_f64();
    drop(probe);

    let prior = Uniform::new(-3.0, 3.0)?;
    let t = Instant::now();
    let sim = CommandSimulator::new(Pool::new(settings)?, workers);
    let table = PublicPairs::simulate(&Proposal::Prior(&prior), &sim, 1, 0..rows).map_err(|e| {
        format!(
            "{e}: {}",
            sim.take_error().map(|w| w.to_string()).unwrap_or_default()
        )
    })?;
    let seconds = t.elapsed().as_secs_f64();
    assert_eq!(table.len() as u64, rows);
    Ok(format!(
        "rows={rows} workers={workers} seconds={seconds:.4} rows_per_s={:.0} startup_s={startup:.4}",
        rows as f64 / seconds
    ))
}
