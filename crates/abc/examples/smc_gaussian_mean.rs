//! SMC-ABC on the Gaussian-mean toy (100 observations, summary = mean, prior N(0, 1)),
//! 1000 particles to tolerance 0.01, printing per-generation diagnostics.
//!
//! Run: `cargo run --release -p dpinfer-abc --example smc_gaussian_mean [alpha] [seed] [kernel_scale]`
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::time::Instant;

use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::smc::{SmcAbc, SmcSettings, Tolerance};
use dpinfer_simulators::prior::Normal;
use dpinfer_simulators::{FnSimulator, SimError};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_core::Rng;

/// 100 draws y_i ~ N(θ, 1), summary = their mean.
fn mean_of_100(th: &[f64], rng: &mut dyn Rng, out: &mut [f64]) -> Result<(), SimError> {
    let mut s = 0.0;
    for _ in 0..100 {
        s += dpinfer_simulators::dist::std_normal(rng);
    }
    out[0] = th[0] + s / 100.0;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let alpha: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0.5);
    let seed: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2);
    let kernel_scale: f64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(2.0);
    let obs = [0.5];
    let settings = SmcSettings {
        particles: 1000,
        tolerance: Tolerance::Quantile {
            initial: f64::INFINITY,
            alpha,
        },
        final_tolerance: 0.01,
        max_generations: 50,
        kernel_scale,
        ..SmcSettings::default()
    };
    let mut s = SmcAbc::new(
        Normal::new(0.0, 1.0).unwrap(),
        FnSimulator::new(1, 1, mean_of_100).unwrap(),
        Euclidean::new(&obs).unwrap(),
        settings,
    )
    .unwrap();
    let t0 = Instant::now();
    let reason = s.run(&mut Xoshiro256PlusPlus::seed_from_u64(seed)).unwrap();
    let dt = t0.elapsed();
    println!("gen  tolerance   sims     acc.rate  ESS     resampled");
    for g in s.history() {
        println!(
            "{:3}  {:9.5}  {:7}  {:7.4}  {:7.1}  {}",
            g.generation, g.tolerance, g.simulations, g.acceptance_rate, g.ess, g.resampled
        );
    }
    let mut m = [0.0];
    s.posterior_mean(&mut m).unwrap();
    println!(
        "stop: {reason:?}; {} simulations in {:.3} s; posterior mean {:.4} (exact {:.4})",
        s.simulations(),
        dt.as_secs_f64(),
        m[0],
        100.0 * 0.5 / 101.0
    );
}
