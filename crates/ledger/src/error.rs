//! The crate's one error type.
//!
//! Every refusal is its own variant, so a caller can tell "this folder holds another input's
//! release" from "the disk is full". Messages carry paths and parameters, never data values.
//! Where an error has a cause (an I/O error, a caller's error, a shard's fault),
//! [`core::error::Error::source`] returns it and the `Display` text does not repeat it, so an
//! error chain printer (`anyhow`'s `{:#}`) prints each part once.

use core::fmt;
use std::path::PathBuf;

/// Everything that can go wrong in this crate.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation failed; `action` says which one, on which path.
    Io {
        /// What was being done ("creating /results", "cannot read shard /s/gen000…").
        action: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A caller-supplied step failed: the `fill` of [`write_atomic_with`](crate::write_atomic_with)
    /// (with the path it was writing) or the `release` closure of [`guarded`](crate::guarded)
    /// (shown as itself).
    Caller {
        /// The file being written, if any.
        writing: Option<PathBuf>,
        /// The caller's error.
        source: Box<dyn core::error::Error + Send + Sync>,
    },
    /// An input is a folder.
    IsFolder {
        /// What the input is ("config", "shard", "ledger file").
        what: String,
        /// Its path.
        path: PathBuf,
    },
    /// An input is a device (`/dev/zero`), socket or other non-file.
    IsDevice {
        /// What the input is.
        what: String,
        /// Its path.
        path: PathBuf,
    },
    /// A file that must be a regular file is a FIFO, a socket or (for a file of a results
    /// folder) a symbolic link.
    NotRegularInput {
        /// What the file is ("ledger key file", "ledger file").
        what: String,
        /// Its path.
        path: PathBuf,
    },
    /// An input is larger than its cap.
    TooLarge {
        /// What the input is.
        what: String,
        /// Its path.
        path: PathBuf,
        /// The cap in bytes.
        limit: u64,
    },
    /// An allocation failed (the text says for what).
    OutOfMemory(String),
    /// A text input is not UTF-8.
    NotUtf8 {
        /// What the input is.
        what: String,
        /// Its path.
        path: PathBuf,
    },
    /// An environment variable holds a malformed value.
    BadEnv {
        /// The variable.
        name: &'static str,
        /// Its value (lossy UTF-8).
        value: String,
        /// What it should be.
        expected: &'static str,
    },
    /// A write target exists and is not a regular file.
    NotRegular(PathBuf),
    /// A write target is an input of this process.
    IsInput(PathBuf),
    /// A write target exists and replacing it was not allowed.
    Exists(PathBuf),
    /// A write target does not name a file (`/`, `..`).
    NoFileName(PathBuf),
    /// No free temporary name in a folder after many tries.
    NoTempName(PathBuf),
    /// A shard (file or in-memory table) fails a check.
    Shard {
        /// The file, if the shard came from one.
        path: Option<PathBuf>,
        /// What is wrong.
        fault: ShardFault,
    },
    /// A shard folder holds no shard of the generation.
    NoShards {
        /// The folder.
        dir: PathBuf,
        /// The generation.
        generation: u32,
        /// Files of that generation exist, but none has a canonical name.
        misnamed: bool,
    },
    /// A shard folder mixes several splits (`-of00003` and `-of00004`).
    MixedSplits {
        /// The folder.
        dir: PathBuf,
        /// The shard counts found.
        splits: Vec<u32>,
    },
    /// Shard names claim 0 or more than [`MAX_SHARDS`](crate::shard::MAX_SHARDS) shards.
    ShardCount {
        /// The folder.
        dir: PathBuf,
        /// The claimed count.
        shards: u32,
    },
    /// A merge of an incomplete or damaged shard folder.
    Incomplete {
        /// The folder.
        dir: PathBuf,
        /// Missing shards.
        missing: usize,
        /// Corrupt shards.
        corrupt: usize,
    },
    /// A ledger or release file that does not parse.
    Corrupt {
        /// "ledger" or "release".
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// A value could not be serialised to JSON (a ledger, a release, fingerprint settings).
    Serialize {
        /// What was being serialised.
        what: &'static str,
        /// The serialiser's error.
        source: serde_json::Error,
    },
    /// The folder's ledger belongs to another input (another fingerprint).
    DifferentInput(PathBuf),
    /// The ledger was written by another ledger version (another fingerprint function).
    LedgerVersion {
        /// The ledger file.
        ledger: PathBuf,
        /// Its version (1 when the file has none).
        found: u32,
    },
    /// A release of this input started and did not finish: noise may have been drawn.
    Unfinished {
        /// The folder.
        dir: PathBuf,
        /// The ledger file.
        ledger: PathBuf,
    },
    /// A once-only release of this input is already in the folder (started or released).
    AlreadyReleased {
        /// The folder.
        dir: PathBuf,
        /// The ledger file.
        ledger: PathBuf,
        /// Its status.
        status: String,
        /// What kind of release ("MCMC").
        kind: String,
    },
    /// A stored release fails its CRC-32 in the ledger.
    ReleaseChecksum(PathBuf),
    /// A stored release's ledger differs from the claim the caller recomputed.
    ClaimMismatch {
        /// The release file.
        release: PathBuf,
        /// Stored (ε, δ).
        stored: (f64, f64),
        /// Recomputed (ε, δ).
        implied: (f64, f64),
    },
    /// The release closure returned a release whose ledger is not the claim stated before.
    ClaimChanged,
    /// The ledger key file cannot be read.
    KeyFile {
        /// The key file.
        path: PathBuf,
        /// Why.
        source: Box<Error>,
    },
    /// The ledger key is shorter than [`MIN_KEY_BYTES`](crate::mac::MIN_KEY_BYTES).
    KeyTooShort(usize),
    /// A release authenticated with a key, but no key is set.
    MacNeedsKey(PathBuf),
    /// A key is set, but the release carries no MAC.
    MacMissing(PathBuf),
    /// The stored MAC is not hex.
    MacMalformed,
    /// The MAC does not verify (edited, or another key).
    MacMismatch(PathBuf),
}

/// What is wrong with a shard.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShardFault {
    /// A file of the retired format version 1 (`DPISHRD1`).
    Version1,
    /// Not a shard at all, or shorter than a header.
    BadMagic,
    /// The CRC-32 does not match.
    Checksum,
    /// The file's length disagrees with its header.
    SizeMismatch,
    /// The header's sizes overflow the address space.
    SizeOverflow,
    /// A table whose length is not the header's `n_rows · (theta_dim + out_dim)`.
    DataLength {
        /// Values given.
        got: usize,
        /// Values the header implies.
        expect: usize,
    },
}

impl fmt::Display for ShardFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Version1 => f.write_str(
                "a shard of format version 1 (written before the pairs streams moved into the \
                 library; its rows differ from this version's): simulate it again",
            ),
            Self::BadMagic => f.write_str("not a dpinfer shard (bad magic or truncated)"),
            Self::Checksum => f.write_str("checksum mismatch (corrupt)"),
            Self::SizeMismatch => f.write_str("size does not match header"),
            Self::SizeOverflow => f.write_str("size overflow"),
            Self::DataLength { got, expect } => {
                write!(f, "shard data has {got} values, the header says {expect}")
            }
        }
    }
}

impl core::error::Error for ShardFault {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::mac::{KEY_ENV, KEY_FILE_ENV, MIN_KEY_BYTES};
        match self {
            Self::Io { action, .. } => f.write_str(action),
            Self::Caller {
                writing: Some(p), ..
            } => write!(f, "writing {}", p.display()),
            Self::Caller {
                writing: None,
                source,
            } => fmt::Display::fmt(source, f),
            Self::IsFolder { what, path } => {
                write!(f, "{what} {} is a folder, not a file", path.display())
            }
            Self::IsDevice { what, path } => write!(
                f,
                "{what} {} is a device, not a file; refusing to read it",
                path.display()
            ),
            Self::NotRegularInput { what, path } => write!(
                f,
                "{what} {} is not a regular file (a symbolic link, pipe or socket); refusing \
                 to read it",
                path.display()
            ),
            Self::TooLarge { what, path, limit } => write!(
                f,
                "{what} {} is larger than the input cap of {limit} bytes (set \
                 DPINFER_MAX_INPUT_BYTES to raise it)",
                path.display()
            ),
            Self::OutOfMemory(what) => write!(f, "not enough memory {what}"),
            Self::NotUtf8 { what, path } => {
                write!(f, "{what} {} is not UTF-8 text", path.display())
            }
            Self::BadEnv {
                name,
                value,
                expected,
            } => write!(f, "{name} = {value:?} is not {expected}"),
            Self::NotRegular(p) => write!(
                f,
                "{} exists and is not a regular file (a folder, device, symlink or pipe); \
                 refusing to write it",
                p.display()
            ),
            Self::IsInput(p) => write!(
                f,
                "{} is an input of this command; refusing to overwrite it (choose another --out)",
                p.display()
            ),
            Self::Exists(p) => write!(
                f,
                "{} already exists; refusing to overwrite it (pass --force to replace it)",
                p.display()
            ),
            Self::NoFileName(p) => write!(f, "{} does not name a file", p.display()),
            Self::NoTempName(d) => {
                write!(f, "cannot find a free temporary name in {}", d.display())
            }
            Self::Shard { path: Some(p), .. } => write!(f, "shard {}", p.display()),
            Self::Shard { path: None, fault } => fmt::Display::fmt(fault, f),
            Self::NoShards {
                dir,
                generation,
                misnamed: false,
            } => write!(
                f,
                "no shards of generation {generation} in {}",
                dir.display()
            ),
            Self::NoShards {
                dir,
                generation,
                misnamed: true,
            } => write!(
                f,
                "no shard of generation {generation} in {} has a valid name",
                dir.display()
            ),
            Self::MixedSplits { dir, splits } => write!(
                f,
                "{} mixes shards of different splits (of {splits:?}); keep one split per folder",
                dir.display()
            ),
            Self::ShardCount { dir, shards } => write!(
                f,
                "shard names in {} claim {shards} shards (1..={} allowed)",
                dir.display(),
                crate::shard::MAX_SHARDS
            ),
            Self::Incomplete {
                dir,
                missing,
                corrupt,
            } => write!(
                f,
                "cannot merge: {missing} missing and {corrupt} corrupt shard(s); run `dpinfer \
                 verify {}`",
                dir.display()
            ),
            Self::Corrupt { what, path, .. } => write!(f, "corrupt {what} {}", path.display()),
            Self::Serialize { what, .. } => write!(f, "cannot serialise {what}"),
            Self::DifferentInput(dir) => write!(
                f,
                "{} already holds a private release of a different input; refusing to \
                 overwrite it (choose another output folder)",
                dir.display()
            ),
            Self::LedgerVersion { ledger, found } => write!(
                f,
                "{} was written by another dpinfer version (ledger version {found}; this \
                 version writes version {} and fingerprints inputs differently), so it cannot \
                 tell whether the stored release is of this input. Refusing to reproduce it or \
                 to draw new noise (its budget may already be spent): use another output \
                 folder, or the version that wrote the ledger",
                ledger.display(),
                crate::LEDGER_VERSION
            ),
            Self::Unfinished { dir, ledger } => write!(
                f,
                "a private step on this input started in {} and did not finish: its noise may \
                 already have been drawn, so drawing again could spend the budget twice. \
                 Refusing. (Remove {} only if you accept charging the budget again.)",
                dir.display(),
                ledger.display()
            ),
            Self::AlreadyReleased {
                dir,
                ledger,
                status,
                kind,
            } => write!(
                f,
                "{} already holds a private {kind} release of this input (ledger {status}): \
                 such a release cannot be reproduced without running it, so running it again \
                 would spend the budget again. Refusing. (Choose another folder, or remove {} \
                 if you accept charging the budget again.)",
                dir.display(),
                ledger.display()
            ),
            Self::ReleaseChecksum(p) => write!(
                f,
                "{} does not match its ledger checksum; refusing to draw new noise (the budget \
                 for this input is spent)",
                p.display()
            ),
            Self::ClaimMismatch {
                release,
                stored,
                implied,
            } => write!(
                f,
                "{}: the stored privacy ledger (ε = {}, δ = {}) does not match the one this \
                 config implies (ε = {}, δ = {}); refusing to reproduce a release whose ledger \
                 was altered or belongs to other settings",
                release.display(),
                stored.0,
                stored.1,
                implied.0,
                implied.1
            ),
            Self::ClaimChanged => f.write_str(
                "internal: the release's ledger differs from the claim it stated before \
                 drawing; nothing is recorded as released",
            ),
            Self::KeyFile { path, .. } => write!(f, "{KEY_FILE_ENV} = {}", path.display()),
            Self::KeyTooShort(n) => write!(
                f,
                "the ledger key ({KEY_FILE_ENV} or {KEY_ENV}) has {n} bytes; at least \
                 {MIN_KEY_BYTES} are needed"
            ),
            Self::MacNeedsKey(p) => write!(
                f,
                "{} is authenticated with a ledger key; set {KEY_FILE_ENV} or {KEY_ENV} to \
                 verify it",
                p.display()
            ),
            Self::MacMissing(p) => write!(
                f,
                "{} carries no MAC but a ledger key is set; refusing to reproduce a release \
                 that cannot be authenticated",
                p.display()
            ),
            Self::MacMalformed => f.write_str("malformed release_mac in the ledger"),
            Self::MacMismatch(p) => write!(
                f,
                "{} fails its ledger MAC: it was altered, or written with another key; \
                 refusing to reproduce it or to draw new noise",
                p.display()
            ),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Caller {
                writing: Some(_),
                source,
            } => Some(source.as_ref()),
            // Shown as itself: its cause is the caller's error's own cause.
            Self::Caller {
                writing: None,
                source,
            } => source.source(),
            Self::Shard {
                path: Some(_),
                fault,
            } => Some(fault),
            Self::Corrupt { source, .. } | Self::Serialize { source, .. } => Some(source),
            Self::KeyFile { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl Error {
    /// An I/O error with what was being done.
    pub(crate) fn io(action: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            action: action.into(),
            source,
        }
    }

    /// The innermost cause's message (what `verify_dir` reports for a damaged shard).
    #[must_use]
    pub fn root_cause(&self) -> String {
        let mut e: &dyn core::error::Error = self;
        while let Some(s) = e.source() {
            e = s;
        }
        e.to_string()
    }
}

/// This crate's `Result`.
pub type Result<T, E = Error> = core::result::Result<T, E>;
