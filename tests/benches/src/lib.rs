//! Shared workloads of the benchmarks (used by `benches/` and `examples/`).
#![allow(clippy::unwrap_used, missing_docs)]

pub mod abcdp_toy;
