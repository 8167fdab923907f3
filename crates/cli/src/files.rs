//! File safety for every file the CLI reads or writes: the machinery is the library's
//! ([`dpinfer_ledger::files`]: folder locks, atomic durable writes, capped input reads, no
//! output over an input), re-exported here; what stays is the CLI's own standard output and
//! error, which never panic.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

pub use dpinfer_ledger::files::{
    DEFAULT_MAX_INPUT_BYTES, DirLock, LOCK_FILE, MAX_CONFIG_BYTES, Replace, check_target,
    max_input_bytes, read_bounded, read_input, read_input_text,
};

/// [`dpinfer_ledger::write_atomic`] with the CLI's error type.
///
/// # Errors
/// As the library's.
pub fn write_atomic(path: &Path, bytes: &[u8], replace: Replace) -> anyhow::Result<()> {
    Ok(dpinfer_ledger::write_atomic(path, bytes, replace)?)
}

/// [`dpinfer_ledger::write_atomic_with`] for a `fill` that returns the CLI's error type.
///
/// # Errors
/// As the library's.
pub fn write_atomic_with(
    path: &Path,
    replace: Replace,
    fill: impl FnOnce(&mut File) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    Ok(dpinfer_ledger::write_atomic_with(path, replace, fill)?)
}

/// Standard output that never panics: the first write error is kept (see [`take_stdout_error`])
/// and later writes are skipped.
static STDOUT_ERROR: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Writes formatted text to stdout (used by [`outln!`](crate::outln) and
/// [`out!`](crate::out)); errors are kept, never raised.
pub fn stdout_write(args: core::fmt::Arguments<'_>) {
    let Ok(mut slot) = STDOUT_ERROR.lock() else {
        return;
    };
    if slot.is_some() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        *slot = Some(e);
    }
}

/// Flushes stdout and returns the first error any write met.
#[must_use]
pub fn take_stdout_error() -> Option<std::io::Error> {
    let flushed = std::io::stdout().lock().flush();
    let mut slot = STDOUT_ERROR.lock().ok()?;
    slot.take().or(flushed.err())
}

/// `println!` that never panics (see [`stdout_write`]).
#[macro_export]
macro_rules! outln {
    () => { $crate::files::stdout_write(format_args!("\n")) };
    ($($t:tt)*) => {{
        $crate::files::stdout_write(format_args!($($t)*));
        $crate::files::stdout_write(format_args!("\n"));
    }};
}

/// `print!` that never panics (see [`stdout_write`]).
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::files::stdout_write(format_args!($($t)*)) };
}

/// What identifies one version of a file in a folder: its modification time, length and (on
/// Unix) inode — an atomic write replaces the inode, so a rewrite within the clock's
/// granularity still counts as written.
type Stamp = (Option<std::time::SystemTime>, u64, u64);

fn stamp(m: &std::fs::Metadata) -> Stamp {
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(m);
    #[cfg(not(unix))]
    let ino = 0;
    (m.modified().ok(), m.len(), ino)
}

/// The regular files of `dir` (none if it does not exist yet), by name, with their
/// `Stamp`s: taken before a run, it lets [`written_since`] count what the run wrote.
#[must_use]
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<std::ffi::OsString, Stamp> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return std::collections::BTreeMap::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            let m = e.metadata().ok()?;
            m.is_file().then(|| (e.file_name(), stamp(&m)))
        })
        .collect()
}

/// How many regular files of `dir` are new or replaced since `before` (a [`snapshot`]), the
/// folder's lock file aside: the number of files a run wrote, not the number it meant to.
#[must_use]
pub fn written_since(
    dir: &Path,
    before: &std::collections::BTreeMap<std::ffi::OsString, Stamp>,
) -> usize {
    snapshot(dir)
        .into_iter()
        .filter(|(name, s)| name != LOCK_FILE && before.get(name) != Some(s))
        .count()
}
