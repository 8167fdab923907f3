//! Property tests: every constructor on arbitrary f64 bit patterns returns `Ok` with finite
//! costs or a typed error (never panics); costs are monotone in sensitivity and noise; the
//! grid bridge is exact.

use crate::common;

use common::rng;
use dpinfer_mechanisms::grid::Grid;
use dpinfer_mechanisms::{
    BinomialCurve, ClampedStat, Gaussian, GaussianRejection, Laplace, RegressionStats,
    SparseVector, SparseVectorSettings, rejection_h, rejection_h_inverse,
};
use proptest::prelude::*;

/// Every f64: raw bit patterns (NaN payloads, subnormals, ±0, ±∞) mixed with specials.
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        prop::num::f64::ANY,
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NAN),
        Just(f64::MIN_POSITIVE / 4.0),
        (1e-3f64..1e3),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn laplace_constructors_never_panic(s in any_f64(), d in any_f64(), lo in any_f64(), hi in any_f64(), e in any_f64(), x in any_f64()) {
        if let Ok(m) = Laplace::new(s, d, lo, hi) {
            prop_assert!(m.epsilon().is_finite() && m.epsilon() > 0.0);
            let y = m.release(x, &mut rng(1));
            prop_assert!(y.is_ok_and(f64::is_finite) || y.is_err());
        }
        if let Ok(m) = Laplace::from_epsilon(e, d, lo, hi) {
            prop_assert!(m.epsilon() <= e);
        }
        let _ = Laplace::vector(3, s, d, lo, hi);
    }

    #[test]
    fn gaussian_constructors_never_panic(s in any_f64(), d in any_f64(), lo in any_f64(), hi in any_f64(), e in any_f64(), dl in any_f64(), x in any_f64()) {
        if let Ok(m) = Gaussian::new(s, d, lo, hi) {
            prop_assert!(m.rho().is_finite() && m.rho() > 0.0);
            prop_assert!(m.effective_sigma() >= s);
            let y = m.release(x, &mut rng(2));
            prop_assert!(y.is_ok_and(f64::is_finite) || y.is_err());
        }
        if let Ok(m) = Gaussian::from_zcdp(e, d, lo, hi) {
            prop_assert!(m.rho() <= e);
        }
        let _ = Gaussian::from_epsilon_delta(e, dl, d, lo, hi);
        let _ = Gaussian::vector(2, s, d, lo, hi);
    }

    #[test]
    fn svt_and_stats_constructors_never_panic(t in any_f64(), d in any_f64(), lo in any_f64(), hi in any_f64(), b in any_f64(), c in 0u64..5, resample: bool, q in any_f64()) {
        let settings = SparseVectorSettings { threshold: t, sensitivity: d, lo, hi, c, resample };
        if let Ok(mut svt) = SparseVector::new(settings, b) {
            prop_assert!(svt.epsilon() > 0.0);
            let _ = svt.query(q, &mut rng(3));
        }
        if let Ok(svt) = SparseVector::from_epsilon(settings, b) {
            prop_assert!(svt.epsilon() <= b);
        }
        let xb = [(lo, hi)];
        if let Ok(m) = RegressionStats::new(&xb, (lo, hi), c + 1, b) {
            prop_assert!(m.epsilon() <= b && m.epsilon() > 0.0);
            let n = (c + 1) as usize;
            let x = vec![q; n];
            let mut out = [0.0; 3];
            m.release_into(&x, &x, &mut out, &mut rng(4)).unwrap();
            prop_assert!(out.iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn rejection_constructors_never_panic(s in any_f64(), d in any_f64(), b in any_f64(), t in any_f64(), e in any_f64(), q in any_f64()) {
        if let Ok(h) = rejection_h(s, d, b, t) {
            prop_assert!(h > 0.0 && !h.is_nan());
        }
        if let Ok(s) = rejection_h_inverse(e, d, b, t) {
            prop_assert!(s > 0.0 && s.is_finite());
        }
        if let Ok(m) = GaussianRejection::new(s, d, b, t) {
            prop_assert!(m.epsilon().is_finite() && m.epsilon() > 0.0);
            prop_assert!(m.decide(q, &mut rng(6)).is_ok());
        }
        if let Ok(m) = GaussianRejection::from_epsilon(e, d, b, t) {
            prop_assert!(m.epsilon() <= e);
        }
    }

    #[test]
    fn clamped_constructors_never_panic(lo in any_f64(), hi in any_f64(), e in any_f64(), n in any::<u64>(), add: bool, q in any_f64()) {
        let rel = if add { dpinfer_mechanisms::Neighbouring::AddRemove } else { dpinfer_mechanisms::Neighbouring::ReplaceOne };
        if let Ok(m) = ClampedStat::sum(lo, hi, n, rel, e) {
            prop_assert!(m.epsilon() <= e && m.epsilon() > 0.0);
            let y = m.release(&[q, q], &mut rng(7));
            prop_assert!(y.is_ok_and(f64::is_finite) || n < 2);
        }
        if let Ok(m) = ClampedStat::mean(lo, hi, 2, e) {
            prop_assert!(m.epsilon() <= e);
            prop_assert!(m.release(&[q, hi], &mut rng(8)).is_ok_and(f64::is_finite));
        }
    }

    #[test]
    fn binomial_constructor_never_panics(n in 0u64..50, m in any::<u64>(), k in any::<u64>(), i in any::<u64>()) {
        if let Ok(mech) = BinomialCurve::new(n, m, k) {
            prop_assert!(mech.epsilon_exact(3) <= mech.epsilon_paper(3));
            let s = mech.release_point(i, &mut rng(5)).unwrap();
            prop_assert!(s <= n);
        }
    }

    #[test]
    fn laplace_cost_monotone(s in 1e-3f64..1e3, d1 in 1e-3f64..1e3, d2 in 1e-3f64..1e3, f in 1.0f64..10.0) {
        let (lo_d, hi_d) = if d1 <= d2 { (d1, d2) } else { (d2, d1) };
        let a = Laplace::new(s, lo_d, -1e4, 1e4).unwrap();
        let b = Laplace::new(s, hi_d, -1e4, 1e4).unwrap();
        prop_assert!(a.epsilon() <= b.epsilon());
        let c = Laplace::new(s * f, lo_d, -1e4, 1e4).unwrap();
        prop_assert!(c.epsilon() <= a.epsilon());
    }

    #[test]
    fn gaussian_cost_monotone(s in 1e-3f64..1e3, d1 in 1e-3f64..1e3, d2 in 1e-3f64..1e3, f in 1.0f64..10.0) {
        let (lo_d, hi_d) = if d1 <= d2 { (d1, d2) } else { (d2, d1) };
        let a = Gaussian::new(s, lo_d, -1e4, 1e4).unwrap();
        let b = Gaussian::new(s, hi_d, -1e4, 1e4).unwrap();
        prop_assert!(a.rho() <= b.rho());
        let c = Gaussian::new(s * f, lo_d, -1e4, 1e4).unwrap();
        prop_assert!(c.rho() <= a.rho() * (1.0 + 1e-12));
    }

    #[test]
    fn grid_round_is_nearest_and_exact(k in -1074i32..=970, x in any_f64()) {
        let g = Grid::new(k).unwrap();
        if let Ok(v) = g.round(x) {
            prop_assert!(x.is_finite());
            if v.unsigned_abs() <= 1 << 53 {
                let back = g.to_f64(v);
                // |back − x| ≤ g/2 (computed exactly: both are multiples of 2^-1074 here)
                let err = (back - x).abs();
                prop_assert!(err <= g.spacing() / 2.0 || !err.is_finite(), "x={x} k={k} v={v}");
                // round-trip of a grid point is the identity
                prop_assert_eq!(g.round(back).unwrap(), v);
            }
        } else {
            prop_assert!(!x.is_finite() || (x / g.spacing()).abs() > 2f64.powi(61));
        }
    }
}
