//! `dpinfer.run` and the sharded steps: a config-driven run of `dpinfer-pipeline`, the same
//! library call the `dpinfer` CLI makes (`dpinfer run CONFIG`), with the GIL released.
//!
//! The binding only reads the config (a file, or TOML text with a base folder), calls the
//! pipeline and converts its [`Outcome`] to Python values; the results folder's restart-safe
//! ledger is the pipeline's. Pipeline errors are mapped to `dpinfer.errors` by their typed
//! cause ([`pipeline_err`]); the message is the whole chain (`{e:#}`).

use std::path::{Path, PathBuf};

use dpinfer_pipeline::config::Config;
use dpinfer_pipeline::results::Outcome;
use dpinfer_pipeline::run::{self as pipeline, out_dir};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::abc::to2d;
use crate::errors::raise;

/// Reads the config: exactly one of `path` (relative paths inside it resolved against its
/// folder) and `text` (resolved against `base_dir`, default the working directory).
fn config(path: Option<&Path>, text: Option<&str>, base_dir: Option<&Path>) -> PyResult<Config> {
    let parsed = match (path, text) {
        (Some(p), None) => {
            if base_dir.is_some() {
                return Err(crate::errors::invalid(
                    "base_dir",
                    None,
                    "base_dir belongs to a config given as text (a config file's relative \
                     paths are resolved against its own folder)"
                        .into(),
                ));
            }
            Config::load(p)
        }
        (None, Some(t)) => Config::parse(t, base_dir.unwrap_or_else(|| Path::new("."))),
        _ => {
            return Err(crate::errors::invalid(
                "config",
                None,
                "give exactly one of a config path and text=".into(),
            ));
        }
    };
    parsed.map_err(|e| config_err(format!("{e:#}"), e.config_key()))
}

/// `InvalidParameterError` for a config the library rejects, its `name` the key the
/// pipeline's error carries ([`dpinfer_pipeline::Error::config_key`]) or `None`.
fn config_err(msg: String, key: Option<String>) -> PyErr {
    let e = raise("InvalidParameterError", msg, &[("value", None)]);
    Python::attach(|py| {
        let _ = e.value(py).setattr("name", key);
    });
    e
}

/// Which `dpinfer.errors` class a pipeline failure (its `{e:#}` text) raises:
///
/// * a refusal of the restart-safe ledger (another input's release in the folder, an
///   unfinished or once-only release, a checksum or claim mismatch, a ledger of another
///   version: the texts say "refusing" and name the release, ledger or budget) →
///   `LedgerRefusedError`;
/// * the OS entropy source failed → `EntropyError`;
/// * a simulator or command-model worker failed (`SimError::Model`, "… model failure", a
///   worker's failure) → `ModelError` (a worker's own report goes to stderr);
/// * anything else (unreadable data, I/O) → `DpinferError`.
fn error_class(msg: &str) -> &'static str {
    let m = msg.to_lowercase();
    if m.contains("refusing")
        && ["release", "ledger", "budget"]
            .iter()
            .any(|w| m.contains(w))
    {
        "LedgerRefusedError"
    } else if m.contains("entropy") {
        "EntropyError"
    } else if [
        "worker",
        "simulator",
        "model failure",
        "degenerate simulation",
    ]
    .iter()
    .any(|w| m.contains(w))
    {
        "ModelError"
    } else {
        "DpinferError"
    }
}

/// Maps a pipeline failure by its typed cause: a ledger refusal
/// ([`dpinfer_pipeline::Error::is_refused_release`]) → `LedgerRefusedError`, an entropy
/// failure → `EntropyError`, a worker or simulator failure → `ModelError`, a setting
/// ([`dpinfer_pipeline::Error::is_config`], or any error about a config key,
/// [`dpinfer_pipeline::Error::config_key`]) → `InvalidParameterError` naming the key as the
/// error carries it; other causes by their text ([`error_class`]).
fn pipeline_err(e: &dpinfer_pipeline::Error) -> PyErr {
    use dpinfer_pipeline::Error as E;
    let msg = format!("{e:#}");
    if e.is_refused_release() {
        return raise("LedgerRefusedError", msg, &[]);
    }
    match e.root() {
        E::Entropy(_) => raise("EntropyError", msg, &[]),
        E::Worker(_) | E::Simulator(_) => raise("ModelError", msg, &[]),
        _ if e.is_config() || e.config_key().is_some() => config_err(msg, e.config_key()),
        _ => run_err(&msg),
    }
}

/// Maps a failure by its `{e:#}` text (see [`error_class`]).
fn run_err(e: &impl std::fmt::Display) -> PyErr {
    let msg = format!("{e:#}");
    raise(error_class(&msg), msg, &[])
}

/// The ledger as JSON text (the claim nested as the library serialises it); the Python
/// wrapper turns it into a dict.
fn ledger_json(o: &Outcome) -> PyResult<String> {
    serde_json::to_string(&o.ledger)
        .map_err(|e| raise("NumericalError", format!("ledger: {e}"), &[]))
}

/// An [`Outcome`] as a dict (wrapped by `dpinfer.pipeline.RunResult`).
fn outcome_dict<'py>(py: Python<'py>, o: Outcome, dir: &Path) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ledger_json", ledger_json(&o)?)?;
    d.set_item(
        "claim_text",
        o.ledger.claim.as_ref().map(ToString::to_string),
    )?;
    // The posterior summary the CLI prints and stores in summary.json (the library's
    // weighted mean, sd and quantiles).
    let marginals = PyList::empty(py);
    for m in o.marginals() {
        let md = PyDict::new(py);
        md.set_item("name", m.name)?;
        md.set_item("mean", m.mean)?;
        md.set_item("sd", m.sd)?;
        md.set_item("quantiles", m.quantiles.to_vec())?;
        md.set_item("truth", m.truth)?;
        marginals.append(md)?;
    }
    d.set_item("marginals", marginals)?;
    d.set_item(
        "quantile_levels",
        dpinfer_pipeline::summary::LEVELS.to_vec(),
    )?;
    // The diagnostics tables (the CLI's `<stem>.csv`): stem -> (columns, rows × columns).
    let tables = PyDict::new(py);
    for t in o.diagnostics {
        let width = t.columns.len();
        let flat: Vec<f64> = t.rows.into_iter().flatten().collect();
        tables.set_item(t.stem, (t.columns, to2d(py, flat, width)?))?;
    }
    d.set_item("tables", tables)?;
    let dim = o.names.len();
    d.set_item("samples", to2d(py, o.samples, dim)?)?;
    d.set_item("weights", o.weights.map(|w| w.into_pyarray(py)))?;
    d.set_item("names", o.names)?;
    d.set_item("model", o.model)?;
    d.set_item("sampler", o.sampler)?;
    d.set_item("truth", o.truth)?;
    let facts = PyList::empty(py);
    for (k, v) in o.facts {
        facts.append((k, v))?;
    }
    d.set_item("facts", facts)?;
    d.set_item("warnings", o.warnings)?;
    d.set_item("reproduced", o.reproduced)?;
    d.set_item("out", dir.to_path_buf())?;
    Ok(d)
}

/// Writes the results folder of a finished run (samples, `summary.json`, diagnostics, plots:
/// [`dpinfer_pipeline::folder::write`], the same writer `dpinfer run` calls, so both front
/// ends leave the same folder) while the run still holds the folder's lock, then closes it.
fn write_folder(
    cfg: &Config,
    dir: &Path,
    finished: pipeline::Finished,
) -> dpinfer_pipeline::Result<Outcome> {
    let model = dpinfer_pipeline::folder::model_title(cfg, &finished.outcome);
    dpinfer_pipeline::folder::write(&finished.outcome, dir, model)?;
    finished.close()
}

/// `dpinfer.run`: the whole inference a config describes (public step, private pass or
/// SMC-ABC or MCMC, diagnostics) into the results folder `out` (default `[output] dir`),
/// with `threads` workers for the public simulation (default `[output] threads`, 0 = all
/// cores), and `kernel_version` overriding `[distance] kernel_version` (the random features'
/// `sin`/`cos`, 1 or 2). The folder receives what the pipeline writes (the ledger, the
/// release, the pairs table or populations) and the results folder `dpinfer run` writes
/// ([`write_folder`]); the result comes back as a dict.
#[pyfunction]
#[pyo3(signature = (path=None, *, text=None, base_dir=None, out=None, threads=None, kernel_version=None))]
fn run_config<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    text: Option<String>,
    base_dir: Option<PathBuf>,
    out: Option<PathBuf>,
    threads: Option<usize>,
    kernel_version: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut cfg = config(path.as_deref(), text.as_deref(), base_dir.as_deref())?;
    if let Some(v) = kernel_version {
        cfg.distance
            .set_kernel_version(v)
            .map_err(|e| config_err(format!("{e:#}"), e.config_key()))?;
    }
    let dir = out_dir(&cfg, out.as_deref());
    let threads = threads.unwrap_or(cfg.output.threads);
    let outcome = py
        .detach(|| pipeline::run(&cfg, &dir, threads).and_then(|f| write_folder(&cfg, &dir, f)))
        .map_err(|e| pipeline_err(&e))?;
    outcome_dict(py, outcome, &dir)
}

/// `dpinfer.simulate_shard`: shard `shard` of `shards` of the public pairs table (SMC-ABC
/// generation `generation` ≥ 1: proposals from the population file `population`), written
/// into the folder `out`; returns (file, first row, end row).
#[pyfunction]
#[pyo3(signature = (path=None, *, shard, shards, out, text=None, base_dir=None, generation=0, population=None, threads=0))]
#[allow(clippy::too_many_arguments)]
fn simulate_shard(
    py: Python<'_>,
    path: Option<PathBuf>,
    shard: u32,
    shards: u32,
    out: PathBuf,
    text: Option<String>,
    base_dir: Option<PathBuf>,
    generation: u32,
    population: Option<PathBuf>,
    threads: usize,
) -> PyResult<(PathBuf, u64, u64)> {
    let cfg = config(path.as_deref(), text.as_deref(), base_dir.as_deref())?;
    py.detach(|| {
        pipeline::simulate_shard(
            &cfg,
            (shard, shards),
            &out,
            generation,
            population.as_deref(),
            threads,
        )
    })
    .map_err(|e| pipeline_err(&e))
}

/// `dpinfer.private_step`: the data owner's private pass over the merged pairs table
/// `pairs` into the results folder `out` (default `[output] dir`).
#[pyfunction]
#[pyo3(signature = (path=None, *, pairs, text=None, base_dir=None, out=None))]
fn private_step<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    pairs: PathBuf,
    text: Option<String>,
    base_dir: Option<PathBuf>,
    out: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = config(path.as_deref(), text.as_deref(), base_dir.as_deref())?;
    let dir = out_dir(&cfg, out.as_deref());
    let outcome = py
        .detach(|| {
            pipeline::private_step(&cfg, &pairs, &dir).and_then(|f| write_folder(&cfg, &dir, f))
        })
        .map_err(|e| pipeline_err(&e))?;
    outcome_dict(py, outcome, &dir)
}

/// `dpinfer.smc_step`: the central (non-private) step of generation `generation` of a
/// sharded SMC-ABC over the merged table `pairs` (`population`: generation − 1's file);
/// writes the new population into `out` (default `[output] dir`) and returns it as a dict.
#[pyfunction]
#[pyo3(signature = (path=None, *, pairs, generation, text=None, base_dir=None, population=None, out=None))]
#[allow(clippy::too_many_arguments)]
fn smc_step<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    pairs: PathBuf,
    generation: u32,
    text: Option<String>,
    base_dir: Option<PathBuf>,
    population: Option<PathBuf>,
    out: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = config(path.as_deref(), text.as_deref(), base_dir.as_deref())?;
    let dir = out_dir(&cfg, out.as_deref());
    let p = py
        .detach(|| pipeline::smc_step(&cfg, &pairs, generation, population.as_deref(), &dir))
        .map_err(|e| pipeline_err(&e))?;
    let d = PyDict::new(py);
    d.set_item("generation", p.generation)?;
    d.set_item("tolerance", p.tolerance)?;
    d.set_item("ess", p.ess)?;
    d.set_item("proposals", p.proposals)?;
    d.set_item("samples", to2d(py, p.particles.clone(), p.dim)?)?;
    d.set_item("weights", p.weights.clone().into_pyarray(py))?;
    d.set_item(
        "file",
        dir.join(dpinfer_pipeline::pmc::Population::file_name(generation)),
    )?;
    Ok(d)
}

/// `dpinfer.merge_shards`: the complete, checksum-verified shards of generation
/// `generation` in the folder `dir` joined into the merged table `out` (refused if `out`
/// exists, unless `force`), as `dpinfer merge`; returns the number of rows.
#[pyfunction]
#[pyo3(signature = (dir, *, out, generation=0, force=false))]
fn merge_shards(
    py: Python<'_>,
    dir: PathBuf,
    out: PathBuf,
    generation: u32,
    force: bool,
) -> PyResult<u64> {
    use dpinfer_ledger::files::{Replace, check_target};
    use dpinfer_ledger::shard;
    py.detach(|| {
        check_target(&out, Replace::IfForced(force))?;
        let (h, data) = shard::merge_dir(&dir, generation)?;
        shard::write_atomic(&out, &h, &data, Replace::IfForced(force))?;
        Ok(h.total_rows)
    })
    .map_err(|e: dpinfer_ledger::Error| run_err(&e))
}

/// A config given as a Python mapping (sent as JSON text by `dpinfer.pipeline`) as TOML
/// text: tables stay tables, numbers keep every bit; `None` (JSON null) has no TOML form.
#[pyfunction]
fn config_toml(json: &str) -> PyResult<String> {
    let table: toml::Table = serde_json::from_str(json)
        .map_err(|e| crate::errors::invalid("config", None, format!("config mapping: {e}")))?;
    toml::to_string(&table)
        .map_err(|e| crate::errors::invalid("config", None, format!("config mapping: {e}")))
}

/// `dpinfer.calibrate`: simulation-based calibration of the config's sampler with its
/// mechanism in the loop (`dpinfer calibrate`, [`dpinfer_pipeline::calibrate::run`]) into the
/// folder `out` (default `[output] dir`/calibration): replicates `shard` of `shards` of K,
/// resumable, merged with every `replicates-*.jsonl` already in the folder. Returns
/// (`summary.json` as text or `None` while replicates are missing, replicates present,
/// computed, found finished).
#[pyfunction]
#[pyo3(signature = (path=None, *, replicates, text=None, base_dir=None, out=None, draws=19, thin=1, alpha=0.05, shard=0, shards=1, threads=None))]
#[allow(clippy::too_many_arguments)]
fn calibrate(
    py: Python<'_>,
    path: Option<PathBuf>,
    replicates: u64,
    text: Option<String>,
    base_dir: Option<PathBuf>,
    out: Option<PathBuf>,
    draws: u32,
    thin: u32,
    alpha: f64,
    shard: u32,
    shards: u32,
    threads: Option<usize>,
) -> PyResult<(Option<String>, u64, u64, u64, String)> {
    use dpinfer_pipeline::calibrate;
    let cfg = config(path.as_deref(), text.as_deref(), base_dir.as_deref())?;
    let dir = out.unwrap_or_else(|| cfg.output.dir.join("calibration"));
    let options = calibrate::Options {
        replicates,
        draws,
        thin,
        alpha,
        shard: (shard, shards),
        threads: threads.unwrap_or(cfg.output.threads),
    };
    let done = py
        .detach(|| calibrate::run(&cfg, &dir, &options, &dpinfer_pipeline::Quiet))
        .map_err(|e| pipeline_err(&e))?;
    let summary = done
        .report
        .map(|r| serde_json::to_string(&r))
        .transpose()
        .map_err(|e| run_err(&e))?;
    Ok((
        summary,
        done.present,
        done.computed,
        done.reused,
        dir.display().to_string(),
    ))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_config, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_shard, m)?)?;
    m.add_function(wrap_pyfunction!(private_step, m)?)?;
    m.add_function(wrap_pyfunction!(smc_step, m)?)?;
    m.add_function(wrap_pyfunction!(merge_shards, m)?)?;
    m.add_function(wrap_pyfunction!(config_toml, m)?)?;
    Ok(())
}
