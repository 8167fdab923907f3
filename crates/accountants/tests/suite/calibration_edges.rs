//! Edge cases of the calibrations and of the error texts (defects found in review).

use core::time::Duration;
use std::time::Instant;

use dpinfer_accountants::AccountantError;
use dpinfer_accountants::calibrate::{Method, SigmaRequest};
use dpinfer_accountants::pld_numeric::{Discretisation, poisson_gaussian_sigma};

/// With `δ ≥ 1 − (1 − q)^steps` every σ meets the budget, so the numerical-PLD calibration
/// has no smallest σ: it used to search towards σ → 0 over ever wider loss grids for seconds
/// and end in a grid error; now it answers at once with a typed error saying no noise is
/// needed.
#[test]
fn pld_sigma_with_delta_at_least_the_sampling_chance_is_a_quick_typed_error() {
    for &(eps, delta, q, steps) in &[
        (1e-300, 0.5, 1e-12, 1_u64),
        (1.0, 0.5, 0.1, 1),
        (0.1, 1e-5, 1e-12, 1),
        (1.0, 0.19, 0.1, 2), // 1 − 0.9² = 0.19
        (0.0, 0.5, 0.1, 1),
    ] {
        let t = Instant::now();
        let r = poisson_gaussian_sigma(eps, delta, steps, q, Discretisation::default());
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{eps} {delta} {q} {steps}: {:?}",
            t.elapsed()
        );
        match r {
            Err(AccountantError::Infeasible { what }) => {
                assert!(what.contains("no noise is needed"), "{what}");
            }
            other => panic!("{eps} {delta} {q} {steps}: {other:?}"),
        }
        let request = SigmaRequest {
            poisson: Some(q),
            method: Some(Method::Pld),
            ..SigmaRequest::new(eps, delta, steps)
        };
        assert!(matches!(
            request.calibrate(),
            Err(AccountantError::Infeasible { .. })
        ));
    }
}

/// Error texts print a parameter in shortest round-trip form (`{:?}`), never as a
/// 300-digit decimal.
#[test]
fn error_texts_print_tiny_and_huge_values_shortly() {
    let cases = [
        (
            AccountantError::InvalidParameter {
                name: "sigma",
                value: 1e-300,
            },
            "invalid parameter sigma = 1e-300",
        ),
        (
            AccountantError::InvalidParameter {
                name: "epsilon",
                value: -1.5e300,
            },
            "invalid parameter epsilon = -1.5e300",
        ),
        (
            AccountantError::DeltaTooSmall {
                requested: 1e-300,
                spent: 2e-200,
            },
            "requested delta 1e-300 is not larger than the delta already spent 2e-200",
        ),
        (
            AccountantError::BudgetExceeded {
                epsilon: 1e300,
                budget: 0.5,
            },
            "budget exceeded: epsilon would be 1e300 > budget 0.5; nothing recorded",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
    }
    // Through a constructor, too.
    let e = dpinfer_accountants::Zcdp::new(-1e-300).unwrap_err();
    assert_eq!(e.to_string(), "invalid parameter rho = -1e-300");
}

/// The RDP calibration without sampling returned `Ok(σ = inf)` for a huge sensitivity
/// (proptest `sigma_requests_never_panic`, ε = 9.06, δ = 2.2e-308, Δ = f64::MAX): now the
/// same `NumericalFailure` ("sigma overflow") as the zCDP and PLD calibrations, and a σ that
/// underflows is the smallest positive f64, never 0.
#[test]
fn rdp_gaussian_sigma_never_returns_an_infinite_or_zero_sigma() {
    use dpinfer_accountants::calibrate::gaussian_sigma;
    for method in [Method::Rdp, Method::Zcdp, Method::Pld] {
        let r = gaussian_sigma(
            9.05988699264542,
            2.2250738585072014e-308,
            1,
            f64::MAX,
            method,
        );
        assert!(
            matches!(
                r,
                Err(AccountantError::NumericalFailure {
                    what: "sigma overflow"
                })
            ),
            "{method:?}: {r:?}"
        );
        let tiny = gaussian_sigma(1e300, 0.5, 1, 5e-324, method).unwrap();
        assert!(tiny > 0.0 && tiny.is_finite(), "{method:?}: {tiny}");
    }
}
