//! The linear-regression experiment of Xiong, Ju & Zhang (§4.2, App. E.2), small enough for CI:
//! SPPE on the paper's model and mechanism (`examples/regression_sppe.rs` runs the full
//! comparison at ε = 10, 1, 0.1 with SMC-ABC and SPLE) against an independent reference, an
//! importance sampler with the exact Laplace density.

#![allow(clippy::unwrap_used, clippy::cast_precision_loss)]

use crate::sequential::small;
use dpinfer_mechanisms::NoiseMap;
use dpinfer_mechanisms::idealized::IdealizedLaplace;
use dpinfer_neural::{SequentialSettings, sppe};
use dpinfer_simulators::models::linreg::{LinRegSettings, LinearRegression, PAPER_S_TILDE};
use dpinfer_simulators::{Prior, SimStream, Simulator};

/// Length of the released statistic `s̃` (p = 2).
const D: usize = 9;

/// Weighted mean and sd of coordinate `j` of row-major 3-D draws.
fn weighted_moments(draws: &[f64], w: &[f64], j: usize) -> (f64, f64) {
    let total: f64 = w.iter().sum();
    let col = || draws.iter().skip(j).step_by(3);
    let m = col().zip(w).map(|(v, wi)| v * wi).sum::<f64>() / total;
    let v = col()
        .zip(w)
        .map(|(v, wi)| wi * (v - m) * (v - m))
        .sum::<f64>()
        / total;
    (m, v.sqrt())
}

/// The private-data posterior `π(β | s_dp°)` by importance sampling from the prior: draw `k`
/// β from `N(0, I₃)`, simulate `reps` confidential statistics `s̃` at each, and weight β by
/// the average exact Laplace density `Π_j Lap(s_dp°,j − s̃_j; b)` over them — an unbiased
/// estimate of the likelihood `∫ η(s_dp° | s̃) p(s̃ | β) ds̃` (the integral SPPE's loss
/// estimates by RQMC), so the weighted sample is consistent for the posterior (the
/// pseudo-marginal argument). Returns the draws, the weights and their effective sample size.
fn importance_reference(
    model: &LinearRegression<2>,
    observed: &[f64],
    b: f64,
    k: usize,
    reps: usize,
) -> (Vec<f64>, Vec<f64>, f64) {
    let prior = model.prior().unwrap();
    let mut rng = SimStream::with_domain(23, 1, 0);
    let mut draws = vec![0.0; 3 * k];
    let mut w = vec![0.0; k];
    let mut s = [0.0; D];
    for (beta, wi) in draws.chunks_exact_mut(3).zip(&mut w) {
        prior.sample(&mut rng, beta).unwrap();
        let mut lik = 0.0;
        for _ in 0..reps {
            model.simulate(beta, &mut rng, &mut s).unwrap();
            let l1: f64 = s.iter().zip(observed).map(|(a, o)| (a - o).abs()).sum();
            lik += (-l1 / b).exp();
        }
        *wi = lik;
    }
    let total: f64 = w.iter().sum();
    let ess = total * total / w.iter().map(|v| v * v).sum::<f64>();
    (draws, w, ess)
}

/// SPPE (3 rounds of 400 simulations, `M = 4` RQMC noise draws, a 3-layer MAF: the suite's
/// `small` settings with a third round) on the paper's regression (p = 2, n = 100,
/// β ~ N(0, I)) whose clamped statistic `s̃` (the paper's printed one) is released at ε = 1 with
/// continuous Laplace noise of scale `Δ/ε = 0.13` per entry, matches an importance-sampling
/// reference of the private-data posterior (8000 prior draws × 16 confidential simulations
/// each, exact Laplace density; see `importance_reference`).
///
/// Tolerances, per coordinate of β: mean within 0.3 (a third of the posterior sd ≈ 0.9), sd
/// within 25 %. The reference's Monte Carlo error, from its effective sample size (printed,
/// 2709 when written; ≥ 1500 asserted): about sd/√ESS ≈ 0.02 in the mean and ≈ 1.5 % in the
/// sd, plus the likelihood estimate's noise (16 replicates); SPPE's 4000 draws add ≈ 0.015 and
/// 1.1 %. The rest is the flow's approximation error after 1200 simulations: the seeded run
/// printed mean errors +0.14, −0.08, +0.19 and sd errors +2 %, −1 %, −6 % when written. The
/// run is seeded, so the test is deterministic (no false-failure rate to state): the band is
/// the printed errors with a margin for the last bits the CPU model may change in training.
/// Not vacuous: the reference's mean is asserted to lie more than 0.6 (twice the band) from
/// the prior mean 0 in some coordinate, so a sampler that learned nothing and returned the
/// prior fails; and without the mechanism's noise the posterior would be as narrow as the
/// conjugate one given the noiseless `s̃` (sds 0.27, 0.15, 0.13; this one's are near 0.9), so a
/// sampler ignoring the mechanism fails the sd band.
#[test]
fn sppe_matches_an_importance_sampler_on_the_private_regression() {
    let model = LinearRegression::<2>::new(LinRegSettings::paper()).unwrap();
    let prior = model.prior().unwrap();
    let epsilon = 1.0;
    let b = LinearRegression::<2>::l1_sensitivity(model.settings().n).unwrap() / epsilon;
    let mech = IdealizedLaplace::new(b).unwrap();
    let mut rng = SimStream::with_domain(23, 2, 0);
    let u: Vec<f64> = (0..D)
        .map(|_| dpinfer_simulators::dist::uniform_open01(&mut rng))
        .collect();
    let mut observed = [0.0; D];
    mech.tau(&u, &PAPER_S_TILDE, &mut observed).unwrap();

    let (ref_draws, ref_w, ess) = importance_reference(&model, &observed, b, 8000, 16);
    eprintln!("reference ESS {ess:.0}");
    assert!(ess >= 1500.0, "reference ESS {ess}");

    let settings = SequentialSettings {
        rounds: 3,
        ..small(31)
    };
    let out = sppe(&prior, &model, &mech, &observed, &settings).unwrap();
    let (draws, _) = out
        .posterior
        .sample(&prior, 4000, 0.01, &mut SimStream::new(5, 0))
        .unwrap();
    let ones = vec![1.0; 4000];
    let mut informative = false;
    for j in 0..3 {
        let (rm, rs) = weighted_moments(&ref_draws, &ref_w, j);
        let (m, s) = weighted_moments(&draws, &ones, j);
        eprintln!(
            "β{j}: reference {rm:.3} ± {rs:.3}, SPPE {m:.3} ± {s:.3} (mean error {:+.3}, sd error {:+.1} %)",
            m - rm,
            100.0 * (s / rs - 1.0)
        );
        informative |= rm.abs() > 0.6;
        assert!((m - rm).abs() < 0.3, "β{j}: mean {m} vs reference {rm}");
        assert!(
            (s / rs - 1.0).abs() < 0.25,
            "β{j}: sd {s} vs reference {rs}"
        );
    }
    assert!(
        informative,
        "the reference posterior is the prior's mean: the test would be vacuous"
    );
}
