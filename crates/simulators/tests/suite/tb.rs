//! Tuberculosis birth–death model: summaries on hand-built data, equilibrium expectations of
//! the process, and the truncated prior.
#![cfg(feature = "alloc")]

use crate::common;
use common::*;

use dpinfer_simulators::models::tb::{
    TRUE_THETA, TbPrior, TbSettings, Tuberculosis, distance, mean_clipped_distance,
    mean_clipped_distance_sensitivity, san_francisco_summaries, summaries,
};
use dpinfer_simulators::{Prior, SimError, SimStream, Simulator};

#[test]
fn san_francisco_summaries_by_hand() {
    // 473 observations, 326 clusters, largest 30; four largest 30, 23, 15, 10 → gap 20/3;
    // 282 singletons, 20 pairs; months 0..23 → period 24; 17 distinct months.
    let s = san_francisco_summaries();
    let expected = [
        473.0,
        326.0,
        30.0,
        20.0 / 3.0,
        282.0 / 473.0,
        20.0 / 473.0,
        24.0,
        17.0,
    ];
    for i in 0..8 {
        assert!(
            (s[i] - expected[i]).abs() < 1e-12,
            "summary {i}: {} vs {}",
            s[i],
            expected[i]
        );
    }
    assert_eq!(distance(&s, &s).unwrap(), 0.0);
}

#[test]
fn summaries_on_small_hand_built_clusters() {
    // Clusters (by creation order): 0, 3, 90 (oversized), 1, 3, 2, 1. The largest is 90 (id 2);
    // the size histogram (≤ 80) has 3, 3, 2, 1 on top → gap (3 − 1)/3. Events of id 2 in
    // months 5, 5, 9 → period 5, 2 months.
    let sizes = [0u32, 3, 90, 1, 3, 2, 1];
    let ev = [
        (2u32, 5.2 / 12.0),
        (2, 5.9 / 12.0),
        (1, 0.1),
        (2, 9.5 / 12.0),
    ];
    let mut o = [0.0; 8];
    summaries(&sizes, &ev, 2, 80, &mut o).unwrap();
    let n = 100.0;
    assert_eq!(o, [n, 6.0, 90.0, 2.0 / 3.0, 2.0 / n, 1.0 / n, 5.0, 2.0]);
    // ties for the largest go to the earliest cluster; fewer than 4 clusters pad with zeros
    let mut o2 = [0.0; 8];
    summaries(&[2, 2], &[(1, 0.5), (0, 1.5)], 2, 80, &mut o2).unwrap();
    assert_eq!(o2, [4.0, 2.0, 2.0, 2.0 / 3.0, 0.0, 0.5, 1.0, 1.0]);
    // nothing observed
    let mut o3 = [1.0; 8];
    summaries(&[0, 0], &[], 2, 80, &mut o3).unwrap();
    assert_eq!(o3, [0.0; 8]);
    assert!(matches!(
        summaries(&[1], &[], 0, 80, &mut o3),
        Err(SimError::InvalidSize { .. })
    ));
    // distance weights: only the largest-cluster entry differs by 1 → distance 2
    let mut sim = san_francisco_summaries();
    sim[2] += 1.0;
    assert!((distance(&sim, &san_francisco_summaries()).unwrap() - 2.0).abs() < 1e-12);
    assert!(distance(&sim, &[0.0; 8]).is_err());
}

#[test]
fn expected_observations_match_equilibrium() {
    // The mean population (n_c, n_nc) of this linear birth–death–immigration process solves a
    // linear ODE whose fixed point is the analytic balance; after the warm-up (≥ 15 years, the
    // slowest relaxation rate at θ_true is 0.93/yr) the expected number of observed deaths in
    // the 2-year window is 2 · m_obs. Check over 150 runs: t-test |mean − 2 m_obs| < 5 se
    // (two-sided false-alarm ≈ 6e-7, normal approximation).
    let sim = Tuberculosis::reference();
    let s = TbSettings::default();
    let r = s.rates(&TRUE_THETA);
    let (n_c, n_nc, m_obs) = s.analytic_means(&r);
    // independent check of the balance: zero drift of the mean ODE
    let pc = s.p_compliance;
    let dc = r.burden * pc + (r.a0 * pc - r.d0) * n_c + r.a1 * pc * n_nc;
    let dn = r.burden * (1.0 - pc) + r.a0 * (1.0 - pc) * n_c + (r.a1 * (1.0 - pc) - r.d1) * n_nc;
    assert!(dc.abs() < 1e-9 && dn.abs() < 1e-9, "drift {dc} {dn}");
    let runs = 150;
    let mut obs = Vec::new();
    let mut out = [0.0; 8];
    for job in 0..runs {
        sim.simulate(&TRUE_THETA, &mut SimStream::new(2019, job), &mut out)
            .unwrap();
        obs.push(out[0]);
        assert!(out[1] <= out[0] && out[2] <= out[0]);
    }
    let (mean, var) = mean_var(&obs);
    let se = (var / runs as f64).sqrt();
    assert!(
        (mean - 2.0 * m_obs).abs() < 5.0 * se,
        "mean {mean} vs {} (se {se})",
        2.0 * m_obs
    );
}

#[test]
fn prior_truncation_and_burden_variance() {
    // β ~ N(200, 30) with variance 30 is not affected by the truncation (which loops over
    // (R₁, t₁, R₂) for a fixed β): z-test of the mean (two-sided α = 1e-6) and variance within
    // 10% (≈ 7 standard errors at N = 5000). Every draw satisfies the truncation.
    let p = TbPrior::reference();
    let s = TbSettings::default();
    let mut r = SimStream::new(1, 1);
    let mut th = [0.0; 4];
    let mut b = Vec::new();
    for _ in 0..5000 {
        p.sample(&mut r, &mut th).unwrap();
        assert!(p.in_support(&th));
        assert!(p.ln_density(&th).is_finite());
        let rates = s.rates(&th);
        let (_, _, m) = s.analytic_means(&rates);
        assert!(m > 0.0 && m < 350.0 && rates.a1 < 40.0);
        assert!(th[2] <= (1.0 - 0.05 * th[0]) / 0.95);
        b.push(th[3]);
    }
    let (m, v) = mean_var(&b);
    assert!(((m - 200.0) / (30.0f64 / 5000.0).sqrt()).abs() < Z2_1E6);
    assert!((v - 30.0).abs() < 3.0, "variance {v}");
    assert_eq!(p.ln_density(&[0.5, 1.0, 0.1, 200.0]), f64::NEG_INFINITY);
    assert!(p.in_support(&TRUE_THETA));
    // outside the model's support is recoverable
    let e = Tuberculosis::reference()
        .simulate(&[0.9, 1.0, 0.1, 200.0], &mut r, &mut [0.0; 8])
        .unwrap_err();
    assert!(e.is_recoverable());
    assert!(
        TbPrior::reference()
            .with_bounds(200.0, 30.0, 25.0, 30.0, 350.0, 40.0)
            .is_err()
    );
}

#[test]
fn mean_clipped_distance_by_hand() {
    // Rows: (SF, SF) → 0; (SF + 1 in "largest", SF) → 2; (SF + 1000 observations, SF) → 1000,
    // clipped to 200; (SF, SF with o₄ = 0) → undefined → counts as 200. Mean = 402/4.
    let sf = san_francisco_summaries();
    let mut a = sf;
    a[2] += 1.0;
    let mut b = sf;
    b[0] += 1000.0;
    let mut z = sf;
    z[4] = 0.0;
    let sim: Vec<f64> = [sf, a, b, sf].concat();
    let obs: Vec<f64> = [sf, sf, sf, z].concat();
    let m = mean_clipped_distance(&sim, &obs, 200.0).unwrap();
    assert!((m - 402.0 / 4.0).abs() < 1e-12, "{m}");
    // one row: the clipped weighted distance itself
    assert_eq!(mean_clipped_distance(&a, &sf, 200.0).unwrap(), 2.0);
    assert_eq!(mean_clipped_distance(&a, &sf, 1.5).unwrap(), 1.5);
    // errors: lengths, empty, ragged, clip
    assert!(matches!(
        mean_clipped_distance(&sim[..8], &obs, 200.0),
        Err(SimError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        mean_clipped_distance(&[], &[], 200.0),
        Err(SimError::InvalidSize { .. })
    ));
    assert!(matches!(
        mean_clipped_distance(&sim[..7], &obs[..7], 200.0),
        Err(SimError::InvalidSize { .. })
    ));
    for c in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(mean_clipped_distance(&sim, &obs, c).is_err());
        assert!(mean_clipped_distance_sensitivity(10, c).is_err());
    }
    assert_eq!(mean_clipped_distance_sensitivity(100, 200.0).unwrap(), 2.0);
    assert_eq!(mean_clipped_distance_sensitivity(1000, 200.0).unwrap(), 0.2);
    assert!(mean_clipped_distance_sensitivity(0, 200.0).is_err());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    #[test]
    fn mean_clipped_distance_is_in_range_for_any_f64(
        sim in proptest::collection::vec(proptest::num::f64::ANY, 16),
        obs in proptest::collection::vec(proptest::num::f64::ANY, 16),
        clip in proptest::num::f64::ANY,
    ) {
        match mean_clipped_distance(&sim, &obs, clip) {
            Ok(m) => proptest::prop_assert!(clip > 0.0 && m.is_finite() && (0.0..=clip).contains(&m)),
            Err(_) => proptest::prop_assert!(!(clip.is_finite() && clip > 0.0)),
        }
    }
}
