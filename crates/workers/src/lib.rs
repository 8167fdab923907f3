//! External simulators for dpinfer: a user's program (Python, R, Julia, a compiled model) run
//! as a pool of long-lived worker processes that exchange batches of `(row id, seed, θ)` and
//! `(row id, outputs)` with the pool as Arrow IPC streams over stdin/stdout (protocol
//! version 1, in the README). No shell, no Rust on the worker side.
//!
//! * [`Pool`] starts the workers, keeps up to two request batches in flight per worker,
//!   checks every answer (row ids, lengths, finiteness), kills a worker that hangs past the
//!   timeout, retries a failed batch on fresh workers, isolates the failing row and reports
//!   it as a [`WorkerError`] that names the row and carries the worker's stderr tail.
//! * [`CommandSimulator`] is the pool as a dpinfer simulator: [`RowSimulator`](dpinfer_simulators::RowSimulator)
//!   for tables (each row's seed comes from its own stream, so a table is the same bit for
//!   bit for any batch size and number of workers) and
//!   [`Simulator`](dpinfer_simulators::Simulator) for one θ at a time. A θ the worker
//!   rejects (the `reject` marker) is a recoverable failure.
//! * [`serve`] is the worker side, for workers written in Rust.
//!
//! This program is its own worker (the pool starts it again with `DPINFER_WORKER` set) and
//! simulates a block of 100 table rows on two worker processes, through the
//! [`RowSimulator`](dpinfer_simulators::RowSimulator) trait a pairs table
//! (`dpinfer_abc::pairs::PublicPairs::simulate`, which redraws a rejected row's θ) calls:
//!
//! ```rust,standalone_crate
//! use dpinfer_simulators::{RowSimulator, SimStream};
//! use dpinfer_workers::{Answer, CommandSimulator, Pool, PoolSettings, serve_stdio};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! if std::env::var_os("DPINFER_WORKER").is_some() {
//!     // Worker: y = (θ, seed mod 10); θ < 0 is rejected (the row gets a fresh θ).
//!     serve_stdio(|rows, _outputs| {
//!         rows.iter()
//!             .map(|r| match r.theta[0] {
//!                 t if t < 0.0 => (r.row, Answer::Reject),
//!                 t => (r.row, Answer::Output(vec![t, (r.seed % 10) as f64])),
//!             })
//!             .collect()
//!     })?;
//!     return Ok(());
//! }
//! let me = std::env::current_exe()?.display().to_string();
//! let mut settings = PoolSettings::new(vec![me], vec!["mu".into()], 2);
//! settings.batch = 16;
//! let sim = CommandSimulator::new(Pool::new(settings)?, 2);
//! // Rows 0..100, θ_j = j/50 − 1, each row with its own stream.
//! let rows: Vec<u64> = (0..100).collect();
//! let thetas: Vec<f64> = rows.iter().map(|&j| j as f64 / 50.0 - 1.0).collect();
//! let block = |sim: &CommandSimulator| -> Result<(Vec<f64>, Vec<bool>), Box<dyn std::error::Error>> {
//!     let mut streams: Vec<SimStream> = rows.iter().map(|&j| SimStream::new(7, j)).collect();
//!     let (mut out, mut ok) = (vec![0.0; 2 * rows.len()], vec![false; rows.len()]);
//!     sim.simulate_rows(&rows, &thetas, &mut streams, &mut out, &mut ok)?;
//!     Ok((out, ok))
//! };
//! let (out, ok) = block(&sim)?;
//! for (j, y) in out.chunks_exact(2).enumerate() {
//!     // rejected θ come back not ok (a pairs table redraws them); the others are simulated
//!     assert_eq!(ok[j], thetas[j] >= 0.0);
//!     assert!(!ok[j] || y[0] == thetas[j]);
//! }
//! // The same rows on one worker, in batches of 5: the same block, bit for bit.
//! let mut one = PoolSettings::new(vec![std::env::current_exe()?.display().to_string()], vec!["mu".into()], 2);
//! one.batch = 5;
//! let sim1 = CommandSimulator::new(Pool::new(one)?, 1);
//! assert_eq!(block(&sim1)?, (out, ok));
//! # Ok(())
//! # }
//! ```

// A std crate (processes, pipes, threads): `std::` paths are the natural ones here.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)]

mod error;
pub mod ipc;
mod pool;
mod protocol;
pub mod reference;
mod serve;
mod simulator;

pub use error::{Failure, Fault, FaultKind, WorkerError, rows_label};
pub use pool::{Pool, PoolSettings, STDERR_LINES};
pub use protocol::{Answer, META_OUTPUTS, META_PROTOCOL, META_REQUEST, PROTOCOL_VERSION, Request};
pub use serve::{serve, serve_stdio};
pub use simulator::{CommandSimulator, FAILED_CODE, OutputMap, REJECT_CODE, Workers};

/// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
