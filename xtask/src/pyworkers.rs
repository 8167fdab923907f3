//! `target/py-workers`: a Python virtual environment with pyarrow and numpy, for the CLI's
//! end-to-end tests of external simulators (`crates/cli/tests/external_python.rs`), which find
//! it through `DPINFER_TEST_PYTHON` or at this path. `cargo xtask ci` creates it before the
//! tests; under `CI=true` those tests fail when it is missing.

use std::path::PathBuf;

use crate::util::{Cmd, Res, target_dir};

/// Pinned versions (the ones the tests and the README figures were made with).
const PACKAGES: [&str; 2] = ["pyarrow==26.0.1", "numpy==2.4.6"];

/// The venv's python, creating the venv (and installing the packages) when missing.
///
/// # Errors
/// No `python3`, or `pip install` failed.
pub(crate) fn ensure() -> Res<PathBuf> {
    let venv = target_dir().join("py-workers");
    let python = venv.join("bin").join("python");
    let ready = || {
        std::process::Command::new(&python)
            .args(["-c", "import pyarrow, numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if ready() {
        return Ok(python);
    }
    Cmd::new("python3")
        .args(["-m", "venv", &venv.to_string_lossy()])
        .run()?;
    Cmd::new(&python)
        .args(["-m", "pip", "install", "--quiet"])
        .args(PACKAGES)
        .run()?;
    if ready() {
        Ok(python)
    } else {
        Err(format!(
            "{} cannot import pyarrow and numpy",
            python.display()
        ))
    }
}
