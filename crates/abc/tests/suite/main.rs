//! The integration tests of `dpinfer-abc`, one module per former test file, in one test binary:
//! each integration-test binary links the whole dependency tree, so one binary per crate
//! compiles and links once (issue 34). Run one file's tests with
//! `cargo test -p dpinfer-abc --test suite <module>::` (or `cargo nextest run -p dpinfer-abc -E 'test(/^<module>::/)'`).
//! Property-test regressions live in `tests/proptest-regressions/<module>.txt` (proptest's
//! `SourceParallel` rule for a module next to `main.rs`).

// Lints the test modules of this binary may break (asserted exact values, casts of small
// counts, unwraps and panics as test failures): listed once here for every module.
// `imprecise_flops`: `pipeline` recomputes distances with `Euclidean`'s formula (sqrt of a sum
// of squares) to compare bit for bit; `reversed_empty_ranges`: a reversed range is an input.
#![allow(
    clippy::cast_lossless,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::float_cmp,
    clippy::imprecise_flops,
    clippy::reversed_empty_ranges,
    clippy::unwrap_used
)]

mod common;

mod batch_stability;
mod batched_distances;
mod early_parallel;
mod gaussian_mean;
mod pipeline;
mod private_samplers;
mod privatized_smc;
mod proptests;
mod settings;
mod smc_kernels;
mod summary;
mod svt_abc;
mod tuberculosis;
