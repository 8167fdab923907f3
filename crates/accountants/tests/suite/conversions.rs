//! Issue 13 items 5–7: selectable conversions (`ConversionRule`) against closed forms, the
//! budget filter and calibration with the classic conversions, the Laplace scale helpers,
//! the direct Poisson-subsampled Gaussian max-steps call and sparse vector with `c = 0`.

use crate::relations::AR;
use dpinfer_accountants::{
    Accountant, AccountantError, BudgetFilter, Conversion, ConversionRule, DEFAULT_ORDERS, Event,
    PureAccountant, RdpAccountant, RdpAccountantVec, ZcdpAccountant, calibrate, convert, curves,
};

/// Upper bound within `tol` relative of a closed form.
fn close_above(ours: f64, exact: f64, tol: f64) -> bool {
    ours >= exact && ours <= exact * (1.0 + tol)
}

/// Mironov 2017 Prop. 3 on the Gaussian curve `r(α) = kα/(2z²)`, minimised over `orders`.
fn mironov_gaussian(k: f64, z: f64, delta: f64, orders: &[f64]) -> f64 {
    orders
        .iter()
        .map(|&a| k * a / (2.0 * z * z) - delta.ln() / (a - 1.0))
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn rdp_classic_is_mironov_closed_form() {
    for &(z, k, delta) in &[(1.0, 1.0, 1e-5), (2.0, 100.0, 1e-6), (10.0, 1e4, 1e-9)] {
        let mut classic = RdpAccountant::new(AR).with_conversion(ConversionRule::Classic);
        let mut tight = RdpAccountant::new(AR);
        let g = Event::Gaussian {
            sigma: z,
            sensitivity: 1.0,
        };
        classic.compose_n(&g, k as u64).unwrap();
        tight.compose_n(&g, k as u64).unwrap();
        assert_eq!(classic.conversion(), ConversionRule::Classic);
        let rc = classic.epsilon(delta).unwrap();
        let rt = tight.epsilon(delta).unwrap();
        assert!(matches!(rc.conversion, Conversion::Mironov { .. }));
        let want = mironov_gaussian(k, z, delta, &DEFAULT_ORDERS);
        assert!(
            close_above(rc.epsilon, want, 1e-12),
            "{} vs {want}",
            rc.epsilon
        );
        assert!(rt.epsilon <= rc.epsilon);
        // δ at that ε: Mironov's δ = min_α exp((α−1)(r(α) − ε)).
        let dc = classic.delta(rc.epsilon).unwrap();
        let want_d = DEFAULT_ORDERS
            .iter()
            .map(|&a| ((a - 1.0) * (k * a / (2.0 * z * z) - rc.epsilon)).exp())
            .fold(f64::INFINITY, f64::min);
        assert!(
            close_above(dc.delta, want_d, 1e-10),
            "{} vs {want_d}",
            dc.delta
        );
        assert!(dc.delta <= delta * (1.0 + 1e-9));
    }
}

/// On a fine grid of orders, Mironov's conversion of the Gaussian curve approaches the
/// Bun–Steinke value `ρ + 2√(ρ ln 1/δ)` from above (the continuous optimum is
/// `α* = 1 + √(ln(1/δ)/ρ)`, where the two coincide).
#[test]
fn rdp_classic_on_fine_grid_approaches_bun_steinke() {
    let orders: Vec<f64> = (0..4000).map(|i| 1.0 + 0.01 * f64::from(i + 1)).collect();
    let mut a = RdpAccountantVec::new(AR, orders)
        .unwrap()
        .with_conversion(ConversionRule::Classic);
    a.compose_n(
        &Event::Gaussian {
            sigma: 3.0,
            sensitivity: 1.0,
        },
        50,
    )
    .unwrap();
    let rho: f64 = 50.0 / 18.0;
    let bs = rho + 2.0 * (rho * (1e6f64).ln()).sqrt();
    let e = a.epsilon(1e-6).unwrap().epsilon;
    assert!(
        e >= bs * (1.0 - 1e-12) && e <= bs * (1.0 + 1e-4),
        "{e} vs {bs}"
    );
}

#[test]
fn zcdp_classic_is_bun_steinke() {
    let mut classic = ZcdpAccountant::new(AR).with_conversion(ConversionRule::Classic);
    let mut tight = ZcdpAccountant::new(AR);
    let g = Event::Gaussian {
        sigma: 2.0,
        sensitivity: 1.0,
    };
    classic.compose_n(&g, 100).unwrap();
    tight.compose_n(&g, 100).unwrap();
    let rho = 12.5;
    for delta in [1e-3, 1e-6, 1e-12] {
        let l = -f64::ln(delta);
        let bs = rho + 2.0 * (rho * l).sqrt();
        let r = classic.epsilon(delta).unwrap();
        assert_eq!(r.conversion, Conversion::BunSteinke);
        assert!(close_above(r.epsilon, bs, 1e-12), "{} vs {bs}", r.epsilon);
        assert!(tight.epsilon(delta).unwrap().epsilon < r.epsilon);
        let d = classic.delta(bs).unwrap();
        let want = (-(bs - rho) * (bs - rho) / (4.0 * rho)).exp();
        assert!(close_above(d.delta, want, 1e-10), "{} vs {want}", d.delta);
    }
    // Below ρ the Bun–Steinke δ is trivial.
    assert_eq!(classic.delta(1.0).unwrap().delta, 1.0);
    // The convert-level functions agree with the accountant.
    let r = convert::zcdp_to_approx_with(classic.rho(), 1e-6, ConversionRule::Classic).unwrap();
    assert_eq!(r, classic.epsilon(1e-6).unwrap());
    assert_eq!(
        convert::zcdp_to_approx_with(rho, 1e-6, ConversionRule::Tightest).unwrap(),
        convert::zcdp_to_approx(rho, 1e-6).unwrap()
    );
}

/// The budget filter follows the accountant's rule: the classic conversion admits fewer
/// steps, and the count it admits one step at a time equals the direct
/// `poisson_gaussian_max_steps_rdp` call (issue item 7).
#[test]
fn filter_and_direct_max_steps_agree_for_both_rules() {
    let (eps, delta, z, q) = (1.0, 1e-5, 1.1, 0.01);
    let sub = Event::PoissonSampled {
        q,
        event: &Event::Gaussian {
            sigma: z,
            sensitivity: 1.0,
        },
    };
    let mut counts = Vec::new();
    for rule in [ConversionRule::Tightest, ConversionRule::Classic] {
        let direct =
            calibrate::poisson_gaussian_max_steps_rdp(eps, delta, z, q, &DEFAULT_ORDERS, rule)
                .unwrap();
        // The filter, fed in chunks then single steps (each admission is atomic).
        let mut f =
            BudgetFilter::new(RdpAccountant::new(AR).with_conversion(rule), eps, delta).unwrap();
        let mut admitted = 0u64;
        let mut chunk = 1024u64;
        while chunk > 0 {
            match f.try_compose_n(&sub, chunk) {
                Ok(_) => admitted += chunk,
                Err(AccountantError::BudgetExceeded { .. }) => chunk /= 2,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(admitted, direct, "{rule:?}");
        counts.push(direct);
    }
    assert!(counts[1] < counts[0], "{counts:?}");
    // q = 1: the plain Gaussian, against the closed form max_α ⌊(ε − ln(1/δ)/(α−1))·2z²/α⌋.
    let z = 20.0;
    let k = calibrate::poisson_gaussian_max_steps_rdp(
        2.0,
        1e-6,
        z,
        1.0,
        &DEFAULT_ORDERS,
        ConversionRule::Classic,
    )
    .unwrap();
    let want = DEFAULT_ORDERS
        .iter()
        .map(|&a| ((2.0 + (1e-6f64).ln() / (a - 1.0)) * 2.0 * z * z / a).floor())
        .fold(0.0, f64::max) as u64;
    assert!(k <= want && k + 1 >= want, "{k} vs {want}");
    // Validation: ε < 0, δ = 1, z = 0, z = NaN, q > 1, and an empty order grid.
    let max_steps = |epsilon, delta, z, q, orders: &[f64]| {
        calibrate::poisson_gaussian_max_steps_rdp(
            epsilon,
            delta,
            z,
            q,
            orders,
            ConversionRule::Tightest,
        )
    };
    for (epsilon, delta, z, q, orders) in [
        (-1.0, 1e-5, 1.0, 0.1, &DEFAULT_ORDERS[..]),
        (1.0, 1.0, 1.0, 0.1, &DEFAULT_ORDERS[..]),
        (1.0, 1e-5, 0.0, 0.1, &DEFAULT_ORDERS[..]),
        (1.0, 1e-5, f64::NAN, 0.1, &DEFAULT_ORDERS[..]),
        (1.0, 1e-5, 1.0, 1.5, &DEFAULT_ORDERS[..]),
        (1.0, 1e-5, 1.0, 0.1, &[][..]),
    ] {
        assert!(max_steps(epsilon, delta, z, q, orders).is_err());
    }
    assert_eq!(max_steps(1e-9, 1e-5, 0.5, 1.0, &DEFAULT_ORDERS).unwrap(), 0);
}

/// Calibration with the classic conversion: DP-Barker's count is exactly the closed form
/// `max_α ⌊(ε − ln(1/δ)/(α − 1))/ε(α)⌋` (thesis Theorems 1 and 8), and σ calibrated with
/// Mironov is larger than with the tightest conversion and meets the classic budget.
#[test]
fn calibration_with_classic_conversions() {
    let (eps, delta, batch, n) = (1.0, 1e-5, 1000u64, 100_000u64);
    let (k, _) =
        calibrate::dp_barker_max_steps_with(eps, delta, batch, n, 64, ConversionRule::Classic)
            .unwrap();
    let want = (2..=64u64)
        .filter(|a| 5 * a < batch)
        .map(|a| {
            let r = calibrate::dp_barker_rdp(batch, n, a).unwrap();
            ((eps + delta.ln() / (a as f64 - 1.0)) / r).floor().max(0.0)
        })
        .fold(0.0, f64::max) as u64;
    assert!(k <= want && k + 1 >= want, "{k} vs {want}");
    let (kt, _) = calibrate::dp_barker_max_steps(eps, delta, batch, n, 64).unwrap();
    assert!(kt > k);

    let s_t =
        calibrate::poisson_gaussian_sigma_rdp(1.0, 1e-5, 1000, 0.01, &DEFAULT_ORDERS).unwrap();
    let s_c = calibrate::poisson_gaussian_sigma_rdp_with(
        1.0,
        1e-5,
        1000,
        0.01,
        &DEFAULT_ORDERS,
        ConversionRule::Classic,
    )
    .unwrap();
    assert!(s_c > s_t);
    let mut a = RdpAccountant::new(AR).with_conversion(ConversionRule::Classic);
    a.compose_n(
        &Event::PoissonSampled {
            q: 0.01,
            event: &Event::Gaussian {
                sigma: s_c,
                sensitivity: 1.0,
            },
        },
        1000,
    )
    .unwrap();
    assert!(a.epsilon(1e-5).unwrap().epsilon <= 1.0);
}

#[test]
fn laplace_scale_helpers() {
    for &(eps, d) in &[(0.1, 1.0), (1.0, 0.37), (8.0, 1e-9), (1e-6, 5.0)] {
        let b = calibrate::laplace_scale(eps, d).unwrap();
        assert!(close_above(b, d / eps, 1e-13), "{b}");
        // b was rounded up, so its ε is at most the target (and within rounding of it).
        let e = calibrate::laplace_epsilon(b, d).unwrap();
        assert!(e <= eps * (1.0 + 1e-12) && e >= eps * (1.0 - 1e-12), "{e}");
        assert!(close_above(e, d / b, 1e-13), "{e}");
        // The pure accountant agrees on the Laplace event.
        let mut acc = PureAccountant::new(AR);
        acc.compose(&Event::Laplace {
            scale: b,
            sensitivity: d,
        })
        .unwrap();
        assert!(acc.total() <= eps * (1.0 + 1e-12));
    }
    assert!(calibrate::laplace_scale(0.0, 1.0).is_err());
    assert!(calibrate::laplace_scale(f64::NAN, 1.0).is_err());
    assert!(calibrate::laplace_scale(1.0, -1.0).is_err());
    assert!(calibrate::laplace_scale(1.0, 0.0).is_err());
    assert!(calibrate::laplace_scale(1e-320, 1e10).is_err()); // overflow → error, not ∞
    assert!(calibrate::laplace_epsilon(0.0, 1.0).is_err());
    assert_eq!(calibrate::laplace_epsilon(2.0, 0.0).unwrap(), 0.0);
}

/// Issue 13 defect 5: sparse vector with `c = 0` is the threshold alone, `Δ/b`.
#[test]
fn sparse_vector_c_zero_is_the_threshold_alone() {
    for resample in [false, true] {
        let e = curves::sparse_vector_epsilon(0, 4.0, 2.0, resample).unwrap();
        assert!(close_above(e, 0.5, 1e-13), "{e}");
        let one = curves::sparse_vector_epsilon(1, 4.0, 2.0, resample).unwrap();
        assert!(one > e);
        let mut acc = PureAccountant::new(AR);
        acc.compose(&Event::SparseVector {
            c: 0,
            scale: 4.0,
            sensitivity: 2.0,
            resample,
        })
        .unwrap();
        assert!(close_above(acc.total(), 0.5, 1e-12));
    }
}
