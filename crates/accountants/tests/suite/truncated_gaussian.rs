//! The truncated Poisson-subsampled Gaussian ([`Event::TruncatedSubsampledGaussian`],
//! add/remove) through the numerical PLD, against 40-digit mpmath (δ(ε) of one release of the
//! analysed mixture pair, with the binomial weights from the incomplete beta function) and
//! `dp_accounting` 0.6.0's PLD accountant (compositions), from
//! `tests/data/gen_truncated_gaussian.py` → `tests/data/truncated_gaussian.txt`.

use crate::relations::{AR, RO};
use dpinfer_accountants::{
    Accountant, AccountantError, Event, EventBuf, EventSpec, PldAccountant, PureAccountant,
    RdpAccountant, ZcdpAccountant,
};

const DATA: &str = include_str!("../data/truncated_gaussian.txt");
use crate::refdata::{int, num, one_release_rows};

fn rows(kind: &str) -> impl Iterator<Item = Vec<&'static str>> + '_ {
    crate::refdata::rows(DATA, kind)
}

fn event(population: u64, q: f64, batch: u64, sigma: f64) -> Event<'static> {
    Event::TruncatedSubsampledGaussian {
        sigma,
        sensitivity: 1.0,
        q,
        batch,
        population,
    }
}

fn pld(e: &Event<'_>, count: u64) -> PldAccountant {
    let mut acc = PldAccountant::new(AR);
    acc.compose_n(e, count).unwrap();
    acc
}

/// One release: δ(ε) never below the analysed pair's exact value (both orders, the larger),
/// at most 10⁻⁴ relative + 10⁻¹⁰ above it (h = 10⁻⁴), on 4 settings (truncation probability
/// 0.02 to 0.51) × 5 ε.
#[test]
fn one_release_matches_mpmath() {
    let n = one_release_rows(DATA, 4, |f| {
        let (pop, q, b, sigma) = (int(f[0]), num(f[1]), int(f[2]), num(f[3]));
        pld(&event(pop, q, b, sigma), 1).composed(false).unwrap()
    });
    assert_eq!(n, 20);
}

/// Compositions (10 to 1000 releases): ε(δ) at most 0.5 % above `dp_accounting`'s
/// pessimistic PLD on the same pair and not more than 0.5 % below it (there is no certified
/// peer bound for this event: both discretise the same pair pessimistically at h = 10⁻⁴);
/// δ(ε) likewise within 0.5 % + 10⁻¹².
#[test]
fn compositions_match_dp_accounting() {
    let mut n = 0;
    for f in rows("pld") {
        let (pop, q, b, sigma) = (int(f[1]), num(f[2]), int(f[3]), num(f[4]));
        let (count, delta, eps_dpa, eps_at, delta_dpa) =
            (int(f[5]), num(f[6]), num(f[7]), num(f[8]), num(f[9]));
        let composed = pld(&event(pop, q, b, sigma), count)
            .composed(false)
            .unwrap();
        let e = composed.epsilon(delta).unwrap().epsilon;
        assert!(e <= eps_dpa * 1.005, "{f:?}: ours {e} vs {eps_dpa}");
        assert!(e >= eps_dpa * 0.995, "{f:?}: ours {e} vs {eps_dpa}");
        let d = composed.delta(eps_at).unwrap().delta;
        assert!(
            d <= delta_dpa * 1.005 + 1e-12,
            "{f:?}: ours {d} vs {delta_dpa}"
        );
        assert!(d >= delta_dpa * 0.995, "{f:?}: ours {d} vs {delta_dpa}");
        n += 1;
    }
    assert_eq!(n, 4);
}

/// A cap the batch can never reach (`B ≥ n`) is the Poisson-subsampled Gaussian, bit for bit;
/// a reachable cap costs more.
#[test]
fn unreachable_cap_is_poisson() {
    let g = Event::Gaussian {
        sigma: 1.0,
        sensitivity: 1.0,
    };
    let poisson = Event::PoissonSampled { q: 0.05, event: &g };
    let plain = pld(&poisson, 20).epsilon(1e-5).unwrap().epsilon;
    let never = pld(&event(100, 0.05, 100, 1.0), 20)
        .epsilon(1e-5)
        .unwrap()
        .epsilon;
    assert_eq!(never.to_bits(), plain.to_bits());
    let cut = pld(&event(100, 0.05, 6, 1.0), 20)
        .epsilon(1e-5)
        .unwrap()
        .epsilon;
    assert!(cut > plain, "{cut} vs {plain}");
}

/// No RDP, zCDP or pure bound (typed refusals); replace-one refused; bad parameters name
/// themselves; the certified lower bound is not offered.
#[test]
fn refusals_and_errors() {
    let e = event(1000, 0.01, 20, 1.0);
    for err in [
        RdpAccountant::new(AR).compose(&e).unwrap_err(),
        ZcdpAccountant::new(AR).compose(&e).unwrap_err(),
        PureAccountant::new(AR).compose(&e).unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                AccountantError::Unsupported {
                    event: "TruncatedSubsampledGaussian",
                    ..
                }
            ),
            "{err:?}"
        );
    }
    assert!(matches!(
        PldAccountant::new(RO).compose(&e),
        Err(AccountantError::IncompatibleRelation { .. })
    ));
    for (bad, name) in [
        (event(1000, 0.0, 20, 1.0), "q"),
        (event(1000, 1.5, 20, 1.0), "q"),
        (event(1000, 0.01, 20, 0.0), "sigma"),
        (event(1000, 0.01, 20, f64::NAN), "sigma"),
    ] {
        match PldAccountant::new(AR).compose(&bad) {
            Err(AccountantError::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    for (bad, name) in [
        (event(0, 0.01, 20, 1.0), "population"),
        (event(1000, 0.01, 0, 1.0), "batch"),
        (event(u64::MAX, 0.01, 20, 1.0), "population"),
    ] {
        match PldAccountant::new(AR).compose(&bad) {
            Err(AccountantError::InvalidCount { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let composed = pld(&e, 3).composed(true).unwrap();
    assert_eq!(composed.epsilon(1e-5).unwrap().lower, None);
}

/// The grammar: `truncated:sigma=,q=,batch=,n=[,sens=]`, canonical form round trip, the same
/// ε as the constructor.
#[test]
fn grammar() {
    let spec: EventSpec = "truncated:sigma=1.1,q=0.01,batch=120,n=10000,count=50"
        .parse()
        .unwrap();
    assert_eq!(spec.to_string().parse::<EventSpec>().unwrap(), spec);
    assert_eq!(
        spec.to_string(),
        "truncated:sigma=1.1,q=0.01,batch=120,n=10000,count=50"
    );
    let (buf, count) = spec.to_pair();
    assert_eq!(count, 50);
    assert_eq!(
        buf,
        EventBuf::TruncatedSubsampledGaussian {
            sigma: 1.1,
            sensitivity: 1.0,
            q: 0.01,
            batch: 120,
            population: 10000
        }
    );
    let via_spec = buf.with_event(|e| pld(e, count).epsilon(1e-5).unwrap().epsilon);
    let direct = pld(&event(10000, 0.01, 120, 1.1), 50)
        .epsilon(1e-5)
        .unwrap()
        .epsilon;
    assert_eq!(via_spec.to_bits(), direct.to_bits());
    let err = "truncated:sigma=1,q=0.1,n=10"
        .parse::<EventSpec>()
        .unwrap_err();
    assert_eq!(err.key(), Some("batch"));
    let err = "truncated:sigma=1,q=0.1,batch=2"
        .parse::<EventSpec>()
        .unwrap_err();
    assert_eq!(err.key(), Some("n"));
}
