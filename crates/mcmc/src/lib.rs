#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod budget;
#[cfg(feature = "alloc")]
pub mod diagnostics;
mod error;
pub mod model;
mod rng;
pub mod vcorr;
mod vcorr_tables;

#[cfg(feature = "alloc")]
mod barker;
#[cfg(feature = "alloc")]
mod batch;
#[cfg(feature = "alloc")]
mod chains;
#[cfg(feature = "alloc")]
mod hmc;
#[cfg(feature = "alloc")]
mod noise;
#[cfg(feature = "alloc")]
mod penalty;
#[cfg(feature = "alloc")]
mod proposal;
#[cfg(feature = "alloc")]
pub mod run;
#[cfg(feature = "alloc")]
mod sampler;
#[cfg(feature = "alloc")]
mod subsampled;

pub use error::McmcError;
#[cfg(feature = "alloc")]
pub use noise::PrivacyNoise;
pub use rng::NoNoise;

#[cfg(feature = "alloc")]
pub use barker::{BARKER_SIGMA2, Barker, BarkerPrivacy, BarkerSettings};
#[cfg(feature = "alloc")]
pub use chains::{Budgeted, ChainShares, MultiChain, Progress, Releases};
#[cfg(feature = "alloc")]
pub use hmc::{Hmc, HmcPrivacy, HmcSettings};
#[cfg(feature = "alloc")]
pub use penalty::{Penalty, PenaltyPrivacy, PenaltySettings};
#[cfg(feature = "alloc")]
pub use proposal::{Proposal, Shear};
#[cfg(feature = "alloc")]
pub use sampler::{MarkovChain, Observer, Step, Trace};
#[cfg(feature = "alloc")]
pub use subsampled::{
    SubsampledPenalty, SubsampledPenaltyPrivacy, SubsampledPenaltySettings, subsampled_sensitivity,
};
