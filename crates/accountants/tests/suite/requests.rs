//! The calibration requests for front ends (`calibrate::{SigmaRequest, MaxStepsRequest}`):
//! a calibrated σ meets its budget when the accountant recomputes it, and the requests are
//! the calibration functions (their special-value properties are in `properties.rs`).

use dpinfer_accountants::calibrate::{self, MaxStepsRequest, Method, SigmaRequest};
use dpinfer_accountants::{
    Accountant, AccountantError, AccountantKind, ConversionRule, Event, EventBuf, Neighbouring,
    PldAccountant, Query,
};
use proptest::prelude::*;

/// A sampler's releases after `k` iterations.
type EventsOf = dyn Fn(u64) -> Vec<(EventBuf, u64)>;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A calibrated σ meets its budget by the accountant's own recomputation (the exact
    /// Gaussian PLD without sampling, RDP with it).
    #[test]
    /// (ε from 0.01 to 50 and δ up to 0.1: at δ ≈ 0.01 and ε ≈ 0.03 the PLD σ's own
    /// verification once skipped two of the accountant's rounding margins and the
    /// re-accounted ε came out 1.8e-14 relative above the budget.)
    fn calibrated_sigma_meets_the_budget(
        le in -2.0f64..1.7, d in -12.0f64..-1.0, steps in 1u64..5000, sens in 0.1f64..10.0,
        q in prop::option::of(0.001f64..0.2),
    ) {
        let (e, delta) = (10f64.powf(le), 10f64.powf(d));
        let r = SigmaRequest { poisson: q, sensitivity: sens, ..SigmaRequest::new(e, delta, steps) };
        let s = match (r.calibrate(), q) {
            (Ok(s), _) => s,
            // RDP on the default orders cannot certify a small ε at a small δ whatever σ (its
            // conversion term alone exceeds ε): a refusal, checked to be one at σ = 10⁹·Δ.
            (Err(AccountantError::Infeasible { .. }), Some(q)) => {
                let g = Event::Gaussian { sigma: 1e9 * sens, sensitivity: sens };
                let ev = EventBuf::from(&Event::PoissonSampled { q, event: &g });
                let floor = Query::EpsilonAt(delta)
                    .best(&[AccountantKind::Rdp], Neighbouring::AddRemove, ConversionRule::Tightest, &[(ev, steps)])
                    .unwrap();
                prop_assert!(floor.report.epsilon > e, "{r:?} refused, yet σ = 1e9·Δ gives ε {}", floor.report.epsilon);
                return Ok(());
            }
            (other, _) => return Err(TestCaseError::fail(format!("{r:?}: {other:?}"))),
        };
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

    /// An iteration budget meets its target by the accountant that composes the samplers'
    /// claims (exact PLD, zCDP with the classic conversion, RDP on the integer orders for DP
    /// Barker), also at the edge: the target is that accountant's ε after `k₀` iterations,
    /// less 0–3 ulps (an `account epsilon` answer fed back as a budget). The calibration
    /// formulas' own roundings allowed `k₀` there, a few ulps over the target, in about half
    /// of such cases (found by a round-trip sweep, 2026-11-30). And no needless loss: `k₀` or
    /// one less.
    #[test]
    fn max_steps_meet_the_budget_by_the_accountant(
        which in 0usize..3, pld in any::<bool>(), k0 in 1u64..20_000, n in 200u64..1_000_000,
        lt in -1.3f64..0.7, lg in -1.3f64..0.7, leapfrog in 1u64..8, batch in 60u64..400,
        ld in -10.0f64..-2.0, ulps in 0u32..4, classic in any::<bool>(),
    ) {
        let method = if pld { Method::Pld } else { Method::Zcdp };
        let rule = if classic { ConversionRule::Classic } else { ConversionRule::Tightest };
        let (tau_l, tau_g, delta) = (10f64.powf(lt), 10f64.powf(lg), 10f64.powf(ld));
        let sqrt_n = libm::sqrt(n as f64);
        let gaussian = |sigma: f64| EventBuf::Gaussian { sigma, sensitivity: 1.0 };
        let (r, kind, conversion, events): (_, _, _, Box<EventsOf>) = match which {
            0 => (
                MaxStepsRequest::Penalty { tau: tau_l, a: 0.5, method },
                method,
                ConversionRule::Classic,
                Box::new(move |k| vec![(gaussian(tau_l * libm::pow(n as f64, 0.5)), k)]),
            ),
            1 => (
                MaxStepsRequest::Hmc { tau_l, tau_g, leapfrog, method },
                method,
                ConversionRule::Classic,
                Box::new(move |k| vec![
                    (gaussian(tau_l * sqrt_n), k),
                    (gaussian(tau_g * sqrt_n), k * leapfrog + 1),
                ]),
            ),
            _ => (
                MaxStepsRequest::Barker { batch, max_order: 256 },
                Method::Rdp,
                rule,
                Box::new(move |k| vec![(EventBuf::DpBarker { batch, population: n }, k)]),
            ),
        };
        let kind = match kind {
            Method::Pld => AccountantKind::Pld,
            Method::Zcdp => AccountantKind::Zcdp,
            Method::Rdp => AccountantKind::RdpIntegers,
        };
        let epsilon_of = |k| {
            Query::EpsilonAt(delta)
                .best(&[kind], Neighbouring::ReplaceOne, conversion, &events(k))
                .map(|b| b.report.epsilon)
        };
        let Ok(e0) = epsilon_of(k0) else { return Ok(()) };
        let target = e0 * (1.0 - f64::from(ulps) * f64::EPSILON);
        prop_assume!(target > 0.0);
        let k = match r.max_steps(target, delta, n, rule) {
            Ok(m) => m.steps,
            Err(e) => return Err(TestCaseError::fail(format!("{r:?} ε {target} δ {delta}: {e:?}"))),
        };
        prop_assert!(k + 1 >= k0, "{r:?}: {k} steps for a budget of k₀ = {k0}");
        if k > 0 {
            let spent = epsilon_of(k).unwrap();
            prop_assert!(spent <= target, "{r:?} ε {target} δ {delta}: {k} steps spend ε {spent}");
        }
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

/// An invalid τ is τ's error, not the exponent's: the overflow screen of `n^a` blamed `a` for a
/// NaN, zero or negative τ (its product with `n^a` is not finite), which the MCMC budget now
/// inherits by calling the request.
#[test]
fn penalty_request_names_tau_for_an_invalid_tau() {
    use dpinfer_accountants::AccountantError;
    for tau in [f64::NAN, -1.0, 0.0, f64::INFINITY] {
        let e = MaxStepsRequest::penalty(tau)
            .max_steps(1.0, 1e-6, 1000, ConversionRule::Tightest)
            .unwrap_err();
        assert!(
            matches!(e, AccountantError::InvalidParameter { name: "tau", .. }),
            "τ = {tau}: {e:?}"
        );
    }
    // An exponent whose n^a overflows a valid τ's noise is still the exponent's fault.
    let e = MaxStepsRequest::Penalty {
        tau: 0.5,
        a: 400.0,
        method: Method::Pld,
    }
    .max_steps(1.0, 1e-6, 1000, ConversionRule::Tightest)
    .unwrap_err();
    assert!(
        matches!(e, AccountantError::InvalidParameter { name: "a", .. }),
        "{e:?}"
    );
}

/// A small ε at a small δ, which RDP on the default orders cannot certify whatever σ (the
/// conversion alone costs more), is refused by the RDP calibration with that reason — and
/// calibrated by the numerical PLD, whose search no longer starts from the RDP σ (it used
/// to fail with "no noise multiplier up to 1e8" although σ ≈ 276·Δ meets the budget).
#[test]
fn a_budget_below_the_rdp_floor_is_calibrated_by_the_pld() {
    let (e, delta, steps, q) = (0.074_757_816, 1.83e-12, 19, 0.787);
    let rdp = SigmaRequest {
        poisson: Some(q),
        method: Some(Method::Rdp),
        ..SigmaRequest::new(e, delta, steps)
    };
    match rdp.calibrate() {
        Err(AccountantError::Infeasible { what }) => {
            assert!(
                what.contains("conversion") && what.contains("PLD"),
                "{what}"
            );
        }
        other => panic!("{other:?}"),
    }
    let pld = SigmaRequest {
        method: Some(Method::Pld),
        ..rdp
    };
    let s = pld.calibrate().unwrap();
    assert!(s.sigma > 200.0 && s.sigma < 400.0, "{}", s.sigma);
    let g = Event::Gaussian {
        sigma: s.sigma,
        sensitivity: 1.0,
    };
    let ev = EventBuf::from(&Event::PoissonSampled { q, event: &g });
    let claimed = Query::EpsilonAt(delta)
        .best(
            &[AccountantKind::Pld],
            Neighbouring::AddRemove,
            ConversionRule::Tightest,
            &[(ev, steps)],
        )
        .unwrap();
    assert!(claimed.report.epsilon <= e, "{}", claimed.report.epsilon);
}
