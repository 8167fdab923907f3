//! Where CI's time and disk go: per-task wall time, CPU time of the child processes, the
//! number of crates cargo compiled, and the size of `target/` (issue 34).
//!
//! * CPU time: the `cutime` and `cstime` fields of `/proc/self/stat` (Linux, std only, no
//!   `libc`): user and system time of every child process the xtask has waited for,
//!   including their own waited-for descendants (cargo → rustc, nextest → test binaries,
//!   maturin → cargo → rustc). The difference across a task is that task's CPU time. Clock
//!   ticks per second come from `getconf CLK_TCK` (100 when that fails). On other systems
//!   the column shows `-`.
//! * Crates compiled: [`crate::util::Cmd::run`] pipes each command's stderr through the
//!   xtask and counts cargo's `Compiling …` (code generated: build scripts, proc macros,
//!   libraries, test binaries), `Checking …` (metadata only: clippy, `cargo check`, the
//!   dependencies of `cargo doc`) and `Documenting …` lines, from nested cargo calls too
//!   (nextest, maturin). Cargo prints one such line per package per call, however many of
//!   the package's targets it builds; a package that is already up to date prints none.
//! * Disk: the blocks allocated under `target/` (what `du -s` reports), each hard-linked file
//!   counted once (cargo hard-links every binary from `deps/` into its profile directory).

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::util::Cmd;

/// `Compiling …` lines seen so far.
static COMPILED: AtomicU64 = AtomicU64::new(0);
/// `Checking …` and `Documenting …` lines seen so far.
static CHECKED: AtomicU64 = AtomicU64::new(0);

/// What kind of cargo progress line `line` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// `Compiling name vX` (codegen).
    Compiled,
    /// `Checking name vX` or `Documenting name vX` (metadata / rustdoc only).
    Checked,
}

/// Removes ANSI escape sequences (`ESC [ … letter`), which cargo writes when colours are on.
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Classifies one line of a command's stderr: cargo's status lines are right-aligned
/// verbs followed by `name vVERSION`.
pub(crate) fn classify(line: &str) -> Option<Progress> {
    let plain = strip_ansi(line);
    let mut words = plain.split_whitespace();
    let verb = words.next()?;
    let version = words.nth(1)?;
    if !version
        .strip_prefix('v')
        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
    {
        return None;
    }
    match verb {
        "Compiling" => Some(Progress::Compiled),
        "Checking" | "Documenting" => Some(Progress::Checked),
        _ => None,
    }
}

/// Counts one stderr line (called by [`Cmd::run`] for every line it passes through).
pub(crate) fn count_line(line: &str) {
    match classify(line) {
        Some(Progress::Compiled) => {
            COMPILED.fetch_add(1, Ordering::Relaxed);
        }
        Some(Progress::Checked) => {
            CHECKED.fetch_add(1, Ordering::Relaxed);
        }
        None => {}
    }
}

/// Seconds of user and system CPU time of the waited-for children, from the text of
/// `/proc/self/stat` and the clock ticks per second (pure, for testing).
pub(crate) fn parse_children_cpu(stat: &str, ticks_per_second: f64) -> Option<f64> {
    // `pid (comm) state ppid …`: comm may contain spaces and parentheses, so fields are
    // counted after the last `)`. Field 3 (`state`) is index 0 there; `cutime` and `cstime`
    // are fields 16 and 17 (proc(5)).
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let cutime: f64 = fields.get(13)?.parse::<u64>().ok()? as f64;
    let cstime: f64 = fields.get(14)?.parse::<u64>().ok()? as f64;
    Some((cutime + cstime) / ticks_per_second)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100, Linux's fixed USER_HZ, when unknown).
fn ticks_per_second() -> f64 {
    Cmd::new("getconf")
        .args(["CLK_TCK"])
        .output()
        .ok()
        .and_then(|(ok, out, _)| ok.then(|| out.trim().parse::<f64>().ok()).flatten())
        .filter(|t| *t > 0.0)
        .unwrap_or(100.0)
}

/// A point in time for [`Meter::since`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    at: Instant,
    cpu: Option<f64>,
    compiled: u64,
    checked: u64,
}

/// What one task used.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Used {
    /// Wall time, seconds.
    pub(crate) wall: f64,
    /// User + system CPU time of the child processes, seconds (`None`: not measurable here).
    pub(crate) cpu: Option<f64>,
    /// `Compiling` lines.
    pub(crate) compiled: u64,
    /// `Checking` / `Documenting` lines.
    pub(crate) checked: u64,
}

/// Takes [`Mark`]s.
#[derive(Debug)]
pub(crate) struct Meter {
    ticks: f64,
}

impl Meter {
    pub(crate) fn new() -> Self {
        Self {
            ticks: ticks_per_second(),
        }
    }

    fn children_cpu(&self) -> Option<f64> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        parse_children_cpu(&stat, self.ticks)
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark {
            at: Instant::now(),
            cpu: self.children_cpu(),
            compiled: COMPILED.load(Ordering::Relaxed),
            checked: CHECKED.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn since(&self, start: Mark) -> Used {
        let now = self.mark();
        Used {
            wall: now.at.duration_since(start.at).as_secs_f64(),
            cpu: now.cpu.zip(start.cpu).map(|(b, a)| b - a),
            compiled: now.compiled - start.compiled,
            checked: now.checked - start.checked,
        }
    }
}

/// One row of the table: `wall  cpu  compiled  checked`.
pub(crate) fn columns(u: &Used) -> String {
    let cpu = u.cpu.map_or_else(|| "-".to_owned(), |c| format!("{c:.1}s"));
    format!(
        "{:>9} {:>9} {:>8} {:>8}",
        format!("{:.1}s", u.wall),
        cpu,
        u.compiled,
        u.checked
    )
}

/// The header matching [`columns`].
pub(crate) fn header() -> String {
    format!(
        "{:>9} {:>9} {:>8} {:>8}",
        "wall", "cpu", "compiled", "checked"
    )
}

/// Bytes allocated under `dir` (512-byte blocks, as `du -s`), each hard-linked file once.
pub(crate) fn disk_usage(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&d) else {
            continue;
        };
        total += meta.blocks() * 512;
        if !meta.is_dir() {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.nlink() <= 1 || seen.insert((meta.dev(), meta.ino())) {
                total += meta.blocks() * 512;
            }
        }
    }
    total
}

/// `bytes` as `1.23 GB` / `45.6 MB` (powers of 1024, like `du -h`).
pub(crate) fn human(bytes: u64) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    let b = bytes as f64;
    if b >= 1024.0 * MB {
        format!("{:.2} GB", b / (1024.0 * MB))
    } else {
        format!("{:.1} MB", b / MB)
    }
}

/// `dir`'s size and that of each of its subdirectories of at least 10 MB, largest first.
pub(crate) fn size_report(dir: &Path) -> String {
    let total = disk_usage(dir);
    let mut parts: Vec<(u64, String)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| {
                    (
                        disk_usage(&e.path()),
                        e.file_name().to_string_lossy().into_owned(),
                    )
                })
                .filter(|(size, _)| *size >= 10 * 1024 * 1024)
                .collect()
        })
        .unwrap_or_default();
    parts.sort_by(|a, b| b.cmp(a));
    let parts: Vec<String> = parts
        .iter()
        .map(|(size, name)| format!("{name} {}", human(*size)))
        .collect();
    if parts.is_empty() {
        human(total)
    } else {
        format!("{} ({})", human(total), parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::{Progress, classify, disk_usage, parse_children_cpu};

    #[test]
    fn counts_cargo_status_lines_only() {
        assert_eq!(
            classify("   Compiling libm v0.2.16"),
            Some(Progress::Compiled)
        );
        assert_eq!(
            classify("    Checking dpinfer-math v0.1.0 (/w/crates/math)"),
            Some(Progress::Checked)
        );
        assert_eq!(
            classify(" Documenting dpinfer v0.1.0 (/w/crates/dpinfer)"),
            Some(Progress::Checked)
        );
        // cargo with CARGO_TERM_COLOR=always: bold green verb
        assert_eq!(
            classify("\u{1b}[1m\u{1b}[92m   Compiling\u{1b}[0m serde v1.0.228"),
            Some(Progress::Compiled)
        );
        assert_eq!(classify("    Finished `test` profile"), None);
        assert_eq!(classify("     Running unittests src/lib.rs"), None);
        assert_eq!(classify("test compiling_works ... ok"), None);
        assert_eq!(classify("Compiling is what we do"), None);
        assert_eq!(classify(""), None);
    }

    #[test]
    fn reads_child_cpu_time_after_the_command_name() {
        // proc(5) fields 1..=17 with comm containing `) (`; cutime 250, cstime 50 ticks.
        let stat = "4242 (x) (task) S 1 4242 4242 0 -1 4194560 100 200 0 0 7 3 250 50 20 0 1 0";
        assert_eq!(parse_children_cpu(stat, 100.0), Some(3.0));
        assert_eq!(parse_children_cpu("4242 (x) S 1", 100.0), None);
        assert_eq!(parse_children_cpu("garbage", 100.0), None);
    }

    #[test]
    fn disk_usage_counts_hard_links_once() {
        let dir = std::env::temp_dir().join(format!("xtask-usage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/a"), vec![7u8; 64 * 1024]).unwrap();
        let one = disk_usage(&dir);
        std::fs::hard_link(dir.join("sub/a"), dir.join("b")).unwrap();
        let linked = disk_usage(&dir);
        std::fs::write(dir.join("c"), vec![7u8; 64 * 1024]).unwrap();
        let copied = disk_usage(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(one >= 64 * 1024, "{one}");
        assert_eq!(linked, one);
        assert!(copied >= one + 64 * 1024, "{copied} {one}");
    }
}
