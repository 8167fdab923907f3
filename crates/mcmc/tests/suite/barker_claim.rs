//! The RDP mechanisms' privacy claims (`Budget::claim`: DP-Barker, thesis Theorem 8;
//! subsampled DP penalty, Theorem 9) against their budgets.
#![cfg(feature = "alloc")]

use dpinfer_accountants::{AccountantKind, ConversionRule, EventBuf, Neighbouring};
use dpinfer_mcmc::budget::{Budget, Mechanism};

/// At the budget's iteration limit the claim (`k × DpBarker` on the integer orders 2..=256,
/// the budget's conversion) equals the budget's own ε to 1e-12 relative (two roundings of the
/// same composition; measured ≤ 3e-14), is at most the target, and `k + 1` iterations
/// exceed the target.
#[test]
fn barker_claim_matches_budget_and_target() {
    let mut checked = 0;
    for (n, batch) in [
        (1000usize, 100usize),
        (100_000, 1000),
        (10_000, 500),
        (50, 50),
    ] {
        for rule in [ConversionRule::Tightest, ConversionRule::Classic] {
            for (eps, delta) in [(1.0, 1e-5), (2.0, 1e-6), (0.5, 1e-3), (8.0, 1e-5)] {
                let Ok(b) = Budget::new(Mechanism::Barker { n, batch, rule }, eps, delta) else {
                    continue;
                };
                let k = b.max_iterations();
                let claim = b.claim(k, 1).unwrap().unwrap();
                let (spent, _) = b.spent(k, 1).unwrap();
                assert!(
                    (claim.epsilon() - spent).abs() <= 1e-12 * spent,
                    "n {n} |B| {batch} {rule:?}: budget {spent}, {claim}"
                );
                assert!(claim.epsilon() <= eps, "{claim}");
                assert!(b.claim(k + 1, 1).unwrap().unwrap().epsilon() > eps);
                assert_eq!(claim.delta(), delta);
                assert_eq!(claim.relation, Neighbouring::ReplaceOne);
                assert_eq!(claim.accountant, AccountantKind::RdpIntegers);
                assert_eq!(claim.rule, rule);
                assert_eq!(
                    claim.events,
                    vec![(
                        EventBuf::DpBarker {
                            batch: batch as u64,
                            population: n as u64,
                        },
                        k
                    )]
                );
                assert_eq!(claim.recompute().unwrap(), claim);
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}

/// Subsampled DP penalty's claim is composed on the budget's integer orders too: at
/// τ = 50, n = 100 000, |B| = 1000, ε = 1 the default RDP grid (which skips most integers
/// above 14) would claim ε = 1.00165 > 1 for the budget's k = 3340 (measured); on the
/// integer grid the claim is the budget's ε to 1e-12 relative and at most the target.
#[test]
fn subsampled_penalty_claim_matches_budget_and_target() {
    for (tau, n, batch) in [
        (20.0, 1000usize, 100usize),
        (5.0, 10_000, 500),
        (50.0, 100_000, 1000),
    ] {
        for (eps, delta) in [(1.0, 1e-5), (2.0, 1e-6), (0.5, 1e-3)] {
            let rule = ConversionRule::Tightest;
            let mech = Mechanism::SubsampledPenalty {
                tau,
                n,
                batch,
                rule,
            };
            let b = Budget::new(mech, eps, delta).unwrap();
            let k = b.max_iterations();
            let claim = b.claim(k, 1).unwrap().unwrap();
            let (spent, _) = b.spent(k, 1).unwrap();
            assert!(
                (claim.epsilon() - spent).abs() <= 1e-12 * spent,
                "τ {tau} n {n} |B| {batch}: budget {spent}, {claim}"
            );
            assert!(claim.epsilon() <= eps, "{claim}");
            assert!(b.claim(k + 1, 1).unwrap().unwrap().epsilon() > eps);
            assert_eq!(claim.accountant, AccountantKind::RdpIntegers);
            assert_eq!(claim.recompute().unwrap(), claim);
        }
    }
}
