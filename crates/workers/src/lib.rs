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
//! computes a public pairs table with two worker processes:
//!
//! ```rust,standalone_crate
//! use dpinfer_abc::pairs::{Proposal, PublicPairs};
//! use dpinfer_simulators::prior::Uniform;
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
//! let prior = Uniform::new(-1.0, 1.0)?;
//! let table = PublicPairs::simulate(&Proposal::Prior(&prior), &sim, 7, 0..100)?;
//! assert_eq!(table.len(), 100);
//! for row in table.to_table().chunks_exact(3) {
//!     assert!(row[0] >= 0.0 && row[0] == row[1]); // rejected θ were redrawn
//! }
//! // The same rows on one worker, in batches of 5: the same table, bit for bit.
//! let mut one = PoolSettings::new(vec![std::env::current_exe()?.display().to_string()], vec!["mu".into()], 2);
//! one.batch = 5;
//! let sim1 = CommandSimulator::new(Pool::new(one)?, 1);
//! assert_eq!(PublicPairs::simulate(&Proposal::Prior(&prior), &sim1, 7, 0..100)?, table);
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
