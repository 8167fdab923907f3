//! One epoch of tree aggregation (DP-FTRL, [`Event::TreeAggregation`]) against
//! `dp_accounting` 0.6.0 (`tests/data/gen_tree_aggregation.py` →
//! `tests/data/tree_aggregation.txt`) and against an independent count of the released tree
//! nodes a leaf is in (complete dyadic blocks of `[1, T]`, enumerated).

use crate::relations::{AR, RO};
use crate::unsupported;
use dpinfer_accountants::{
    Accountant, AccountantError, Event, EventBuf, EventSpec, PldAccountant, PureAccountant,
    RdpAccountant, RdpAccountantVec, ZcdpAccountant, curves,
};

const DATA: &str = include_str!("../data/tree_aggregation.txt");

fn tree(sigma: f64, sensitivity: f64, steps: u64) -> Event<'static> {
    Event::TreeAggregation {
        sigma,
        sensitivity,
        steps,
    }
}

fn rows(kind: &str) -> impl Iterator<Item = Vec<&'static str>> + '_ {
    crate::refdata::rows(DATA, kind)
}

/// The most released nodes (complete dyadic blocks `[k·2^j + 1, (k+1)·2^j] ⊆ [1, T]`) any
/// leaf is in, by enumerating the blocks.
fn enumerated_depth(t: u64) -> u64 {
    let mut count = vec![0_u64; t as usize + 1];
    let mut size = 1;
    while size <= t {
        let mut start = 1;
        while start + size - 1 <= t {
            for leaf in start..start + size {
                count[leaf as usize] += 1;
            }
            start += size;
        }
        size *= 2;
    }
    count.into_iter().max().unwrap()
}

#[test]
fn depth_is_the_enumerated_number_of_nodes_per_leaf() {
    for t in (1..=600).chain([1023, 1024, 1025, 4095, 4096]) {
        assert_eq!(
            curves::tree_aggregation_depth(t),
            enumerated_depth(t),
            "T = {t}"
        );
    }
    assert_eq!(curves::tree_aggregation_depth(0), 0);
    assert_eq!(curves::tree_aggregation_depth(u64::MAX), 64);
}

/// RDP equal to `dp_accounting`'s (the same Gaussian with `d = ⌈log₂(T + 1)⌉` nodes) to
/// rounding; ε(δ) on `dp_accounting`'s default orders never more than theirs (our
/// conversion is the tightest of several) and within 3 % of it.
#[test]
fn matches_dp_accounting() {
    let mut n = 0;
    for f in rows("rdp") {
        let (z, t, alpha, peer) = (
            f[1].parse::<f64>().unwrap(),
            f[2].parse::<u64>().unwrap(),
            f[3].parse::<f64>().unwrap(),
            f[4].parse::<f64>().unwrap(),
        );
        let mut acc = RdpAccountantVec::new(RO, vec![alpha]).unwrap();
        acc.compose(&tree(z, 1.0, t)).unwrap();
        let ours = acc.curve().values()[0];
        assert!(
            ours >= peer && ours <= peer * (1.0 + 1e-12),
            "{f:?}: {ours}"
        );
        n += 1;
    }
    assert_eq!(n, 120);
    let orders: Vec<f64> = (1..100)
        .map(|x| 1.0 + f64::from(x) / 10.0)
        .chain((12..64).map(f64::from))
        .collect();
    for f in rows("eps") {
        let (z, t, count, delta, peer) = (
            f[1].parse::<f64>().unwrap(),
            f[2].parse::<u64>().unwrap(),
            f[3].parse::<u64>().unwrap(),
            f[4].parse::<f64>().unwrap(),
            f[5].parse::<f64>().unwrap(),
        );
        let mut acc = RdpAccountantVec::new(RO, orders.clone()).unwrap();
        acc.compose_n(&tree(z, 1.0, t), count).unwrap();
        let ours = acc.epsilon(delta).unwrap().epsilon;
        assert!(
            ours <= peer * (1.0 + 1e-9) && ours >= 0.97 * peer,
            "{f:?}: {ours}"
        );
        n += 1;
    }
    assert_eq!(n, 128);
}

/// Exactly the Gaussian mechanism with sensitivity `Δ√d` in every notion (zCDP, RDP, the
/// exact Gaussian PLD, also next to a numerical-PLD component); not pure DP; typed errors;
/// the grammar and serde.
#[test]
fn is_the_gaussian_with_sensitivity_delta_root_d() {
    let (sigma, sens, t) = (3.0, 0.5, 1000);
    let d = curves::tree_aggregation_depth(t) as f64;
    assert_eq!(d, 10.0);
    let g = Event::Gaussian {
        sigma,
        sensitivity: sens * d.sqrt(),
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
    let (mut z1, mut z2) = (ZcdpAccountant::new(AR), ZcdpAccountant::new(AR));
    z1.compose_n(&tree(sigma, sens, t), 7).unwrap();
    z2.compose_n(&g, 7).unwrap();
    assert!(close(z1.rho(), z2.rho()), "{} vs {}", z1.rho(), z2.rho());
    let (mut r1, mut r2) = (RdpAccountant::new(RO), RdpAccountant::new(RO));
    r1.compose_n(&tree(sigma, sens, t), 7).unwrap();
    r2.compose_n(&g, 7).unwrap();
    for (a, b) in r1.curve().values().iter().zip(r2.curve().values()) {
        assert!(close(*a, *b));
    }
    let (mut p1, mut p2) = (PldAccountant::new(AR), PldAccountant::new(AR));
    p1.compose_n(&tree(sigma, sens, t), 7).unwrap();
    p2.compose_n(&g, 7).unwrap();
    assert!(close(p1.mu(), p2.mu()));
    assert!(close(
        p1.epsilon(1e-6).unwrap().epsilon,
        p2.epsilon(1e-6).unwrap().epsilon
    ));
    // Next to a numerical component it joins the exact Gaussian μ.
    let lap = Event::Laplace {
        scale: 10.0,
        sensitivity: 1.0,
    };
    let (parts1, parts2) = ([tree(sigma, sens, t), lap], [g, lap]);
    let (mut p1, mut p2) = (PldAccountant::new(AR), PldAccountant::new(AR));
    p1.compose(&Event::Composed(&parts1)).unwrap();
    p2.compose(&Event::Composed(&parts2)).unwrap();
    // (μ agrees to rounding; the numerical composition may then land one grid step apart.)
    let (e1, e2) = (
        p1.epsilon(1e-6).unwrap().epsilon,
        p2.epsilon(1e-6).unwrap().epsilon,
    );
    assert!((e1 - e2).abs() <= 1e-3 * e2, "{e1} vs {e2}");
    // Not a pure-DP mechanism; bad parameters are typed errors.
    unsupported(&PureAccountant::new(AR).compose(&tree(1.0, 1.0, 4)));
    assert!(matches!(
        tree(1.0, 1.0, 0).validate(AR),
        Err(AccountantError::InvalidCount { name: "steps", .. })
    ));
    for (s, d) in [
        (0.0, 1.0),
        (f64::NAN, 1.0),
        (1.0, -1.0),
        (1.0, f64::INFINITY),
    ] {
        assert!(matches!(
            tree(s, d, 4).validate(RO),
            Err(AccountantError::InvalidParameter { .. })
        ));
    }
    assert!(matches!(
        ZcdpAccountant::new(AR).compose(&tree(1e-300, 1e300, 4)),
        Err(AccountantError::InvalidParameter { .. } | AccountantError::NumericalFailure { .. })
    ));
    let spec: EventSpec = "tree:sigma=3,steps=1000,sens=0.5,count=7".parse().unwrap();
    assert_eq!(spec.to_string(), "tree:sigma=3,steps=1000,sens=0.5,count=7");
    let (event, count) = spec.to_pair();
    assert_eq!(
        (event.clone(), count),
        (EventBuf::from(tree(3.0, 0.5, 1000)), 7)
    );
    let json = serde_json::to_string(&event).unwrap();
    assert_eq!(
        json,
        r#"{"tree_aggregation":{"sigma":3.0,"sensitivity":0.5,"steps":1000}}"#
    );
    assert_eq!(
        tree(3.0, 0.5, 1000).to_string(),
        "TreeAggregation(σ = 3, Δ₂ = 0.5, 1000 steps)"
    );
}
