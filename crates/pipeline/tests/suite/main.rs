//! The integration tests of `dpinfer-pipeline`, one module per former test file, in one test
//! binary: each integration-test binary links the whole dependency tree (the samplers, arrow,
//! the plots and candle), so one binary per crate compiles and links once (issue 34). Run one
//! file's tests with `cargo test -p dpinfer-pipeline --test suite <module>::` (or
//! `cargo nextest run -p dpinfer-pipeline -E 'test(/^<module>::/)'`).

// Lints the test modules of this binary may break (asserted exact values, casts of small
// counts, unwraps and panics as test failures): listed once here for every module.
#![allow(
    clippy::float_cmp,
    clippy::panic,
    clippy::std_instead_of_alloc,
    clippy::unwrap_used
)]

mod config_types;
mod datasets;
mod errors;
mod folder;
mod neural;
mod prior_curve;
mod sampler_json;
mod steps;
