#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod batch;
pub mod dist;
mod error;
mod fn_sim;
pub mod likelihood;
pub mod prior;
mod simulator;
pub mod stream;
pub mod summaries;
mod ziggurat_normal_tables;
mod ziggurat_tables;

pub use batch::{BatchSimulator, check_batch};
pub use error::SimError;
pub use fn_sim::FnSimulator;
pub use likelihood::{BatchClipSum, ClipSum, RowGradient, RowLikelihood};
pub use prior::Prior;
pub use simulator::{IncrementalSimulator, RunEnd, Simulator};
pub use stream::{SimStream, StreamVersion};
pub mod models;
