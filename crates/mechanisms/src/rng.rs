//! The noise-RNG bound.
//!
//! Every function that draws privacy noise takes `rng: &mut R` with `R: NoiseRng + ?Sized`.
//! [`NoiseRng`] is an alias for rand_core 0.10's [`TryCryptoRng`]: it is implemented for
//! every cryptographically secure generator, infallible ones (anything that implements
//! [`rand_core::CryptoRng`], e.g. `chacha20::ChaCha20Rng` or an OS-entropy-seeded
//! `rand::rngs::StdRng`) as well as fallible ones (e.g. an OS entropy source). When a fallible
//! generator fails, the sampler returns [`MechanismError::Entropy`] and releases nothing.
//!
//! # Two RNGs, never one stream
//!
//! Privacy noise must come from a secret CSPRNG stream. Simulations, priors and proposals
//! use a *separate* seedable RNG whose seed may be published for reproducibility. Never
//! derive the noise RNG from the simulation seed and never pass the simulation RNG here:
//! anyone who knows a published seed could subtract the noise and recover the data.

use rand_core::TryCryptoRng;

use crate::MechanismError;

/// A cryptographically secure (possibly fallible) RNG that may be used for privacy noise.
///
/// Blanket-implemented for every [`TryCryptoRng`] (which includes every
/// [`rand_core::CryptoRng`], e.g. `chacha20::ChaCha20Rng`). When a fallible generator fails,
/// samplers return [`MechanismError::Entropy`] and release nothing.
///
/// # Two RNGs, never one stream
///
/// Privacy noise must come from a secret CSPRNG stream. Simulations, priors and proposals
/// use a *separate* seedable RNG whose seed may be published for reproducibility. Never
/// derive the noise RNG from the simulation seed and never pass the simulation RNG here:
/// anyone who knows a published seed could subtract the noise and recover the data.
pub trait NoiseRng: TryCryptoRng {}

impl<R: TryCryptoRng + ?Sized> NoiseRng for R {}

/// One `u64` from the noise RNG, mapping entropy failure to [`MechanismError::Entropy`].
#[inline]
pub(crate) fn next_u64<R: NoiseRng + ?Sized>(rng: &mut R) -> Result<u64, MechanismError> {
    rng.try_next_u64().map_err(|_| MechanismError::Entropy)
}

/// One `u128` (two `u64` draws, high word first).
#[inline]
pub(crate) fn next_u128<R: NoiseRng + ?Sized>(rng: &mut R) -> Result<u128, MechanismError> {
    let hi = next_u64(rng)?;
    let lo = next_u64(rng)?;
    Ok((u128::from(hi) << 64) | u128::from(lo))
}
