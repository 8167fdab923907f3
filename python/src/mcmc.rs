//! `dpinfer.mcmc`: the samplers of `dpinfer-mcmc` (random-walk MH with optional clipping,
//! DP penalty, Barker, DP Barker, HMC, DP HMC) on a Python per-row log-likelihood.
//!
//! A thin front end: each function turns its keyword arguments into a library
//! [`Kernel`] and [`RunSettings`] and calls [`Run`], which owns the chain loop, the iteration
//! cap from the budget, burn-in, the privacy claim and the diagnostics. This file only adapts
//! the Python callables (shared, cloneable, cached per θ) and maps the output to a dict.

use std::cell::RefCell;
use std::rc::Rc;

use chacha20::ChaCha20Rng;
use dpinfer_mcmc::McmcError;
use dpinfer_mcmc::budget::{Accounting, GradientCharging};
use dpinfer_mcmc::model::{GaussianPrior, PriorGradient};
use dpinfer_mcmc::run::{
    DpBarker, DpHmc, DpPenalty, Kernel, Leapfrog, Run, RunOutput, RunSettings, Scale, Target, Walk,
    WalkKind,
};
use dpinfer_simulators::{Prior, RowGradient, RowLikelihood, SimError};
use numpy::PyReadonlyArray1;
use numpy::{IntoPyArray, PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::abc::AnyPrior;
use crate::errors::{invalid, mcmc as mcmc_err};
use crate::mechanisms::noise_rng;

/// The user-model error used to stop the sampler after a Python exception.
const PY_ERROR: SimError = SimError::Model {
    code: 0x5059,
    recoverable: false,
};

/// The first Python exception a callback raised during a run (it wins over the library
/// error it caused).
type ErrSlot = Rc<RefCell<Option<PyErr>>>;

/// Values of a callback at a θ: `(θ, values)`.
type Cached = (Vec<f64>, Vec<f64>);

fn keep(slot: &ErrSlot, e: PyErr) -> SimError {
    let mut s = slot.borrow_mut();
    if s.is_none() {
        *s = Some(e);
    }
    PY_ERROR
}

/// Calls `f(theta (1, d))` and reads a float64 array of `len` values.
fn call_array(
    f: &Py<PyAny>,
    theta: &[f64],
    len: usize,
    name: &str,
    shape: &str,
) -> PyResult<Vec<f64>> {
    Python::attach(|py| {
        let t = PyArray1::from_slice(py, theta).reshape([1, theta.len()])?;
        let v = f.bind(py).call1((t,))?;
        let a: numpy::PyReadonlyArrayDyn<'_, f64> = v.extract().map_err(|_| {
            invalid(
                name,
                None,
                format!("{name} must return a float64 array {shape}"),
            )
        })?;
        let v: Vec<f64> = a.as_array().iter().copied().collect();
        if v.len() != len {
            return Err(invalid(
                name,
                None,
                format!(
                    "{name} returned {} values, expected {shape} = {len}",
                    v.len()
                ),
            ));
        }
        Ok(v)
    })
}

/// A Python `log_lik(theta (1, d)) -> (n,)` (or `(1, n)`) of per-row log-likelihoods,
/// evaluated once per θ and cached (the current and the proposed θ) for the sampler's
/// chunked requests. Cloning shares the callable, the cache and the error slot.
#[derive(Clone)]
struct PyLik {
    f: Rc<Py<PyAny>>,
    dim: usize,
    n: usize,
    cache: Rc<RefCell<Vec<Cached>>>,
    err: ErrSlot,
}

impl PyLik {
    fn new(f: Py<PyAny>, dim: usize, n: usize) -> Self {
        Self {
            f: Rc::new(f),
            dim,
            n,
            cache: Rc::default(),
            err: Rc::default(),
        }
    }
}

fn check_rows(theta: &[f64], d: usize, n: usize, end: usize) -> Result<(), SimError> {
    if theta.len() != d || end > n {
        return Err(SimError::DimensionMismatch {
            what: "rows",
            expected: n,
            got: end,
        });
    }
    Ok(())
}

impl RowLikelihood for PyLik {
    fn dim(&self) -> usize {
        self.dim
    }
    fn n_rows(&self) -> usize {
        self.n
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        check_rows(theta, self.dim, self.n, first + out.len())?;
        let hit = self.cache.borrow().iter().position(|(t, _)| t == theta);
        let idx = match hit {
            Some(i) => i,
            None => {
                let v = call_array(&self.f, theta, self.n, "log_lik", "(n,)")
                    .map_err(|e| keep(&self.err, e))?;
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

/// [`PyLik`] with per-row gradients `grad_log_lik(theta (1, d)) -> (n, d)`, cached for the
/// last θ.
#[derive(Clone)]
struct PyGrad {
    lik: PyLik,
    f: Rc<Py<PyAny>>,
    cache: Rc<RefCell<Option<Cached>>>,
}

impl RowLikelihood for PyGrad {
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

impl RowGradient for PyGrad {
    fn row_grad(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        let (d, n) = (self.lik.dim, self.lik.n);
        if !out.len().is_multiple_of(d) {
            return Err(SimError::DimensionMismatch {
                what: "rows",
                expected: n,
                got: first + out.len() / d.max(1),
            });
        }
        check_rows(theta, d, n, first + out.len() / d)?;
        let fresh = !matches!(&*self.cache.borrow(), Some((t, _)) if t == theta);
        if fresh {
            let v = call_array(&self.f, theta, n * d, "grad_log_lik", "(n, d)")
                .map_err(|e| keep(&self.lik.err, e))?;
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

/// A prior of `dpinfer.priors` or a Python object, shared by the run's chains.
#[derive(Clone)]
struct SharedPrior(Rc<AnyPrior>);

impl Prior for SharedPrior {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn sample<R: rand_core::Rng + ?Sized>(
        &self,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        self.0.sample(rng, out)
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        self.0.ln_density(theta)
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        self.0.in_support(theta)
    }
}

/// The prior of HMC: the library's i.i.d. Gaussian prior (from `priors.Normal` with equal
/// parameters), or a Python prior that also has `grad_log_pdf(theta (1, d)) -> (d,)`.
#[derive(Clone)]
enum GradPrior {
    Gauss(GaussianPrior),
    Py(SharedPrior, Rc<Py<PyAny>>),
}

impl GradPrior {
    fn new(ob: &Bound<'_, PyAny>) -> PyResult<Self> {
        let any = AnyPrior::new(ob)?;
        if let Some((d, m, s)) = any.iid_normal() {
            return Ok(Self::Gauss(GaussianPrior::new(d, m, s).map_err(mcmc_err)?));
        }
        if matches!(any, AnyPrior::Py { .. }) && ob.hasattr("grad_log_pdf")? {
            return Ok(Self::Py(
                SharedPrior(Rc::new(any)),
                Rc::new(ob.clone().unbind()),
            ));
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
            Self::Py(a, _) => a.0.take_err(),
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

fn walk(kind: &str, scale: Vec<f64>, temperature: f64) -> PyResult<Walk> {
    let kind = match kind {
        "gaussian" => WalkKind::Gaussian,
        "one_coordinate" => WalkKind::OneCoordinate,
        "guided" => WalkKind::Guided,
        _ => {
            return Err(invalid(
                "proposal",
                None,
                "proposal must be 'gaussian', 'one_coordinate' or 'guided'".into(),
            ));
        }
    };
    Ok(Walk {
        scale: Scale::PerCoordinate(scale),
        kind,
        temperature,
    })
}

fn accounting(name: &str) -> PyResult<Accounting> {
    Accounting::from_name(name).ok_or_else(|| {
        invalid(
            "accounting",
            None,
            "accounting must be 'pld' or 'zcdp'".into(),
        )
    })
}

/// The (ε, δ) target: both given (private), neither (exact), else an error.
fn target(epsilon: Option<f64>, delta: Option<f64>) -> PyResult<Option<Target>> {
    match (epsilon, delta) {
        (None, None) => Ok(None),
        (Some(epsilon), Some(delta)) => Ok(Some(Target { epsilon, delta })),
        _ => Err(invalid(
            "epsilon",
            None,
            "give both epsilon and delta (private) or neither (exact)".into(),
        )),
    }
}

/// The chain keys every sampler shares: iterations per chain, the caller's burn-in (0 by
/// default in Python), the chain count, the public seed; one segment (Python shows no
/// progress).
struct Chain {
    iterations: u64,
    burn_in: u64,
    chains: usize,
    seed: u64,
    noise_seed: Option<u64>,
}

impl Chain {
    fn settings(&self) -> RunSettings {
        RunSettings {
            iterations: self.iterations,
            burn_in: Some(self.burn_in),
            chains: self.chains,
            seed: self.seed,
            segments: 1,
        }
    }
    /// One noise CSPRNG per chain for a private kernel (each seeded from the OS, or chain `i`
    /// from the fixed `noise_seed + i`), none otherwise.
    fn noise(&self, kernel: &Kernel) -> PyResult<Vec<ChaCha20Rng>> {
        if !kernel.is_private() {
            return Ok(Vec::new());
        }
        (0..self.chains as u64)
            .map(|i| noise_rng(self.noise_seed.map(|s| s.wrapping_add(i))))
            .collect()
    }
}

/// Runs `kernel` on a model without gradients through [`Run::without_gradient`].
fn run_plain(
    kernel: &Kernel,
    prior: &Bound<'_, PyAny>,
    lik: &PyLik,
    init: &[f64],
    chain: &Chain,
) -> PyResult<RunOutput> {
    let prior = SharedPrior(Rc::new(AnyPrior::new(prior)?));
    let noise = chain.noise(kernel)?;
    let r = Run::without_gradient(
        prior.clone(),
        lik.clone(),
        init,
        kernel,
        &chain.settings(),
        noise,
    )
    .and_then(|run| run.run(&()));
    settle(r, &lik.err, || prior.0.take_err())
}

/// Runs a gradient kernel (HMC, DP HMC) through [`Run::new`].
fn run_grad(
    kernel: &Kernel,
    prior: &GradPrior,
    lik: &PyGrad,
    init: &[f64],
    chain: &Chain,
) -> PyResult<RunOutput> {
    let noise = chain.noise(kernel)?;
    let r = Run::new(
        prior.clone(),
        lik.clone(),
        init,
        kernel,
        &chain.settings(),
        noise,
    )
    .and_then(|run| run.run(&()));
    settle(r, &lik.lik.err, || prior.take_err())
}

/// A Python exception raised by a callback wins over the library error it caused.
fn settle(
    r: Result<RunOutput, McmcError>,
    lik_err: &ErrSlot,
    prior_err: impl FnOnce() -> Option<PyErr>,
) -> PyResult<RunOutput> {
    if let Some(e) = lik_err.borrow_mut().take() {
        return Err(e);
    }
    if let Some(e) = prior_err() {
        return Err(e);
    }
    r.map_err(mcmc_err)
}

/// The result dict: the kept draws of every chain (chain 0 first) with each draw's chain
/// index, the counters summed over the chains (acceptance and clip rates pooled), the noise
/// sd of every iteration (chain after chain), the (ε, δ) the run spent and the iterations
/// the budget allowed over all chains (private kernels), the run's privacy claim, and per
/// coordinate the library's bulk ESS and split-R̂ (over the chains; over the two halves of
/// one chain).
fn output<'py>(py: Python<'py>, out: &RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let dim = out.traces.first().map_or(1, |t| t.dim.max(1));
    let mut draws = Vec::new();
    let mut chain = Vec::new();
    let mut noise_sd = Vec::new();
    let (mut accepted, mut steps, mut evaluated, mut clipped) = (0u64, 0u64, 0u64, 0u64);
    for (i, t) in out.traces.iter().enumerate() {
        draws.extend_from_slice(&t.draws);
        chain.extend(std::iter::repeat_n(i as u64, t.len()));
        noise_sd.extend_from_slice(&t.noise_sd);
        accepted += t.accepted;
        steps += t.iterations;
        evaluated += t.ratios.0;
        clipped += t.ratios.1;
    }
    let m = draws.len() / dim;
    d.set_item("samples", PyArray1::from_vec(py, draws).reshape([m, dim])?)?;
    d.set_item("chain", chain.into_pyarray(py))?;
    d.set_item("iterations", out.iterations.iter().sum::<u64>())?;
    d.set_item("chain_iterations", out.iterations.clone())?;
    #[allow(clippy::cast_precision_loss)]
    let rate = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    d.set_item("acceptance_rate", rate(accepted, steps))?;
    d.set_item("clip_fraction", rate(clipped, evaluated))?;
    d.set_item("noise_sd", noise_sd.into_pyarray(py))?;
    let (ess, rhat): (Vec<f64>, Vec<f64>) = out.diagnostics().into_iter().unzip();
    d.set_item("ess", ess.into_pyarray(py))?;
    d.set_item("rhat", rhat.into_pyarray(py))?;
    d.set_item("epsilon", out.spent.map(|s| s.0))?;
    d.set_item("delta", out.spent.map(|s| s.1))?;
    d.set_item("max_iterations", out.allowed)?;
    if let Some(c) = &out.claim {
        d.set_item("claim", c.to_string())?;
        d.set_item("claim_epsilon", c.epsilon())?;
        d.set_item("accountant", c.accountant.name())?;
        d.set_item("relation", c.relation.name())?;
    }
    Ok(d)
}

/// Random-walk MH (exact, optionally with per-row clipping) or, with `epsilon`/`delta`, the
/// DP penalty algorithm on `p(X|θ)^T p(θ)` with per-row log-likelihoods
/// `log_lik(theta (1, d)) -> (n,)`.
#[pyfunction]
#[pyo3(signature = (prior, log_lik, n, init, *, iterations, step_size, proposal_kind = "gaussian", temperature = 1.0, clip = None, tau = None, n_exponent = 0.5, epsilon = None, delta = None, accounting = "pld", burn_in = 0, chains = 1, seed = 0, noise_seed = None))]
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
    chains: usize,
    seed: u64,
    noise_seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let init = init.as_slice()?.to_vec();
    let lik = PyLik::new(log_lik, init.len(), n);
    let walk = walk(proposal_kind, step_size, temperature)?;
    let kernel = match target(epsilon, delta)? {
        None => match clip {
            None => Kernel::Rwmh(walk),
            Some(clip) => Kernel::ClippedRwmh { walk, clip },
        },
        Some(target) => {
            let accounting = self::accounting(accounting)?;
            let (Some(clip), Some(tau)) = (clip, tau) else {
                return Err(invalid(
                    "clip",
                    None,
                    "the DP penalty needs clip and tau".into(),
                ));
            };
            Kernel::DpPenalty(DpPenalty {
                walk,
                clip,
                tau,
                n_exponent,
                accounting,
                target,
            })
        }
    };
    let chain = Chain {
        iterations,
        burn_in,
        chains,
        seed,
        noise_seed,
    };
    output(py, &run_plain(&kernel, prior, &lik, &init, &chain)?)
}

/// The Barker test (exact), or with `batch`/`epsilon`/`delta` the DP Barker sampler
/// (Heikkilä et al. 2019; thesis §3.2, Theorem 8): batches of `batch` rows without
/// replacement, tempered per-row ratios clipped to √|B|/n₀, total noise variance 2.
#[pyfunction]
#[pyo3(signature = (prior, log_lik, n, init, *, iterations, step_size, proposal_kind = "gaussian", temperature = 1.0, batch = None, epsilon = None, delta = None, burn_in = 0, chains = 1, seed = 0, noise_seed = None))]
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
    chains: usize,
    seed: u64,
    noise_seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let init = init.as_slice()?.to_vec();
    let lik = PyLik::new(log_lik, init.len(), n);
    let walk = walk(proposal_kind, step_size, temperature)?;
    let kernel = match (batch, target(epsilon, delta)?) {
        (None, None) => Kernel::Barker(walk),
        (Some(batch), Some(target)) => Kernel::DpBarker(DpBarker {
            walk,
            batch,
            target,
        }),
        _ => {
            return Err(invalid(
                "epsilon",
                None,
                "give batch, epsilon and delta (private) or none (exact)".into(),
            ));
        }
    };
    let chain = Chain {
        iterations,
        burn_in,
        chains,
        seed,
        noise_seed,
    };
    output(py, &run_plain(&kernel, prior, &lik, &init, &chain)?)
}

/// HMC (exact), or with `epsilon`/`delta` DP HMC (thesis §5.2, Algorithm 3): clipped,
/// noisy per-row log-likelihood ratios and gradients.
#[pyfunction]
#[pyo3(signature = (prior, log_lik, grad_log_lik, n, init, *, iterations, step_size, leapfrog_steps, inv_mass = None, temperature = 1.0, ratio_clip = None, grad_clip = None, tau_l = None, tau_g = None, epsilon = None, delta = None, accounting = "pld", reuse_gradient = true, burn_in = 0, chains = 1, seed = 0, noise_seed = None))]
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
    chains: usize,
    seed: u64,
    noise_seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let prior = GradPrior::new(prior)?;
    let init = init.as_slice()?.to_vec();
    let lik = PyGrad {
        lik: PyLik::new(log_lik, init.len(), n),
        f: Rc::new(grad_log_lik),
        cache: Rc::default(),
    };
    let kernel = match target(epsilon, delta)? {
        None => Kernel::Hmc(Leapfrog {
            step_size,
            leapfrog_steps,
            inv_mass,
            temperature,
        }),
        Some(target) => {
            let accounting = self::accounting(accounting)?;
            let (Some(ratio_clip), Some(grad_clip), Some(tau_l), Some(tau_g)) =
                (ratio_clip, grad_clip, tau_l, tau_g)
            else {
                return Err(invalid(
                    "ratio_clip",
                    None,
                    "DP HMC needs ratio_clip, grad_clip, tau_l and tau_g".into(),
                ));
            };
            Kernel::DpHmc(DpHmc {
                step_size,
                leapfrog_steps,
                inv_mass,
                temperature,
                ratio_clip,
                grad_clip,
                tau_l,
                tau_g,
                accounting,
                charging: if reuse_gradient {
                    GradientCharging::Reuse
                } else {
                    GradientCharging::Fresh
                },
                target,
            })
        }
    };
    let chain = Chain {
        iterations,
        burn_in,
        chains,
        seed,
        noise_seed,
    };
    output(py, &run_grad(&kernel, &prior, &lik, &init, &chain)?)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(penalty, m)?)?;
    m.add_function(wrap_pyfunction!(barker, m)?)?;
    m.add_function(wrap_pyfunction!(hmc, m)?)?;
    Ok(())
}
