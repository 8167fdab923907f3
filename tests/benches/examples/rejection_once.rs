//! Rejection ABC on the Gaussian-mean toy through the library (the issue table's row
//! "rejection ABC on the Gaussian-mean toy with the crate's own normal sampler"): θ ~ N(0, 1),
//! 100 observations y ~ N(θ, 1) (`GaussianMean`, stream version from the command line),
//! distance |ȳ − 0.5|, tolerance 0.05, `SIMS` proposals with `RejectionAbc::run_parallel` on a
//! rayon pool of `THREADS`. Prints `sims threads seconds sims_per_second accepted`.
//!
//! Run: `cargo run --release --manifest-path tests/benches/Cargo.toml --example rejection_once
//! -- [THREADS] [SIMS] [VERSION]`
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::cast_precision_loss)]

use dpinfer_abc::rejection::{RejectionAbc, RejectionSettings, Rule};
use dpinfer_simulators::StreamVersion;
use dpinfer_simulators::models::gaussian::GaussianMean;
use dpinfer_simulators::prior::Normal;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let sims: u64 = args
        .get(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let version = match args.get(3).map(String::as_str) {
        Some("1") => StreamVersion::V1,
        _ => StreamVersion::V2,
    };
    let model = GaussianMean::new(100, 1.0, 0.0, 1.0)
        .unwrap()
        .with_stream_version(version);
    let dist = |y: &[f64]| (y.iter().sum::<f64>() / 100.0 - 0.5).abs();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut s = RejectionAbc::new(
        Normal::new(0.0, 1.0).unwrap(),
        model,
        dist,
        RejectionSettings {
            rule: Rule::Threshold(0.05),
            budget: sims,
            target: u64::MAX,
        },
    )
    .unwrap();
    let t = std::time::Instant::now();
    pool.install(|| s.run_parallel(1)).unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{sims} {threads} {secs:.4} {:.0} {}",
        sims as f64 / secs,
        s.accepted().len()
    );
}
