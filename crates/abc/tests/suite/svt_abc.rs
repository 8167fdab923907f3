//! SVT-ABC private pass: ledger, Proposition 1 flip probability, stopping, and agreement with
//! rejection ABC at a huge budget.
#![cfg(feature = "alloc")]

use crate::common;
use dpinfer_distances::{Relations, Sensitivity};

use chacha20::ChaCha20Rng;
use common::{gaussian_mean, ident, one_d_pairs};
use dpinfer_abc::analysis::{Resample, g_b, total_epsilon};
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings, SvtStep};
use dpinfer_accountants::{Accountant, Neighbouring, PureAccountant};
use dpinfer_simulators::prior::Normal;
use rand_core::SeedableRng;

#[test]
fn ledger_equals_accountant_and_theorem1() {
    let pairs = one_d_pairs(&[0.5; 10]);
    for resample in [Resample::Never, Resample::AfterAccept] {
        for (eps_total, c) in [(0.5, 10_u64), (1.0, 100), (10.0, 3)] {
            let s = SvtAbcSettings {
                epsilon_abc: 0.1,
                epsilon_total: eps_total,
                c,
                sensitivity: Sensitivity::declared(2.0 / 5000.0, Relations::REPLACE_ONE).unwrap(),
                clip: 2.0,
                resample,
            };
            let pass = SvtAbc::new(&pairs, ident, s).unwrap();
            let eps = pass.epsilon();
            assert!(eps <= eps_total, "{eps} > {eps_total}");
            // tight: within 1e-6 relative of the budget (grid rounding only)
            assert!(eps > eps_total * (1.0 - 1e-6), "{eps} vs {eps_total}");
            let mut acc = PureAccountant::new(Neighbouring::ReplaceOne);
            acc.compose(&pass.event()).unwrap();
            let rep = acc.epsilon(0.0).unwrap();
            assert!(
                (rep.epsilon - eps).abs() <= 1e-12 * eps,
                "{} vs {eps}",
                rep.epsilon
            );
            let th1 = total_epsilon(
                pass.noise_scale(),
                c,
                pass.effective_sensitivity(),
                resample,
            )
            .unwrap();
            assert!((th1 - eps).abs() <= 1e-12 * eps, "{th1} vs {eps}");
        }
    }
}

#[test]
fn flip_probability_of_first_query_matches_proposition1() {
    // One query per pass; the empirical flip rate must match G_b(|ρ − ε_abc|) within 6 SE
    // (false failure < 2e-9 per case) plus 1e-3 for the grid discretisation of the noise.
    let mut noise = ChaCha20Rng::seed_from_u64(0xABCD);
    let n = 20_000;
    for (rho, eps_abc) in [(0.25, 0.2), (0.15, 0.2), (0.2, 0.2)] {
        let pairs = one_d_pairs(&[rho]);
        let s = SvtAbcSettings {
            epsilon_abc: eps_abc,
            epsilon_total: 0.4,
            c: 1,
            sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
            clip: 1.0,
            resample: Resample::Never,
        };
        let mut flips = 0;
        let mut b = 0.0;
        for _ in 0..n {
            let mut pass = SvtAbc::new(&pairs, ident, s).unwrap();
            b = pass.noise_scale();
            let acc = matches!(pass.step(&mut noise).unwrap(), SvtStep::Accepted(0));
            if acc != (rho <= eps_abc) {
                flips += 1;
            }
        }
        let p = g_b((rho - eps_abc).abs(), b).unwrap();
        let emp = f64::from(flips) / f64::from(n);
        let se = (p * (1.0 - p) / f64::from(n)).sqrt();
        assert!((emp - p).abs() < 6.0 * se + 1e-3, "rho={rho}: {emp} vs {p}");
    }
}

#[test]
fn stops_after_c_acceptances_and_reports_stream() {
    let pairs = one_d_pairs(&[0.0; 50]);
    let s = SvtAbcSettings {
        epsilon_abc: 0.5,
        epsilon_total: 100.0,
        c: 7,
        sensitivity: Sensitivity::declared(0.001, Relations::REPLACE_ONE).unwrap(),
        clip: 1.0,
        resample: Resample::AfterAccept,
    };
    let mut pass = SvtAbc::new(&pairs, ident, s).unwrap();
    let mut noise = ChaCha20Rng::seed_from_u64(1);
    pass.run(&mut noise).unwrap();
    assert_eq!(pass.accepted_indices().len(), 7);
    assert_eq!(pass.indicators().len(), 7);
    assert!(pass.indicators().iter().all(|&x| x));
    assert_eq!(pass.step(&mut noise).unwrap(), SvtStep::Done);
    assert_eq!(
        pass.accepted_thetas(),
        (0..7).map(f64::from).collect::<Vec<_>>()
    );
}

#[test]
fn huge_budget_reproduces_rejection_abc() {
    // With ε_total = 1e6 and Δ = 1e-4 the noise scale is ~1e-9: ABCDP's decisions equal plain
    // rejection ABC's except for pairs within ~1e-7 of the threshold (none here w.p. ≈ 1).
    let prior = Normal::new(0.0, 1.0).unwrap();
    let pairs = PublicPairs::generate(&prior, &gaussian_mean(100.0), 20_000, 42).unwrap();
    let obs = 0.5;
    let eps_abc = 0.05;
    let dist = |y: &[f64]| (y[0] - obs).abs();
    let s = SvtAbcSettings {
        epsilon_abc: eps_abc,
        epsilon_total: 1e6,
        c: 50,
        sensitivity: Sensitivity::declared(1e-4, Relations::REPLACE_ONE).unwrap(),
        clip: 10.0,
        resample: Resample::Never,
    };
    let mut pass = SvtAbc::new(&pairs, dist, s).unwrap();
    let mut noise = ChaCha20Rng::seed_from_u64(2);
    pass.run(&mut noise).unwrap();
    let exact: Vec<usize> = (0..pairs.len())
        .filter(|&t| dist(pairs.output(t)) <= eps_abc)
        .take(50)
        .collect();
    assert_eq!(pass.accepted_indices(), exact.as_slice());
    // regeneration is bit-identical
    let again = PublicPairs::generate(&prior, &gaussian_mean(100.0), 20_000, 42).unwrap();
    assert_eq!(again, pairs);
}
