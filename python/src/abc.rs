//! `dpinfer.abc` and `dpinfer.priors`: the ABC samplers of `dpinfer-abc` driven by Python
//! simulators and priors, and the private ABCDP passes over public pairs.
//!
//! Python callables are adapted to the library's `Simulator`/`Prior` traits; the samplers
//! themselves (SMC-ABC, rejection, SVT-ABC, Gaussian ABCDP) run unchanged from the crate.

use std::cell::RefCell;

use dpinfer_abc::analysis::Resample;
use dpinfer_abc::discrepancy::{Discrepancy, Euclidean};
use dpinfer_abc::gaussian::{GaussianRejectionAbcdp, GaussianRejectionSettings};
use dpinfer_abc::pairs::{PAIRS_DOMAIN, PublicPairs};
use dpinfer_abc::rejection::{RejectionAbc, RejectionSettings, Rule};
use dpinfer_abc::smc::{Perturbation, SmcAbc, SmcSettings, StopReason, Tolerance};
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer_distances::{Relations, Sensitivity};
use dpinfer_simulators::prior::{LogNormal, Normal, Uniform};
use dpinfer_simulators::{BatchSimulator, Prior, SimError, SimStream, check_batch};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rand_core::Rng;

use crate::accounting::PyEvent;
use crate::errors::{abc as abc_err, invalid};
use crate::mechanisms::noise_rng;

// ---------------------------------------------------------------------------------------
// Seeds for row ranges
// ---------------------------------------------------------------------------------------

/// Per-row seeds `[start, stop)` of a run: row `i` gets the first word of
/// `SimStream::with_domain(seed, PAIRS_DOMAIN + stream, i)`, so any row range can be
/// computed anywhere (shards) and merged bit-identically.
#[pyfunction]
#[pyo3(signature = (seed, start, stop, stream = 0))]
fn row_seeds<'py>(
    py: Python<'py>,
    seed: u64,
    start: u64,
    stop: u64,
    stream: u64,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    if stop < start || stop - start > (1 << 32) {
        return Err(invalid(
            "stop",
            None,
            format!("need start <= stop and at most 2^32 rows, got [{start}, {stop})"),
        ));
    }
    let domain = PAIRS_DOMAIN.wrapping_add(stream);
    let v: Vec<u64> = py.detach(|| {
        (start..stop)
            .map(|i| SimStream::with_domain(seed, domain, i).next_u64())
            .collect()
    });
    Ok(v.into_pyarray(py))
}

// ---------------------------------------------------------------------------------------
// Priors
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Coord {
    Uniform(Uniform),
    Normal(Normal),
    LogNormal(LogNormal),
}

impl Coord {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        match self {
            Self::Uniform(p) => p.sample(rng, out),
            Self::Normal(p) => p.sample(rng, out),
            Self::LogNormal(p) => p.sample(rng, out),
        }
    }
    fn ln_density(&self, x: &[f64]) -> f64 {
        match self {
            Self::Uniform(p) => p.ln_density(x),
            Self::Normal(p) => p.ln_density(x),
            Self::LogNormal(p) => p.ln_density(x),
        }
    }
}

/// Independent one-dimensional priors of `dpinfer-simulators` (normalised densities).
///
/// ``sample(seeds)`` draws row i from a stream seeded by ``seeds[i]`` (public simulation
/// randomness, never privacy noise); ``log_pdf(theta)`` is the joint log density (−∞
/// outside the support).
#[pyclass(name = "Prior", module = "dpinfer._native", frozen)]
#[derive(Clone, Debug)]
pub(crate) struct PyPrior {
    coords: Vec<Coord>,
}

impl Prior for PyPrior {
    fn dim(&self) -> usize {
        self.coords.len()
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        if out.len() != self.coords.len() {
            return Err(SimError::DimensionMismatch {
                what: "theta",
                expected: self.coords.len(),
                got: out.len(),
            });
        }
        for (c, o) in self.coords.iter().zip(out.chunks_exact_mut(1)) {
            c.sample(rng, o)?;
        }
        Ok(())
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if theta.len() != self.coords.len() {
            return f64::NEG_INFINITY;
        }
        self.coords
            .iter()
            .zip(theta.chunks_exact(1))
            .map(|(c, x)| c.ln_density(x))
            .sum()
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        self.ln_density(theta).is_finite()
    }
}

fn sim_err(e: SimError) -> PyErr {
    invalid("prior", None, format!("{e:?}"))
}

fn broadcast(name: &str, a: &[f64], b: &[f64]) -> PyResult<usize> {
    if a.is_empty() || a.len() != b.len() {
        return Err(invalid(
            name,
            None,
            format!("{name}: parameter lists must be non-empty and of equal length"),
        ));
    }
    Ok(a.len())
}

/// Independent coordinates `make(a[i], b[i])` from two parameter lists of equal length.
fn per_coord(
    name: &str,
    a: &[f64],
    b: &[f64],
    make: impl Fn(f64, f64) -> Result<Coord, SimError>,
) -> PyResult<PyPrior> {
    broadcast(name, a, b)?;
    let coords = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| make(x, y))
        .collect::<Result<_, _>>()
        .map_err(sim_err)?;
    Ok(PyPrior { coords })
}

#[pymethods]
impl PyPrior {
    /// Independent U(lo[i], hi[i]) coordinates.
    #[staticmethod]
    fn uniform(lo: Vec<f64>, hi: Vec<f64>) -> PyResult<Self> {
        per_coord("uniform", &lo, &hi, |l, h| {
            Uniform::new(l, h).map(Coord::Uniform)
        })
    }
    /// Independent N(mean[i], sd[i]²) coordinates.
    #[staticmethod]
    fn normal(mean: Vec<f64>, sd: Vec<f64>) -> PyResult<Self> {
        per_coord("normal", &mean, &sd, |m, s| {
            Normal::new(m, s).map(Coord::Normal)
        })
    }
    /// Independent LogNormal(mu[i], sigma[i]) coordinates.
    #[staticmethod]
    fn lognormal(mu: Vec<f64>, sigma: Vec<f64>) -> PyResult<Self> {
        per_coord("lognormal", &mu, &sigma, |m, s| {
            LogNormal::new(m, s).map(Coord::LogNormal)
        })
    }
    /// The concatenation of several independent priors.
    #[staticmethod]
    fn independent(parts: Vec<PyRef<'_, Self>>) -> PyResult<Self> {
        let coords: Vec<Coord> = parts
            .iter()
            .flat_map(|p| p.coords.iter().copied())
            .collect();
        if coords.is_empty() {
            return Err(invalid(
                "parts",
                None,
                "independent() needs at least one prior".into(),
            ));
        }
        Ok(Self { coords })
    }
    /// Dimension of θ.
    #[getter(dim)]
    fn py_dim(&self) -> usize {
        self.coords.len()
    }
    /// One θ per seed: a (len(seeds), dim) array.
    #[pyo3(name = "sample")]
    fn py_sample<'py>(
        &self,
        py: Python<'py>,
        seeds: PyReadonlyArray1<'py, u64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let seeds = seeds.as_slice()?.to_vec();
        let d = self.coords.len();
        let mut out = vec![0.0; seeds.len() * d];
        py.detach(|| {
            for (s, row) in seeds.iter().zip(out.chunks_exact_mut(d)) {
                let mut rng = SimStream::new(*s, 0);
                Prior::sample(self, &mut rng, row)?;
            }
            Ok::<(), SimError>(())
        })
        .map_err(sim_err)?;
        PyArray1::from_vec(py, out).reshape([seeds.len(), d])
    }
    /// Joint log density of each row of `theta` (n, dim).
    fn log_pdf<'py>(
        &self,
        py: Python<'py>,
        theta: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let d = self.coords.len();
        if theta.shape()[1] != d {
            return Err(invalid(
                "theta",
                None,
                format!("theta must have {d} columns"),
            ));
        }
        let t = theta.as_array().iter().copied().collect::<Vec<f64>>();
        let v: Vec<f64> = t.chunks_exact(d).map(|r| self.ln_density(r)).collect();
        Ok(v.into_pyarray(py))
    }
    fn __repr__(&self) -> String {
        format!("Prior(dim={}, {:?})", self.coords.len(), self.coords)
    }
}

// ---------------------------------------------------------------------------------------
// Python callables as library models
// ---------------------------------------------------------------------------------------

/// A prior: ours, or any Python object with `sample(seeds) -> (n, d)` and
/// `log_pdf(theta) -> (n,)`.
pub(crate) enum AnyPrior {
    Native(PyPrior),
    Py {
        obj: Py<PyAny>,
        dim: usize,
        err: RefCell<Option<PyErr>>,
    },
}

/// The user-model error code used to stop a sampler after a Python exception.
const PY_ERROR: SimError = SimError::Model {
    code: 0x5059,
    recoverable: false,
};

impl AnyPrior {
    pub(crate) fn new(ob: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(p) = ob.extract::<PyRef<'_, PyPrior>>() {
            return Ok(Self::Native(p.clone()));
        }
        let py = ob.py();
        let probe = ob.call_method1("sample", (vec![0u64].into_pyarray(py),))?;
        let arr: PyReadonlyArray2<'_, f64> = probe.extract().map_err(|_| {
            invalid(
                "prior",
                None,
                "prior.sample(seeds) must return a 2-D float64 array (len(seeds), dim)".into(),
            )
        })?;
        let dim = arr.shape()[1];
        if arr.shape()[0] != 1 || dim == 0 {
            return Err(invalid(
                "prior",
                None,
                "prior.sample(seeds) must return shape (len(seeds), dim >= 1)".into(),
            ));
        }
        Ok(Self::Py {
            obj: ob.clone().unbind(),
            dim,
            err: RefCell::new(None),
        })
    }
    /// `(dim, mean, sd)` when this is one of our priors with i.i.d. normal coordinates.
    pub(crate) fn iid_normal(&self) -> Option<(usize, f64, f64)> {
        let Self::Native(p) = self else { return None };
        let mut it = p.coords.iter().map(|c| match c {
            Coord::Normal(n) => Some((n.mean(), n.sd())),
            _ => None,
        });
        let first = it.next()??;
        it.all(|x| x == Some(first))
            .then_some((p.coords.len(), first.0, first.1))
    }
    pub(crate) fn take_err(&self) -> Option<PyErr> {
        match self {
            Self::Py { err, .. } => err.borrow_mut().take(),
            Self::Native(_) => None,
        }
    }
}

impl Prior for AnyPrior {
    fn dim(&self) -> usize {
        match self {
            Self::Native(p) => p.coords.len(),
            Self::Py { dim, .. } => *dim,
        }
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        match self {
            Self::Native(p) => Prior::sample(p, rng, out),
            Self::Py { obj, dim, err } => {
                let seed = rng.next_u64();
                Python::attach(|py| {
                    let r = (|| -> PyResult<()> {
                        let a = obj
                            .bind(py)
                            .call_method1("sample", (vec![seed].into_pyarray(py),))?;
                        let a: PyReadonlyArray2<'_, f64> = a.extract()?;
                        let s = a.as_array();
                        if s.shape() != [1, *dim] {
                            return Err(invalid(
                                "prior",
                                None,
                                format!(
                                    "prior.sample returned shape {:?}, expected (1, {dim})",
                                    s.shape()
                                ),
                            ));
                        }
                        for (o, v) in out.iter_mut().zip(s.iter()) {
                            *o = *v;
                        }
                        Ok(())
                    })();
                    r.map_err(|e| {
                        *err.borrow_mut() = Some(e);
                        PY_ERROR
                    })
                })
            }
        }
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        match self {
            Self::Native(p) => p.ln_density(theta),
            Self::Py { obj, dim, err } => Python::attach(|py| {
                let r = (|| -> PyResult<f64> {
                    let t = PyArray1::from_slice(py, theta).reshape([1, *dim])?;
                    let v = obj.bind(py).call_method1("log_pdf", (t,))?;
                    let v: Vec<f64> = v.extract()?;
                    Ok(v.first().copied().unwrap_or(f64::NAN))
                })();
                match r {
                    Ok(v) if !v.is_nan() => v,
                    Ok(_) => f64::NEG_INFINITY,
                    Err(e) => {
                        if err.borrow().is_none() {
                            *err.borrow_mut() = Some(e);
                        }
                        f64::NEG_INFINITY
                    }
                }
            }),
        }
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        self.ln_density(theta).is_finite()
    }
}

/// A Python simulator `f(theta (n, d) float64, seeds (n,) uint64) -> (n, output_dim)`.
pub(crate) struct PySim {
    pub(crate) f: Py<PyAny>,
    pub(crate) param_dim: usize,
    pub(crate) output_dim: usize,
    pub(crate) err: RefCell<Option<PyErr>>,
}

/// [`PySim`] as the library's [`BatchSimulator`]: the samplers' per-row-stream paths
/// (`run_batched`/`step_batched`) hand it whole blocks, so the Python callable is called once
/// per block of θ rows. Row `i`'s seed is the first 64-bit draw of its own stream.
pub(crate) struct PyBatch<'a>(pub(crate) &'a PySim);

impl BatchSimulator for PyBatch<'_> {
    fn batch_param_dim(&self) -> usize {
        self.0.param_dim
    }
    fn batch_output_dim(&self) -> usize {
        self.0.output_dim
    }
    fn simulate_batch<R: Rng>(
        &self,
        thetas: &[f64],
        streams: &mut [R],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        let s = self.0;
        let n = streams.len();
        check_batch(s.param_dim, s.output_dim, n, thetas, out, ok)?;
        if n == 0 {
            return Ok(());
        }
        let seeds: Vec<u64> = streams.iter_mut().map(|r| r.next_u64()).collect();
        Python::attach(|py| {
            let r = (|| -> PyResult<()> {
                let t = PyArray1::from_slice(py, thetas).reshape([n, s.param_dim])?;
                let y = s.f.bind(py).call1((t, seeds.into_pyarray(py)))?;
                let y: PyReadonlyArray2<'_, f64> = y.extract().map_err(|_| {
                    invalid(
                        "simulator",
                        None,
                        "the simulator must return a 2-D float64 array".into(),
                    )
                })?;
                if y.shape() != [n, s.output_dim] {
                    return Err(invalid(
                        "simulator",
                        None,
                        format!(
                            "simulator returned shape {:?}, expected ({n}, {})",
                            y.shape(),
                            s.output_dim
                        ),
                    ));
                }
                match y.as_slice() {
                    Ok(v) => out.copy_from_slice(v),
                    Err(_) => {
                        for (o, v) in out.iter_mut().zip(y.as_array().iter()) {
                            *o = *v;
                        }
                    }
                }
                ok.fill(true);
                Ok(())
            })();
            r.map_err(|e| {
                *s.err.borrow_mut() = Some(e);
                PY_ERROR
            })
        })
    }
}

fn finish<T>(r: Result<T, dpinfer_abc::AbcError>, prior: &AnyPrior, sim: &PySim) -> PyResult<T> {
    if let Some(e) = sim.err.borrow_mut().take() {
        return Err(e);
    }
    if let Some(e) = prior.take_err() {
        return Err(e);
    }
    r.map_err(abc_err)
}

fn observed_vec(observed: PyReadonlyArray1<'_, f64>) -> PyResult<Vec<f64>> {
    let v = observed.as_slice()?.to_vec();
    Euclidean::new(&v).map_err(abc_err)?;
    Ok(v)
}

fn stop_name(r: StopReason) -> &'static str {
    match r {
        StopReason::FinalTolerance => "final_tolerance",
        StopReason::ScheduleExhausted => "schedule_exhausted",
        StopReason::MaxGenerations => "max_generations",
        StopReason::Budget => "budget",
        StopReason::AcceptanceRate => "acceptance_rate",
        StopReason::Observer => "observer",
    }
}

pub(crate) fn to2d<'py>(
    py: Python<'py>,
    v: Vec<f64>,
    d: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let n = v.len().checked_div(d).unwrap_or(0);
    PyArray1::from_vec(py, v).reshape([n, d])
}

/// SMC-ABC (Beaumont et al. 2009 / Del Moral et al. 2012) of `dpinfer-abc` with a Python
/// simulator and Euclidean distance to `observed`. NOT private: it reads the observation
/// without noise. Returns a dict (wrapped by `dpinfer.abc.smc_abc`). Runs
/// `SmcAbc::run_batched`: one stream per particle and generation, the simulator called once
/// per round on all pending particles of a block of `batch_size` (0 = all particles); the
/// result does not depend on `batch_size`. `kernel` names the perturbation kernel
/// (`Perturbation::name`; `kernel_scale` defaults to its `default_scale`), and
/// `first_tolerance = "prior-quantile"` selects `Tolerance::PriorQuantile` (quantile schedule
/// only).
#[pyfunction]
#[pyo3(signature = (prior, simulator, observed, *, particles = 1000, initial_tolerance = f64::INFINITY, quantile = Some(0.5), geometric_factor = None, tolerances = None, final_tolerance = 0.0, max_generations = 20, simulation_budget = 10_000_000, min_acceptance_rate = 0.0, ess_fraction = 0.5, kernel_scale = None, seed = 0, batch_size = 0, kernel = "twice-covariance", first_tolerance = "infinity"))]
#[allow(clippy::too_many_arguments)]
fn smc_abc<'py>(
    py: Python<'py>,
    prior: &Bound<'py, PyAny>,
    simulator: Py<PyAny>,
    observed: PyReadonlyArray1<'py, f64>,
    particles: usize,
    initial_tolerance: f64,
    quantile: Option<f64>,
    geometric_factor: Option<f64>,
    tolerances: Option<Vec<f64>>,
    final_tolerance: f64,
    max_generations: usize,
    simulation_budget: u64,
    min_acceptance_rate: f64,
    ess_fraction: f64,
    kernel_scale: Option<f64>,
    seed: u64,
    batch_size: usize,
    kernel: &str,
    first_tolerance: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let perturbation = Perturbation::from_name(kernel).ok_or_else(|| {
        crate::errors::invalid(
            "kernel",
            None,
            format!(
                "kernel = {kernel:?} is not one of {}",
                Perturbation::ALL
                    .map(|k| format!("{:?}", k.name()))
                    .join(", ")
            ),
        )
    })?;
    let prior_quantile = match first_tolerance {
        "infinity" => false,
        "prior-quantile"
            if tolerances.is_none()
                && geometric_factor.is_none()
                && initial_tolerance == f64::INFINITY =>
        {
            true
        }
        "prior-quantile" => {
            return Err(crate::errors::invalid(
                "first_tolerance",
                None,
                "first_tolerance = \"prior-quantile\" sets generation 0's tolerance of the quantile schedule: leave tolerances, geometric_factor and initial_tolerance unset".to_string(),
            ));
        }
        other => {
            return Err(crate::errors::invalid(
                "first_tolerance",
                None,
                format!("first_tolerance = {other:?} is not \"infinity\" or \"prior-quantile\""),
            ));
        }
    };
    let obs = observed_vec(observed)?;
    let prior = AnyPrior::new(prior)?;
    let sim = PySim {
        f: simulator,
        param_dim: prior.dim(),
        output_dim: obs.len(),
        err: RefCell::new(None),
    };
    let tolerance = match (tolerances, geometric_factor) {
        (Some(list), _) => Tolerance::List(list),
        (None, Some(factor)) => Tolerance::Geometric {
            initial: initial_tolerance,
            factor,
        },
        (None, None) if prior_quantile => Tolerance::PriorQuantile {
            alpha: quantile.unwrap_or(0.5),
        },
        (None, None) => Tolerance::Quantile {
            initial: initial_tolerance,
            alpha: quantile.unwrap_or(0.5),
        },
    };
    let settings = SmcSettings {
        particles,
        tolerance,
        final_tolerance,
        max_generations,
        simulation_budget,
        min_acceptance_rate,
        ess_fraction,
        kernel_scale: kernel_scale.unwrap_or(perturbation.default_scale()),
    };
    let dist = Euclidean::new(&obs).map_err(abc_err)?;
    let mut smc = SmcAbc::new(&prior, PyBatch(&sim), dist, settings)
        .map_err(abc_err)?
        .with_perturbation(perturbation);
    let stop = smc.run_batched(seed, batch_size);
    let stop = finish(stop, &prior, &sim)?;
    let d = smc.dim();
    let out = PyDict::new(py);
    out.set_item("samples", to2d(py, smc.particles().to_vec(), d)?)?;
    out.set_item("weights", smc.weights().to_vec().into_pyarray(py))?;
    out.set_item("distances", smc.distances().to_vec().into_pyarray(py))?;
    out.set_item("stop_reason", stop_name(stop))?;
    out.set_item("simulations", smc.simulations())?;
    let hist = pyo3::types::PyList::empty(py);
    for g in smc.history() {
        let h = PyDict::new(py);
        h.set_item("generation", g.generation)?;
        h.set_item("tolerance", g.tolerance)?;
        h.set_item("simulations", g.simulations)?;
        h.set_item("total_simulations", g.total_simulations)?;
        h.set_item("acceptance_rate", g.acceptance_rate)?;
        h.set_item("ess", g.ess)?;
        h.set_item("resampled", g.resampled)?;
        hist.append(h)?;
    }
    out.set_item("history", hist)?;
    Ok(out)
}

/// Rejection ABC (Pritchard et al. 1999) of `dpinfer-abc` with a Python simulator: accept
/// when the Euclidean distance is ≤ `threshold` (stop after `target` acceptances), or keep
/// the `nearest` closest of `budget` proposals. NOT private. Runs `RejectionAbc::run_batched`:
/// one stream per proposal, the simulator called on blocks of `batch_size` θ rows; the result
/// does not depend on `batch_size`.
#[pyfunction]
#[pyo3(signature = (prior, simulator, observed, *, budget, threshold = None, nearest = None, target = u64::MAX, seed = 0, batch_size = 4096))]
#[allow(clippy::too_many_arguments)]
fn rejection_abc<'py>(
    py: Python<'py>,
    prior: &Bound<'py, PyAny>,
    simulator: Py<PyAny>,
    observed: PyReadonlyArray1<'py, f64>,
    budget: u64,
    threshold: Option<f64>,
    nearest: Option<usize>,
    target: u64,
    seed: u64,
    batch_size: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let obs = observed_vec(observed)?;
    let prior = AnyPrior::new(prior)?;
    let sim = PySim {
        f: simulator,
        param_dim: prior.dim(),
        output_dim: obs.len(),
        err: RefCell::new(None),
    };
    let rule = match (threshold, nearest) {
        (Some(t), None) => Rule::Threshold(t),
        (None, Some(k)) => Rule::Nearest(k),
        _ => {
            return Err(invalid(
                "threshold",
                None,
                "give exactly one of threshold or nearest".into(),
            ));
        }
    };
    let dist = Euclidean::new(&obs).map_err(abc_err)?;
    let mut rej = RejectionAbc::new(
        &prior,
        PyBatch(&sim),
        dist,
        RejectionSettings {
            rule,
            budget,
            target,
        },
    )
    .map_err(abc_err)?;
    let r = rej.run_batched(seed, batch_size);
    finish(r, &prior, &sim)?;
    let out = PyDict::new(py);
    out.set_item("samples", to2d(py, rej.accepted().to_vec(), rej.dim())?)?;
    out.set_item("distances", rej.distances().to_vec().into_pyarray(py))?;
    out.set_item("tolerance", rej.tolerance())?;
    out.set_item("simulations", rej.simulations())?;
    out.set_item("acceptance_rate", rej.acceptance_rate())?;
    Ok(out)
}

/// Euclidean distance of each row of `outputs` (n, k) to `observed` (k,).
#[pyfunction]
fn euclidean_distances<'py>(
    py: Python<'py>,
    outputs: PyReadonlyArray2<'py, f64>,
    observed: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let obs = observed_vec(observed)?;
    if outputs.shape()[1] != obs.len() {
        return Err(invalid(
            "outputs",
            None,
            format!("outputs must have {} columns", obs.len()),
        ));
    }
    let ys: Vec<f64> = outputs.as_array().iter().copied().collect();
    let dist = Euclidean::new(&obs).map_err(abc_err)?;
    let v: Vec<f64> = py.detach(|| {
        ys.chunks_exact(obs.len())
            .map(|y| dist.distance(y))
            .collect()
    });
    Ok(v.into_pyarray(py))
}

/// Public pairs whose "outputs" are the precomputed distances (the private passes only read
/// ρ(Y_t), so a 1-column output holding ρ_t with ρ(y) = y[0] is the same pass).
fn distance_pairs(
    thetas: PyReadonlyArray2<'_, f64>,
    distances: PyReadonlyArray1<'_, f64>,
) -> PyResult<PublicPairs> {
    let d = thetas.shape()[1];
    let th: Vec<f64> = thetas.as_array().iter().copied().collect();
    let ds = distances.as_slice()?.to_vec();
    if thetas.shape()[0] != ds.len() {
        return Err(invalid(
            "distances",
            None,
            "thetas and distances must have the same number of rows".into(),
        ));
    }
    PublicPairs::from_parts(d, 1, th, ds).map_err(abc_err)
}

fn first(y: &[f64]) -> f64 {
    y.first().copied().unwrap_or(f64::INFINITY)
}

/// The caller's distance sensitivity Δ as the library's [`Sensitivity`] (replace-one: these
/// functions return ε and the event, not a claim, so the relation is the caller's to state).
fn declared(sensitivity: f64) -> PyResult<Sensitivity> {
    Sensitivity::declared(sensitivity, Relations::REPLACE_ONE)
        .map_err(|e| invalid("sensitivity", Some(sensitivity), e.to_string()))
}

/// SVT-ABC (ABCDP, Park, Vinaroz & Jitkrittum 2021, Algorithm 1) over public pairs with
/// precomputed distances ρ_t = ρ(Y*, Y_t) to the private observation.
#[pyfunction]
#[pyo3(signature = (thetas, distances, *, epsilon_abc, epsilon_total, c, sensitivity, clip, resample = false, noise_seed = None))]
#[allow(clippy::too_many_arguments)]
fn svt_abc<'py>(
    py: Python<'py>,
    thetas: PyReadonlyArray2<'py, f64>,
    distances: PyReadonlyArray1<'py, f64>,
    epsilon_abc: f64,
    epsilon_total: f64,
    c: u64,
    sensitivity: f64,
    clip: f64,
    resample: bool,
    noise_seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let pairs = distance_pairs(thetas, distances)?;
    let sensitivity = declared(sensitivity)?;
    let settings = SvtAbcSettings {
        epsilon_abc,
        epsilon_total,
        c,
        sensitivity,
        clip,
        resample: if resample {
            Resample::AfterAccept
        } else {
            Resample::Never
        },
    };
    let mut noise = noise_rng(noise_seed)?;
    let mut pass = SvtAbc::new(&pairs, first, settings).map_err(abc_err)?;
    py.detach(|| pass.run(&mut noise)).map_err(abc_err)?;
    let out = PyDict::new(py);
    out.set_item(
        "samples",
        to2d(py, pass.accepted_thetas(), pairs.theta_dim())?,
    )?;
    out.set_item(
        "accepted_indices",
        pass.accepted_indices()
            .iter()
            .map(|&i| i as u64)
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    out.set_item("decisions", pass.indicators().len())?;
    out.set_item("epsilon", pass.epsilon())?;
    out.set_item("event", PyEvent::from_event(&pass.event())?)?;
    out.set_item("noise_scale", pass.noise_scale())?;
    out.set_item("effective_sensitivity", pass.effective_sensitivity())?;
    Ok(out)
}

/// Gaussian-mechanism ABCDP rejection (Park & Jitkrittum, Algorithm 1 / Theorem 3.1) over
/// public pairs with precomputed distances; ε_total over all T decisions.
#[pyfunction]
#[pyo3(signature = (thetas, distances, *, epsilon_abc, epsilon_total, sensitivity, bound, noise_seed = None))]
#[allow(clippy::too_many_arguments)]
fn gaussian_abcdp<'py>(
    py: Python<'py>,
    thetas: PyReadonlyArray2<'py, f64>,
    distances: PyReadonlyArray1<'py, f64>,
    epsilon_abc: f64,
    epsilon_total: f64,
    sensitivity: f64,
    bound: f64,
    noise_seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let pairs = distance_pairs(thetas, distances)?;
    let sensitivity = declared(sensitivity)?;
    let settings = GaussianRejectionSettings {
        epsilon_abc,
        epsilon_total,
        sensitivity,
        bound,
    };
    let mut noise = noise_rng(noise_seed)?;
    let mut pass = GaussianRejectionAbcdp::new(&pairs, first, settings).map_err(abc_err)?;
    py.detach(|| pass.run(&mut noise)).map_err(abc_err)?;
    let idx: Vec<u64> = pass
        .indicators()
        .iter()
        .enumerate()
        .filter(|(_, a)| **a)
        .map(|(i, _)| i as u64)
        .collect();
    let out = PyDict::new(py);
    out.set_item(
        "samples",
        to2d(py, pass.accepted_thetas(), pairs.theta_dim())?,
    )?;
    out.set_item("accepted_indices", idx.into_pyarray(py))?;
    out.set_item("decisions", pass.indicators().len())?;
    out.set_item("epsilon", pass.epsilon())?;
    out.set_item("event", PyEvent::from_event(&pass.event())?)?;
    out.set_item("sigma", pass.sigma())?;
    Ok(out)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPrior>()?;
    m.add_function(wrap_pyfunction!(row_seeds, m)?)?;
    m.add_function(wrap_pyfunction!(smc_abc, m)?)?;
    m.add_function(wrap_pyfunction!(rejection_abc, m)?)?;
    m.add_function(wrap_pyfunction!(euclidean_distances, m)?)?;
    m.add_function(wrap_pyfunction!(svt_abc, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_abcdp, m)?)?;
    Ok(())
}
