//! Optional keyed authentication of the restart ledger (HMAC-SHA-256, RFC 2104).
//!
//! The ledger's CRC-32 detects accidents (a truncated or bit-flipped `release.json`); it does
//! **not** stop a party with write access to the results folder, who can edit the release and
//! recompute the CRC. Where results folders live on a shared file system, set a secret key:
//!
//! * `DPINFER_LEDGER_KEY_FILE=/path/to/key` (the file's bytes, at least 16, at most 64 KiB;
//!   a regular file), or
//! * `DPINFER_LEDGER_KEY=…` (the variable's bytes, at least 16).
//!
//! The key is loaded and checked ([`Key::from_env`]) before a release is marked `started`
//! and before any noise is drawn: a set but unusable key (empty, short, a missing file, a
//! folder, device or FIFO, too large, unreadable) stops the release with nothing written and
//! nothing drawn, so fixing the key and rerunning works.
//!
//! With a key set, `private-step.json` carries `release_mac = HMAC-SHA-256(key, "dpinfer-ledger-v1"
//! ‖ 0 ‖ fingerprint ‖ 0 ‖ release.json bytes)` and a rerun reproduces only a release whose MAC
//! verifies (constant-time comparison). A ledger written with a key is refused when no key is
//! set (it cannot be checked), and one without a MAC is refused when a key is set. What no MAC
//! can prevent: deleting the whole ledger (the next run then draws and charges again — the
//! budget of a deleted folder is still spent) and reading the key from the same account.

use std::path::Path;

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::{Error, Result};

/// Environment variable holding the key itself.
pub const KEY_ENV: &str = "DPINFER_LEDGER_KEY";
/// Environment variable naming a file that holds the key.
pub const KEY_FILE_ENV: &str = "DPINFER_LEDGER_KEY_FILE";
/// Shortest key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// Largest key file read, in bytes (64 KiB): a larger one is refused, not read.
pub const MAX_KEY_FILE_BYTES: u64 = 1 << 16;

/// A ledger key, loaded and checked ([`Key::from_env`]). Its bytes are never printed.
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl core::fmt::Debug for Key {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Key({} bytes)", self.0.len())
    }
}

impl Key {
    /// The configured key: from [`KEY_FILE_ENV`], else [`KEY_ENV`], else none. Called by
    /// [`guarded`](crate::guarded) and [`once_start`](crate::once_start) before anything is
    /// marked or drawn, so a bad key stops a release before it starts; a caller may call it
    /// earlier still to fail before expensive work.
    ///
    /// The key file must be a regular file of at most [`MAX_KEY_FILE_BYTES`] (a link to one
    /// is followed); a FIFO, device, socket or folder is refused without blocking.
    ///
    /// # Errors
    /// [`Error::KeyFile`] (a missing, unreadable, special or too large key file),
    /// [`Error::KeyTooShort`] (fewer than [`MIN_KEY_BYTES`] bytes, an empty variable included).
    pub fn from_env() -> Result<Option<Self>> {
        let k = if let Some(p) = std::env::var_os(KEY_FILE_ENV) {
            let p = Path::new(&p);
            crate::files::read_bounded(p, "ledger key file", Some(MAX_KEY_FILE_BYTES)).map_err(
                |e| Error::KeyFile {
                    path: p.into(),
                    source: Box::new(e),
                },
            )?
        } else if let Some(v) = std::env::var_os(KEY_ENV) {
            v.into_encoded_bytes()
        } else {
            return Ok(None);
        };
        if k.len() < MIN_KEY_BYTES {
            return Err(Error::KeyTooShort(k.len()));
        }
        Ok(Some(Self(k)))
    }
}

fn mac(key: &[u8], fingerprint: &str, bytes: &[u8]) -> Result<Hmac<Sha256>> {
    // HMAC accepts keys of any length; the minimum is checked by `Key::from_env`.
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(key)
        .map_err(|_| Error::KeyTooShort(key.len()))?;
    m.update(b"dpinfer-ledger-v1\0");
    m.update(fingerprint.as_bytes());
    m.update(b"\0");
    m.update(bytes);
    Ok(m)
}

fn hex(b: &[u8]) -> String {
    use core::fmt::Write as _;
    let mut s = String::with_capacity(2 * b.len());
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The MAC to store with a release under `key` (none without a key).
///
/// # Errors
/// None in practice (HMAC takes keys of any length); kept for a future key check.
pub fn sign(key: Option<&Key>, fingerprint: &str, bytes: &[u8]) -> Result<Option<String>> {
    let Some(k) = key else {
        return Ok(None);
    };
    Ok(Some(hex(&mac(&k.0, fingerprint, bytes)?
        .finalize()
        .into_bytes())))
}

/// Checks a stored MAC against `key` (see the module docs for the rules).
///
/// # Errors
/// A missing, unexpected or wrong MAC.
pub fn verify(
    key: Option<&Key>,
    stored: Option<&str>,
    fingerprint: &str,
    bytes: &[u8],
    release: &Path,
) -> Result<()> {
    match (key, stored) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err(Error::MacNeedsKey(release.into())),
        (Some(_), None) => Err(Error::MacMissing(release.into())),
        (Some(k), Some(tag)) => {
            let tag = unhex(tag).ok_or(Error::MacMalformed)?;
            mac(&k.0, fingerprint, bytes)?
                .verify_slice(&tag)
                .map_err(|_| Error::MacMismatch(release.into()))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// RFC 4231 test case 2 (HMAC-SHA-256, key "Jefe"), through the same construction.
    #[test]
    fn hmac_matches_rfc_4231() {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        assert_eq!(
            hex(&m.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn hex_round_trips_and_rejects_junk() {
        let b = [0u8, 1, 0xab, 0xff];
        assert_eq!(unhex(&hex(&b)).unwrap(), b);
        assert!(unhex("abc").is_none());
        assert!(unhex("zz").is_none());
        assert!(unhex("é1").is_none());
    }

    #[test]
    fn the_tag_binds_fingerprint_and_bytes() {
        let k = [9u8; 32];
        let t = |fp: &str, b: &[u8]| hex(&mac(&k, fp, b).unwrap().finalize().into_bytes());
        assert_ne!(t("a", b"x"), t("b", b"x"));
        assert_ne!(t("a", b"x"), t("a", b"y"));
    }
}
