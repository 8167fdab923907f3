//! The certified interval `[lower, upper]` of the numerical PLD: the lower bound must lie
//! below every independent value of the exact ε (the analytic Gaussian PLD for q = 1,
//! prv-accountant's certified upper bound from `tests/data/pld_golden.txt`, exact
//! enumeration in `tests/suite/pld_discrete.rs`), and be `O(h√N)` wide.

use crate::relations::AR;
use dpinfer_accountants::pld;
use dpinfer_accountants::pld_numeric::{Component, ComposedPld, Discretisation, Mechanism};

const GOLDEN: &str = include_str!("../data/pld_golden.txt");

/// q = 1: the exact ε (closed form) lies in `[lower, upper]`, and δ likewise.
#[test]
fn interval_contains_the_analytic_gaussian() {
    for (sigma, k, delta) in [
        (1.0, 1u64, 1e-5),
        (2.0, 10, 1e-6),
        (5.0, 100, 1e-5),
        (0.7, 3, 1e-3),
        (20.0, 5000, 1e-5),
    ] {
        let mu = 0.5 / (sigma * sigma);
        let c = Component::new(Mechanism::Gaussian { mu }, 1.0).unwrap();
        let p = ComposedPld::new(&[(c, k)], 0.0, AR, Discretisation::default(), true).unwrap();
        let r = p.epsilon(delta).unwrap();
        let exact = pld::epsilon_for_delta(mu * k as f64, delta).unwrap();
        let lo = r.lower.unwrap();
        assert!(
            lo <= exact && exact <= r.epsilon,
            "sigma {sigma} k {k}: [{lo}, {}] vs {exact}",
            r.epsilon
        );
        // Width O(h√N): h·√(N·ln(10¹⁵)/2) + N·h²/4 plus the δ penalty's effect.
        let s = 1e-4 * ((k as f64) * 34.54 / 2.0).sqrt() + k as f64 * 1e-8 / 4.0;
        assert!(
            r.epsilon - lo <= 1.2 * s.min(k as f64 * 1e-4) + 1e-3,
            "sigma {sigma} k {k}: [{lo}, {}]",
            r.epsilon
        );
        let e = exact * 0.8;
        let d = p.delta(e).unwrap();
        let d_exact = pld::delta_for_epsilon(mu * k as f64, e).unwrap();
        assert!(
            d.lower.unwrap() <= d_exact && d_exact <= d.delta,
            "{:?} vs {d_exact}",
            d
        );
    }
}

/// Poisson-subsampled Gaussians: the lower bound never exceeds prv-accountant's certified
/// upper bound (so it is consistent with the exact ε), and is `O(h√N)` below ours (plus
/// the effect of the round-off allowance, which widens both ends at small δ).
#[test]
fn lower_bound_below_prv_upper_bound() {
    let mut n = 0;
    for line in GOLDEN.lines().filter(|l| l.starts_with("pg_q")) {
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        if f[2] != "eps" {
            continue;
        }
        let spec = f[1].split_once(':').unwrap().1;
        let (mut q, mut s, mut k) = (1.0, 1.0, 0u64);
        for kv in spec.split(',') {
            let (key, v) = kv.split_once('=').unwrap();
            match key {
                "q" => q = v.parse().unwrap(),
                "s" => s = v.parse().unwrap(),
                "n" => k = v.parse::<f64>().unwrap() as u64,
                _ => {}
            }
        }
        if k > 100_000 {
            continue;
        }
        let delta: f64 = f[3].parse().unwrap();
        let (prv_low, prv_up): (f64, f64) = (f[5].parse().unwrap(), f[6].parse().unwrap());
        let c = Component::new(Mechanism::Gaussian { mu: 0.5 / (s * s) }, q).unwrap();
        let p = ComposedPld::new(&[(c, k)], 0.0, AR, Discretisation::default(), true).unwrap();
        let r = p.epsilon(delta).unwrap();
        let lo = r.lower.unwrap();
        eprintln!(
            "{line}\n  ours [{lo}, {}] prv [{prv_low}, {prv_up}]",
            r.epsilon
        );
        assert!(lo <= prv_up, "{line}: lower {lo} above prv upper {prv_up}");
        let width = 1e-4 * (k as f64 * 34.54 / 2.0).sqrt() + k as f64 * 1e-8 / 4.0;
        assert!(
            lo <= r.epsilon && r.epsilon - lo <= 1.2 * width + 0.01 * r.epsilon + 2e-3,
            "{line}: [{lo}, {}]",
            r.epsilon
        );
        n += 1;
    }
    assert!(n >= 10, "{n}");
}
