#![cfg(feature = "alloc")] // uses the crate's alloc API
//! Several chains on one budget never overrun it: for every multi-chain sampler, every
//! charging mode and every accounting, build `m` chains, split the budget with
//! [`MultiChain`], run every chain to its share, then compose **what every chain actually
//! released** (the per-chain [`Releases`] audit, counted where the noise is drawn) with an
//! accountant and check the composition against the (ε, δ) target.
//!
//! Regression for issue 13 defect 1: with `GradientCharging::Reuse` every DP HMC chain
//! releases its own start gradient, so `m` chains release `kL + m` gradients; the old ledger
//! split the single-chain count `k` (budgeted for `kL + 1`) and overran δ.
use crate::common;

use common::toy;
use dpinfer_accountants::{Accountant, Neighbouring, PldAccountant, convert};
use dpinfer_mcmc::budget::{self, Accounting, GradientCharging, MAX_RDP_ORDER};
use dpinfer_mcmc::{
    Barker, BarkerPrivacy, BarkerSettings, Budgeted, Hmc, HmcPrivacy, HmcSettings, MultiChain,
    Penalty, PenaltyPrivacy, PenaltySettings, Proposal, Releases, SubsampledPenalty,
    SubsampledPenaltyPrivacy, SubsampledPenaltySettings,
};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

const CHAINS: [usize; 5] = [1, 2, 10, 30, 100];
const DELTA: f64 = 1e-6;

/// Runs every chain of `mc` to its share and returns the per-chain releases.
fn run_all<S: Budgeted>(mut mc: MultiChain<S>) -> Vec<Releases> {
    let m = mc.chains().len();
    let mut rngs: Vec<_> = (0..m)
        .map(|i| Xoshiro256PlusPlus::seed_from_u64(1000 + i as u64))
        .collect();
    let traces = mc.run(u64::MAX, 0, &mut rngs).unwrap();
    let total: u64 = traces.iter().map(|t| t.iterations).sum();
    assert_eq!(total, mc.shares().unwrap().shares.iter().sum::<u64>());
    let per: Vec<Releases> = mc.chains().iter().map(Budgeted::releases).collect();
    let sum = mc.releases();
    assert_eq!(sum.gaussian, per.iter().map(|r| r.gaussian).sum::<u64>());
    assert_eq!(
        sum.subsampled,
        per.iter().map(|r| r.subsampled).sum::<u64>()
    );
    per
}

/// Checks the composition of every chain's Gaussian releases against (ε, δ): the exact
/// Gaussian PLD (`PldAccountant`, SMM19) always, and for zCDP accounting also the
/// Bun–Steinke ρ budget the sampler promises (thesis Theorem 6).
fn check_gaussian(rel: &[Releases], epsilon: f64, accounting: Accounting, what: &str) {
    let rho: f64 = rel.iter().map(|r| r.gaussian_rho).sum();
    let mut pld = PldAccountant::new(Neighbouring::ReplaceOne);
    pld.add_mu(rho).unwrap();
    let d = pld.delta(epsilon).unwrap().delta;
    assert!(
        d <= DELTA,
        "{what}: composed δ(ε = {epsilon}) = {d:e} > {DELTA:e}"
    );
    if accounting == Accounting::Zcdp {
        let budget = convert::rho_for_approx(epsilon, DELTA).unwrap();
        assert!(
            rho <= budget,
            "{what}: composed ρ = {rho} > budget {budget}"
        );
    }
}

/// Checks `count` subsampled steps of per-step RDP `rdp(α)` (orders `2..=top`) against ε.
fn check_rdp(count: u64, top: u32, rdp: impl Fn(u32) -> f64, epsilon: f64, what: &str) {
    let orders: Vec<f64> = (2..=top.min(MAX_RDP_ORDER)).map(f64::from).collect();
    let values: Vec<f64> = (2..=top.min(MAX_RDP_ORDER))
        .map(|a| count as f64 * rdp(a))
        .collect();
    let e = convert::rdp_to_approx(&orders, &values, DELTA)
        .unwrap()
        .epsilon;
    assert!(e <= epsilon, "{what}: composed ε = {e} > {epsilon}");
}

#[test]
fn multichain_dp_hmc_composition_within_budget() {
    let (tau, n, leap, eps) = (5.0, 100, 5u32, 8.0);
    for charging in [GradientCharging::Fresh, GradientCharging::Reuse] {
        for accounting in [Accounting::Zcdp, Accounting::Pld] {
            for m in CHAINS {
                let what = format!("DP HMC {charging:?} {accounting:?} m = {m}");
                let chains: Vec<_> = (0..m)
                    .map(|i| {
                        let (prior, lik) = toy(n, 2, 1);
                        Hmc::private(
                            prior,
                            lik,
                            HmcSettings {
                                step_size: 0.03,
                                leapfrog_steps: leap,
                                inv_mass: vec![1.0, 1.0],
                                temperature: 1.0,
                            },
                            HmcPrivacy {
                                ratio_clip: 10.0,
                                grad_clip: 10.0,
                                tau_l: tau,
                                tau_g: tau,
                                epsilon: eps,
                                delta: DELTA,
                                accounting,
                                charging,
                            },
                            &[0.5, 0.5],
                            ChaCha20Rng::seed_from_u64(10 + i as u64),
                        )
                        .unwrap()
                    })
                    .collect();
                let mc = MultiChain::new(chains).unwrap();
                let shares = mc.shares().unwrap().shares.clone();
                let rel = run_all(mc);
                // What each chain released, structurally: k_i ratio tests (unless a step was
                // rejected before the test) and k_i(L+1) or k_i L + 1 gradients.
                for (r, &k) in rel.iter().zip(&shares) {
                    let g = match charging {
                        GradientCharging::Fresh => k * u64::from(leap + 1),
                        GradientCharging::Reuse => k * u64::from(leap) + 1,
                    };
                    assert_eq!(r.gradients, g, "{what}");
                    assert!(r.gaussian <= g + k, "{what}");
                }
                check_gaussian(&rel, eps, accounting, &what);
            }
        }
    }
}

#[test]
fn multichain_dp_penalty_composition_within_budget() {
    for accounting in [Accounting::Zcdp, Accounting::Pld] {
        for m in CHAINS {
            let what = format!("DP penalty {accounting:?} m = {m}");
            let chains: Vec<_> = (0..m)
                .map(|i| {
                    let (prior, lik) = toy(100, 1, 2);
                    Penalty::private(
                        prior,
                        lik,
                        PenaltySettings {
                            proposal: Proposal::Gaussian { scale: vec![0.1] },
                            temperature: 1.0,
                        },
                        PenaltyPrivacy {
                            clip: 10.0,
                            tau: 3.0,
                            n_exponent: 0.5,
                            epsilon: 4.0,
                            delta: DELTA,
                            accounting,
                        },
                        &[0.5],
                        ChaCha20Rng::seed_from_u64(100 + i as u64),
                    )
                    .unwrap()
                })
                .collect();
            let rel = run_all(MultiChain::new(chains).unwrap());
            check_gaussian(&rel, 4.0, accounting, &what);
        }
    }
}

#[test]
fn multichain_dp_barker_composition_within_budget() {
    let (n, batch, eps) = (5000, 200, 6.0);
    for m in CHAINS {
        let chains: Vec<_> = (0..m)
            .map(|i| {
                let (prior, lik) = toy(n, 1, 5);
                Barker::private(
                    prior,
                    lik,
                    BarkerSettings {
                        proposal: Proposal::Gaussian { scale: vec![0.1] },
                        temperature: 0.05,
                    },
                    BarkerPrivacy {
                        batch,
                        epsilon: eps,
                        delta: DELTA,
                    },
                    &[0.9],
                    ChaCha20Rng::seed_from_u64(200 + i as u64),
                )
                .unwrap()
            })
            .collect();
        let rel = run_all(MultiChain::new(chains).unwrap());
        let count: u64 = rel.iter().map(|r| r.subsampled).sum();
        assert_eq!(rel.iter().map(|r| r.gaussian).sum::<u64>(), 0);
        check_rdp(
            count,
            ((batch - 1) / 5) as u32,
            |a| budget::barker_rdp(a, n, batch).unwrap(),
            eps,
            &format!("DP Barker m = {m}"),
        );
    }
}

#[test]
fn multichain_subsampled_penalty_composition_within_budget() {
    let (n, batch, tau, eps) = (1000, 100, 50.0, 8.0);
    for m in CHAINS {
        let chains: Vec<_> = (0..m)
            .map(|i| {
                let (prior, lik) = toy(n, 1, 6);
                SubsampledPenalty::private(
                    prior,
                    lik,
                    SubsampledPenaltySettings {
                        proposal: Proposal::Gaussian { scale: vec![0.05] },
                        temperature: 0.1,
                        batch,
                        clip: 5.0,
                    },
                    SubsampledPenaltyPrivacy {
                        tau,
                        epsilon: eps,
                        delta: DELTA,
                    },
                    &[0.9],
                    ChaCha20Rng::seed_from_u64(300 + i as u64),
                )
                .unwrap()
            })
            .collect();
        let rel = run_all(MultiChain::new(chains).unwrap());
        let count: u64 = rel.iter().map(|r| r.subsampled).sum();
        check_rdp(
            count,
            MAX_RDP_ORDER,
            |a| budget::subsampled_penalty_rdp(a, tau, n, batch).unwrap(),
            eps,
            &format!("subsampled DP penalty m = {m}"),
        );
    }
}

/// A chain that is built but never stepped has released nothing (DP HMC's start gradient is
/// released at the first step), and more chains than the budget can pay start gradients for
/// are refused before anything is released.
#[test]
fn multichain_refusal_releases_nothing() {
    let make = |eps: f64| {
        let (prior, lik) = toy(100, 2, 1);
        Hmc::private(
            prior,
            lik,
            HmcSettings {
                step_size: 0.03,
                leapfrog_steps: 5,
                inv_mass: vec![1.0, 1.0],
                temperature: 1.0,
            },
            HmcPrivacy {
                ratio_clip: 10.0,
                grad_clip: 10.0,
                tau_l: 5.0,
                tau_g: 5.0,
                epsilon: eps,
                delta: DELTA,
                accounting: Accounting::Pld,
                charging: GradientCharging::Reuse,
            },
            &[0.5, 0.5],
            ChaCha20Rng::seed_from_u64(1),
        )
        .unwrap()
    };
    let one = make(0.5);
    assert_eq!(one.released(), Releases::default());
    let k = one.max_iterations().unwrap();
    let m = usize::try_from(k).unwrap();
    let chains: Vec<_> = (0..m).map(|_| make(0.5)).collect();
    assert!(MultiChain::new(chains).is_err());
    assert!(one.chains_max_iterations(0).is_err());
}
