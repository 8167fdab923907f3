//! DP-Barker's event ([`Event::DpBarker`], thesis Theorem 8) against the calibration
//! function `calibrate::dp_barker_rdp` and an independent 50-digit evaluation of the
//! theorem (`data/dp_barker_rdp.py` → `data/dp_barker_rdp.csv`).

use crate::relations::RO;
use dpinfer_accountants::{
    Accountant, AccountantError, AccountantKind, ApproxAccountant, Claim, ConversionRule, Event,
    EventBuf, Neighbouring, PldAccountant, PureAccountant, RdpAccountant, RdpAccountantVec,
    ZcdpAccountant, calibrate, curves,
};

const REFERENCE: &str = include_str!("../data/dp_barker_rdp.csv");

fn reference() -> Vec<(u64, u64, u64, f64)> {
    REFERENCE
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

/// At every integer order the event's RDP is `calibrate::dp_barker_rdp` bit for bit, and
/// both agree with the 50-digit reference to 1e-12 relative while never being below it by
/// more than 1e-14 relative (both round up; measured worst relative gap printed).
#[test]
fn event_rdp_matches_theorem_8() {
    let rows = reference();
    assert!(rows.len() >= 25);
    let mut worst = 0.0_f64;
    for (b, n, a, want) in rows {
        let cal = calibrate::dp_barker_rdp(b, n, a).unwrap();
        let ev = curves::dp_barker_step_rdp(b, n, a as f64).unwrap();
        assert_eq!(ev.to_bits(), cal.to_bits(), "B {b} n {n} α {a}");
        let rel = (ev - want) / want;
        worst = worst.max(rel.abs());
        assert!(rel.abs() <= 1e-12, "B {b} n {n} α {a}: {ev} vs {want}");
        assert!(
            rel >= -1e-14,
            "B {b} n {n} α {a}: under-reports {ev} < {want}"
        );
        // Through the accountant on a one-order grid.
        let mut acc = RdpAccountantVec::new(RO, vec![a as f64]).unwrap();
        acc.compose_n(
            &Event::DpBarker {
                batch: b,
                population: n,
            },
            1,
        )
        .unwrap();
        // The accountant rounds the product and the sum up once more (round_up, twice).
        let v = acc.curve().values()[0];
        assert!(v >= cal && v <= cal * (1.0 + 1e-13), "{v} vs {cal}");
    }
    eprintln!("worst relative gap to the 50-digit reference: {worst:e}");
}

/// Fractional orders take the next integer's bound (order 2 below 2); orders with
/// `5⌈α⌉ ≥ |B|` have no bound (+∞).
#[test]
fn fractional_and_inadmissible_orders() {
    let (b, n) = (100, 1000);
    let at = |a: f64| curves::dp_barker_step_rdp(b, n, a).unwrap();
    assert_eq!(at(1.25), calibrate::dp_barker_rdp(b, n, 2).unwrap());
    assert_eq!(at(2.5), calibrate::dp_barker_rdp(b, n, 3).unwrap());
    assert_eq!(at(19.0), calibrate::dp_barker_rdp(b, n, 19).unwrap());
    assert_eq!(at(19.5), f64::INFINITY);
    assert_eq!(at(20.0), f64::INFINITY);
    assert_eq!(at(1e300), f64::INFINITY);
    // The smallest admissible batch has order 2 only.
    assert!(curves::dp_barker_step_rdp(11, 11, 2.0).unwrap().is_finite());
    assert_eq!(
        curves::dp_barker_step_rdp(11, 11, 2.5).unwrap(),
        f64::INFINITY
    );
    // The default grid (fractional orders, orders beyond |B|/5) composes and converts.
    let mut acc = RdpAccountant::new(RO);
    acc.compose_n(
        &Event::DpBarker {
            batch: b,
            population: n,
        },
        10,
    )
    .unwrap();
    let r = acc.epsilon(1e-6).unwrap();
    assert!(r.epsilon.is_finite() && r.epsilon > 0.0);
}

/// Bad parameters are typed errors (never a panic or a NaN), the relation is replace-one
/// only, and the notions without a DP-Barker bound say so.
#[test]
fn validation_and_unsupported() {
    let bad = [(10, 100), (0, 100), (101, 100), (11, 0), (u64::MAX, 5)];
    for (batch, population) in bad {
        let e = Event::DpBarker { batch, population };
        assert!(
            matches!(e.validate(RO), Err(AccountantError::InvalidCount { .. })),
            "{e}"
        );
        assert!(matches!(
            curves::dp_barker_step_rdp(batch, population, 2.0),
            Err(AccountantError::InvalidCount { .. })
        ));
        assert!(RdpAccountant::new(RO).compose(&e).is_err());
        // A bad parameter is reported as such, not as unsupported.
        assert!(matches!(
            PureAccountant::new(RO).compose(&e),
            Err(AccountantError::InvalidCount { .. })
        ));
    }
    for a in [f64::NAN, 1.0, 0.5, f64::INFINITY, -3.0] {
        assert!(matches!(
            curves::dp_barker_step_rdp(100, 1000, a),
            Err(AccountantError::InvalidParameter { .. })
        ));
    }
    let e = Event::DpBarker {
        batch: 100,
        population: 1000,
    };
    assert!(matches!(
        RdpAccountant::new(Neighbouring::AddRemove).compose(&e),
        Err(AccountantError::IncompatibleRelation {
            event: "DpBarker",
            ..
        })
    ));
    let unsupported = |r: Result<(), AccountantError>| {
        matches!(
            r,
            Err(AccountantError::Unsupported {
                event: "DpBarker",
                ..
            })
        )
    };
    assert!(unsupported(PureAccountant::new(RO).compose(&e)));
    assert!(unsupported(ApproxAccountant::new(RO).compose(&e)));
    assert!(unsupported(ZcdpAccountant::new(RO).compose(&e)));
    assert!(unsupported(PldAccountant::new(RO).compose(&e)));
    assert_eq!(e.name(), "DpBarker");
    assert_eq!(e.to_string(), "DpBarker(100 of 1000)");
}

/// The owned mirror round-trips, and a claim on the integer grid reproduces the calibration:
/// `dp_barker_max_steps` steps convert to at most ε, one more step to more than ε.
#[test]
fn claim_matches_calibration() {
    let e = Event::DpBarker {
        batch: 500,
        population: 10_000,
    };
    let buf = EventBuf::from(&e);
    assert!(buf.with_event(|x| *x == e));
    assert_eq!(buf.name(), "DpBarker");
    let json = serde_json::to_string(&buf).unwrap();
    assert_eq!(json, r#"{"dp_barker":{"batch":500,"population":10000}}"#);
    assert_eq!(serde_json::from_str::<EventBuf>(&json).unwrap(), buf);
    for rule in [ConversionRule::Tightest, ConversionRule::Classic] {
        let (eps, delta) = (1.0, 1e-5);
        let (k, _) =
            calibrate::dp_barker_max_steps_with(eps, delta, 500, 10_000, 256, rule).unwrap();
        assert!(k > 0);
        let claim = |k| {
            Claim::account(
                RO,
                AccountantKind::RdpIntegers,
                rule,
                vec![(buf.clone(), k)],
                delta,
            )
            .unwrap()
        };
        let c = claim(k);
        assert!(c.epsilon() <= eps, "{c}");
        assert!(claim(k + 1).epsilon() > eps);
        assert_eq!(c.recompute().unwrap(), c);
        assert!(c.to_string().contains("DpBarker(500 of 10000)"), "{c}");
    }
}
