//! `dpinfer.mcmc`: random-walk Metropolis–Hastings and the DP penalty sampler of
//! `dpinfer-mcmc` (thesis §3.1; Yildirim & Ermiş 2019) with a Python per-row
//! log-likelihood.

use std::cell::RefCell;

use dpinfer_mcmc::budget::{Accounting, GradientCharging};
use dpinfer_mcmc::model::{GaussianPrior, PriorGradient};
use dpinfer_mcmc::{
    Barker, BarkerPrivacy, BarkerSettings, Hmc, HmcPrivacy, HmcSettings, Penalty, PenaltyPrivacy,
    PenaltySettings, Proposal, Sampler, Trace,
};
use dpinfer_simulators::{Prior, RowGradient, RowLikelihood, SimError, SimStream};
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::abc::AnyPrior;
use crate::errors::{invalid, mcmc as mcmc_err};
use crate::mechanisms::noise_rng;

/// A Python `log_lik(theta (1, d)) -> (n,)` (or `(1, n)`) of per-row log-likelihoods,
/// evaluated once per θ and cached for the chunked requests of the sampler (the current and
/// the proposed θ).
struct PyLik {
    f: Py<PyAny>,
    dim: usize,
    n: usize,
    cache: RefCell<Vec<(Vec<f64>, Vec<f64>)>>,
    err: RefCell<Option<PyErr>>,
}

/// The user-model error used to stop the sampler after a Python exception.
const PY_ERROR: SimError = SimError::Model {
    code: 0x5059,
    recoverable: false,
};

impl PyLik {
    fn eval(&self, theta: &[f64]) -> Result<Vec<f64>, SimError> {
        Python::attach(|py| {
            let r = (|| -> PyResult<Vec<f64>> {
                let t = PyArray1::from_slice(py, theta).reshape([1, self.dim])?;
                let v = self.f.bind(py).call1((t,))?;
                let a: numpy::PyReadonlyArrayDyn<'_, f64> = v.extract().map_err(|_| {
                    invalid(
                        "log_lik",
                        None,
                        "log_lik must return a float64 array of n values".into(),
                    )
                })?;
                let v: Vec<f64> = a.as_array().iter().copied().collect();
                if v.len() != self.n {
                    return Err(invalid(
                        "log_lik",
                        None,
                        format!(
                            "log_lik returned {} values, expected n = {}",
                            v.len(),
                            self.n
                        ),
                    ));
                }
                Ok(v)
            })();
            r.map_err(|e| {
                *self.err.borrow_mut() = Some(e);
                PY_ERROR
            })
        })
    }
}

impl RowLikelihood for PyLik {
    fn dim(&self) -> usize {
        self.dim
    }
    fn n_rows(&self) -> usize {
        self.n
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        if theta.len() != self.dim || first + out.len() > self.n {
            return Err(SimError::DimensionMismatch {
                what: "rows",
                expected: self.n,
                got: first + out.len(),
            });
        }
        let hit = self.cache.borrow().iter().position(|(t, _)| t == theta);
        let idx = match hit {
            Some(i) => i,
            None => {
                let v = self.eval(theta)?;
                let mut c = self.cache.borrow_mut();
                if c.len() >= 2 {
                    c.remove(0);
                }
                c.push((theta.to_vec(), v));
                c.len() - 1
            }
        };
        out.copy_from_slice(&self.cache.borrow()[idx].1[first..first + out.len()]);
        Ok(())
    }
}

fn proposal(kind: &str, scale: Vec<f64>) -> PyResult<Proposal> {
    match kind {
        "gaussian" => Ok(Proposal::Gaussian { scale }),
        "one_coordinate" => Ok(Proposal::OneCoordinate { scale }),
        "guided" => Ok(Proposal::GuidedRandomWalk { scale }),
        _ => Err(invalid(
            "proposal",
            None,
            "proposal must be 'gaussian', 'one_coordinate' or 'guided'".into(),
        )),
    }
}

/// Random-walk MH (exact) or, with `epsilon`/`delta`, the DP penalty algorithm on
/// `p(X|θ)^T p(θ)` with per-row log-likelihoods `log_lik(theta (1, d)) -> (n,)`.
#[pyfunction]
#[pyo3(signature = (prior, log_lik, n, init, *, iterations, step_size, proposal_kind = "gaussian", temperature = 1.0, clip = None, tau = None, n_exponent = 0.5, epsilon = None, delta = None, accounting = "pld", burn_in = 0, seed = 0, noise_seed = None))]
#[allow(clippy::too_many_arguments)]
fn penalty<'py>(
    py: Python<'py>,
    prior: &Bound<'py, PyAny>,
    log_lik: Py<PyAny>,
    n: usize,
    init: PyReadonlyArray1<'py, f64>,
    iterations: u64,
    step_size: Vec<f64>,
    proposal_kind: &str,
    temperature: f64,
    clip: Option<f64>,
    tau: Option<f64>,
    n_exponent: f64,
    epsilon: Option<f64>,
    delta: Option<f64>,
    accounting: &str,
    burn_in: u64,
    seed: u64,
    noise_seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let prior = AnyPrior::new(prior)?;
    let init = init.as_slice()?.to_vec();
    let lik = PyLik {
        f: log_lik,
        dim: init.len(),
        n,
        cache: RefCell::new(Vec::new()),
        err: RefCell::new(None),
    };
    let settings = PenaltySettings {
        proposal: proposal(proposal_kind, step_size)?,
        temperature,
    };
    let mut rng = SimStream::new(seed, 0);
    let mut trace = Trace::with_burn_in(burn_in);
    let out = PyDict::new(py);
    match (epsilon, delta) {
        (None, None) => {
            let mut s = Penalty::exact(&prior, &lik, settings, &init).map_err(mcmc_err)?;
            if let Some(c) = clip {
                s = s.with_clip(c).map_err(mcmc_err)?;
            }
            let r = s.run(iterations, &mut rng, &mut trace);
            check(r, &lik, &prior)?;
            out.set_item("epsilon", py.None())?;
        }
        (Some(eps), Some(del)) => {
            let acct = match accounting {
                "pld" => Accounting::Pld,
                "zcdp" => Accounting::Zcdp,
                _ => {
                    return Err(invalid(
                        "accounting",
                        None,
                        "accounting must be 'pld' or 'zcdp'".into(),
                    ));
                }
            };
            let (Some(c), Some(t)) = (clip, tau) else {
                return Err(invalid(
                    "clip",
                    None,
                    "the DP penalty needs clip and tau".into(),
                ));
            };
            let privacy = PenaltyPrivacy {
                clip: c,
                tau: t,
                n_exponent,
                epsilon: eps,
                delta: del,
                accounting: acct,
            };
            let noise = noise_rng(noise_seed)?;
            let mut s = Penalty::private(&prior, &lik, settings, privacy, &init, noise)
                .map_err(mcmc_err)?;
            let allowed = s.max_iterations().unwrap_or(0);
            // Never run past the budget: the sampler would refuse the step anyway.
            let r = s.run(iterations.min(allowed), &mut rng, &mut trace);
            check(r, &lik, &prior)?;
            let spent = s.epsilon_spent().map_err(mcmc_err)?;
            out.set_item("epsilon", spent.map(|x| x.0))?;
            out.set_item("delta", spent.map(|x| x.1))?;
            out.set_item("max_iterations", allowed)?;
        }
        _ => {
            return Err(invalid(
                "epsilon",
                None,
                "give both epsilon and delta (private) or neither (exact)".into(),
            ));
        }
    }
    collect(py, &out, &trace, init.len())?;
    Ok(out)
}

fn check(r: Result<(), dpinfer_mcmc::McmcError>, lik: &PyLik, prior: &AnyPrior) -> PyResult<()> {
    if let Some(e) = lik.err.borrow_mut().take() {
        return Err(e);
    }
    if let Some(e) = prior.take_err() {
        return Err(e);
    }
    r.map_err(mcmc_err)
}

fn collect<'py>(
    py: Python<'py>,
    out: &Bound<'py, PyDict>,
    trace: &Trace,
    d: usize,
) -> PyResult<()> {
    let m = trace.draws.len() / d.max(1);
    out.set_item(
        "samples",
        PyArray1::from_vec(py, trace.draws.clone()).reshape([m, d])?,
    )?;
    out.set_item("iterations", trace.iterations)?;
    out.set_item("acceptance_rate", trace.acceptance_rate())?;
    out.set_item("clip_fraction", trace.clip_fraction())?;
    out.set_item("noise_sd", trace.noise_sd.clone().into_pyarray(py))?;
    Ok(())
}

/// The Barker test (exact), or with `batch`/`epsilon`/`delta` the DP Barker sampler
/// (Heikkilä et al. 2019; thesis §3.2, Theorem 8): batches of `batch` rows without
/// replacement, tempered per-row ratios clipped to √|B|/n₀, total noise variance 2.
#[pyfunction]
#[pyo3(signature = (prior, log_lik, n, init, *, iterations, step_size, proposal_kind = "gaussian", temperature = 1.0, batch = None, epsilon = None, delta = None, burn_in = 0, seed = 0, noise_seed = None))]
#[allow(clippy::too_many_arguments)]
fn barker<'py>(
    py: Python<'py>,
    prior: &Bound<'py, PyAny>,
    log_lik: Py<PyAny>,
    n: usize,
    init: PyReadonlyArray1<'py, f64>,
    iterations: u64,
    step_size: Vec<f64>,
    proposal_kind: &str,
    temperature: f64,
    batch: Option<usize>,
    epsilon: Option<f64>,
    delta: Option<f64>,
    burn_in: u64,
    seed: u64,
    noise_seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let prior = AnyPrior::new(prior)?;
    let init = init.as_slice()?.to_vec();
    let lik = PyLik {
        f: log_lik,
        dim: init.len(),
        n,
        cache: RefCell::new(Vec::new()),
        err: RefCell::new(None),
    };
    let settings = BarkerSettings {
        proposal: proposal(proposal_kind, step_size)?,
        temperature,
    };
    let mut rng = SimStream::new(seed, 0);
    let mut trace = Trace::with_burn_in(burn_in);
    let out = PyDict::new(py);
    match (batch, epsilon, delta) {
        (None, None, None) => {
            let mut s = Barker::exact(&prior, &lik, settings, &init).map_err(mcmc_err)?;
            let r = s.run(iterations, &mut rng, &mut trace);
            check(r, &lik, &prior)?;
            out.set_item("epsilon", py.None())?;
        }
        (Some(b), Some(eps), Some(del)) => {
            let privacy = BarkerPrivacy {
                batch: b,
                epsilon: eps,
                delta: del,
            };
            let noise = noise_rng(noise_seed)?;
            let mut s =
                Barker::private(&prior, &lik, settings, privacy, &init, noise).map_err(mcmc_err)?;
            let allowed = s.max_iterations().unwrap_or(0);
            let r = s.run(iterations.min(allowed), &mut rng, &mut trace);
            check(r, &lik, &prior)?;
            let spent = s.epsilon_spent().map_err(mcmc_err)?;
            out.set_item("epsilon", spent.map(|x| x.0))?;
            out.set_item("delta", spent.map(|x| x.1))?;
            out.set_item("max_iterations", allowed)?;
        }
        _ => {
            return Err(invalid(
                "epsilon",
                None,
                "give batch, epsilon and delta (private) or none (exact)".into(),
            ));
        }
    }
    collect(py, &out, &trace, init.len())?;
    Ok(out)
}

/// The prior of HMC: the library's i.i.d. Gaussian prior (from `priors.Normal` with equal
/// parameters), or a Python prior that also has `grad_log_pdf(theta (1, d)) -> (d,)`.
enum GradPrior {
    Gauss(GaussianPrior),
    Py(AnyPrior, Py<PyAny>),
}

impl GradPrior {
    fn new(ob: &Bound<'_, PyAny>) -> PyResult<Self> {
        let any = AnyPrior::new(ob)?;
        if let Some((d, m, s)) = any.iid_normal() {
            return Ok(Self::Gauss(GaussianPrior::new(d, m, s).map_err(mcmc_err)?));
        }
        if matches!(any, AnyPrior::Py { .. }) && ob.hasattr("grad_log_pdf")? {
            return Ok(Self::Py(any, ob.clone().unbind()));
        }
        Err(invalid(
            "prior",
            None,
            "HMC needs a prior gradient: use priors.Normal(mean, sd) with one mean and sd, or a \
             prior object with sample, log_pdf and grad_log_pdf"
                .into(),
        ))
    }
    fn take_err(&self) -> Option<PyErr> {
        match self {
            Self::Py(a, _) => a.take_err(),
            Self::Gauss(_) => None,
        }
    }
}

impl Prior for GradPrior {
    fn dim(&self) -> usize {
        match self {
            Self::Gauss(g) => g.dim(),
            Self::Py(a, _) => a.dim(),
        }
    }
    fn sample<R: rand_core::Rng + ?Sized>(
        &self,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        match self {
            Self::Gauss(g) => g.sample(rng, out),
            Self::Py(a, _) => a.sample(rng, out),
        }
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        match self {
            Self::Gauss(g) => g.ln_density(theta),
            Self::Py(a, _) => a.ln_density(theta),
        }
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        match self {
            Self::Gauss(g) => g.in_support(theta),
            Self::Py(a, _) => a.in_support(theta),
        }
    }
}

impl PriorGradient for GradPrior {
    fn grad_ln_density(&self, theta: &[f64], out: &mut [f64]) {
        match self {
            Self::Gauss(g) => g.grad_ln_density(theta, out),
            Self::Py(_, obj) => Python::attach(|py| {
                let r = (|| -> PyResult<Vec<f64>> {
                    let t = PyArray1::from_slice(py, theta).reshape([1, theta.len()])?;
                    let v = obj.bind(py).call_method1("grad_log_pdf", (t,))?;
                    let a: numpy::PyReadonlyArrayDyn<'_, f64> = v.extract()?;
                    Ok(a.as_array().iter().copied().collect())
                })();
                match r {
                    Ok(v) if v.len() == out.len() => out.copy_from_slice(&v),
                    // A failing or malformed gradient becomes NaN: the leapfrog trajectory
                    // is then rejected by the sampler (never a crash).
                    _ => out.iter_mut().for_each(|o| *o = f64::NAN),
                }
            }),
        }
    }
}

/// Per-row gradients `grad_log_lik(theta (1, d)) -> (n, d)`, cached for the current θ.
struct PyGrad<'a> {
    lik: &'a PyLik,
    f: Py<PyAny>,
    cache: RefCell<Option<(Vec<f64>, Vec<f64>)>>,
}

impl RowLikelihood for PyGrad<'_> {
    fn dim(&self) -> usize {
        self.lik.dim
    }
    fn n_rows(&self) -> usize {
        self.lik.n
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        self.lik.row_log_lik(theta, first, out)
    }
}

impl RowGradient for PyGrad<'_> {
    fn row_grad(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        let d = self.lik.dim;
        if theta.len() != d || !out.len().is_multiple_of(d) || first + out.len() / d > self.lik.n {
            return Err(SimError::DimensionMismatch {
                what: "rows",
                expected: self.lik.n,
                got: first + out.len() / d.max(1),
            });
        }
        let fresh = !matches!(&*self.cache.borrow(), Some((t, _)) if t == theta);
        if fresh {
            let v = Python::attach(|py| {
                let r = (|| -> PyResult<Vec<f64>> {
                    let t = PyArray1::from_slice(py, theta).reshape([1, d])?;
                    let v = self.f.bind(py).call1((t,))?;
                    let a: numpy::PyReadonlyArrayDyn<'_, f64> = v.extract().map_err(|_| {
                        invalid(
                            "grad_log_lik",
                            None,
                            "grad_log_lik must return a float64 array (n, d)".into(),
                        )
                    })?;
                    let v: Vec<f64> = a.as_array().iter().copied().collect();
                    if v.len() != self.lik.n * d {
                        return Err(invalid(
                            "grad_log_lik",
                            None,
                            format!(
                                "grad_log_lik returned {} values, expected n·d = {}",
                                v.len(),
                                self.lik.n * d
                            ),
                        ));
                    }
                    Ok(v)
                })();
                r.map_err(|e| {
                    *self.lik.err.borrow_mut() = Some(e);
                    PY_ERROR
                })
            })?;
            *self.cache.borrow_mut() = Some((theta.to_vec(), v));
        }
        let c = self.cache.borrow();
        let Some((_, v)) = c.as_ref() else {
            return Err(PY_ERROR);
        };
        out.copy_from_slice(&v[first * d..first * d + out.len()]);
        Ok(())
    }
}

/// HMC (exact), or with `epsilon`/`delta` DP HMC (thesis §5.2, Algorithm 3): clipped,
/// noisy per-row log-likelihood ratios and gradients.
#[pyfunction]
#[pyo3(signature = (prior, log_lik, grad_log_lik, n, init, *, iterations, step_size, leapfrog_steps, inv_mass = None, temperature = 1.0, ratio_clip = None, grad_clip = None, tau_l = None, tau_g = None, epsilon = None, delta = None, accounting = "pld", reuse_gradient = true, burn_in = 0, seed = 0, noise_seed = None))]
#[allow(clippy::too_many_arguments)]
fn hmc<'py>(
    py: Python<'py>,
    prior: &Bound<'py, PyAny>,
    log_lik: Py<PyAny>,
    grad_log_lik: Py<PyAny>,
    n: usize,
    init: PyReadonlyArray1<'py, f64>,
    iterations: u64,
    step_size: f64,
    leapfrog_steps: u32,
    inv_mass: Option<Vec<f64>>,
    temperature: f64,
    ratio_clip: Option<f64>,
    grad_clip: Option<f64>,
    tau_l: Option<f64>,
    tau_g: Option<f64>,
    epsilon: Option<f64>,
    delta: Option<f64>,
    accounting: &str,
    reuse_gradient: bool,
    burn_in: u64,
    seed: u64,
    noise_seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let prior = GradPrior::new(prior)?;
    let init = init.as_slice()?.to_vec();
    let d = init.len();
    let base = PyLik {
        f: log_lik,
        dim: d,
        n,
        cache: RefCell::new(Vec::new()),
        err: RefCell::new(None),
    };
    let lik = PyGrad {
        lik: &base,
        f: grad_log_lik,
        cache: RefCell::new(None),
    };
    let settings = HmcSettings {
        step_size,
        leapfrog_steps,
        inv_mass: inv_mass.unwrap_or_else(|| vec![1.0; d]),
        temperature,
    };
    let mut rng = SimStream::new(seed, 0);
    let mut trace = Trace::with_burn_in(burn_in);
    let out = PyDict::new(py);
    let done = |r: Result<(), dpinfer_mcmc::McmcError>| -> PyResult<()> {
        if let Some(e) = base.err.borrow_mut().take() {
            return Err(e);
        }
        if let Some(e) = prior.take_err() {
            return Err(e);
        }
        r.map_err(mcmc_err)
    };
    match (epsilon, delta) {
        (None, None) => {
            let mut s = Hmc::exact(&prior, &lik, settings, &init).map_err(mcmc_err)?;
            let r = s.run(iterations, &mut rng, &mut trace);
            done(r)?;
            out.set_item("epsilon", py.None())?;
        }
        (Some(eps), Some(del)) => {
            let acct = match accounting {
                "pld" => Accounting::Pld,
                "zcdp" => Accounting::Zcdp,
                _ => {
                    return Err(invalid(
                        "accounting",
                        None,
                        "accounting must be 'pld' or 'zcdp'".into(),
                    ));
                }
            };
            let (Some(rc), Some(gc), Some(tl), Some(tg)) = (ratio_clip, grad_clip, tau_l, tau_g)
            else {
                return Err(invalid(
                    "ratio_clip",
                    None,
                    "DP HMC needs ratio_clip, grad_clip, tau_l and tau_g".into(),
                ));
            };
            let privacy = HmcPrivacy {
                ratio_clip: rc,
                grad_clip: gc,
                tau_l: tl,
                tau_g: tg,
                epsilon: eps,
                delta: del,
                accounting: acct,
                charging: if reuse_gradient {
                    GradientCharging::Reuse
                } else {
                    GradientCharging::Fresh
                },
            };
            let noise = noise_rng(noise_seed)?;
            let mut s =
                Hmc::private(&prior, &lik, settings, privacy, &init, noise).map_err(mcmc_err)?;
            let allowed = s.max_iterations().unwrap_or(0);
            let r = s.run(iterations.min(allowed), &mut rng, &mut trace);
            done(r)?;
            let spent = s.epsilon_spent().map_err(mcmc_err)?;
            out.set_item("epsilon", spent.map(|x| x.0))?;
            out.set_item("delta", spent.map(|x| x.1))?;
            out.set_item("max_iterations", allowed)?;
        }
        _ => {
            return Err(invalid(
                "epsilon",
                None,
                "give both epsilon and delta (private) or neither (exact)".into(),
            ));
        }
    }
    collect(py, &out, &trace, d)?;
    Ok(out)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(penalty, m)?)?;
    m.add_function(wrap_pyfunction!(barker, m)?)?;
    m.add_function(wrap_pyfunction!(hmc, m)?)?;
    Ok(())
}

impl RowLikelihood for &PyLik {
    fn dim(&self) -> usize {
        self.dim
    }
    fn n_rows(&self) -> usize {
        self.n
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        (**self).row_log_lik(theta, first, out)
    }
}

impl PriorGradient for &GradPrior {
    fn grad_ln_density(&self, theta: &[f64], out: &mut [f64]) {
        (*self).grad_ln_density(theta, out);
    }
}

impl RowLikelihood for &PyGrad<'_> {
    fn dim(&self) -> usize {
        self.lik.dim
    }
    fn n_rows(&self) -> usize {
        self.lik.n
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        self.lik.row_log_lik(theta, first, out)
    }
}

impl RowGradient for &PyGrad<'_> {
    fn row_grad(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        (*self).row_grad(theta, first, out)
    }
}
