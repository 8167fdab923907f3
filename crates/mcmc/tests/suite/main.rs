//! The integration tests of `dpinfer-mcmc`, one module per former test file, in one test binary:
//! each integration-test binary links the whole dependency tree, so one binary per crate
//! compiles and links once (issue 34). Run one file's tests with
//! `cargo test -p dpinfer-mcmc --test suite <module>::` (or `cargo nextest run -p dpinfer-mcmc -E 'test(/^<module>::/)'`).
//! Property-test regressions live in `tests/proptest-regressions/<module>.txt` (proptest's
//! `SourceParallel` rule for a module next to `main.rs`).

// Lints the test modules of this binary may break (asserted exact values, casts of small
// counts, unwraps and panics as test failures): listed once here for every module.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::float_cmp,
    clippy::imprecise_flops,
    clippy::panic,
    clippy::unwrap_used,
    missing_docs
)]

// The helpers use the crate's alloc API, like every module that calls them.
#[cfg(feature = "alloc")]
mod common;

mod banana;
mod barker;
mod barker_claim;
mod hmc;
mod multichain_budget;
mod penalty;
mod run;
mod run_kernels;
mod value_stability;
mod vcorr_budget_diag;
