#![doc = include_str!("../README.md")]
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

pub mod arrow;
pub mod calibrate;
pub mod config;
pub mod declared;
pub mod error;
pub mod folder;
pub mod limits;
pub mod mcmc;
pub mod model;
pub mod neural;
pub mod observe;
pub mod pmc;
pub mod prior_decl;
pub mod private;
pub mod public;
pub mod release;
pub mod results;
pub mod run;
pub mod sampler;
pub mod smc;
pub mod summary;
pub mod summary_decl;

pub use config::Config;
pub use error::{Error, Result};
pub use observe::{Observer, Quiet, Stderr};
pub use results::Outcome;
pub use run::{Finished, run, run_with};

/// Writes formatted text to stderr, ignoring errors: the pipeline's progress notes and
/// warnings never abort a run.
pub fn stderr_write(args: core::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `eprintln!` that never panics (see [`stderr_write`]).
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => {{
        $crate::stderr_write(format_args!($($t)*));
        $crate::stderr_write(format_args!("\n"));
    }};
}
