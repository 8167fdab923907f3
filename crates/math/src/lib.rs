#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "alloc")]
extern crate alloc;

mod binom;
pub mod check;
mod fft;
mod fnv;
mod logspace;
mod normal;
#[cfg(feature = "alloc")]
mod rank;
mod resample;
mod search;
mod sum;

pub use binom::{ln_binomial, ln_binomial_int, ln_gamma};
pub use fft::{Complex, FftError, fft_in_place, fft_twiddles, irfft, rfft, rfft_padded};
pub use fnv::Fnv1a;
pub use logspace::{
    log_add_exp, log_logistic, log_sub_exp, log1mexp, logsumexp, logsumexp_iter, softplus,
};
pub use normal::{
    erfc, erfcx, ln_norm_cdf, ln_norm_cdf_sub_exp, ln_norm_sf, norm_cdf, norm_cdf_diff,
    norm_cdf_sub_exp, norm_pdf, norm_quantile, norm_sf,
};
#[cfg(feature = "alloc")]
pub use rank::average_ranks;
pub use resample::{ResampleError, systematic_resample};
pub use search::largest_true;
pub use sum::NeumaierSum;

/// `ln(2π)/2`.
pub const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
/// `√π`.
pub const SQRT_PI: f64 = 1.772_453_850_905_516;

/// Splits `a * b` into `hi + lo` exactly (Dekker's product, no FMA, so the result is the same
/// on every target). Exact when both inputs are finite with `|a|, |b| < 2⁹⁹⁵` (the splitting
/// multiplies by `2²⁷ + 1`) and `a·b` neither overflows nor falls below about `2⁻⁹⁶⁹` (where
/// `lo` would be subnormal); otherwise `hi` is still the rounded product and `lo` may be
/// inexact or NaN.
///
/// # References
/// T. J. Dekker, "A floating-point technique for extending the available precision",
/// *Numerische Mathematik* 18 (1971) 224–242.
#[inline]
#[must_use]
pub fn two_product(a: f64, b: f64) -> (f64, f64) {
    const SPLIT: f64 = 134_217_729.0; // 2^27 + 1
    let p = a * b;
    let ca = SPLIT * a;
    let ah = ca - (ca - a);
    let al = a - ah;
    let cb = SPLIT * b;
    let bh = cb - (cb - b);
    let bl = b - bh;
    let err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    (p, err)
}
