//! Cross-crate and end-to-end tests for dpinfer live in `tests/tests/`:
//!
//! * `facade.rs` — the facade re-exports every crate.
//! * `end_to_end.rs` — private passes of one crate whose privacy claims are recomputed by an
//!   independent path of another (SVT-ABC's ledger event against Theorem 1's closed form, a
//!   fresh accountant and a claim read back from JSON; a DP-penalty chain's ε against its
//!   calibration target and `k + 1` steps; a Gaussian release across the zCDP and RDP
//!   accountants), and the papers' numbers (Xiong–Ju–Zhang Proposition 4's ε = nL/m
//!   settings, the regression sensitivity (p² + 3p + 3)/n) with stated tolerances.
//!
//! The per-crate paper reproductions live in each crate's `tests/`, the CLI's end-to-end
//! runs in `crates/cli/tests`.
