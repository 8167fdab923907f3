//! Benchmarks of dpinfer-mcmc on the thesis' 2-D banana (n = 100 000 rows, §7.2 settings):
//! the fused clip-and-sum pass, one DP-penalty / RWMH / DP-Barker step, the HMC gradient pass,
//! one DP-HMC iteration with L = 10, and a whole ε = 6 DP-penalty run; plus the clipped
//! gradient pass of the 10-D banana (n = 200 000).
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use dpinfer_mcmc::budget::{Accounting, GradientCharging};
use dpinfer_mcmc::model::BananaPriorGrad;
use dpinfer_mcmc::{
    Barker, BarkerPrivacy, BarkerSettings, Hmc, HmcPrivacy, HmcSettings, MarkovChain, Penalty,
    PenaltyPrivacy, PenaltySettings, Proposal,
};
use dpinfer_simulators::models::banana::{Banana, BananaSettings};
use dpinfer_simulators::{RowGradient, RowLikelihood, Simulator};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

fn data() -> (Banana, Vec<f64>) {
    let model = Banana::new(BananaSettings::thesis_2d()).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut x = vec![0.0; model.output_dim()];
    model.simulate(&[0.0, 3.0], &mut rng, &mut x).unwrap();
    (model, x)
}

fn passes(c: &mut Criterion) {
    let (model, x) = data();
    let d = model.data(&x).unwrap();
    let n = d.n_rows();
    let mut g = c.benchmark_group("pass_n1e5");
    g.bench_function("clipped_log_ratio_sum", |b| {
        b.iter(|| {
            d.clipped_log_ratio_sum(
                black_box(&[0.0, 3.0]),
                black_box(&[0.001, 3.002]),
                0,
                n,
                5.0,
            )
            .unwrap()
        })
    });
    let mut out = [0.0; 2];
    g.bench_function("clipped_grad_sum", |b| {
        b.iter(|| {
            d.clipped_grad_sum(black_box(&[0.0, 3.0]), 0, n, 5.0, &mut out)
                .unwrap()
        })
    });
    g.finish();
    // 10-D thesis banana, n = 200 000 (DP-HMC's gradient pass in Figure 7.2's 10-D panel).
    let m10 = Banana::new(BananaSettings::thesis_10d()).unwrap();
    let mut x10 = vec![0.0; m10.output_dim()];
    let mut truth = [0.0; 10];
    truth[1] = 3.0;
    m10.simulate(&truth, &mut Xoshiro256PlusPlus::seed_from_u64(8), &mut x10)
        .unwrap();
    let d10 = m10.data(&x10).unwrap();
    let n10 = d10.n_rows();
    let mut g = c.benchmark_group("pass_10d_n2e5");
    let mut out10 = [0.0; 10];
    g.bench_function("clipped_grad_sum", |b| {
        b.iter(|| {
            d10.clipped_grad_sum(black_box(&truth), 0, n10, 5.0, &mut out10)
                .unwrap()
        })
    });
    g.finish();
}

fn steps(c: &mut Criterion) {
    let (model, x) = data();
    let mut g = c.benchmark_group("step_n1e5");
    g.sample_size(20);
    let prop = Proposal::Gaussian {
        scale: vec![0.002, 0.004],
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut rw = Penalty::exact(
        model.prior(),
        model.data(&x).unwrap(),
        PenaltySettings {
            proposal: prop.clone(),
            temperature: 1.0,
        },
        &[0.0, 3.0],
    )
    .unwrap();
    g.bench_function("rwmh_step", |b| {
        b.iter(|| rw.step(&mut rng).map(|s| s.accepted).unwrap())
    });
    let privacy = PenaltyPrivacy {
        clip: 5.0,
        tau: 0.1,
        n_exponent: 0.5,
        epsilon: 1e9,
        delta: 1e-6,
        accounting: Accounting::Pld,
    };
    let mut dp = Penalty::private(
        model.prior(),
        model.data(&x).unwrap(),
        PenaltySettings {
            proposal: prop.clone(),
            temperature: 1.0,
        },
        privacy,
        &[0.0, 3.0],
        ChaCha20Rng::seed_from_u64(2),
    )
    .unwrap();
    g.bench_function("dp_penalty_step", |b| {
        b.iter(|| dp.step(&mut rng).map(|s| s.accepted).unwrap())
    });
    let t = 1000.0 / 100_000.0;
    let mut bk = Barker::private(
        model.prior(),
        model.data(&x).unwrap(),
        BarkerSettings {
            proposal: prop.clone(),
            temperature: t,
        },
        BarkerPrivacy {
            batch: 1000,
            epsilon: 1e9,
            delta: 1e-6,
        },
        &[0.0, 3.0],
        ChaCha20Rng::seed_from_u64(3),
    )
    .unwrap();
    g.bench_function("dp_barker_step_b1000", |b| {
        b.iter(|| bk.step(&mut rng).map(|s| s.accepted).unwrap())
    });
    let hs = HmcSettings {
        step_size: 0.0005,
        leapfrog_steps: 10,
        inv_mass: vec![1.0, 1.0],
        temperature: 1.0,
    };
    let mut hmc = Hmc::exact(
        BananaPriorGrad::new(&model),
        model.data(&x).unwrap(),
        hs.clone(),
        &[0.0, 3.0],
    )
    .unwrap();
    g.bench_function("hmc_iteration_L10", |b| {
        b.iter(|| hmc.step(&mut rng).map(|s| s.accepted).unwrap())
    });
    let hp = HmcPrivacy {
        ratio_clip: 5.0,
        grad_clip: 5.0,
        tau_l: 0.1,
        tau_g: 0.1,
        epsilon: 1e9,
        delta: 1e-6,
        accounting: Accounting::Pld,
        charging: GradientCharging::Fresh,
    };
    let mut dph = Hmc::private(
        BananaPriorGrad::new(&model),
        model.data(&x).unwrap(),
        hs,
        hp,
        &[0.0, 3.0],
        ChaCha20Rng::seed_from_u64(4),
    )
    .unwrap();
    g.bench_function("dp_hmc_iteration_L10", |b| {
        b.iter(|| dph.step(&mut rng).map(|s| s.accepted).unwrap())
    });
    g.finish();
}

fn whole_run(c: &mut Criterion) {
    let (model, x) = data();
    let mut g = c.benchmark_group("run_n1e5");
    g.sample_size(10);
    // ε = 6, δ = 1e-6, τ = 0.1, PLD budget (thesis Theorem 7): 1431 iterations.
    let privacy = PenaltyPrivacy {
        clip: 5.0,
        tau: 0.1,
        n_exponent: 0.5,
        epsilon: 6.0,
        delta: 1e-6,
        accounting: Accounting::Pld,
    };
    g.bench_function("dp_penalty_eps6_full_budget", |b| {
        b.iter(|| {
            let settings = PenaltySettings {
                proposal: Proposal::GuidedRandomWalk {
                    scale: vec![0.002, 0.004],
                },
                temperature: 1.0,
            };
            let mut s = Penalty::private(
                model.prior(),
                model.data(&x).unwrap(),
                settings,
                privacy,
                &[0.0, 3.0],
                ChaCha20Rng::seed_from_u64(5),
            )
            .unwrap();
            let k = s.max_iterations().unwrap();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
            s.run(k, &mut rng, &mut ()).unwrap();
            k
        })
    });
    g.finish();
}

criterion_group!(benches, passes, steps, whole_run);
criterion_main!(benches);
