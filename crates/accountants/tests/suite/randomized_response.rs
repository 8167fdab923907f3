//! k-ary randomized response ([`Event::RandomizedResponse`], replace-one) against 50-digit
//! mpmath (Rényi divergence by its definition; δ(ε) and ε(δ) of n-fold composition by exact
//! enumeration of the multinomial) and against `dp_accounting` 0.6.0 (RDP, PLD), from
//! `tests/data/gen_randomized_response.py` → `tests/data/randomized_response.txt`.

use crate::relations::{AR, RO};
use dpinfer_accountants::{
    Accountant, AccountantError, ApproxAccountant, Event, EventBuf, EventSpec, PldAccountant,
    PureAccountant, RdpAccountant, ZcdpAccountant, curves,
};

const DATA: &str = include_str!("../data/randomized_response.txt");
use crate::refdata::{Composed, num};

fn rows(kind: &str) -> impl Iterator<Item = Vec<&'static str>> + '_ {
    crate::refdata::rows(DATA, kind)
}

fn rr(noise: f64, buckets: u64) -> Event<'static> {
    Event::RandomizedResponse { noise, buckets }
}

/// RDP: never below the mpmath value, within 1e-12 relative of it (10⁻¹⁰ at α = 1.01,
/// where the reference's `ln(s)/(α − 1)` is itself a division by 0.01), and equal to
/// `dp_accounting`'s to 1e-9 (its `logsumexp` cancels near α = 1).
#[test]
fn rdp_matches_mpmath_and_dp_accounting() {
    let mut n = 0;
    for f in rows("rdp") {
        let (p, k, alpha) = (num(f[1]), f[2].parse::<u64>().unwrap(), num(f[3]));
        let (exact, peer) = (num(f[4]), num(f[5]));
        let ours = curves::randomized_response_rdp(p, k, alpha).unwrap();
        assert!(ours >= exact, "{p} {k} α={alpha}: {ours} < {exact}");
        assert!(
            ours <= exact * (1.0 + 1e-12) + 1e-300,
            "{p} {k} α={alpha}: {ours} vs {exact}"
        );
        assert!(
            (ours - peer).abs() <= 1e-9 * peer.max(1e-300) + 2.0 * (peer - exact).abs(),
            "{p} {k} α={alpha}: {ours} vs dp_accounting {peer}"
        );
        // The accountant reports the same value at that order.
        let mut acc = dpinfer_accountants::RdpAccountantVec::new(RO, vec![alpha]).unwrap();
        acc.compose(&rr(p, k)).unwrap();
        let v = acc.curve().values()[0];
        assert!(v >= ours && v <= ours * (1.0 + 1e-12), "{v} vs {ours}");
        n += 1;
    }
    assert_eq!(n, 64);
}

/// Numerical PLD: δ(ε) and ε(δ) never below the exact value; δ(ε) at most 10⁻³ relative +
/// 10⁻⁶ above it (h = 10⁻⁴ over up to 300 steps) and at most 0.1 % + 10⁻¹² above
/// `dp_accounting`'s pessimistic PLD; ε(δ) within 0.1 % of exact for δ ≥ 10⁻⁵ and 2 % at
/// δ = 10⁻⁸. Before issue 30 the FFT round-off allowance was the ℓ₁ bound of the output error
/// (1.5·10⁻⁸ to 8·10⁻⁸ for loss ranges ±46 to ±69) and 3 of the δ = 10⁻⁸ queries were refused
/// (`DeltaTooSmall`); the weighted bound (`|T_b|/N ≤ 1/b`, see `pld_numeric::compose`) answers
/// all of them.
#[test]
fn pld_matches_exact_enumeration_and_dp_accounting() {
    let (mut n, mut refused) = (0, 0);
    let mut cache = Composed::default();
    for f in rows("delta").chain(rows("eps")) {
        let (p, k, count, x) = (
            num(f[1]),
            f[2].parse::<u64>().unwrap(),
            f[3].parse::<u64>().unwrap(),
            num(f[4]),
        );
        let (exact, peer) = (num(f[5]), num(f[6]));
        // One composition per (p, k, n), queried for every ε and δ of the case.
        let acc = cache.get(&f[1..4].join(","), || {
            let mut acc = PldAccountant::new(RO);
            acc.compose_n(&rr(p, k), count).unwrap();
            acc.composed(false).unwrap()
        });
        if f[0] == "delta" {
            let ours = acc.delta(x).unwrap().delta;
            assert!(ours >= exact, "{f:?}: ours {ours} < exact {exact}");
            assert!(ours <= exact * (1.0 + 1e-3) + 1e-6, "{f:?}: {ours}");
            assert!(ours <= peer * (1.0 + 1e-3) + 1e-12, "{f:?}: {ours}");
        } else {
            let ours = match acc.epsilon(x) {
                Ok(r) => r.epsilon,
                Err(AccountantError::DeltaTooSmall { requested, spent }) if x < 1e-5 => {
                    assert!(spent > requested);
                    refused += 1;
                    continue;
                }
                Err(e) => panic!("{f:?}: {e:?}"),
            };
            assert!(ours >= exact, "{f:?}: ours {ours} < exact {exact}");
            let rel = if x >= 1e-5 { 1e-3 } else { 2e-2 };
            assert!(ours <= exact * (1.0 + rel), "{f:?}: {ours}");
        }
        n += 1;
    }
    assert_eq!((n, refused), (72, 0));
}

/// `dp_accounting` 0.6.0's PLD accountant composes randomized response once whatever the
/// count (its branch ignores `count`): recorded as `ignored` lines, each below the exact δ
/// (which ours never undercuts: [`pld_matches_exact_enumeration_and_dp_accounting`]).
#[test]
fn dp_accounting_ignores_the_count_of_randomized_response() {
    let mut n = 0;
    for f in rows("ignored") {
        let (p, k, count, eps) = (
            num(f[1]),
            f[2].parse::<u64>().unwrap(),
            f[3].parse::<u64>().unwrap(),
            num(f[4]),
        );
        let peer = num(f[5]);
        let exact = rows("delta")
            .find(|g| g[1] == f[1] && g[2] == f[2] && g[3] == f[3] && num(g[4]) == eps)
            .map(|g| num(g[5]))
            .unwrap();
        assert!(peer < exact, "{f:?}: {peer} vs {exact}");
        assert!(count > 1 && p > 0.0 && k > 1);
        n += 1;
    }
    assert_eq!(n, 7);
}

/// ε of one release is `ln(1 + k(1 − p)/p)` in every accountant that takes pure DP; the
/// edge cases cost nothing; bad parameters and add/remove are typed errors.
#[test]
fn epsilon_validation_and_relation() {
    // p = 0.5, k = 2: a = 0.75, b = 0.25, ε = ln 3.
    let e = curves::randomized_response_epsilon(0.5, 2).unwrap();
    assert!(e >= 3f64.ln() && e <= 3f64.ln() * (1.0 + 1e-13));
    let mut pure = PureAccountant::new(RO);
    pure.compose_n(&rr(0.5, 2), 3).unwrap();
    assert!((pure.total() - 3.0 * e).abs() <= 1e-13);
    let mut approx = ApproxAccountant::new(RO);
    approx.compose(&rr(0.5, 2)).unwrap();
    let b = approx.basic().epsilon;
    assert!(b >= e && b <= e * (1.0 + 1e-12));
    let mut z = ZcdpAccountant::new(RO);
    z.compose(&rr(0.5, 2)).unwrap();
    assert!(z.rho() >= 0.5 * e * e);
    // Nothing is released for k = 1 or p = 1.
    assert_eq!(curves::randomized_response_epsilon(1.0, 10).unwrap(), 0.0);
    assert_eq!(curves::randomized_response_epsilon(0.3, 1).unwrap(), 0.0);
    assert_eq!(curves::randomized_response_rdp(1.0, 10, 2.0).unwrap(), 0.0);
    let mut acc = PldAccountant::new(RO);
    acc.compose_n(&rr(1.0, 7), 1000).unwrap();
    assert_eq!(acc.delta(0.0).unwrap().delta, 0.0);
    // Tiny noise: ε = ln(k/p) without overflow, huge but finite; the PLD refuses ε > 700.
    let e = curves::randomized_response_epsilon(5e-324, u64::MAX).unwrap();
    assert!(e.is_finite() && e > 744.0 + 44.0, "{e}");
    assert!(curves::randomized_response_rdp(5e-324, u64::MAX, 1e6).unwrap() <= e);
    let mut acc = PldAccountant::new(RO);
    assert!(matches!(
        acc.compose(&rr(1e-306, 10_000_000_000)),
        Err(AccountantError::InvalidParameter { .. })
    ));
    // Typed errors.
    for (p, k) in [
        (0.0, 2),
        (-0.1, 2),
        (1.5, 2),
        (f64::NAN, 2),
        (f64::INFINITY, 2),
    ] {
        assert!(
            matches!(
                rr(p, k).validate(RO),
                Err(AccountantError::InvalidParameter { name: "noise", .. })
            ),
            "{p}"
        );
        assert!(curves::randomized_response_epsilon(p, k).is_err());
    }
    assert!(matches!(
        rr(0.5, 0).validate(RO),
        Err(AccountantError::InvalidCount {
            name: "buckets",
            value: 0
        })
    ));
    assert!(matches!(
        curves::randomized_response_rdp(0.5, 2, 1.0),
        Err(AccountantError::InvalidParameter { name: "alpha", .. })
    ));
    // Replace-one only, like dp_accounting; so never Poisson-subsampled.
    for mut acc in [
        Box::new(PldAccountant::new(AR)) as Box<dyn Accountant>,
        Box::new(RdpAccountant::new(AR)),
        Box::new(PureAccountant::new(AR)),
    ] {
        assert!(matches!(
            acc.compose(&rr(0.5, 2)),
            Err(AccountantError::IncompatibleRelation { .. })
        ));
    }
    // Sampled without replacement (replace-one): amplified, never above the plain event.
    let base = rr(0.5, 2);
    let wor = Event::SampledWithoutReplacement {
        batch: 10,
        population: 100,
        event: &base,
    };
    let (mut plain, mut sampled) = (PldAccountant::new(RO), PldAccountant::new(RO));
    plain.compose_n(&base, 10).unwrap();
    sampled.compose_n(&wor, 10).unwrap();
    let (a, b) = (
        plain.epsilon(1e-6).unwrap().epsilon,
        sampled.epsilon(1e-6).unwrap().epsilon,
    );
    assert!(b < a, "{b} vs {a}");
}

/// The event grammar and serde: `rr:p=…,k=…`.
#[test]
fn grammar_and_serde() {
    let spec: EventSpec = "rr:p=0.25,k=10,count=20".parse().unwrap();
    assert_eq!(spec.to_string(), "rr:p=0.25,k=10,count=20");
    let (event, count) = spec.to_pair();
    assert_eq!(
        event,
        EventBuf::RandomizedResponse {
            noise: 0.25,
            buckets: 10
        }
    );
    assert_eq!(count, 20);
    assert!(spec.validate(RO).is_ok());
    assert!(spec.validate(AR).is_err());
    let e = "rr:p=0.25".parse::<EventSpec>().unwrap_err();
    assert_eq!(e.key(), Some("k"));
    let json = serde_json::to_string(&event).unwrap();
    assert_eq!(
        json,
        r#"{"randomized_response":{"noise":0.25,"buckets":10}}"#
    );
    assert_eq!(serde_json::from_str::<EventBuf>(&json).unwrap(), event);
    assert_eq!(
        rr(0.25, 10).to_string(),
        "RandomizedResponse(p = 0.25, k = 10)"
    );
}
