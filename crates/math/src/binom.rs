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
    let mut s = STIRLING[6];
    for &ck in STIRLING[..6].iter().rev() {
        s = ck + r2 * s;
    }
    s * r
}

/// `B_{2k} / (2k (2k−1))` for `k = 1..7`: the Stirling remainder is `Σ_k STIRLING[k−1]·x^{1−2k}`.
const STIRLING: [f64; 7] = [
    1.0 / 12.0,
    -1.0 / 360.0,
    1.0 / 1260.0,
    -1.0 / 1680.0,
    1.0 / 1188.0,
    -691.0 / 360_360.0,
    1.0 / 156.0,
];

/// `ln B(a, b)` for `a, b > 0`, following the region split of R's `lbeta` (Morris's
/// `algama`/`lgammacor` approach) with the Stirling remainder in place of the Chebyshev
/// series: no cancellation between huge log-gammas.
fn ln_beta(a: f64, b: f64) -> f64 {
    let p = a.min(b);
    let q = a.max(b);
    if p >= 10.0 {
        let corr = stirling_corr(p) + stirling_corr(q) - stirling_corr(p + q);
        let s = p + q;
        return -0.5 * libm::log(q)
            + LN_SQRT_2PI
            + corr
            + (p - 0.5) * libm::log(p / s)
            + q * libm::log1p(-p / s);
    }
    if q >= 10.0 {
        let corr = stirling_corr(q) - stirling_corr(p + q);
        let s = p + q;
        return ln_gamma(p) + corr + p - p * libm::log(s) + (q - 0.5) * libm::log1p(-p / s);
    }
    ln_gamma(p) + ln_gamma(q) - ln_gamma(p + q)
}

/// `ln Γ(1 + x)` for `0 ≤ x ≤ ½` to full relative accuracy (the argument `1 + x` is never
/// formed), from Abramowitz & Stegun 6.1.41:
/// `ln Γ(1+x) = −ln(1+x) + x(1−γ) + Σ_{j≥2} (−1)^j (ζ(j)−1)/j · x^j`.
fn ln_gamma1p_small(x: f64) -> f64 {
    // (−1)^j (ζ(j) − 1)/j for j = 2..=31 (mpmath, 30 digits); |term| < 4^-j there.
    const C: [f64; 30] = [
        3.22467033424113203e-01,
        -6.73523010531981020e-02,
        2.05808084277845464e-02,
        -7.38555102867398568e-03,
        2.89051033074152336e-03,
        -1.19275391170326102e-03,
        5.09669524743042450e-04,
        -2.23154758453579386e-04,
        9.94575127818085310e-05,
        -4.49262367381331420e-05,
        2.05072127756706911e-05,
        -9.43948827526839672e-06,
        4.37486678990748817e-06,
        -2.03921575380136619e-06,
        9.55141213040741935e-07,
        -4.49246919876456619e-07,
        2.12071848055546646e-07,
        -1.00432248239680991e-07,
        4.76981016936398040e-08,
        -2.27110946089431635e-08,
        1.08386592148969546e-08,
        -5.18347504197004664e-09,
        2.48367454380247848e-09,
        -1.19214014058609115e-09,
        5.73136724167886225e-10,
        -2.75952288512423336e-10,
        1.33047643742444888e-10,
        -6.42296456383809960e-11,
        3.10442477473222756e-11,
        -1.50213840807541417e-11,
    ];
    const ONE_MINUS_EULER_GAMMA: f64 = 4.22784335098467134e-01;
    let mut s = 0.0;
    for &c in C.iter().rev() {
        s = c + x * s;
    }
    (x * ONE_MINUS_EULER_GAMMA + x * x * s) - libm::log1p(x)
}

/// `D(a, k) = ln Γ(a) − ln Γ(a − k)` for `0 < k < 1 ≤ a − k`, accurate relative to `k`.
///
/// For `a − k ≥ 10` the Stirling form is rearranged so nothing cancels:
/// `D = −(a − ½)·L + k·(ln(a−k) − 1) + Σ_j c_j (a−k)^{−m}·expm1(m·L)`, with `L = ln(1 − k/a)`
/// and `m = 2j − 1` (the remainder difference `ω(a) − ω(a−k)` written as a product with `expm1`).
/// Below that, `D(a, k) = D(a + 1, k) + ln(1 − k/a)` shifts the argument up.
fn ln_gamma_ratio_small(a: f64, k: f64) -> f64 {
    let mut a = a;
    let mut shift = 0.0;
    while a - k < 10.0 {
        shift += libm::log1p(-k / a);
        a += 1.0;
    }
    let b = a - k;
    let l = libm::log1p(-k / a);
    let mut omega = 0.0;
    let mut bm = 1.0 / b; // b^{-m}
    let inv_b2 = bm * bm;
    let mut m = 1.0;
    for &c in &STIRLING {
        omega += c * bm * libm::expm1(m * l);
        bm *= inv_b2;
        m += 2.0;
    }
    (-(a - 0.5) * l + k * (libm::log(b) - 1.0) + omega) + shift
}

/// `ln C(n, k) = ln Γ(n+1) − ln Γ(k+1) − ln Γ(n−k+1)` for real `0 ≤ k ≤ n`.
///
/// With `k ← min(k, n − k)`: integer arguments below 2⁶⁴ go through the exact integer path of
/// [`ln_binomial_int`]; `k < 1` uses `ln Γ(n+1) − ln Γ(n+1−k)` in a cancellation-free Stirling
/// form minus a series for `ln Γ(1+k)` (so `ln C(n, 10⁻¹⁰)` keeps full relative accuracy);
/// otherwise `−ln(n+1) − ln B(n−k+1, k+1)` with a cancellation-free log-beta, so it keeps
/// full relative accuracy for `n` up to 10³⁰⁰ with small or large `k`.
///
/// Returns NaN for NaN inputs, for `k < 0` or `k > n`, and `+∞` for infinite `n` with finite
/// `k > 0` (`ln C(∞, 0) = 0`).
#[must_use]
pub fn ln_binomial(n: f64, k: f64) -> f64 {
    if n.is_nan() || k.is_nan() || k < 0.0 || k > n {
        return f64::NAN;
    }
    if n.is_infinite() {
        return if k.is_infinite() {
            f64::NAN
        } else if k == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
    }
    // C(n, k) = C(n, n − k); n − k is exact when k ≥ n/2 (Sterbenz).
    let k = k.min(n - k);
    if k <= 0.0 {
        return 0.0;
    }
    if n < TWO_POW_64 && is_integer(n) && is_integer(k) {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "n and k are integers in [0, 2^64), checked just above"
        )]
        return ln_binomial_int(n as u64, k as u64);
    }
    ln_binomial_real(n, k)
}

/// Whether the finite `x` is an integer.
#[allow(clippy::float_cmp, reason = "exactness is the question asked")]
fn is_integer(x: f64) -> bool {
    libm::floor(x) == x
}

/// 2⁶⁴ as f64.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// [`ln_binomial`] for `0 < k ≤ n/2`, finite, without the integer shortcut.
fn ln_binomial_real(n: f64, k: f64) -> f64 {
    #[allow(clippy::float_cmp, reason = "C(n, 1) = n exactly")]
    let k_is_one = k == 1.0;
    if k_is_one {
        return libm::log(n);
    }
    if k < 1.0 {
        let lg1p = if k <= 0.5 {
            ln_gamma1p_small(k)
        } else {
            ln_gamma(1.0 + k)
        };
        return ln_gamma_ratio_small(n + 1.0, k) - lg1p;
    }
    if n < 20.0 {
        // Γ does not overflow here; one log of a product of three Γ values (each within a few
        // ulp) is more accurate than a difference of three log-gammas.
        return libm::log(
            libm::tgamma(n + 1.0) / (libm::tgamma(k + 1.0) * libm::tgamma(n - k + 1.0)),
        );
    }
    -libm::log1p(n) - ln_beta(n - k + 1.0, k + 1.0)
}

/// `ln C(n, k)` for integers. Exact (`ln` of the exact integer, so within about one ulp)
/// while `C(n, k)` fits in a `u128`, otherwise the real-argument formula of [`ln_binomial`].
///
/// Returns `−∞` for `k > n` (the coefficient is 0).
#[must_use]
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
    for i in 1..=u128::from(k) {
        match c.checked_mul(u128::from(n) - i + 1) {
            Some(v) => c = v / i,
            None => return ln_binomial_real(u64_to_f64(n), u64_to_f64(k)),
        }
    }
    libm::log(u128_to_f64(c))
}

/// `x` rounded to the nearest f64.
#[allow(
    clippy::cast_precision_loss,
    reason = "rounding to nearest is the intent"
)]
fn u64_to_f64(x: u64) -> f64 {
    x as f64
}

/// `x` rounded to the nearest f64 (Rust's `as` conversion rounds to nearest, ties to even).
#[allow(
    clippy::cast_precision_loss,
    reason = "rounding to nearest is the intent"
)]
fn u128_to_f64(x: u128) -> f64 {
    x as f64
}
