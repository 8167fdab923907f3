//! Small samplers built only on `libm`, so every draw is bit-identical on every platform.
//!
//! `rand_distr` samples through `num_traits::Float`, whose backend switches to the platform
//! `libm` as soon as any crate in the graph enables `num-traits/std`; the simulators must give
//! the same numbers on x86_64, thumbv7em and wasm32 (ARCHITECTURE.md, "Results are identical"),
//! so the few distributions the models need are implemented here with `libm` directly.
//! All functions take any `R: rand_core::Rng + ?Sized`; they are meant for public (simulation)
//! randomness.
//!
//! # References
//! - G. Marsaglia, T. A. Bray (1964), *A convenient method for generating normal variables*
//!   (polar method, stream version 1).
//! - J. A. Doornik (2005), *An improved ziggurat method to generate normal random samples*
//!   (ziggurat normal, stream version 2).
//! - G. Marsaglia, W. W. Tsang (2000), *A simple method for generating gamma variables*.
//! - W. Hörmann (1993), *The transformed rejection method for generating Poisson random
//!   variables* (PTRS).

use rand_core::Rng;

/// 2⁻⁵³.
const TWO_M53: f64 = 1.0 / 9_007_199_254_740_992.0;

/// Uniform on `[0, 1)` with 53 random bits.
#[inline]
pub fn uniform01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    #[allow(clippy::cast_precision_loss)] // < 2^53: exact
    let m = (rng.next_u64() >> 11) as f64;
    m * TWO_M53
}

/// Uniform on the open interval `(0, 1)` (never 0, so `ln` is finite).
#[inline]
pub fn uniform_open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    #[allow(clippy::cast_precision_loss)] // < 2^53: exact
    let m = (rng.next_u64() >> 11) as f64;
    (m + 0.5) * TWO_M53
}

/// Standard exponential by the 256-layer ziggurat of Marsaglia & Tsang (2000): one 64-bit
/// draw and a table lookup in ≈ 99 % of calls; the wedges use `libm::exp` and the tail beyond
/// r = 7.697 is r + Exp(1) (memorylessness) drawn as `−ln U`. Exact in distribution; tables are
/// generated with mpmath by `tools/ziggurat_exp.py`.
#[inline]
pub fn exponential<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    use crate::ziggurat_tables::ZIG_EXP_X as X;
    let bits = rng.next_u64();
    let i = (bits & 0xff) as usize;
    #[allow(clippy::cast_precision_loss)] // < 2^53: exact
    let u = (bits >> 11) as f64 * TWO_M53;
    let x = u * X[i];
    if x < X[i + 1] {
        return x;
    }
    exponential_slow(rng, i, x)
}

/// The ≈ 1 % of [`exponential`] draws outside the rectangles: the wedge or tail of layer `i`
/// for the candidate `x`, then further draws as needed (the same sequence of draws as one
/// loop). Out of line, so the callers' hot loops keep their values in registers (these
/// paths call `libm`, which clobbers every vector register).
#[cold]
#[inline(never)]
fn exponential_slow<R: Rng + ?Sized>(rng: &mut R, mut i: usize, mut x: f64) -> f64 {
    use crate::ziggurat_tables::{ZIG_EXP_F as F, ZIG_EXP_R, ZIG_EXP_X as X};
    loop {
        if i == 0 {
            return ZIG_EXP_R - libm::log(uniform_open01(rng));
        }
        if F[i] + uniform01(rng) * (F[i + 1] - F[i]) < libm::exp(-x) {
            return x;
        }
        let bits = rng.next_u64();
        i = (bits & 0xff) as usize;
        #[allow(clippy::cast_precision_loss)] // < 2^53: exact
        let u = (bits >> 11) as f64 * TWO_M53;
        x = u * X[i];
        if x < X[i + 1] {
            return x;
        }
    }
}

/// Standard normal by the Marsaglia–Bray polar method (the second variate is discarded so the
/// function is stateless): the normal sampler of [`StreamVersion::V1`](crate::StreamVersion),
/// kept so that every seeded output published before version 2 stays reproducible. New code
/// that draws many normals should take the sampler from a [`StreamVersion`](crate::StreamVersion)
/// (`version.std_normal(rng)`) or call [`ziggurat_normal`] directly: it is ≈ 6× faster.
#[inline]
pub fn std_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let u = 2.0 * uniform01(rng) - 1.0;
        let v = 2.0 * uniform01(rng) - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * libm::sqrt(-2.0 * libm::log(s) / s);
        }
    }
}

/// Standard normal by the 256-layer ZIGNOR ziggurat of Doornik (2005), the normal sampler of
/// [`StreamVersion::V2`](crate::StreamVersion): one 64-bit draw (8 bits pick the layer, the top
/// 52 bits a signed uniform), a multiply and a compare in ≈ 98.8 % of calls; the wedges test
/// `exp(−x²/2)` and the tail beyond R = 3.654 uses Marsaglia's (1964) exponential-pair method,
/// both out of line and on `libm`. Exact in distribution.
///
/// The algorithm, tables and consumption of the 64-bit stream of `rand_distr` 0.6's
/// `StandardNormal` (`tools/ziggurat_normal.py` regenerates Rand's tables and checks them
/// against mpmath), so the draws are the same bit for bit except that a tail draw may differ
/// in its last bits: `rand_distr` evaluates `exp`/`ln` through `num_traits`, which switches to
/// the platform's math library when any crate in the graph enables `num-traits/std`, while
/// this function always uses `libm` and so gives the same numbers on every target.
///
/// # References
/// - J. A. Doornik (2005), *An improved ziggurat method to generate normal random samples*.
/// - G. Marsaglia, W. W. Tsang (2000), *The ziggurat method for generating random variables*,
///   J. Stat. Softw. 5(8).
/// - G. Marsaglia (1964), *Generating a variable from the tail of the normal distribution*.
#[inline]
pub fn ziggurat_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    use crate::ziggurat_normal_tables::ZIG_NORM_X as X;
    let bits = rng.next_u64();
    let i = (bits & 0xff) as usize;
    let u = signed_unit(bits);
    let x = u * X[i];
    if x.abs() < X[i + 1] {
        return x;
    }
    ziggurat_normal_slow(rng, i, u, x)
}

/// `bits >> 12` as the mantissa of a float in [2, 4), minus 3: a uniform on [−1, 1) on the
/// grid 2⁻⁵¹ (as `rand_distr`'s ziggurat does it).
#[inline(always)]
fn signed_unit(bits: u64) -> f64 {
    f64::from_bits((bits >> 12) | 0x4000_0000_0000_0000) - 3.0
}

/// Uniform on the open interval (0, 1) on the grid 2⁻⁵² (rand's `Open01` for `f64`): the 52
/// high bits as the mantissa of a float in [1, 2), minus 1 − 2⁻⁵³.
#[inline(always)]
fn open01_52<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    f64::from_bits((rng.next_u64() >> 12) | 0x3ff0_0000_0000_0000) - (1.0 - f64::EPSILON / 2.0)
}

/// The ≈ 1.2 % of [`ziggurat_normal`] draws outside the rectangles (wedge test, tail, and the
/// further draws after a wedge rejection), out of line for the same reason as
/// [`exponential_slow`]. Consumes the stream exactly as `rand_distr`'s loop does.
#[cold]
#[inline(never)]
fn ziggurat_normal_slow<R: Rng + ?Sized>(rng: &mut R, mut i: usize, mut u: f64, mut x: f64) -> f64 {
    use crate::ziggurat_normal_tables::{ZIG_NORM_F as F, ZIG_NORM_R, ZIG_NORM_X as X};
    loop {
        if i == 0 {
            // Marsaglia (1964): x = −ln(U₁)/R, y = −ln(U₂) until 2y > x²; R + x is a tail draw.
            let mut xt = 1.0f64;
            let mut y = 0.0f64;
            while -2.0 * y < xt * xt {
                let a = open01_52(rng);
                let b = open01_52(rng);
                xt = libm::log(a) / ZIG_NORM_R;
                y = libm::log(b);
            }
            return if u < 0.0 {
                xt - ZIG_NORM_R
            } else {
                ZIG_NORM_R - xt
            };
        }
        if F[i + 1] + (F[i] - F[i + 1]) * uniform01(rng) < libm::exp(-x * x / 2.0) {
            return x;
        }
        let bits = rng.next_u64();
        i = (bits & 0xff) as usize;
        u = signed_unit(bits);
        x = u * X[i];
        if x.abs() < X[i + 1] {
            return x;
        }
    }
}

/// Gamma(shape, 1) by Marsaglia–Tsang (with the `U^{1/a}` boost for shape < 1).
///
/// `shape` must be finite and > 0 (callers validate); other values return NaN.
pub fn gamma<R: Rng + ?Sized>(rng: &mut R, shape: f64) -> f64 {
    if !(shape.is_finite() && shape > 0.0) {
        return f64::NAN;
    }
    if shape < 1.0 {
        let g = gamma(rng, shape + 1.0);
        return g * libm::pow(uniform_open01(rng), 1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / libm::sqrt(9.0 * d);
    loop {
        let x = std_normal(rng);
        let t = 1.0 + c * x;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = uniform_open01(rng);
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || libm::log(u) < 0.5 * x2 + d * (1.0 - v + libm::log(v)) {
            return d * v;
        }
    }
}

/// Poisson(λ) as `u64`: inversion by sequential search for λ < 10, PTRS (Hörmann 1993)
/// otherwise. `lambda` must be finite and ≥ 0 (callers validate); other values give 0.
pub fn poisson<R: Rng + ?Sized>(rng: &mut R, lambda: f64) -> u64 {
    if !(lambda.is_finite() && lambda > 0.0) {
        return 0;
    }
    if lambda < 10.0 {
        // Inversion: P(0) = e^{-λ}, P(k) = P(k-1) λ / k.
        let mut u = uniform01(rng);
        let mut p = libm::exp(-lambda);
        let mut k: u64 = 0;
        while u > p {
            u -= p;
            k += 1;
            #[allow(clippy::cast_precision_loss)]
            let kf = k as f64;
            p *= lambda / kf;
            if p <= 0.0 {
                break; // numerical tail exhausted (probability < 1e-300)
            }
        }
        return k;
    }
    // PTRS, Hörmann (1993), Algorithm PTRS with the published constants.
    let slam = libm::sqrt(lambda);
    let loglam = libm::log(lambda);
    let b = 0.931 + 2.53 * slam;
    let a = -0.059 + 0.02483 * b;
    let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    loop {
        let u = uniform01(rng) - 0.5;
        let v = uniform_open01(rng);
        let us = 0.5 - u.abs();
        let kf = libm::floor((2.0 * a / us + b) * u + lambda + 0.43);
        if us >= 0.07 && v <= vr {
            return float_to_count(kf);
        }
        if kf < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        let lhs = libm::log(v) + libm::log(inv_alpha) - libm::log(a / (us * us) + b);
        let rhs = -lambda + kf * loglam - dpinfer_math::ln_gamma(kf + 1.0);
        if lhs <= rhs {
            return float_to_count(kf);
        }
    }
}

/// Binomial(n, p) for the small counts of the birth–death models: sum of Bernoulli draws when
/// `n ≤ 32`, otherwise the inversion recursion on the smaller tail, falling back to a Poisson
/// approximation only for `n p < 1e-9`-sized means where both agree to rounding.
pub fn binomial<R: Rng + ?Sized>(rng: &mut R, n: u64, p: f64) -> u64 {
    if n == 0 || p.is_nan() || p <= 0.0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    if p > 0.5 {
        return n - binomial(rng, n, 1.0 - p);
    }
    if n <= 32 {
        let mut k = 0;
        for _ in 0..n {
            if uniform01(rng) < p {
                k += 1;
            }
        }
        return k;
    }
    // Inversion: P(0) = (1-p)^n, P(k+1) = P(k) (n-k)/(k+1) p/(1-p).
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    let q = 1.0 - p;
    let r = p / q;
    let mut pk = libm::exp(nf * libm::log1p(-p));
    if pk <= 0.0 {
        // mean huge: normal approximation would change numbers; use Poisson-free exact route:
        // split n in halves (recursive, exact in distribution).
        let h = n / 2;
        return binomial(rng, h, p) + binomial(rng, n - h, p);
    }
    let mut u = uniform01(rng);
    let mut k: u64 = 0;
    while u > pk && k < n {
        u -= pk;
        #[allow(clippy::cast_precision_loss)]
        let kf = k as f64;
        pk *= (nf - kf) / (kf + 1.0) * r;
        k += 1;
        if pk <= 0.0 {
            break;
        }
    }
    k
}

/// Converts a non-negative integral float to a count (saturating).
#[inline]
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn float_to_count(x: f64) -> u64 {
    if x <= 0.0 { 0 } else { x as u64 }
}
