#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod error;
mod fastexp;
mod fastsincos;
mod gram;
mod kernel;
mod ks;
#[cfg(feature = "parallel")]
mod many;
mod median;
mod mmd;
mod reference;
mod rff;
mod rows;
pub mod sensitivity;
pub mod simd;
mod summary;
mod version;

pub use error::DistanceError;
pub use kernel::{BoundedKernel, Gaussian, Kernel, Laplace, Matern32};
pub use ks::{kolmogorov_sf, ks_p_value, ks_statistic};
#[cfg(feature = "alloc")]
pub use median::median_heuristic_vec;
pub use median::{median_heuristic, median_heuristic_pooled, pair_count};
pub use mmd::{mmd_biased, mmd_unbiased, mmd2_biased, mmd2_linear, mmd2_unbiased};
pub use reference::MmdReference;
pub use rff::{RandomFourierFeatures, RffReference};
pub use rows::{Rows, sanitize};
pub use sensitivity::{Neighbouring, Relations, Sensitivity};
pub use summary::{ClippedWeightedL2, TUBERCULOSIS_CLIP, TUBERCULOSIS_WEIGHTS, WeightedL2};
pub use version::{AllowanceVersion, KernelVersion};
