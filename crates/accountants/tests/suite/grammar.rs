//! The event grammar and the rounded-up printing, as properties: `Display` → `FromStr`
//! round trips bit for bit, hostile strings never panic, a printed budget never parses below
//! the value and is its decimal ceiling.

use dpinfer_accountants::{
    AccountantError, BinomialBound, ConversionRule, EventBuf, EventSpec, Neighbouring,
    ParseEventError, Query, RoundedUp, Sampling,
};
use proptest::prelude::*;

/// Any finite f64 the grammar can carry: every magnitude (subnormals, ±0, near-max), with
/// the round numbers people type well represented.
fn real() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        (-400i32..400, 1u32..100_000).prop_map(|(e, m)| f64::from(m) * 10f64.powi(e)),
        Just(0.0),
        Just(-0.0),
        Just(1.0),
        Just(f64::MIN_POSITIVE),
        Just(f64::MAX),
        Just(5e-324),
    ]
    .prop_filter("finite", |x| x.is_finite())
}

fn int() -> impl Strategy<Value = u64> {
    prop_oneof![any::<u64>(), 0u64..5, Just(u64::MAX)]
}

fn base() -> impl Strategy<Value = EventBuf> {
    prop_oneof![
        (real(), real()).prop_map(|(sigma, sensitivity)| EventBuf::Gaussian { sigma, sensitivity }),
        (real(), real()).prop_map(|(scale, sensitivity)| EventBuf::Laplace { scale, sensitivity }),
        (real(), int())
            .prop_map(|(scale, sensitivity)| EventBuf::DiscreteLaplace { scale, sensitivity }),
        (real(), int())
            .prop_map(|(sigma, sensitivity)| EventBuf::DiscreteGaussian { sigma, sensitivity }),
        real().prop_map(|epsilon| EventBuf::PureEpsilon { epsilon }),
        (real(), real()).prop_map(|(epsilon, delta)| EventBuf::ApproxDp { epsilon, delta }),
        real().prop_map(|rho| EventBuf::Zcdp { rho }),
        (int(), real(), real(), any::<bool>()).prop_map(|(c, scale, sensitivity, resample)| {
            EventBuf::SparseVector {
                c,
                scale,
                sensitivity,
                resample,
            }
        }),
        (int(), real(), int(), any::<bool>()).prop_map(|(n, m, releases, paper)| {
            EventBuf::BinomialCurve {
                n,
                m,
                releases,
                bound: if paper {
                    BinomialBound::Paper
                } else {
                    BinomialBound::Exact
                },
            }
        }),
        (real(), int())
            .prop_map(|(noise, buckets)| EventBuf::RandomizedResponse { noise, buckets }),
        real().prop_map(|epsilon| EventBuf::ExponentialMechanism { epsilon }),
        (real(), real(), int()).prop_map(|(sigma, sensitivity, steps)| {
            EventBuf::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            }
        }),
    ]
}

fn sampling() -> impl Strategy<Value = Sampling> {
    prop_oneof![
        Just(Sampling::None),
        real().prop_map(|q| Sampling::Poisson { q }),
        (int(), int())
            .prop_map(|(batch, population)| Sampling::WithoutReplacement { batch, population }),
    ]
}

fn spec() -> impl Strategy<Value = EventSpec> {
    (base(), sampling(), int()).prop_map(|(b, s, c)| EventSpec::new(b, s, c).unwrap())
}

/// Bit-level equality (PartialEq would let -0 and 0 pass for each other).
fn same_bits(a: &EventSpec, b: &EventSpec) -> bool {
    format!("{a:?}") == format!("{b:?}") && a == b
}

/// Grammar-shaped noise: kinds, keys, separators and odd values in any order.
fn grammarish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("gaussian".to_owned()),
        Just("svt".to_owned()),
        Just("binomial".to_owned()),
        Just("dlaplace".to_owned()),
        Just("rr".to_owned()),
        Just("em".to_owned()),
        Just("tree".to_owned()),
        Just(":".to_owned()),
        Just(",".to_owned()),
        Just("=".to_owned()),
        Just("/".to_owned()),
        Just(" ".to_owned()),
        Just("sigma".to_owned()),
        Just("sens".to_owned()),
        Just("count".to_owned()),
        Just("poisson".to_owned()),
        Just("wor".to_owned()),
        Just("resample".to_owned()),
        Just("bound".to_owned()),
        Just("nan".to_owned()),
        Just("-inf".to_owned()),
        Just("1e999".to_owned()),
        Just("18446744073709551616".to_owned()),
        Just("-0".to_owned()),
        Just("é".to_owned()),
        Just("\u{0}".to_owned()),
        "[0-9.e+-]{1,6}",
        ".{0,3}",
    ];
    prop::collection::vec(token, 0..16).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn display_parses_back_bit_for_bit(s in spec()) {
        let text = s.to_string();
        let back: EventSpec = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert!(same_bits(&back, &s), "{text}: {back:?} vs {s:?}");
        // Canonical: printing again gives the same text; no number is hundreds of digits.
        prop_assert_eq!(back.to_string(), text.clone());
        prop_assert!(text.len() < 200, "{}", text);
        // The owned event round-trips through from_event as well.
        let (e, c) = s.to_pair();
        prop_assert!(same_bits(&EventSpec::from_event(&e, c).unwrap(), &s));
    }

    #[test]
    fn hostile_strings_never_panic(text in any::<String>()) {
        if let Ok(s) = text.parse::<EventSpec>() {
            // Whatever parses prints canonically and parses back to the same spec.
            prop_assert!(same_bits(&s.to_string().parse::<EventSpec>().unwrap(), &s));
            let _ = s.validate(Neighbouring::AddRemove);
        }
    }

    #[test]
    fn grammar_shaped_strings_never_panic(text in grammarish()) {
        match text.parse::<EventSpec>() {
            Ok(s) => {
                prop_assert!(same_bits(&s.to_string().parse::<EventSpec>().unwrap(), &s));
                // Validation and accounting of anything parsed: errors, never a panic or NaN.
                for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
                    let answer = s.validate(rel).ok().and_then(|()| {
                        Query::EpsilonAt(1e-6)
                            .best(&Query::KINDS, rel, ConversionRule::Tightest, &[s.to_pair()])
                            .ok()
                    });
                    if let Some(a) = answer {
                        prop_assert!(a.report.epsilon >= 0.0);
                    }
                }
            }
            Err(e) => {
                // Every error prints, and names a key or the item at fault.
                let msg = e.to_string();
                prop_assert!(!msg.is_empty());
                if let Some(k) = e.key() {
                    prop_assert!(msg.contains(k.split(' ').next().unwrap_or(k)), "{msg} / {k}");
                }
            }
        }
    }

    #[test]
    fn printed_budget_never_below_and_is_the_ceiling(
        x in prop_oneof![real(), 1e-4f64..1e9, 0.0f64..10.0]
    ) {
        for sci in [false, true] {
            let t = if sci { RoundedUp::scientific(x) } else { RoundedUp::fixed(x) }.to_string();
            let p: f64 = t.parse().unwrap();
            prop_assert!(p >= x, "{x:e} printed {t}");
            // The decimal ceiling: one unit less in the last printed digit (computed in
            // integer micro-units, exactly) parses below x — checked in fixed notation for
            // values below 1e9 (micro-units < 2^53).
            if !sci && (1e-4..1e9).contains(&x) && !t.contains('e') {
                let micro: u64 = t.replace('.', "").parse().unwrap();
                let less = micro - 1;
                let less = format!("{}.{:06}", less / 1_000_000, less % 1_000_000);
                prop_assert!(less.parse::<f64>().unwrap() < x, "{x} printed {t}, {less} is not below");
            }
        }
    }
}

/// The parse errors are typed values that name the key; `?` works with `Box<dyn Error>`.
#[test]
fn errors_are_typed() {
    let e = "binomial:n=10,m=1,releases=1,bound=tight"
        .parse::<EventSpec>()
        .unwrap_err();
    assert!(matches!(e, ParseEventError::NotABound { .. }));
    assert_eq!(e.key(), Some("bound"));
    let boxed: Box<dyn core::error::Error> = Box::new(e);
    assert_eq!(
        boxed.source().unwrap().to_string(),
        "unknown binomial bound (expected one of: exact, paper)"
    );
    let e = "gaussian:sigma=1,wor=10/x"
        .parse::<EventSpec>()
        .unwrap_err();
    assert_eq!(e.key(), Some("wor population"));
    // Validation is separate from parsing, with the accountants' own errors.
    let s: EventSpec = "gaussian:sigma=1,poisson=1.5".parse().unwrap();
    assert_eq!(
        s.validate(Neighbouring::AddRemove),
        Err(AccountantError::InvalidParameter {
            name: "q",
            value: 1.5
        })
    );
}
