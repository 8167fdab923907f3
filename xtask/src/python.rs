//! `cargo xtask python`: the Python package end to end on a fresh machine.
//!
//! Creates (once) a venv under `target/python-venv` with `python3 -m venv`, installs the
//! build and test requirements from PyPI (maturin, numpy, pytest, pytest-xdist, hypothesis,
//! pandas, scipy, dp-accounting, `dask[distributed]`, ray; opacus with `--no-deps`, because the
//! tests load only its torch-free RDP analysis), builds the abi3 wheel with `maturin build
//! --release --locked` with clippy-driver as the binding crate's compiler (`-D warnings`), installs that wheel
//! into the venv, imports it, builds the `dpinfer` CLI (the `test` task's build, `cargo test
//! --workspace --no-run`: nothing new after that task) and runs `pytest -n <cores>
//! python/tests` with its path in `DPINFER_BIN` (the CLI-vs-`dpinfer.run` test; any non-zero
//! exit, including 5 = "no tests collected", fails the task). A stamp file skips
//! `pip install` when the requirement list is unchanged.
//!
//! Environment: `XTASK_PYTHON` (default `python3`) is the interpreter the venv is made from.

use std::path::{Path, PathBuf};

use crate::util::{Cmd, Res, root, target_dir};

/// Requirements of the build and the tests; a change re-runs `pip install`.
const REQUIREMENTS: &[&str] = &[
    "maturin>=1.5,<2",
    "numpy>=1.21",
    "pytest>=7",
    // `pytest -n N`: the tests are independent (each writes under its own `tmp_path`); one
    // process per core instead of one for all (the Python task's tests were its longest
    // single-core stretch: 86 s on the shared machine).
    "pytest-xdist>=3",
    "hypothesis>=6",
    "pandas",
    "scipy",
    "dp-accounting==0.6.0",
    "dask[distributed]",
    // `dpinfer.calibrate_ray` on a local Ray cluster (python/tests/test_calibrate.py); 2.60.0
    // has a cp311 manylinux x86_64 wheel (adds ≈ 54 s and 240 MB to a fresh venv)
    "ray==2.60.0",
    // the CLI's external-simulator workers (crates/cli/tests/suite/external_python.rs)
    "pyarrow==26.0.1",
    // `RunResult.to_datatree()` (python/tests/test_arviz.py): xarray's DataTree and its
    // netCDF writer (h5netcdf on h5py); ≈ 13 s and 36 MB more in a fresh venv
    "xarray==2026.9.0",
    "h5netcdf==1.8.2",
    "h5py==3.16.0",
    // `az.summary` / `az.plot_rank` on it: arviz ≥ 1.0 needs Python ≥ 3.12; on 3.11 (a
    // fresh machine's interpreter) the 0.x line, through `InferenceData.from_datatree`
    "arviz>=1.0; python_version >= '3.12'",
    "arviz==0.23.4; python_version < '3.12'",
    "matplotlib",
];
/// Installed with `--no-deps` (opacus' package imports torch; its RDP analysis does not).
const NO_DEPS: &[&str] = &["opacus==1.6.0"];

fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// The project's one Python environment, `target/python-venv`, created and brought up to
/// [`REQUIREMENTS`] when needed; returns its interpreter. The CLI's external-simulator tests
/// use it too (`cargo xtask ci` prepares it before the tests).
///
/// # Errors
/// No usable `python3` with `venv`, or `pip install` failed.
pub(crate) fn venv() -> Res<PathBuf> {
    let venv = target_dir().join("python-venv");
    let py = venv_python(&venv);
    if !py.is_file() {
        let base = std::env::var("XTASK_PYTHON").unwrap_or_else(|_| "python3".to_owned());
        Cmd::new(&base)
            .args(["-m".as_ref(), "venv".as_ref(), venv.as_os_str()])
            .run()
            .map_err(|e| {
                format!("{e}\n(needs a python3 >= 3.9 with the venv module; set XTASK_PYTHON)")
            })?;
    }
    let stamp = venv.join("dpinfer-requirements.txt");
    let wanted = format!(
        "{}\n--no-deps {}\n",
        REQUIREMENTS.join("\n"),
        NO_DEPS.join(" ")
    );
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        Cmd::new(&py)
            .args(["-m", "pip", "install", "--quiet", "--upgrade", "pip"])
            .run()?;
        Cmd::new(&py)
            .args(["-m", "pip", "install", "--quiet"])
            .args(REQUIREMENTS)
            .run()?;
        Cmd::new(&py)
            .args(["-m", "pip", "install", "--quiet", "--no-deps"])
            .args(NO_DEPS)
            .run()?;
        std::fs::write(&stamp, wanted).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    Ok(py)
}

/// The toolchain's `clippy-driver`: beside the cargo that runs the xtask (`$CARGO`), else in
/// `rustc --print sysroot`'s `bin`.
///
/// # Errors
/// Neither exists (the `clippy` component is missing: `rustup component add clippy`).
fn clippy_driver() -> Res<PathBuf> {
    let name = format!("clippy-driver{}", std::env::consts::EXE_SUFFIX);
    let beside_cargo = Path::new(&crate::util::cargo()).with_file_name(&name);
    if beside_cargo.is_file() {
        return Ok(beside_cargo);
    }
    let sysroot = Cmd::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .and_then(|(ok, out, _)| ok.then(|| PathBuf::from(out.trim())));
    sysroot
        .map(|s| s.join("bin").join(&name))
        .filter(|p| p.is_file())
        .ok_or_else(|| "no clippy-driver found (`rustup component add clippy`)".to_owned())
}

/// `cargo xtask python`: [`wheel`], then [`pytest`].
pub(crate) fn python() -> Res {
    let start = std::time::Instant::now();
    let wheel = wheel()?;
    pytest()?;
    eprintln!(
        "python: wheel {} built, installed and tested in {:.1}s",
        wheel.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The wheel half of [`python`]: the venv, the binding's clippy gate, `maturin build
/// --release`, the wheel installed into the venv and imported. Uses only `target/python`
/// and the venv, none of the workspace build, so `cargo xtask ci` runs it in the side lane
/// beside the workspace tests. Returns the wheel's path.
///
/// # Errors
/// The venv, clippy, maturin, the install or the import failed.
pub(crate) fn wheel() -> Res<PathBuf> {
    let py = venv()?;
    // The binding's own lint gate (its workspace is outside `cargo xtask lint`), in the
    // wheel's own build: clippy-driver compiles the binding crate (the only member of its
    // workspace, no test targets) as cargo clippy would lint it, with `-D warnings`, and
    // also generates its code. A separate `cargo clippy` first re-checked all 67 of the
    // wheel's crates for nothing but this one (issue 34).
    let clippy = clippy_driver()?;
    let wheels = target_dir().join("python-wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    Cmd::new(&py)
        .args([
            "-m",
            "maturin",
            "build",
            "--release",
            "--locked",
            "-m",
            "python/Cargo.toml",
        ])
        .args(["--out".as_ref(), wheels.as_os_str()])
        .args(["--interpreter".as_ref(), py.as_os_str()])
        .env("CARGO_TARGET_DIR", target_dir().join("python"))
        // What `cargo clippy -- -D warnings` sets: the workspace members are compiled by
        // clippy-driver, which reads its lint flags from CLIPPY_ARGS (separated by
        // `__CLIPPY_HACKERY__`); dependencies keep plain rustc.
        .env("RUSTC_WORKSPACE_WRAPPER", &clippy)
        .env(
            "CLIPPY_ARGS",
            "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
        )
        .run()
        .map_err(|e| {
            format!(
                "{e}\n(a clippy finding in python/src fails this build; if cargo said the lock \
                 file needs updating: `cargo update --workspace --manifest-path \
                 python/Cargo.toml` and commit python/Cargo.lock)"
            )
        })?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("{}: {e}", wheels.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("maturin wrote no wheel into {}", wheels.display()))?;
    Cmd::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--force-reinstall",
            "--no-deps",
        ])
        .args([wheel.as_os_str()])
        .run()?;
    // The installed wheel (not the source tree) is what is imported: run from target/.
    Cmd::new(&py)
        .args([
            "-c",
            "import dpinfer, dpinfer.accounting as a; \
             acc = a.RdpAccountant(); \
             acc.compose(a.Event.poisson_sampled(0.01, a.Event.gaussian(1.0)), 10000); \
             print('dpinfer', dpinfer.__version__, 'eps', acc.get_epsilon(1e-5))",
        ])
        .run()?;
    Ok(wheel)
}

/// The test half of [`python`]: `pytest -n <cores> python/tests` against the installed
/// wheel, with the workspace test build's CLI. Needs [`wheel`] first (the installed wheel
/// is what is imported).
///
/// # Errors
/// No venv, the CLI build or pytest failed.
pub(crate) fn pytest() -> Res {
    let py = venv_python(&target_dir().join("python-venv"));
    if !py.is_file() {
        return Err(format!(
            "{} is missing: run `cargo xtask python`",
            py.display()
        ));
    }
    // The `dpinfer` CLI, for the test that the CLI and `dpinfer.run` give the same samples.
    let cli = crate::tasks::workspace_cli()?;
    Cmd::new(&py)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n"])
        .args([std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .to_string()])
        .args([root().join("python").join("tests").as_os_str()])
        .env("DPINFER_BIN", &cli)
        .run()
        .map_err(|e| format!("{e}\n(pytest exit 5 means no tests were collected)"))
}
