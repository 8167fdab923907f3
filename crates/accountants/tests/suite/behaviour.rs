//! Behavioural tests: formulas against independent closed forms, validation, relations,
//! atomicity, calibration round trips.

use crate::relations::{AR, RO};
use crate::unsupported;
use dpinfer_accountants::{
    Accountant, AccountantError, ApproxAccountant, BinomialBound, BudgetFilter, Conversion, Event,
    PldAccountant, PureAccountant, RdpAccountant, RdpCurve, ZcdpAccountant, calibrate, convert,
    curves, pld,
};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn invalid_relation_combinations_are_rejected() {
    let g = Event::Gaussian {
        sigma: 1.0,
        sensitivity: 1.0,
    };
    let p = Event::PoissonSampled { q: 0.1, event: &g };
    let w = Event::SampledWithoutReplacement {
        batch: 10,
        population: 100,
        event: &g,
    };
    let mut a = RdpAccountant::new(RO);
    assert!(matches!(
        a.compose(&p),
        Err(AccountantError::IncompatibleRelation { .. })
    ));
    let mut b = RdpAccountant::new(AR);
    assert!(matches!(
        b.compose(&w),
        Err(AccountantError::IncompatibleRelation { .. })
    ));
    // nested inside a composition too
    let parts = [g, w];
    assert!(matches!(
        b.compose(&Event::Composed(&parts)),
        Err(AccountantError::IncompatibleRelation { .. })
    ));
    // and nothing was recorded
    assert_eq!(b.curve().values()[3], 0.0);
}

#[test]
fn unsupported_events_are_typed_errors() {
    let g = Event::Gaussian {
        sigma: 1.0,
        sensitivity: 1.0,
    };
    unsupported(&PureAccountant::new(AR).compose(&g));
    // (pure ε is accounted by the numerical PLD with `alloc`; zCDP has no PLD.)
    unsupported(&PldAccountant::new(AR).compose(&Event::Zcdp { rho: 1.0 }));
    unsupported(&ZcdpAccountant::new(AR).compose(&Event::PoissonSampled { q: 0.5, event: &g }));
}

#[test]
fn negative_or_nan_rdp_is_an_error_not_zero() {
    assert!(RdpCurve::new([2.0], [-1e-3]).is_err());
    assert!(convert::rdp_to_approx(&[2.0], &[f64::NAN], 1e-5).is_err());
    assert!(convert::rdp_to_approx(&[2.0], &[f64::INFINITY], 1e-5).is_err());
}

#[test]
fn gaussian_closed_forms() {
    // Thesis Theorem 4: RDP αΔ²/(2σ²), zCDP Δ²/(2σ²).
    assert!(
        rel(
            curves::gaussian_rdp(2.0, 3.0, 5.0).unwrap(),
            5.0 * 9.0 / 8.0
        ) < 1e-13
    );
    let mut z = ZcdpAccountant::new(AR);
    z.compose_n(
        &Event::Gaussian {
            sigma: 2.0,
            sensitivity: 3.0,
        },
        7,
    )
    .unwrap();
    assert!(rel(z.rho(), 7.0 * 9.0 / 8.0) < 1e-13);
    // Theorem 4.3 with n compositions, evaluated naively with libm erfc at moderate values.
    let (sigma, d, n, eps) = (3.0f64, 1.0f64, 5.0f64, 1.0f64);
    let mu = d * d / (2.0 * sigma * sigma);
    let naive = 0.5
        * (libm::erfc(sigma * (eps - n * mu) / ((2.0 * n).sqrt() * d))
            - eps.exp() * libm::erfc(sigma * (eps + n * mu) / ((2.0 * n).sqrt() * d)));
    assert!(rel(pld::delta_for_epsilon(n * mu, eps).unwrap(), naive) < 1e-12);
}

#[test]
fn sparse_vector_and_binomial_formulas() {
    // ABCDP Theorem 1.
    assert!(
        rel(
            curves::sparse_vector_epsilon(3, 2.0, 0.5, false).unwrap(),
            4.0 * 0.5 / 2.0
        ) < 1e-13
    );
    assert!(
        rel(
            curves::sparse_vector_epsilon(3, 2.0, 0.5, true).unwrap(),
            6.0 * 0.5 / 2.0
        ) < 1e-13
    );
    // Xiong Prop 4: exact never larger than paper.
    for (n, m, l) in [(1u64, 0.1, 1u64), (50, 3.0, 10), (1000, 1e4, 100)] {
        let exact = curves::binomial_curve_epsilon(n, m, l, BinomialBound::Exact).unwrap();
        let paper = curves::binomial_curve_epsilon(n, m, l, BinomialBound::Paper).unwrap();
        assert!(exact <= paper);
    }
    let mut p = PureAccountant::new(AR);
    p.compose(&Event::BinomialCurve {
        n: 10,
        m: 5.0,
        releases: 3,
        bound: BinomialBound::default(),
    })
    .unwrap();
    assert!(rel(p.total(), 30.0 * (1.2f64).ln()) < 1e-13);
}

#[test]
fn wbk19_sum_includes_j_equal_alpha() {
    // Dropping the last term (j = α) gives a strictly smaller — i.e. under-reporting — value.
    let (q, s, a) = (0.5f64, 1.0f64, 6u64);
    let e = |j: f64| j / (2.0 * s * s);
    let binom =
        |n: u64, k: u64| -> f64 { (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64) };
    let mut with = 1.0 + q * q * binom(a, 2) * (4.0 * (e(2.0).exp() - 1.0)).min(2.0 * e(2.0).exp());
    for j in 3..=a {
        with += 2.0 * q.powi(j as i32) * binom(a, j) * ((j - 1) as f64 * e(j as f64)).exp();
    }
    let last = 2.0 * q.powi(a as i32) * ((a - 1) as f64 * e(a as f64)).exp();
    let full = with.ln() / (a - 1) as f64;
    let short = (with - last).ln() / (a - 1) as f64;
    let ours = curves::wor_rdp(q, a, |j| curves::gaussian_rdp(s, 1.0, j as f64)).unwrap();
    assert!(rel(ours, full.min(e(a as f64))) < 1e-12, "{ours} {full}");
    assert!(short < ours);
}

#[test]
fn wbk19_works_at_large_orders() {
    for a in [1024u64, 4096] {
        let v = curves::wor_rdp(0.01, a, |j| curves::gaussian_rdp(1.0, 1.0, j as f64)).unwrap();
        assert!(v.is_finite() && v > 0.0 && v <= a as f64 / 2.0);
    }
}

#[test]
fn mtz19_extremes() {
    // q down to 1e-8 and α up to 4096 are finite, positive and ≤ the unsubsampled Gaussian.
    for q in [1e-8, 1e-4, 0.5, 0.9999] {
        for a in [1.01, 1.5, 2.0, 7.5, 64.0, 2048.0, 4096.0] {
            let v = curves::poisson_gaussian_rdp(q, 1.0, a).unwrap();
            assert!(
                v.is_finite() && v > 0.0 && v <= a / 2.0 * (1.0 + 1e-12),
                "{q} {a} {v}"
            );
        }
    }
    // q = 1 is the plain Gaussian.
    assert!(
        rel(
            curves::poisson_gaussian_rdp(1.0, 2.0, 3.0).unwrap(),
            3.0 / 8.0
        ) < 1e-13
    );
}

#[test]
fn compose_n_equals_repeated_compose() {
    let g = Event::Gaussian {
        sigma: 3.0,
        sensitivity: 1.0,
    };
    let p = Event::PoissonSampled { q: 0.1, event: &g };
    let mut a = RdpAccountant::new(AR);
    let mut b = RdpAccountant::new(AR);
    a.compose_n(&p, 100).unwrap();
    for _ in 0..100 {
        b.compose(&p).unwrap();
    }
    let (ea, eb) = (
        a.epsilon(1e-6).unwrap().epsilon,
        b.epsilon(1e-6).unwrap().epsilon,
    );
    assert!(rel(ea, eb) < 1e-12);
    let mut c = RdpAccountant::new(AR);
    c.compose(&Event::SelfComposed {
        event: &p,
        count: 100,
    })
    .unwrap();
    assert!(rel(c.epsilon(1e-6).unwrap().epsilon, ea) < 1e-12);
}

#[test]
fn approx_accountant_uses_best_homogeneous_bound() {
    let mut a = ApproxAccountant::new(AR);
    a.compose_n(
        &Event::ApproxDp {
            epsilon: 0.01,
            delta: 0.0,
        },
        10_000,
    )
    .unwrap();
    let r = a.epsilon(1e-6).unwrap();
    assert!(r.epsilon < 100.0 * 0.5, "{r:?}");
    assert!(matches!(
        r.conversion,
        Conversion::OptimalComposition | Conversion::AdvancedComposition
    ));
    // heterogeneous: basic only
    a.compose(&Event::PureEpsilon { epsilon: 0.5 }).unwrap();
    let r = a.epsilon(1e-6).unwrap();
    assert_eq!(r.conversion, Conversion::BasicComposition);
    assert!(rel(r.epsilon, 100.5) < 1e-12);
    // δ below what was spent is a typed error
    let mut b = ApproxAccountant::new(AR);
    b.compose(&Event::ApproxDp {
        epsilon: 0.1,
        delta: 1e-5,
    })
    .unwrap();
    b.compose(&Event::PureEpsilon { epsilon: 0.1 }).unwrap();
    assert!(matches!(
        b.epsilon(1e-6),
        Err(AccountantError::DeltaTooSmall { .. })
    ));
}

#[test]
fn pure_accountant_delta_is_randomized_response_bound() {
    let mut p = PureAccountant::new(AR);
    p.compose(&Event::PureEpsilon { epsilon: 1.0 }).unwrap();
    let d = p.delta(0.5).unwrap().delta;
    let want = (1f64.exp() - 0.5f64.exp()) / (1.0 + 1f64.exp());
    assert!(rel(d, want) < 1e-12);
    assert!(p.delta(1.0).unwrap().delta < 1e-13); // ε_T is rounded up by ~1e-14
    assert_eq!(p.delta(1.1).unwrap().delta, 0.0);
}

#[test]
fn conversions_name_themselves() {
    let mut z = ZcdpAccountant::new(AR);
    z.compose(&Event::Zcdp { rho: 0.5 }).unwrap();
    assert!(matches!(
        z.epsilon(1e-5).unwrap().conversion,
        Conversion::CksZcdp { .. }
    ));
    let mut p = PldAccountant::new(AR);
    p.compose(&Event::Gaussian {
        sigma: 1.0,
        sensitivity: 1.0,
    })
    .unwrap();
    assert_eq!(p.epsilon(1e-5).unwrap().conversion, Conversion::GaussianPld);
}

#[test]
fn rho_inverse_is_the_bun_steinke_inverse_and_stable() {
    for (e, d) in [(1e-12, 1e-5), (0.1, 1e-8), (5.0, 1e-3)] {
        let rho = convert::rho_for_approx(e, d).unwrap();
        let back = rho + 2.0 * (rho * (1.0 / d).ln()).sqrt();
        assert!(back <= e * (1.0 + 1e-12), "{e} {back}");
        assert!(rel(back, e) < 1e-9);
    }
}

#[test]
fn calibration_is_conservative_and_tight() {
    let (eps, delta, k) = (1.0, 1e-5, 10_000u64);
    for m in [
        calibrate::Method::Zcdp,
        calibrate::Method::Pld,
        calibrate::Method::Rdp,
    ] {
        let s = calibrate::gaussian_sigma(eps, delta, k, 1.0, m).unwrap();
        let g = Event::Gaussian {
            sigma: s,
            sensitivity: 1.0,
        };
        let spent = match m {
            calibrate::Method::Zcdp => {
                // the closed form inverts Bun–Steinke exactly
                let mut a = ZcdpAccountant::new(AR);
                a.compose_n(&g, k).unwrap();
                let rho = a.rho();
                assert!(a.epsilon(delta).unwrap().epsilon <= eps);
                rho + 2.0 * (rho * (1.0 / delta).ln()).sqrt()
            }
            calibrate::Method::Pld => {
                let mut a = PldAccountant::new(AR);
                a.compose_n(&g, k).unwrap();
                a.epsilon(delta).unwrap().epsilon
            }
            calibrate::Method::Rdp => {
                let mut a = RdpAccountant::new(AR);
                a.compose_n(&g, k).unwrap();
                a.epsilon(delta).unwrap().epsilon
            }
        };
        assert!(spent <= eps * (1.0 + 1e-9), "{m:?} {s} {spent}");
        assert!(spent > eps * 0.98, "{m:?} too loose: {spent}");
    }
    // Poisson-subsampled calibration.
    let z = calibrate::poisson_gaussian_sigma_rdp(
        2.0,
        1e-5,
        10_000,
        0.01,
        &dpinfer_accountants::DEFAULT_ORDERS,
    )
    .unwrap();
    let g = Event::Gaussian {
        sigma: z,
        sensitivity: 1.0,
    };
    let mut a = RdpAccountant::new(AR);
    a.compose_n(&Event::PoissonSampled { q: 0.01, event: &g }, 10_000)
        .unwrap();
    let e = a.epsilon(1e-5).unwrap().epsilon;
    assert!(e <= 2.0 && e > 1.999, "{z} {e}");
}

#[test]
fn dp_penalty_theorems_6_and_7() {
    let (eps, delta, tau, n, a) = (1.0, 1e-5, 0.5, 1000u64, 0.5);
    let k6 = calibrate::dp_penalty_max_steps_zcdp(eps, delta, tau, n, a).unwrap();
    // Theorem 6 by hand: k = ⌊2τ²n^{2a}ρ⌋
    let l = (1.0f64 / delta).ln();
    let rho = ((eps + l).sqrt() - l.sqrt()).powi(2);
    assert_eq!(k6, (2.0 * tau * tau * 1000.0 * rho).floor() as u64);
    let k7 = calibrate::dp_penalty_max_steps_pld(eps, delta, tau, n, a).unwrap();
    assert!(k7 >= k6, "{k7} < {k6}");
    // Theorem 7 check: k7 is feasible, k7 + 1 is not.
    let mu = 1.0 / (2.0 * tau * tau * 1000.0);
    assert!(pld::delta_for_epsilon(k7 as f64 * mu, eps).unwrap() <= delta);
    assert!(pld::delta_for_epsilon((k7 + 1) as f64 * mu, eps).unwrap() > delta);
}

#[test]
fn dp_hmc_both_forms() {
    let (eps, delta, tl, tg, n, leap) = (2.0, 1e-6, 0.1, 0.3, 10_000u64, 10u64);
    let kz = calibrate::dp_hmc_max_steps_zcdp(eps, delta, tl, tg, n, leap).unwrap();
    let kp = calibrate::dp_hmc_max_steps_pld(eps, delta, tl, tg, n, leap).unwrap();
    assert!(kp >= kz && kz > 0);
    let rl = 1.0 / (2.0 * tl * tl * n as f64);
    let rg = 1.0 / (2.0 * tg * tg * n as f64);
    let mu = |k: u64| k as f64 * rl + (k * leap + 1) as f64 * rg;
    assert!(pld::delta_for_epsilon(mu(kp), eps).unwrap() <= delta);
    assert!(pld::delta_for_epsilon(mu(kp + 1), eps).unwrap() > delta);
    let rho = convert::rho_for_approx(eps, delta).unwrap();
    assert_eq!(kz, ((rho - rg) / (rl + leap as f64 * rg)).floor() as u64);
}

#[test]
fn dp_barker_theorem_8() {
    assert!(calibrate::dp_barker_base_rdp(100, 20).is_err()); // α < |B|/5 violated
    assert!(calibrate::dp_barker_base_rdp(100, 19).is_ok());
    let (k, a) = calibrate::dp_barker_max_steps(1.0, 1e-5, 1000, 100_000, 64).unwrap();
    assert!(k > 0 && a >= 2 && 5 * a < 1000);
    let r = calibrate::dp_barker_rdp(1000, 100_000, a).unwrap();
    let af = a as f64;
    let total = k as f64 * r
        + (1e5f64.ln() / (af - 1.0))
            .min((1.0 - 1.0 / af).ln() - ((1e-5f64).ln() + af.ln()) / (af - 1.0));
    assert!(total <= 1.0);
}

#[test]
fn budget_filter_refuses_atomically() {
    let mut f = BudgetFilter::new(RdpAccountant::new(AR), 1.0, 1e-5).unwrap();
    let g = Event::Gaussian {
        sigma: 5.0,
        sensitivity: 1.0,
    };
    let mut n = 0;
    loop {
        match f.try_compose(&g) {
            Ok(_) => n += 1,
            Err(AccountantError::BudgetExceeded { epsilon, budget }) => {
                assert!(epsilon > budget);
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(n > 0);
    let spent = f.spent().unwrap().epsilon;
    assert!(spent <= 1.0);
    // refusal left the state untouched; a smaller event may still fit (filter stays open)
    assert_eq!(f.spent().unwrap().epsilon, spent);
    let tiny = Event::Gaussian {
        sigma: 1e4,
        sensitivity: 1.0,
    };
    assert!(f.try_compose(&tiny).is_ok());
}

#[test]
fn pld_extreme_ranges() {
    for mu in [1e-10, 1e-6, 1.0, 1e4] {
        for eps in [0.0, 1.0, 100.0, 5000.0] {
            let d = pld::delta_for_epsilon(mu, eps).unwrap();
            assert!(d > 0.0 && d <= 1.0, "{mu} {eps} {d}");
        }
        for delta in [1e-300, 1e-10, 0.5] {
            let e = pld::epsilon_for_delta(mu, delta).unwrap();
            assert!(e.is_finite() && e >= 0.0);
            if e > 0.0 {
                assert!(pld::delta_for_epsilon(mu, e).unwrap() <= delta * (1.0 + 1e-9));
            }
        }
    }
}

#[test]
fn delta_direction_round_trips() {
    // zCDP: δ(ε(δ)) ≤ δ and ε(δ(ε)) ≤ ε (both directions are valid bounds of one curve).
    for rho in [1e-4, 0.05, 0.5, 3.0] {
        for delta in [1e-3, 1e-6, 1e-12] {
            let e = convert::zcdp_to_approx(rho, delta).unwrap().epsilon;
            let d = convert::zcdp_to_delta(rho, e).unwrap().delta;
            assert!(d <= delta * (1.0 + 1e-6), "{rho} {delta} {e} {d}");
            assert!(
                d >= delta * 0.5,
                "zcdp_to_delta too loose: {rho} {delta} {d}"
            );
        }
    }
    // RDP curve of a Gaussian.
    let orders = dpinfer_accountants::DEFAULT_ORDERS;
    let vals = orders.map(|a| a * 0.05);
    for delta in [1e-3, 1e-8] {
        let e = convert::rdp_to_approx(&orders, &vals, delta)
            .unwrap()
            .epsilon;
        let d = convert::rdp_to_delta(&orders, &vals, e).unwrap().delta;
        assert!(d <= delta * (1.0 + 1e-9));
    }
    // KOV both directions.
    let each = dpinfer_accountants::ApproxDp::new(0.1, 0.0).unwrap();
    let r = dpinfer_accountants::composition::optimal(each, 100, 1e-5).unwrap();
    let d = dpinfer_accountants::composition::optimal_delta(each, 100, r.epsilon).unwrap();
    assert!(d.delta <= 1e-5);
    // PLD accountant both directions.
    let mut p = PldAccountant::new(AR);
    p.compose_n(
        &Event::Gaussian {
            sigma: 3.0,
            sensitivity: 1.0,
        },
        50,
    )
    .unwrap();
    let e = p.epsilon(1e-7).unwrap().epsilon;
    assert!(p.delta(e).unwrap().delta <= 1e-7 * (1.0 + 1e-9));
}

#[test]
fn laplace_rdp_in_rdp_accountant_beats_pure_composition() {
    let l = Event::Laplace {
        scale: 10.0,
        sensitivity: 1.0,
    };
    let mut r = RdpAccountant::new(AR);
    r.compose_n(&l, 1000).unwrap();
    let mut p = PureAccountant::new(AR);
    p.compose_n(&l, 1000).unwrap();
    assert!(r.epsilon(1e-6).unwrap().epsilon < p.epsilon(0.0).unwrap().epsilon);
}

#[test]
fn bulk_gaussian_composition_matches_events() {
    let sigmas: Vec<f64> = (0..10_007).map(|i| 0.5 + f64::from(i % 97) / 7.0).collect();
    let mut a = PldAccountant::new(AR);
    a.compose_gaussians(&sigmas, 1.3).unwrap();
    let mut b = PldAccountant::new(AR);
    for &s in &sigmas {
        b.compose(&Event::Gaussian {
            sigma: s,
            sensitivity: 1.3,
        })
        .unwrap();
    }
    assert!(rel(a.mu(), b.mu()) < 1e-13);
    // atomic on a bad σ
    let before = a.mu();
    assert!(a.compose_gaussians(&[1.0, f64::NAN], 1.0).is_err());
    assert_eq!(a.mu(), before);
}

#[test]
fn budget_filter_with_zero_delta_needs_an_accountant_that_reports_there() {
    // An RDP accountant cannot report at δ = 0: refused at construction, not at every
    // admission.
    assert!(matches!(
        BudgetFilter::new(RdpAccountant::new(AR), 1.0, 0.0),
        Err(AccountantError::InvalidParameter { name: "delta", .. })
    ));
    // A pure accountant can, and admits within its ε.
    let mut f = BudgetFilter::new(PureAccountant::new(AR), 1.2, 0.0).unwrap();
    let lap = Event::Laplace {
        scale: 2.0,
        sensitivity: 1.0,
    };
    assert!(f.try_compose_n(&lap, 2).is_ok());
    assert!(matches!(
        f.try_compose_n(&lap, 1),
        Err(AccountantError::BudgetExceeded { .. })
    ));
}
