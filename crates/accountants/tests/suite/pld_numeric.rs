//! The numerical PLD (`pld_numeric`, through `PldAccountant`) against peers and properties.
//!
//! * Golden cases `tests/data/pld_golden.txt` (made by `tests/data/gen_pld_golden.py` with
//!   dp_accounting 0.6.0 `PLDAccountant` and prv-accountant 0.2.0): ours is within 0.5 % of
//!   dp_accounting at the same discretisation (h = 10⁻⁴, pessimistic connect-the-dots) and
//!   never below prv-accountant's certified lower bound.
//! * q = 1 equals the exact Gaussian PLD (to the discretisation error, never below it).
//! * Monotone in steps, q and σ; PLD ε ≤ RDP ε; the budget filter and the calibrations.

use crate::relations::AR;
use crate::unsupported;
use dpinfer_accountants::pld_numeric::{
    Component, ComposedPld, Direction, Discretisation, Mechanism, poisson_gaussian_max_steps,
    poisson_gaussian_sigma,
};
use dpinfer_accountants::{
    Accountant, AccountantError, BudgetFilter, Conversion, Event, Neighbouring, PldAccountant,
    RdpAccountant, pld,
};

const GOLDEN: &str = include_str!("../data/pld_golden.txt");

struct Part {
    kind: String,
    q: f64,
    s: f64,
    n: u64,
}

fn parse_events(spec: &str) -> Vec<Part> {
    spec.split(';')
        .map(|p| {
            let (kind, kv) = p.split_once(':').unwrap();
            let mut q = 1.0;
            let mut s = f64::NAN;
            let mut n = 0;
            for item in kv.split(',') {
                let (k, v) = item.split_once('=').unwrap();
                match k {
                    "q" => q = v.parse().unwrap(),
                    "s" => s = v.parse().unwrap(),
                    "n" => n = v.parse::<f64>().unwrap() as u64,
                    _ => panic!("key {k}"),
                }
            }
            Part {
                kind: kind.to_string(),
                q,
                s,
                n,
            }
        })
        .collect()
}

fn accountant(parts: &[Part]) -> PldAccountant {
    let mut acc = PldAccountant::new(AR);
    for p in parts {
        let base = match p.kind.as_str() {
            "pg" | "g" => Event::Gaussian {
                sigma: p.s,
                sensitivity: 1.0,
            },
            "pl" | "l" => Event::Laplace {
                scale: p.s,
                sensitivity: 1.0,
            },
            k => panic!("kind {k}"),
        };
        if p.kind.starts_with('p') {
            acc.compose_n(
                &Event::PoissonSampled {
                    q: p.q,
                    event: &base,
                },
                p.n,
            )
            .unwrap();
        } else {
            acc.compose_n(&base, p.n).unwrap();
        }
    }
    acc
}

fn num(s: &str) -> f64 {
    match s.trim() {
        "nan" => f64::NAN,
        "inf" => f64::INFINITY,
        x => x.parse().unwrap(),
    }
}

#[test]
fn golden_against_dp_accounting_and_prv() {
    let mut n = 0;
    let mut worst: f64 = 0.0;
    for line in GOLDEN
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        let (name, spec, query) = (f[0], f[1], f[2]);
        let x = num(f[3]);
        let (dpa, prv_low, prv_up) = (num(f[4]), num(f[5]), num(f[6]));
        let parts = parse_events(spec);
        let acc = accountant(&parts);
        let ours = if query == "eps" {
            acc.epsilon(x).unwrap().epsilon
        } else {
            acc.delta(x).unwrap().delta
        };
        let rel = (ours - dpa) / dpa;
        eprintln!(
            "{name:32} ours {ours:<22e} dp_accounting {dpa:<22e} rel {rel:+.2e} prv [{prv_low:e}, {prv_up:e}]"
        );
        worst = worst.max(rel.abs());
        assert!(
            rel.abs() <= 5e-3,
            "{name}: ours {ours} dp_accounting {dpa} (rel {rel:e})"
        );
        if prv_low.is_finite() {
            assert!(
                ours >= prv_low,
                "{name}: ours {ours} below prv lower bound {prv_low}"
            );
            // Sanity: prv's upper bound is loose by its eps_error; we are not far above it.
            assert!(
                ours <= prv_up * 1.01 + 1e-12,
                "{name}: ours {ours} far above prv upper {prv_up}"
            );
        }
        n += 1;
    }
    assert!(n >= 40, "only {n} golden cases");
    eprintln!("{n} golden cases, worst relative difference to dp_accounting {worst:e}");
}

/// ε with q = 1 (plain Gaussians composed numerically) against the exact closed form.
#[test]
fn q_one_matches_exact_gaussian_and_never_below() {
    for (sigma, k, delta) in [
        (1.0, 1u64, 1e-5),
        (2.0, 10, 1e-6),
        (5.0, 100, 1e-5),
        (0.7, 3, 1e-3),
    ] {
        let mu = 0.5 / (sigma * sigma);
        let c = Component::new(Mechanism::Gaussian { mu }, 1.0).unwrap();
        let p = ComposedPld::new(&[(c, k)], 0.0, AR, Discretisation::default(), false).unwrap();
        let ours = p.epsilon(delta).unwrap().epsilon;
        let exact = pld::epsilon_for_delta(mu * k as f64, delta).unwrap();
        assert!(ours >= exact, "sigma {sigma} k {k}: {ours} < exact {exact}");
        assert!(
            ours <= exact * 1.001 + 1e-3,
            "sigma {sigma} k {k}: {ours} vs {exact}"
        );
        // δ(ε) too.
        let e = exact * 0.8;
        let d_ours = p.delta(e).unwrap().delta;
        let d_exact = pld::delta_for_epsilon(mu * k as f64, e).unwrap();
        assert!(
            d_ours >= d_exact && d_ours <= d_exact * 1.01,
            "{d_ours} vs {d_exact}"
        );
    }
}

#[test]
fn accountant_uses_numeric_path_for_subsampled_events() {
    let g = Event::Gaussian {
        sigma: 1.1,
        sensitivity: 1.0,
    };
    let s = Event::PoissonSampled { q: 0.01, event: &g };
    let mut acc = PldAccountant::new(AR);
    acc.compose_n(&s, 1000).unwrap();
    let r = acc.epsilon(1e-5).unwrap();
    assert_eq!(r.conversion, Conversion::NumericalPld);
    // dp_accounting 0.6.0: 1.515 (issue table); RDP gives 1.712.
    assert!((r.epsilon - 1.515).abs() < 2e-3, "{}", r.epsilon);
    // Gaussians alone keep the exact closed form (numbers unchanged).
    let mut acc = PldAccountant::new(AR);
    acc.compose_n(&g, 3).unwrap();
    assert_eq!(
        acc.epsilon(1e-5).unwrap().conversion,
        Conversion::GaussianPld
    );
    assert!(acc.components().is_empty());
}

fn eps_sub(q: f64, sigma: f64, k: u64, delta: f64) -> f64 {
    let g = Event::Gaussian {
        sigma,
        sensitivity: 1.0,
    };
    let mut acc = PldAccountant::new(AR);
    acc.compose_n(&Event::PoissonSampled { q, event: &g }, k)
        .unwrap();
    acc.epsilon(delta).unwrap().epsilon
}

#[test]
fn monotone_in_steps_q_sigma_and_below_rdp() {
    let d = 1e-5;
    let base = eps_sub(0.02, 1.0, 500, d);
    assert!(eps_sub(0.02, 1.0, 501, d) >= base);
    assert!(eps_sub(0.02, 1.0, 1000, d) >= base);
    assert!(eps_sub(0.03, 1.0, 500, d) >= base);
    assert!(eps_sub(0.02, 1.2, 500, d) <= base);
    for (q, sigma, k) in [(0.02, 1.0, 500u64), (0.001, 0.8, 10_000), (0.2, 3.0, 100)] {
        let g = Event::Gaussian {
            sigma,
            sensitivity: 1.0,
        };
        let s = Event::PoissonSampled { q, event: &g };
        let mut rdp = RdpAccountant::new(AR);
        rdp.compose_n(&s, k).unwrap();
        let e_rdp = rdp.epsilon(d).unwrap().epsilon;
        let e_pld = eps_sub(q, sigma, k, d);
        assert!(
            e_pld <= e_rdp,
            "q {q} sigma {sigma} k {k}: pld {e_pld} > rdp {e_rdp}"
        );
    }
}

#[test]
fn both_directions_and_report_fields() {
    let c = Component::new(Mechanism::Gaussian { mu: 0.5 / 1.21 }, 0.01).unwrap();
    let p = ComposedPld::new(&[(c, 1000)], 0.0, AR, Discretisation::default(), true).unwrap();
    let r = p.epsilon(1e-5).unwrap();
    assert_eq!(r.interval, 1e-4);
    assert!(r.truncation_mass <= 1e-15);
    assert!(r.roundoff > 0.0 && r.roundoff < 1e-8);
    let lower = r.lower.unwrap();
    assert!(
        lower <= r.epsilon && lower > 0.9 * r.epsilon,
        "{lower} {}",
        r.epsilon
    );
    // Laplace without subsampling is symmetric: only one direction is composed.
    let l = Component::new(Mechanism::Laplace { epsilon: 0.5 }, 1.0).unwrap();
    let p = ComposedPld::new(&[(l, 10)], 0.0, AR, Discretisation::default(), false).unwrap();
    assert_eq!(p.epsilon(1e-5).unwrap().direction, Direction::Remove);
    // Pure ε: 10 × ε = 0.1 randomized response; ε(δ) ≤ 1 (basic composition).
    let rr = Component::new(Mechanism::RandomizedResponse { epsilon: 0.1 }, 1.0).unwrap();
    let p = ComposedPld::new(&[(rr, 10)], 0.0, AR, Discretisation::default(), false).unwrap();
    let e = p.epsilon(1e-6).unwrap().epsilon;
    assert!(e <= 1.0 + 1e-9 && e > 0.3, "{e}");
}

/// Sampling without replacement (replace-one): no peer computes its PLD. Ours must not exceed
/// the RDP (WBK19) bound, and must not be below prv-accountant's certified lower bound of the
/// Poisson remove pair at q = γ, which the mechanism attains on datasets whose other rows are
/// all equal (then the sample's other rows contribute a constant).
#[test]
fn without_replacement_between_poisson_lower_bound_and_rdp() {
    let mut checked = 0;
    for line in GOLDEN.lines().filter(|l| l.starts_with("pg_q")) {
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        let p = &parse_events(f[1])[0];
        let (x, prv_low) = (num(f[3]), num(f[5]));
        if f[2] != "eps" || p.q >= 1.0 || p.n > 100_000 {
            continue;
        }
        let population = 100_000u64;
        let batch = (p.q * population as f64).round() as u64;
        let g = Event::Gaussian {
            sigma: p.s,
            sensitivity: 1.0,
        };
        let wor = Event::SampledWithoutReplacement {
            batch,
            population,
            event: &g,
        };
        let mut acc = PldAccountant::new(Neighbouring::ReplaceOne);
        acc.compose_n(&wor, p.n).unwrap();
        let ours = acc.epsilon(x).unwrap().epsilon;
        let mut rdp = RdpAccountant::new(Neighbouring::ReplaceOne);
        rdp.compose_n(&wor, p.n).unwrap();
        let e_rdp = rdp.epsilon(x).unwrap().epsilon;
        assert!(
            ours >= prv_low,
            "{}: wor {ours} < poisson lower {prv_low}",
            f[0]
        );
        assert!(ours <= e_rdp, "{}: wor {ours} > rdp {e_rdp}", f[0]);
        checked += 1;
    }
    assert!(checked >= 15, "{checked}");
    // Poisson under replace-one and without-replacement under add/remove are refused.
    let c = Component::without_replacement(Mechanism::Gaussian { mu: 0.5 }, 1, 10).unwrap();
    assert!(matches!(
        ComposedPld::new(&[(c, 1)], 0.0, AR, Discretisation::default(), false),
        Err(AccountantError::IncompatibleRelation { .. })
    ));
    assert!(Component::without_replacement(Mechanism::Gaussian { mu: 0.5 }, 11, 10).is_err());
}

#[test]
fn errors_and_unsupported_events() {
    let mut acc = PldAccountant::new(AR);
    unsupported(&acc.compose(&Event::Zcdp { rho: 0.1 }));
    assert!(Component::new(Mechanism::Gaussian { mu: f64::NAN }, 0.5).is_err());
    assert!(Component::new(Mechanism::Gaussian { mu: 1.0 }, 0.0).is_err());
    assert!(Component::new(Mechanism::Laplace { epsilon: -1.0 }, 0.5).is_err());
    assert!(Discretisation::new(0.0, 1e-15).is_err());
    assert!(Discretisation::new(1e-4, f64::NAN).is_err());
    let c = Component::new(Mechanism::Gaussian { mu: 0.5 }, 0.1).unwrap();
    let p = ComposedPld::new(&[(c, 10)], 0.0, AR, Discretisation::default(), false).unwrap();
    for bad in [0.0, 1.0, f64::NAN, -1.0] {
        assert!(p.epsilon(bad).is_err());
    }
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(p.delta(bad).is_err());
    }
    assert!(matches!(
        ComposedPld::new(&[(c, 0)], 0.0, AR, Discretisation::default(), false),
        Err(AccountantError::InvalidCount { .. })
    ));
}

#[test]
fn filter_admits_subsampled_steps_until_the_budget() {
    let g = Event::Gaussian {
        sigma: 1.1,
        sensitivity: 1.0,
    };
    let s = Event::PoissonSampled { q: 0.01, event: &g };
    let mut f = BudgetFilter::new(PldAccountant::new(AR), 1.6, 1e-5).unwrap();
    f.try_compose_n(&s, 1000).unwrap(); // ε ≈ 1.515
    let before = f.spent().unwrap().epsilon;
    assert!(matches!(
        f.try_compose_n(&s, 200),
        Err(AccountantError::BudgetExceeded { .. })
    ));
    assert_eq!(f.spent().unwrap().epsilon, before);
}

#[test]
fn calibration_round_trips() {
    let disc = Discretisation::new(1e-3, 1e-15).unwrap();
    let z = poisson_gaussian_sigma(2.0, 1e-5, 1000, 0.01, disc).unwrap();
    let z_rdp = dpinfer_accountants::calibrate::poisson_gaussian_sigma_rdp(
        2.0,
        1e-5,
        1000,
        0.01,
        &dpinfer_accountants::DEFAULT_ORDERS,
    )
    .unwrap();
    assert!(z <= z_rdp, "pld sigma {z} > rdp sigma {z_rdp}");
    let mu = 0.5 / (z * z);
    let eps = |zz: f64| {
        let c = Component::new(
            Mechanism::Gaussian {
                mu: 0.5 / (zz * zz),
            },
            0.01,
        )
        .unwrap();
        ComposedPld::new(&[(c, 1000)], 0.0, AR, disc, false)
            .unwrap()
            .epsilon(1e-5)
            .unwrap()
            .epsilon
    };
    assert!(mu > 0.0 && eps(z) <= 2.0 && eps(z * 0.999) > 2.0 * 0.999);
    let k = poisson_gaussian_max_steps(2.0, 1e-5, z, 0.01, 1 << 20, disc).unwrap();
    assert!(k >= 1000, "{k}");
    let e_k = |n: u64| {
        let c = Component::new(Mechanism::Gaussian { mu }, 0.01).unwrap();
        ComposedPld::new(&[(c, n)], 0.0, AR, disc, false)
            .unwrap()
            .epsilon(1e-5)
            .unwrap()
            .epsilon
    };
    assert!(e_k(k) <= 2.0 && e_k(k + 1) > 2.0);
}

/// The generic accountant testkit on subsampled events through the numerical PLD:
/// subsampled ≤ unsubsampled, q = 1 equals the base, monotone in steps and in δ.
#[test]
fn testkit_checks_on_subsampled_events() {
    let make = || PldAccountant::new(AR);
    for (sigma, q, k) in [(1.0, 0.01, 1000u64), (2.0, 0.1, 100), (0.8, 0.5, 10)] {
        dpinfer_accountants::testkit::subsampling(make, sigma, q, k, 1e-5).unwrap();
        let g = Event::Gaussian {
            sigma,
            sensitivity: 1.0,
        };
        let s = Event::PoissonSampled { q, event: &g };
        dpinfer_accountants::testkit::monotone_in_steps(make, &s, k, 1e-5).unwrap();
        dpinfer_accountants::testkit::monotone_in_delta(make, &s, k, 1e-7, 1e-5).unwrap();
        let l = Event::Laplace {
            scale: sigma,
            sensitivity: 1.0,
        };
        dpinfer_accountants::testkit::order_independent(make, &s, &l, 1e-6).unwrap();
    }
}

/// Issue 30 item 2 (speed): the FFT and composition speed-ups (twiddles by symmetry, the
/// zero-padded real FFT, direct bins four per pass, the mirrored steps' mass at `+∞` for the
/// tilted composition computed only when it is used) change no number. The bits below are
/// those of the implementation before them (commit 63da816): DP-SGD ε and δ at 10⁴ and 10³
/// steps, tiny δ (the tilted composition, with the add direction mirrored), a heterogeneous
/// composition and the long-tail regime.
#[test]
fn speed_work_changes_no_number() {
    let g = |sigma| Event::Gaussian {
        sigma,
        sensitivity: 1.0,
    };
    let (g11, g2, g05) = (g(1.1), g(2.0), g(0.5));
    let p = |q, event| Event::PoissonSampled { q, event };
    let mut got = Vec::new();
    for steps in [10_000u64, 1000] {
        let mut acc = PldAccountant::new(Neighbouring::AddRemove);
        acc.compose_n(&p(0.01, &g11), steps).unwrap();
        got.push(acc.epsilon(1e-5).unwrap().epsilon);
        got.push(acc.delta(2.0).unwrap().delta);
    }
    let mut acc = PldAccountant::new(Neighbouring::AddRemove);
    acc.compose_n(&p(0.01, &g11), 1000).unwrap();
    got.push(acc.epsilon(1e-13).unwrap().epsilon);
    got.push(acc.delta(8.0).unwrap().delta);
    let mut acc = PldAccountant::new(Neighbouring::AddRemove);
    acc.compose_n(&p(0.01, &g11), 500).unwrap();
    acc.compose_n(&p(0.02, &g2), 300).unwrap();
    got.push(acc.epsilon(1e-6).unwrap().epsilon);
    let mut acc = PldAccountant::new(Neighbouring::AddRemove);
    acc.compose_n(&p(0.001, &g05), 1000).unwrap();
    got.push(acc.epsilon(1e-5).unwrap().epsilon);
    let want: [u64; 8] = [
        0x4014_c53f_8c1f_5eef, // ε(1e-5), 10⁴ steps: 5.192625226416324
        0x3fa5_d844_f7c9_5c1f, // δ(2), 10⁴ steps
        0x3ff8_3ef5_231d_7b18, // ε(1e-5), 10³ steps: 1.5153704997716826
        0x3e75_1fe1_fb9d_4b4d, // δ(2), 10³ steps
        0x400a_bcb5_45ab_d358, // ε(1e-13), 10³ steps (tilted)
        0x3d36_2950_b312_8bb6, // δ(8), 10³ steps (tilted)
        0x3ff8_15a3_8f7f_5d70, // ε(1e-6), 500 + 300 heterogeneous steps
        0x4009_e93b_3670_f454, // ε(1e-5), q = 10⁻³, σ = 0.5, 10³ steps (long tail)
    ];
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w, "case {k}: {g:e} != {:e}", f64::from_bits(w));
    }
    // The tiny-δ cases above went through the tilted composition (its reports carry no
    // truncation mass), so the mirrored steps' lazily computed mass at +∞ was used.
    let c = Component::new(
        Mechanism::Gaussian {
            mu: 0.5 / (1.1 * 1.1),
        },
        0.01,
    )
    .unwrap();
    let pld = ComposedPld::new(
        &[(c, 1000)],
        0.0,
        Neighbouring::AddRemove,
        Discretisation::default(),
        false,
    )
    .unwrap();
    let r = pld.delta(8.0).unwrap();
    assert_eq!(r.truncation_mass, 0.0, "{r:?}");
}
