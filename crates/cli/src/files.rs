//! File safety: every file the CLI reads or writes goes through here.
//!
//! * [`DirLock`]: an exclusive OS lock (`flock`/`LockFileEx` through `std::fs::File::lock`) on
//!   `.dpinfer.lock` in a results folder, held from the ledger check to the durable ledger
//!   write. The OS releases it when the process ends, however it ends, so there is no stale
//!   lock to clean up; the file itself is never deleted (deleting a lock file reopens the race).
//! * [`write_atomic`] / [`write_atomic_with`]: a unique temporary sibling (`O_EXCL`), written,
//!   fsynced, renamed over the target, and the folder fsynced; the temporary file is removed
//!   on every error path. A reader sees the old file or the new one, never a mix.
//! * [`Replace`]: what may be replaced. Never a non-regular file (device, folder, symlink,
//!   FIFO) and never a file this process read as an input; an existing regular file only
//!   when the command owns it (results folders, shard folders) or with `--force`.
//! * [`read_input`]: inputs are regular files or pipes (a device such as `/dev/zero` is
//!   refused), read up to a cap ([`max_input_bytes`], environment variable
//!   `DPINFER_MAX_INPUT_BYTES`) with fallible allocation, and remembered so no output of the
//!   same process can replace them.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, bail};

/// Name of the lock file in a locked folder.
pub const LOCK_FILE: &str = ".dpinfer.lock";

/// Default cap of one input file: 4 GiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 4 << 30;

/// Cap of a config file (TOML text): 16 MiB.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// An exclusive lock on a folder, released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DirLock {
    file: File,
    dir: PathBuf,
}

impl DirLock {
    /// Creates `dir` if needed and takes its exclusive lock, waiting (with a message on
    /// stderr naming the holder's PID) while another process holds it.
    ///
    /// # Errors
    /// The folder or its lock file cannot be created or locked.
    pub fn acquire(dir: &Path) -> Result<Self> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("opening the lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                crate::errln!(
                    "waiting for {} (locked by dpinfer process {})",
                    dir.display(),
                    holder.trim()
                );
                file.lock()
                    .with_context(|| format!("locking {}", path.display()))?;
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()));
            }
        }
        // Informational only: the OS lock, not this content, is what excludes.
        let _ = file.set_len(0);
        let _ = write!(file, "{}", std::process::id());
        Ok(Self {
            file,
            dir: dir.to_path_buf(),
        })
    }

    /// The locked folder.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// What [`write_atomic`] may replace when the target already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// A file the command owns (results folder, shard folder): replaced.
    Owned,
    /// A user-named output (`--out` of `merge`/`export`): refused unless `--force`.
    IfForced(bool),
}

/// Inputs this process has read, by identity (device and inode on Unix).
static INPUTS: Mutex<Vec<FileId>> = Mutex::new(Vec::new());

#[derive(Debug, Clone, PartialEq, Eq)]
enum FileId {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg(not(unix))]
    Path(PathBuf),
}

fn file_id(path: &Path, meta: &fs::Metadata) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        Some(FileId::Inode(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        fs::canonicalize(path).ok().map(FileId::Path)
    }
}

fn remember_input(path: &Path, meta: &fs::Metadata) {
    if let Some(id) = file_id(path, meta)
        && let Ok(mut v) = INPUTS.lock()
        && !v.contains(&id)
    {
        v.push(id);
    }
}

fn is_input(path: &Path, meta: &fs::Metadata) -> bool {
    let Some(id) = file_id(path, meta) else {
        return false;
    };
    INPUTS.lock().map(|v| v.contains(&id)).unwrap_or(true)
}

/// The input cap: `DPINFER_MAX_INPUT_BYTES` (bytes, a positive integer) or
/// [`DEFAULT_MAX_INPUT_BYTES`].
///
/// # Errors
/// A malformed environment variable.
pub fn max_input_bytes() -> Result<u64> {
    match std::env::var("DPINFER_MAX_INPUT_BYTES") {
        Err(_) => Ok(DEFAULT_MAX_INPUT_BYTES),
        Ok(s) => match s.trim().parse::<u64>() {
            Ok(v) if v > 0 => Ok(v),
            _ => bail!("DPINFER_MAX_INPUT_BYTES = {s:?} is not a positive number of bytes"),
        },
    }
}

/// Reads an input file of at most `min(cap, max_input_bytes())` bytes (`what` names it in
/// errors) and remembers it as an input (no output of this process may replace it). Devices
/// are refused.
///
/// # Errors
/// A missing or unreadable file, a device, a file above the cap, too little memory.
pub fn read_input(path: &Path, what: &str, cap: Option<u64>) -> Result<Vec<u8>> {
    let (buf, meta) = read_capped(path, what, cap)?;
    remember_input(path, &meta);
    Ok(buf)
}

/// [`read_input`] for a file the command owns (a ledger it will rewrite): not remembered.
///
/// # Errors
/// As [`read_input`].
pub fn read_bounded(path: &Path, what: &str, cap: Option<u64>) -> Result<Vec<u8>> {
    read_capped(path, what, cap).map(|(b, _)| b)
}

fn read_capped(path: &Path, what: &str, cap: Option<u64>) -> Result<(Vec<u8>, fs::Metadata)> {
    let limit = cap.map_or(max_input_bytes()?, |c| {
        c.min(max_input_bytes().unwrap_or(c))
    });
    let mut f =
        File::open(path).with_context(|| format!("cannot read {what} {}", path.display()))?;
    let meta = f
        .metadata()
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    let ft = meta.file_type();
    if ft.is_dir() {
        bail!("{what} {} is a folder, not a file", path.display());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() || ft.is_block_device() || ft.is_socket() {
            bail!(
                "{what} {} is a device, not a file; refusing to read it",
                path.display()
            );
        }
    }
    let too_big = || {
        anyhow::anyhow!(
            "{what} {} is larger than the input cap of {limit} bytes (set \
             DPINFER_MAX_INPUT_BYTES to raise it)",
            path.display()
        )
    };
    let mut buf: Vec<u8> = Vec::new();
    if ft.is_file() {
        if meta.len() > limit {
            return Err(too_big());
        }
        let n = usize::try_from(meta.len()).map_err(|_| too_big())?;
        buf.try_reserve_exact(n.saturating_add(1)).map_err(|_| {
            anyhow::anyhow!("not enough memory to read {} ({n} bytes)", path.display())
        })?;
    }
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let k = match f.read(&mut chunk) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {what} {}", path.display()));
            }
        };
        if (buf.len() + k) as u64 > limit {
            return Err(too_big());
        }
        buf.try_reserve(k)
            .map_err(|_| anyhow::anyhow!("not enough memory to read {}", path.display()))?;
        buf.extend_from_slice(&chunk[..k]);
    }
    Ok((buf, meta))
}

/// [`read_input`] as UTF-8 text.
///
/// # Errors
/// As [`read_input`], or text that is not UTF-8.
pub fn read_input_text(path: &Path, what: &str, cap: Option<u64>) -> Result<String> {
    let b = read_input(path, what, cap)?;
    String::from_utf8(b).map_err(|_| anyhow::anyhow!("{what} {} is not UTF-8 text", path.display()))
}

/// Refuses to write `path` when it is not a regular file, is an input of this process, or
/// (for [`Replace::IfForced`]`(false)`) exists at all.
///
/// # Errors
/// The refusal.
pub fn check_target(path: &Path, replace: Replace) -> Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("inspecting {}", path.display())),
    };
    if !meta.file_type().is_file() {
        bail!(
            "{} exists and is not a regular file (a folder, device, symlink or pipe); \
             refusing to replace it",
            path.display()
        );
    }
    if is_input(path, &meta) {
        bail!(
            "{} is an input of this command; refusing to overwrite it (choose another --out)",
            path.display()
        );
    }
    if replace == Replace::IfForced(false) {
        bail!(
            "{} already exists; refusing to overwrite it (pass --force to replace it)",
            path.display()
        );
    }
    Ok(())
}

/// A temporary file removed on drop unless persisted.
struct Temp {
    path: PathBuf,
    keep: bool,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_file(&self.path);
        }
    }
}

fn create_temp(dir: &Path, name: &str) -> Result<(File, Temp)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for _ in 0..64 {
        let k = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(
            ".{name}.tmp-{}-{k}-{nanos:08x}",
            std::process::id()
        ));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => {
                return Ok((
                    f,
                    Temp {
                        path: tmp,
                        keep: false,
                    },
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("creating {}", tmp.display())),
        }
    }
    bail!("cannot find a free temporary name in {}", dir.display())
}

/// Fsyncs a folder so a rename in it is durable (no-op where folders cannot be opened).
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("syncing folder {}", dir.display()))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Writes `path` atomically and durably through `fill` (see the module docs).
///
/// # Errors
/// A refused target ([`check_target`]), I/O, or `fill`'s error; the temporary file is removed.
pub fn write_atomic_with(
    path: &Path,
    replace: Replace,
    fill: impl FnOnce(&mut File) -> Result<()>,
) -> Result<()> {
    check_target(path, replace)?;
    let name = path
        .file_name()
        .and_then(|s| s.to_str())
        .with_context(|| format!("{} does not name a file", path.display()))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let (mut f, mut tmp) = create_temp(dir, name)?;
    fill(&mut f).with_context(|| format!("writing {}", path.display()))?;
    f.sync_all()
        .with_context(|| format!("syncing {}", tmp.path.display()))?;
    drop(f);
    // Checked again right before the rename: the target may have appeared meanwhile.
    check_target(path, replace)?;
    fs::rename(&tmp.path, path).with_context(|| format!("renaming into {}", path.display()))?;
    tmp.keep = true;
    sync_dir(dir)
}

/// Writes `bytes` to `path` atomically and durably.
///
/// # Errors
/// As [`write_atomic_with`].
pub fn write_atomic(path: &Path, bytes: &[u8], replace: Replace) -> Result<()> {
    write_atomic_with(path, replace, |f| Ok(f.write_all(bytes)?))
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

/// Writes formatted text to stderr, ignoring errors (diagnostics must never abort a run).
pub fn stderr_write(args: core::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
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

/// `eprintln!` that never panics (see [`stderr_write`]).
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => {{
        $crate::files::stderr_write(format_args!($($t)*));
        $crate::files::stderr_write(format_args!("\n"));
    }};
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temporary() {
        let dir = std::env::temp_dir().join(format!("dpinfer-files-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.bin");
        write_atomic(&p, b"old", Replace::Owned).unwrap();
        // The fill fails half-way: the old file stays, the temporary is gone.
        let r = write_atomic_with(&p, Replace::Owned, |f| {
            f.write_all(b"half")?;
            bail!("disk on fire")
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(names(&dir), ["out.bin"]);
        // A refused target (exists, not forced): nothing created.
        assert!(write_atomic(&p, b"new", Replace::IfForced(false)).is_err());
        assert_eq!(names(&dir), ["out.bin"]);
        write_atomic(&p, b"new", Replace::IfForced(true)).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        // An input of this process is never replaced, even forced.
        assert_eq!(read_input(&p, "input", None).unwrap(), b"new");
        assert!(write_atomic(&p, b"x", Replace::IfForced(true)).is_err());
        assert_eq!(names(&dir), ["out.bin"]);
        let _ = fs::remove_dir_all(&dir);
    }
}
