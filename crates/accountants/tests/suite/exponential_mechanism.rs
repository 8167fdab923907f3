//! The exponential mechanism / ε-bounded-range selection ([`Event::ExponentialMechanism`]):
//! `dp_accounting` 0.6.0 has no such event, so its bounds are checked against independent
//! computations — the Rényi divergences of the bounded-range extreme pairs (two-point loss
//! laws at the ends of a range of length ε, over a grid of their weight) and of actual
//! exponential mechanisms on seeded random utilities, by their definitions.

use crate::relations::{AR, RO};
use dpinfer_accountants::{
    Accountant, AccountantError, Event, EventBuf, EventSpec, PldAccountant, PureAccountant,
    RdpAccountantVec, ZcdpAccountant, curves,
};

const ORDERS: [f64; 8] = [1.01, 1.5, 2.0, 3.0, 8.0, 32.0, 256.0, 4096.0];

fn em(epsilon: f64) -> Event<'static> {
    Event::ExponentialMechanism { epsilon }
}

/// Our RDP of one ε-bounded-range release at each of [`ORDERS`].
fn rdp(epsilon: f64) -> Vec<f64> {
    let mut acc = RdpAccountantVec::new(AR, ORDERS.to_vec()).unwrap();
    acc.compose(&em(epsilon)).unwrap();
    acc.curve().values().to_vec()
}

/// `D_α(P‖Q) = ln(Σ Q(y) e^{α·loss(y)})/(α − 1)` of discrete laws given as
/// `(Q(y), loss(y))`, by its definition (the exponent shifted by its maximum).
fn renyi(pairs: &[(f64, f64)], alpha: f64) -> f64 {
    let top = pairs
        .iter()
        .filter(|p| p.0 > 0.0)
        .map(|&(_, l)| alpha * l)
        .fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = pairs
        .iter()
        .map(|&(q, l)| q * (alpha * l - top).exp())
        .sum();
    (top + s.ln()) / (alpha - 1.0)
}

/// The extreme pairs of ε-bounded range: loss `a` with `Q`-mass `1 − w` and `a + ε` with
/// mass `w`, `e^a = 1/(1 − w + w e^ε)` (so `P` is a distribution). Every bounded-range pair's
/// Rényi divergence is at most the largest of these (convexity in the loss law), and our
/// RDP `min(ε, αε²/8)` is above all of them; at small ε and α → 1 it is attained to within
/// a few percent (Hoeffding's lemma is tight at w = 1/2).
#[test]
fn rdp_bounds_the_bounded_range_extreme_pairs() {
    for eps in [0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0] {
        let ours = rdp(eps);
        for (j, &alpha) in ORDERS.iter().enumerate() {
            let mut worst: f64 = 0.0;
            for i in 0..=400 {
                let w = f64::from(i) / 400.0;
                let a = -(1.0 - w + w * eps.exp()).ln();
                let d = renyi(&[(1.0 - w, a), (w, a + eps)], alpha);
                worst = worst.max(d);
            }
            assert!(
                worst <= ours[j] * (1.0 + 1e-12),
                "ε={eps} α={alpha}: pair {worst} > ours {}",
                ours[j]
            );
            if eps <= 0.1 && alpha <= 2.0 {
                assert!(
                    worst >= 0.95 * ours[j],
                    "ε={eps} α={alpha}: {worst} vs {}",
                    ours[j]
                );
            }
        }
    }
}

/// Actual exponential mechanisms `P(y) ∝ exp(ε·u(y)/2)` with `m` outputs, utilities in
/// `[0, 10]` changed by at most Δ = 1 per output between neighbours (seeded): the loss range
/// is at most ε, `|loss| ≤ ε` (our pure ε), and every Rényi divergence is within our RDP.
#[test]
fn rdp_bounds_actual_exponential_mechanisms() {
    let mut s = 0x2545_F491_4F6C_DD1D_u64;
    let mut unif = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    for trial in 0..2000 {
        let eps = [0.1, 0.5, 1.0, 3.0][trial % 4];
        let m = 2 + trial % 5;
        let u: Vec<f64> = (0..m).map(|_| 10.0 * unif()).collect();
        let v: Vec<f64> = u.iter().map(|&x| x + 2.0 * unif() - 1.0).collect();
        let law = |w: &[f64]| {
            let z: f64 = w.iter().map(|&x| (0.5 * eps * x).exp()).sum();
            w.iter()
                .map(|&x| (0.5 * eps * x).exp() / z)
                .collect::<Vec<_>>()
        };
        let (p, q) = (law(&u), law(&v));
        let pairs: Vec<(f64, f64)> = p.iter().zip(&q).map(|(&a, &b)| (b, (a / b).ln())).collect();
        let (lo, hi) = pairs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x.1), hi.max(x.1))
            });
        assert!(
            hi - lo <= eps * (1.0 + 1e-12),
            "range {} > ε {eps}",
            hi - lo
        );
        assert!(hi.abs().max(lo.abs()) <= eps * (1.0 + 1e-12));
        let ours = rdp(eps);
        for (j, &alpha) in ORDERS.iter().enumerate() {
            let d = renyi(&pairs, alpha);
            assert!(
                d <= ours[j] * (1.0 + 1e-9) + 1e-15,
                "trial {trial} α={alpha}: {d} > {}",
                ours[j]
            );
        }
    }
}

/// The values: ε per release (pure), ρ = ε²/8 (zCDP, 4× below the ε²/2 of a generic ε-DP
/// release), RDP `min(ε, αε²/8)`; the numerical PLD uses the ε-DP randomized-response pair.
#[test]
fn values_and_accountants() {
    let eps = 0.5;
    let mut pure = PureAccountant::new(AR);
    pure.compose_n(&em(eps), 10).unwrap();
    assert!(pure.total() >= 5.0 && pure.total() <= 5.0 * (1.0 + 1e-12));
    let rho = curves::bounded_range_rho(eps).unwrap();
    assert!(rho >= eps * eps / 8.0 && rho <= eps * eps / 8.0 * (1.0 + 1e-12));
    let (mut z_em, mut z_pure) = (ZcdpAccountant::new(RO), ZcdpAccountant::new(RO));
    z_em.compose_n(&em(eps), 100).unwrap();
    z_pure
        .compose_n(&Event::PureEpsilon { epsilon: eps }, 100)
        .unwrap();
    assert!((z_pure.rho() / z_em.rho() - 4.0).abs() < 1e-9);
    let r = rdp(eps);
    for (j, &alpha) in ORDERS.iter().enumerate() {
        let want = eps.min(alpha * eps * eps / 8.0);
        assert!(r[j] >= want && r[j] <= want * (1.0 + 1e-12), "α={alpha}");
    }
    // PLD: the pure pair's PLD, equal to PureEpsilon's.
    let (mut a, mut b) = (PldAccountant::new(AR), PldAccountant::new(AR));
    a.compose_n(&em(eps), 50).unwrap();
    b.compose_n(&Event::PureEpsilon { epsilon: eps }, 50)
        .unwrap();
    assert_eq!(a.epsilon(1e-6).unwrap(), b.epsilon(1e-6).unwrap());
    // Under both relations; ε = 0 costs nothing; bad ε is a typed error.
    assert_eq!(curves::bounded_range_rho(0.0).unwrap(), 0.0);
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            em(bad).validate(RO),
            Err(AccountantError::InvalidParameter {
                name: "epsilon",
                ..
            })
        ));
        assert!(ZcdpAccountant::new(AR).compose(&em(bad)).is_err());
    }
    // The grammar and serde.
    let spec: EventSpec = "em:eps=0.5,poisson=0.1,count=3".parse().unwrap();
    assert_eq!(spec.to_string(), "em:eps=0.5,poisson=0.1,count=3");
    assert_eq!(
        spec.base(),
        &EventBuf::ExponentialMechanism { epsilon: 0.5 }
    );
    let json = serde_json::to_string(spec.base()).unwrap();
    assert_eq!(json, r#"{"exponential_mechanism":{"epsilon":0.5}}"#);
    assert_eq!(
        em(0.5).to_string(),
        "ExponentialMechanism(ε = 0.5, bounded range)"
    );
}
