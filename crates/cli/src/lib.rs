#![doc = include_str!("../README.md")]
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

pub mod files;

pub mod account;
pub mod arrow;
pub mod config;
pub mod declared;
pub mod jobs;
pub mod limits;
pub mod mcmc;
pub mod model;
pub mod pmc;
pub mod prior_decl;
pub mod private;
mod progress;
pub mod public;
pub mod release;
pub mod results;
pub mod sampler;
pub mod shard;
pub mod smc;
pub mod summary;
pub mod summary_decl;
