//! The restart-safe ledger: privacy noise is drawn at most once per input.
//!
//! Two files in a locked folder ([`DirLock`]):
//!
//! * `private-step.json` ([`LEDGER_FILE`]): `{ "version", "status", "fingerprint",
//!   "release_crc", "release_mac"? }`, status `started` or `released`.
//! * `release.json` ([`RELEASE_FILE`]): the release itself (any serde type carrying a
//!   [`Ledger`], see [`Claimed`]), written only by [`guarded`].
//!
//! [`guarded`] writes `started` (durably) before calling the closure that draws the noise,
//! then the release, then `released` with the release's CRC-32 (and the optional MAC of
//! [`crate::mac`]). A later call with the same fingerprint reproduces the stored release
//! without calling the closure; one that finds `started` (a crash after noise may have been
//! drawn), another fingerprint, a release failing its checksum or MAC, or a stored ledger
//! other than the claim the caller recomputed, **refuses** — drawing again could spend the
//! budget twice. [`once_start`] / [`once_done`] are the same protocol for a release that
//! cannot be stored and reproduced (a DP MCMC chain): every later call is refused.

use std::path::Path;

use dpinfer_accountants::Claim;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::files::{DirLock, MAX_CONFIG_BYTES, Replace, check_target, read_owned, write_atomic};
use crate::mac::Key;

/// The ledger file of a folder.
pub const LEDGER_FILE: &str = "private-step.json";
/// The stored release of a folder.
pub const RELEASE_FILE: &str = "release.json";

/// The ledger format written by this version. Version 2 (this one): the fingerprint is
/// XXH3-128 over a framed stream ([`crate::fingerprint`]); version 1 (no `version` field):
/// FNV-1a byte by byte. A ledger of another version is refused with
/// [`Error::LedgerVersion`].
pub const LEDGER_VERSION: u32 = 2;

/// Largest ledger or release file read back (1 GiB).
const MAX_LEDGER_BYTES: u64 = MAX_CONFIG_BYTES << 6;

/// The privacy ledger of a release.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ledger {
    /// ε charged (`"inf"` in JSON for a non-private run).
    #[serde(with = "inf_as_string")]
    pub epsilon: f64,
    /// δ charged.
    pub delta: f64,
    /// Which accountant / theorem produced (ε, δ).
    pub accountant: String,
    /// How the bound was converted to (ε, δ), if it was.
    pub conversion: String,
    /// Neighbouring relation of the guarantee.
    pub neighbouring: String,
    /// Mechanism and its calibration.
    pub mechanism: String,
    /// Where the noise came from.
    pub noise: String,
    /// The library's privacy claim (relation, events, accountant, conversion, report), from
    /// which ε, δ, `accountant`, `conversion` and `neighbouring` above are generated; absent
    /// for a run that is not private.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<Claim>,
}

/// JSON has no ∞: a non-finite ε is written as the string `"inf"`.
mod inf_as_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_str("inf")
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(v) => Ok(v),
            Raw::S(s) if s == "inf" => Ok(f64::INFINITY),
            Raw::S(s) => Err(serde::de::Error::custom(format!("bad epsilon {s:?}"))),
        }
    }
}

impl Ledger {
    /// The ledger of a run that touched private data without protecting it (ε = ∞).
    #[must_use]
    pub fn not_private(what: &str) -> Self {
        Self {
            epsilon: f64::INFINITY,
            delta: 0.0,
            accountant: "none".into(),
            conversion: "none".into(),
            neighbouring: "-".into(),
            mechanism: format!("{what} (NOT differentially private)"),
            noise: "-".into(),
            claim: None,
        }
    }

    /// The ledger of a private pass: every privacy field is generated from `claim` (the
    /// prose by the claim's `Display`); `mechanism` and `noise` say how it was run.
    #[must_use]
    pub fn from_claim(claim: Claim, mechanism: String, noise: String) -> Self {
        Self {
            epsilon: claim.epsilon(),
            delta: claim.delta(),
            accountant: format!("{} accountant", claim.accountant.label()),
            conversion: claim.report.conversion.to_string(),
            neighbouring: claim.relation.to_string(),
            mechanism,
            noise,
            claim: Some(claim),
        }
    }
}

/// A stored release that carries its privacy ledger.
pub trait Claimed {
    /// The ledger of the release.
    fn ledger(&self) -> &Ledger;
}

impl Claimed for Ledger {
    fn ledger(&self) -> &Ledger {
        self
    }
}

/// `private-step.json`.
#[derive(Debug, Serialize, Deserialize)]
struct StepLedger {
    /// Ledger format version; absent in version-1 files.
    #[serde(default = "version_1")]
    version: u32,
    status: String,
    fingerprint: String,
    release_crc: Option<u32>,
    /// HMAC-SHA-256 of (fingerprint, release bytes) when a ledger key is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    release_mac: Option<String>,
}

fn version_1() -> u32 {
    1
}

const STARTED: &str = "started";
const RELEASED: &str = "released";

impl StepLedger {
    fn new(status: &str, fingerprint: &str) -> Self {
        Self {
            version: LEDGER_VERSION,
            status: status.into(),
            fingerprint: fingerprint.into(),
            release_crc: None,
            release_mac: None,
        }
    }

    /// Reads the folder's ledger, if there is one, refusing another version or input.
    fn load(lock: &DirLock, fp: &str) -> Result<Option<Self>> {
        let path = lock.dir().join(LEDGER_FILE);
        match std::fs::symlink_metadata(&path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("inspecting {}", path.display()), e)),
        }
        let l: Self =
            serde_json::from_slice(&read_ledger_file(&path)?).map_err(|source| Error::Corrupt {
                what: "ledger",
                path: path.clone(),
                source,
            })?;
        if l.version != LEDGER_VERSION {
            return Err(Error::LedgerVersion {
                ledger: path,
                found: l.version,
            });
        }
        if l.fingerprint != fp {
            return Err(Error::DifferentInput(lock.dir().into()));
        }
        Ok(Some(l))
    }

    /// Writes it durably over the folder's ledger.
    fn store(&self, lock: &DirLock) -> Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(|source| Error::Serialize {
            what: "the ledger",
            source,
        })?;
        write_atomic(
            &lock.dir().join(LEDGER_FILE),
            text.as_bytes(),
            Replace::Owned,
        )
    }
}

/// Runs a private release at most once per input fingerprint `fp` in the locked folder (see
/// the module docs): reproduces a stored release, refuses after an unfinished one or for
/// another input, and otherwise marks the ledger `started` (durably) and calls `release`,
/// which draws the noise and must return a release carrying exactly `claim` — the complete
/// privacy claim, computed by the caller after all its checks and before any noise. Returns
/// the release and whether it was reproduced.
///
/// The whole check → mark → draw → durable write sequence runs under `lock`, the folder's
/// exclusive OS lock, so concurrent calls on one folder (threads or processes) draw at most
/// once. On reproduction a stored ledger that differs from `claim` (recomputed from the
/// settings) is refused.
///
/// Before it reads or marks anything it loads the ledger key ([`crate::mac::Key::from_env`]),
/// and before it marks `started` it checks that the release can be stored (no folder, link,
/// FIFO or device at its name): on either error nothing is marked and `release` is not
/// called, so a rerun after the fix draws normally. The ledger and release files are read as
/// regular files only, a link at their names refused and a FIFO never waited on.
///
/// # Errors
/// An unusable ledger key ([`Error::KeyFile`], [`Error::KeyTooShort`]), a refused restart
/// ([`Error::DifferentInput`], [`Error::Unfinished`], [`Error::ReleaseChecksum`],
/// [`Error::ClaimMismatch`], [`Error::LedgerVersion`], the MAC errors), a special file at the
/// ledger's or release's name ([`Error::NotRegular`], [`Error::NotRegularInput`]), I/O, or
/// the release's own error ([`Error::Caller`]; the ledger then stays `started` and later
/// calls refuse).
pub fn guarded<T, F, E>(lock: &DirLock, fp: &str, claim: &Ledger, release: F) -> Result<(T, bool)>
where
    T: Serialize + DeserializeOwned + Claimed,
    F: FnOnce() -> core::result::Result<T, E>,
    E: Into<Box<dyn core::error::Error + Send + Sync>>,
{
    // The key first: a bad one stops the release before anything is marked or drawn.
    let key = Key::from_env()?;
    let out_dir = lock.dir();
    let ledger_path = out_dir.join(LEDGER_FILE);
    let release_path = out_dir.join(RELEASE_FILE);
    if let Some(l) = StepLedger::load(lock, fp)? {
        if l.status != RELEASED {
            return Err(Error::Unfinished {
                dir: out_dir.into(),
                ledger: ledger_path,
            });
        }
        let bytes = read_ledger_file(&release_path)?;
        if Some(crc32fast::hash(&bytes)) != l.release_crc {
            return Err(Error::ReleaseChecksum(release_path));
        }
        crate::mac::verify(
            key.as_ref(),
            l.release_mac.as_deref(),
            fp,
            &bytes,
            &release_path,
        )?;
        let r: T = serde_json::from_slice(&bytes).map_err(|source| Error::Corrupt {
            what: "release",
            path: release_path.clone(),
            source,
        })?;
        // The stored claim must be exactly the one these settings imply.
        let stored = r.ledger();
        if stored != claim {
            return Err(Error::ClaimMismatch {
                release: release_path,
                stored: (stored.epsilon, stored.delta),
                implied: (claim.epsilon, claim.delta),
            });
        }
        return Ok((r, true));
    }
    // The release must be storable before anything is drawn: a link, FIFO, device or folder
    // planted at its name would otherwise fail the write after the noise.
    check_target(&release_path, Replace::Owned)?;
    StepLedger::new(STARTED, fp).store(lock)?;
    let out = release().map_err(|e| Error::Caller {
        writing: None,
        source: e.into(),
    })?;
    if out.ledger() != claim {
        return Err(Error::ClaimChanged);
    }
    let bytes = serde_json::to_vec_pretty(&out).map_err(|source| Error::Serialize {
        what: "the release",
        source,
    })?;
    write_atomic(&release_path, &bytes, Replace::Owned)?;
    let done = StepLedger {
        release_mac: crate::mac::sign(key.as_ref(), fp, &bytes)?,
        release_crc: Some(crc32fast::hash(&bytes)),
        ..StepLedger::new(RELEASED, fp)
    };
    done.store(lock)?;
    Ok((out, false))
}

/// The restart ledger of a release that is **not stored for reproduction** (DP MCMC: the
/// chain's output is the release; `kind` names it in the refusal, e.g. `"MCMC"`): the first
/// call per folder marks it `started` (call this right before the first noise draw, under
/// the folder's lock) and [`once_done`] marks it `released`; any later call — same input or
/// not, finished or not — is refused, since drawing again would spend the budget again.
///
/// # Errors
/// An unusable ledger key (checked first, as by [`guarded`]), a folder that already holds a
/// private release ([`Error::AlreadyReleased`], [`Error::DifferentInput`],
/// [`Error::LedgerVersion`]), I/O.
pub fn once_start(lock: &DirLock, fp: &str, kind: &str) -> Result<()> {
    // No MAC is stored for such a release, but a set key must still be a usable one: a
    // misconfigured key stops every private release alike, before it starts.
    Key::from_env()?;
    if let Some(l) = StepLedger::load(lock, fp)? {
        return Err(Error::AlreadyReleased {
            dir: lock.dir().into(),
            ledger: lock.dir().join(LEDGER_FILE),
            status: l.status,
            kind: kind.into(),
        });
    }
    StepLedger::new(STARTED, fp).store(lock)
}

/// Marks a [`once_start`] release `released` (after its results are durable).
///
/// # Errors
/// I/O.
pub fn once_done(lock: &DirLock, fp: &str) -> Result<()> {
    StepLedger::new(RELEASED, fp).store(lock)
}

/// Reads a ledger or release file of the folder (capped, a regular file, no link followed,
/// not remembered as an input).
fn read_ledger_file(path: &Path) -> Result<Vec<u8>> {
    read_owned(path, "ledger file", Some(MAX_LEDGER_BYTES))
}
