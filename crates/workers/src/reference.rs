//! The compiled reference worker: the gaussian-mean model's simulator behind the protocol,
//! with faults injected on request (the pool's and the CLI's fault tests run it).
//!
//! Model: y_i = μ + σ·z_i for i = 1..outputs, z_i standard normal from
//! `SimStream::new(seed, 0)` (σ from the `SIGMA` environment variable, default 1; μ is the
//! first parameter column).
//!
//! Faults, through `DPINFER_TEST_FAULT=<fault>@<row>`: `crash` (exit status 3), `crash-once`
//! (crash only in worker 0, i.e. `DPINFER_WORKER=0`), `hang`, `garbage` (a line of text on
//! stdout, then hang), `wrong-id` (answer row + 1 000 000), `dims` (one output too many),
//! `nan` (output 1 is NaN). Every μ below `DPINFER_TEST_REJECT_BELOW` is rejected. With
//! `DPINFER_TEST_BATCH_LOG=<file>` each request batch appends the line `<worker> <rows>` to
//! that file (`DPINFER_WORKER` and the batch's row count), so a test sees how its rows
//! reached the workers.

use std::io::Write as _;
use std::process::ExitCode;

use dpinfer_simulators::{SimStream, dist};

use crate::protocol::{Answer, Request};

/// The reference worker's settings, read from its environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The injected fault (empty: none).
    pub fault: String,
    /// The row it hits.
    pub fault_row: u64,
    /// This process is worker 0.
    pub first_worker: bool,
    /// μ below this is rejected.
    pub reject_below: f64,
    /// σ.
    pub sigma: f64,
    /// File each request batch appends `<worker> <rows>` to (`None`: no log).
    pub batch_log: Option<std::path::PathBuf>,
    /// This worker's `DPINFER_WORKER` (empty if unset).
    pub worker: String,
}

impl Reference {
    /// Reads `DPINFER_TEST_FAULT`, `DPINFER_WORKER`, `DPINFER_TEST_REJECT_BELOW` and `SIGMA`.
    #[must_use]
    pub fn from_env() -> Self {
        let fault = std::env::var("DPINFER_TEST_FAULT").unwrap_or_default();
        let (fault, fault_row) = match fault.split_once('@') {
            Some((f, r)) => (f.to_string(), r.parse::<u64>().unwrap_or(u64::MAX)),
            None => (String::new(), u64::MAX),
        };
        let number = |k: &str, default: f64| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Self {
            fault,
            fault_row,
            first_worker: std::env::var("DPINFER_WORKER").is_ok_and(|w| w == "0"),
            reject_below: number("DPINFER_TEST_REJECT_BELOW", f64::NEG_INFINITY),
            sigma: number("SIGMA", 1.0),
            batch_log: std::env::var_os("DPINFER_TEST_BATCH_LOG").map(Into::into),
            worker: std::env::var("DPINFER_WORKER").unwrap_or_default(),
        }
    }

    /// The answers to one request batch (faults included).
    #[must_use]
    pub fn answer(&self, requests: &[Request], outputs: usize) -> Vec<(u64, Answer)> {
        if let Some(path) = &self.batch_log {
            // One short append per batch (atomic for lines this short on POSIX); a log that
            // cannot be written is the test's problem, not the model's.
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = f.write_all(format!("{} {}\n", self.worker, requests.len()).as_bytes());
            }
        }
        let mut answers = Vec::with_capacity(requests.len());
        for r in requests {
            let mu = r.theta.first().copied().unwrap_or(0.0);
            let hit = r.row == self.fault_row;
            if hit {
                #[allow(clippy::print_stderr)]
                {
                    eprintln!("worker: injecting fault {:?} at row {}", self.fault, r.row);
                }
                match self.fault.as_str() {
                    "crash" => std::process::exit(3),
                    "crash-once" if self.first_worker => std::process::exit(3),
                    "hang" => std::thread::sleep(std::time::Duration::from_secs(3600)),
                    "garbage" => {
                        let mut o = std::io::stdout();
                        let _ = o.write_all(b"Traceback (most recent call last): oops\n");
                        let _ = o.flush();
                        std::thread::sleep(std::time::Duration::from_secs(3600));
                    }
                    _ => {}
                }
            }
            let id = if hit && self.fault == "wrong-id" {
                r.row + 1_000_000
            } else {
                r.row
            };
            if mu < self.reject_below {
                answers.push((id, Answer::Reject));
                continue;
            }
            let mut rng = SimStream::new(r.seed, 0);
            let len = if hit && self.fault == "dims" {
                outputs + 1
            } else {
                outputs
            };
            let y = (0..len)
                .map(|j| {
                    let v = mu + self.sigma * dist::std_normal(&mut rng);
                    if hit && self.fault == "nan" && j == 1 {
                        f64::NAN
                    } else {
                        v
                    }
                })
                .collect();
            answers.push((id, Answer::Output(y)));
        }
        answers
    }
}

/// The reference worker's `main`: serves stdin/stdout with [`Reference::from_env`].
#[must_use]
pub fn main() -> ExitCode {
    let reference = Reference::from_env();
    match crate::serve_stdio(|rows, outputs| reference.answer(rows, outputs)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("reference worker: {e}");
            }
            ExitCode::FAILURE
        }
    }
}
