//! The mixture-of-Gaussians mechanism ([`Event::MixtureOfGaussians`], add/remove) through
//! the numerical PLD, against 40-digit mpmath (δ(ε) of one release by quadrature, both
//! orders) and `dp_accounting` 0.6.0's PLD accountant (compositions), from
//! `tests/data/gen_mixture_of_gaussians.py` → `tests/data/mixture_of_gaussians.txt`; and
//! against the special cases it contains (the Poisson-subsampled Gaussian, the Gaussian).

use crate::relations::{AR, RO};
use dpinfer_accountants::{
    Accountant, AccountantError, ApproxAccountant, Event, EventBuf, PldAccountant, PureAccountant,
    RdpAccountant, ZcdpAccountant,
};

const DATA: &str = include_str!("../data/mixture_of_gaussians.txt");
use crate::refdata::{num, one_release_rows};
use crate::unsupported;

fn rows(kind: &str) -> impl Iterator<Item = Vec<&'static str>> + '_ {
    crate::refdata::rows(DATA, kind)
}

fn list(s: &str) -> Vec<f64> {
    s.split('|').map(num).collect()
}

fn pld(sigma: f64, c: &[f64], p: &[f64], count: u64) -> PldAccountant {
    let mut acc = PldAccountant::new(AR);
    acc.compose_n(
        &Event::MixtureOfGaussians {
            sigma,
            sensitivities: c,
            probs: p,
        },
        count,
    )
    .unwrap();
    acc
}

/// One release: δ(ε) never below the exact value (both orders, the larger), at most
/// 10⁻⁴ relative + 10⁻¹⁰ above it (h = 10⁻⁴), on 4 mixtures × 5 ε (with and without an atom
/// at 0, 2 to 4 points).
#[test]
fn one_release_matches_mpmath() {
    // One composition per mixture (σ, c, p), queried at each ε.
    let n = one_release_rows(DATA, 3, |f| {
        let (sigma, c, p) = (num(f[0]), list(f[1]), list(f[2]));
        pld(sigma, &c, &p, 1).composed(false).unwrap()
    });
    assert_eq!(n, 20);
    let r = pld(1.0, &[0.0, 1.0], &[0.5, 0.5], 1).delta(1.0).unwrap();
    assert_eq!(r.conversion, dpinfer_accountants::Conversion::NumericalPld);
}

/// Compositions (1 to 1000 releases; the data rows `rows`, split over three tests for
/// time): ε(δ) within 0.5 % of `dp_accounting`'s pessimistic PLD (same interval 10⁻⁴), δ(ε)
/// within 0.5 % + 10⁻¹² of it.
fn compositions_match_dp_accounting(which: &[usize]) {
    for (i, f) in rows("pld").enumerate().filter(|(i, _)| which.contains(i)) {
        let (sigma, c, p, count) = (num(f[1]), list(f[2]), list(f[3]), num(f[4]) as u64);
        let (delta, eps_peer, eps_at, delta_peer) = (num(f[5]), num(f[6]), num(f[7]), num(f[8]));
        let acc = pld(sigma, &c, &p, count).composed(false).unwrap();
        let e = acc.epsilon(delta).unwrap().epsilon;
        assert!(
            (e / eps_peer - 1.0).abs() <= 5e-3,
            "{i} {f:?}: ε {e} vs {eps_peer}"
        );
        let d = acc.delta(eps_at).unwrap().delta;
        assert!(
            (d - delta_peer).abs() <= 5e-3 * delta_peer + 1e-12,
            "{i} {f:?}: δ {d} vs {delta_peer}"
        );
    }
    assert_eq!(rows("pld").count(), 5);
}

#[test]
fn compositions_match_dp_accounting_1_and_100() {
    compositions_match_dp_accounting(&[0, 1]);
}

#[test]
fn compositions_match_dp_accounting_10_and_50() {
    compositions_match_dp_accounting(&[2, 4]);
}

#[test]
fn compositions_match_dp_accounting_1000() {
    compositions_match_dp_accounting(&[3]);
}

/// `c = (0, 1), p = (1 − q, q)` is the Poisson-subsampled Gaussian and `c = (Δ), p = (1)` the
/// Gaussian: the mixture's PLD (its own discretisation) agrees with the subsampled one's
/// numerical PLD (ε at δ = 10⁻³, 10⁻⁵) to 10⁻³ relative.
#[test]
fn special_case_subsampled_gaussian() {
    for &(sigma, q, count) in &[(1.0, 0.1, 10_u64), (0.8, 0.01, 300), (2.0, 0.5, 3)] {
        let mix = pld(sigma, &[0.0, 1.0], &[1.0 - q, q], count);
        let mut sub = PldAccountant::new(AR);
        let g = Event::Gaussian {
            sigma,
            sensitivity: 1.0,
        };
        sub.compose_n(&Event::PoissonSampled { q, event: &g }, count)
            .unwrap();
        for delta in [1e-3, 1e-5] {
            let (a, b) = (
                mix.epsilon(delta).unwrap().epsilon,
                sub.epsilon(delta).unwrap().epsilon,
            );
            assert!((a / b - 1.0).abs() <= 1e-3, "σ={sigma} q={q}: {a} vs {b}");
        }
    }
}

/// `c = (Δ), p = (1)` is the Gaussian: never below its exact PLD, within 10⁻³ relative;
/// points with probability 0 and repeated points change nothing.
#[test]
fn special_case_gaussian_and_merged_points() {
    let mix = pld(2.0, &[1.5], &[1.0], 4);
    let mut exact = PldAccountant::new(AR);
    exact
        .compose_n(
            &Event::Gaussian {
                sigma: 2.0,
                sensitivity: 1.5,
            },
            4,
        )
        .unwrap();
    for eps in [0.0, 0.5, 1.0, 2.0] {
        let (a, b) = (
            mix.delta(eps).unwrap().delta,
            exact.delta(eps).unwrap().delta,
        );
        assert!(a >= b && a <= b * (1.0 + 1e-3), "ε={eps}: {a} vs exact {b}");
    }
    // Points with probability 0 and repeated points change nothing.
    let a = pld(3.0, &[0.0, 1.0, 2.0], &[0.81, 0.18, 0.01], 5);
    let b = pld(
        3.0,
        &[2.0, 0.0, 1.0, 1.0, 7.0],
        &[0.01, 0.81, 0.09, 0.09, 0.0],
        5,
    );
    assert_eq!(a.epsilon(1e-5).unwrap(), b.epsilon(1e-5).unwrap());
}

/// Typed errors for every bad parameter, the relation, and the accountants that have no
/// bound for it; nothing recorded on error; never NaN.
#[test]
fn validation_relation_and_unsupported_accountants() {
    let ok = Event::MixtureOfGaussians {
        sigma: 1.0,
        sensitivities: &[0.0, 1.0],
        probs: &[0.5, 0.5],
    };
    ok.validate(AR).unwrap();
    let seventeen = [1.0 / 17.0; 17];
    let c17: Vec<f64> = (0..17).map(f64::from).collect();
    let bad: [(f64, &[f64], &[f64], &str); 13] = [
        (0.0, &[1.0], &[1.0], "sigma"),
        (-1.0, &[1.0], &[1.0], "sigma"),
        (f64::NAN, &[1.0], &[1.0], "sigma"),
        (f64::INFINITY, &[1.0], &[1.0], "sigma"),
        (0.001, &[1.0], &[1.0], "sigma"), // c/σ = 1000: beyond any useful grid
        (1.0, &[-1.0, 1.0], &[0.5, 0.5], "sensitivities"),
        (1.0, &[f64::NAN], &[1.0], "sensitivities"),
        (1.0, &[0.0, 0.0], &[0.5, 0.5], "sensitivities"),
        (1.0, &[0.0, 5.0], &[1.0, 0.0], "sensitivities"),
        (1.0, &[1.0, 2.0], &[0.5, 0.6], "probs"),
        (1.0, &[1.0, 2.0], &[1.0], "probs"),
        (1.0, &[], &[], "probs"),
        (1.0, &c17, &seventeen, "probs"),
    ];
    for (sigma, c, p, name) in bad {
        let e = Event::MixtureOfGaussians {
            sigma,
            sensitivities: c,
            probs: p,
        };
        match e.validate(AR) {
            Err(AccountantError::InvalidParameter { name: got, .. }) => {
                assert_eq!(got, name, "{e}");
            }
            other => panic!("{e}: {other:?}"),
        }
        let mut acc = PldAccountant::new(AR);
        assert!(acc.compose(&e).is_err());
        assert!(acc.components().is_empty());
    }
    assert!(matches!(
        ok.validate(RO),
        Err(AccountantError::IncompatibleRelation { .. })
    ));
    assert!(PldAccountant::new(RO).compose(&ok).is_err());
    // No RDP / zCDP / pure / approx bound is claimed for it (typed refusal).
    unsupported(&RdpAccountant::new(AR).compose(&ok));
    for r in [
        ZcdpAccountant::new(AR).compose(&ok),
        PureAccountant::new(AR).compose(&ok),
        ApproxAccountant::new(AR).compose(&ok),
    ] {
        unsupported(&r);
    }
    // Subsampling or sampling a mixture is not accounted (dp_accounting has neither).
    let sub = Event::PoissonSampled { q: 0.5, event: &ok };
    unsupported(&PldAccountant::new(AR).compose(&sub));
    // A round trip through the owned mirror keeps the event.
    let buf = EventBuf::from(&ok);
    buf.with_event(|e| assert_eq!(*e, ok));
}

/// The event grammar: `mog:sigma=σ,c=c1|c2|…,p=p1|p2|…` parses to the event (the same ε as
/// the constructor), prints back canonically, and names the offending key.
#[test]
fn grammar_round_trip_and_errors() {
    use dpinfer_accountants::{EventSpec, ParseEventError};
    let text = "mog:sigma=3,c=0|1|2,p=0.81|0.18|0.01,count=5";
    let spec: EventSpec = text.parse().unwrap();
    assert_eq!(spec.to_string(), text);
    assert_eq!(spec.to_string().parse::<EventSpec>().unwrap(), spec);
    spec.validate(AR).unwrap();
    assert!(spec.validate(RO).is_err());
    let mut from_text = PldAccountant::new(AR);
    spec.event()
        .with_event(|e| from_text.compose_n(e, spec.count()))
        .unwrap();
    let direct = pld(3.0, &[0.0, 1.0, 2.0], &[0.81, 0.18, 0.01], 5);
    assert_eq!(
        from_text.epsilon(1e-5).unwrap(),
        direct.epsilon(1e-5).unwrap()
    );
    for (bad, key) in [
        ("mog:sigma=1,c=0|x,p=0.5|0.5", "c"),
        ("mog:sigma=1,c=0|1,p=0.5|inf", "p"),
        ("mog:sigma=1,p=1", "c"),
        ("mog:c=1,p=1", "sigma"),
    ] {
        let e = bad.parse::<EventSpec>().unwrap_err();
        let named = match &e {
            ParseEventError::NotANumber { key, .. }
            | ParseEventError::NotFinite { key, .. }
            | ParseEventError::Missing { key, .. } => *key,
            other => panic!("{bad}: {other:?}"),
        };
        assert_eq!(named, key, "{bad}: {e}");
    }
}
