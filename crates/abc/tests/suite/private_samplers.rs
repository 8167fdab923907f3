//! Gaussian rejection ABCDP and soft-ABCDP: ledgers against the accountants crate and the
//! papers' closed forms, and noise behaviour against Monte Carlo.
#![cfg(feature = "alloc")]

use chacha20::ChaCha20Rng;
use dpinfer_abc::analysis::Resample;
use dpinfer_abc::gaussian::{
    GaussianRejectionAbcdp, GaussianRejectionSettings, acceptance_probability, theorem31_epsilon,
};
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::soft::{SoftAbcdp, SoftAbcdpSettings};
use dpinfer_abc::svt::SvtAbcSettings;
use dpinfer_accountants::{Accountant, Neighbouring, PureAccountant};
use dpinfer_distances::{Relations, Sensitivity};
use rand_core::SeedableRng;

use crate::common::{ident, one_d_pairs as pairs};

/// Gaussian rejection ABCDP at ε_abc = 0.2, ε_total = 50, bound 1.
fn gaussian_settings(sensitivity: Sensitivity) -> GaussianRejectionSettings {
    GaussianRejectionSettings {
        epsilon_abc: 0.2,
        epsilon_total: 50.0,
        sensitivity,
        bound: 1.0,
    }
}

/// Soft-ABCDP at ε_abc = 0.2, (ε, δ)_total = (2, 1e-6), bound 1, floor 1e-12.
fn soft_settings(sensitivity: Sensitivity) -> SoftAbcdpSettings {
    SoftAbcdpSettings {
        epsilon_abc: 0.2,
        epsilon_total: 2.0,
        delta_total: 1e-6,
        sensitivity,
        bound: 1.0,
        floor: 1e-12,
    }
}

/// SVT-ABC at ε_abc = 0.2, ε_total = 1 with `c` positives, clip 1, no resampling.
fn svt_settings(c: u64, sensitivity: Sensitivity) -> SvtAbcSettings {
    SvtAbcSettings {
        epsilon_abc: 0.2,
        epsilon_total: 1.0,
        c,
        sensitivity,
        clip: 1.0,
        resample: Resample::Never,
    }
}

#[test]
fn gaussian_rejection_ledger_is_tight_and_matches_accountant() {
    let p = pairs(&[0.5; 100]);
    let s = gaussian_settings(Sensitivity::declared(2.0 / 1000.0, Relations::REPLACE_ONE).unwrap());
    let g = GaussianRejectionAbcdp::new(&p, ident, s).unwrap();
    let eps = g.epsilon();
    assert!(eps <= 50.0 && eps > 50.0 * 0.99, "{eps}");
    let mut acc = PureAccountant::new(Neighbouring::ReplaceOne);
    acc.compose(&g.event()).unwrap();
    assert!((acc.epsilon(0.0).unwrap().epsilon - eps).abs() <= 1e-12 * eps);
    // continuous Theorem 3.1 at the effective σ is below the grid-corrected ledger
    let hc = theorem31_epsilon(g.sigma(), 2.0 / 1000.0, 1.0, 0.2).unwrap();
    assert!(hc <= g.step_epsilon() && g.step_epsilon() < hc * 1.01);
}

#[test]
fn gaussian_rejection_acceptance_matches_normal_cdf() {
    // P(τ = 1) = Φ((ε_abc − ρ)/σ): 6 SE + 1e-3 (grid) → false failure < 2e-9 per ρ.
    let mut noise = ChaCha20Rng::seed_from_u64(99);
    for rho in [0.1, 0.2, 0.35] {
        let p = pairs(&vec![rho; 20_000]);
        let s = GaussianRejectionSettings {
            epsilon_abc: 0.2,
            epsilon_total: 20_000.0 * 0.5,
            sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
            bound: 1.0,
        };
        let mut g = GaussianRejectionAbcdp::new(&p, ident, s).unwrap();
        g.run(&mut noise).unwrap();
        let emp = g.indicators().iter().filter(|&&x| x).count() as f64 / 20_000.0;
        let want = acceptance_probability(rho, 0.2, g.sigma()).unwrap();
        let se = (want * (1.0 - want) / 20_000.0).sqrt();
        assert!(
            (emp - want).abs() < 6.0 * se + 1e-3,
            "rho={rho}: {emp} vs {want}"
        );
    }
}

#[test]
fn soft_ledger_matches_theorem33_and_budget() {
    let p = pairs(&[0.3; 1000]);
    let (eps_abc, delta_rho, eps_total, delta) = (0.1, 2.0 / 5000.0, 1.0, 1e-4);
    let s = SoftAbcdpSettings {
        epsilon_abc: eps_abc,
        epsilon_total: eps_total,
        delta_total: delta,
        sensitivity: Sensitivity::declared(delta_rho, Relations::REPLACE_ONE).unwrap(),
        bound: 2.0,
        floor: 1e-6,
    };
    let soft = SoftAbcdp::new(&p, ident, s).unwrap();
    let eps = soft.epsilon().unwrap();
    assert!(eps <= eps_total && eps > 0.95 * eps_total, "{eps}");
    // Theorem 3.3 with Proposition 1: ε(α) = α Δ′² T / (2σ² ε_abc²) + ln(1/δ)/(α−1); its
    // minimum over α (closed form for a linear RDP curve) is never below the accountant's ε.
    let sens = soft.mechanism().effective_sensitivity(); // Δ′/ε_abc in scaled units
    let sig = soft.sigma();
    let c = 1000.0 * sens * sens / (2.0 * sig * sig);
    let l = (1.0 / delta).ln();
    let prop1 = c + 2.0 * (c * l).sqrt();
    assert!(eps <= prop1 * (1.0 + 1e-12), "{eps} vs {prop1}");
    // ...and the accountant's tighter conversion gains at most ~25% here.
    assert!(eps > 0.7 * prop1, "{eps} vs {prop1}");
    // the sensitivity of ρ/ε_abc is Δ/ε_abc: doubling ε_abc halves σ in scaled units
    let s2 = SoftAbcdpSettings {
        epsilon_abc: 2.0 * eps_abc,
        ..s
    };
    let soft2 = SoftAbcdp::new(&p, ident, s2).unwrap();
    assert!(
        (soft2.sigma() / sig - 0.5).abs() < 1e-3,
        "{}",
        soft2.sigma() / sig
    );
}

#[test]
fn soft_noise_and_weights() {
    let n = 20_000;
    let p = pairs(&vec![0.3; n]);
    let s = SoftAbcdpSettings {
        epsilon_abc: 0.1,
        epsilon_total: 500.0,
        delta_total: 1e-5,
        sensitivity: Sensitivity::declared(1e-3, Relations::REPLACE_ONE).unwrap(),
        bound: 2.0,
        floor: 1e-6,
    };
    let mut soft = SoftAbcdp::new(&p, ident, s).unwrap();
    let mut noise = ChaCha20Rng::seed_from_u64(5);
    soft.run(&mut noise).unwrap();
    let d = soft.noisy_distances();
    let sig = soft.sigma();
    // The scaled distance 0.3/0.1 = 3 is far from the floor, so D̃ ~ N(3, σ²) exactly.
    assert!(3.0 > 8.0 * sig, "σ = {sig} too large for this check");
    let m = d.iter().sum::<f64>() / n as f64;
    let v = d.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
    // mean within 6 SE of 3, sd within 6 SE (sd/√(2n)) of σ: false failure < 4e-9.
    assert!((m - 3.0).abs() < 6.0 * sig / (n as f64).sqrt(), "{m}");
    assert!(
        (v.sqrt() - sig).abs() < 6.0 * sig / (2.0 * n as f64).sqrt(),
        "{} vs {sig}",
        v.sqrt()
    );
    let mut w = vec![0.0; n];
    soft.weights(&mut w).unwrap();
    assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(w.iter().all(|&x| x > 0.0));
}

#[test]
fn soft_floor_projects_negative_values() {
    // ρ = 0 with a tiny budget: about half of the noisy values are negative → floored.
    let p = pairs(&[0.0; 2000]);
    let s = SoftAbcdpSettings {
        epsilon_abc: 1.0,
        epsilon_total: 0.1,
        delta_total: 1e-5,
        sensitivity: Sensitivity::declared(0.1, Relations::REPLACE_ONE).unwrap(),
        bound: 1.0,
        floor: 1e-3,
    };
    let mut soft = SoftAbcdp::new(&p, ident, s).unwrap();
    soft.run(&mut ChaCha20Rng::seed_from_u64(8)).unwrap();
    let d = soft.noisy_distances();
    assert!(d.iter().all(|&x| x >= 1e-3));
    let floored = d.iter().filter(|&&x| x == 1e-3).count();
    // P(N(0,σ²) < 1e-3) ≈ 1/2 for σ ≫ 1e-3: binomial(2000, ~0.5) within 6 SE (≈ 134).
    assert!((floored as i64 - 1000).abs() < 140, "{floored}");
}

#[test]
fn every_private_pass_states_its_claim_as_a_value() {
    use dpinfer_abc::svt::SvtAbc;
    use dpinfer_accountants::{AccountantKind, ZcdpAccountant};
    let p = pairs(&[0.5; 200]);
    // SVT-ABC: one SparseVector event in the pure accountant, ε = Theorem 1's (1e-12).
    let sensitivity = Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap();
    let svt = SvtAbc::new(&p, ident, svt_settings(5, sensitivity)).unwrap();
    let c = svt.claim().unwrap();
    assert_eq!(c.accountant, AccountantKind::Pure);
    assert_eq!(c.relation, Neighbouring::ReplaceOne);
    assert_eq!(c.events.len(), 1);
    // The mechanism's own ε is grid arithmetic rounded up (≤ 1); the claim's accountant
    // evaluates the SparseVector event `kΔ′/b` with exact upward rounding: within the
    // budget, and within 1e-12 relative of the mechanism's (slightly looser) own bound.
    assert!(svt.epsilon() <= 1.0 && c.delta() == 0.0);
    assert!(
        c.epsilon() <= 1.0 && (c.epsilon() - svt.epsilon()).abs() <= 1e-12 * svt.epsilon(),
        "{:e}",
        c.epsilon()
    );
    // Gaussian rejection: T decisions' pure ε, exactly the pass's ledger.
    let sensitivity = Sensitivity::declared(0.002, Relations::ADD_REMOVE).unwrap();
    let g = GaussianRejectionAbcdp::new(&p, ident, gaussian_settings(sensitivity)).unwrap();
    let c = g.claim().unwrap();
    assert_eq!(c.relation, Neighbouring::AddRemove);
    assert!(c.epsilon() >= g.epsilon() && c.epsilon() <= g.epsilon() * (1.0 + 1e-12));
    // Soft-ABCDP: T zCDP events at δ_total, the pass's own ε, and an independent zCDP
    // accountant composing them one by one.
    let sensitivity = Sensitivity::declared(0.002, Relations::REPLACE_ONE).unwrap();
    let s = SoftAbcdp::new(&p, ident, soft_settings(sensitivity)).unwrap();
    let c = s.claim().unwrap();
    assert_eq!(c.relation, Neighbouring::ReplaceOne);
    assert_eq!(c.accountant, AccountantKind::Zcdp);
    assert_eq!(c.events[0].1, 200);
    assert_eq!(c.delta(), 1e-6);
    assert_eq!(c.epsilon(), s.epsilon().unwrap());
    let mut acc = ZcdpAccountant::new(Neighbouring::ReplaceOne);
    for _ in 0..200 {
        acc.compose(&s.step_event()).unwrap();
    }
    let e = acc.epsilon(1e-6).unwrap().epsilon;
    assert!(
        (c.epsilon() - e).abs() <= 1e-9 * e,
        "{} vs {e}",
        c.epsilon()
    );
    assert!(c.epsilon() <= 2.0);
    // The prose is generated from the value.
    assert!(c.to_string().contains("replace-one"), "{c}");
}

/// Each private pass states its claim under the relation its settings' sensitivity carries
/// (issue 27: relations travel with sensitivities). The pipeline used to build soft-ABC
/// under a hard-coded replace-one, so a summary sensitivity declared for add/remove only was
/// claimed under replace-one, a relation it does not hold for.
#[test]
fn every_pass_claims_under_the_relation_of_its_sensitivity() {
    use dpinfer_abc::svt::SvtAbc;
    let p = PublicPairs::from_parts(1, 1, (0..50).map(f64::from).collect(), vec![0.3; 50]).unwrap();
    let ident = |y: &[f64]| y[0];
    for (relations, want) in [
        (Relations::REPLACE_ONE, Neighbouring::ReplaceOne),
        (Relations::ADD_REMOVE, Neighbouring::AddRemove),
        (Relations::ANY_PAIR, Neighbouring::ReplaceOne),
    ] {
        let sensitivity = Sensitivity::declared(0.01, relations).unwrap();
        let svt = SvtAbc::new(&p, ident, svt_settings(3, sensitivity)).unwrap();
        let soft = SoftAbcdp::new(&p, ident, soft_settings(sensitivity)).unwrap();
        let gauss = GaussianRejectionAbcdp::new(&p, ident, gaussian_settings(sensitivity)).unwrap();
        for c in [svt.claim(), soft.claim(), gauss.claim()] {
            assert_eq!(c.unwrap().relation, want, "{relations}");
        }
    }
}

/// The three private passes run, claim and release through one trait
/// (`dpinfer_abc::pass::PrivatePass`, held as a `Box<dyn …>`): the release is the pass's own
/// output (accepted θs, or every θ with its weights) and its facts name the noise scale and the
/// counts, in a fixed order.
#[test]
fn the_private_passes_share_one_trait() {
    use dpinfer_abc::analysis::Resample;
    use dpinfer_abc::pass::PrivatePass;
    use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
    let rhos: Vec<f64> = (0..200).map(|i| f64::from(i % 17) / 17.0).collect();
    let p = pairs(&rhos);
    let sensitivity = Sensitivity::declared(0.002, Relations::REPLACE_ONE).unwrap();
    type Pass<'a> = Box<dyn PrivatePass<ChaCha20Rng> + 'a>;
    let passes: Vec<(Pass<'_>, &[&str])> = vec![
        (
            Box::new(
                SvtAbc::new(
                    &p,
                    ident,
                    SvtAbcSettings {
                        epsilon_abc: 0.3,
                        epsilon_total: 5.0,
                        c: 10,
                        sensitivity,
                        clip: 1.0,
                        resample: Resample::Never,
                    },
                )
                .unwrap(),
            ),
            &["laplace_scale_b", "accepted", "examined"],
        ),
        (
            Box::new(
                SoftAbcdp::new(
                    &p,
                    ident,
                    SoftAbcdpSettings {
                        epsilon_abc: 0.2,
                        epsilon_total: 5.0,
                        delta_total: 1e-6,
                        sensitivity,
                        bound: 1.0,
                        floor: 1e-12,
                    },
                )
                .unwrap(),
            ),
            &["gaussian_sigma", "ess"],
        ),
        (
            Box::new(
                GaussianRejectionAbcdp::new(
                    &p,
                    ident,
                    GaussianRejectionSettings {
                        epsilon_abc: 0.3,
                        epsilon_total: 50.0,
                        sensitivity,
                        bound: 1.0,
                    },
                )
                .unwrap(),
            ),
            &["gaussian_sigma", "step_epsilon", "accepted"],
        ),
    ];
    for (i, (mut pass, names)) in passes.into_iter().enumerate() {
        let claim = pass.claim().unwrap();
        assert_eq!(claim.relation, Neighbouring::ReplaceOne);
        pass.run(&mut ChaCha20Rng::seed_from_u64(3)).unwrap();
        let out = pass.release().unwrap();
        let got: Vec<&str> = out.facts.iter().map(|f| f.0).collect();
        assert_eq!(got, *names, "pass {i}");
        assert!(
            out.facts.iter().all(|f| f.1.is_finite() && f.1 >= 0.0),
            "{:?}",
            out.facts
        );
        match &out.weights {
            // Soft-ABC releases every pair with a normalised weight.
            Some(w) => {
                assert_eq!(out.samples.len(), 200);
                assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            }
            // The rejection passes release the accepted θs, as many as the facts say.
            None => {
                let accepted = out.facts.iter().find(|f| f.0 == "accepted").unwrap().1;
                assert_eq!(out.samples.len() as f64, accepted);
                // θ_t = t: each released θ is a row of the table.
                assert!(
                    out.samples
                        .iter()
                        .all(|t| t.fract() == 0.0 && (0.0..200.0).contains(t))
                );
            }
        }
    }
}

/// A budget the sparse vector cannot calibrate (ε_total = 1e308: the noise scale `(c+1)Δ/ε`
/// falls below the mechanism's grid range) is an
/// [`AbcError::Mechanism`](dpinfer_abc::AbcError::Mechanism) naming `epsilon_total` and its
/// value, with the mechanism's own reason in the message (issue 27: it used to be a unit
/// variant, "the privacy mechanism rejected its parameters", saying nothing). A noise-RNG
/// failure while stepping names no setting.
#[test]
fn extreme_budget_is_a_mechanism_error_naming_epsilon_total() {
    use dpinfer_abc::AbcError;
    use dpinfer_mechanisms::MechanismError;
    let p = pairs(&[0.5; 100]);
    let sens = Sensitivity::declared(2.0 / 1000.0, Relations::REPLACE_ONE).unwrap();
    let huge = 1e308;
    let svt = dpinfer_abc::svt::SvtAbc::new(
        &p,
        ident,
        SvtAbcSettings {
            epsilon_total: huge,
            ..svt_settings(10, sens)
        },
    )
    .unwrap_err();
    assert_eq!(
        svt,
        AbcError::Mechanism {
            setting: Some(("epsilon_total", huge)),
            error: MechanismError::OutOfRange { param: "scale" },
        }
    );
    assert_eq!(
        svt.to_string(),
        "the privacy mechanism rejected the noise parameters `epsilon_total` = 1e308 gives: \
         parameter `scale` is outside the supported range"
    );
    let failed = AbcError::Mechanism {
        setting: None,
        error: MechanismError::Entropy,
    };
    assert_eq!(
        failed.to_string(),
        "the privacy mechanism failed: the noise RNG failed to produce entropy"
    );
}
