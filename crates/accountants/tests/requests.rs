//! The calibration requests for front ends (`calibrate::{SigmaRequest, MaxStepsRequest}`):
//! every f64 special value in every field gives a typed error or a finite, positive answer
//! that meets the budget — never a panic or a NaN (STYLE E17).
#![allow(clippy::unwrap_used, clippy::float_cmp)]

use dpinfer_accountants::calibrate::{self, MaxStepsRequest, Method, SigmaRequest};
use dpinfer_accountants::{
    Accountant, AccountantKind, ConversionRule, Event, EventBuf, Neighbouring, PldAccountant, Query,
};
use proptest::prelude::*;

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(5e-324),
        Just(1.0),
        Just(f64::MAX),
        any::<f64>(),
        (0.0f64..10.0),
        (0.0f64..1.0),
    ]
}

fn method() -> impl Strategy<Value = Option<Method>> {
    prop_oneof![
        Just(None),
        Just(Some(Method::Zcdp)),
        Just(Some(Method::Pld)),
        Just(Some(Method::Rdp)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn sigma_requests_never_panic(
        epsilon in any_f64(), delta in any_f64(), steps in 0u64..2000, sensitivity in any_f64(),
        poisson in prop::option::of(any_f64()), method in method(), classic in any::<bool>(),
    ) {
        let rule = if classic { ConversionRule::Classic } else { ConversionRule::Tightest };
        let r = SigmaRequest { epsilon, delta, steps, sensitivity, poisson, method, rule };
        if let Ok(s) = r.calibrate() {
            prop_assert!(s.sigma.is_finite() && s.sigma > 0.0, "{r:?}: {s:?}");
            prop_assert_eq!(s.method, r.method());
        }
    }

    #[test]
    fn max_steps_requests_never_panic(
        a in any_f64(), b in any_f64(), x in any_f64(), y in any_f64(), n in 0u64..1_000_000,
        k in 0u64..3000, which in 0usize..3, method in method(),
    ) {
        let m = method.unwrap_or(Method::Pld);
        let r = match which {
            0 => MaxStepsRequest::Penalty { tau: x, a: y, method: m },
            1 => MaxStepsRequest::Hmc { tau_l: x, tau_g: y, leapfrog: k, method: m },
            _ => MaxStepsRequest::Barker { batch: k, max_order: n % 300 },
        };
        // Any answer is a count; the errors are typed (nothing to check beyond not panicking).
        let _ = r.max_steps(a, b, n, ConversionRule::Tightest);
    }

    /// A calibrated σ meets its budget by the accountant's own recomputation (the exact
    /// Gaussian PLD without sampling, RDP with it).
    #[test]
    fn calibrated_sigma_meets_the_budget(
        e in 0.1f64..8.0, d in -9.0f64..-3.0, steps in 1u64..5000, sens in 0.1f64..10.0,
        q in prop::option::of(0.001f64..0.2),
    ) {
        let delta = 10f64.powf(d);
        let r = SigmaRequest { poisson: q, sensitivity: sens, ..SigmaRequest::new(e, delta, steps) };
        let s = r.calibrate().unwrap();
        let g = Event::Gaussian { sigma: s.sigma, sensitivity: sens };
        let (event, kind) = match q {
            None => (EventBuf::from(&g), AccountantKind::Pld),
            Some(q) => (EventBuf::from(&Event::PoissonSampled { q, event: &g }), AccountantKind::Rdp),
        };
        let claimed = Query::EpsilonAt(delta)
            .best(&[kind], Neighbouring::AddRemove, ConversionRule::Tightest, &[(event, steps)])
            .unwrap();
        prop_assert!(claimed.report.epsilon <= e, "{r:?}: σ {} gives ε {}", s.sigma, claimed.report.epsilon);
    }
}

#[test]
fn requests_are_the_calibration_functions() {
    // No sampling: exactly calibrate::gaussian_sigma, and its ε at the exact PLD is tight.
    let s = SigmaRequest::new(1.0, 1e-5, 1000).calibrate().unwrap();
    assert_eq!(
        s.sigma,
        calibrate::gaussian_sigma(1.0, 1e-5, 1000, 1.0, Method::Pld).unwrap()
    );
    let mut acc = PldAccountant::new(Neighbouring::AddRemove);
    acc.compose_n(
        &Event::Gaussian {
            sigma: s.sigma,
            sensitivity: 1.0,
        },
        1000,
    )
    .unwrap();
    let e = acc.epsilon(1e-5).unwrap().epsilon;
    assert!(e <= 1.0 && e > 0.999_999, "{e}");
    // DP-HMC with the defaults is the zCDP/PLD function with L = 10.
    let h = MaxStepsRequest::hmc(0.1, 0.2)
        .max_steps(1.0, 1e-5, 1000, ConversionRule::Tightest)
        .unwrap();
    assert_eq!(
        h.steps,
        calibrate::dp_hmc_max_steps_pld(1.0, 1e-5, 0.1, 0.2, 1000, 10).unwrap()
    );
    assert_eq!(h.rdp_order, None);
}
