//! Clipped summaries: values against hand-computed ones, and the stated replace-one
//! sensitivities against brute force (random data sets, random and extreme replacements:
//! the bound is never exceeded, and it is attained where it is tight).

use dpinfer_simulators::SimError;
use dpinfer_simulators::summaries::{ClippedSummary, SummaryKind};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt, SeedableRng};

fn eval(s: &ClippedSummary<'_>, x: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; s.output_len(x.len())];
    let mut scratch = vec![0.0; x.len()];
    s.compute(x, &mut out, &mut scratch).unwrap();
    out
}

#[test]
fn values() {
    let x = [3.0, -5.0, 1.0, 0.5, 10.0];
    let id = ClippedSummary::new(SummaryKind::Identity, -2.0, 2.0).unwrap();
    assert_eq!(eval(&id, &x), vec![2.0, -2.0, 1.0, 0.5, 2.0]);
    let m = ClippedSummary::new(SummaryKind::Mean, -2.0, 2.0).unwrap();
    assert_eq!(eval(&m, &x), vec![3.5 / 5.0]);
    // sorted clipped: -2, 0.5, 1, 2, 2; ⌈0.2·5⌉ = 1, ⌈0.5·5⌉ = 3, ⌈1·5⌉ = 5
    let q = ClippedSummary::new(SummaryKind::Quantiles(&[0.2, 0.5, 1.0]), -2.0, 2.0).unwrap();
    assert_eq!(eval(&q, &x), vec![-2.0, 1.0, 2.0]);
    // lag 0: (4 + 4 + 1 + 0.25 + 4)/5; lag 1: (2·−2 + −2·1 + 1·0.5 + 0.5·2)/4
    let l = ClippedSummary::new(SummaryKind::LagProducts(&[0, 1]), -2.0, 2.0).unwrap();
    assert_eq!(eval(&l, &x), vec![13.25 / 5.0, -4.5 / 4.0]);
}

#[test]
fn sensitivities_hold_and_are_tight_where_stated() {
    let levels = [0.1, 0.25, 0.5, 0.75, 0.9];
    let lags = [0, 1, 3];
    let kinds = [
        SummaryKind::Identity,
        SummaryKind::Mean,
        SummaryKind::Quantiles(&levels),
        SummaryKind::LagProducts(&lags),
    ];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    for (lo, hi) in [(-1.0, 2.0), (0.5, 3.0), (-4.0, -1.0)] {
        for kind in kinds {
            let s = ClippedSummary::new(kind, lo, hi).unwrap();
            let n = 12;
            let sens = s.sensitivity(n).unwrap();
            assert_eq!(sens.relation, dpinfer_distances::Neighbouring::ReplaceOne);
            let mut worst1: f64 = 0.0;
            for trial in 0..4000 {
                let mut x: Vec<f64> = (0..n)
                    .map(|_| rng.random_range(lo - 1.0..hi + 1.0))
                    .collect();
                if trial % 4 == 0 {
                    // Extreme data sets: every value at an end of the range.
                    for v in &mut x {
                        *v = if rng.next_u32() % 2 == 0 { lo } else { hi };
                    }
                }
                let a = eval(&s, &x);
                let i = (rng.next_u32() as usize) % n;
                x[i] = match trial % 3 {
                    0 => lo - 5.0,
                    1 => hi + 5.0,
                    _ => rng.random_range(lo..hi),
                };
                let b = eval(&s, &x);
                let d1: f64 = a.iter().zip(&b).map(|(u, v)| (u - v).abs()).sum();
                let d2: f64 = a
                    .iter()
                    .zip(&b)
                    .map(|(u, v)| (u - v) * (u - v))
                    .sum::<f64>()
                    .sqrt();
                assert!(
                    d1 <= sens.l1 * (1.0 + 1e-12),
                    "{kind:?} [{lo}, {hi}]: {d1} > {}",
                    sens.l1
                );
                assert!(
                    d2 <= sens.l2 * (1.0 + 1e-12),
                    "{kind:?} [{lo}, {hi}]: {d2} > {}",
                    sens.l2
                );
                worst1 = worst1.max(d1);
            }
            if matches!(kind, SummaryKind::Identity | SummaryKind::Mean) {
                assert!(
                    (worst1 - sens.l1).abs() <= 1e-12 * sens.l1,
                    "{kind:?}: not tight ({worst1} vs {})",
                    sens.l1
                );
            }
        }
    }
}

#[test]
fn invalid_settings_are_typed_errors() {
    assert!(matches!(
        ClippedSummary::new(SummaryKind::Mean, 1.0, 1.0),
        Err(SimError::InvalidParameter { .. })
    ));
    assert!(matches!(
        ClippedSummary::new(SummaryKind::Mean, f64::NAN, 1.0),
        Err(SimError::InvalidParameter { .. })
    ));
    assert!(matches!(
        ClippedSummary::new(SummaryKind::Quantiles(&[0.5, 0.5]), 0.0, 1.0),
        Err(SimError::InvalidParameter { .. })
    ));
    assert!(matches!(
        ClippedSummary::new(SummaryKind::Quantiles(&[0.0]), 0.0, 1.0),
        Err(SimError::InvalidParameter { .. })
    ));
    assert!(matches!(
        ClippedSummary::new(SummaryKind::Quantiles(&[]), 0.0, 1.0),
        Err(SimError::InvalidSize { .. })
    ));
    assert!(matches!(
        ClippedSummary::new(SummaryKind::LagProducts(&[2, 1]), 0.0, 1.0),
        Err(SimError::InvalidSize { .. })
    ));
    let l = ClippedSummary::new(SummaryKind::LagProducts(&[3]), 0.0, 1.0).unwrap();
    assert!(matches!(
        l.sensitivity(3),
        Err(SimError::InvalidSize { .. })
    ));
    let m = ClippedSummary::new(SummaryKind::Mean, 0.0, 1.0).unwrap();
    let mut out = [0.0];
    assert!(matches!(
        m.compute(&[1.0, f64::NAN], &mut out, &mut []),
        Err(SimError::InvalidParameter { .. })
    ));
    assert!(matches!(
        m.compute(&[], &mut out, &mut []),
        Err(SimError::InvalidSize { .. })
    ));
    assert!(matches!(
        m.compute(&[1.0], &mut [0.0, 0.0], &mut []),
        Err(SimError::DimensionMismatch { .. })
    ));
}

/// The distance sensitivity `min(C, √max w · Δ₂)`: brute force over random data sets, random
/// simulated summaries and random or extreme replacements — the clipped weighted L2 distance
/// to the observed summary never moves by more — and invalid weights and clips are errors.
#[test]
fn the_distance_sensitivity_bounds_the_clipped_weighted_l2() {
    let levels = [0.2, 0.5, 0.8];
    let lags = [1, 2];
    let kinds = [
        SummaryKind::Identity,
        SummaryKind::Mean,
        SummaryKind::Quantiles(&levels),
        SummaryKind::LagProducts(&lags),
    ];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let (lo, hi, n) = (-1.0, 2.0, 10);
    for kind in kinds {
        let s = ClippedSummary::new(kind, lo, hi).unwrap();
        let k = s.output_len(n);
        let sens = s.sensitivity(n).unwrap();
        for clip in [0.05, 1.0, 100.0] {
            let w: Vec<f64> = (0..k).map(|_| rng.random_range(0.0..3.0)).collect();
            let bound = sens.clipped_weighted_l2(&w, clip).unwrap();
            let w_max = w.iter().copied().fold(0.0, f64::max);
            assert_eq!(bound, clip.min(w_max.sqrt() * sens.l2));
            let rho = |a: &[f64], b: &[f64]| -> f64 {
                let d: f64 = a
                    .iter()
                    .zip(b)
                    .zip(&w)
                    .map(|((u, v), w)| w * (u - v) * (u - v))
                    .sum();
                d.sqrt().min(clip)
            };
            for trial in 0..2000 {
                let sim: Vec<f64> = (0..n).map(|_| rng.random_range(lo..hi)).collect();
                let mut y: Vec<f64> = (0..n)
                    .map(|_| rng.random_range(lo - 1.0..hi + 1.0))
                    .collect();
                let (sx, sy) = (eval(&s, &sim), eval(&s, &y));
                let i = (rng.next_u32() as usize) % n;
                y[i] = match trial % 3 {
                    0 => lo - 3.0,
                    1 => hi + 3.0,
                    _ => rng.random_range(lo..hi),
                };
                let sy2 = eval(&s, &y);
                let change = (rho(&sx, &sy) - rho(&sx, &sy2)).abs();
                assert!(
                    change <= bound * (1.0 + 1e-12),
                    "{kind:?} C = {clip}: {change} > {bound}"
                );
            }
        }
    }
    let sens = ClippedSummary::new(SummaryKind::Mean, 0.0, 1.0)
        .unwrap()
        .sensitivity(4)
        .unwrap();
    assert!(matches!(
        sens.clipped_weighted_l2(&[], 1.0),
        Err(SimError::InvalidSize { .. })
    ));
    for (w, c) in [
        (f64::NAN, 1.0),
        (-1.0, 1.0),
        (f64::INFINITY, 1.0),
        (1.0, 0.0),
        (1.0, f64::NAN),
        (1.0, f64::INFINITY),
    ] {
        assert!(
            matches!(
                sens.clipped_weighted_l2(&[w], c),
                Err(SimError::InvalidParameter { .. })
            ),
            "w = {w}, C = {c}"
        );
    }
    // Mean over [0, 1] of 4 values: Δ₂ = 1/4; weight 4 doubles it.
    assert_eq!(sens.clipped_weighted_l2(&[4.0], 10.0).unwrap(), 0.5);
}
