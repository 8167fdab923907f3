//! The integration tests of `dpinfer-mechanisms`, one module per former test file, in one test binary:
//! each integration-test binary links the whole dependency tree, so one binary per crate
//! compiles and links once (issue 34). Run one file's tests with
//! `cargo test -p dpinfer-mechanisms --test suite <module>::` (or `cargo nextest run -p dpinfer-mechanisms -E 'test(/^<module>::/)'`).
//! Property-test regressions live in `tests/proptest-regressions/<module>.txt` (proptest's
//! `SourceParallel` rule for a module next to `main.rs`).

// Lints the test modules of this binary may break (asserted exact values, casts of small
// counts, unwraps and panics as test failures): listed once here for every module.
#![allow(
    clippy::cast_lossless,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::float_cmp,
    clippy::panic,
    clippy::unwrap_used
)]

mod common;

mod audit;
mod claims_fit;
mod exact_events;
mod mechanisms;
mod noise_map;
mod props;
mod rejection;
mod samplers;
