//! Times the rows of a public pairs table computed through the worker pool (what `dpinfer
//! simulate` does for a command model, without the shard file and the table): θ ~ U(−3, 3)
//! from each row's own stream, blocks of 4096 rows through the pool's `RowSimulator` (as
//! `dpinfer_abc::pairs::PublicPairs::simulate` sends them), `outputs` values per row.
//! `scripts/bench_external.py` runs it against ELFI and pyabc in the same run.
//!
//! Usage: `bench_pool <rows> <workers> <batch> <in_flight> <outputs> <command…>`; prints one
//! line `rows=… workers=… seconds=… rows_per_s=… startup_s=… pool_cpu_us=… worker_cpu_us=…`,
//! where `startup_s` is the time from starting a fresh pool to the answer of a one-row request
//! (process start, imports, first batch) measured before the run, on its own pool, and the
//! CPU figures are per row, of this process (θ draws, requests, decoding: the pool's own cost)
//! and of its worker processes (start-up included), from `/proc/self/stat` (Linux, 100 ticks
//! per second) — unlike wall time they do not depend on the machine's load.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss
)]

use std::process::ExitCode;
use std::time::Instant;

use dpinfer_simulators::prior::Uniform;
use dpinfer_simulators::{Prior, RowSimulator, Rowless, SimError, SimStream};
use dpinfer_workers::{CommandSimulator, Pool, PoolSettings, Request};

/// Rows per `simulate_rows` call (a pairs table's block).
const BLOCK: usize = 4096;

/// Simulates rows `0..rows` in blocks of [`BLOCK`]: θ_j from `prior` on row `j`'s stream (run
/// seed 1), then the block through `sim`; returns the rows the simulator accepted.
fn table<S: RowSimulator + ?Sized>(prior: &Uniform, sim: &S, rows: u64) -> Result<u64, SimError> {
    let mut accepted = 0;
    let mut out = Vec::new();
    for first in (0..rows).step_by(BLOCK) {
        let ids: Vec<u64> = (first..rows).take(BLOCK).collect();
        let mut streams: Vec<SimStream> = ids
            .iter()
            .map(|&j| SimStream::with_domain(1, 1, j))
            .collect();
        let mut thetas = vec![0.0; ids.len()];
        for (s, t) in streams.iter_mut().zip(thetas.iter_mut()) {
            prior.sample(s, core::slice::from_mut(t))?;
        }
        out.resize(ids.len() * sim.row_output_dim(), 0.0);
        let mut ok = vec![false; ids.len()];
        sim.simulate_rows(&ids, &thetas, &mut streams, &mut out, &mut ok)?;
        accepted += ok.iter().filter(|&&k| k).count() as u64;
    }
    Ok(accepted)
}

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

    let prior = Uniform::new(-3.0, 3.0)?;
    if args[5] == "--in-process" {
        // The same table without the pool: the library's own per-row cost (row streams, θ
        // draws) plus the reference model in Rust.
        let model = dpinfer_simulators::FnSimulator::new(
            1,
            settings.outputs,
            |th: &[f64], rng: &mut dyn rand_core::Rng, out: &mut [f64]| {
                let mut r = SimStream::new(rng.next_u64(), 0);
                for y in out.iter_mut() {
                    *y = th[0] + dpinfer_simulators::dist::std_normal(&mut r);
                }
                Ok(())
            },
        )?;
        let cpu0 = cpu_ticks();
        let t = Instant::now();
        let accepted = table(&prior, &Rowless(&model), rows)?;
        let seconds = t.elapsed().as_secs_f64();
        assert_eq!(accepted, rows);
        let cpu = (cpu_ticks().0 - cpu0.0) as f64 * 1e4 / rows as f64;
        return Ok(format!(
            "rows={rows} in-process seconds={seconds:.4} rows_per_s={:.0} cpu_us={cpu:.3}",
            rows as f64 / seconds
        ));
    }
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

    let cpu0 = cpu_ticks();
    let t = Instant::now();
    let sim = CommandSimulator::new(Pool::new(settings)?, workers);
    let accepted = table(&prior, &sim, rows).map_err(|e| {
        format!(
            "{e}: {}",
            sim.take_error().map(|w| w.to_string()).unwrap_or_default()
        )
    })?;
    let seconds = t.elapsed().as_secs_f64();
    assert_eq!(accepted, rows);
    drop(sim); // the workers exit and are waited for: their CPU time is now counted
    let cpu1 = cpu_ticks();
    let per_row = |a: u64, b: u64| (b.saturating_sub(a)) as f64 * 1e4 / rows as f64;
    Ok(format!(
        "rows={rows} workers={workers} seconds={seconds:.4} rows_per_s={:.0} startup_s={startup:.4} \
         pool_cpu_us={:.3} worker_cpu_us={:.3}",
        rows as f64 / seconds,
        per_row(cpu0.0, cpu1.0),
        per_row(cpu0.1, cpu1.1),
    ))
}

/// (own user + system, waited-for children's user + system) CPU time in ticks of 10 ms.
fn cpu_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime, stime, cutime, cstime are fields 14..=17 of the line, 12..=15 after ')' + state.
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    (at(11) + at(12), at(13) + at(14))
}
