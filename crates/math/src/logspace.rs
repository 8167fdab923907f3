//! Log-space arithmetic: `ln(e^a + e^b)`, `ln(e^a − e^b)`, `ln(1 − e^x)`, log-sum-exp,
//! softplus and the log-logistic function.

use core::f64::consts::LN_2;

/// `ln(e^a + e^b)` without overflow.
///
/// `-∞` acts as the additive identity (`log_add_exp(-∞, b) = b`); NaN in gives NaN out;
/// `log_add_exp(+∞, x) = +∞`.
#[inline]
#[must_use]
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::INFINITY || lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + libm::log1p(libm::exp(lo - hi))
}

/// `ln(e^a − e^b)` for `a ≥ b`, without overflow and with full relative accuracy.
///
/// Returns `-∞` when `a == b` (including both `-∞`) and NaN when `a < b`, when either input
/// is NaN, or when `a = b = +∞`.
#[inline]
#[must_use]
pub fn log_sub_exp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() || a < b {
        return f64::NAN;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    if a == f64::INFINITY {
        return if b == f64::INFINITY { f64::NAN } else { a };
    }
    a + log1mexp(b - a)
}

/// `ln(1 − e^x)` for `x ≤ 0`, accurate everywhere (Mächler 2012: `ln(−expm1(x))` for
/// `x > −ln 2`, `log1p(−e^x)` below).
///
/// Returns `-∞` at `x = 0` (also `-0.0`), `0` at `x = −∞`, NaN for `x > 0` or NaN.
///
/// # References
/// M. Mächler, "Accurately computing log(1 − exp(−|a|))", Rmpfr vignette, 2012.
#[inline]
#[must_use]
pub fn log1mexp(x: f64) -> f64 {
    if x.is_nan() || x > 0.0 {
        return f64::NAN;
    }
    if x > -LN_2 {
        libm::log(-libm::expm1(x))
    } else {
        libm::log1p(-libm::exp(x))
    }
}

/// `ln Σ e^{x_i}` over a slice, max-shifted so it never overflows.
///
/// An empty slice gives `-∞` (the log of an empty sum). Any NaN gives NaN. If any entry is
/// `+∞` the result is `+∞`.
#[must_use]
pub fn logsumexp(xs: &[f64]) -> f64 {
    logsumexp_iter(xs.iter().copied())
}

/// `ln Σ e^{x_i}` over an iterator in one pass (streaming rescaling), with the same
/// conventions as [`logsumexp`].
#[must_use]
pub fn logsumexp_iter<I: IntoIterator<Item = f64>>(xs: I) -> f64 {
    let mut m = f64::NEG_INFINITY;
    let mut s = 0.0_f64; // Σ e^{x_i − m}
    for x in xs {
        if x.is_nan() {
            return f64::NAN;
        }
        if x == f64::INFINITY {
            m = f64::INFINITY;
            s = 1.0;
            continue;
        }
        if m == f64::INFINITY || x == f64::NEG_INFINITY {
            continue;
        }
        if x <= m {
            s += libm::exp(x - m);
        } else {
            s = s * libm::exp(m - x) + 1.0;
            m = x;
        }
    }
    if m.is_infinite() {
        return m;
    }
    m + libm::log(s)
}

/// `softplus(x) = ln(1 + e^x)`, computed as `max(x, 0) + log1p(e^{−|x|})` (never overflows).
///
/// NaN in gives NaN out; `softplus(+∞) = +∞`, `softplus(−∞) = 0`.
#[inline]
#[must_use]
pub fn softplus(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    x.max(0.0) + libm::log1p(libm::exp(-x.abs()))
}

/// The log of the logistic function, `ln σ(x) = −softplus(−x)`: the log acceptance
/// probability of the Barker test.
///
/// NaN in gives NaN out; `log_logistic(−∞) = −∞`, `log_logistic(+∞) = 0`.
#[inline]
#[must_use]
pub fn log_logistic(x: f64) -> f64 {
    -softplus(-x)
}
