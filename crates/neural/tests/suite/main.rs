//! The integration tests of `dpinfer-neural`, one binary (each test binary links the whole
//! tensor library; one link instead of two): the estimators (`flow`) and the sequential
//! samplers SPPE and SPLE (`sequential`). Run one module with
//! `cargo test -p dpinfer-neural --test suite flow::`.

mod flow;
mod sequential;
