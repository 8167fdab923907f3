//! `exact_event()` describes the noise the samplers draw (grid units), consistently with the
//! mechanisms' own `event()`: same pure ε / zCDP ρ, accepted by the PLD accountant, whose
//! (ε, δ) is never above the pure-ε / zCDP-converted cost of the same release.
//! (The numerical PLD needs `alloc`.)
#![cfg(feature = "alloc")]

use dpinfer_accountants::convert::zcdp_to_approx;
use dpinfer_accountants::pld_numeric::Discretisation;
use dpinfer_accountants::{
    Accountant, AccountantError, PldAccountant, PureAccountant, ZcdpAccountant,
};
use dpinfer_mechanisms::{Event, Gaussian, Laplace, MechanismError, Neighbouring};

const REL: f64 = 1e-12;

/// `a` and `b` agree to a relative `REL`.
fn close(a: f64, b: f64) -> bool {
    a >= b * (1.0 - REL) && a <= b * (1.0 + REL)
}

const BOUNDS: [(f64, f64); 4] = [(0.0, 100.0), (-1e3, 1e3), (0.0, 1.0), (-3.5, 1e6)];
const DELTAS: [f64; 4] = [1e-3, 1e-5, 1e-7, 1e-9];

fn laplaces() -> Vec<Laplace> {
    let mut v = Vec::new();
    for &(lo, hi) in &BOUNDS {
        for &b in &[0.1, 0.5, 1.0, 2.0, 7.3, 100.0] {
            for &d in &[0.01, 1.0, 3.7, 50.0] {
                v.push(Laplace::new(b, d, lo, hi).unwrap());
            }
        }
        for &e in &[0.05, 0.5, 1.0, 3.0] {
            v.push(Laplace::from_epsilon(e, 1.0, lo, hi).unwrap());
        }
    }
    v
}

fn gaussians() -> Vec<Gaussian> {
    let mut v = Vec::new();
    for &(lo, hi) in &BOUNDS {
        for &s in &[0.1, 0.5, 1.0, 2.0, 7.3, 100.0] {
            for &d in &[0.01, 1.0, 3.7, 50.0] {
                v.push(Gaussian::new(s, d, lo, hi).unwrap());
            }
        }
        for &r in &[0.01, 0.1, 0.5, 2.0] {
            v.push(Gaussian::from_zcdp(r, 1.0, lo, hi).unwrap());
        }
    }
    v
}

fn pure_of(ev: &Event<'_>) -> f64 {
    let mut acc = PureAccountant::new(Neighbouring::AddRemove);
    acc.compose(ev).unwrap();
    acc.total()
}

fn rho_of(ev: &Event<'_>) -> f64 {
    let mut acc = ZcdpAccountant::new(Neighbouring::AddRemove);
    acc.compose(ev).unwrap();
    acc.rho()
}

/// The PLD accountant's ε(δ) after `count` releases; `None` when δ is below the numerical
/// PLD's truncation mass (a typed `DeltaTooSmall`, never a wrong number).
fn pld_epsilon(ev: &Event<'_>, count: u64, delta: f64) -> Option<f64> {
    let mut acc = PldAccountant::new(Neighbouring::AddRemove);
    acc.compose_n(ev, count).unwrap();
    match acc.epsilon(delta) {
        Ok(r) => Some(r.epsilon),
        Err(AccountantError::DeltaTooSmall { .. }) => None,
        Err(e) => panic!("{ev}: {e}"),
    }
}

/// `bound` plus the numerical PLD's pessimistic discretisation: each composed release's
/// privacy loss is rounded *up* to the grid of interval `h`, which can lift ε(δ) by up to
/// `count·h` above the true curve (and so above a bound that is tight at small δ, like
/// the pure ε of one Laplace release).
fn slack(bound: f64, count: u64) -> f64 {
    bound * (1.0 + REL) + count as f64 * Discretisation::default().interval()
}

#[test]
fn laplace_exact_event_is_the_sampler_in_grid_units() {
    for m in laplaces() {
        let Event::DiscreteLaplace { scale, sensitivity } = m.exact_event().unwrap() else {
            panic!("not a DiscreteLaplace event");
        };
        let g = m.grid().to_f64(1);
        // β·g is the requested scale b exactly (t/s is exact, g a power of two).
        assert_eq!(scale * g, m.scale(), "{m:?}");
        // k·g is the mechanism's Δ′ exactly.
        assert_eq!(sensitivity as f64 * g, m.effective_sensitivity(), "{m:?}");
        // Δ′ covers the declared Δ unless the clamp caps it.
        assert!(sensitivity >= 1, "{m:?}");
    }
}

#[test]
fn laplace_exact_event_has_the_mechanisms_pure_epsilon() {
    for m in laplaces() {
        let ev = m.exact_event().unwrap();
        let eps = pure_of(&ev);
        assert!(close(eps, m.epsilon()), "{m:?}: {eps} vs {}", m.epsilon());
        assert!(close(eps, pure_of(&m.event())), "{m:?}");
    }
}

#[test]
fn laplace_pld_of_exact_event_is_at_most_pure_epsilon() {
    let (mut checked, mut strict) = (0, 0);
    for m in laplaces().into_iter().step_by(6) {
        let ev = m.exact_event().unwrap();
        for &count in &[1u64, 10] {
            let pure = count as f64 * m.epsilon();
            for &delta in &DELTAS {
                let Some(e) = pld_epsilon(&ev, count, delta) else {
                    continue;
                };
                assert!(e.is_finite() && e >= 0.0, "{m:?}");
                assert!(
                    e <= slack(pure, count),
                    "{m:?} ×{count} δ={delta}: {e} > {pure}"
                );
                checked += 1;
                strict += usize::from(e < pure * 0.99);
            }
        }
    }
    // Most (ε, δ) pairs are answered, and composition makes the exact PLD strictly tighter.
    assert!(checked >= 40, "{checked}");
    assert!(strict >= 10, "{strict}");
}

#[test]
fn gaussian_exact_event_is_the_sampler_in_grid_units() {
    for m in gaussians() {
        let Event::DiscreteGaussian { sigma, sensitivity } = m.exact_event().unwrap() else {
            panic!("not a DiscreteGaussian event");
        };
        let g = m.grid().to_f64(1);
        assert_eq!(sigma, sigma.round(), "{m:?}");
        assert_eq!(sigma * g, m.effective_sigma(), "{m:?}");
        // k = ⌈Δ/g⌉ unless the clamp width caps it; Δ′ is k·g nudged up once.
        let k = sensitivity as f64;
        let eff = m.effective_sensitivity();
        assert!(k * g < eff && eff <= (k * g).next_up().next_up(), "{m:?}");
        let uncapped = (m.sensitivity() / g).ceil();
        assert!(k <= uncapped, "{m:?}");
        if k < uncapped {
            // capped: k is the clamp width W, and W·g ≤ hi − lo + g
            assert!(k * g < m.sensitivity(), "{m:?}");
        }
    }
}

#[test]
fn gaussian_exact_event_has_the_mechanisms_rho() {
    for m in gaussians() {
        let ev = m.exact_event().unwrap();
        let rho = rho_of(&ev);
        assert!(close(rho, m.rho()), "{m:?}: {rho} vs {}", m.rho());
        assert!(close(rho, rho_of(&m.event())), "{m:?}");
    }
}

#[test]
fn gaussian_pld_of_exact_event_is_at_most_zcdp_epsilon() {
    let (mut checked, mut strict) = (0, 0);
    for m in gaussians().into_iter().step_by(4) {
        let ev = m.exact_event().unwrap();
        // PLD rejects the zCDP event the mechanism reports; it accepts the exact one.
        let mut acc = PldAccountant::new(Neighbouring::AddRemove);
        assert!(acc.compose(&m.event()).is_err());
        match acc.compose(&ev) {
            Ok(()) => {}
            // Beyond the numerical PLD's lattice range (k/σ_u > 2·10⁻⁶·σ_u, never for
            // ρ ≤ 140 on these grids): a typed error, never a number.
            Err(AccountantError::InvalidParameter { name: "sigma", .. }) if m.rho() > 140.0 => {
                continue;
            }
            Err(e) => panic!("{m:?}: {e}"),
        }
        for &count in &[1u64, 10] {
            for &delta in &DELTAS {
                let zc = zcdp_to_approx(count as f64 * m.rho(), delta)
                    .unwrap()
                    .epsilon;
                let Some(e) = pld_epsilon(&ev, count, delta) else {
                    continue;
                };
                assert!(e.is_finite() && e >= 0.0, "{m:?}");
                assert!(
                    e <= slack(zc, count),
                    "{m:?} ×{count} δ={delta}: {e} > {zc}"
                );
                checked += 1;
                strict += usize::from(e < zc * 0.99);
            }
        }
    }
    assert!(checked >= 40, "{checked}");
    assert!(strict >= 10, "{strict}");
}

#[test]
fn vector_mechanisms_have_no_exact_event() {
    let dim_err = Err(MechanismError::OutOfRange { param: "dim" });
    for dim in [2usize, 3, 17] {
        let l = Laplace::vector(dim, 1.0, 1.0, 0.0, 10.0).unwrap();
        assert_eq!(l.exact_event(), dim_err);
        let g = Gaussian::vector(dim, 1.0, 1.0, 0.0, 10.0).unwrap();
        assert_eq!(g.exact_event(), dim_err);
    }
    // dim = 1 through the vector constructors is the scalar mechanism.
    let l = Laplace::vector(1, 1.0, 1.0, 0.0, 10.0).unwrap();
    assert_eq!(
        l.exact_event(),
        Laplace::new(1.0, 1.0, 0.0, 10.0).unwrap().exact_event()
    );
    let g = Gaussian::vector(1, 1.0, 1.0, 0.0, 10.0).unwrap();
    assert_eq!(
        g.exact_event(),
        Gaussian::new(1.0, 1.0, 0.0, 10.0).unwrap().exact_event()
    );
}

#[test]
fn bad_parameters_are_typed_errors_before_any_event() {
    for bad in [f64::NAN, f64::INFINITY, 0.0, -1.0] {
        assert!(Laplace::new(bad, 1.0, 0.0, 1.0).is_err());
        assert!(Laplace::new(1.0, bad, 0.0, 1.0).is_err());
        assert!(Gaussian::new(bad, 1.0, 0.0, 1.0).is_err());
        assert!(Gaussian::new(1.0, bad, 0.0, 1.0).is_err());
    }
    assert!(matches!(
        Laplace::new(1.0, 1.0, 1.0, 0.0),
        Err(MechanismError::EmptyInterval { .. })
    ));
    assert!(matches!(
        Gaussian::new(1.0, 1.0, 0.0, f64::NAN),
        Err(MechanismError::NonFinite { .. })
    ));
}
