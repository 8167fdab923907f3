//! Generic property checks any [`Accountant`] must pass (feature `testkit`; STYLE E16).
//!
//! Each check builds fresh accountants with the caller's factory, composes events, and
//! returns `Err(Violation)` describing the first broken property. Other DP systems that embed
//! this crate can run the same checks against their own accountants.
//!
//! ```
//! use dpinfer_accountants::{Neighbouring, RdpAccountant, testkit};
//! let make = || RdpAccountant::new(Neighbouring::AddRemove);
//! testkit::gaussian_suite(make, 2.0, 1e-5).unwrap();
//! ```

use crate::{Accountant, AccountantError, Event, pld};

/// A violated property.
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct Violation {
    /// Which check failed.
    pub check: &'static str,
    /// The value that should have been at least (or at most) `bound`.
    pub value: f64,
    /// The bound it was compared to.
    pub bound: f64,
}

/// Result of a check.
pub type Check = Result<(), Violation>;

fn eps<A: Accountant>(
    make: &impl Fn() -> A,
    ev: &Event<'_>,
    count: u64,
    delta: f64,
    check: &'static str,
) -> Result<f64, Violation> {
    let mut a = make();
    let fail = |_: AccountantError| Violation {
        check,
        value: f64::NAN,
        bound: f64::NAN,
    };
    a.compose_n(ev, count).map_err(fail)?;
    let r = a.epsilon(delta).map_err(fail)?;
    if r.epsilon.is_nan() || r.epsilon < 0.0 {
        return Err(Violation {
            check,
            value: r.epsilon,
            bound: 0.0,
        });
    }
    Ok(r.epsilon)
}

fn le(check: &'static str, value: f64, bound: f64) -> Check {
    // 1e-12 relative slack: both sides are independently rounded up.
    if value <= bound * (1.0 + 1e-12) + 1e-300 {
        Ok(())
    } else {
        Err(Violation {
            check,
            value,
            bound,
        })
    }
}

/// ε is non-decreasing in the number of steps (k vs k + 1 and 2k).
///
/// # Errors
/// The violated property.
pub fn monotone_in_steps<A: Accountant>(
    make: impl Fn() -> A,
    ev: &Event<'_>,
    k: u64,
    delta: f64,
) -> Check {
    let a = eps(&make, ev, k, delta, "steps")?;
    let b = eps(&make, ev, k + 1, delta, "steps")?;
    let c = eps(&make, ev, k.saturating_mul(2), delta, "steps")?;
    le("monotone in steps", a, b)?;
    le("monotone in steps", b.min(c), c.max(b))
}

/// ε is non-increasing in δ (`d1 < d2` ⇒ ε(d2) ≤ ε(d1)).
///
/// # Errors
/// The violated property.
pub fn monotone_in_delta<A: Accountant>(
    make: impl Fn() -> A,
    ev: &Event<'_>,
    k: u64,
    d1: f64,
    d2: f64,
) -> Check {
    let (lo, hi) = if d1 < d2 { (d1, d2) } else { (d2, d1) };
    let e_lo = eps(&make, ev, k, lo, "delta")?;
    let e_hi = eps(&make, ev, k, hi, "delta")?;
    le("non-increasing in delta", e_hi, e_lo)
}

/// For a Gaussian: ε non-increasing in σ and non-decreasing in Δ.
///
/// # Errors
/// The violated property.
pub fn monotone_in_noise_and_sensitivity<A: Accountant>(
    make: impl Fn() -> A,
    sigma: f64,
    k: u64,
    delta: f64,
) -> Check {
    let g = |s: f64, d: f64| Event::Gaussian {
        sigma: s,
        sensitivity: d,
    };
    let base = eps(&make, &g(sigma, 1.0), k, delta, "noise")?;
    let more_noise = eps(&make, &g(sigma * 1.5, 1.0), k, delta, "noise")?;
    let more_sens = eps(&make, &g(sigma, 1.5), k, delta, "sensitivity")?;
    le("non-increasing in noise", more_noise, base)?;
    le("non-decreasing in sensitivity", base, more_sens)
}

/// Poisson subsampling never increases ε, and `q = 1` equals the base mechanism.
///
/// # Errors
/// The violated property.
pub fn subsampling<A: Accountant>(
    make: impl Fn() -> A,
    sigma: f64,
    q: f64,
    k: u64,
    delta: f64,
) -> Check {
    let g = Event::Gaussian {
        sigma,
        sensitivity: 1.0,
    };
    let base = eps(&make, &g, k, delta, "subsampling")?;
    let sub = eps(
        &make,
        &Event::PoissonSampled { q, event: &g },
        k,
        delta,
        "subsampling",
    )?;
    le("subsampled <= unsubsampled", sub, base)?;
    let one = eps(
        &make,
        &Event::PoissonSampled { q: 1.0, event: &g },
        k,
        delta,
        "q = 1",
    )?;
    le("q = 1 equals base", one, base * (1.0 + 1e-9))?;
    le("q = 1 equals base", base, one * (1.0 + 1e-9))
}

/// Composition is order-independent: `a` then `b` equals `b` then `a` (to 1e-12 relative).
///
/// # Errors
/// The violated property.
pub fn order_independent<A: Accountant>(
    make: impl Fn() -> A,
    a: &Event<'_>,
    b: &Event<'_>,
    delta: f64,
) -> Check {
    let run = |x: &Event<'_>, y: &Event<'_>| -> Result<f64, Violation> {
        let mut acc = make();
        let fail = |_| Violation {
            check: "order",
            value: f64::NAN,
            bound: f64::NAN,
        };
        acc.compose(x).map_err(fail)?;
        acc.compose(y).map_err(fail)?;
        Ok(acc.epsilon(delta).map_err(fail)?.epsilon)
    };
    let ab = run(a, b)?;
    let ba = run(b, a)?;
    le("order independent", ab, ba * (1.0 + 1e-12))?;
    le("order independent", ba, ab * (1.0 + 1e-12))
}

/// Every accountant reports at least the exact ε of `k` Gaussian releases (the Gaussian PLD,
/// Sommer–Meiser–Mohammadi 2019), which no valid bound can beat.
///
/// # Errors
/// The violated property.
pub fn at_least_exact_gaussian<A: Accountant>(
    make: impl Fn() -> A,
    sigma: f64,
    k: u64,
    delta: f64,
) -> Check {
    let g = Event::Gaussian {
        sigma,
        sensitivity: 1.0,
    };
    let ours = eps(&make, &g, k, delta, "exact gaussian")?;
    let mu = crate::curves::gaussian_mu(sigma, 1.0).map_err(|_| Violation {
        check: "exact gaussian",
        value: sigma,
        bound: f64::NAN,
    })?;
    #[allow(clippy::cast_precision_loss)]
    let exact = pld::epsilon_for_delta(mu * k as f64, delta).map_err(|_| Violation {
        check: "exact gaussian",
        value: sigma,
        bound: f64::NAN,
    })?;
    // `exact` is itself rounded up by ~1e-14; allow that much.
    le(
        "at least the exact Gaussian epsilon",
        exact,
        ours * (1.0 + 1e-12),
    )
}

/// Runs every Gaussian check above with fixed, representative parameters.
///
/// # Errors
/// The first violated property.
pub fn gaussian_suite<A: Accountant>(make: impl Fn() -> A, sigma: f64, delta: f64) -> Check {
    let g = Event::Gaussian {
        sigma,
        sensitivity: 1.0,
    };
    monotone_in_steps(&make, &g, 10, delta)?;
    monotone_in_delta(&make, &g, 10, delta, delta * 10.0)?;
    monotone_in_noise_and_sensitivity(&make, sigma, 10, delta)?;
    let g2 = Event::Gaussian {
        sigma: sigma * 2.0,
        sensitivity: 1.0,
    };
    order_independent(&make, &g, &g2, delta)?;
    at_least_exact_gaussian(&make, sigma, 10, delta)
}
