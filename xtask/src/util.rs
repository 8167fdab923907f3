//! Running commands and finding the repository.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Result type of every task: the error is a message for the user.
pub(crate) type Res<T = ()> = Result<T, String>;

/// The repository root (the parent of the xtask package).
pub(crate) fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}

/// The cargo that runs this xtask (`$CARGO`, set by `cargo run`), else `cargo` from `PATH`.
pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The workspace target directory: `$CARGO_TARGET_DIR` or `<root>/target`.
pub(crate) fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                root().join(dir)
            }
        }
        _ => root().join("target"),
    }
}

/// A command line under construction, run from the repository root.
#[derive(Debug)]
pub(crate) struct Cmd {
    inner: Command,
    shown: String,
}

impl Cmd {
    /// `program` with no arguments yet.
    pub(crate) fn new(program: impl AsRef<OsStr>) -> Self {
        let program = program.as_ref();
        let mut inner = Command::new(program);
        inner.current_dir(root());
        Self {
            inner,
            shown: shorten(&program.to_string_lossy()),
        }
    }

    /// The host cargo with `args`.
    pub(crate) fn cargo<I, S>(args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self::new(cargo()).args(args)
    }

    /// Appends arguments.
    pub(crate) fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for arg in args {
            let arg = arg.as_ref();
            self.shown.push(' ');
            self.shown.push_str(&arg.to_string_lossy());
            self.inner.arg(arg);
        }
        self
    }

    /// Sets an environment variable (shown in the echoed command line).
    pub(crate) fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        let value = value.as_ref();
        self.shown = format!("{key}={} {}", value.to_string_lossy(), self.shown);
        self.inner.env(key, value);
        self
    }

    /// Echoes and runs the command (stdout inherited; stderr passed through line by line
    /// and counted by [`crate::usage::count_line`]); `Err` unless it exits with 0.
    pub(crate) fn run(self) -> Res {
        self.execute(false).map(|_| ())
    }

    /// Like [`Cmd::run`], but returns the command's stdout instead of passing it through
    /// (e.g. cargo's `--message-format=json`).
    pub(crate) fn run_stdout(self) -> Res<String> {
        self.execute(true)
    }

    fn execute(mut self, capture: bool) -> Res<String> {
        use std::io::{BufRead, IsTerminal, Read, Write};
        eprintln!("$ {}", self.shown);
        // stderr is a pipe now: keep cargo's colours for a person at a terminal.
        if std::io::stderr().is_terminal() && std::env::var_os("CARGO_TERM_COLOR").is_none() {
            self.inner.env("CARGO_TERM_COLOR", "always");
        }
        if capture {
            self.inner.stdout(Stdio::piped());
        }
        let mut child = self
            .inner
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", self.shown))?;
        // Both pipes are read on threads, and after the child exits they get a short grace
        // period, not an unbounded join: a process the child left behind (a leaked test
        // helper) may hold the pipe open for much longer.
        let stdout = child.stdout.take().map(|mut out| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut text = Vec::new();
                let _ = out.read_to_end(&mut text);
                let _ = tx.send(String::from_utf8_lossy(&text).into_owned());
            });
            rx
        });
        let stderr = child.stderr.take().map(|err| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(err);
                let mut line = Vec::new();
                let mut out = std::io::stderr();
                while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                    crate::usage::count_line(&String::from_utf8_lossy(&line));
                    let _ = out.write_all(&line);
                    line.clear();
                }
                let _ = tx.send(());
            });
            rx
        });
        let status = child
            .wait()
            .map_err(|e| format!("waiting for `{}`: {e}", self.shown))?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        let left = || deadline.saturating_duration_since(std::time::Instant::now());
        if let Some(rx) = stderr {
            let _ = rx.recv_timeout(left());
        }
        let text = stdout
            .and_then(|rx| rx.recv_timeout(left()).ok())
            .unwrap_or_default();
        if status.success() {
            Ok(text)
        } else {
            Err(format!("`{}` failed ({status})", self.shown))
        }
    }

    /// Like [`Cmd::run`], but kills the command's whole process group after `limit` (a
    /// hang must fail CI, not stall it: rustfmt can take exponential time on deeply nested
    /// expressions).
    pub(crate) fn run_with_timeout(mut self, limit: std::time::Duration) -> Res {
        use std::os::unix::process::CommandExt;
        eprintln!("$ {}", self.shown);
        let mut child = self
            .inner
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", self.shown))?;
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = child
                .try_wait()
                .map_err(|e| format!("waiting for `{}`: {e}", self.shown))?
            {
                return if status.success() {
                    Ok(())
                } else {
                    Err(format!("`{}` failed ({status})", self.shown))
                };
            }
            if start.elapsed() > limit {
                let group = format!("-{}", child.id());
                let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                let _ = child.wait();
                return Err(format!(
                    "`{}` did not finish within {} s and was killed",
                    self.shown,
                    limit.as_secs()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// Runs quietly and returns `(success, stdout, stderr)`; `Err` only if it cannot start.
    pub(crate) fn output(mut self) -> Res<(bool, String, String)> {
        let out = self
            .inner
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot start `{}`: {e}", self.shown))?;
        Ok((
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    /// The command line as echoed.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }
}

/// Replaces the long `$CARGO` path by `cargo` in echoed command lines.
fn shorten(program: &str) -> String {
    if program == cargo() && program.ends_with("/cargo") {
        "cargo".to_owned()
    } else {
        program.to_owned()
    }
}

/// Collects the failures of several commands so one task reports all of them (a broken
/// crate must not hide the results for the others).
#[derive(Debug, Default)]
pub(crate) struct Failures(Vec<String>);

impl Failures {
    /// Records the outcome of one step.
    pub(crate) fn check(&mut self, result: Res) {
        if let Err(e) = result {
            eprintln!("xtask: step failed (continuing): {e}");
            self.0.push(e);
        }
    }

    /// `Ok` when every step passed, else the failures (first one first).
    pub(crate) fn finish(self) -> Res {
        match self.0.len() {
            0 => Ok(()),
            1 => Err(self.0.join("")),
            n => Err(format!(
                "{n} steps failed; first: {}\n  {}",
                self.0[0],
                self.0[1..].join("\n  ")
            )),
        }
    }
}

/// `true` when `program` is found as a file in one of the `PATH` directories (or is a path
/// to an existing file).
pub(crate) fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Every `.rs` file under `dir`, recursively, skipping `target` and hidden directories.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    files_with_ext(dir, ".rs")
}

/// Every file under `dir` whose name ends with `ext`, recursively, skipping `target`,
/// `node_modules` and hidden directories; sorted.
pub(crate) fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir() {
                if name != "target" && name != "node_modules" && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if name.ends_with(ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `path` relative to the repository root, for messages.
pub(crate) fn rel(path: &Path) -> String {
    let root = root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::Cmd;
    use std::time::{Duration, Instant};

    #[test]
    fn run_stdout_captures_stdout_and_counts_stderr() {
        let before = crate::usage::Meter::new().mark();
        let out = Cmd::new("sh")
            .args(["-c", "echo out; echo '   Compiling demo v1.0.0' >&2"])
            .run_stdout()
            .unwrap();
        assert_eq!(out, "out\n");
        let used = crate::usage::Meter::new().since(before);
        assert!(used.compiled >= 1, "{used:?}");
        assert!(Cmd::new("sh").args(["-c", "exit 3"]).run_stdout().is_err());
    }

    #[test]
    fn run_returns_when_the_child_exits_even_if_a_leftover_holds_the_pipes() {
        let start = Instant::now();
        let out = Cmd::new("sh")
            .args(["-c", "sleep 30 </dev/null & echo hi"])
            .run_stdout()
            .unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
        // the leftover still holds stdout: the text is whatever arrived in the grace period
        assert!(out.is_empty() || out == "hi\n", "{out:?}");
    }

    #[test]
    fn timeout_kills_a_hanging_command_and_passes_a_quick_one() {
        let start = Instant::now();
        let err = Cmd::new("sh")
            .args(["-c", "sleep 30; true"])
            .run_with_timeout(Duration::from_millis(300))
            .unwrap_err();
        assert!(err.contains("killed"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(10));
        Cmd::new("true")
            .run_with_timeout(Duration::from_secs(10))
            .unwrap();
        assert!(
            Cmd::new("false")
                .run_with_timeout(Duration::from_secs(10))
                .is_err()
        );
    }
}
