//! Exact Gillespie SIR, K = 10⁶ at θ* (`dpinfer_simulators::models::sir::Sir::paper`), `REPS`
//! trajectories (streams `SimStream::new(5, r)`), timed as one block for the side-by-side
//! script with the plain C loop (`scripts/gillespie_side_by_side.py`). Prints
//! `events seconds ns_per_event checksum`.
//!
//! Run: `cargo run --release --manifest-path tests/benches/Cargo.toml --example sir_once -- [REPS]`
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::cast_precision_loss)]

use dpinfer_simulators::models::sir::{Sir, theta_star};
use dpinfer_simulators::{IncrementalSimulator, SimStream};

fn main() {
    let reps: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let sir = Sir::paper();
    let th = theta_star();
    let (mut events, mut sum) = (0u64, 0.0);
    let t = std::time::Instant::now();
    for r in 0..reps {
        let mut run = sir.begin(&th).unwrap();
        let mut rng = SimStream::new(5, r);
        let mut o = [0.0];
        for _ in 0..10 {
            sir.next_block(&mut run, &mut rng, &mut o).unwrap();
            sum += o[0];
        }
        events += run.events();
    }
    let s = t.elapsed().as_secs_f64();
    println!("{events} {s:.6} {:.3} {sum}", 1e9 * s / events as f64);
}
