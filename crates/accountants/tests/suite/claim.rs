//! Privacy claims as values: `Claim::account` against composing the same events by hand in
//! each accountant (bit-identical), the owned event tree round trip, serde round trips, the
//! generated prose, and typed errors.

use crate::relations::{AR, RO};
use crate::unsupported;
use dpinfer_accountants::{
    Accountant, AccountantError, AccountantKind, ApproxAccountant, BinomialBound, Claim,
    Conversion, ConversionRule, Event, EventBuf, Neighbouring, PldAccountant, PureAccountant,
    Query, RdpAccountant, Report, ZcdpAccountant,
};
use proptest::prelude::*;

/// Composes `events` by hand in `acc` and reports ε at `delta`.
fn by_hand(acc: &mut dyn Accountant, events: &[(Event<'_>, u64)], delta: f64) -> Report {
    for (e, c) in events {
        acc.compose_n(e, *c).unwrap();
    }
    acc.epsilon(delta).unwrap()
}

fn owned(events: &[(Event<'_>, u64)]) -> Vec<(EventBuf, u64)> {
    events
        .iter()
        .map(|(e, c)| (EventBuf::from(e), *c))
        .collect()
}

fn check(
    relation: Neighbouring,
    kind: AccountantKind,
    rule: ConversionRule,
    events: &[(Event<'_>, u64)],
    delta: f64,
    acc: &mut dyn Accountant,
) {
    let expected = by_hand(acc, events, delta);
    let claim = Claim::account(relation, kind, rule, owned(events), delta).unwrap();
    // Bit-identical: same composition order, same accountant, same conversion.
    assert_eq!(claim.report.epsilon.to_bits(), expected.epsilon.to_bits());
    assert_eq!(claim.report.delta.to_bits(), expected.delta.to_bits());
    assert_eq!(claim.report.conversion, expected.conversion);
    assert_eq!(claim.epsilon(), expected.epsilon);
    assert_eq!(claim.delta(), delta);
    assert_eq!(claim.relation, relation);
    assert_eq!(claim.accountant, kind);
    assert_eq!(claim.rule, rule);
    assert_eq!(claim.events, owned(events));
    assert!(claim.epsilon() > 0.0);
    // `AccountantKind::boxed` is that same accountant for every question, δ at ε included.
    let mut boxed = kind.boxed(relation, rule).unwrap();
    for (e, c) in events {
        boxed.compose_n(e, *c).unwrap();
    }
    assert_eq!(boxed.relation(), relation);
    for eps in [
        0.5 * expected.epsilon,
        expected.epsilon,
        2.0 * expected.epsilon,
    ] {
        let want = acc.delta(eps).ok();
        assert_eq!(boxed.delta(eps).ok(), want, "{kind} δ at ε = {eps}");
    }
}

#[test]
fn claim_matches_hand_composition_in_every_accountant() {
    let g = Event::Gaussian {
        sigma: 3.0,
        sensitivity: 1.0,
    };
    let l = Event::Laplace {
        scale: 20.0,
        sensitivity: 2.0,
    };
    let svt = Event::SparseVector {
        c: 5,
        scale: 50.0,
        sensitivity: 1.0,
        resample: false,
    };
    let bin = Event::BinomialCurve {
        n: 10,
        m: 400.0,
        releases: 3,
        bound: BinomialBound::Exact,
    };
    let pure_parts = [l, Event::PureEpsilon { epsilon: 0.05 }];
    let pure_events = [
        (svt, 1),
        (l, 7),
        (Event::Composed(&pure_parts), 2),
        (bin, 1),
    ];
    check(
        RO,
        AccountantKind::Pure,
        ConversionRule::Tightest,
        &pure_events,
        0.0,
        &mut PureAccountant::new(RO),
    );
    let approx_events = [
        (
            Event::ApproxDp {
                epsilon: 0.1,
                delta: 1e-7,
            },
            30,
        ),
        (svt, 1),
    ];
    check(
        AR,
        AccountantKind::Approx,
        ConversionRule::Tightest,
        &approx_events,
        1e-5,
        &mut ApproxAccountant::new(AR),
    );
    // homogeneous: exercises the advanced / optimal composition branch
    let homogeneous = [(
        Event::ApproxDp {
            epsilon: 0.01,
            delta: 0.0,
        },
        500,
    )];
    check(
        AR,
        AccountantKind::Approx,
        ConversionRule::Tightest,
        &homogeneous,
        1e-6,
        &mut ApproxAccountant::new(AR),
    );
    let sampled = Event::PoissonSampled { q: 0.01, event: &g };
    let self_composed = Event::SelfComposed {
        event: &sampled,
        count: 100,
    };
    let rdp_events = [(sampled, 1000), (l, 3), (self_composed, 2), (svt, 1)];
    for rule in [ConversionRule::Tightest, ConversionRule::Classic] {
        check(
            AR,
            AccountantKind::Rdp,
            rule,
            &rdp_events,
            1e-5,
            &mut RdpAccountant::new(AR).with_conversion(rule),
        );
    }
    let wor = Event::SampledWithoutReplacement {
        batch: 64,
        population: 6400,
        event: &g,
    };
    check(
        RO,
        AccountantKind::Rdp,
        ConversionRule::Tightest,
        &[(wor, 500)],
        1e-6,
        &mut RdpAccountant::new(RO),
    );
    let zcdp_events = [(g, 40), (Event::Zcdp { rho: 0.02 }, 3), (l, 2), (bin, 1)];
    for rule in [ConversionRule::Tightest, ConversionRule::Classic] {
        check(
            RO,
            AccountantKind::Zcdp,
            rule,
            &zcdp_events,
            1e-6,
            &mut ZcdpAccountant::new(RO).with_conversion(rule),
        );
    }
    // Gaussians only: the exact PLD.
    let gs = [
        g,
        Event::Gaussian {
            sigma: 5.0,
            sensitivity: 2.0,
        },
    ];
    check(
        AR,
        AccountantKind::Pld,
        ConversionRule::Tightest,
        &[(g, 10), (Event::Composed(&gs), 4)],
        1e-5,
        &mut PldAccountant::new(AR),
    );
    // A subsampled Gaussian: the numerical PLD.
    let mut pld = PldAccountant::new(AR);
    check(
        AR,
        AccountantKind::Pld,
        ConversionRule::Tightest,
        &[(sampled, 200), (g, 1)],
        1e-5,
        &mut pld,
    );
    assert_eq!(
        pld.epsilon(1e-5).unwrap().conversion,
        Conversion::NumericalPld
    );
}

#[test]
fn claim_of_nothing_costs_nothing() {
    let c = Claim::account(
        AR,
        AccountantKind::Pure,
        ConversionRule::Tightest,
        Vec::new(),
        0.0,
    )
    .unwrap();
    assert_eq!(c.epsilon(), 0.0);
    assert_eq!(c.releases(), 0);
    assert_eq!(
        c.to_string(),
        "(ε = 0, δ = 0)-DP under the add/remove neighbouring relation, by the pure-DP \
         accountant (pure ε-DP, additive composition), composing 0 releases."
    );
}

#[test]
fn claim_errors_are_the_accountants_errors() {
    let g = EventBuf::Gaussian {
        sigma: 1.0,
        sensitivity: 1.0,
    };
    // pure DP cannot express a Gaussian
    let e = Claim::account(
        AR,
        AccountantKind::Pure,
        ConversionRule::Tightest,
        vec![(g.clone(), 1)],
        0.0,
    );
    unsupported(&e);
    // Poisson sampling is analysed under add/remove only
    let p = EventBuf::PoissonSampled {
        q: 0.1,
        event: Box::new(g.clone()),
    };
    let e = Claim::account(
        RO,
        AccountantKind::Rdp,
        ConversionRule::Tightest,
        vec![(p, 1)],
        1e-5,
    );
    assert!(matches!(
        e,
        Err(AccountantError::IncompatibleRelation { .. })
    ));
    // bad δ, bad parameters
    for delta in [0.0, 1.0, -1.0, f64::NAN] {
        let e = Claim::account(
            AR,
            AccountantKind::Rdp,
            ConversionRule::Tightest,
            vec![(g.clone(), 1)],
            delta,
        );
        assert!(matches!(e, Err(AccountantError::InvalidParameter { .. })));
    }
    let bad = EventBuf::Gaussian {
        sigma: f64::NAN,
        sensitivity: 1.0,
    };
    for kind in AccountantKind::ALL {
        let e = Claim::account(
            AR,
            kind,
            ConversionRule::Tightest,
            vec![(bad.clone(), 1)],
            1e-5,
        );
        assert!(e.is_err(), "{kind}");
    }
    // δ already spent by approximate-DP events
    let e = Claim::account(
        AR,
        AccountantKind::Approx,
        ConversionRule::Tightest,
        vec![(
            EventBuf::ApproxDp {
                epsilon: 0.1,
                delta: 1e-3,
            },
            10,
        )],
        1e-5,
    );
    assert!(matches!(e, Err(AccountantError::DeltaTooSmall { .. })));
}

#[test]
fn display_is_generated_from_the_value() {
    let g = Event::Gaussian {
        sigma: 2.0,
        sensitivity: 1.0,
    };
    let c = Claim::account(
        AR,
        AccountantKind::Pld,
        ConversionRule::Tightest,
        vec![(EventBuf::from(&g), 1)],
        1e-5,
    )
    .unwrap();
    let eps = c.epsilon();
    assert_eq!(
        c.to_string(),
        format!(
            "(ε = {eps}, δ = 0.00001)-DP under the add/remove neighbouring relation, by the \
             PLD accountant (exact Gaussian privacy-loss distribution, \
             Sommer–Meiser–Mohammadi 2019 Lemma 12), composing 1 release: \
             1 × Gaussian(σ = 2, Δ₂ = 1)."
        )
    );
    let sampled = Event::PoissonSampled { q: 0.01, event: &g };
    let svt = Event::SparseVector {
        c: 3,
        scale: 10.0,
        sensitivity: 1.0,
        resample: true,
    };
    let c = Claim::account(
        AR,
        AccountantKind::Rdp,
        ConversionRule::Classic,
        vec![(EventBuf::from(&sampled), 1000), (EventBuf::from(&svt), 1)],
        1e-6,
    )
    .unwrap();
    let Conversion::Mironov { order } = c.report.conversion else {
        panic!("classic RDP reports Mironov, got {:?}", c.report.conversion)
    };
    assert_eq!(
        c.to_string(),
        format!(
            "(ε = {}, δ = 0.000001)-DP under the add/remove neighbouring relation, by the RDP \
             accountant with the classic conversion rule (RDP → (ε, δ) via Mironov 2017 \
             Prop. 3 at α = {order}), composing 1001 releases: \
             1000 × PoissonSampled(q = 0.01, Gaussian(σ = 2, Δ₂ = 1)); \
             1 × SparseVector(c = 3, b = 10, Δ = 1, threshold resampled).",
            c.epsilon()
        )
    );
    let inner = [g, Event::Zcdp { rho: 0.5 }];
    let tree = Event::SelfComposed {
        event: &Event::Composed(&inner),
        count: 4,
    };
    assert_eq!(
        EventBuf::from(&tree).to_string(),
        "SelfComposed(4 × Composed[Gaussian(σ = 2, Δ₂ = 1); Zcdp(ρ = 0.5)])"
    );
    let wor = Event::SampledWithoutReplacement {
        batch: 5,
        population: 50,
        event: &Event::BinomialCurve {
            n: 2,
            m: 1.5,
            releases: 7,
            bound: BinomialBound::Paper,
        },
    };
    assert_eq!(
        wor.to_string(),
        "SampledWithoutReplacement(5 of 50, BinomialCurve(n = 2, m = 1.5, releases = 7, \
         paper bound))"
    );
}

#[test]
fn names_parse_and_print() {
    for k in AccountantKind::ALL {
        assert_eq!(k.to_string().parse::<AccountantKind>().unwrap(), k);
    }
    assert_eq!(
        "moments".parse::<AccountantKind>().unwrap_err().to_string(),
        "unknown accountant (expected one of: pure, approx, rdp, zcdp, pld, rdp_integers)"
    );
    for r in Neighbouring::ALL {
        assert_eq!(r.to_string().parse::<Neighbouring>().unwrap(), r);
    }
    assert_eq!("add-remove".parse::<Neighbouring>().unwrap(), AR);
    assert!("any-pair".parse::<Neighbouring>().is_err());
    for r in [ConversionRule::Tightest, ConversionRule::Classic] {
        assert_eq!(r.to_string().parse::<ConversionRule>().unwrap(), r);
    }
    assert!("best".parse::<ConversionRule>().is_err());
}

fn sample_claim() -> Claim {
    let g = Event::Gaussian {
        sigma: 1.5,
        sensitivity: 0.5,
    };
    let sampled = Event::PoissonSampled { q: 0.02, event: &g };
    let parts = [
        Event::SelfComposed {
            event: &sampled,
            count: 50,
        },
        Event::Laplace {
            scale: 3.0,
            sensitivity: 0.1,
        },
    ];
    Claim::account(
        AR,
        AccountantKind::Rdp,
        ConversionRule::Tightest,
        vec![
            (EventBuf::from(&Event::Composed(&parts)), 3),
            (
                EventBuf::from(&Event::SparseVector {
                    c: 2,
                    scale: 40.0,
                    sensitivity: 1.0,
                    resample: false,
                }),
                1,
            ),
        ],
        1e-5,
    )
    .unwrap()
}

#[test]
fn serde_round_trip_is_exact() {
    let c = sample_claim();
    let text = serde_json::to_string(&c).unwrap();
    let back: Claim = serde_json::from_str(&text).unwrap();
    assert_eq!(back, c);
    assert_eq!(back.epsilon().to_bits(), c.epsilon().to_bits());
    // The stored claim recomputes to itself.
    assert_eq!(back.recompute().unwrap(), c);
    // An edited stored claim does not survive recomputation.
    let mut edited = back.clone();
    edited.report.epsilon *= 0.5;
    assert_ne!(edited.recompute().unwrap(), edited);
    // Every value type on its own, with the names other tools read.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["relation"], "add_remove");
    assert_eq!(v["accountant"], "rdp");
    assert_eq!(v["rule"], "tightest");
    assert!(
        v["report"]["conversion"]["balle_cks"]["order"].is_number()
            || v["report"]["conversion"]["mironov"]["order"].is_number()
    );
    assert_eq!(v["events"][1][0]["sparse_vector"]["c"], 2);
    assert_eq!(
        v["events"][0][0]["composed"][0]["self_composed"]["event"]["poisson_sampled"]["q"],
        0.02
    );
    for k in AccountantKind::ALL {
        let s = serde_json::to_string(&k).unwrap();
        assert_eq!(s, format!("\"{k}\""));
        assert_eq!(serde_json::from_str::<AccountantKind>(&s).unwrap(), k);
    }
    for conv in [
        Conversion::Pure,
        Conversion::BasicComposition,
        Conversion::AdvancedComposition,
        Conversion::OptimalComposition,
        Conversion::Mironov { order: 12.5 },
        Conversion::BalleCks { order: 3.0 },
        Conversion::BunSteinke,
        Conversion::CksZcdp { order: 1.0000001 },
        Conversion::GaussianPld,
        Conversion::NumericalPld,
    ] {
        let s = serde_json::to_string(&conv).unwrap();
        assert!(s.contains(conv.name()), "{s}");
        assert_eq!(serde_json::from_str::<Conversion>(&s).unwrap(), conv);
    }
    // Unknown keys are errors, not silently dropped.
    let extra = text.replacen("\"relation\"", "\"colour\":1,\"relation\"", 1);
    assert!(serde_json::from_str::<Claim>(&extra).is_err());
    let bad_kind = text.replacen("\"rdp\"", "\"moments\"", 1);
    assert!(serde_json::from_str::<Claim>(&bad_kind).is_err());
}

/// Builds a random event tree of bounded depth from a flat recipe.
fn tree_from(recipe: &[(u8, f64, u64)], depth: usize) -> EventBuf {
    let Some(&(k, x, n)) = recipe.first() else {
        return EventBuf::Zcdp { rho: 0.25 };
    };
    let rest = &recipe[1..];
    let leaf_only = depth >= 4 || rest.is_empty();
    match (k % 11, leaf_only) {
        (0, _) => EventBuf::Gaussian {
            sigma: x,
            sensitivity: 1.0,
        },
        (1, _) => EventBuf::Laplace {
            scale: x,
            sensitivity: 0.5,
        },
        (2, _) => EventBuf::PureEpsilon { epsilon: x },
        (3, _) => EventBuf::ApproxDp {
            epsilon: x,
            delta: 1e-9,
        },
        (4, _) => EventBuf::SparseVector {
            c: n,
            scale: x,
            sensitivity: 1.0,
            resample: n % 2 == 0,
        },
        (5, _) => EventBuf::BinomialCurve {
            n: n + 1,
            m: x,
            releases: 2,
            bound: BinomialBound::Exact,
        },
        (6, false) => EventBuf::PoissonSampled {
            q: 0.5,
            event: Box::new(tree_from(rest, depth + 1)),
        },
        (7, false) => EventBuf::SampledWithoutReplacement {
            batch: 3,
            population: 9,
            event: Box::new(tree_from(rest, depth + 1)),
        },
        (8, false) => EventBuf::SelfComposed {
            event: Box::new(tree_from(rest, depth + 1)),
            count: n,
        },
        (9 | 10, false) => {
            let split = usize::try_from(n).unwrap_or(0) % rest.len().max(1);
            let (a, b) = rest.split_at(split);
            let mut v = vec![tree_from(a, depth + 1)];
            if k % 11 == 10 {
                v.push(tree_from(b, depth + 1));
                v.push(EventBuf::Composed(Vec::new()));
            }
            EventBuf::Composed(v)
        }
        _ => EventBuf::Zcdp { rho: x },
    }
}

proptest! {
    /// `EventBuf` → `Event` → `EventBuf` is the identity, also for nested and empty
    /// compositions, and the borrowed tree behaves like the owned one in an accountant.
    #[test]
    fn event_buf_round_trip(recipe in prop::collection::vec((0u8..=255, 0.1f64..10.0, 0u64..5), 0..12)) {
        let buf = tree_from(&recipe, 0);
        let again = buf.with_event(own);
        prop_assert_eq!(&again, &buf);
        let name = buf.with_event(|e| e.name());
        prop_assert_eq!(name, buf.name());
        let text = serde_json::to_string(&buf).unwrap();
        prop_assert_eq!(serde_json::from_str::<EventBuf>(&text).unwrap(), buf.clone());
        prop_assert_eq!(buf.to_string(), buf.with_event(|e| e.to_string()));
    }
}

#[test]
fn deep_trees_round_trip() {
    let mut buf = EventBuf::Gaussian {
        sigma: 1.0,
        sensitivity: 1.0,
    };
    for i in 0..40u64 {
        buf = if i % 2 == 0 {
            EventBuf::SelfComposed {
                event: Box::new(buf),
                count: 2,
            }
        } else {
            EventBuf::Composed(vec![buf, EventBuf::Zcdp { rho: 0.1 }])
        };
    }
    assert_eq!(buf.with_event(own), buf);
    // deeper than MAX_EVENT_DEPTH: the accountant refuses, as for a borrowed tree
    let e = Claim::account(
        AR,
        AccountantKind::Zcdp,
        ConversionRule::Tightest,
        vec![(buf, 1)],
        1e-5,
    );
    assert!(matches!(e, Err(AccountantError::TooDeep)));
    // wide trees are built level by level (no recursion per sibling)
    let wide = EventBuf::Composed(
        (0..20_000)
            .map(|_| EventBuf::Gaussian {
                sigma: 100.0,
                sensitivity: 1.0,
            })
            .collect(),
    );
    assert_eq!(wide.with_event(own), wide);
}

fn own(e: &Event<'_>) -> EventBuf {
    EventBuf::from(e)
}

/// `Query::ask_each` is each accountant asked by hand (bit for bit, errors included), and
/// `Query::tightest` the smallest finite answer, the first on ties, skipping errors.
#[test]
fn ask_each_is_every_accountant_by_hand_and_tightest_is_the_minimum() {
    let g = Event::Gaussian {
        sigma: 2.0,
        sensitivity: 1.0,
    };
    let l = Event::Laplace {
        scale: 2.0,
        sensitivity: 1.0,
    };
    for (events, rel) in [
        (vec![(g, 100)], AR),
        (vec![(l, 3)], AR),
        (vec![(l, 5), (Event::PureEpsilon { epsilon: 0.1 }, 2)], RO),
    ] {
        let owned_events = owned(&events);
        for query in [Query::EpsilonAt(1e-5), Query::DeltaAt(1.0)] {
            let each = query.ask_each(
                &AccountantKind::ALL,
                rel,
                ConversionRule::Tightest,
                &owned_events,
            );
            assert_eq!(each.len(), AccountantKind::ALL.len());
            for (kind, got) in &each {
                let mut acc: Box<dyn Accountant> = match kind {
                    AccountantKind::Pure => Box::new(PureAccountant::new(rel)),
                    AccountantKind::Approx => Box::new(ApproxAccountant::new(rel)),
                    AccountantKind::Rdp => Box::new(RdpAccountant::new(rel)),
                    AccountantKind::Zcdp => Box::new(ZcdpAccountant::new(rel)),
                    AccountantKind::Pld => Box::new(PldAccountant::new(rel)),
                    AccountantKind::RdpIntegers => Box::new(
                        dpinfer_accountants::RdpAccountantVec::new(
                            rel,
                            (2..=dpinfer_accountants::MAX_INTEGER_ORDER)
                                .map(f64::from)
                                .collect(),
                        )
                        .unwrap(),
                    ),
                    _ => unreachable!(),
                };
                let want = events
                    .iter()
                    .try_for_each(|(e, c)| acc.compose_n(e, *c))
                    .and_then(|()| match query {
                        Query::EpsilonAt(d) => acc.epsilon(d),
                        Query::DeltaAt(e) => acc.delta(e),
                    });
                assert_eq!(got, &want, "{kind} {query:?}");
            }
            let (kind, best) = query.tightest(&each).unwrap();
            let min = each
                .iter()
                .filter_map(|(_, r)| r.as_ref().ok().map(|r| query.answer(r)))
                .fold(f64::INFINITY, f64::min);
            assert_eq!(query.answer(&best), min);
            let first = each
                .iter()
                .find(|(_, r)| r.as_ref().is_ok_and(|r| query.answer(r) == min))
                .unwrap();
            assert_eq!(kind, first.0);
        }
    }
    // Pure DP cannot express a Gaussian; the exact Gaussian PLD is the tightest
    // (μ = √100 / 2 = 5: Balle–Wang 2018 Thm 8 gives ε ≈ 33.10 at δ = 1e-5).
    let q = Query::EpsilonAt(1e-5);
    let each = q.ask_each(
        &AccountantKind::ALL,
        AR,
        ConversionRule::Tightest,
        &owned(&[(g, 100)]),
    );
    unsupported(&each[0].1);
    assert_eq!(q.tightest(&each).unwrap().0, AccountantKind::Pld);
    // Ties go to the first; infinite answers and errors are never the tightest.
    let r = |epsilon: f64| Report {
        epsilon,
        delta: 1e-5,
        conversion: Conversion::Pure,
    };
    let answers = [
        (AccountantKind::Pure, Ok(r(f64::INFINITY))),
        (AccountantKind::Approx, Err(AccountantError::TooDeep)),
        (AccountantKind::Rdp, Ok(r(2.0))),
        (AccountantKind::Zcdp, Ok(r(2.0))),
        (AccountantKind::Pld, Ok(r(3.0))),
    ];
    assert_eq!(q.tightest(&answers), Some((AccountantKind::Rdp, r(2.0))));
    assert_eq!(q.tightest(&answers[..2]), None);
}
