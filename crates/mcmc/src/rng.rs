//! Small RNG helpers shared by the samplers.

use rand_core::Rng;

/// Uniform on `[0, 1)` with 53 random bits.
#[inline]
pub(crate) fn uniform01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let u = (rng.next_u64() >> 11) as f64;
    u * (1.0 / 9_007_199_254_740_992.0)
}

/// Uniform integer in `[0, m)` by a 128-bit multiply (bias at most `m / 2^64`).
#[inline]
pub(crate) fn below<R: Rng + ?Sized>(rng: &mut R, m: usize) -> usize {
    let x = u128::from(rng.next_u64());
    let m128 = m as u128;
    #[allow(clippy::cast_possible_truncation)]
    let r = ((x * m128) >> 64) as usize;
    r
}

/// Standard normal draw (public randomness: proposals, momenta): the workspace's one
/// normal sampler, `dpinfer_simulators::dist::ziggurat_normal` (the draws of `rand_distr`'s
/// `StandardNormal`, always on `libm`, so `std` never changes a number).
#[inline]
pub(crate) fn std_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    dpinfer_simulators::dist::ziggurat_normal(rng)
}

#[cfg(feature = "alloc")]
/// Standard logistic draw: `ln(u / (1 - u))`.
#[inline]
pub(crate) fn logistic<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let u = uniform01(rng);
        if u > 0.0 {
            return libm::log(u) - libm::log1p(-u);
        }
    }
}

#[cfg(feature = "alloc")]
/// Log of a uniform draw on `(0, 1]`, for Metropolis tests `ln u < a`.
#[inline]
pub(crate) fn log_uniform<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    libm::log(1.0 - uniform01(rng))
}

/// Placeholder noise source of the exact (non-private) kernels.
///
/// Non-private samplers are built by their `exact` constructors with this type as noise
/// source; they never draw privacy noise. It implements [`rand_core::Rng`] (every draw is 0) but
/// deliberately **not** `CryptoRng`, so it cannot be passed to a private constructor, which
/// requires a `CryptoRng`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoNoise;

impl rand_core::TryRng for NoNoise {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(0)
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(0)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        dst.fill(0);
        Ok(())
    }
}
