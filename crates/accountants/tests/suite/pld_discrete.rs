//! Numerical PLDs of the discrete noise the secure samplers draw (discrete Laplace,
//! discrete Gaussian on ℤ with an integer shift), plain and Poisson-subsampled (both
//! directions) and without replacement, against exact enumeration in 40-digit arithmetic
//! (`tests/data/gen_pld_discrete.py` → `tests/data/pld_discrete.txt`), against the
//! continuous mechanisms as the lattice becomes fine, and against RDP.

use crate::relations::{AR, RO};
use dpinfer_accountants::pld_numeric::{Component, ComposedPld, Discretisation, Mechanism};
use dpinfer_accountants::{
    Accountant, AccountantError, Conversion, Event, PldAccountant, RdpAccountant,
};

const DATA: &str = include_str!("../data/pld_discrete.txt");

/// Allowed excess of our (pessimistic) δ over the exact δ (h = 10⁻⁴): `REL·δ + ABS` for
/// δ ≥ 10⁻⁶, else 5 % + 10⁻⁹. Lattice atoms between grid points are split between their
/// two neighbours (connect-the-dots), which moves δ by up to about `h·P(L ≈ ε)`; measured
/// worst: 2.2·10⁻⁶ absolute, 7.7·10⁻⁴ relative at δ = 1.6·10⁻⁶, 3.9 % at δ = 3.5·10⁻⁸.
const REL: f64 = 1e-3;
const ABS: f64 = 2.5e-6;

fn mech(kind: &str, param: f64, k: u64) -> Mechanism {
    match kind {
        "dl" => Mechanism::DiscreteLaplace {
            scale: param,
            shift: k,
        },
        "dg" => Mechanism::DiscreteGaussian {
            sigma: param,
            shift: k,
        },
        _ => panic!("kind {kind}"),
    }
}

#[test]
fn exact_enumeration_golden() {
    let mut n = 0;
    let mut worst: f64 = 0.0;
    let mut cache: Option<(String, ComposedPld)> = None;
    for line in DATA.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        let (kind, param, k, q, steps, eps, exact) = (
            f[0],
            f[1].parse::<f64>().unwrap(),
            f[2].parse::<u64>().unwrap(),
            f[3].parse::<f64>().unwrap(),
            f[4].parse::<u64>().unwrap(),
            f[5].parse::<f64>().unwrap(),
            f[6].parse::<f64>().unwrap(),
        );
        let key = f[..5].join(",");
        if cache.as_ref().is_none_or(|(k2, _)| *k2 != key) {
            let p = if let Some(base) = kind.strip_prefix("wor-") {
                // γ = 1/10 or 1/4 exactly.
                let pop = (1.0 / q).round() as u64;
                let c = Component::without_replacement(mech(base, param, k), 1, pop).unwrap();
                ComposedPld::new(&[(c, steps)], 0.0, RO, Discretisation::default(), false).unwrap()
            } else {
                let c = Component::new(mech(kind, param, k), q).unwrap();
                ComposedPld::new(&[(c, steps)], 0.0, AR, Discretisation::default(), true).unwrap()
            };
            cache = Some((key, p));
        }
        let p = &cache.as_ref().unwrap().1;
        let r = p.delta(eps).unwrap();
        assert!(
            r.delta >= exact,
            "{line}: ours {} below exact {exact}",
            r.delta
        );
        let excess = r.delta - exact;
        let allowed = if exact >= 1e-6 {
            REL * exact + ABS
        } else {
            0.05 * exact + 1e-9
        };
        assert!(
            excess <= allowed,
            "{line}: ours {} vs exact {exact}",
            r.delta
        );
        if let Some(lo) = r.lower {
            assert!(lo <= exact, "{line}: lower {lo} above exact {exact}");
        }
        if exact > 1e-6 {
            worst = worst.max(excess / exact);
        }
        n += 1;
    }
    assert!(n >= 200, "only {n} cases");
    eprintln!("{n} exact discrete cases, worst relative excess (δ > 1e-6) {worst:e}");
}

/// Fine lattices converge to the continuous mechanisms (β → ∞ with k/β fixed; σ → ∞
/// with k/σ fixed).
#[test]
fn fine_lattice_matches_continuous_limit() {
    let d = Discretisation::default();
    for q in [1.0, 0.05] {
        let lap = Component::new(Mechanism::Laplace { epsilon: 1.0 }, q).unwrap();
        let dlap = Component::new(
            Mechanism::DiscreteLaplace {
                scale: 1e9,
                shift: 1_000_000_000,
            },
            q,
        )
        .unwrap();
        let gau = Component::new(Mechanism::Gaussian { mu: 0.5 }, q).unwrap();
        let dgau = Component::new(
            Mechanism::DiscreteGaussian {
                sigma: 3000.0,
                shift: 3000,
            },
            q,
        )
        .unwrap();
        for (a, b) in [(lap, dlap), (gau, dgau)] {
            let pa = ComposedPld::new(&[(a, 50)], 0.0, AR, d, false).unwrap();
            let pb = ComposedPld::new(&[(b, 50)], 0.0, AR, d, false).unwrap();
            for eps in [0.5, 1.0, 2.0] {
                let (ra, rb) = (pa.delta(eps).unwrap(), pb.delta(eps).unwrap());
                let (da, db) = (ra.delta, rb.delta);
                // Both are upper bounds with their own allowances (the continuous steps'
                // can be much smaller: the tilted composition at tiny δ).
                let allowances =
                    ra.roundoff + ra.truncation_mass + rb.roundoff + rb.truncation_mass;
                assert!(
                    (da - db).abs() <= 1e-4 * da + 1e-12 + allowances,
                    "q {q} eps {eps}: continuous {da} discrete {db}"
                );
            }
        }
    }
}

/// The samplers' own lattice (σ = 2²⁴ grid units, Euler–Maclaurin sums): the discrete
/// Gaussian's δ(ε) equals the continuous one's up to the per-step allowances (the two laws
/// differ by far less than 10⁻¹³ in total variation at this σ; the discrete construction's
/// measured mass deviation, ≈ 2·10⁻¹⁶ per step, enters δ eightfold), which differ since the
/// continuous Gaussian can be composed tilted (issue 30).
#[test]
fn sampler_sized_discrete_gaussian() {
    let d = Discretisation::default();
    let sigma = 16_777_216.0; // 2^24 grid units
    for (k, q, n) in [(16_777_216u64, 0.01, 1000u64), (8_388_608, 1.0, 20)] {
        let r = k as f64 / sigma;
        let dg = Component::new(Mechanism::DiscreteGaussian { sigma, shift: k }, q).unwrap();
        let g = Component::new(Mechanism::Gaussian { mu: 0.5 * r * r }, q).unwrap();
        let pd = ComposedPld::new(&[(dg, n)], 0.0, AR, d, false).unwrap();
        let pg = ComposedPld::new(&[(g, n)], 0.0, AR, d, false).unwrap();
        for eps in [0.0, 0.5, 1.0, 2.0, 3.0] {
            let (ra, rb) = (pd.delta(eps).unwrap(), pg.delta(eps).unwrap());
            let (a, b) = (ra.delta, rb.delta);
            // The continuous steps' allowance can be far smaller (tilted composition).
            let allowances = ra.roundoff + ra.truncation_mass + rb.roundoff + rb.truncation_mass;
            assert!(
                (a - b).abs() <= 1e-9 * b + 1e-11 + allowances,
                "k {k} q {q} eps {eps}: {a} vs {b}"
            );
        }
    }
}

/// The coarse discrete Laplace differs from the continuous one (its exact PLD is used).
#[test]
fn coarse_discrete_laplace_is_not_the_continuous_one() {
    let d = Discretisation::default();
    let lap = Component::new(Mechanism::Laplace { epsilon: 1.0 }, 0.1).unwrap();
    let dlap = Component::new(
        Mechanism::DiscreteLaplace {
            scale: 1.0,
            shift: 1,
        },
        0.1,
    )
    .unwrap();
    let pa = ComposedPld::new(&[(lap, 10)], 0.0, AR, d, false).unwrap();
    let pb = ComposedPld::new(&[(dlap, 10)], 0.0, AR, d, false).unwrap();
    let (da, db) = (pa.delta(0.3).unwrap().delta, pb.delta(0.3).unwrap().delta);
    assert!((da - db).abs() > 1e-3 * da, "{da} {db}");
}

#[test]
fn events_through_the_accountant() {
    let dl = Event::DiscreteLaplace {
        scale: 4.0,
        sensitivity: 2,
    };
    let dg = Event::DiscreteGaussian {
        sigma: 40.0,
        sensitivity: 30,
    };
    let sl = Event::PoissonSampled {
        q: 0.02,
        event: &dl,
    };
    let sg = Event::PoissonSampled {
        q: 0.02,
        event: &dg,
    };
    let mut acc = PldAccountant::new(AR);
    acc.compose_n(&sl, 300).unwrap();
    acc.compose_n(&sg, 300).unwrap();
    let r = acc.epsilon(1e-6).unwrap();
    assert_eq!(r.conversion, Conversion::NumericalPld);
    // The same composition built by hand.
    let c1 = Component::new(
        Mechanism::DiscreteLaplace {
            scale: 4.0,
            shift: 2,
        },
        0.02,
    )
    .unwrap();
    let c2 = Component::new(
        Mechanism::DiscreteGaussian {
            sigma: 40.0,
            shift: 30,
        },
        0.02,
    )
    .unwrap();
    let p = ComposedPld::new(
        &[(c1, 300), (c2, 300)],
        0.0,
        AR,
        Discretisation::default(),
        false,
    )
    .unwrap();
    assert_eq!(r.epsilon, p.epsilon(1e-6).unwrap().epsilon);
    // Never above RDP for the discrete Laplace (pure ε amplified); the discrete Gaussian
    // plain (RDP α·ρ, CKS20 Thm 14).
    let mut rdp = RdpAccountant::new(AR);
    rdp.compose_n(&sl, 300).unwrap();
    let mut pld = PldAccountant::new(AR);
    pld.compose_n(&sl, 300).unwrap();
    let (er, ep) = (
        rdp.epsilon(1e-6).unwrap().epsilon,
        pld.epsilon(1e-6).unwrap().epsilon,
    );
    assert!(ep <= er, "pld {ep} rdp {er}");
    let mut rdp = RdpAccountant::new(AR);
    rdp.compose_n(&dg, 100).unwrap();
    let mut pld = PldAccountant::new(AR);
    pld.compose_n(&dg, 100).unwrap();
    let (er, ep) = (
        rdp.epsilon(1e-6).unwrap().epsilon,
        pld.epsilon(1e-6).unwrap().epsilon,
    );
    assert!(ep <= er, "pld {ep} rdp {er}");
    // Replace-one, unsubsampled: the (symmetric) base pair, the same value as add/remove
    // for the same sensitivity; Poisson sampling is refused under replace-one.
    for base in [dl, dg] {
        let mut ro = PldAccountant::new(RO);
        let mut ar = PldAccountant::new(AR);
        ro.compose_n(&base, 40).unwrap();
        ar.compose_n(&base, 40).unwrap();
        assert_eq!(
            ro.epsilon(1e-6).unwrap().epsilon,
            ar.epsilon(1e-6).unwrap().epsilon
        );
        let s = Event::PoissonSampled {
            q: 0.1,
            event: &base,
        };
        assert!(matches!(
            PldAccountant::new(RO).compose(&s),
            Err(AccountantError::IncompatibleRelation { .. })
        ));
    }
    // Zero sensitivity costs nothing.
    let mut z = PldAccountant::new(AR);
    z.compose_n(
        &Event::DiscreteGaussian {
            sigma: 1.0,
            sensitivity: 0,
        },
        5,
    )
    .unwrap();
    assert_eq!(z.epsilon(1e-6).unwrap().epsilon, 0.0);
}

/// Without replacement (replace-one): never above the RDP bound of the same event.
#[test]
fn without_replacement_below_rdp() {
    for base in [
        Event::DiscreteLaplace {
            scale: 2.0,
            sensitivity: 2,
        },
        Event::DiscreteGaussian {
            sigma: 20.0,
            sensitivity: 20,
        },
    ] {
        let s = Event::SampledWithoutReplacement {
            batch: 10,
            population: 1000,
            event: &base,
        };
        let mut pld = PldAccountant::new(RO);
        let mut rdp = RdpAccountant::new(RO);
        pld.compose_n(&s, 200).unwrap();
        match rdp.compose_n(&s, 200) {
            Ok(()) => {
                let (ep, er) = (
                    pld.epsilon(1e-6).unwrap().epsilon,
                    rdp.epsilon(1e-6).unwrap().epsilon,
                );
                assert!(ep <= er, "{base:?}: pld {ep} rdp {er}");
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}

#[test]
fn invalid_discrete_parameters_are_typed_errors() {
    for m in [
        Mechanism::DiscreteLaplace {
            scale: 1.0,
            shift: 0,
        },
        Mechanism::DiscreteGaussian {
            sigma: 1.0,
            shift: 0,
        },
    ] {
        assert!(matches!(
            Component::new(m, 0.5),
            Err(AccountantError::InvalidCount { .. })
        ));
    }
    for m in [
        Mechanism::DiscreteLaplace {
            scale: f64::NAN,
            shift: 1,
        },
        Mechanism::DiscreteLaplace {
            scale: -1.0,
            shift: 1,
        },
        Mechanism::DiscreteLaplace {
            scale: 1e-3,
            shift: 1,
        },
        Mechanism::DiscreteGaussian {
            sigma: 0.0,
            shift: 1,
        },
        Mechanism::DiscreteGaussian {
            sigma: f64::INFINITY,
            shift: 1,
        },
        // Too coarse for Euler–Maclaurin (τ = 25·10⁻⁶), too many points to enumerate.
        Mechanism::DiscreteGaussian {
            sigma: 2e6,
            shift: 100_000_000,
        },
        Mechanism::DiscreteGaussian {
            sigma: 1e-3,
            shift: 1,
        },
    ] {
        assert!(
            matches!(
                Component::new(m, 0.5),
                Err(AccountantError::InvalidParameter { .. })
            ),
            "{m:?}"
        );
    }
    let bad = Event::DiscreteGaussian {
        sigma: -1.0,
        sensitivity: 1,
    };
    assert!(PldAccountant::new(AR).compose(&bad).is_err());
    assert!(RdpAccountant::new(AR).compose(&bad).is_err());
}
