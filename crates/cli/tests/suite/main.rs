//! The integration tests of the `dpinfer` CLI, one module per former test file, in one test
//! binary: each integration-test binary links the whole dependency tree, so one binary
//! compiles and links once (issue 34). Run one file's tests with
//! `cargo test -p dpinfer-cli --test suite <module>::` (or `cargo nextest run -p dpinfer-cli -E
//! 'test(/^<module>::/)'`). `tests/external.rs` stays a binary of its own: CI builds it a second
//! time with the `parquet` feature, and that build should not recompile the other modules.

// Lints the test modules of this binary may break (asserted exact values, casts of small
// counts, unwraps and panics as test failures): listed once here for every module.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::expect_used,
    clippy::float_cmp,
    clippy::panic,
    clippy::print_stderr,
    clippy::std_instead_of_alloc,
    clippy::std_instead_of_core,
    clippy::unwrap_used
)]

#[path = "../common/mod.rs"]
mod common;

mod account;
mod calibrate;
mod config_keys;
mod e2e;
mod examples;
mod external_python;
mod fault;
mod fuzz;
mod kernel_version;
mod ledger_version;
mod library_pairs;
mod neural;
mod robust;
mod stream_version;
mod warnings;
