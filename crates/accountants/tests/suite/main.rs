//! The integration tests of `dpinfer-accountants`, one module per former test file, in one test
//! binary: each integration-test binary links the whole dependency tree, so one binary per crate
//! compiles and links once (issue 34). Run one file's tests with
//! `cargo test -p dpinfer-accountants --test suite <module>::` (or `cargo nextest run -p dpinfer-accountants -E 'test(/^<module>::/)'`).
//! Property-test regressions live in `tests/proptest-regressions/<module>.txt` (proptest's
//! `SourceParallel` rule for a module next to `main.rs`).

// Lints the test modules of this binary may break (asserted exact values, casts of small
// counts, unwraps and panics as test failures): listed once here for every module.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::float_cmp,
    clippy::imprecise_flops,
    clippy::panic,
    clippy::unwrap_used
)]

use dpinfer_accountants::AccountantError;

/// Asserts that `r` is [`AccountantError::Unsupported`] (the typed refusal of an event an
/// accountant cannot analyse), showing `r` otherwise.
#[track_caller]
fn unsupported<T: core::fmt::Debug>(r: &Result<T, AccountantError>) {
    assert!(
        matches!(r, Err(AccountantError::Unsupported { .. })),
        "expected Unsupported, got {r:?}"
    );
}

mod behaviour;
mod calibration_edges;
mod claim;
mod conversions;
mod dp_barker;
mod exponential_mechanism;
mod extremes;
mod golden;
mod grammar;
mod mixture_of_gaussians;
mod peers;
mod pld_bounds;
mod pld_discrete;
mod pld_numeric;
mod pld_regimes;
mod properties;
mod random_allocation;
mod randomized_response;
mod refdata;
mod relations;
mod repeat_and_select;
mod requests;
mod tree_aggregation;
mod truncated_gaussian;
mod with_replacement;
