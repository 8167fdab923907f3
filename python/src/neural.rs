//! `dpinfer.neural`: SPPE and SPLE (Xiong, Ju & Zhang, Algorithms 1–2) of `dpinfer-neural`
//! with a numpy simulator of the confidential statistic and a `dpinfer.mechanisms` release
//! mechanism (its noise map `τ(u, s)`; the uniforms are public seeded streams, never the
//! mechanism's privacy-noise generator).

use std::cell::RefCell;

use dpinfer_mechanisms::NoiseMap;
use dpinfer_neural::{
    ChainSettings, ConditionalFlow, FlowSettings, MafSettings, NeuralError, NsfSettings,
    ProposalReport, RoundReport, SequentialSettings, SplineImpl, TrainSettings,
};
use dpinfer_simulators::qmc::Sampling;
use dpinfer_simulators::{Prior, SimStream};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList};

use crate::abc::{AnyPrior, PyBatch, PySim, to2d};
use crate::errors::{invalid, raise};
use crate::mechanisms::{PyBinomialCurve, PyGaussian, PyLaplace};

/// Stream domain of SPPE's posterior draws (the pipeline's `neural::SAMPLE_DOMAIN`).
const SAMPLE_DOMAIN: u64 = 0x4e45_5552_5341_0000; // "NEURSA"

/// A library error as the Python exception of `dpinfer.errors` (settings name their argument).
fn neural_err(e: NeuralError) -> PyErr {
    let msg = e.to_string();
    match e {
        NeuralError::Dimension { name, value, .. } =>
        {
            #[allow(clippy::cast_precision_loss)]
            invalid(
                name.split(' ').next().unwrap_or(name),
                Some(value as f64),
                msg,
            )
        }
        NeuralError::Setting { name, value, .. } => invalid(name, Some(value), msg),
        NeuralError::Length { name, .. } | NeuralError::NonFinite { name, .. } => {
            invalid(name, None, msg)
        }
        NeuralError::TooFewPairs { .. } => invalid("simulations", None, msg),
        NeuralError::Mechanism { .. } => invalid("mechanism", None, msg),
        NeuralError::Simulation { .. } => raise("ModelError", msg, &[]),
        _ => raise("NumericalError", msg, &[]),
    }
}

/// The mechanism argument's noise map.
enum Mech {
    Laplace(dpinfer_mechanisms::Laplace),
    Gaussian(dpinfer_mechanisms::Gaussian),
    Binomial(dpinfer_mechanisms::BinomialCurve),
}

impl Mech {
    fn new(ob: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(m) = ob.extract::<PyRef<'_, PyLaplace>>() {
            return Ok(Self::Laplace(m.mech));
        }
        if let Ok(m) = ob.extract::<PyRef<'_, PyGaussian>>() {
            return Ok(Self::Gaussian(m.mech));
        }
        if let Ok(m) = ob.extract::<PyRef<'_, PyBinomialCurve>>() {
            return Ok(Self::Binomial(m.mech));
        }
        Err(invalid(
            "mechanism",
            None,
            "mechanism must be a dpinfer.mechanisms Laplace, Gaussian or BinomialCurve (the \
             release that produced `observed`)"
                .into(),
        ))
    }
}

impl NoiseMap for Mech {
    fn noise_dim(&self, len: usize) -> Result<usize, dpinfer_mechanisms::MechanismError> {
        match self {
            Self::Laplace(m) => m.noise_dim(len),
            Self::Gaussian(m) => m.noise_dim(len),
            Self::Binomial(m) => m.noise_dim(len),
        }
    }
    fn tau(
        &self,
        u: &[f64],
        s: &[f64],
        out: &mut [f64],
    ) -> Result<(), dpinfer_mechanisms::MechanismError> {
        match self {
            Self::Laplace(m) => m.tau(u, s, out),
            Self::Gaussian(m) => m.tau(u, s, out),
            Self::Binomial(m) => m.tau(u, s, out),
        }
    }
}

/// `spline=` as a `SplineImpl` number. Any Python int is taken: a negative or huge one is the
/// typed settings error naming `spline` (as an unknown version is), not pyo3's
/// `OverflowError` of a `u32` argument; a non-int is a `TypeError`.
fn spline_number(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u32>> {
    let Some(v) = v else { return Ok(None) };
    if !v.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "spline must be an int (1: tensor, 2: fused), got {}",
            v.get_type().name()?
        )));
    }
    let refuse = |value: Option<f64>| {
        invalid(
            "spline",
            value,
            format!("spline must be 1 (tensor) or 2 (fused), got {v}"),
        )
    };
    match v.extract::<i64>() {
        Ok(n) => match u32::try_from(n) {
            Ok(n) => Ok(Some(n)),
            #[allow(clippy::cast_precision_loss)]
            Err(_) => Err(refuse(Some(n as f64))),
        },
        // beyond i64: the value is not representable as the error's f64 either
        Err(_) => Err(refuse(None)),
    }
}

/// The keyword arguments as the library's settings (unset: the library's defaults).
#[allow(clippy::too_many_arguments)]
fn settings(
    rounds: Option<usize>,
    simulations: Option<usize>,
    noise_draws: Option<usize>,
    sampling: &str,
    flow: &str,
    layers: Option<usize>,
    hidden: Option<usize>,
    spline: Option<u32>,
    max_epochs: Option<usize>,
    samples: Option<usize>,
    seed: u64,
) -> PyResult<SequentialSettings> {
    let d = SequentialSettings::default();
    let sampling = match sampling {
        "rqmc" => Sampling::Rqmc,
        "mc" => Sampling::MonteCarlo,
        s => {
            return Err(invalid(
                "sampling",
                None,
                format!("sampling must be 'rqmc' or 'mc', got {s:?}"),
            ));
        }
    };
    let flow = match flow {
        "nsf" => {
            let n = NsfSettings::default();
            let spline = match spline {
                None => n.spline,
                Some(v) => SplineImpl::try_from(v).map_err(neural_err)?,
            };
            FlowSettings::Nsf(NsfSettings {
                layers: layers.unwrap_or(n.layers),
                hidden: hidden.unwrap_or(n.hidden),
                spline,
                ..n
            })
        }
        "maf" if spline.is_some() => {
            return Err(invalid(
                "spline",
                None,
                "spline belongs to the spline flow (flow='nsf')".into(),
            ));
        }
        "maf" => {
            let m = MafSettings::default();
            FlowSettings::Maf(MafSettings {
                layers: layers.unwrap_or(m.layers),
                hidden: hidden.unwrap_or(m.hidden),
                ..m
            })
        }
        f => {
            return Err(invalid(
                "flow",
                None,
                format!("flow must be 'nsf' or 'maf', got {f:?}"),
            ));
        }
    };
    let t = TrainSettings::default();
    let s = SequentialSettings {
        rounds: rounds.unwrap_or(d.rounds),
        simulations: simulations.unwrap_or(d.simulations),
        noise_draws: noise_draws.unwrap_or(d.noise_draws),
        sampling,
        flow,
        train: TrainSettings {
            max_epochs: max_epochs.unwrap_or(t.max_epochs),
            ..t
        },
        chains: ChainSettings::default(),
        posterior_draws: samples.unwrap_or(d.posterior_draws),
        seed,
        ..d
    };
    s.check().map_err(neural_err)?;
    Ok(s)
}

fn round_dicts<'py>(py: Python<'py>, rounds: &[RoundReport]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for r in rounds {
        let h = PyDict::new(py);
        h.set_item("round", r.round)?;
        h.set_item("simulations", r.simulations)?;
        h.set_item("rejected", r.rejected)?;
        h.set_item("rows", r.rows)?;
        h.set_item("epochs", r.fit.epochs)?;
        h.set_item("best_epoch", r.fit.best_epoch)?;
        h.set_item("train_loss", r.fit.train_loss.clone())?;
        h.set_item("validation_loss", r.fit.validation_loss.clone())?;
        match &r.proposal {
            ProposalReport::Truncated { acceptance } => {
                h.set_item("proposal", "truncated")?;
                h.set_item("acceptance", *acceptance)?;
            }
            ProposalReport::Mcmc(m) => {
                h.set_item("proposal", "mcmc")?;
                h.set_item("acceptance", m.acceptance)?;
                h.set_item("rhat", m.rhat.clone())?;
                h.set_item("ess_bulk", m.ess_bulk.clone())?;
            }
            _ => h.set_item("proposal", "prior")?,
        }
        list.append(h)?;
    }
    Ok(list)
}

/// The Python errors the simulator or prior raised, before the library's code for them.
fn finish<T>(r: Result<T, NeuralError>, prior: &AnyPrior, sim: &PySim) -> PyResult<T> {
    if let Some(e) = sim.err.borrow_mut().take() {
        return Err(e);
    }
    if let Some(e) = prior.take_err() {
        return Err(e);
    }
    r.map_err(neural_err)
}

fn save(flow: &ConditionalFlow, path: Option<&str>) -> PyResult<()> {
    if let Some(p) = path {
        flow.save(std::path::Path::new(p)).map_err(neural_err)?;
    }
    Ok(())
}

/// SPPE or SPLE (`kind`) with a Python batch simulator `simulator(theta, seeds)` of the
/// confidential statistic, on the released `observed` of `mechanism`.
#[pyfunction]
#[pyo3(signature = (kind, prior, simulator, observed, mechanism, *, rounds = None, simulations = None, noise_draws = None, sampling = "rqmc", flow = "nsf", layers = None, hidden = None, spline = None, max_epochs = None, samples = None, seed = 0, estimator_path = None))]
#[allow(clippy::too_many_arguments)]
fn neural_run<'py>(
    py: Python<'py>,
    kind: &str,
    prior: &Bound<'py, PyAny>,
    simulator: Py<PyAny>,
    observed: PyReadonlyArray1<'py, f64>,
    mechanism: &Bound<'py, PyAny>,
    rounds: Option<usize>,
    simulations: Option<usize>,
    noise_draws: Option<usize>,
    sampling: &str,
    flow: &str,
    layers: Option<usize>,
    hidden: Option<usize>,
    spline: Option<Bound<'py, PyAny>>,
    max_epochs: Option<usize>,
    samples: Option<usize>,
    seed: u64,
    estimator_path: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let obs = observed.as_slice()?.to_vec();
    let prior = AnyPrior::new(prior)?;
    let mech = Mech::new(mechanism)?;
    let s = settings(
        rounds,
        simulations,
        noise_draws,
        sampling,
        flow,
        layers,
        hidden,
        spline_number(spline.as_ref())?,
        max_epochs,
        samples,
        seed,
    )?;
    let sim = PySim {
        f: simulator,
        param_dim: prior.dim(),
        output_dim: obs.len(),
        err: RefCell::new(None),
    };
    let d = prior.dim();
    let out = PyDict::new(py);
    match kind {
        "sppe" => {
            let r = dpinfer_neural::sppe(&prior, &PyBatch(&sim), &mech, &obs, &s);
            let r = finish(r, &prior, &sim)?;
            let mut rng = SimStream::with_domain(seed, SAMPLE_DOMAIN, 0);
            let (draws, acceptance) = finish(
                r.posterior
                    .sample(&prior, s.posterior_draws, s.min_acceptance, &mut rng),
                &prior,
                &sim,
            )?;
            save(r.posterior.flow(), estimator_path)?;
            out.set_item("samples", to2d(py, draws, d)?)?;
            out.set_item("acceptance", acceptance)?;
            out.set_item("rounds", round_dicts(py, &r.rounds)?)?;
        }
        "sple" => {
            let r = dpinfer_neural::sple(&prior, &PyBatch(&sim), &mech, &obs, &s);
            let r = finish(r, &prior, &sim)?;
            save(&r.likelihood, estimator_path)?;
            out.set_item("samples", to2d(py, r.posterior, d)?)?;
            out.set_item("acceptance", r.posterior_mcmc.acceptance)?;
            out.set_item("rhat", r.posterior_mcmc.rhat.into_pyarray(py))?;
            out.set_item("ess_bulk", r.posterior_mcmc.ess_bulk.into_pyarray(py))?;
            out.set_item("rounds", round_dicts(py, &r.rounds)?)?;
        }
        k => {
            return Err(invalid(
                "kind",
                None,
                format!("kind must be 'sppe' or 'sple', got {k:?}"),
            ));
        }
    }
    Ok(out)
}

/// `n` draws of a saved SPPE posterior estimator at `observed`, truncated to `prior`'s
/// support (the same draws as the run's for the same `seed`).
#[pyfunction]
#[pyo3(signature = (path, prior, observed, n, *, seed = 0, min_acceptance = 0.01))]
fn neural_sample<'py>(
    py: Python<'py>,
    path: &str,
    prior: &Bound<'py, PyAny>,
    observed: PyReadonlyArray1<'py, f64>,
    n: usize,
    seed: u64,
    min_acceptance: f64,
) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
    let prior = AnyPrior::new(prior)?;
    let flow = ConditionalFlow::load(std::path::Path::new(path)).map_err(neural_err)?;
    let post =
        dpinfer_neural::NeuralPosterior::new(flow, observed.as_slice()?).map_err(neural_err)?;
    let mut rng = SimStream::with_domain(seed, SAMPLE_DOMAIN, 0);
    let r = post.sample(&prior, n, min_acceptance, &mut rng);
    if let Some(e) = prior.take_err() {
        return Err(e);
    }
    let (draws, _) = r.map_err(neural_err)?;
    to2d(py, draws, prior.dim())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(neural_run, m)?)?;
    m.add_function(wrap_pyfunction!(neural_sample, m)?)?;
    Ok(())
}
