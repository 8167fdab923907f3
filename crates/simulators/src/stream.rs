//! Reproducible per-job random streams for simulations and priors (**public randomness only**).
//!
//! A [`SimStream`] is ChaCha8 (D. J. Bernstein's ChaCha with 8 rounds, via the RustCrypto
//! `chacha20` crate) keyed by `(run seed, domain)` and positioned on the 64-bit ChaCha *stream
//! id* `job`. ChaCha is a pseudo-random function of (key, stream id, block counter), so each
//! job's stream is fixed by its three numbers alone: whichever thread, process or machine runs a
//! job, and in whatever order, it sees exactly the same numbers. Splitting work over any number
//! of workers therefore gives bit-identical results, which the crate's tests check.
//!
//! The 256-bit key is the injective byte string
//! `run_seed (8 bytes LE) ‖ domain (8 bytes LE) ‖ "dpinfer-sim-v1\0\0"` (16 bytes), so distinct
//! `(run_seed, domain)` pairs always get distinct keys. Use `domain` to separate phases of one run
//! (e.g. SMC generation, or prior draws vs. simulations); use `job` for the unit of parallel work.
//!
//! # Privacy
//!
//! **Never use these streams for privacy noise.** The seed is public (it is written to shard
//! files so runs can be verified and merged), hence so is every number drawn from it. Privacy
//! noise must come from a separate caller-supplied `CryptoRng` that is secret. To make misuse a
//! type error, [`SimStream`] deliberately does **not** implement `rand_core::CryptoRng` even
//! though ChaCha is a cryptographic design.

use chacha20::ChaCha8Rng;
use core::convert::Infallible;
use rand_core::{SeedableRng, TryRng};

/// The constant tail of every stream key (version tag of the derivation).
const KEY_TAG: [u8; 16] = *b"dpinfer-sim-v1\0\0";

/// A reproducible simulation stream: ChaCha8 keyed by `(run_seed, domain)` on stream `job`.
///
/// Implements [`rand_core::Rng`] (through `TryRng<Error = Infallible>`), never `CryptoRng`:
/// see the [module docs](self) — public randomness only.
///
/// ```
/// use dpinfer_simulators::SimStream;
/// use rand_core::Rng;
/// let mut a = SimStream::new(42, 7);
/// let mut b = SimStream::new(42, 7);
/// assert_eq!(a.next_u64(), b.next_u64()); // same (seed, job) → same numbers
/// let mut c = SimStream::new(42, 8);
/// assert_ne!(SimStream::new(42, 7).next_u64(), c.next_u64());
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct SimStream {
    inner: ChaCha8Rng,
}

impl SimStream {
    /// The stream of job `job` of the run with seed `run_seed` (domain 0).
    #[must_use]
    pub fn new(run_seed: u64, job: u64) -> Self {
        Self::with_domain(run_seed, 0, job)
    }

    /// The stream of job `job` in domain `domain` of the run with seed `run_seed`.
    #[must_use]
    pub fn with_domain(run_seed: u64, domain: u64, job: u64) -> Self {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&run_seed.to_le_bytes());
        key[8..16].copy_from_slice(&domain.to_le_bytes());
        key[16..].copy_from_slice(&KEY_TAG);
        let mut inner = ChaCha8Rng::from_seed(key);
        inner.set_stream(job);
        Self { inner }
    }

    /// The job id (ChaCha stream id) of this stream.
    #[must_use]
    pub fn job(&self) -> u64 {
        self.inner.get_stream()
    }

    /// Position in the stream, in 32-bit words consumed so far.
    #[must_use]
    pub fn word_pos(&self) -> u128 {
        self.inner.get_word_pos()
    }

    /// Jumps to word position `pos` of the same stream (random access).
    pub fn set_word_pos(&mut self, pos: u128) {
        self.inner.set_word_pos(pos);
    }
}

impl Clone for SimStream {
    /// An independent copy at the same position (it will produce the same numbers).
    fn clone(&self) -> Self {
        Self {
            inner: ChaCha8Rng::deserialize_state(&self.inner.serialize_state()),
        }
    }
}

impl TryRng for SimStream {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.inner.try_next_u32()
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.inner.try_next_u64()
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.inner.try_fill_bytes(dst)
    }
}
