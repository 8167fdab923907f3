#![cfg(feature = "alloc")] // uses the crate's alloc API
//! Value stability: seeded runs of every private sampler (and the exact kernels) reproduce
//! pinned digests of their draws, noise σ's, iteration limits and ε spent, bit for bit.
//! The digests were recorded before the budget refactor of issue 20 (one `Budget` struct
//! for the four private samplers); a change here means a number changed.
use crate::common;

use common::toy;
use dpinfer_mcmc::budget::{Accounting, GradientCharging};
use dpinfer_mcmc::{
    Barker, BarkerPrivacy, BarkerSettings, Hmc, HmcPrivacy, HmcSettings, MarkovChain, McmcError,
    Penalty, PenaltyPrivacy, PenaltySettings, Proposal, SubsampledPenalty,
    SubsampledPenaltyPrivacy, SubsampledPenaltySettings, Trace,
};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

/// (iteration limit, draws digest, noise-σ digest, ε spent bits).
type Record = (Option<u64>, u64, u64, u64);

/// Order-sensitive digest of f64 bit patterns (splitmix64 finaliser per word).
fn digest(xs: impl IntoIterator<Item = f64>) -> u64 {
    xs.into_iter().fold(0x9e37_79b9_7f4a_7c15, |h, x| {
        let mut z = (h ^ x.to_bits()).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// (limit, draws digest, noise-σ digest, ε spent bits) of a run of `iterations` steps.
fn record<S: MarkovChain>(
    s: &mut S,
    iterations: u64,
    limit: Option<u64>,
    spent: impl Fn(&S) -> Result<Option<(f64, f64)>, McmcError>,
) -> Record {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(77);
    let mut t = Trace::default();
    let iterations = limit.map_or(iterations, |l| l.min(iterations));
    s.run(iterations, &mut rng, &mut t).unwrap();
    let eps = spent(s).unwrap().map_or(0, |(e, _)| e.to_bits());
    (limit, digest(t.draws), digest(t.noise_sd), eps)
}

fn penalty(accounting: Accounting) -> Record {
    let (prior, lik) = toy(200, 2, 3);
    let mut s = Penalty::private(
        prior,
        lik,
        PenaltySettings {
            proposal: Proposal::GuidedRandomWalk {
                scale: vec![0.08, 0.08],
            },
            temperature: 1.0,
        },
        PenaltyPrivacy {
            clip: 5.0,
            tau: 1.5,
            n_exponent: 0.5,
            epsilon: 4.0,
            delta: 1e-6,
            accounting,
        },
        &[0.5, 0.5],
        ChaCha20Rng::seed_from_u64(11),
    )
    .unwrap();
    let limit = s.max_iterations();
    record(&mut s, 150, limit, Penalty::epsilon_spent)
}

fn hmc(accounting: Accounting, charging: GradientCharging) -> Record {
    let (prior, lik) = toy(5000, 2, 4);
    let mut s = Hmc::private(
        prior,
        lik,
        HmcSettings {
            step_size: 0.2,
            leapfrog_steps: 4,
            inv_mass: vec![2e-4, 2e-4],
            temperature: 1.0,
        },
        HmcPrivacy {
            ratio_clip: 1.0,
            grad_clip: 2.0,
            tau_l: 0.5,
            tau_g: 2.0,
            epsilon: 6.0,
            delta: 1e-6,
            accounting,
            charging,
        },
        &[1.0, 1.0],
        ChaCha20Rng::seed_from_u64(12),
    )
    .unwrap();
    let limit = s.max_iterations();
    record(&mut s, 60, limit, Hmc::epsilon_spent)
}

fn barker() -> Record {
    let (prior, lik) = toy(2000, 1, 5);
    let mut s = Barker::private(
        prior,
        lik,
        BarkerSettings {
            proposal: Proposal::Gaussian { scale: vec![0.12] },
            temperature: 0.05,
        },
        BarkerPrivacy {
            batch: 200,
            epsilon: 6.0,
            delta: 1e-6,
        },
        &[0.9],
        ChaCha20Rng::seed_from_u64(13),
    )
    .unwrap();
    let limit = s.max_iterations();
    record(&mut s, 300, limit, Barker::epsilon_spent)
}

fn subsampled() -> Record {
    let (prior, lik) = toy(1000, 1, 6);
    let mut s = SubsampledPenalty::private(
        prior,
        lik,
        SubsampledPenaltySettings {
            proposal: Proposal::Gaussian { scale: vec![0.05] },
            temperature: 0.1,
            batch: 100,
            clip: 5.0,
        },
        SubsampledPenaltyPrivacy {
            tau: 20.0,
            epsilon: 2.0,
            delta: 1e-6,
        },
        &[0.9],
        ChaCha20Rng::seed_from_u64(14),
    )
    .unwrap();
    let limit = s.max_iterations();
    record(&mut s, 200, limit, SubsampledPenalty::epsilon_spent)
}

fn exact_kernels() -> [u64; 3] {
    let (prior, lik) = toy(200, 2, 7);
    let mut rw = Penalty::exact(
        prior,
        lik.clone(),
        PenaltySettings {
            proposal: Proposal::Gaussian {
                scale: vec![0.1, 0.1],
            },
            temperature: 1.0,
        },
        &[0.5, 0.5],
    )
    .unwrap();
    let mut hm = Hmc::exact(
        prior,
        lik.clone(),
        HmcSettings {
            step_size: 0.05,
            leapfrog_steps: 5,
            inv_mass: vec![1.0, 1.0],
            temperature: 1.0,
        },
        &[0.5, 0.5],
    )
    .unwrap();
    let mut ba = Barker::exact(
        prior,
        lik,
        BarkerSettings {
            proposal: Proposal::Gaussian {
                scale: vec![0.1, 0.1],
            },
            temperature: 1.0,
        },
        &[0.5, 0.5],
    )
    .unwrap();
    [
        record(&mut rw, 200, None, |_| Ok(None)).1,
        record(&mut hm, 100, None, |_| Ok(None)).1,
        record(&mut ba, 200, None, |_| Ok(None)).1,
    ]
}

#[test]
fn seeded_private_runs_are_bit_identical_to_the_pinned_digests() {
    let got = [
        ("penalty zcdp", penalty(Accounting::Zcdp)),
        ("penalty pld", penalty(Accounting::Pld)),
        (
            "hmc zcdp fresh",
            hmc(Accounting::Zcdp, GradientCharging::Fresh),
        ),
        (
            "hmc pld reuse",
            hmc(Accounting::Pld, GradientCharging::Reuse),
        ),
        ("barker", barker()),
        ("subsampled", subsampled()),
    ];
    for (what, g) in &got {
        eprintln!(
            "(\"{what}\", ({:?}, {:#x}, {:#x}, {:#x})),",
            g.0, g.1, g.2, g.3
        );
    }
    let exact = exact_kernels();
    eprintln!("exact {:#x?}", exact);
    let want: [(&str, Record); 6] = PINNED;
    for ((what, g), (w_what, w)) in got.iter().zip(want) {
        assert_eq!(*what, w_what);
        assert_eq!(*g, w, "{what}");
    }
    assert_eq!(exact, PINNED_EXACT);
}

const PINNED: [(&str, Record); 6] = [
    (
        "penalty zcdp",
        (
            Some(228),
            0x3e01_9fed_71cd_b9f0,
            0x3da7_26d7_b745_815c,
            0x4009_9cb7_00c1_cd19,
        ),
    ),
    (
        "penalty pld",
        (
            Some(315),
            0x3e01_9fed_71cd_b9f0,
            0x3da7_26d7_b745_815c,
            0x4005_2110_1492_dd9b,
        ),
    ),
    (
        "hmc zcdp fresh",
        (
            Some(1027),
            0x2f5e_5a4f_4167_04dc,
            0xe254_8f62_ad1f_7896,
            0x3ff5_9d30_ab66_b273,
        ),
    ),
    (
        "hmc pld reuse",
        (
            Some(1431),
            0x0efc_4cd6_8ee6_fe89,
            0x84cc_214e_f562_0e50,
            0x3ff0_9bef_6e92_6129,
        ),
    ),
    (
        "barker",
        (
            Some(60),
            0x976e_4796_d0fa_bb12,
            0x859f_9326_3789_3d18,
            0x4017_eff0_9796_338f,
        ),
    ),
    (
        "subsampled",
        (
            Some(20),
            0x24df_69f6_1f0d_e08a,
            0xdc2a_7991_c799_f7cf,
            0x3fff_acc6_4ad5_e99d,
        ),
    ),
];
const PINNED_EXACT: [u64; 3] = [
    0x2e7f_24c3_71d7_3a8e,
    0xd730_4a95_d742_c3af,
    0x9e3e_e7b7_01ce_b13a,
];
