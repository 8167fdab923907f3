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
    const ONE_MINUS_EULER_GAMMA: f64 = 4.22784335098467134e-01;
    let mut s = 0.0;
    // Terms beyond j = 31 are below 4^-31 for x ≤ ½.
    for &c in ZETA_M1[..30].iter().rev() {
        s = c + x * s;
    }
    (x * ONE_MINUS_EULER_GAMMA + x * x * s) - libm::log1p(x)
}

/// `(−1)^j (ζ(j) − 1)/j` for `j = 2..=61` (mpmath, 40 digits); `|ZETA_M1[j−2]| < 1.5·2^-j/j`.
const ZETA_M1: [f64; 60] = [
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
    7.27597448023907917e-12,
    -3.52774247657591507e-12,
    1.71199179055961798e-12,
    -8.31538584142028498e-13,
    4.04220052528944019e-13,
    -1.96647563109661653e-13,
    9.57363038783855557e-14,
    -4.66407602642837444e-14,
    2.27373696006597242e-14,
    -1.10913994708345222e-14,
    5.41365915672536329e-15,
    -2.64388001786099486e-15,
    1.29189590627899665e-15,
    -6.31593550419844815e-16,
    3.08931626696339301e-16,
    -1.51179306281081982e-16,
    7.40148685695231987e-17,
    -3.62521804812065382e-17,
    1.77635684218616332e-17,
    -8.70763157479179055e-18,
    4.27008855922700379e-18,
    -2.09476042479446429e-18,
    1.02798428237879280e-18,
    -5.04646829479295333e-19,
    2.47817639459379169e-19,
    -1.21734980781476371e-19,
    5.98180508994124626e-20,
    -2.94020928143657030e-20,
    1.44560289668665558e-20,
    -7.10952244265680470e-21,
];

/// `ln C(n, k)` for `0 < k ≤ n/2`, `n ≤ 1`, with `m = n − k`. From A&S 6.1.41,
/// `ln Γ(1+x) = −ln(1+x) + (1−γ)x + Σ_{j≥2} (−1)^j (ζ(j)−1)/j·x^j`; the linear terms cancel
/// exactly and the logarithms combine to `ln((1+k)(1+m)/(1+n)) = ln(1 + km/(1+n))`, so
/// `ln C(n, k) = log1p(km/(1+n)) + Σ_{j≥2} (−1)^j (ζ(j)−1)/j·P_j` with
/// `P_j = n^j − k^j − m^j`, computed without cancellation by `P_2 = 2km`,
/// `P_j = n·P_{j−1} + km·(k^{j−2} + m^{j−2})`. The terms fall like `(n/2)^j`.
fn ln_binomial_small_n(n: f64, k: f64) -> f64 {
    let m = n - k;
    let km = k * m;
    let mut p = 2.0 * km;
    let mut s = ZETA_M1[0] * p;
    let (mut pk, mut pm) = (k, m); // k^{j−2}, m^{j−2}
    for &c in &ZETA_M1[1..] {
        p = n * p + km * (pk + pm);
        pk *= k;
        pm *= m;
        let t = c * p;
        s += t;
        if t.abs() <= 1e-18 * s {
            break;
        }
    }
    libm::log1p(km / (1.0 + n)) + s
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
    if n <= 1.0 {
        return ln_binomial_small_n(n, k);
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
        // With i = ⌊k⌋, f = k − i: C(n, k) = Π_{j<i} (n−j)/(k−j) · C(n−i, f). For n < 20 every
        // n − j and k − j here is exact, so the product carries about 2i roundings.
        let i = libm::floor(k);
        let mut prod = 1.0;
        let mut j = 0.0;
        while j < i {
            prod *= (n - j) / (k - j);
            j += 1.0;
        }
        let rest = n - i;
        let f = k - i;
        let f = f.min(rest - f);
        let tail = if f <= 0.0 {
            0.0
        } else {
            ln_binomial_real(rest, f)
        };
        return libm::log(prod) + tail;
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
