//! `dpinfer.mechanisms`: the secure (grid-exact) samplers of `dpinfer-mechanisms`. Each
//! release returns the value and its privacy event. Noise comes from ChaCha20 seeded from
//! the operating system's CSPRNG unless a (NOT private) `noise_seed` is given for tests.

use chacha20::ChaCha20Rng;
use dpinfer_mechanisms::{
    BinomialBound, BinomialCurve, Gaussian, Laplace, SparseVector, SparseVectorSettings,
};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use rand_core::SeedableRng;

use crate::accounting::PyEvent;
use crate::errors::{invalid, mech, raise};

/// The noise generator: ChaCha20 seeded from the OS CSPRNG, or from a fixed test seed.
pub(crate) fn noise_rng(seed: Option<u64>) -> PyResult<ChaCha20Rng> {
    match seed {
        None => ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng)
            .map_err(|e| raise("EntropyError", format!("OS entropy unavailable: {e}"), &[])),
        Some(s) => Ok(ChaCha20Rng::seed_from_u64(s)),
    }
}

fn noise_label(seed: Option<u64>) -> String {
    match seed {
        None => "ChaCha20 seeded from the OS CSPRNG".into(),
        Some(s) => format!("ChaCha20 from FIXED seed {s} (reproducible, NOT private)"),
    }
}

/// A float or a 1-D float array, as the private input of a release.
enum Input<'py> {
    Scalar(f64),
    Vector(PyReadonlyArray1<'py, f64>),
}

fn input<'py>(x: &Bound<'py, PyAny>) -> PyResult<Input<'py>> {
    if let Ok(v) = x.extract::<f64>() {
        return Ok(Input::Scalar(v));
    }
    let arr: PyReadonlyArray1<'py, f64> = x
        .extract()
        .map_err(|_| invalid("x", None, "x must be a float or a 1-D float64 array".into()))?;
    Ok(Input::Vector(arr))
}

/// The Laplace mechanism on a grid with exact discrete Laplace noise (Canonne–Kamath–Steinke
/// 2020): releases `g·(round(clamp(x)/g) + Z)`.
///
/// Privacy: pure ε-DP with ε = Δ′/b, Δ′ the ℓ₁ sensitivity of the clamped, rounded vector
/// (≥ the declared Δ); reported as ``Event.pure(ε)``. The neighbouring relation is the one
/// the declared sensitivity was computed for. Values are clamped to the public [lo, hi].
#[pyclass(name = "Laplace", module = "dpinfer._native")]
pub(crate) struct PyLaplace {
    pub(crate) mech: Laplace,
    rng: ChaCha20Rng,
    seed: Option<u64>,
}

/// The body of `release` for the scalar/vector mechanisms (Laplace, Gaussian): a float in,
/// a float out, or a 1-D array in, an array out (released without the GIL); with the event.
macro_rules! release_scalar_or_vector {
    ($self:ident, $py:ident, $x:ident) => {{
        let ev = PyEvent::from_event(&$self.mech.event())?;
        let (m, rng) = (&$self.mech, &mut $self.rng);
        let v = match input($x)? {
            Input::Scalar(v) => m
                .release(v, rng)
                .map_err(mech)?
                .into_pyobject($py)?
                .into_any()
                .unbind(),
            Input::Vector(a) => {
                let xs = a.as_slice()?.to_vec();
                let mut out = vec![0.0; xs.len()];
                $py.detach(|| m.release_into(&xs, &mut out, rng))
                    .map_err(mech)?;
                out.into_pyarray($py).into_any().unbind()
            }
        };
        Ok((v, ev))
    }};
}

#[pymethods]
impl PyLaplace {
    /// Give exactly one of `scale` (b) or `epsilon` (then b = Δ′/ε, rounded so the
    /// certified ε ≤ epsilon).
    #[new]
    #[pyo3(signature = (*, sensitivity, lo, hi, scale = None, epsilon = None, dim = 1, noise_seed = None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        sensitivity: f64,
        lo: f64,
        hi: f64,
        scale: Option<f64>,
        epsilon: Option<f64>,
        dim: usize,
        noise_seed: Option<u64>,
    ) -> PyResult<Self> {
        let m = match (scale, epsilon) {
            (Some(b), None) => Laplace::vector(dim, b, sensitivity, lo, hi),
            (None, Some(e)) => Laplace::vector_from_epsilon(dim, e, sensitivity, lo, hi),
            _ => {
                return Err(invalid(
                    "scale",
                    None,
                    "give exactly one of scale or epsilon".into(),
                ));
            }
        }
        .map_err(mech)?;
        Ok(Self {
            mech: m,
            rng: noise_rng(noise_seed)?,
            seed: noise_seed,
        })
    }
    /// Releases `x` (a float for dim 1, else a 1-D float64 array of length dim); returns
    /// ``(value, event)``.
    fn release<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<(Py<PyAny>, PyEvent)> {
        release_scalar_or_vector!(self, py, x)
    }
    /// The requested noise scale b.
    #[getter]
    fn scale(&self) -> f64 {
        self.mech.scale()
    }
    /// The exact pure-DP cost ε = Δ′/b (rounded up).
    #[getter]
    fn epsilon(&self) -> f64 {
        self.mech.epsilon()
    }
    /// Δ′, the ℓ₁ sensitivity after clamping and rounding to the grid.
    #[getter]
    fn effective_sensitivity(&self) -> f64 {
        self.mech.effective_sensitivity()
    }
    /// The grid spacing g = 2^k.
    #[getter]
    fn grid_spacing(&self) -> f64 {
        self.mech.grid().spacing()
    }
    /// The vector length.
    #[getter]
    fn dim(&self) -> usize {
        self.mech.dim()
    }
    /// The cost of one release as an event.
    #[getter]
    fn event(&self) -> PyResult<PyEvent> {
        PyEvent::from_event(&self.mech.event())
    }
    /// Where the noise comes from.
    #[getter]
    fn noise_source(&self) -> String {
        noise_label(self.seed)
    }
}

/// The Gaussian mechanism on a grid with exact discrete Gaussian noise (Canonne–Kamath–
/// Steinke 2020).
///
/// Privacy: ρ-zCDP with ρ = Δ′²/(2σ′²) for the grid-rounded σ′ and Δ′ (ℓ₂, clamped and
/// rounded); reported as ``Event.zcdp(ρ)``. Relation: the one Δ was computed for.
#[pyclass(name = "Gaussian", module = "dpinfer._native")]
pub(crate) struct PyGaussian {
    pub(crate) mech: Gaussian,
    rng: ChaCha20Rng,
    seed: Option<u64>,
}

#[pymethods]
impl PyGaussian {
    /// Give exactly one of `sigma`, `rho`, or (`epsilon`, `delta`) (calibrated through zCDP).
    #[new]
    #[pyo3(signature = (*, sensitivity, lo, hi, sigma = None, rho = None, epsilon = None, delta = None, dim = 1, noise_seed = None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        sensitivity: f64,
        lo: f64,
        hi: f64,
        sigma: Option<f64>,
        rho: Option<f64>,
        epsilon: Option<f64>,
        delta: Option<f64>,
        dim: usize,
        noise_seed: Option<u64>,
    ) -> PyResult<Self> {
        let m = match (sigma, rho, epsilon, delta) {
            (Some(s), None, None, None) => Gaussian::vector(dim, s, sensitivity, lo, hi),
            (None, Some(r), None, None) => Gaussian::vector_from_zcdp(dim, r, sensitivity, lo, hi),
            (None, None, Some(e), Some(d)) => {
                Gaussian::vector_from_epsilon_delta(dim, e, d, sensitivity, lo, hi)
            }
            _ => {
                return Err(invalid(
                    "sigma",
                    None,
                    "give exactly one of sigma, rho, or (epsilon, delta)".into(),
                ));
            }
        }
        .map_err(mech)?;
        Ok(Self {
            mech: m,
            rng: noise_rng(noise_seed)?,
            seed: noise_seed,
        })
    }
    /// Releases `x` (float for dim 1, else a 1-D float64 array); returns ``(value, event)``.
    fn release<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<(Py<PyAny>, PyEvent)> {
        release_scalar_or_vector!(self, py, x)
    }
    /// The requested σ.
    #[getter]
    fn sigma(&self) -> f64 {
        self.mech.sigma()
    }
    /// σ′, the σ on the grid actually used.
    #[getter]
    fn effective_sigma(&self) -> f64 {
        self.mech.effective_sigma()
    }
    /// Δ′, the ℓ₂ sensitivity after clamping and rounding.
    #[getter]
    fn effective_sensitivity(&self) -> f64 {
        self.mech.effective_sensitivity()
    }
    /// The zCDP cost ρ of one release (rounded up).
    #[getter]
    fn rho(&self) -> f64 {
        self.mech.rho()
    }
    /// The vector length.
    #[getter]
    fn dim(&self) -> usize {
        self.mech.dim()
    }
    /// The cost of one release as an event.
    #[getter]
    fn event(&self) -> PyResult<PyEvent> {
        PyEvent::from_event(&self.mech.event())
    }
    /// Where the noise comes from.
    #[getter]
    fn noise_source(&self) -> String {
        noise_label(self.seed)
    }
}

/// The binomial infection-curve release (Xiong et al., Proposition 4): each release of an
/// infection count I out of a population K is Binomial(n, (I + m)/(K + 2m)), sampled
/// exactly with rejection-free integer arithmetic.
///
/// Privacy: pure ε-DP per release, ε = n·ln(1 + 1/m) ('exact', default) or n/m ('paper');
/// replace-one relation (one person's infection status changes I by at most 1).
#[pyclass(name = "BinomialCurve", module = "dpinfer._native")]
pub(crate) struct PyBinomialCurve {
    pub(crate) mech: BinomialCurve,
    rng: ChaCha20Rng,
}

#[pymethods]
impl PyBinomialCurve {
    #[new]
    #[pyo3(signature = (n, m, population, bound = "exact", noise_seed = None))]
    fn py_new(
        n: u64,
        m: u64,
        population: u64,
        bound: &str,
        noise_seed: Option<u64>,
    ) -> PyResult<Self> {
        let b = match bound {
            "exact" => BinomialBound::Exact,
            "paper" => BinomialBound::Paper,
            _ => {
                return Err(invalid(
                    "bound",
                    None,
                    "bound must be 'exact' or 'paper'".into(),
                ));
            }
        };
        if n == 0 {
            return Err(invalid("n", Some(0.0), "n must be at least 1".into()));
        }
        let mech = BinomialCurve::new(n, m, population)
            .map_err(mech)?
            .with_bound(b);
        Ok(Self {
            mech,
            rng: noise_rng(noise_seed)?,
        })
    }
    /// Releases the curve for the private counts `infected` (1-D uint64 array, clamped to
    /// the population); returns ``(counts, event)`` with the event for len(infected)
    /// releases.
    fn release<'py>(
        &mut self,
        py: Python<'py>,
        infected: PyReadonlyArray1<'py, u64>,
    ) -> PyResult<(Bound<'py, PyArray1<u64>>, PyEvent)> {
        let xs = infected.as_slice()?.to_vec();
        if xs.is_empty() {
            return Err(invalid(
                "infected",
                None,
                "infected must not be empty".into(),
            ));
        }
        let mut out = vec![0u64; xs.len()];
        let (m, rng) = (&self.mech, &mut self.rng);
        py.detach(|| m.release_curve(&xs, &mut out, rng))
            .map_err(mech)?;
        let ev = PyEvent::from_event(&self.mech.event(xs.len() as u64))?;
        Ok((out.into_pyarray(py), ev))
    }
    /// ε of `releases` releases under the configured bound.
    fn epsilon(&self, releases: u64) -> f64 {
        match self.mech.event(releases) {
            dpinfer_mechanisms::Event::BinomialCurve {
                bound: BinomialBound::Paper,
                ..
            } => self.mech.epsilon_paper(releases),
            _ => self.mech.epsilon_exact(releases),
        }
    }
    /// The event of `releases` releases.
    fn event(&self, releases: u64) -> PyResult<PyEvent> {
        PyEvent::from_event(&self.mech.event(releases))
    }
}

/// The sparse vector technique (AboveThreshold with c positives, Lyu–Su–Li 2017; ABCDP
/// Theorem 1) with exact discrete Laplace noise on a grid: threshold noise Lap(b), query
/// noise Lap(2b); answers "is the value at most the threshold?" until `c` positives, then raises BudgetExhausted.
///
/// Privacy: pure ε-DP for the whole session, ε = (c+1)Δ′/b (2cΔ′/b with resampling), charged
/// in full even if fewer than c positives are released. Relation: the one Δ was computed for.
#[pyclass(name = "SparseVector", module = "dpinfer._native")]
pub(crate) struct PySparseVector {
    mech: SparseVector,
    rng: ChaCha20Rng,
}

#[pymethods]
impl PySparseVector {
    /// Give exactly one of `epsilon` (total budget) or `scale` (b).
    #[new]
    #[pyo3(signature = (*, threshold, sensitivity, lo, hi, c = 1, resample = false, epsilon = None, scale = None, noise_seed = None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        threshold: f64,
        sensitivity: f64,
        lo: f64,
        hi: f64,
        c: u64,
        resample: bool,
        epsilon: Option<f64>,
        scale: Option<f64>,
        noise_seed: Option<u64>,
    ) -> PyResult<Self> {
        let s = SparseVectorSettings {
            threshold,
            sensitivity,
            lo,
            hi,
            c,
            resample,
        };
        let m = match (epsilon, scale) {
            (Some(e), None) => SparseVector::from_epsilon(s, e),
            (None, Some(b)) => SparseVector::new(s, b),
            _ => {
                return Err(invalid(
                    "epsilon",
                    None,
                    "give exactly one of epsilon or scale".into(),
                ));
            }
        }
        .map_err(mech)?;
        Ok(Self {
            mech: m,
            rng: noise_rng(noise_seed)?,
        })
    }
    /// Answers one query: True if the noisy (clamped, rounded) `value` is at most the noisy
    /// threshold (the ABC acceptance direction). NaN maps to `lo`.
    fn query(&mut self, value: f64) -> PyResult<bool> {
        self.mech.query(value, &mut self.rng).map_err(mech)
    }
    /// Positive answers released so far.
    #[getter]
    fn positives(&self) -> u64 {
        self.mech.positives()
    }
    /// Whether the c positives are used up.
    #[getter]
    fn exhausted(&self) -> bool {
        self.mech.is_exhausted()
    }
    /// The Laplace scale b.
    #[getter]
    fn scale(&self) -> f64 {
        self.mech.scale()
    }
    /// The session's pure-DP ε.
    #[getter]
    fn epsilon(&self) -> f64 {
        self.mech.epsilon()
    }
    /// The session's cost as an event.
    #[getter]
    fn event(&self) -> PyResult<PyEvent> {
        PyEvent::from_event(&self.mech.event())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLaplace>()?;
    m.add_class::<PyGaussian>()?;
    m.add_class::<PyBinomialCurve>()?;
    m.add_class::<PySparseVector>()?;
    Ok(())
}
