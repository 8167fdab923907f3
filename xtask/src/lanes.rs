//! `cargo xtask ci`'s two lanes (issue 34).
//!
//! The main lane (`MAIN_LANE` in `main.rs`) runs in the `ci` process on the workspace's own
//! build. The side lane (`SIDE_LANE`) builds in target directories of its own and needs
//! nothing from the main lane, so a second xtask process (`xtask ci-side`, this module's
//! [`side`]) runs it at the same time: the main lane's serial stretches (one crate compiling
//! alone, link steps, the slowest tests) leave a core idle that the side lane fills.
//!
//! * The side process prepares the Python venv first and writes `venv.done` into
//!   `target/ci-lanes/`; the main lane waits for that file before its `test` task (the
//!   external-simulator tests run Python workers from the venv).
//! * Its output goes to `target/ci-lanes/side.log`, which `ci` prints, under a heading, when
//!   the lane has finished (before the Python tests, which need the lane's wheel): the two
//!   lanes' lines never interleave.
//! * Its per-task rows (the same wall, CPU and crate counts as the main lane's, measured by
//!   its own [`Meter`]) go to `target/ci-lanes/side.tsv`, rewritten after every task, and
//!   `ci` prints them in its table. The side process is waited for outside every main-lane
//!   task, so its CPU time never counts in a main-lane row; it does count in the total.
//! * `ci --fail-fast` kills the side lane's process group when a main-lane task fails.

use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};

use crate::usage::{Meter, Used};
use crate::util::target_dir;

/// The hidden subcommand that runs the side lane.
pub(crate) const SIDE_COMMAND: &str = "ci-side";

/// One finished task: its name, its error (`None`: passed) and what it used.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) name: String,
    pub(crate) error: Option<String>,
    pub(crate) used: Used,
}

/// `target/ci-lanes`, where the lanes meet.
fn dir() -> PathBuf {
    target_dir().join("ci-lanes")
}

/// The rows as tab-separated lines: name, `ok` or the error's first line, wall, CPU (`-`
/// when unknown), compiled, checked.
pub(crate) fn encode(rows: &[Row]) -> String {
    let mut out = String::new();
    for r in rows {
        let status = r.error.as_deref().map_or_else(
            || "ok".to_owned(),
            |e| {
                let first = e.lines().next().unwrap_or("failed").replace('\t', " ");
                format!("FAILED {first}")
            },
        );
        let cpu = r
            .used
            .cpu
            .map_or_else(|| "-".to_owned(), |c| format!("{c}"));
        out.push_str(&format!(
            "{}\t{status}\t{}\t{cpu}\t{}\t{}\n",
            r.name, r.used.wall, r.used.compiled, r.used.checked
        ));
    }
    out
}

/// The inverse of [`encode`]; a malformed line is skipped.
pub(crate) fn decode(text: &str) -> Vec<Row> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let [name, status, wall, cpu, compiled, checked] = f.as_slice() else {
                return None;
            };
            let error = match *status {
                "ok" => None,
                s => Some(s.strip_prefix("FAILED ").unwrap_or(s).to_owned()),
            };
            Some(Row {
                name: (*name).to_owned(),
                error,
                used: Used {
                    wall: wall.parse().ok()?,
                    cpu: if *cpu == "-" {
                        None
                    } else {
                        Some(cpu.parse().ok()?)
                    },
                    compiled: compiled.parse().ok()?,
                    checked: checked.parse().ok()?,
                },
            })
        })
        .collect()
}

/// Runs the named task under `meter` and returns its row (the `==> xtask` heading and the
/// failure line as `ci` prints them).
pub(crate) fn run_task(meter: &Meter, name: &str) -> Row {
    eprintln!("\n==> xtask {name}");
    let t = meter.mark();
    let error = match crate::TASKS.iter().find(|(n, _, _)| *n == name) {
        Some((_, _, run)) => run().err(),
        None => Some(format!("no task `{name}`")),
    };
    if let Some(e) = &error {
        eprintln!("xtask {name}: FAILED: {e}");
    }
    Row {
        name: name.to_owned(),
        error,
        used: meter.since(t),
    }
}

/// `xtask ci-side [--fail-fast]`: the venv, then the side lane's tasks; rows into
/// `side.tsv` after each. Exit status 1 when a task failed.
pub(crate) fn side(fail_fast: bool) -> ExitCode {
    let meter = Meter::new();
    let dir = dir();
    let tsv = dir.join("side.tsv");
    let mut rows = Vec::new();
    let t = meter.mark();
    let venv = crate::python::venv();
    let note = match &venv {
        Ok(_) => "ok\n".to_owned(),
        Err(e) => format!("error: {e}\n"),
    };
    if let Err(e) = &venv {
        eprintln!("xtask ci: cannot prepare target/python-venv: {e}");
    }
    let _ = std::fs::write(dir.join("venv.done"), note);
    rows.push(Row {
        name: "(venv)".to_owned(),
        error: venv.err(),
        used: meter.since(t),
    });
    let _ = std::fs::write(&tsv, encode(&rows));
    for name in crate::SIDE_LANE {
        let row = run_task(&meter, name);
        let failed = row.error.is_some();
        rows.push(row);
        let _ = std::fs::write(&tsv, encode(&rows));
        if failed && fail_fast {
            break;
        }
    }
    if rows.iter().skip(1).any(|r| r.error.is_some()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The running side lane, seen from `ci`.
#[derive(Debug)]
pub(crate) struct Side {
    child: Child,
}

impl Side {
    /// Starts `xtask ci-side` (this executable) in its own process group, output into
    /// `side.log`.
    ///
    /// # Errors
    /// The lane directory or the log cannot be created, or the process cannot start.
    pub(crate) fn start(fail_fast: bool) -> Result<Self, String> {
        use std::os::unix::process::CommandExt;
        let dir = dir();
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let log = dir.join("side.log");
        let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
        let mut cmd = Command::new(exe);
        cmd.arg(SIDE_COMMAND);
        if fail_fast {
            cmd.arg("--fail-fast");
        }
        let child = cmd
            .current_dir(crate::util::root())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the side lane: {e}"))?;
        eprintln!(
            "xtask ci: side lane ({}) started beside the main lane; its output: {}",
            crate::SIDE_LANE.join(", "),
            log.display()
        );
        Ok(Self { child })
    }

    /// Blocks until the side lane has prepared the venv (or has exited).
    pub(crate) fn wait_for_venv(&mut self) {
        let done = dir().join("venv.done");
        while !done.is_file() {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    /// Kills the side lane's whole process group (`--fail-fast` after a main-lane failure).
    pub(crate) fn kill(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    }

    /// Waits for the side lane, prints its output under a heading and returns its rows.
    pub(crate) fn finish(mut self) -> Vec<Row> {
        let status = self.child.wait();
        let dir = dir();
        eprintln!(
            "\n==> side lane ({}), run beside the main lane: its output",
            crate::SIDE_LANE.join(", ")
        );
        match std::fs::read(dir.join("side.log")) {
            Ok(text) => {
                use std::io::Write;
                let _ = std::io::stderr().write_all(&text);
            }
            Err(e) => eprintln!("(no side.log: {e})"),
        }
        eprintln!("==> end of the side lane's output ({status:?})");
        decode(&std::fs::read_to_string(dir.join("side.tsv")).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::{Row, decode, encode};
    use crate::usage::Used;

    // `{}` prints an f64 so that it parses back to the same value: equality is the point.
    #[allow(clippy::float_cmp)]
    #[test]
    fn rows_round_trip_through_the_side_file() {
        let rows = vec![
            Row {
                name: "nostd".to_owned(),
                error: None,
                used: Used {
                    wall: 181.25,
                    cpu: Some(275.5),
                    compiled: 96,
                    checked: 0,
                },
            },
            Row {
                name: "js".to_owned(),
                error: Some("`node --test` failed\twith tabs\nsecond line".to_owned()),
                used: Used {
                    wall: 3.0,
                    cpu: None,
                    compiled: 0,
                    checked: 2,
                },
            },
        ];
        let back = decode(&encode(&rows));
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].name, "nostd");
        assert!(back[0].error.is_none());
        assert_eq!(back[0].used.wall, 181.25);
        assert_eq!(back[0].used.cpu, Some(275.5));
        assert_eq!((back[0].used.compiled, back[0].used.checked), (96, 0));
        assert_eq!(
            back[1].error.as_deref(),
            Some("`node --test` failed with tabs")
        );
        assert_eq!(back[1].used.cpu, None);
        assert_eq!(back[1].used.checked, 2);
        // a torn last line (the side lane killed mid-write) is skipped, not misread
        assert_eq!(decode("nostd\tok\t1.0\t").len(), 0);
    }
}
