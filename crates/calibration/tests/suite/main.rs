//! The integration tests of dpinfer-calibration, one binary (modules below).
//!
//! Statistical tests are seeded; each states its false-failure rate for a fresh seed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::float_cmp,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss
)]

mod calibration;
mod draws;
mod engine;
mod models;
mod stats;
