//! Sampling with replacement ([`Event::SampledWithReplacement`], replace-one) through the
//! numerical PLD, against 40-digit mpmath (`tests/data/gen_with_replacement.py` →
//! `tests/data/with_replacement.txt`): the analysed bound (BBG 2018 advanced joint
//! convexity and group privacy) for one release, and an instance of the mechanism (a
//! certified lower bound on its δ). `dp_accounting` 0.6.0 has the event but accounts it in
//! neither accountant.

use crate::relations::{AR, RO};
use dpinfer_accountants::{
    Accountant, AccountantError, Event, EventBuf, EventSpec, ParseEventError, PldAccountant,
    RdpAccountant, Sampling,
};

const DATA: &str = include_str!("../data/with_replacement.txt");
use crate::refdata::{Composed, int, num};
use crate::unsupported;

fn rows(kind: &str) -> impl Iterator<Item = Vec<&'static str>> + '_ {
    crate::refdata::rows(DATA, kind)
}

const G1: Event<'static> = Event::Gaussian {
    sigma: 1.0,
    sensitivity: 1.0,
};

const G2: Event<'static> = Event::Gaussian {
    sigma: 2.0,
    sensitivity: 1.0,
};

fn pld(e: &Event<'_>, count: u64) -> PldAccountant {
    let mut acc = PldAccountant::new(RO);
    acc.compose_n(e, count).unwrap();
    acc
}

/// One release of the settings `settings` (indices into the data file's cases): δ(ε) never
/// below the analysed bound and within 10⁻⁴ relative + 10⁻¹⁰ of it (h = 10⁻⁴), 5 ε each;
/// never below the δ of an instance of the mechanism (2 ε each). Returns the rows checked.
fn check_one_release(settings: &[&str]) -> usize {
    let mut n = 0;
    let mut cache = Composed::default();
    for kind in ["bound", "instance"] {
        for f in rows(kind) {
            let key = f[1..4].join(",");
            if !settings.contains(&key.as_str()) {
                continue;
            }
            let (m, pop, sigma, eps, reference) =
                (int(f[1]), int(f[2]), num(f[3]), num(f[4]), num(f[5]));
            let composed = cache.get(&key, || {
                let g = Event::Gaussian {
                    sigma,
                    sensitivity: 1.0,
                };
                let e = Event::SampledWithReplacement {
                    batch: m,
                    population: pop,
                    event: &g,
                };
                pld(&e, 1).composed(false).unwrap()
            });
            let d = composed.delta(eps).unwrap().delta;
            assert!(d >= reference, "{f:?}: ours {d} < {reference}");
            if kind == "bound" {
                assert!(d <= reference * (1.0 + 1e-4) + 1e-10, "{f:?}: ours {d}");
            }
            n += 1;
        }
    }
    n
}

/// [`check_one_release`] on η = 0.01 and 0.095 (10 and 100 draws of 1000 rows).
#[test]
fn one_release_matches_mpmath_small_population() {
    assert_eq!(check_one_release(&["10,1000,1.0", "100,1000,2.0"]), 14);
}

/// [`check_one_release`] on η = 0.004 (256 draws of 60000 rows) and 0.41 (5 draws of 10).
#[test]
fn one_release_matches_mpmath_large_and_tiny_population() {
    assert_eq!(check_one_release(&["256,60000,1.0", "5,10,3.0"]), 14);
}

/// One draw is sampling one row without replacement: the same ε to 10⁻⁸ relative (the rates
/// are rounded up differently and the with-replacement PLD carries its weights' error bound
/// as mass at +∞ and a 4u per-step allowance); more draws cost more.
#[test]
fn one_draw_is_without_replacement_and_more_draws_cost_more() {
    let wr = |m: u64| {
        pld(
            &Event::SampledWithReplacement {
                batch: m,
                population: 200,
                event: &G2,
            },
            100,
        )
        .epsilon(1e-5)
        .unwrap()
        .epsilon
    };
    let wor = pld(
        &Event::SampledWithoutReplacement {
            batch: 1,
            population: 200,
            event: &G2,
        },
        100,
    )
    .epsilon(1e-5)
    .unwrap()
    .epsilon;
    let one = wr(1);
    assert!((one / wor - 1.0).abs() <= 1e-8, "{one} vs {wor}");
    assert!(one >= wor * (1.0 - 1e-12), "{one} vs {wor}");
    let (five, twenty) = (wr(5), wr(20));
    assert!(one < five && five < twenty, "{one} {five} {twenty}");
}

/// Laplace and pure-ε events are accounted too (group privacy kΔ/b, kε); other bases, the
/// add/remove relation and the other accountants are typed refusals; bad counts name
/// themselves.
#[test]
fn bases_refusals_and_errors() {
    for base in [
        Event::Laplace {
            scale: 2.0,
            sensitivity: 1.0,
        },
        Event::PureEpsilon { epsilon: 0.5 },
    ] {
        let e = Event::SampledWithReplacement {
            batch: 10,
            population: 1000,
            event: &base,
        };
        let eps = pld(&e, 50).epsilon(1e-6).unwrap().epsilon;
        assert!(eps.is_finite() && eps > 0.0, "{base:?}: {eps}");
    }
    let dg = Event::DiscreteGaussian {
        sigma: 3.0,
        sensitivity: 1,
    };
    let e = Event::SampledWithReplacement {
        batch: 10,
        population: 1000,
        event: &dg,
    };
    unsupported(&PldAccountant::new(RO).compose(&e));
    let e = Event::SampledWithReplacement {
        batch: 10,
        population: 1000,
        event: &G1,
    };
    assert!(matches!(
        PldAccountant::new(AR).compose(&e),
        Err(AccountantError::IncompatibleRelation {
            event: "SampledWithReplacement",
            ..
        })
    ));
    unsupported(&RdpAccountant::new(RO).compose(&e));
    for (m, n, name) in [(0, 10, "batch"), (5, 0, "population")] {
        let e = Event::SampledWithReplacement {
            batch: m,
            population: n,
            event: &G1,
        };
        match PldAccountant::new(RO).compose(&e) {
            Err(AccountantError::InvalidCount { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{other:?}"),
        }
    }
    // More draws than rows is allowed (with replacement).
    let wide = Event::Gaussian {
        sigma: 8.0,
        sensitivity: 1.0,
    };
    let e = Event::SampledWithReplacement {
        batch: 3,
        population: 2,
        event: &wide,
    };
    assert!(pld(&e, 1).epsilon(1e-5).unwrap().epsilon.is_finite());
}

/// The grammar: `wr=batch/population` on any kind, canonical round trip, one sampling at
/// most.
#[test]
fn grammar() {
    let spec: EventSpec = "gaussian:sigma=2,wr=64/10000,count=10".parse().unwrap();
    assert_eq!(
        spec.sampling(),
        Sampling::WithReplacement {
            batch: 64,
            population: 10000
        }
    );
    assert_eq!(spec.to_string(), "gaussian:sigma=2,wr=64/10000,count=10");
    assert_eq!(spec.to_string().parse::<EventSpec>().unwrap(), spec);
    let (buf, count) = spec.to_pair();
    assert!(matches!(
        buf,
        EventBuf::SampledWithReplacement { batch: 64, .. }
    ));
    assert_eq!(EventSpec::from_event(&buf, count).unwrap(), spec);
    assert!(spec.validate(RO).is_ok());
    assert!(spec.validate(AR).is_err());
    assert!(matches!(
        "gaussian:sigma=2,wr=64/10000,poisson=0.1".parse::<EventSpec>(),
        Err(ParseEventError::TwoSamplings { .. })
    ));
    let err = "gaussian:sigma=2,wr=64".parse::<EventSpec>().unwrap_err();
    assert_eq!(err.key(), Some("wr"));
    assert_eq!(
        err.to_string(),
        r#"event "gaussian:sigma=2,wr=64": wr=64 must be batch/population"#
    );
    let err = "gaussian:sigma=2,wr=x/10".parse::<EventSpec>().unwrap_err();
    assert_eq!(err.key(), Some("wr batch"));
}
