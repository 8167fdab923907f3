//! Fast statistical privacy audits.
//!
//! Each audit runs a mechanism `N` times on two neighbouring inputs, counts a
//! Neyman–Pearson-optimal event `E` (a likelihood-ratio threshold set) on each side and
//! turns the counts into a lower confidence bound on ε with Hoeffding's inequality:
//! with probability ≥ 1 − 1e-6, `p₁ ≥ p̂₁ − h` and `p₀ ≤ p̂₀ + h` where
//! `h = √(ln(2/1e-6)/(2N))`, so `ε ≥ ln((p̂₁ − h)/(p̂₀ + h))`. A correct mechanism fails
//! its audit with probability below 1e-6. Each audit is also run on a deliberately
//! mis-calibrated mechanism to show that the audit has power: it must flag it.

use crate::common;

use chacha20::ChaCha20Rng;
use common::rng;
use dpinfer_mechanisms::{BinomialCurve, Gaussian, Laplace, SparseVector, SparseVectorSettings};

const ALPHA: f64 = 1e-6;

fn hoeffding(n: u64) -> f64 {
    ((2.0 / ALPHA).ln() / (2.0 * n as f64)).sqrt()
}

/// Lower confidence bound on ε from event counts on the two sides.
fn epsilon_lower_bound(hits1: u64, hits0: u64, n: u64) -> f64 {
    let h = hoeffding(n);
    let p1 = hits1 as f64 / n as f64 - h;
    let p0 = hits0 as f64 / n as f64 + h;
    if p1 <= 0.0 { 0.0 } else { (p1 / p0).ln() }
}

/// Lower confidence bound on `p₁ − e^ε p₀` (a lower bound on δ at ε).
fn delta_lower_bound(hits1: u64, hits0: u64, n: u64, eps: f64) -> f64 {
    let h = hoeffding(n);
    (hits1 as f64 / n as f64 - h) - eps.exp() * (hits0 as f64 / n as f64 + h)
}

/// The event counts `(hits₁, hits₀)`: of `n` runs on the neighbour `x₁ = 1`, then `n` on
/// `x₀ = 0`, all from one stream seeded with `seed`, how many land in `E` (`in_event`).
fn event_counts(
    seed: u64,
    n: u64,
    mut in_event: impl FnMut(u8, &mut ChaCha20Rng) -> bool,
) -> (u64, u64) {
    let mut r = rng(seed);
    let hits1 = (0..n).filter(|_| in_event(1, &mut r)).count() as u64;
    let hits0 = (0..n).filter(|_| in_event(0, &mut r)).count() as u64;
    (hits1, hits0)
}

fn laplace_audit(mech: &Laplace, seed: u64) -> f64 {
    // x₀ = 0, x₁ = Δ = 1; E = {y ≥ 1} is where the privacy loss is maximal (= Δ/b).
    let n = 60_000;
    let (hits1, hits0) = event_counts(seed, n, |x, r| {
        mech.release(f64::from(x), r).unwrap() >= 1.0
    });
    epsilon_lower_bound(hits1, hits0, n)
}

#[test]
fn audit_laplace() {
    let mech = Laplace::new(1.0, 1.0, -10.0, 10.0).unwrap();
    let lb = laplace_audit(&mech, 31);
    assert!(
        lb <= mech.epsilon(),
        "empirical {lb} > claimed {}",
        mech.epsilon()
    );
    assert!(lb > 0.8, "audit too weak: {lb}");
    // Mis-calibrated: half the scale, but claiming ε = Δ/b with the intended b = 1.
    let broken = Laplace::new(0.5, 1.0, -10.0, 10.0).unwrap();
    let lb = laplace_audit(&broken, 32);
    assert!(lb > 1.0, "audit failed to flag half-scale Laplace: {lb}");
}

#[test]
fn audit_gaussian() {
    // σ = 1, Δ = 1: ρ = 1/2. E = {y ≥ 1}. The accountant's ρ-zCDP → δ(ε = 1) must dominate.
    let n = 60_000;
    let eps = 1.0;
    let run = |mech: &Gaussian, seed| {
        let (h1, h0) = event_counts(seed, n, |x, r| {
            mech.release(f64::from(x), r).unwrap() >= 1.0
        });
        delta_lower_bound(h1, h0, n, eps)
    };
    let mech = Gaussian::new(1.0, 1.0, -10.0, 10.0).unwrap();
    let claimed = dpinfer_accountants::convert::zcdp_to_delta(mech.rho(), eps)
        .unwrap()
        .delta;
    let lb = run(&mech, 33);
    assert!(lb <= claimed, "empirical δ {lb} > claimed {claimed}");
    let broken = Gaussian::new(0.5, 1.0, -10.0, 10.0).unwrap();
    let lb = run(&broken, 34);
    assert!(
        lb > claimed,
        "audit failed to flag half-σ Gaussian: {lb} ≤ {claimed}"
    );
}

#[test]
fn audit_binomial_curve() {
    // K = 1, m = 2, n = 3, one release: I = 0 vs I = 1, E = {s = n}.
    // p₁ = (3/4)³ = 0.42, p₀ = (1/2)³ = 0.125: expected bound ≈ ln(0.413/0.134) = 1.13.
    let n = 100_000;
    let mech = BinomialCurve::new(3, 2, 1).unwrap();
    let (h1, h0) = event_counts(35, n, |x, r| {
        mech.release_point(u64::from(x), r).unwrap() == 3
    });
    let lb = epsilon_lower_bound(h1, h0, n);
    assert!(
        lb <= mech.epsilon_exact(1),
        "{lb} > {}",
        mech.epsilon_exact(1)
    );
    assert!(lb > 0.9, "audit too weak: {lb}");
    // A mis-calibrated claim (half the exact ε) is flagged.
    assert!(lb > 0.5 * mech.epsilon_exact(1));
}

#[test]
fn audit_sparse_vector() {
    // c = 1, one query with value 0.5 on D and 0 on D′ (Δ = 0.5, threshold 0.5).
    // E = {answer is negative}: P(E | 0.5) = 1/2, P(E | 0) is small when the noise is small.
    let settings = SparseVectorSettings {
        threshold: 0.5,
        sensitivity: 0.5,
        lo: 0.0,
        hi: 1.0,
        c: 1,
        resample: false,
    };
    let n = 40_000;
    let run = |scale: f64, seed| {
        // The query's value is 0.5 on D (x = 1) and 0 on D′ (x = 0).
        let (h1, h0) = event_counts(seed, n, |x, r| {
            let mut svt = SparseVector::new(settings, scale).unwrap();
            !svt.query(0.5 * f64::from(x), r).unwrap()
        });
        epsilon_lower_bound(h1, h0, n)
    };
    let svt = SparseVector::from_epsilon(settings, 1.0).unwrap();
    let lb = run(svt.scale(), 36);
    assert!(lb <= svt.epsilon(), "{lb} > {}", svt.epsilon());
    // Broken: noise 32× too small for the claimed ε = 1 (e.g. query noise not scaled with
    // the budget). Expected P(E | 0) ≈ (4e⁻⁸ − e⁻¹⁶)/6 ≈ 2e-4, bound ≈ ln(0.487/0.014) ≈ 3.5.
    let lb = run(svt.scale() / 32.0, 37);
    assert!(lb > 1.0, "audit failed to flag under-noised SVT: {lb}");
}
