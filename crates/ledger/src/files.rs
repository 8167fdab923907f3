//! File safety: locks, atomic durable writes and capped input reads.
//!
//! * [`DirLock`]: an exclusive OS lock (`flock`/`LockFileEx` through `std::fs::File::lock`) on
//!   `.dpinfer.lock` in a folder, held from the ledger check to the durable ledger write. The
//!   OS releases it when the process ends, however it ends, so there is no stale lock to clean
//!   up; the file itself is never deleted (deleting a lock file reopens the race). It is
//!   opened without following a link (`O_NOFOLLOW`) or blocking on a FIFO, anything but a
//!   regular file is refused, and it is never truncated unless this process created it or it
//!   holds nothing but an earlier lock's PID.
//! * [`write_atomic`] / [`write_atomic_with`]: a unique temporary sibling (`O_EXCL`,
//!   `O_NOFOLLOW`), written, fsynced, renamed over the target, and the folder fsynced; the
//!   temporary file is removed on every error path. A reader sees the old file or the new
//!   one, never a mix. The rename replaces a name, never writes through a link.
//! * [`Replace`]: what may be replaced. Never a non-regular file (device, folder, symlink,
//!   FIFO) and never a file this process read as an input; an existing regular file only
//!   when the caller owns it (results folders, shard folders) or the user forced it.
//! * [`read_input`]: inputs are regular files or pipes (a device such as `/dev/zero` is
//!   refused), read up to a cap ([`max_input_bytes`], environment variable
//!   `DPINFER_MAX_INPUT_BYTES`) with fallible allocation, and remembered so no output of the
//!   same process can replace them. The ledger's own files and the key file are read as
//!   regular files only, never blocking on a FIFO ([`read_bounded`]).

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Name of the lock file in a locked folder.
pub const LOCK_FILE: &str = ".dpinfer.lock";

/// Default cap of one input file: 4 GiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 4 << 30;

/// Cap of a config file (TOML text): 16 MiB.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The environment variable that overrides [`DEFAULT_MAX_INPUT_BYTES`].
pub const MAX_INPUT_ENV: &str = "DPINFER_MAX_INPUT_BYTES";

/// An exclusive lock on a folder, released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DirLock {
    file: File,
    dir: PathBuf,
}

impl DirLock {
    /// Creates `dir` if needed and takes its exclusive lock, waiting while another process
    /// holds it; while it waits, one line naming the holder's PID goes to stderr (use
    /// [`DirLock::acquire_with`] to report it another way).
    ///
    /// # Errors
    /// The folder or its lock file cannot be created or locked.
    pub fn acquire(dir: &Path) -> Result<Self> {
        Self::acquire_with(dir, |dir, holder| {
            // A diagnostic: a closed or full stderr must not abort the lock.
            let _ = writeln!(
                std::io::stderr().lock(),
                "waiting for {} (locked by dpinfer process {holder})",
                dir.display()
            );
        })
    }

    /// [`DirLock::acquire`], calling `on_wait(dir, holder_pid_text)` once if the lock is
    /// held by another process (then waiting for it).
    ///
    /// # Errors
    /// As [`DirLock::acquire`].
    pub fn acquire_with(dir: &Path, on_wait: impl FnOnce(&Path, &str)) -> Result<Self> {
        fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let path = dir.join(LOCK_FILE);
        let (mut file, created) = open_lock_file(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                on_wait(dir, &pid_text(&mut file));
                file.lock()
                    .map_err(|e| Error::io(format!("locking {}", path.display()), e))?;
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(Error::io(format!("locking {}", path.display()), e));
            }
        }
        // Informational only: the OS lock, not this content, is what excludes. Written into
        // a file this call created, or rewritten in one that holds nothing but an earlier
        // holder's PID and has no other name (a lock file of an earlier run); any other
        // existing file is locked and left exactly as it is.
        if created || holds_only_a_pid(&mut file) {
            use std::io::{Seek, SeekFrom};
            let _ = file.set_len(0);
            let _ = file.seek(SeekFrom::Start(0));
            let _ = write!(file, "{}", std::process::id());
        }
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

/// Opens (creating it if absent) a folder's lock file without following a symbolic link at
/// its name and without blocking on a FIFO, and refuses anything that is not a regular file:
/// a link, FIFO, device or folder planted there is never opened for writing, so its target is
/// never touched. Returns the file and whether this call created it.
fn open_lock_file(path: &Path) -> Result<(File, bool)> {
    let cannot = |e| Error::io(format!("opening the lock file {}", path.display()), e);
    // Refused before opening, so a device's open has no side effect …
    refuse_special(path)?;
    let (file, created) = match no_follow(OpenOptions::new().read(true).write(true))
        .create_new(true)
        .open(path)
    {
        Ok(f) => (f, true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => (
            no_follow(OpenOptions::new().read(true).write(true))
                .open(path)
                .map_err(cannot)?,
            false,
        ),
        Err(e) => return Err(cannot(e)),
    };
    // … and checked again on what was opened (the name may have changed in between).
    if !file.metadata().map_err(cannot)?.file_type().is_file() {
        return Err(Error::NotRegular(path.into()));
    }
    Ok((file, created))
}

/// Refuses a path that exists and is not a regular file (not following a link at its name).
fn refuse_special(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(_) => Err(Error::NotRegular(path.into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("inspecting {}", path.display()), e)),
    }
}

/// Longest lock file content read or rewritten: a PID in decimal.
const PID_BYTES: u64 = 20;

/// The PID text in a lock file (the first [`PID_BYTES`] bytes at most).
fn pid_text(file: &mut File) -> String {
    use std::io::{Seek, SeekFrom};
    let mut b = Vec::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = Read::by_ref(file).take(PID_BYTES).read_to_end(&mut b);
    String::from_utf8_lossy(&b).trim().to_string()
}

/// Whether an existing lock file is one an earlier lock wrote: at most [`PID_BYTES`] ASCII
/// digits, and (Unix) no other name, so rewriting it changes no file elsewhere.
fn holds_only_a_pid(file: &mut File) -> bool {
    let Ok(meta) = file.metadata() else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() != 1 {
            return false;
        }
    }
    meta.len() <= PID_BYTES && pid_text(file).bytes().all(|c| c.is_ascii_digit())
}

/// `o` set not to follow a symbolic link at the path's last component (`O_NOFOLLOW`; on
/// Windows the link itself is opened) and not to block on a FIFO (`O_NONBLOCK`, no effect
/// on a regular file).
fn no_follow(o: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        /// `FILE_FLAG_OPEN_REPARSE_POINT`: open a link, not its target.
        const OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        o.custom_flags(OPEN_REPARSE_POINT);
    }
    o
}

/// `o` set not to block on a FIFO (`O_NONBLOCK`), following links: for a file the user
/// names (a key file may be a link into a secrets folder).
fn no_block(o: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    o
}

/// What [`write_atomic`] may replace when the target already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// A file the caller owns (results folder, shard folder): replaced.
    Owned,
    /// A user-named output (`--out`): refused unless the flag (`--force`) is `true`.
    IfForced(bool),
}

/// Inputs this process has read, by identity (device, inode and status-change time on Unix).
static INPUTS: Mutex<Vec<FileId>> = Mutex::new(Vec::new());

/// A file's identity. On Unix (device, inode) alone is not enough in a long-lived process (a
/// library caller running many inferences): once an input is deleted its inode number is
/// reused by the next new file, which would then be refused as "an input"; the status-change
/// time (set when the inode is created) tells the two apart.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileId {
    #[cfg(unix)]
    Inode(u64, u64, i64, i64),
    #[cfg(not(unix))]
    Path(PathBuf),
}

fn file_id(path: &Path, meta: &fs::Metadata) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        Some(FileId::Inode(
            meta.dev(),
            meta.ino(),
            meta.ctime(),
            meta.ctime_nsec(),
        ))
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
    match std::env::var_os(MAX_INPUT_ENV) {
        None => Ok(DEFAULT_MAX_INPUT_BYTES),
        Some(s) => match s.to_str().map(|t| t.trim().parse::<u64>()) {
            Some(Ok(v)) if v > 0 => Ok(v),
            _ => Err(Error::BadEnv {
                name: MAX_INPUT_ENV,
                value: s.to_string_lossy().into_owned(),
                expected: "a positive number of bytes",
            }),
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
    let (buf, meta) = read_capped(path, what, cap, Source::Input)?;
    remember_input(path, &meta);
    Ok(buf)
}

/// [`read_input`] for a regular file that is not an input of the computation (a key file):
/// not remembered. Anything but a regular file — a FIFO, socket, device or folder — is refused
/// without blocking (opened with `O_NONBLOCK` and checked on the open file); a symbolic link
/// is followed.
///
/// # Errors
/// As [`read_input`], and [`Error::NotRegularInput`] for a FIFO or socket.
pub fn read_bounded(path: &Path, what: &str, cap: Option<u64>) -> Result<Vec<u8>> {
    read_capped(path, what, cap, Source::Regular).map(|(b, _)| b)
}

/// Reads a file the caller owns and will rewrite (a ledger or release file of a results
/// folder): [`read_bounded`], but a symbolic link at `path` is refused, not followed.
///
/// # Errors
/// As [`read_bounded`], and [`Error::NotRegularInput`] for a symbolic link.
pub(crate) fn read_owned(path: &Path, what: &str, cap: Option<u64>) -> Result<Vec<u8>> {
    read_capped(path, what, cap, Source::Owned).map(|(b, _)| b)
}

/// Which files a read accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// An input: a regular file or a pipe, links followed.
    Input,
    /// A regular file only, links followed, never blocking.
    Regular,
    /// A regular file only, a link at the name refused, never blocking.
    Owned,
}

/// Refuses what `source` does not read: a folder, a device or socket, and (but for an input)
/// a FIFO or a symbolic link.
fn check_readable(path: &Path, what: &str, meta: &fs::Metadata, source: Source) -> Result<()> {
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(Error::IsFolder {
            what: what.into(),
            path: path.into(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() || ft.is_block_device() || ft.is_socket() {
            return Err(Error::IsDevice {
                what: what.into(),
                path: path.into(),
            });
        }
    }
    if source != Source::Input && !ft.is_file() {
        return Err(Error::NotRegularInput {
            what: what.into(),
            path: path.into(),
        });
    }
    Ok(())
}

fn read_capped(
    path: &Path,
    what: &str,
    cap: Option<u64>,
    source: Source,
) -> Result<(Vec<u8>, fs::Metadata)> {
    let limit = cap.map_or(max_input_bytes()?, |c| {
        c.min(max_input_bytes().unwrap_or(c))
    });
    let cannot = |e| Error::io(format!("cannot read {what} {}", path.display()), e);
    // A special file is refused before it is opened (opening a device can act), then the
    // open file is checked again: the name may have changed in between.
    let mut opts = OpenOptions::new();
    opts.read(true);
    match source {
        Source::Input => {}
        Source::Regular => {
            check_readable(path, what, &fs::metadata(path).map_err(cannot)?, source)?;
            no_block(&mut opts);
        }
        Source::Owned => {
            check_readable(
                path,
                what,
                &fs::symlink_metadata(path).map_err(cannot)?,
                source,
            )?;
            no_follow(&mut opts);
        }
    }
    let mut f = opts.open(path).map_err(cannot)?;
    let meta = f.metadata().map_err(cannot)?;
    check_readable(path, what, &meta, source)?;
    let ft = meta.file_type();
    let too_big = || Error::TooLarge {
        what: what.into(),
        path: path.into(),
        limit,
    };
    let mut buf: Vec<u8> = Vec::new();
    if ft.is_file() {
        if meta.len() > limit {
            return Err(too_big());
        }
        let n = usize::try_from(meta.len()).map_err(|_| too_big())?;
        buf.try_reserve_exact(n.saturating_add(1))
            .map_err(|_| Error::OutOfMemory(format!("to read {} ({n} bytes)", path.display())))?;
    }
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let k = match f.read(&mut chunk) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(cannot(e)),
        };
        if (buf.len() + k) as u64 > limit {
            return Err(too_big());
        }
        buf.try_reserve(k)
            .map_err(|_| Error::OutOfMemory(format!("to read {}", path.display())))?;
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
    String::from_utf8(b).map_err(|_| Error::NotUtf8 {
        what: what.into(),
        path: path.into(),
    })
}

/// Refuses to write `path` when it is not a regular file, is an input of this process, or
/// (for [`Replace::IfForced`]`(false)`) exists at all.
///
/// # Errors
/// The refusal ([`Error::NotRegular`], [`Error::IsInput`], [`Error::Exists`]), or I/O.
pub fn check_target(path: &Path, replace: Replace) -> Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("inspecting {}", path.display()), e)),
    };
    if !meta.file_type().is_file() {
        return Err(Error::NotRegular(path.into()));
    }
    if is_input(path, &meta) {
        return Err(Error::IsInput(path.into()));
    }
    if replace == Replace::IfForced(false) {
        return Err(Error::Exists(path.into()));
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
        match no_follow(OpenOptions::new().write(true).create_new(true)).open(&tmp) {
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
            Err(e) => return Err(Error::io(format!("creating {}", tmp.display()), e)),
        }
    }
    Err(Error::NoTempName(dir.into()))
}

/// Fsyncs a folder so a rename in it is durable (no-op where folders cannot be opened).
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_DIRECTORY: anything but a folder (a FIFO swapped in) fails at once, never blocks.
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
            .open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(format!("syncing folder {}", dir.display()), e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Writes `path` atomically and durably through `fill` (see the module docs). `fill` gets
/// the temporary file; wrap it in a `BufWriter` for many small writes.
///
/// # Errors
/// A refused target ([`check_target`]), I/O, or `fill`'s error ([`Error::Caller`] naming
/// the path); the temporary file is removed.
pub fn write_atomic_with<E>(
    path: &Path,
    replace: Replace,
    fill: impl FnOnce(&mut File) -> core::result::Result<(), E>,
) -> Result<()>
where
    E: Into<Box<dyn core::error::Error + Send + Sync>>,
{
    check_target(path, replace)?;
    let name = path
        .file_name()
        .and_then(|s| s.to_str())
        .ok_or_else(|| Error::NoFileName(path.into()))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let (mut f, mut tmp) = create_temp(dir, name)?;
    fill(&mut f).map_err(|e| Error::Caller {
        writing: Some(path.into()),
        source: e.into(),
    })?;
    f.sync_all()
        .map_err(|e| Error::io(format!("syncing {}", tmp.path.display()), e))?;
    drop(f);
    // Checked again right before the rename: the target may have appeared meanwhile.
    check_target(path, replace)?;
    fs::rename(&tmp.path, path)
        .map_err(|e| Error::io(format!("renaming into {}", path.display()), e))?;
    tmp.keep = true;
    sync_dir(dir)
}

/// Writes `bytes` to `path` atomically and durably, in one `write_all`.
///
/// # Errors
/// As [`write_atomic_with`].
pub fn write_atomic(path: &Path, bytes: &[u8], replace: Replace) -> Result<()> {
    write_atomic_with(path, replace, |f| f.write_all(bytes))
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
    fn a_deleted_input_does_not_protect_a_new_file_that_reuses_its_inode() {
        let dir = std::env::temp_dir().join(format!("dpinfer-files-reuse-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let input = dir.join("input.txt");
        fs::write(&input, b"read me").unwrap();
        read_input(&input, "input", None).unwrap();
        // Still protected while it exists.
        assert!(matches!(
            check_target(&input, Replace::Owned),
            Err(Error::IsInput(_))
        ));
        // Deleted; new files (the file systems in use reuse the freed inode at once) may be
        // written although one of them may carry the old inode number.
        fs::remove_file(&input).unwrap();
        for k in 0..8 {
            let p = dir.join(format!("new{k}.json"));
            fs::write(&p, b"{}").unwrap();
            check_target(&p, Replace::Owned).unwrap();
            write_atomic(&p, b"[]", Replace::Owned).unwrap();
        }
        fs::remove_dir_all(&dir).unwrap();
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
            Err(std::io::Error::other("disk on fire"))
        });
        assert!(matches!(
            r,
            Err(Error::Caller {
                writing: Some(_),
                ..
            })
        ));
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(names(&dir), ["out.bin"]);
        // A refused target (exists, not forced): nothing created.
        assert!(matches!(
            write_atomic(&p, b"new", Replace::IfForced(false)),
            Err(Error::Exists(_))
        ));
        assert_eq!(names(&dir), ["out.bin"]);
        write_atomic(&p, b"new", Replace::IfForced(true)).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        // An input of this process is never replaced, even forced.
        assert_eq!(read_input(&p, "input", None).unwrap(), b"new");
        assert!(matches!(
            write_atomic(&p, b"x", Replace::IfForced(true)),
            Err(Error::IsInput(_))
        ));
        assert_eq!(names(&dir), ["out.bin"]);
        // A folder is never a target and never an input.
        assert!(matches!(
            write_atomic(&dir, b"x", Replace::IfForced(true)),
            Err(Error::NotRegular(_))
        ));
        assert!(matches!(
            read_input(&dir, "input", None),
            Err(Error::IsFolder { .. })
        ));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn inputs_above_the_cap_and_devices_are_refused() {
        let dir = std::env::temp_dir().join(format!("dpinfer-cap-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("big");
        write_atomic(&p, &[7u8; 100], Replace::Owned).unwrap();
        assert!(matches!(
            read_bounded(&p, "thing", Some(99)),
            Err(Error::TooLarge { limit: 99, .. })
        ));
        assert_eq!(read_bounded(&p, "thing", Some(100)).unwrap().len(), 100);
        #[cfg(unix)]
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), "thing", None),
            Err(Error::IsDevice { .. })
        ));
        let e = read_bounded(&dir.join("absent"), "thing", None).unwrap_err();
        assert!(e.to_string().starts_with("cannot read thing"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_second_lock_waits_for_the_first() {
        let dir = std::env::temp_dir().join(format!("dpinfer-lock-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let first = DirLock::acquire(&dir).unwrap();
        assert_eq!(first.dir(), dir.as_path());
        let (tx, rx) = std::sync::mpsc::channel();
        let d2 = dir.clone();
        let t = std::thread::spawn(move || {
            let waited = std::cell::Cell::new(false);
            let l = DirLock::acquire_with(&d2, |_, _| waited.set(true)).unwrap();
            tx.send(waited.get()).unwrap();
            drop(l);
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        // Still held: the second acquirer has not finished.
        assert!(rx.try_recv().is_err());
        drop(first);
        assert!(rx.recv().unwrap(), "the second acquirer saw the lock held");
        t.join().unwrap();
        let _ = fs::remove_dir_all(&dir);
    }
}
