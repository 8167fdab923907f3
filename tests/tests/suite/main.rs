//! The integration tests of `dpinfer-tests`, one module per former test file, in one test binary:
//! each integration-test binary links the whole dependency tree, so one binary per crate
//! compiles and links once (issue 34). Run one file's tests with
//! `cargo test -p dpinfer-tests --test suite <module>::` (or `cargo nextest run -p dpinfer-tests -E 'test(/^<module>::/)'`).
//! Property-test regressions live in `tests/proptest-regressions/<module>.txt` (proptest's
//! `SourceParallel` rule for a module next to `main.rs`).

mod end_to_end;
mod facade;
mod rqmc;
