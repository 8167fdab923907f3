#![no_std]
#![doc = include_str!("../README.md")]

extern crate alloc;

mod draws;
mod engine;
mod error;
mod stats;
mod summary;

pub use draws::{Output, pick_draws};
pub use engine::{
    DATA_STREAM, NOISE_STREAM, PRIOR_STREAM, Problem, REFERENCE_STREAM, ReplicateResult,
    SAMPLER_STREAM, SBC_DOMAIN, Settings, TIES_STREAM, merge, replicate_stream, run_range,
    run_replicate,
};
pub use error::{CalibrationError, ReplicateError};
pub use stats::{
    BAND_DOMAIN, EcdfBand, EcdfTest, MAX_BAND_CELLS, binomial_tails, central_coverage, dispersion,
    holm, rank_histogram, tarp_curve,
};
pub use summary::{
    COVERAGE_LEVELS, MIN_REPLICATES, Named, ParameterSummary, Status, Summary, SummaryOptions,
    TarpSummary, Uniformity, Verdict,
};
