#![cfg(feature = "alloc")] // uses the crate's alloc API
//! The library run (`dpinfer_mcmc::run`): one chain reproduces the hand-driven sampler bit for
//! bit, several chains stay within one budget, the parallel run is bit-identical for 1, 2 and
//! 7 threads, the observer hears every iteration, and bad settings are refused by name.
use crate::common;

use core::sync::atomic::{AtomicU64, Ordering};

use common::toy;
use dpinfer_mcmc::budget::Accounting;
use dpinfer_mcmc::run::{
    CHAIN_DOMAIN, DpHmc, DpPenalty, Kernel, Run, RunOutput, RunSettings, Scale, Target, Walk,
    WalkKind,
};
use dpinfer_mcmc::{
    MarkovChain, McmcError, Penalty, PenaltyPrivacy, PenaltySettings, Progress, Proposal, Trace,
};
use dpinfer_simulators::SimStream;
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

const TARGET: Target = Target {
    epsilon: 3.0,
    delta: 1e-6,
};

fn noise(m: usize) -> Vec<ChaCha20Rng> {
    (0..m)
        .map(|i| ChaCha20Rng::seed_from_u64(40 + i as u64))
        .collect()
}

fn settings(iterations: u64, chains: usize) -> RunSettings {
    common::run_settings(iterations, chains, 9)
}

fn run(kernel: &Kernel, s: &RunSettings) -> RunOutput {
    let (prior, lik) = toy(300, 2, 8);
    let noise = if kernel.is_private() {
        noise(s.chains)
    } else {
        Vec::new()
    };
    Run::new(prior, lik, &[0.8, 0.8], kernel, s, noise)
        .unwrap()
        .run(&())
        .unwrap()
}

fn kernels() -> Vec<Kernel> {
    let hmc_target = Target {
        epsilon: 6.0,
        delta: 1e-6,
    };
    vec![
        Kernel::Rwmh(Walk::new(WalkKind::Gaussian)),
        Kernel::DpPenalty(DpPenalty::new(TARGET)),
        Kernel::DpBarker(common::tempered_dp_barker()),
        Kernel::DpHmc(common::dp_hmc(hmc_target, 0.02, 3)),
    ]
}

fn bits(t: &Trace) -> Vec<u64> {
    t.draws.iter().map(|x| x.to_bits()).collect()
}

/// One chain of the library run is exactly the sampler driven by hand (the CLI's old loop):
/// the same stream, the budget cap, burn-in ≤ half, ε spent after the run.
#[test]
fn one_chain_matches_the_hand_driven_sampler() {
    let s = settings(400, 1);
    let out = run(&Kernel::DpPenalty(DpPenalty::new(TARGET)), &s);
    let (prior, lik) = toy(300, 2, 8);
    let mut chain = Penalty::private(
        prior,
        lik,
        PenaltySettings {
            proposal: Proposal::GuidedRandomWalk {
                scale: vec![0.05, 0.05],
            },
            temperature: 1.0,
        },
        PenaltyPrivacy {
            clip: 5.0,
            tau: 0.5,
            n_exponent: 0.5,
            epsilon: TARGET.epsilon,
            delta: TARGET.delta,
            accounting: Accounting::Pld,
        },
        &[0.8, 0.8],
        noise(1).remove(0),
    )
    .unwrap();
    let k = chain.max_iterations().unwrap().min(400);
    let mut rng = SimStream::with_domain(9, CHAIN_DOMAIN, 0);
    let mut t = Trace::with_burn_in(200.min(k / 2));
    chain.run(k, &mut rng, &mut t).unwrap();
    assert_eq!(out.iterations, vec![k]);
    assert_eq!(bits(&out.traces[0]), bits(&t));
    assert_eq!(out.spent, chain.epsilon_spent().unwrap());
    assert_eq!(out.epsilon.last().unwrap().1, out.spent.unwrap().0);
}

/// Several chains share one budget: the iterations run never exceed what the budget allows
/// for that many chains, ε spent (the composition over every chain) stays within the target,
/// and the ε trajectory rises to it from 0.
#[test]
fn chains_share_one_budget() {
    for kernel in kernels().iter().filter(|k| k.is_private()) {
        let target = kernel.target().unwrap();
        for m in [1, 3] {
            let out = run(kernel, &settings(100_000, m));
            let total: u64 = out.iterations.iter().sum();
            assert!(total <= out.allowed.unwrap(), "{kernel:?}");
            let (eps, delta) = out.spent.unwrap();
            assert!(eps <= target.epsilon && delta == target.delta, "{eps}");
            assert_eq!(out.epsilon[0], (0, 0.0));
            assert!(out.epsilon.windows(2).all(|w| w[0].1 <= w[1].1));
            assert_eq!(*out.epsilon.last().unwrap(), (total, eps));
            assert_eq!(out.traces.len(), m);
        }
    }
}

/// The observer hears every iteration of every chain, in segments.
#[test]
fn progress_hears_every_iteration() {
    struct Count(AtomicU64, AtomicU64);
    impl Progress for Count {
        fn advanced(&self, _: usize, k: u64) {
            self.0.fetch_add(k, Ordering::Relaxed);
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }
    let (prior, lik) = toy(300, 2, 8);
    let s = RunSettings {
        segments: 10,
        ..settings(1000, 3)
    };
    let r = Run::new(
        prior,
        lik,
        &[0.8, 0.8],
        &Kernel::Rwmh(Walk::new(WalkKind::OneCoordinate)),
        &s,
        Vec::<ChaCha20Rng>::new(),
    )
    .unwrap();
    assert_eq!(r.iterations(), vec![1000; 3]);
    let c = Count(AtomicU64::new(0), AtomicU64::new(0));
    let out = r.run(&c).unwrap();
    assert_eq!(c.0.load(Ordering::Relaxed), 3000);
    assert_eq!(c.1.load(Ordering::Relaxed), 30);
    assert!(out.spent.is_none() && out.epsilon.is_empty());
    assert_eq!(out.traces[0].len(), 500);
}

#[test]
fn bad_settings_are_refused_by_name() {
    let (prior, lik) = toy(300, 2, 8);
    let k = Kernel::DpPenalty(DpPenalty::new(TARGET));
    let try_run = |init: &[f64], k: &Kernel, s: &RunSettings, n: Vec<ChaCha20Rng>| {
        Run::new(prior, lik.clone(), init, k, s, n).map(|_| ())
    };
    let s = settings(100, 1);
    assert!(matches!(
        try_run(&[0.0; 3], &k, &s, noise(1)),
        Err(McmcError::WrongLength { name: "init", .. })
    ));
    assert!(matches!(
        try_run(&[0.0; 2], &k, &s, noise(2)),
        Err(McmcError::DimensionMismatch { .. })
    ));
    let mut walk = Walk::new(WalkKind::Gaussian);
    walk.scale = Scale::PerCoordinate(vec![0.1]);
    assert!(matches!(
        try_run(&[0.0; 2], &Kernel::Rwmh(walk), &s, Vec::new()),
        Err(McmcError::WrongLength {
            name: "proposal_scales",
            ..
        })
    ));
    let mut hmc = DpHmc::new(TARGET);
    hmc.inv_mass = Some(vec![1.0; 5]);
    let e = try_run(&[0.0; 2], &Kernel::DpHmc(hmc), &s, noise(1)).unwrap_err();
    assert_eq!(e.to_string(), "inv_mass has 5 values, θ has 2");
    let late = RunSettings {
        burn_in: Some(100),
        ..settings(100, 1)
    };
    assert!(matches!(
        try_run(&[0.0; 2], &k, &late, noise(1)),
        Err(McmcError::InvalidSize {
            name: "burn_in",
            ..
        })
    ));
    // A budget too small for two iterations is refused before any noise is drawn.
    let tiny = Kernel::DpPenalty(DpPenalty::new(Target {
        epsilon: 1e-4,
        delta: 1e-6,
    }));
    assert!(matches!(
        try_run(&[0.0; 2], &tiny, &s, noise(1)),
        Err(McmcError::BudgetExhausted { .. })
    ));
}

/// `run_parallel` on pools of 1, 2 and 7 threads gives the sequential run's draws, noise and
/// ε bit for bit, for every kernel.
#[cfg(feature = "parallel")]
#[test]
fn parallel_run_is_bit_identical_for_any_thread_count() {
    for kernel in kernels() {
        let s = settings(300, 5);
        let want = run(&kernel, &s);
        for threads in [1, 2, 7] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (prior, lik) = toy(300, 2, 8);
            let noise = if kernel.is_private() {
                noise(5)
            } else {
                Vec::new()
            };
            let got = pool
                .install(|| {
                    Run::new(prior, lik, &[0.8, 0.8], &kernel, &s, noise)
                        .unwrap()
                        .run_parallel(&())
                })
                .unwrap();
            for (a, b) in got.traces.iter().zip(&want.traces) {
                assert_eq!(bits(a), bits(b), "{kernel:?} {threads}");
                assert_eq!(a.noise_sd, b.noise_sd);
            }
            assert_eq!(got.spent, want.spent);
            assert_eq!(got.releases, want.releases);
        }
    }
}

/// The run's claim is a value the accountants recompute bit for bit, charges every release
/// the chains actually made (gradients exactly, ratio tests at most once per iteration), and
/// agrees with the budget's own ε to 1e-9 relative (two roundings of the same composition;
/// measured: ≤ 2e-12).
#[test]
fn claims_are_values_that_match_the_budget() {
    use dpinfer_accountants::{Claim, EventBuf, Neighbouring};
    use dpinfer_mcmc::budget::{Budget, GradientCharging, Mechanism};
    let mut kernels = kernels();
    for accounting in [Accounting::Zcdp, Accounting::Pld] {
        let mut p = DpPenalty::new(TARGET);
        p.accounting = accounting;
        kernels.push(Kernel::DpPenalty(p));
        if let Kernel::DpHmc(h) = &kernels[3] {
            let mut h = h.clone();
            h.accounting = accounting;
            h.charging = GradientCharging::Fresh;
            kernels.push(Kernel::DpHmc(h));
        }
    }
    for kernel in kernels.iter().filter(|k| k.is_private()) {
        for m in [1, 3] {
            let out = run(kernel, &settings(100_000, m));
            let (eps, delta) = out.spent.unwrap();
            let claim = out.claim.clone().unwrap();
            eprintln!(
                "{kernel:?} m = {m}: budget ε {eps}, claim ε {}",
                claim.epsilon()
            );
            assert_eq!(claim.relation, Neighbouring::ReplaceOne);
            assert_eq!(claim.delta(), delta);
            assert!((claim.epsilon() - eps).abs() <= 1e-9 * eps, "{claim}");
            let again = Claim::account(
                claim.relation,
                claim.accountant,
                claim.rule,
                claim.events.clone(),
                delta,
            )
            .unwrap();
            assert_eq!(again, claim);
            let total: u64 = out.iterations.iter().sum();
            assert_eq!(claim.events[0].1, total);
            if let Kernel::DpHmc(_) = kernel {
                assert_eq!(claim.events[1].1, out.releases.gradients);
                assert!(out.releases.gaussian - out.releases.gradients <= total);
            } else {
                assert!(out.releases.gaussian <= total);
            }
        }
    }
    // Subsampled DP penalty (not a `Kernel`): its budget's claim is WBK19 RDP of the
    // Gaussian with σ = √τ on batches drawn without replacement.
    let mech = Mechanism::SubsampledPenalty {
        tau: 20.0,
        n: 1000,
        batch: 100,
        rule: dpinfer_accountants::ConversionRule::Tightest,
    };
    let b = Budget::new(mech, 2.0, 1e-6).unwrap();
    let k = b.max_iterations();
    let claim = b.claim(k, 1).unwrap().unwrap();
    let (eps, _) = b.spent(k, 1).unwrap();
    eprintln!(
        "subsampled: k = {k}, budget ε {eps}, claim ε {}",
        claim.epsilon()
    );
    assert!(matches!(
        claim.events[0].0,
        EventBuf::SampledWithoutReplacement {
            batch: 100,
            population: 1000,
            ..
        }
    ));
    assert!((claim.epsilon() - eps).abs() <= 1e-9 * eps, "{claim}");
}

/// The iteration limit never buys a claim over the target (a privacy defect found by a
/// round-trip sweep, 2026-11-30): with the target set to the claim's own ε at some count `k₀`
/// less 0–3 ulps — what a user gets by feeding an `account epsilon` answer back as a budget —
/// the calibration formulas (their own roundings) allowed `k₀`, whose claim read ε a few ulps
/// over the target in about half of such cases, for every mechanism. 240 seeded cases over
/// DP penalty (zCDP, PLD), DP HMC (reused and fresh gradients, 1–4 chains), DP Barker and
/// subsampled DP penalty; each limit's claim must meet (ε, δ), exactly, and the limit must
/// be `k₀` or one less (the fix may not cost more than the rounding).
#[test]
fn the_iteration_limit_never_buys_a_claim_over_the_target() {
    use dpinfer_accountants::ConversionRule;
    use dpinfer_mcmc::budget::{Budget, GradientCharging, Mechanism};
    use rand::RngExt;
    let mut rng = ChaCha20Rng::seed_from_u64(20_261_130);
    let log_uniform = |r: &mut ChaCha20Rng, a: f64, b: f64| {
        (a.ln() + (b.ln() - a.ln()) * r.random::<f64>()).exp()
    };
    let (mut checked, mut edge) = (0, 0);
    for case in 0..240 {
        let r = &mut rng;
        let accounting = if case % 2 == 0 {
            Accounting::Pld
        } else {
            Accounting::Zcdp
        };
        let n = log_uniform(r, 200.0, 1e6) as usize;
        let rule = if r.random::<bool>() {
            ConversionRule::Classic
        } else {
            ConversionRule::Tightest
        };
        let (mech, chains) = match (case / 2) % 4 {
            0 => (
                Mechanism::Penalty {
                    tau: log_uniform(r, 0.05, 5.0),
                    n,
                    n_exponent: 0.5,
                    accounting,
                },
                1,
            ),
            1 => (
                Mechanism::Hmc {
                    tau_l: log_uniform(r, 0.05, 5.0),
                    tau_g: log_uniform(r, 0.05, 5.0),
                    n,
                    leapfrog: r.random_range(1..6),
                    charging: if r.random::<bool>() {
                        GradientCharging::Reuse
                    } else {
                        GradientCharging::Fresh
                    },
                    accounting,
                },
                r.random_range(1..5),
            ),
            2 => (
                Mechanism::Barker {
                    n,
                    batch: r.random_range(60..200),
                    rule,
                },
                1,
            ),
            _ => (
                Mechanism::SubsampledPenalty {
                    tau: log_uniform(r, 0.5, 50.0),
                    n,
                    batch: r.random_range(10..200),
                    rule,
                },
                1,
            ),
        };
        let delta = log_uniform(r, 1e-10, 1e-2);
        let k0 = log_uniform(r, 2.0, 3e4) as u64;
        let ulps = f64::from(r.random_range(0..4_u32));
        let wide = Budget::new(mech, 1e6, delta).unwrap();
        let Ok(Some(c)) = wide.claim(k0, chains) else {
            continue;
        };
        let eps = c.epsilon() * (1.0 - ulps * f64::EPSILON);
        if eps <= 0.0 {
            continue; // δ alone covers k₀ iterations; a target ε must be positive
        }
        let b = match Budget::new(mech, eps, delta) {
            Ok(b) => b,
            Err(McmcError::BudgetExhausted { .. }) => continue,
            Err(e) => panic!("case {case}: {mech:?} ε {eps} δ {delta}: {e}"),
        };
        let k = b.chains_limit(chains).unwrap();
        if k < chains {
            continue;
        }
        let claim = b.claim(k, chains).unwrap().unwrap();
        assert!(
            claim.epsilon() <= eps && claim.delta() <= delta,
            "case {case}: {mech:?}, {chains} chains: target ε {eps}, k {k}: claim ε {}",
            claim.epsilon()
        );
        // No needless loss either: the round trip's count `k₀` fits up to rounding, so the
        // limit is `k₀` or one less.
        assert!(
            k + 1 >= k0,
            "case {case}: {mech:?}: k {k} for a budget of k₀ = {k0}"
        );
        checked += 1;
        edge += usize::from(k < k0);
    }
    eprintln!("checked {checked}, limits below the round trip's count: {edge}");
    assert!(checked >= 150, "only {checked} cases checked");
}
