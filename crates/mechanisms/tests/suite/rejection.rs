//! Tests of the Gaussian one-step rejection mechanism (Park & Jitkrittum Thm 3.1).

use crate::common;

use common::{Z_1E6, rng, z_score};
use dpinfer_mechanisms::{
    Event, GaussianRejection, MechanismError, rejection_h, rejection_h_inverse,
};

#[test]
fn h_matches_hand_value() {
    // σ = 1, Δ = 1, B = 2, ε_abc = 0.5: h = φ(0)/Φ(−1.5) with Φ(−1.5) = 0.066807201268858
    // (standard normal table) and 1/√(2π) = 0.3989422804014327.
    let h = rejection_h(1.0, 1.0, 2.0, 0.5).unwrap();
    let want = 0.3989422804014327 / 0.066807201268858;
    assert!((h - want).abs() < 1e-12 * want, "{h} vs {want}");
    // min(1, ·) cap: Δ/√(2π)σ > 1 for tiny σ; Φ(−0.5/σ·…) dominates anyway.
    let h2 = rejection_h(0.1, 1.0, 2.0, 0.5).unwrap();
    assert!(h2 > h);
    assert_eq!(
        rejection_h(0.0, 1.0, 2.0, 0.5),
        Err(MechanismError::NotPositive { param: "sigma" })
    );
    assert!(rejection_h(1.0, 1.0, 2.0, f64::NAN).is_err());
}

#[test]
fn h_is_strictly_decreasing_and_inverse_round_trips() {
    let mut prev = f64::INFINITY;
    // σ = 0.01 gives Φ(−80) = 0 in f64 (h = ∞); start at σ = 0.05 where h is finite.
    assert!(rejection_h(0.01, 0.05, 1.0, 0.2).unwrap().is_infinite());
    for i in 5..200 {
        let s = 0.01 * f64::from(i);
        let h = rejection_h(s, 0.05, 1.0, 0.2).unwrap();
        assert!(h < prev, "not decreasing at σ={s}");
        prev = h;
    }
    for &eps in &[0.01, 0.1, 1.0, 5.0] {
        let s = rejection_h_inverse(eps, 0.05, 1.0, 0.2).unwrap();
        let h = rejection_h(s, 0.05, 1.0, 0.2).unwrap();
        assert!(h <= eps && h > eps * (1.0 - 1e-9), "eps={eps} h={h}");
    }
}

#[test]
fn grid_cost_is_close_to_paper_and_within_target() {
    for &(eps, d, b, t) in &[
        (0.1, 0.01, 2.0, 0.3),
        (1.0, 0.1, 1.0, 0.05),
        (0.5, 0.2, 5.0, 1.0),
    ] {
        let m = GaussianRejection::from_epsilon(eps, d, b, t).unwrap();
        assert!(m.epsilon() <= eps);
        // The grid correction is O(1/σ_u) ≈ 2^-23 relative.
        assert!(m.epsilon() >= m.paper_epsilon());
        assert!(
            m.epsilon() <= m.paper_epsilon() * (1.0 + 1e-5),
            "{} vs {}",
            m.epsilon(),
            m.paper_epsilon()
        );
        assert!(m.epsilon() > eps * (1.0 - 1e-5));
        assert_eq!(
            m.event(),
            Event::PureEpsilon {
                epsilon: m.epsilon()
            }
        );
    }
}

#[test]
fn acceptance_probability_is_phi() {
    let m = GaussianRejection::new(0.2, 0.01, 2.0, 0.3).unwrap();
    let mut r = rng(41);
    for &rho in &[0.1, 0.3, 0.5, 7.0, f64::NAN] {
        let n = 20_000u64;
        let k = (0..n).filter(|_| m.decide(rho, &mut r).unwrap()).count() as u64;
        let clamped = if rho.is_nan() { 0.0 } else { rho.min(2.0) };
        let p = dpinfer_math::norm_cdf((0.3 - clamped) / m.effective_sigma());
        if p > 1e-9 {
            assert!(z_score(k, n, p).abs() < Z_1E6, "ρ={rho} k={k} p={p}");
        } else {
            assert_eq!(k, 0);
        }
    }
}
