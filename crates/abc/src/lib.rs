#![no_std]
#![doc = include_str!("../README.md")]
// The unit-test modules compare exact floats and cast small counts: allowed once for all of them.
#![cfg_attr(
    test,
    allow(
        clippy::float_cmp,
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation
    )
)]

#[cfg(any(feature = "alloc", test))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod analysis;
#[cfg(feature = "alloc")]
mod batch;
mod error;
#[cfg(feature = "alloc")]
mod kernel;
#[cfg(any(feature = "alloc", test))]
mod rng;
pub mod weights;

pub use error::{AbcError, SetupFailure};
pub mod discrepancy;
pub mod gaussian;
#[cfg(feature = "alloc")]
pub mod pairs;
#[cfg(feature = "alloc")]
pub mod pass;
#[cfg(feature = "alloc")]
pub mod pmc;
#[cfg(feature = "alloc")]
pub mod rejection;
#[cfg(feature = "alloc")]
pub mod smc;
#[cfg(feature = "alloc")]
pub mod soft;
#[cfg(feature = "alloc")]
pub mod summary;
#[cfg(feature = "alloc")]
pub mod svt;
