//! One timed run of the ABCDP toy (`dpinfer_benches::abcdp_toy`) for the side-by-side script
//! (`tests/benches/scripts/abcdp_toy_side_by_side.py`): prints
//! `sets threads seconds examined accepted`.
//!
//! Run: `cargo run --release --manifest-path tests/benches/Cargo.toml --example abcdp_toy_once
//! -- [THREADS] [SETS]`
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use dpinfer_benches::abcdp_toy::{SETS, Setup, run};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let sets: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(SETS);
    let setup = Setup::new();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let t = std::time::Instant::now();
    let (examined, accepted) = pool.install(|| run(&setup, sets, 1));
    let s = t.elapsed().as_secs_f64();
    println!("{sets} {threads} {s:.4} {examined} {accepted}");
}
