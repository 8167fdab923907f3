//! The fingerprint of a private release's whole input: the public pairs table, the observed
//! data and the settings.
//!
//! The ledger identifies "the same input" by this value: a rerun with an equal fingerprint
//! reproduces the stored release, any other is refused. So it must cover every byte of the
//! input, and be cheap on tables of millions of rows.
//!
//! It is **XXH3-128** (xxHash 3, 128-bit output; the `twox-hash` crate, which picks AVX2,
//! SSE2 or NEON at run time) over one framed byte stream:
//!
//! ```text
//! "dpinfer-fingerprint-v2" ‖ 0
//! n_pairs    u64 ‖ pairs     (each f64 as its 8 little-endian bytes)
//! n_observed u64 ‖ observed  (likewise)
//! n_settings u64 ‖ settings  (the settings' JSON text)
//! ```
//!
//! and is written as `xxh3-128:` followed by 32 hex digits. The length prefixes make the
//! split between the parts unambiguous (moving a value from the table to the observed data
//! changes the fingerprint). The floats enter by their bits, so `-0.0` and `0.0` differ and
//! NaN payloads count; the result is the same on every target.
//!
//! XXH3 consumes 8-byte words in parallel lanes (the measured speed-up over the byte-serial
//! FNV-1a of ledger version 1 is in the README). It is **not** a cryptographic hash: on inputs
//! nobody chose to collide it behaves as a random function, so an accidental change (a changed
//! value, a reordered row, other settings) goes unnoticed with probability about 2⁻¹²⁸; but a
//! party with write access could construct a collision — which is why a ledger that must
//! resist such a party carries the HMAC-SHA-256 of [`crate::mac`], binding the fingerprint and
//! the release bytes under a secret key.
//!
//! Ledger version 1 used FNV-1a over the same bytes without framing; a version-1 ledger is
//! refused with [`Error::LedgerVersion`](crate::Error::LedgerVersion).

use core::fmt;

use serde::Serialize;
use twox_hash::XxHash3_128;

use crate::error::{Error, Result};

/// The domain tag the stream starts with; it changes with the fingerprint's definition.
const DOMAIN: &[u8] = b"dpinfer-fingerprint-v2\0";

/// The text before the hex digits.
pub(crate) const PREFIX: &str = "xxh3-128:";

/// Floats converted per block (a 32 KiB stack buffer): the hasher sees large writes.
const BLOCK: usize = 4096;

/// The fingerprint of one input (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// Its text, `xxh3-128:` and 32 hex digits, as stored in the ledger.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Fingerprint {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<Fingerprint> for String {
    fn from(f: Fingerprint) -> Self {
        f.0
    }
}

/// The fingerprint of (`pairs`, `observed`, `settings`); `settings` is serialised to JSON,
/// so two settings values fingerprint alike exactly when their JSON texts are equal.
///
/// ```
/// use dpinfer_ledger::fingerprint;
/// let a = fingerprint(&[1.0, 2.0], &[0.5], &("svt-abc", 1.0))?;
/// assert!(a.as_str().starts_with("xxh3-128:"));
/// assert_ne!(a, fingerprint(&[1.0, 2.0], &[0.5], &("svt-abc", 2.0))?);
/// assert_ne!(a, fingerprint(&[1.0], &[2.0, 0.5], &("svt-abc", 1.0))?);
/// # Ok::<(), dpinfer_ledger::Error>(())
/// ```
///
/// # Errors
/// [`Error::Serialize`] when `settings` cannot be serialised to JSON (a map with non-string
/// keys, a failing `Serialize` impl): a fingerprint that silently dropped the settings would
/// let a release of other settings be reproduced.
pub fn fingerprint<S: Serialize + ?Sized>(
    pairs: &[f64],
    observed: &[f64],
    settings: &S,
) -> Result<Fingerprint> {
    let settings = serde_json::to_vec(settings).map_err(|source| Error::Serialize {
        what: "the settings of the input fingerprint",
        source,
    })?;
    let mut h = XxHash3_128::new();
    h.write(DOMAIN);
    write_f64s(&mut h, pairs);
    write_f64s(&mut h, observed);
    h.write(&(settings.len() as u64).to_le_bytes());
    h.write(&settings);
    Ok(Fingerprint(format!("{PREFIX}{:032x}", h.finish_128())))
}

/// The length, then each value's little-endian bytes, converted a block at a time.
fn write_f64s(h: &mut XxHash3_128, xs: &[f64]) {
    h.write(&(xs.len() as u64).to_le_bytes());
    let mut buf = [0u8; 8 * BLOCK];
    for block in xs.chunks(BLOCK) {
        let bytes = &mut buf[..8 * block.len()];
        for (dst, v) in bytes.chunks_exact_mut(8).zip(block) {
            dst.copy_from_slice(&v.to_le_bytes());
        }
        h.write(bytes);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::cast_precision_loss)]
    use super::*;
    use proptest::prelude::*;

    /// XXH3-128 of the framed stream built by hand, one byte slice at a time: the block
    /// conversion does not change what is hashed, whatever the table length.
    #[test]
    fn blocks_hash_the_plain_byte_stream() {
        for n in [0usize, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 5] {
            let pairs: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 3.0).collect();
            let obs = [1.0f64, -0.0];
            let mut bytes = DOMAIN.to_vec();
            bytes.extend_from_slice(&(n as u64).to_le_bytes());
            for v in &pairs {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            bytes.extend_from_slice(&2u64.to_le_bytes());
            for v in obs {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            let s = serde_json::to_vec(&"x").unwrap();
            bytes.extend_from_slice(&(s.len() as u64).to_le_bytes());
            bytes.extend_from_slice(&s);
            let expect = format!("{PREFIX}{:032x}", XxHash3_128::oneshot(&bytes));
            assert_eq!(fingerprint(&pairs, &obs, "x").unwrap().as_str(), expect);
        }
    }

    /// The XXH3-128 reference vector of the empty input (xxHash's sanity test, seed 0). Pins the hash function itself, so a dependency update cannot silently
    /// change every stored fingerprint.
    #[test]
    fn xxh3_128_matches_the_reference() {
        assert_eq!(
            XxHash3_128::oneshot(b""),
            0x99aa06d3014798d86001c324468d497f
        );
    }

    /// Two fingerprints against python-xxhash 4.1.0 (the xxHash 0.8.4 C library) over the
    /// same framed stream built in Python: `scripts/fingerprint_reference.py`. The second
    /// crosses several conversion blocks and XXH3's long-input path. Changing the definition
    /// must bump [`LEDGER_VERSION`](crate::LEDGER_VERSION).
    #[test]
    fn values_match_the_python_reference() {
        let f = fingerprint(&[1.0, 2.0, 3.0], &[0.5], &("svt-abc", 1.0)).unwrap();
        assert_eq!(f.as_str(), "xxh3-128:7e96ce6e5e9e5a725f53bb815a72502a");
        let big: Vec<f64> = (0..10000).map(|i| f64::from(i) * 0.25 - 3.0).collect();
        let f = fingerprint(&big, &[1.0, -0.0], "x").unwrap();
        assert_eq!(f.as_str(), "xxh3-128:13590ae66a863195727c2b3dc5eef2c8");
    }

    #[test]
    fn settings_that_cannot_be_serialised_are_an_error() {
        let mut m = std::collections::BTreeMap::new();
        m.insert(vec![1u8], 2);
        assert!(matches!(
            fingerprint(&[], &[], &m),
            Err(Error::Serialize { .. })
        ));
    }

    #[test]
    fn zero_signs_and_nan_payloads_count() {
        let s = "s";
        let a = fingerprint(&[0.0], &[], s).unwrap();
        assert_ne!(a, fingerprint(&[-0.0], &[], s).unwrap());
        let n1 = f64::from_bits(0x7ff8_0000_0000_0001);
        let n2 = f64::from_bits(0x7ff8_0000_0000_0002);
        assert_ne!(
            fingerprint(&[n1], &[], s).unwrap(),
            fingerprint(&[n2], &[], s).unwrap()
        );
    }

    proptest! {
        /// Any change of one bit of any value of the table or the observed data, or of the
        /// settings, changes the fingerprint (every byte is covered).
        #[test]
        fn any_one_bit_change_changes_it(
            pairs in proptest::collection::vec(any::<f64>(), 0..300),
            obs in proptest::collection::vec(any::<f64>(), 1..20),
            at in any::<prop::sample::Index>(),
            bit in 0u32..64,
            in_obs in any::<bool>(),
        ) {
            let s = ("gaussian-mean", 0.5);
            let base = fingerprint(&pairs, &obs, &s).unwrap();
            let (mut p2, mut o2) = (pairs.clone(), obs.clone());
            let v = if in_obs || p2.is_empty() {
                &mut o2[at.index(obs.len())]
            } else {
                &mut p2[at.index(pairs.len())]
            };
            *v = f64::from_bits(v.to_bits() ^ (1u64 << bit));
            prop_assert_ne!(&base, &fingerprint(&p2, &o2, &s).unwrap());
            prop_assert_ne!(&base, &fingerprint(&pairs, &obs, &("gaussian-mean", 0.25)).unwrap());
        }

        /// Moving the boundary between table and observed data changes it.
        #[test]
        fn the_parts_are_framed(xs in proptest::collection::vec(any::<f64>(), 2..50), cut in 1usize..49) {
            let cut = cut.min(xs.len() - 1);
            let a = fingerprint(&xs[..cut], &xs[cut..], "s").unwrap();
            let b = fingerprint(&xs[..cut - 1], &xs[cut - 1..], "s").unwrap();
            prop_assert_ne!(a, b);
        }
    }
}
