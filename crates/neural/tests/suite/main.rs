//! The integration tests of `dpinfer-neural`, one binary (each test binary links the whole
//! tensor library; one link instead of two): the estimators (`flow`) and the sequential
//! samplers SPPE and SPLE (`sequential`), the paper's regression experiment in small
//! (`regression`). Run one module with
//! `cargo test -p dpinfer-neural --test suite flow::`.

mod flow;
mod regression;
mod sequential;
