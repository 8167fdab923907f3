#![cfg(feature = "alloc")] // uses the crate's alloc API
//! The run's exact kernels (clipped RWMH, Barker, HMC) and models without gradients
//! (`Run::without_gradient`): each exact kernel through `Run` is the hand-driven sampler bit
//! for bit; a model wrapped in `NoGradient` gives the draws, ε and claim of the same model run
//! with gradients; gradient kernels are refused by name. The Python front end's parity
//! golden file (`tests/data/python_parity.txt`, read by `python/tests/test_mcmc.py`) is what
//! the library's run produces.
use crate::common;

use common::toy;
use dpinfer_mcmc::model::PriorGradient;
use dpinfer_mcmc::run::{
    CHAIN_DOMAIN, DpHmc, DpPenalty, Kernel, Leapfrog, NO_GRADIENT, NoGradient, Run, RunOutput,
    RunSettings, Scale, Target, Walk, WalkKind,
};
use dpinfer_mcmc::{
    Barker, BarkerSettings, Hmc, HmcSettings, MarkovChain, McmcError, Penalty, PenaltySettings,
    Proposal, Trace,
};
use dpinfer_simulators::prior::Normal;
use dpinfer_simulators::{RowGradient, RowLikelihood, SimError, SimStream};
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

fn settings(iterations: u64, chains: usize) -> RunSettings {
    common::run_settings(iterations, chains, 11)
}

fn noise(kernel: &Kernel, m: usize) -> Vec<ChaCha20Rng> {
    if kernel.is_private() {
        (0..m)
            .map(|i| ChaCha20Rng::seed_from_u64(70 + i as u64))
            .collect()
    } else {
        Vec::new()
    }
}

fn bits(t: &Trace) -> Vec<u64> {
    t.draws.iter().map(|x| x.to_bits()).collect()
}

fn walk(kind: WalkKind) -> Walk {
    Walk {
        scale: Scale::Uniform(0.06),
        kind,
        temperature: 0.7,
    }
}

/// The hand-driven loop a front end used to run: stream `CHAIN_DOMAIN` chain 0, burn-in
/// `iterations / 2`.
fn by_hand<S: MarkovChain>(mut s: S, iterations: u64) -> Trace {
    let mut rng = SimStream::with_domain(11, CHAIN_DOMAIN, 0);
    let mut t = Trace::with_burn_in(iterations / 2);
    s.run(iterations, &mut rng, &mut t).unwrap();
    t
}

fn run(kernel: &Kernel, s: &RunSettings) -> RunOutput {
    let (prior, lik) = toy(200, 2, 5);
    Run::new(prior, lik, &[0.9, 0.9], kernel, s, noise(kernel, s.chains))
        .unwrap()
        .run(&())
        .unwrap()
}

/// Clipped RWMH, Barker and HMC through `Run` are `Penalty::exact(..).with_clip`,
/// `Barker::exact` and `Hmc::exact` driven by hand, bit for bit; none spends ε.
#[test]
fn exact_kernels_are_the_hand_driven_samplers() {
    let (prior, lik) = toy(200, 2, 5);
    let init = [0.9, 0.9];
    let n = 600;
    let s = settings(n, 1);
    let clipped = Kernel::ClippedRwmh {
        walk: walk(WalkKind::OneCoordinate),
        clip: 0.5,
    };
    let proposal = Proposal::OneCoordinate {
        scale: vec![0.06; 2],
    };
    let hand = Penalty::exact(
        prior,
        lik.clone(),
        PenaltySettings {
            proposal,
            temperature: 0.7,
        },
        &init,
    )
    .unwrap()
    .with_clip(0.5)
    .unwrap();
    let out = run(&clipped, &s);
    let t = by_hand(hand, n);
    assert_eq!(bits(&out.traces[0]), bits(&t));
    // The clip is active: some ratios were clipped, and the draws differ from plain RWMH.
    assert!(t.clip_fraction() > 0.0, "{}", t.clip_fraction());
    let plain = run(&Kernel::Rwmh(walk(WalkKind::OneCoordinate)), &s);
    assert_ne!(bits(&plain.traces[0]), bits(&t));

    let barker = Barker::exact(
        prior,
        lik.clone(),
        BarkerSettings {
            proposal: Proposal::Gaussian {
                scale: vec![0.06; 2],
            },
            temperature: 0.7,
        },
        &init,
    )
    .unwrap();
    let out = run(&Kernel::Barker(walk(WalkKind::Gaussian)), &s);
    assert_eq!(bits(&out.traces[0]), bits(&by_hand(barker, n)));

    let leapfrog = Leapfrog {
        step_size: 0.03,
        leapfrog_steps: 4,
        inv_mass: Some(vec![1.0, 2.0]),
        temperature: 0.7,
    };
    let hmc = Hmc::exact(
        prior,
        lik,
        HmcSettings {
            step_size: 0.03,
            leapfrog_steps: 4,
            inv_mass: vec![1.0, 2.0],
            temperature: 0.7,
        },
        &init,
    )
    .unwrap();
    let out = run(&Kernel::Hmc(leapfrog), &s);
    assert_eq!(bits(&out.traces[0]), bits(&by_hand(hmc, n)));
    for k in [clipped, Kernel::Barker(walk(WalkKind::Gaussian))] {
        let out = run(&k, &settings(n, 3));
        assert!(!k.is_private() && !k.needs_gradient());
        assert!(out.spent.is_none() && out.claim.is_none() && out.budget.is_none());
        assert_eq!(out.iterations, vec![n; 3]);
    }
    assert!(Kernel::Hmc(Leapfrog::default()).needs_gradient());
    assert_eq!(Leapfrog::default().leapfrog_steps, 10);
}

/// Burn-in: a private chain that runs all its iterations discards what was asked (here 90 %,
/// as an exact chain would); one cut short by its budget discards at most half of what it ran.
#[test]
fn burn_in_is_capped_only_for_chains_cut_short() {
    let kernel = Kernel::DpPenalty(DpPenalty::new(Target {
        epsilon: 100.0,
        delta: 1e-6,
    }));
    let late = |iterations| RunSettings {
        burn_in: Some(iterations / 10 * 9),
        ..settings(iterations, 1)
    };
    let out = run(&kernel, &late(200));
    assert_eq!(out.iterations, vec![200]);
    assert_eq!(out.traces[0].len(), 20);
    let exact = run(&Kernel::Rwmh(walk(WalkKind::Gaussian)), &late(200));
    assert_eq!(exact.traces[0].len(), 20);
    let out = run(&kernel, &late(u64::MAX / 2));
    let k = out.iterations[0];
    assert!(k < u64::MAX / 2 && k == out.allowed.unwrap());
    assert_eq!(out.traces[0].len() as u64, k - k / 2);
}

fn gradient_free_kernels() -> Vec<Kernel> {
    vec![
        Kernel::Rwmh(walk(WalkKind::Gaussian)),
        Kernel::ClippedRwmh {
            walk: walk(WalkKind::Guided),
            clip: 0.5,
        },
        Kernel::Barker(walk(WalkKind::Gaussian)),
        Kernel::DpPenalty(DpPenalty::new(Target {
            epsilon: 3.0,
            delta: 1e-6,
        })),
        Kernel::DpBarker(common::tempered_dp_barker()),
    ]
}

/// A model wrapped in `NoGradient` (`Run::without_gradient`) runs every gradient-free kernel
/// exactly as the same model with its gradients: draws, noise, iterations, ε and claim.
#[test]
fn without_gradient_is_the_same_run() {
    for kernel in gradient_free_kernels() {
        for m in [1, 2] {
            let s = settings(800, m);
            let want = run(&kernel, &s);
            let (prior, lik) = toy(200, 2, 5);
            let got =
                Run::without_gradient(prior, lik, &[0.9, 0.9], &kernel, &s, noise(&kernel, m))
                    .unwrap()
                    .run(&())
                    .unwrap();
            for (a, b) in got.traces.iter().zip(&want.traces) {
                assert_eq!(bits(a), bits(b), "{kernel:?}");
                assert_eq!(a.noise_sd, b.noise_sd, "{kernel:?}");
            }
            assert_eq!(got.iterations, want.iterations);
            assert_eq!(got.spent, want.spent);
            assert_eq!(got.claim, want.claim);
            assert_eq!(got.releases, want.releases);
        }
    }
}

/// HMC and DP HMC need gradients: `without_gradient` refuses them before building a chain;
/// called directly, the wrapper's gradients fail (likelihood) or are NaN (prior).
#[test]
fn gradient_kernels_are_refused_without_gradients() {
    let target = Target {
        epsilon: 3.0,
        delta: 1e-6,
    };
    for kernel in [
        Kernel::Hmc(Leapfrog::default()),
        Kernel::DpHmc(DpHmc::new(target)),
    ] {
        let (prior, lik) = toy(50, 2, 5);
        let e = Run::without_gradient(
            prior,
            lik,
            &[0.0, 0.0],
            &kernel,
            &settings(100, 1),
            noise(&kernel, 1),
        )
        .unwrap_err();
        assert_eq!(e, McmcError::GradientRequired);
        assert_eq!(
            e.to_string(),
            "this kernel (HMC, DP HMC) needs prior and likelihood gradients"
        );
    }
    let (prior, lik) = toy(50, 2, 5);
    let mut g = [0.0; 4];
    assert_eq!(
        NoGradient(lik).row_grad(&[0.0, 0.0], 0, &mut g),
        Err(SimError::Model {
            code: NO_GRADIENT,
            recoverable: false
        })
    );
    NoGradient(prior).grad_ln_density(&[0.0, 0.0], &mut g[..2]);
    assert!(g[..2].iter().all(|x| x.is_nan()));
}

/// The per-row likelihood the Python front end's parity test evaluates in numpy:
/// `ℓ_j(θ) = −0.5·(x_j − θ)²` with `x_j = (j mod 17)/8 − 1`, every operation in numpy's order
/// (`-0.5 * (X - t) ** 2`; `** 2` is numpy's exact square), so both sides see the same bits.
#[derive(Clone, Copy)]
struct ParityLik;

const PARITY_N: usize = 200;

impl RowLikelihood for ParityLik {
    fn dim(&self) -> usize {
        1
    }
    fn n_rows(&self) -> usize {
        PARITY_N
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        for (k, o) in out.iter_mut().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let x = ((first + k) % 17) as f64 / 8.0 - 1.0;
            let d = x - theta[0];
            *o = -0.5 * (d * d);
        }
        Ok(())
    }
}

impl RowGradient for ParityLik {
    /// `∂ℓ_j/∂θ = x_j − θ` (numpy: `(X - t).reshape(-1, 1)`).
    fn row_grad(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        for (k, o) in out.iter_mut().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let x = ((first + k) % 17) as f64 / 8.0 - 1.0;
            *o = x - theta[0];
        }
        Ok(())
    }
}

/// The chain keys of the Python front end: one chain, every iteration the budget allows, no
/// burn-in, one segment.
fn parity_settings() -> RunSettings {
    RunSettings {
        iterations: u64::MAX,
        burn_in: Some(0),
        chains: 1,
        seed: 2,
        segments: 1,
    }
}

/// The Python front end's DP penalty run (`dpinfer.mcmc.dp_penalty(priors.Normal(0, 10),
/// log_lik, 200, [0.0], epsilon=4, delta=1e-5, clip=5, tau=1, step_size=0.05, seed=2,
/// noise_seed=1)`) as the library runs it: the prior `Normal(0, 10)` the Python prior
/// wraps, a Gaussian walk, every iteration the budget allows, no burn-in, noise
/// `ChaCha20Rng::seed_from_u64(1)`.
fn parity_run() -> RunOutput {
    let mut k = DpPenalty::new(Target {
        epsilon: 4.0,
        delta: 1e-5,
    });
    k.walk.kind = WalkKind::Gaussian;
    k.walk.scale = Scale::PerCoordinate(vec![0.05]);
    k.tau = 1.0;
    let prior = Normal::new(0.0, 10.0).unwrap();
    let noise = vec![ChaCha20Rng::seed_from_u64(1)];
    let s = parity_settings();
    Run::without_gradient(prior, ParityLik, &[0.0], &Kernel::DpPenalty(k), &s, noise)
        .unwrap()
        .run(&())
        .unwrap()
}

/// The Python front end's DP HMC run (`dpinfer.mcmc.dp_hmc(priors.Normal(0, 10), log_lik,
/// grad_log_lik, 200, [0.0], epsilon=4, delta=1e-5, ratio_clip=3, grad_clip=2, tau_l=2,
/// tau_g=2, step_size=0.005, leapfrog_steps=2, seed=2, noise_seed=1)`): the Python
/// `priors.Normal` with one mean and sd becomes the library's `GaussianPrior` with its
/// gradient; PLD, Algorithm 3's gradient reuse.
fn parity_hmc_run() -> RunOutput {
    let target = Target {
        epsilon: 4.0,
        delta: 1e-5,
    };
    let mut k = common::dp_hmc(target, 0.005, 2);
    k.ratio_clip = 3.0;
    k.grad_clip = 2.0;
    let prior = dpinfer_mcmc::model::GaussianPrior::new(1, 0.0, 10.0).unwrap();
    let noise = vec![ChaCha20Rng::seed_from_u64(1)];
    let s = parity_settings();
    Run::new(prior, ParityLik, &[0.0], &Kernel::DpHmc(k), &s, noise)
        .unwrap()
        .run(&())
        .unwrap()
}

fn parity_text(out: &RunOutput, run: &str, python: &str) -> String {
    use core::fmt::Write;
    let (eps, delta) = out.spent.unwrap();
    let mut s = format!(
        "# dpinfer-mcmc Run on the parity model (tests/suite/run_kernels.rs, {run}); \
         python/tests/test_mcmc.py checks dpinfer.mcmc.{python} against it.\n\
         # Regenerate: DPINFER_REGENERATE=1 cargo test -p dpinfer-mcmc --test suite -- run_kernels::\n",
    );
    let claim = out.claim.as_ref().unwrap();
    writeln!(s, "iterations {}", out.iterations[0]).unwrap();
    writeln!(s, "allowed {}", out.allowed.unwrap()).unwrap();
    writeln!(s, "epsilon {eps:?}").unwrap();
    writeln!(s, "delta {delta:?}").unwrap();
    writeln!(s, "claim_epsilon {:?}", claim.epsilon()).unwrap();
    writeln!(s, "acceptance_rate {:?}", out.traces[0].acceptance_rate()).unwrap();
    for x in &out.traces[0].draws {
        writeln!(s, "draw {x:?}").unwrap();
    }
    s
}

/// `text` equals the committed file `tests/data/{name}` (written instead under
/// `DPINFER_REGENERATE`).
fn same_as_file(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    if std::env::var_os("DPINFER_REGENERATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        text == want,
        "{} differs from the library run",
        path.display()
    );
}

/// A run worth comparing: more than a handful of steps, some accepted, some not, within
/// the target.
fn worth_comparing(out: &RunOutput) {
    eprintln!(
        "{:?} iterations, acceptance {}, ε {:?}",
        out.iterations,
        out.traces[0].acceptance_rate(),
        out.spent
    );
    assert!(out.iterations[0] > 50, "{:?}", out.iterations);
    let a = out.traces[0].acceptance_rate();
    assert!(a > 0.1 && a < 0.95, "{a}");
    assert!(out.spent.unwrap().0 <= 4.0);
}

/// The committed parity files are the library's output for the Python front end's calls:
/// the Python tests compare `dpinfer.mcmc.dp_penalty`'s and `dp_hmc`'s draws and ε with them
/// bit for bit.
#[test]
fn python_parity_files_are_the_library_runs() {
    let out = parity_run();
    worth_comparing(&out);
    same_as_file(
        "python_parity.txt",
        &parity_text(&out, "parity_run", "dp_penalty"),
    );
    let out = parity_hmc_run();
    worth_comparing(&out);
    assert!(out.releases.gradients > 0);
    same_as_file(
        "python_parity_dp_hmc.txt",
        &parity_text(&out, "parity_hmc_run", "dp_hmc"),
    );
}

/// `run_parallel` gives the sequential run's draws for the exact kernels too (3 chains on
/// pools of 1 and 3 threads).
#[cfg(feature = "parallel")]
#[test]
fn exact_kernels_run_in_parallel_bit_identically() {
    let kernels = [
        Kernel::ClippedRwmh {
            walk: walk(WalkKind::Gaussian),
            clip: 0.5,
        },
        Kernel::Barker(walk(WalkKind::Gaussian)),
        Kernel::Hmc(Leapfrog {
            step_size: 0.03,
            leapfrog_steps: 3,
            ..Leapfrog::default()
        }),
    ];
    for kernel in kernels {
        let s = settings(300, 3);
        let want = run(&kernel, &s);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (prior, lik) = toy(200, 2, 5);
            let got = pool
                .install(|| {
                    Run::new(prior, lik, &[0.9, 0.9], &kernel, &s, noise(&kernel, 3))
                        .unwrap()
                        .run_parallel(&())
                })
                .unwrap();
            for (a, b) in got.traces.iter().zip(&want.traces) {
                assert_eq!(bits(a), bits(b), "{kernel:?} {threads}");
            }
        }
    }
}
