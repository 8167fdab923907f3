//! Optional keyed authentication of the restart ledger (HMAC-SHA-256, RFC 2104).
//!
//! The ledger's CRC-32 detects accidents (a truncated or bit-flipped `release.json`); it does
//! **not** stop a party with write access to the results folder, who can edit the release and
//! recompute the CRC. Where results folders live on a shared file system, set a secret key:
//!
//! * `DPINFER_LEDGER_KEY_FILE=/path/to/key` (the file's bytes, at least 16), or
//! * `DPINFER_LEDGER_KEY=…` (the variable's bytes, at least 16).
//!
//! With a key set, `private-step.json` carries `release_mac = HMAC-SHA-256(key, "dpinfer-ledger-v1"
//! ‖ 0 ‖ fingerprint ‖ 0 ‖ release.json bytes)` and a rerun reproduces only a release whose MAC
//! verifies (constant-time comparison). A ledger written with a key is refused when no key is
//! set (it cannot be checked), and one without a MAC is refused when a key is set. What no MAC
//! can prevent: deleting the whole ledger (the next run then draws and charges again — the
//! budget of a deleted folder is still spent) and reading the key from the same account.

use std::path::Path;

use anyhow::{Context, Result, bail};
use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Environment variable holding the key itself.
pub const KEY_ENV: &str = "DPINFER_LEDGER_KEY";
/// Environment variable naming a file that holds the key.
pub const KEY_FILE_ENV: &str = "DPINFER_LEDGER_KEY_FILE";
/// Shortest key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

fn key() -> Result<Option<Vec<u8>>> {
    let k = if let Some(p) = std::env::var_os(KEY_FILE_ENV) {
        let p = Path::new(&p);
        crate::files::read_bounded(p, "ledger key file", Some(1 << 16))
            .with_context(|| format!("{KEY_FILE_ENV} = {}", p.display()))?
    } else if let Some(v) = std::env::var_os(KEY_ENV) {
        v.into_encoded_bytes()
    } else {
        return Ok(None);
    };
    if k.len() < MIN_KEY_BYTES {
        bail!(
            "the ledger key ({KEY_FILE_ENV} or {KEY_ENV}) has {} bytes; at least {MIN_KEY_BYTES} are needed",
            k.len()
        );
    }
    Ok(Some(k))
}

fn mac(key: &[u8], fingerprint: &str, bytes: &[u8]) -> Result<Hmac<Sha256>> {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(key)
        .map_err(|_| anyhow::anyhow!("invalid ledger key length"))?;
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

/// The MAC to store with a release, when a key is configured.
///
/// # Errors
/// An unreadable or too short key.
pub fn sign(fingerprint: &str, bytes: &[u8]) -> Result<Option<String>> {
    let Some(k) = key()? else {
        return Ok(None);
    };
    Ok(Some(hex(&mac(&k, fingerprint, bytes)?
        .finalize()
        .into_bytes())))
}

/// Checks a stored MAC against the configured key (see the module docs for the rules).
///
/// # Errors
/// A missing, unexpected or wrong MAC; an unreadable key.
pub fn verify(stored: Option<&str>, fingerprint: &str, bytes: &[u8], release: &Path) -> Result<()> {
    match (key()?, stored) {
        (None, None) => Ok(()),
        (None, Some(_)) => bail!(
            "{} is authenticated with a ledger key; set {KEY_FILE_ENV} or {KEY_ENV} to verify it",
            release.display()
        ),
        (Some(_), None) => bail!(
            "{} carries no MAC but a ledger key is set; refusing to reproduce a release that \
             cannot be authenticated",
            release.display()
        ),
        (Some(k), Some(tag)) => {
            let tag = unhex(tag).context("malformed release_mac in the ledger")?;
            mac(&k, fingerprint, bytes)?
                .verify_slice(&tag)
                .map_err(|_| {
                    anyhow::anyhow!(
                        "{} fails its ledger MAC: it was altered, or written with another key; \
                     refusing to reproduce it or to draw new noise",
                        release.display()
                    )
                })
        }
    }
}
