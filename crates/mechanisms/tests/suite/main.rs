//! The integration tests of `dpinfer-mechanisms`, one module per former test file, in one test binary:
//! each integration-test binary links the whole dependency tree, so one binary per crate
//! compiles and links once (issue 34). Run one file's tests with
//! `cargo test -p dpinfer-mechanisms --test suite <module>::` (or `cargo nextest run -p dpinfer-mechanisms -E 'test(/^<module>::/)'`).
//! Property-test regressions live in `tests/proptest-regressions/<module>.txt` (proptest's
//! `SourceParallel` rule for a module next to `main.rs`).

mod common;

mod audit;
mod claims_fit;
mod exact_events;
mod mechanisms;
mod noise_map;
mod props;
mod rejection;
mod samplers;
