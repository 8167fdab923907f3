//! The crate's error type: what went wrong, naming the row(s) and carrying the worker's
//! stderr tail.

use core::fmt;
use std::path::PathBuf;
use std::process::ExitStatus;

/// What kind of misbehaviour stopped a worker (see the protocol in the crate README).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// The worker closed its stdout (it exited or crashed).
    Closed,
    /// The worker stopped reading its stdin.
    StdinClosed,
    /// No answer within the timeout; the worker was killed.
    Timeout,
    /// The worker's stdout is not an Arrow IPC stream.
    NotArrow,
    /// The answer is an Arrow batch that breaks the protocol: missing, unknown or repeated
    /// row ids, the wrong number of outputs, NaN/±∞, wrong column types.
    BadAnswer,
    /// The request batch could not be built.
    Request,
}

/// One failed attempt at a batch on one worker process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The kind of fault.
    pub kind: FaultKind,
    /// What happened, naming rows where the answer did (`row 37: output 1 is NaN`).
    pub message: String,
    /// The worker's number (`DPINFER_WORKER` in its environment).
    pub worker: usize,
    /// The worker's exit status, if it had exited when the fault was seen.
    pub exit: Option<ExitStatus>,
    /// The last lines of the worker's stderr (at most [`crate::STDERR_LINES`]).
    pub stderr_tail: Vec<String>,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.exit {
            Some(status) => write!(
                f,
                "{} (worker {} exited: {status})",
                self.message, self.worker
            ),
            None => write!(f, "{} (worker {})", self.message, self.worker),
        }
    }
}

/// A batch that failed every attempt: the rows, the attempts and the last fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The command, joined by spaces.
    pub command: String,
    /// The rows of the batch that failed.
    pub batch: Vec<u64>,
    /// The row that also failed when run alone (after the batch failed every attempt).
    pub row: Option<u64>,
    /// Attempts at the batch (1 + retries), each on a fresh worker.
    pub attempts: u32,
    /// The last fault (the isolated row's, when `row` is set).
    pub fault: Fault,
}

/// Everything that can go wrong in this crate.
#[derive(Debug)]
#[non_exhaustive]
pub enum WorkerError {
    /// A setting is invalid (an empty command, no parameters, zero outputs, a reserved name,
    /// a timeout that is not a positive number of seconds).
    InvalidSettings {
        /// The setting, as named in [`crate::PoolSettings`].
        name: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// A row's θ has the wrong length.
    ThetaLength {
        /// The row.
        row: u64,
        /// The number of parameters.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// The worker process could not be started.
    Spawn {
        /// The command, joined by spaces.
        command: String,
        /// Its working directory.
        dir: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A batch failed on `1 + retries` fresh workers (and, for a batch of several rows, a row
    /// failed alone).
    Failed(Box<Failure>),
    /// The output map of a [`crate::CommandSimulator`] refused a row's outputs.
    OutputMap {
        /// The row.
        row: u64,
        /// Why.
        reason: String,
    },
    /// Worker side ([`crate::serve`]): the request stream cannot be read or the answer
    /// cannot be written.
    Protocol {
        /// What went wrong.
        reason: String,
    },
    /// A pool thread panicked.
    Panicked,
}

impl WorkerError {
    /// The row the error names: the row that failed alone, else the first row of the failed
    /// batch, the row whose θ or outputs were refused; `None` for errors about no row.
    #[must_use]
    pub fn row(&self) -> Option<u64> {
        match self {
            Self::ThetaLength { row, .. } | Self::OutputMap { row, .. } => Some(*row),
            Self::Failed(f) => f.row.or_else(|| f.batch.first().copied()),
            _ => None,
        }
    }

    /// The last lines of the worker's stderr, for a failed batch.
    #[must_use]
    pub fn stderr_tail(&self) -> &[String] {
        match self {
            Self::Failed(f) => &f.fault.stderr_tail,
            _ => &[],
        }
    }
}

impl fmt::Display for WorkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidSettings { reason, .. } => f.write_str(reason),
            Self::ThetaLength { row, expected, got } => {
                write!(f, "row {row}: θ has {got} values, expected {expected}")
            }
            Self::Spawn {
                command,
                dir,
                source,
            } => write!(
                f,
                "cannot start the external simulator {command:?} in {}: {source}",
                dir.display()
            ),
            Self::Failed(x) => {
                let label = rows_label(&x.batch);
                write!(f, "external simulator {:?} failed on ", x.command)?;
                match x.row {
                    Some(row) => write!(
                        f,
                        "row {row} (the batch {label} failed {} time(s); row {row} then \
                         failed alone)",
                        x.attempts
                    )?,
                    None => write!(
                        f,
                        "{label} ({} attempt(s), each on a fresh worker)",
                        x.attempts
                    )?,
                }
                writeln!(f, ": {}", x.fault)?;
                if x.fault.stderr_tail.iter().all(|l| l.trim().is_empty()) {
                    f.write_str("(worker stderr was empty)")
                } else {
                    f.write_str("worker stderr (last lines):")?;
                    for l in &x.fault.stderr_tail {
                        write!(f, "\n  | {l}")?;
                    }
                    Ok(())
                }
            }
            Self::OutputMap { row, reason } => write!(f, "row {row}: {reason}"),
            Self::Protocol { reason } => write!(f, "worker protocol: {reason}"),
            Self::Panicked => f.write_str("a worker-pool thread panicked"),
        }
    }
}

impl core::error::Error for WorkerError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// "row 7", "rows 8..=15" or "rows 3, 9, 4".
#[must_use]
pub fn rows_label(rows: &[u64]) -> String {
    match rows {
        [] => "no rows".into(),
        [r] => format!("row {r}"),
        [a, .., b] if b >= a && b - a + 1 == rows.len() as u64 => format!("rows {a}..={b}"),
        _ => format!(
            "rows {}",
            rows.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
