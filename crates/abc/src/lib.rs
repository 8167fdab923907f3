#![no_std]
#![doc = include_str!("../README.md")]

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
