//! Log-gamma and log-binomial coefficients.

use crate::LN_SQRT_2PI;

/// `ln |Γ(x)|` (from `libm::lgamma_r`).
///
/// NaN gives NaN; poles (`x = 0, −1, −2, …`) give `+∞`.
#[inline]
#[must_use]
pub fn ln_gamma(x: f64) -> f64 {
    libm::lgamma_r(x).0
}

/// The Stirling remainder `ω(x) = ln Γ(x) − [(x − ½)·ln x − x + ln √(2π)]` for `x ≥ 10`,
/// from the Bernoulli-number series (7 terms: relative error below 1e-17 at `x = 10`).
fn stirling_corr(x: f64) -> f64 {
    let r = 1.0 / x;
    let r2 = r * r;
    // B_{2k} / (2k (2k−1)) for k = 1..7
    let c = [
        1.0 / 12.0,
        -1.0 / 360.0,
        1.0 / 1260.0,
        -1.0 / 1680.0,
        1.0 / 1188.0,
        -691.0 / 360_360.0,
        1.0 / 156.0,
    ];
    let mut s = c[6];
    for &ck in c[..6].iter().rev() {
        s = ck + r2 * s;
    }
    s * r
}

/// `ln B(a, b)` for `a, b > 0`, following the region split of R's `lbeta` (Morris's
/// `algama`/`lgammacor` approach) with the Stirling remainder in place of the Chebyshev
/// series: no cancellation between huge log-gammas.
fn ln_beta(a: f64, b: f64) -> f64 {
    let p = a.min(b);
    let q = a.max(b);
    if p >= 10.0 {
        let corr = stirling_corr(p) + stirling_corr(q) - stirling_corr(p + q);
        let s = p + q;
        return -0.5 * libm::log(q) + LN_SQRT_2PI + corr + (p - 0.5) * libm::log(p / s)
            + q * libm::log1p(-p / s);
    }
    if q >= 10.0 {
        let corr = stirling_corr(q) - stirling_corr(p + q);
        let s = p + q;
        return ln_gamma(p) + corr + p - p * libm::log(s) + (q - 0.5) * libm::log1p(-p / s);
    }
    ln_gamma(p) + ln_gamma(q) - ln_gamma(p + q)
}

/// `ln C(n, k) = ln Γ(n+1) − ln Γ(k+1) − ln Γ(n−k+1)` for real `0 ≤ k ≤ n`.
///
/// Evaluated as `−ln(n+1) − ln B(n−k+1, k+1)` with a cancellation-free log-beta, so it keeps
/// full relative accuracy for `n` up to 10³⁰⁰ with small or large `k`.
///
/// Returns NaN for NaN inputs, for `k < 0` or `k > n`, and `+∞` for infinite `n` with finite
/// `k > 0` (`ln C(∞, 0) = 0`).
#[must_use]
pub fn ln_binomial(n: f64, k: f64) -> f64 {
    if n.is_nan() || k.is_nan() || k < 0.0 || k > n {
        return f64::NAN;
    }
    if k == 0.0 || k == n {
        return 0.0;
    }
    if n.is_infinite() {
        return if k.is_infinite() { f64::NAN } else { f64::INFINITY };
    }
    // Use the smaller of k and n−k as the second argument: C(n,k) = C(n,n−k).
    let k = k.min(n - k);
    if k == 1.0 {
        return libm::log(n);
    }
    -libm::log1p(n) - ln_beta(n - k + 1.0, k + 1.0)
}

/// `ln C(n, k)` for integers. Exact (correctly rounded `ln` of the exact integer) while
/// `C(n, k)` fits in a `u128`, otherwise [`ln_binomial`] on the f64 values.
///
/// Returns `−∞` for `k > n` (the coefficient is 0).
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn ln_binomial_int(n: u64, k: u64) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    let k = k.min(n - k);
    if k == 0 {
        return 0.0;
    }
    // Multiplicative formula C(n, i) = C(n, i−1)·(n−i+1)/i stays integral at every step.
    let mut c: u128 = 1;
    let mut exact = true;
    for i in 1..=u128::from(k) {
        match c.checked_mul(u128::from(n) - i + 1) {
            Some(v) => c = v / i,
            None => {
                exact = false;
                break;
            }
        }
    }
    if exact {
        // ln of a u128: split into high and low 64-bit halves to keep rounding small.
        let hi = (c >> 64) as u64;
        let lo = c as u64;
        if hi == 0 {
            return libm::log(lo as f64);
        }
        let v = (hi as f64) * 18_446_744_073_709_551_616.0 + lo as f64;
        return libm::log(v);
    }
    ln_binomial(n as f64, k as f64)
}
