//! Bounds on every count a config can set, so no config can make the CLI abort on
//! allocation or run unbounded. The bounds are far above the papers' settings (10⁴–10⁶
//! pairs, 10²–10³ features) and are documented in the README; tables that fit the bounds
//! but not the machine's memory are allocated fallibly ([`alloc_zeroed`]) and fail with an
//! error, not an abort. `Config::validate` checks a config against them.

use crate::error::{Result, bail};

/// Most public (θ, summary) pairs per table (`sampler.pairs`).
pub const MAX_PAIRS: u64 = 1_000_000_000;
/// Most observations of a model (`model.n`).
pub const MAX_N: u64 = 100_000_000;
/// Most random Fourier features (`distance.features`).
pub const MAX_FEATURES: u64 = 65_536;
/// Most SMC particles (`sampler.particles`) and accepted samples (`sampler.accept`).
pub const MAX_PARTICLES: u64 = 10_000_000;
/// Most SMC generations (`sampler.generations`).
pub const MAX_GENERATIONS: u64 = 100_000;
/// Most simulations of an SMC-ABC run (`sampler.simulations`).
pub const MAX_SIMULATIONS: u64 = 1_000_000_000_000;
/// Most MCMC iterations (`sampler.iterations`).
pub const MAX_ITERATIONS: u64 = 1_000_000_000;
/// Most HMC leapfrog steps (`sampler.leapfrog_steps`).
pub const MAX_LEAPFROG: u64 = 100_000;
/// Most SVT acceptances (`sampler.c`), mini-batch rows (`sampler.batch`).
pub const MAX_COUNT: u64 = 1_000_000_000;
/// Most binomial trials of the released curve (`privacy.release_n`).
pub const MAX_RELEASE_N: u64 = 1_000_000_000_000;

/// Most parameters of a declared prior (`[[model.prior]]` tables, a Dirichlet block's `k`
/// counted as its `k` parameters): one request column each for a command model.
pub const MAX_PRIOR_PARAMS: u64 = 1_000;
/// Most retries of a failed worker batch (`model.retries`), each on a fresh worker.
pub const MAX_RETRIES: u64 = 100;

/// Most worker threads `--threads` / `output.threads` may ask for.
pub const MAX_THREADS: usize = 1024;

/// A zeroed vector of `n` values, allocated fallibly (`what` names it in the error).
///
/// # Errors
/// Not enough memory.
pub fn alloc_zeroed(n: usize, what: &str) -> Result<Vec<f64>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        bail!(
            OutOfMemory,
            "not enough memory for {what} ({n} values, {:.3} GB)",
            n as f64 * 8e-9
        );
    }
    v.resize(n, 0.0);
    Ok(v)
}
