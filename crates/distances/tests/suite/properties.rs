#![cfg(feature = "alloc")] // uses the crate's alloc API
//! Property tests over all f64 (NaN, ±0, ±∞, subnormals): public entry points return `Ok`
//! with finite values inside their stated range, or a typed `Err`; never panic, never NaN.
#![allow(
    clippy::unwrap_used,
    clippy::collapsible_if,
    clippy::single_match,
    clippy::cast_precision_loss
)]

use dpinfer_distances::{
    ClippedWeightedL2, Gaussian, Laplace, Matern32, MmdReference, RandomFourierFeatures,
    RffReference, Rows, WeightedL2, median_heuristic, mmd_unbiased, mmd2_biased, mmd2_linear,
    mmd2_unbiased, sensitivity,
};
use proptest::prelude::*;

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -5.0f64..5.0,
        1 => prop::num::f64::ANY,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(f64::MAX),
        1 => Just(-f64::MAX),
        1 => Just(5e-324),
        1 => Just(-0.0),
    ]
}

fn in_range(v: f64, lo: f64, hi: f64) -> bool {
    v.is_finite() && v >= lo && v <= hi
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mmd_estimators_total(
        x in prop::collection::vec(any_f64(), 0..24),
        y in prop::collection::vec(any_f64(), 0..24),
        d in 0usize..4,
        l in any_f64(),
    ) {
        let (Ok(xr), Ok(yr)) = (Rows::new(&x, d), Rows::new(&y, d)) else { return Ok(()); };
        if let Ok(g) = Gaussian::new(l) {
            if let Ok(v) = mmd2_biased(&g, xr, yr) { prop_assert!(in_range(v, 0.0, 4.0)); }
            if let Ok(v) = mmd2_unbiased(&g, xr, yr) { prop_assert!(in_range(v, -4.0, 4.0)); }
            if let Ok(v) = mmd_unbiased(&g, xr, yr) { prop_assert!(in_range(v, 0.0, 2.0)); }
            if let Ok(v) = mmd2_linear(&g, xr, yr) { prop_assert!(in_range(v, -4.0, 4.0)); }
            let r = MmdReference::new(g, xr).unwrap();
            let v = r.mmd(yr).unwrap();
            prop_assert!(in_range(v, 0.0, 2.0));
            prop_assert!(r.sensitivity().value().is_finite() && r.sensitivity().value() > 0.0);
            if let Ok(v) = r.mmd2_unbiased(yr) { prop_assert!(in_range(v, -4.0, 4.0)); }
            let mut buf = vec![0.0; 300];
            match median_heuristic(yr, 25, &mut buf) {
                Ok(m) => prop_assert!(m.is_finite() && m > 0.0),
                Err(_) => {}
            }
        } else {
            prop_assert!(!(l.is_finite() && l > 1e-150 && l < 1e150));
        }
        if let Ok(k) = Laplace::new(l) {
            if let Ok(v) = mmd2_biased(&k, xr, yr) { prop_assert!(in_range(v, 0.0, 4.0)); }
        }
        if let Ok(k) = Matern32::new(l) {
            if let Ok(v) = mmd2_biased(&k, xr, yr) { prop_assert!(in_range(v, 0.0, 4.0)); }
        }
    }

    #[test]
    fn rff_total(
        z in prop::collection::vec(any_f64(), 0..12),
        x in prop::collection::vec(any_f64(), 1..16),
        l in any_f64(),
    ) {
        if let Ok(f) = RandomFourierFeatures::new(&z, 1, l) {
            let xr = Rows::one_dim(&x).unwrap();
            let r = RffReference::new(f, xr).unwrap();
            prop_assert!(in_range(r.mmd(xr).unwrap(), 0.0, 2.0));
            prop_assert!(in_range(f.mmd2(xr, xr).unwrap(), 0.0, 4.0));
            let mut phi = vec![0.0; f.num_features()];
            f.feature_map(&x[..1], &mut phi).unwrap();
            let n2: f64 = phi.iter().map(|v| v * v).sum();
            prop_assert!((n2 - 1.0).abs() < 1e-14);
        }
    }

    #[test]
    fn weighted_l2_total(
        w in prop::collection::vec(any_f64(), 0..6),
        a in prop::collection::vec(any_f64(), 0..6),
        b in prop::collection::vec(any_f64(), 0..6),
        c in any_f64(),
    ) {
        if let Ok(l2) = WeightedL2::new(&w) {
            if let Ok(v) = l2.distance(&a, &b) { prop_assert!(!v.is_nan() && v >= 0.0); }
        }
        if let Ok(cl) = ClippedWeightedL2::new(&w, c) {
            if let Ok(v) = cl.distance(&a, &b) { prop_assert!(in_range(v, 0.0, c)); }
            if let (Ok(o), Ok(s)) = (Rows::new(&a, w.len()), Rows::new(&b, w.len())) {
                if let Ok(v) = cl.mean_distance(o, s) { prop_assert!(in_range(v, 0.0, c)); }
            }
        } else {
            let ok_w = !w.is_empty() && w.iter().all(|v| v.is_finite() && *v >= 0.0);
            prop_assert!(!(ok_w && c.is_finite() && c > 0.0));
        }
    }

    #[test]
    fn sensitivities_valid_or_err(b in any_f64(), n in 0usize..10_000, c in any_f64()) {
        for s in [
            sensitivity::mmd(b, n), sensitivity::mmd2(b, n), sensitivity::mmd2_unbiased(b, n),
            sensitivity::mmd_unbiased(b, n), sensitivity::mmd2_linear(b, n),
            sensitivity::rff_mmd(n), sensitivity::clipped_mean(c, n), sensitivity::clipped(c),
            sensitivity::clipped_sum(c),
        ].into_iter().flatten() {
            prop_assert!(s.value().is_finite() && s.value() > 0.0);
        }
        if let Ok(s) = sensitivity::mmd(b, n) {
            prop_assert!(s.value() >= 2.0 * b.sqrt() / n as f64);
        }
    }
}

#[test]
fn typed_errors() {
    use dpinfer_distances::DistanceError as E;
    let x = [1.0, 2.0];
    let g = Gaussian::new(1.0).unwrap();
    let a = Rows::new(&x, 1).unwrap();
    let b = Rows::new(&x, 2).unwrap();
    assert_eq!(
        mmd2_biased(&g, a, b),
        Err(E::DimensionMismatch {
            expected: 1,
            found: 2
        })
    );
    assert_eq!(Rows::new(&[], 1), Err(E::Empty));
    assert_eq!(Rows::new(&x, 0), Err(E::ZeroDimension));
    for l in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300, 1e300] {
        assert_eq!(Gaussian::new(l), Err(E::InvalidBandwidth));
    }
    assert_eq!(
        WeightedL2::new(&[1.0, -1.0]),
        Err(E::InvalidWeight { index: 1 })
    );
    assert_eq!(ClippedWeightedL2::new(&[1.0], 0.0), Err(E::InvalidClip));
    assert_eq!(
        ClippedWeightedL2::new(&[1.0], f64::NAN),
        Err(E::InvalidClip)
    );
    assert_eq!(sensitivity::mmd(1.0, 0), Err(E::InvalidSize));
    assert_eq!(sensitivity::mmd(-1.0, 5), Err(E::InvalidKernelBound));
    assert_eq!(
        mmd2_unbiased(&g, Rows::new(&x[..1], 1).unwrap(), a),
        Err(E::TooFewRows {
            needed: 2,
            found: 1
        })
    );
    assert_eq!(
        mmd2_linear(&g, a, Rows::new(&[1.0, 2.0, 3.0], 1).unwrap()),
        Err(E::RowCountMismatch { left: 2, right: 3 })
    );
    assert_eq!(
        RandomFourierFeatures::new(&[f64::NAN], 1, 1.0),
        Err(E::InvalidFrequencies)
    );
    let mut small = [0.0; 0];
    assert_eq!(
        median_heuristic(a, 10, &mut small),
        Err(E::BufferTooSmall {
            needed: 1,
            found: 0
        })
    );
    let mut buf = [0.0; 1];
    assert_eq!(
        median_heuristic(Rows::new(&[3.0, 3.0], 1).unwrap(), 10, &mut buf),
        Err(E::DegenerateBandwidth)
    );
    // Display carries no data values.
    assert_eq!(
        E::InvalidWeight { index: 1 }.to_string(),
        "weight 1 must be finite and non-negative"
    );
}
