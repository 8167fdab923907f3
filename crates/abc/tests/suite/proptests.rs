//! "No panic on any input": every public entry point returns `Ok` with finite values or a
//! typed `Err` for arbitrary f64 (NaN, ±0, ±∞, subnormals) and arbitrary counts.
#![cfg(feature = "alloc")]

use dpinfer_abc::analysis::{
    Resample, error_probability_bound, expected_error_bound, flip_probability, g_b,
    noise_difference_cdf, noise_difference_pdf, noise_scale, total_epsilon,
};
use dpinfer_abc::gaussian::{grid_epsilon, theorem31_epsilon, theorem31_sigma};
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::rejection::{RejectionSettings, Rule};
use dpinfer_abc::smc::{SmcSettings, Tolerance};
use dpinfer_abc::soft::{SoftAbcdp, SoftAbcdpSettings};
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer_abc::weights::{effective_sample_size, normalize_log_weights, systematic_resample};
use dpinfer_distances::{Relations, Sensitivity};
use proptest::prelude::*;

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        proptest::num::f64::ANY,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(f64::MIN_POSITIVE / 2.0),
        (1e-6..10.0_f64),
    ]
}

fn ok_finite(r: Result<f64, dpinfer_abc::AbcError>) -> bool {
    r.map_or(true, f64::is_finite)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn analysis_never_panics(a in any_f64(), b in any_f64(), c in any_f64(), k in 0u64..1000) {
        for r in [Resample::Never, Resample::AfterAccept] {
            let b1 = noise_scale(a, k, b, r);
            prop_assert!(ok_finite(b1));
            if let Ok(s) = b1 { prop_assert!(s > 0.0); }
            prop_assert!(ok_finite(total_epsilon(a, k, b, r)));
        }
        prop_assert!(ok_finite(noise_difference_pdf(a, b)));
        let cdf = noise_difference_cdf(a, b);
        prop_assert!(cdf.map_or(true, |x| (0.0..=1.0).contains(&x)));
        prop_assert!(g_b(a, b).map_or(true, |x| (0.0..=0.5).contains(&x)));
        prop_assert!(flip_probability(a, b, c).map_or(true, |x| (0.0..=0.5).contains(&x)));
        let rhos = [a, 0.3, 1.0];
        prop_assert!(ok_finite(expected_error_bound(&rhos, b, c, 1.0, k)));
        prop_assert!(ok_finite(error_probability_bound(&rhos, b, c, 1.0, k, a)));
    }

    #[test]
    fn gaussian_theory_never_panics(a in any_f64(), b in any_f64(), c in any_f64(), d in any_f64()) {
        prop_assert!(theorem31_epsilon(a, b, c, d).map_or(true, |x| x >= 0.0 && !x.is_nan()));
        prop_assert!(ok_finite(theorem31_sigma(a, b, c, d)));
        prop_assert!(grid_epsilon(a, b, c, d, a / 1024.0).map_or(true, |x| x >= 0.0 && !x.is_nan()));
    }

    #[test]
    fn weights_never_panic(v in proptest::collection::vec(any_f64(), 0..8), u in any_f64()) {
        let mut out = vec![0.0; v.len()];
        if normalize_log_weights(&v, &mut out).is_ok() {
            prop_assert!(out.iter().all(|x| x.is_finite() && *x >= 0.0));
            prop_assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }
        prop_assert!(ok_finite(effective_sample_size(&v)));
        let mut idx = vec![0usize; 5];
        if systematic_resample(&v, u, &mut idx).is_ok() {
            prop_assert!(idx.iter().all(|&i| i < v.len()));
        }
    }

    #[test]
    fn settings_validation_never_panics(
        a in any_f64(), b in any_f64(), c in any_f64(), n in 0usize..5, k in 0u64..5,
    ) {
        let _ = RejectionSettings { rule: Rule::Threshold(a), budget: k, target: k }.validate();
        let _ = RejectionSettings { rule: Rule::Nearest(n), budget: k, target: 1 }.validate();
        for tol in [
            Tolerance::List(vec![a, b]),
            Tolerance::Geometric { initial: a, factor: b },
            Tolerance::Quantile { initial: a, alpha: b },
        ] {
            let s = SmcSettings {
                particles: n,
                tolerance: tol,
                final_tolerance: c,
                max_generations: n,
                simulation_budget: k,
                min_acceptance_rate: a,
                ess_fraction: b,
                kernel_scale: c,
            };
            let _ = s.validate();
        }
        let pairs = PublicPairs::from_parts(1, 1, vec![0.0, 1.0], vec![0.2, 0.4]).unwrap();
        let dist = |y: &[f64]| y[0];
        // A sensitivity is finite and positive by construction, or refused.
        prop_assert_eq!(
            Sensitivity::declared(c, Relations::REPLACE_ONE).is_ok(),
            c.is_finite() && c > 0.0
        );
        if let Ok(sensitivity) = Sensitivity::declared(c, Relations::REPLACE_ONE) {
            let svt = SvtAbcSettings {
                epsilon_abc: a, epsilon_total: b, c: k, sensitivity, clip: b,
                resample: Resample::Never,
            };
            if let Ok(p) = SvtAbc::new(&pairs, dist, svt) {
                prop_assert!(p.epsilon() <= b);
            }
        }
        if let Ok(sensitivity) = Sensitivity::declared(a, Relations::REPLACE_ONE) {
            let soft = SoftAbcdpSettings {
                epsilon_abc: a, epsilon_total: b, delta_total: c, sensitivity, bound: b, floor: c,
            };
            if let Ok(s) = SoftAbcdp::new(&pairs, dist, soft) {
                prop_assert!(s.epsilon().unwrap() <= b);
            }
        }
        let _ = PublicPairs::from_parts(n, n, vec![a; n * 2], vec![b; n]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pairs_accessors_never_panic(t in any::<usize>()) {
        let pairs = PublicPairs::from_parts(2, 1, vec![0.0, 1.0, 2.0, 3.0], vec![0.2, 0.4]).unwrap();
        let th = pairs.theta(t);
        prop_assert!(th.is_empty() || th.len() == 2);
        let y = pairs.output(t);
        prop_assert!(y.is_empty() || y.len() == 1);
    }
}
