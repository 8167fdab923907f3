//! The integration tests of `dpinfer-simulators`, one module per former test file, in one test
//! binary: each integration-test binary links the whole dependency tree, so one binary per
//! crate compiles and links once (issue 34). Run one file's tests with
//! `cargo test -p dpinfer-simulators --test suite <module>::` (or `cargo nextest run -p
//! dpinfer-simulators -E 'test(/^<module>::/)'`). Property-test regressions live in
//! `tests/proptest-regressions/<module>.txt` (proptest's `SourceParallel` rule for a module
//! next to `main.rs`).

// Lints the test modules of this binary may break (asserted exact values, casts of small
// counts, unwraps and panics as test failures): listed once here for every module.
#![allow(
    clippy::cast_lossless,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::expect_used,
    clippy::float_cmp,
    clippy::imprecise_flops,
    clippy::needless_range_loop,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::panic,
    clippy::unwrap_used
)]

mod common;

mod dist_priors;
mod marginals;
mod models;
mod normal_v2;
mod props;
mod qmc;
mod registry;
mod stream;
mod summaries;
mod tb;
mod univariate_priors;
mod value_stability;
