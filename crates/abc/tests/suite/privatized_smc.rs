//! SMC-ABC from privatized data (Xiong, Ju & Zhang §3.1): the simulator is "confidential
//! model + public Laplace mechanism", so SMC-ABC targets π(θ | s_dp). The exact private-data
//! posterior is computed independently by quadrature; the naive plug-in posterior (treating
//! s_dp as the confidential mean) is shown to be wrong.
#![cfg(feature = "alloc")]

use crate::common;

use common::{exact_posterior, gaussian_mean, weighted_mean_sd};
use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::smc::{LaplaceReplicate, Privatized, SmcAbc, SmcSettings, StopReason};
use dpinfer_simulators::prior::Normal;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

const N: f64 = 100.0;
const B: f64 = 0.2; // Laplace scale of the published release s_dp = ȳ + Lap(B)
const S_DP: f64 = 0.5;

/// Mean and sd of π(θ | s_dp) ∝ φ(θ) ∫ N(s; θ, 1/n) Lap(s_dp − s; B) ds by 2-d quadrature.
fn private_posterior() -> (f64, f64) {
    let sd = 1.0 / N.sqrt();
    let (t_lo, t_hi, nt) = (-3.0_f64, 3.0_f64, 1200);
    let (u_lo, u_hi, nu) = (-8.0 * sd, 8.0 * sd, 400);
    let (ht, hu) = ((t_hi - t_lo) / nt as f64, (u_hi - u_lo) / nu as f64);
    let (mut z, mut m1, mut m2) = (0.0, 0.0, 0.0);
    for i in 0..=nt {
        let t = t_lo + ht * i as f64;
        // likelihood: ∫ N(u; 0, sd²) Lap(s_dp − t − u; B) du, with s = t + u
        let mut lik = 0.0;
        for j in 0..=nu {
            let u = u_lo + hu * j as f64;
            let w = if j == 0 || j == nu { 0.5 } else { 1.0 };
            let g = (-0.5 * (u / sd).powi(2)).exp();
            lik += w * g * (-(S_DP - t - u).abs() / B).exp();
        }
        let w = if i == 0 || i == nt { 0.5 } else { 1.0 };
        let d = w * (-0.5 * t * t).exp() * lik;
        z += d;
        m1 += d * t;
        m2 += d * t * t;
    }
    let m = m1 / z;
    (m, (m2 / z - m * m).sqrt())
}

#[test]
fn smc_targets_private_data_posterior_and_naive_is_wrong() {
    let obs = [S_DP];
    let sim = Privatized::new(gaussian_mean(N), LaplaceReplicate::new(B).unwrap());
    let settings = SmcSettings {
        max_generations: 40,
        ..common::median_smc(1000, 0.01)
    };
    let mut s = SmcAbc::new(
        Normal::new(0.0, 1.0).unwrap(),
        sim,
        Euclidean::new(&obs).unwrap(),
        settings,
    )
    .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(314);
    assert_eq!(s.run(&mut rng).unwrap(), StopReason::FinalTolerance);
    let (m, sd) = weighted_mean_sd(s.particles(), s.weights());
    let (pm, psd) = private_posterior();
    let ess = s.history().last().unwrap().ess;
    // As in gaussian_mean.rs: 8 SE under the ESS approximation (nominal false failure < 1e-14);
    // the ABC tolerance 0.01 is < 4% of the sd of s_dp given θ, a negligible bias here.
    assert!((m - pm).abs() < 8.0 * psd / ess.sqrt(), "{m} vs {pm}");
    assert!(
        (sd - psd).abs() < 8.0 * psd / (2.0 * ess).sqrt(),
        "{sd} vs {psd}"
    );
    // The naive plug-in posterior ignores the mechanism: its sd is far too small.
    let (_, naive_sd) = exact_posterior(1.0, N, S_DP);
    assert!(psd > 2.0 * naive_sd, "{psd} vs {naive_sd}");
    assert!((sd - naive_sd).abs() > 8.0 * psd / (2.0 * ess).sqrt());
}
