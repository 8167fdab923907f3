#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "math")]
pub use dpinfer_math as math;

#[cfg(feature = "accountants")]
pub use dpinfer_accountants as accountants;

#[cfg(feature = "mechanisms")]
pub use dpinfer_mechanisms as mechanisms;

#[cfg(feature = "distances")]
pub use dpinfer_distances as distances;

#[cfg(feature = "simulators")]
pub use dpinfer_simulators as simulators;

#[cfg(feature = "abc")]
pub use dpinfer_abc as abc;

#[cfg(feature = "mcmc")]
pub use dpinfer_mcmc as mcmc;
