//! Random allocation ([`Event::RandomAllocation`], one of t steps, add/remove) through the
//! RDP accountant: the remove direction against a 40-digit partition enumeration (Feldman &
//! Shenfeld 2025, Cor. 6.2) and both directions against a seeded Monte Carlo estimate
//! (`tests/data/gen_random_allocation.py` → `tests/data/random_allocation.txt`).

use crate::relations::AR;
use dpinfer_accountants::{
    Accountant, AccountantError, Event, EventBuf, EventSpec, Neighbouring, PldAccountant,
    RdpAccountant, curves,
};

const DATA: &str = include_str!("../data/random_allocation.txt");
use crate::refdata::num;
use crate::unsupported;

fn rows(kind: &str) -> impl Iterator<Item = Vec<&'static str>> + '_ {
    crate::refdata::rows(DATA, kind)
}

/// The add-direction bound `a²(t + α − 1)/(2t)`.
fn add_bound(t: f64, sigma: f64, alpha: f64) -> f64 {
    (t + alpha - 1.0) / (2.0 * t * sigma * sigma)
}

/// The RDP is the larger of the exact remove value (never below the 40-digit enumeration,
/// within 10⁻⁹ relative + 10⁻¹² of it, 24 points: t = 1 to 1000, α = 2 to 16) and the add
/// bound; t = 1 is the Gaussian mechanism.
#[test]
fn remove_direction_matches_the_enumeration() {
    let mut n = 0;
    for f in rows("exact") {
        let (t, sigma, alpha, exact) = (num(f[1]), num(f[2]), num(f[3]), num(f[4]));
        let ours = curves::random_allocation_rdp(sigma, 1.0, t as u64, alpha).unwrap();
        let expected = exact.max(add_bound(t, sigma, alpha));
        assert!(ours >= expected, "{f:?}: ours {ours} < {expected}");
        assert!(
            ours <= expected * (1.0 + 1e-9) + 1e-12,
            "{f:?}: ours {ours} vs {expected}"
        );
        if t == 1.0 {
            let g = curves::gaussian_rdp(sigma, 1.0, alpha).unwrap();
            assert!((ours / g - 1.0).abs() <= 1e-12, "{ours} vs {g}");
        }
        n += 1;
    }
    assert_eq!(n, 24);
}

/// Against the seeded Monte Carlo estimates (4·10⁶ draws): the remove value within 5
/// standard errors of the estimate, and the RDP (both directions' bound) never below either
/// direction's estimate minus 5 standard errors (8 estimates).
#[test]
fn never_below_the_monte_carlo_estimates() {
    let mut n = 0;
    for f in rows("mc") {
        let (t, sigma, alpha, dir, est, se) =
            (num(f[1]), num(f[2]), num(f[3]), f[4], num(f[5]), num(f[6]));
        let ours = curves::random_allocation_rdp(sigma, 1.0, t as u64, alpha).unwrap();
        assert!(ours >= est - 5.0 * se, "{f:?}: ours {ours}");
        if dir == "remove" {
            let exact = rows("exact")
                .find(|e| e[1] == f[1] && e[2] == f[2] && e[3] == f[3])
                .map(|e| num(e[4]));
            if let Some(x) = exact {
                assert!((x - est).abs() <= 5.0 * se, "{f:?}: exact {x}");
            }
        }
        n += 1;
    }
    assert_eq!(n, 8);
}

/// Through the accountant: an epoch of 1-of-1000 allocation costs less than its 1000 full
/// Gaussian steps (and, hidden among them, less than one unhidden step at δ = 10⁻⁶); more
/// epochs cost more; fractional orders take
/// the next integer's remove value; k > 1, the PLD, replace-one and bad parameters are
/// typed refusals; the grammar `alloc:` round-trips.
#[test]
fn accountant_refusals_and_grammar() {
    let eps = |e: &Event<'_>, n: u64| {
        let mut acc = RdpAccountant::new(AR);
        acc.compose_n(e, n).unwrap();
        acc.epsilon(1e-6).unwrap().epsilon
    };
    let alloc = Event::RandomAllocation {
        sigma: 1.0,
        sensitivity: 1.0,
        steps: 1000,
        selected: 1,
    };
    let g = Event::Gaussian {
        sigma: 1.0,
        sensitivity: 1.0,
    };
    let (one, all, single) = (eps(&alloc, 1), eps(&g, 1000), eps(&g, 1));
    assert!(
        one > 0.0 && one < single && single < all,
        "{one} {all} {single}"
    );
    assert!(eps(&alloc, 5) > one);
    let r25 = curves::random_allocation_rdp(2.0, 1.0, 50, 2.5).unwrap();
    let r3 = curves::random_allocation_rdp(2.0, 1.0, 50, 3.0).unwrap();
    assert!(r25 <= r3 && r25 >= curves::random_allocation_rdp(2.0, 1.0, 50, 2.0).unwrap());
    let k2 = Event::RandomAllocation {
        sigma: 1.0,
        sensitivity: 1.0,
        steps: 10,
        selected: 2,
    };
    unsupported(&RdpAccountant::new(AR).compose(&k2));
    unsupported(&PldAccountant::new(AR).compose(&alloc));
    assert!(matches!(
        RdpAccountant::new(Neighbouring::ReplaceOne).compose(&alloc),
        Err(AccountantError::IncompatibleRelation { .. })
    ));
    for (bad, name) in [
        (
            Event::RandomAllocation {
                sigma: 0.0,
                sensitivity: 1.0,
                steps: 10,
                selected: 1,
            },
            "sigma",
        ),
        (
            Event::RandomAllocation {
                sigma: 1.0,
                sensitivity: f64::NAN,
                steps: 10,
                selected: 1,
            },
            "sensitivity",
        ),
    ] {
        match RdpAccountant::new(AR).compose(&bad) {
            Err(AccountantError::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{other:?}"),
        }
    }
    for (steps, selected, name) in [(0, 1, "steps"), (10, 0, "selected"), (10, 11, "selected")] {
        let bad = Event::RandomAllocation {
            sigma: 1.0,
            sensitivity: 1.0,
            steps,
            selected,
        };
        match RdpAccountant::new(AR).compose(&bad) {
            Err(AccountantError::InvalidCount { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{other:?}"),
        }
    }
    let spec: EventSpec = "alloc:sigma=1,steps=1000,count=5".parse().unwrap();
    assert_eq!(spec.to_string(), "alloc:sigma=1,steps=1000,count=5");
    assert_eq!(spec.to_string().parse::<EventSpec>().unwrap(), spec);
    let (buf, count) = spec.to_pair();
    assert_eq!(buf, EventBuf::from(&alloc));
    assert_eq!(
        buf.with_event(|e| eps(e, count)).to_bits(),
        eps(&alloc, 5).to_bits()
    );
    let k: EventSpec = "alloc:sigma=1,steps=10,k=2,sens=2".parse().unwrap();
    assert_eq!(k.to_string(), "alloc:sigma=1,steps=10,k=2,sens=2");
}
