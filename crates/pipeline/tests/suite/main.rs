//! The integration tests of `dpinfer-pipeline`, one module per former test file, in one test
//! binary: each integration-test binary links the whole dependency tree (the samplers, arrow,
//! the plots and candle), so one binary per crate compiles and links once (issue 34). Run one
//! file's tests with `cargo test -p dpinfer-pipeline --test suite <module>::` (or
//! `cargo nextest run -p dpinfer-pipeline -E 'test(/^<module>::/)'`).

mod config_types;
mod errors;
mod folder;
mod neural;
mod prior_curve;
mod steps;
