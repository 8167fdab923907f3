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
pub mod jobs;
pub mod results;

pub use dpinfer_pipeline::errln;
