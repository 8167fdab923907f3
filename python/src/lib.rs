//! `dpinfer._native`: the PyO3 extension behind the `dpinfer` Python package.
//!
//! A thin binding over the library crates: it converts arguments (numpy arrays without
//! copies where the crate takes slices), owns event trees, releases the GIL around Rust-only
//! work and maps typed errors to `dpinfer.errors`. No privacy arithmetic lives here.

mod abc;
mod accounting;
mod distances;
mod errors;
mod mcmc;
mod mechanisms;
mod neural;
mod run;

use pyo3::prelude::*;

/// The native module; the public API is the pure-Python package `dpinfer`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    accounting::register(m)?;
    mechanisms::register(m)?;
    abc::register(m)?;
    distances::register(m)?;
    mcmc::register(m)?;
    neural::register(m)?;
    run::register(m)?;
    Ok(())
}
