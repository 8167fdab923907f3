//! Shared workloads of the benchmarks (used by `benches/` and `examples/`).
#![allow(clippy::unwrap_used, missing_docs)]

pub mod abcdp_toy;

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;

/// `n` normals with mean `mean` by Box–Muller (benchmark data only): the data of the
/// distance benches (`benches/distances.rs`, `examples/distances_cpu.rs`).
pub fn normals(rng: &mut Xoshiro256PlusPlus, n: usize, mean: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let u: f64 = rng.random::<f64>().max(1e-300);
            let v: f64 = rng.random::<f64>();
            mean + (-2.0 * u.ln()).sqrt() * (2.0 * core::f64::consts::PI * v).cos()
        })
        .collect()
}
