#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod binomial;
mod clamped;
mod error;
mod gaussian;
pub mod grid;
pub mod idealized;
mod laplace;
pub mod noise_map;
mod rejection;
mod rng;
pub mod sampling;
mod suffstats;
mod svt;

pub use binomial::BinomialCurve;
pub use clamped::ClampedStat;
pub use dpinfer_accountants::{BinomialBound, Event, Neighbouring};
pub use error::MechanismError;
pub use gaussian::Gaussian;
pub use laplace::Laplace;
pub use noise_map::NoiseMap;
pub use rejection::{GaussianRejection, rejection_h, rejection_h_inverse};
pub use rng::NoiseRng;
pub use suffstats::{MAX_PREDICTORS, QUANT_BITS, RegressionStats, regression_stats_len};
pub use svt::{SparseVector, SparseVectorSettings};
