//! `dpinfer.accounting`: events, accountants, the budget filter, conversions and calibration
//! of `dpinfer-accountants`. Every number comes from the Rust crate; the binding only
//! converts arguments, owns event trees and maps errors.

use std::sync::Arc;

use dpinfer_accountants::calibrate::{self, Method};
use dpinfer_accountants::pld_numeric::{DEFAULT_TRUNCATION, Discretisation};
use dpinfer_accountants::{
    Accountant, AccountantError, ApproxAccountant, BinomialBound, BudgetFilter, DEFAULT_ORDERS,
    Event, EventBuf, EventSpec, FilterEpsilon, MAX_EVENT_DEPTH, Neighbouring, ParseEventError,
    PldAccountant, PureAccountant, RdpAccountantVec, Report, ZcdpAccountant, convert,
};
use pyo3::prelude::*;

use crate::errors::{acc, invalid};

// ---------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------

/// The binding's event depth (the library refuses trees deeper than [`MAX_EVENT_DEPTH`]
/// when it composes them; the binding refuses them when they are built).
fn depth(e: &EventBuf) -> usize {
    match e {
        EventBuf::PoissonSampled { event, .. }
        | EventBuf::SampledWithoutReplacement { event, .. }
        | EventBuf::SelfComposed { event, .. } => 1 + depth(event),
        EventBuf::Composed(v) => 1 + v.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Python's ``repr`` of an event: the constructor call that rebuilds it.
fn repr(e: &EventBuf) -> String {
    match e {
        EventBuf::Gaussian { sigma, sensitivity } => {
            format!("Event.gaussian(sigma={sigma:?}, sensitivity={sensitivity:?})")
        }
        EventBuf::Laplace { scale, sensitivity } => {
            format!("Event.laplace(scale={scale:?}, sensitivity={sensitivity:?})")
        }
        EventBuf::PureEpsilon { epsilon } => format!("Event.pure(epsilon={epsilon:?})"),
        EventBuf::ApproxDp { epsilon, delta } => {
            format!("Event.approx_dp(epsilon={epsilon:?}, delta={delta:?})")
        }
        EventBuf::Zcdp { rho } => format!("Event.zcdp(rho={rho:?})"),
        EventBuf::SparseVector {
            c,
            scale,
            sensitivity,
            resample,
        } => format!(
            "Event.sparse_vector(c={c}, scale={scale:?}, sensitivity={sensitivity:?}, resample={})",
            if *resample { "True" } else { "False" }
        ),
        EventBuf::BinomialCurve {
            n,
            m,
            releases,
            bound,
        } => format!(
            "Event.binomial_curve(n={n}, m={m:?}, releases={releases}, bound='{}')",
            bound.name()
        ),
        EventBuf::PoissonSampled { q, event } => {
            format!("Event.poisson_sampled(q={q:?}, event={})", repr(event))
        }
        EventBuf::SampledWithoutReplacement {
            batch,
            population,
            event,
        } => format!(
            "Event.sampled_without_replacement(batch={batch}, population={population}, event={})",
            repr(event)
        ),
        EventBuf::RandomAllocation {
            sigma,
            sensitivity,
            steps,
            selected,
        } => format!(
            "Event.random_allocation(sigma={sigma:?}, steps={steps}, selected={selected}, \
             sensitivity={sensitivity:?})"
        ),
        EventBuf::RepeatAndSelect { event, mean, shape } => format!(
            "Event.repeat_and_select(event={}, mean={mean:?}, shape={shape:?})",
            repr(event)
        ),
        EventBuf::SampledWithReplacement {
            batch,
            population,
            event,
        } => format!(
            "Event.sampled_with_replacement(batch={batch}, population={population}, event={})",
            repr(event)
        ),
        EventBuf::SelfComposed { event, count } => {
            format!("Event.self_composed(event={}, count={count})", repr(event))
        }
        EventBuf::Composed(v) => {
            let parts: Vec<String> = v.iter().map(repr).collect();
            format!("Event.composed([{}])", parts.join(", "))
        }
        EventBuf::RandomizedResponse { noise, buckets } => {
            format!("Event.randomized_response(noise={noise:?}, buckets={buckets})")
        }
        EventBuf::ExponentialMechanism { epsilon } => {
            format!("Event.exponential_mechanism(epsilon={epsilon:?})")
        }
        EventBuf::TreeAggregation {
            sigma,
            sensitivity,
            steps,
        } => format!(
            "Event.tree_aggregation(sigma={sigma:?}, steps={steps}, sensitivity={sensitivity:?})"
        ),
        EventBuf::MixtureOfGaussians {
            sigma,
            sensitivities,
            probs,
        } => format!(
            "Event.mixture_of_gaussians(sigma={sigma:?}, sensitivities={sensitivities:?}, \
             probs={probs:?})"
        ),
        EventBuf::TruncatedSubsampledGaussian {
            sigma,
            sensitivity,
            q,
            batch,
            population,
        } => format!(
            "Event.truncated_subsampled_gaussian(sigma={sigma:?}, q={q:?}, batch={batch}, \
             population={population}, sensitivity={sensitivity:?})"
        ),
        // Variants Python cannot build (the grid mechanisms' discrete noise, future ones):
        // the library's own description.
        other => format!("Event({other})"),
    }
}

/// A privacy event: what a mechanism reports to an accountant (the vocabulary of Google
/// dp_accounting's ``DpEvent``). Immutable; build with the static constructors.
///
/// Parameters are validated when the event is composed into an accountant (the accountant
/// knows the neighbouring relation). Sensitivities are ℓ₂ (Gaussian) or ℓ₁ (Laplace)
/// sensitivities under the accountant's neighbouring relation. Trees deeper than 32
/// levels are refused.
#[pyclass(name = "Event", module = "dpinfer._native", frozen)]
#[derive(Clone, Debug)]
pub(crate) struct PyEvent {
    pub(crate) node: Arc<EventBuf>,
}

impl PyEvent {
    pub(crate) fn new(node: EventBuf) -> PyResult<Self> {
        if depth(&node) > MAX_EVENT_DEPTH {
            return Err(acc(AccountantError::TooDeep));
        }
        Ok(Self {
            node: Arc::new(node),
        })
    }
    pub(crate) fn from_event(e: &Event<'_>) -> PyResult<Self> {
        Self::new(EventBuf::from(e))
    }
}

fn parse_bound(bound: &str) -> PyResult<BinomialBound> {
    bound.parse().map_err(|_| {
        invalid(
            "bound",
            None,
            format!("bound must be 'exact' or 'paper', not {bound:?}"),
        )
    })
}

#[pymethods]
impl PyEvent {
    /// Gaussian mechanism N(f(x), σ²I) on a query with ℓ₂ sensitivity Δ.
    #[staticmethod]
    #[pyo3(signature = (sigma, sensitivity = 1.0))]
    fn gaussian(sigma: f64, sensitivity: f64) -> PyResult<Self> {
        Self::new(EventBuf::Gaussian { sigma, sensitivity })
    }
    /// Laplace mechanism with scale b on a query with ℓ₁ sensitivity Δ (ε = Δ/b, and the
    /// Laplace RDP curve of Mironov 2017 Prop. 6).
    #[staticmethod]
    #[pyo3(signature = (scale, sensitivity = 1.0))]
    fn laplace(scale: f64, sensitivity: f64) -> PyResult<Self> {
        Self::new(EventBuf::Laplace { scale, sensitivity })
    }
    /// Any ε-DP mechanism.
    #[staticmethod]
    fn pure(epsilon: f64) -> PyResult<Self> {
        Self::new(EventBuf::PureEpsilon { epsilon })
    }
    /// Any (ε, δ)-DP mechanism (only the approximate-DP accountant can compose it).
    #[staticmethod]
    fn approx_dp(epsilon: f64, delta: f64) -> PyResult<Self> {
        Self::new(EventBuf::ApproxDp { epsilon, delta })
    }
    /// Any ρ-zCDP mechanism.
    #[staticmethod]
    fn zcdp(rho: f64) -> PyResult<Self> {
        Self::new(EventBuf::Zcdp { rho })
    }
    /// Sparse vector (ABCDP Theorem 1): c accepted answers with Laplace scale b;
    /// ε = (c+1)Δ/b without threshold resampling, 2cΔ/b with.
    #[staticmethod]
    #[pyo3(signature = (c, scale, sensitivity = 1.0, resample = false))]
    fn sparse_vector(c: u64, scale: f64, sensitivity: f64, resample: bool) -> PyResult<Self> {
        Self::new(EventBuf::SparseVector {
            c,
            scale,
            sensitivity,
            resample,
        })
    }
    /// Binomial infection-curve release (Xiong et al. Prop. 4): `releases` releases of
    /// Binomial(n, (I + m)/(K + 2m)); bound 'exact' (default) or 'paper' (ε = nL/m).
    #[staticmethod]
    #[pyo3(signature = (n, m, releases, bound = "exact"))]
    fn binomial_curve(n: u64, m: f64, releases: u64, bound: &str) -> PyResult<Self> {
        Self::new(EventBuf::BinomialCurve {
            n,
            m,
            releases,
            bound: parse_bound(bound)?,
        })
    }
    /// k-ary randomized response (dp_accounting's ``RandomizedResponseDpEvent``): one
    /// record's value, one of `buckets` = k ≥ 1, reported as is with probability 1 − p and
    /// as a uniformly random bucket with probability `noise` = p ∈ (0, 1]. Replace-one
    /// relation only. ε = ln(1 + k(1 − p)/p) per release (exact), the exact RDP of the
    /// pair, and the numerical PLD.
    #[staticmethod]
    fn randomized_response(noise: f64, buckets: u64) -> PyResult<Self> {
        Self::new(EventBuf::RandomizedResponse { noise, buckets })
    }
    /// The exponential mechanism sampling ∝ exp(ε·u/(2Δ)) for a utility of sensitivity Δ,
    /// or any ε-bounded-range selection (report-noisy-max with Gumbel noise): ε-DP and
    /// ε²/8-zCDP (Cesar–Rogers 2021). Permute-and-flip: use ``Event.pure(epsilon)``.
    #[staticmethod]
    fn exponential_mechanism(epsilon: f64) -> PyResult<Self> {
        Self::new(EventBuf::ExponentialMechanism { epsilon })
    }
    /// One epoch of tree aggregation (DP-FTRL) over `steps` leaves, Gaussian noise σ per
    /// node, each record in at most one leaf with ℓ₂ sensitivity Δ per node: the Gaussian
    /// mechanism with sensitivity Δ·√⌈log₂(steps + 1)⌉ (dp_accounting's
    /// ``SingleEpochTreeAggregationDpEvent``).
    #[staticmethod]
    #[pyo3(signature = (sigma, steps, sensitivity = 1.0))]
    fn tree_aggregation(sigma: f64, steps: u64, sensitivity: f64) -> PyResult<Self> {
        Self::new(EventBuf::TreeAggregation {
            sigma,
            sensitivity,
            steps,
        })
    }
    /// The mixture-of-Gaussians mechanism (dp_accounting's ``MixtureOfGaussiansDpEvent``;
    /// Choquette-Choo et al. 2023): Gaussian noise σ on a query whose sensitivity is
    /// ``sensitivities[i]`` ≥ 0 with probability ``probs[i]`` (summing to 1; at most 16
    /// points). Add/remove relation; accounted by the numerical PLD only.
    #[staticmethod]
    fn mixture_of_gaussians(
        sigma: f64,
        sensitivities: Vec<f64>,
        probs: Vec<f64>,
    ) -> PyResult<Self> {
        Self::new(EventBuf::MixtureOfGaussians {
            sigma,
            sensitivities,
            probs,
        })
    }
    /// The Gaussian mechanism (noise σ, ℓ₂ sensitivity Δ) on a Poisson sample (rate q) of
    /// ``population`` rows cut to at most ``batch`` rows (dp_accounting's
    /// ``TruncatedSubsampledGaussianDpEvent``; arXiv 2508.15089). Add/remove relation;
    /// accounted by the numerical PLD only.
    #[staticmethod]
    #[pyo3(signature = (sigma, q, batch, population, sensitivity = 1.0))]
    fn truncated_subsampled_gaussian(
        sigma: f64,
        q: f64,
        batch: u64,
        population: u64,
        sensitivity: f64,
    ) -> PyResult<Self> {
        Self::new(EventBuf::TruncatedSubsampledGaussian {
            sigma,
            sensitivity,
            q,
            batch,
            population,
        })
    }
    /// Poisson subsampling with rate q ∈ (0, 1] before `event` (add/remove relation only).
    #[staticmethod]
    fn poisson_sampled(q: f64, event: &Self) -> PyResult<Self> {
        Self::new(EventBuf::PoissonSampled {
            q,
            event: Box::new((*event.node).clone()),
        })
    }
    /// Uniform sampling of `batch` of `population` rows without replacement before `event`
    /// (replace-one relation only).
    #[staticmethod]
    fn sampled_without_replacement(batch: u64, population: u64, event: &Self) -> PyResult<Self> {
        Self::new(EventBuf::SampledWithoutReplacement {
            batch,
            population,
            event: Box::new((*event.node).clone()),
        })
    }
    /// `batch` draws, each uniform over the `population` rows, **with replacement**, before
    /// `event` (replace-one relation only: one row substituted; `event`'s sensitivity is that
    /// of one draw). Numerical PLD only, for Gaussian, Laplace and pure events.
    #[staticmethod]
    fn sampled_with_replacement(batch: u64, population: u64, event: &Self) -> PyResult<Self> {
        Self::new(EventBuf::SampledWithReplacement {
            batch,
            population,
            event: Box::new((*event.node).clone()),
        })
    }
    /// Repeat-and-select (Papernot & Steinke 2022; dp_accounting's ``RepeatAndSelectDpEvent``):
    /// `event` runs a random number K of times, E[K] = `mean` ≥ 1, and only the best run is
    /// released. K's law by `shape`: 1 geometric (default), 0 logarithmic, ``math.inf``
    /// Poisson, else truncated negative binomial. RDP only.
    #[staticmethod]
    #[pyo3(signature = (event, mean, shape = 1.0))]
    fn repeat_and_select(event: &Self, mean: f64, shape: f64) -> PyResult<Self> {
        Self::new(EventBuf::RepeatAndSelect {
            event: Box::new((*event.node).clone()),
            mean,
            shape,
        })
    }
    /// Random allocation ("balls in bins"; Feldman & Shenfeld 2025): `steps` Gaussian steps
    /// (noise σ, ℓ₂ sensitivity Δ), each record in exactly `selected` of them chosen
    /// uniformly at random (add/remove). RDP only, an upper bound; `selected = 1` only.
    #[staticmethod]
    #[pyo3(signature = (sigma, steps, selected = 1, sensitivity = 1.0))]
    fn random_allocation(
        sigma: f64,
        steps: u64,
        selected: u64,
        sensitivity: f64,
    ) -> PyResult<Self> {
        Self::new(EventBuf::RandomAllocation {
            sigma,
            sensitivity,
            steps,
            selected,
        })
    }
    /// `count` adaptive repetitions of `event` (composed in O(1), never by looping).
    #[staticmethod]
    fn self_composed(event: &Self, count: u64) -> PyResult<Self> {
        Self::new(EventBuf::SelfComposed {
            event: Box::new((*event.node).clone()),
            count,
        })
    }
    /// Adaptive composition of several events.
    #[staticmethod]
    fn composed(events: Vec<PyRef<'_, Self>>) -> PyResult<Self> {
        Self::new(EventBuf::Composed(
            events.iter().map(|e| (*e.node).clone()).collect(),
        ))
    }
    /// The variant's name (``"Gaussian"``, ``"PoissonSampled"``, …).
    #[getter]
    fn name(&self) -> &'static str {
        self.node.name()
    }
    fn __repr__(&self) -> String {
        repr(&self.node)
    }
}

// ---------------------------------------------------------------------------------------
// Reports and the neighbouring relation
// ---------------------------------------------------------------------------------------

/// An (ε, δ) guarantee and the theorem (conversion) that produced it. ε and δ are upper
/// bounds of the exact values (rounded up).
#[pyclass(name = "Report", module = "dpinfer._native", frozen, get_all)]
#[derive(Clone, Debug)]
pub(crate) struct PyReport {
    /// ε ≥ 0.
    epsilon: f64,
    /// δ ∈ [0, 1].
    delta: f64,
    /// Which conversion produced the numbers (e.g. ``"balle_cks"``, ``"gaussian_pld"``).
    conversion: String,
    /// The RDP/zCDP order that attained the minimum, when the conversion has one.
    order: Option<f64>,
}

impl From<Report> for PyReport {
    fn from(r: Report) -> Self {
        Self {
            epsilon: r.epsilon,
            delta: r.delta,
            conversion: r.conversion.name().to_owned(),
            order: r.conversion.order(),
        }
    }
}

#[pymethods]
impl PyReport {
    fn __repr__(&self) -> String {
        match self.order {
            Some(o) => format!(
                "Report(epsilon={:?}, delta={:?}, conversion='{}', order={o:?})",
                self.epsilon, self.delta, self.conversion
            ),
            None => format!(
                "Report(epsilon={:?}, delta={:?}, conversion='{}')",
                self.epsilon, self.delta, self.conversion
            ),
        }
    }
}

pub(crate) fn parse_relation(s: &str) -> PyResult<Neighbouring> {
    match s
        .to_ascii_lowercase()
        .replace(['-', ' ', '/'], "_")
        .as_str()
    {
        "add_remove" | "add_or_remove_one" | "add_or_remove" | "unbounded" => {
            Ok(Neighbouring::AddRemove)
        }
        "replace_one" | "replace" | "substitute" | "bounded" => Ok(Neighbouring::ReplaceOne),
        _ => Err(invalid(
            "neighbouring",
            None,
            format!("neighbouring must be 'add_remove' or 'replace_one', not {s:?}"),
        )),
    }
}

fn relation_name(r: Neighbouring) -> &'static str {
    match r {
        Neighbouring::AddRemove => "add_remove",
        Neighbouring::ReplaceOne => "replace_one",
    }
}

// ---------------------------------------------------------------------------------------
// Accountants
// ---------------------------------------------------------------------------------------

/// Every accountant of the crate behind one type (for the filter and the shared methods).
#[derive(Clone, Debug)]
pub(crate) enum Any {
    Pure(PureAccountant),
    Approx(ApproxAccountant),
    Zcdp(ZcdpAccountant),
    Pld(PldAccountant),
    Rdp(RdpAccountantVec),
}

macro_rules! dispatch {
    ($self:expr, $a:ident => $body:expr) => {
        match $self {
            Any::Pure($a) => $body,
            Any::Approx($a) => $body,
            Any::Zcdp($a) => $body,
            Any::Pld($a) => $body,
            Any::Rdp($a) => $body,
        }
    };
}

impl Accountant for Any {
    fn relation(&self) -> Neighbouring {
        dispatch!(self, a => a.relation())
    }
    fn compose_n(&mut self, event: &Event<'_>, count: u64) -> Result<(), AccountantError> {
        dispatch!(self, a => a.compose_n(event, count))
    }
    fn epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        dispatch!(self, a => a.epsilon(delta))
    }
    fn delta(&self, epsilon: f64) -> Result<Report, AccountantError> {
        dispatch!(self, a => a.delta(epsilon))
    }
}

impl FilterEpsilon for Any {
    fn filter_epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        dispatch!(self, a => a.filter_epsilon(delta))
    }
}

macro_rules! accountant_class {
    ($ty:ident, $pyname:literal, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(name = $pyname, module = "dpinfer._native")]
        #[derive(Clone, Debug)]
        pub(crate) struct $ty {
            pub(crate) inner: Any,
        }

        #[pymethods]
        impl $ty {
            /// Composes `count` adaptive repetitions of `event` (atomic: on error nothing is
            /// recorded). Returns the accountant, like dp_accounting.
            #[pyo3(signature = (event, count = 1))]
            fn compose<'py>(
                mut slf: PyRefMut<'py, Self>,
                event: &PyEvent,
                count: u64,
            ) -> PyResult<PyRefMut<'py, Self>> {
                let node = event.node.clone();
                let py = slf.py();
                let inner = &mut slf.inner;
                py.detach(|| node.with_event(|e| inner.compose_n(e, count)))
                    .map_err(acc)?;
                Ok(slf)
            }
            /// The smallest ε this accountant certifies at `delta` (an upper bound).
            fn get_epsilon(&self, py: Python<'_>, delta: f64) -> PyResult<f64> {
                py.detach(|| self.inner.epsilon(delta))
                    .map(|r| r.epsilon)
                    .map_err(acc)
            }
            /// The smallest δ this accountant certifies at `epsilon` (an upper bound).
            fn get_delta(&self, py: Python<'_>, epsilon: f64) -> PyResult<f64> {
                py.detach(|| self.inner.delta(epsilon))
                    .map(|r| r.delta)
                    .map_err(acc)
            }
            /// ε at `delta` with the conversion that produced it.
            fn epsilon_report(&self, py: Python<'_>, delta: f64) -> PyResult<PyReport> {
                py.detach(|| self.inner.epsilon(delta))
                    .map(PyReport::from)
                    .map_err(acc)
            }
            /// δ at `epsilon` with the conversion that produced it.
            fn delta_report(&self, py: Python<'_>, epsilon: f64) -> PyResult<PyReport> {
                py.detach(|| self.inner.delta(epsilon))
                    .map(PyReport::from)
                    .map_err(acc)
            }
            /// Whether `event` can be composed into this accountant (parameters valid, the
            /// relation matches, the notion can express it).
            fn supports(&self, event: &PyEvent) -> bool {
                let mut probe = self.inner.clone();
                event.node.with_event(|e| probe.compose_n(e, 1)).is_ok()
            }
            /// The neighbouring relation of every guarantee ('add_remove' or 'replace_one').
            #[getter]
            fn neighbouring(&self) -> &'static str {
                relation_name(self.inner.relation())
            }
            /// An independent copy.
            fn copy(&self) -> Self {
                self.clone()
            }
            fn __copy__(&self) -> Self {
                self.clone()
            }
            fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
                self.clone()
            }
        }
    };
}

accountant_class!(
    PyRdpAccountant,
    "RdpAccountant",
    "Rényi-DP accountant over a grid of orders (Mironov 2017): per order, RDP adds; (ε, δ) by \
     the better of Mironov Prop. 3 and Balle et al. 2020 Thm 21 over the grid. Poisson \
     subsampling by Mironov–Talwar–Zhang 2019 (add/remove), sampling without replacement by \
     Wang–Balle–Kasiviswanathan 2019 (replace-one)."
);
accountant_class!(
    PyPldAccountant,
    "PldAccountant",
    "Privacy-loss-distribution accountant: exact for (heterogeneous) Gaussian mechanisms, μ \
     adds (Sommer–Meiser–Mohammadi 2019 Thm 1); Poisson-subsampled, without-replacement, \
     Laplace and pure-ε steps by the numerical PLD (pessimistic discretisation, FFT \
     composition, conversion 'numerical_pld')."
);
accountant_class!(
    PyZcdpAccountant,
    "ZcdpAccountant",
    "zCDP accountant (Bun–Steinke 2016): ρ adds; (ε, δ) by Canonne–Kamath–Steinke 2020 \
     Prop. 12 optimised over the order."
);
accountant_class!(
    PyPureAccountant,
    "PureDpAccountant",
    "Pure ε-DP accountant: ε adds (basic composition)."
);
accountant_class!(
    PyApproxAccountant,
    "ApproxDpAccountant",
    "Approximate (ε, δ)-DP accountant: the best of basic, advanced (Dwork–Rothblum–Vadhan) and \
     optimal (Kairouz–Oh–Viswanath) composition."
);

#[pymethods]
impl PyRdpAccountant {
    #[new]
    #[pyo3(signature = (orders = None, neighbouring = "add_remove"))]
    fn py_new(orders: Option<Vec<f64>>, neighbouring: &str) -> PyResult<Self> {
        let rel = parse_relation(neighbouring)?;
        let orders = orders.unwrap_or_else(|| DEFAULT_ORDERS.to_vec());
        Ok(Self {
            inner: Any::Rdp(RdpAccountantVec::new(rel, orders).map_err(acc)?),
        })
    }
    /// The RDP orders α.
    #[getter]
    fn orders(&self) -> Vec<f64> {
        match &self.inner {
            Any::Rdp(a) => a.curve().orders().to_vec(),
            _ => Vec::new(),
        }
    }
    /// The current RDP curve r(α) over `orders` (rounded up).
    #[getter]
    fn rdp(&self) -> Vec<f64> {
        match &self.inner {
            Any::Rdp(a) => a.curve().values().to_vec(),
            _ => Vec::new(),
        }
    }
    /// Composes `count` Poisson-subsampled Gaussian steps with noise multiplier z = σ/Δ and
    /// rate q (the DP-SGD step; same as composing
    /// `Event.poisson_sampled(q, Event.gaussian(z))`, without building the event).
    #[pyo3(signature = (noise_multiplier, sample_rate, count = 1))]
    fn compose_poisson_gaussian(
        &mut self,
        py: Python<'_>,
        noise_multiplier: f64,
        sample_rate: f64,
        count: u64,
    ) -> PyResult<()> {
        let g = Event::Gaussian {
            sigma: noise_multiplier,
            sensitivity: 1.0,
        };
        let e = if sample_rate == 1.0 {
            g
        } else {
            Event::PoissonSampled {
                q: sample_rate,
                event: &g,
            }
        };
        let inner = &mut self.inner;
        py.detach(|| inner.compose_n(&e, count)).map_err(acc)
    }
}

#[pymethods]
impl PyPldAccountant {
    /// `interval`: the numerical PLD's grid interval h (1e-7 to 1; default 1e-4, as
    /// dp_accounting): smaller is a finer, tighter, slower grid. The grid is coarsened
    /// automatically when the composed loss needs more than 2^22 points.
    #[new]
    #[pyo3(signature = (neighbouring = "add_remove", interval = None))]
    fn py_new(neighbouring: &str, interval: Option<f64>) -> PyResult<Self> {
        let rel = parse_relation(neighbouring)?;
        let inner = match interval {
            None => PldAccountant::new(rel),
            Some(h) => PldAccountant::with_discretisation(
                rel,
                Discretisation::new(h, DEFAULT_TRUNCATION).map_err(acc)?,
            ),
        };
        Ok(Self {
            inner: Any::Pld(inner),
        })
    }
    /// Total Gaussian-PLD mean μ (= Σ Δ²/(2σ²), rounded up).
    #[getter]
    fn mu(&self) -> f64 {
        match &self.inner {
            Any::Pld(a) => a.mu(),
            _ => f64::NAN,
        }
    }
}

#[pymethods]
impl PyZcdpAccountant {
    #[new]
    #[pyo3(signature = (neighbouring = "add_remove"))]
    fn py_new(neighbouring: &str) -> PyResult<Self> {
        Ok(Self {
            inner: Any::Zcdp(ZcdpAccountant::new(parse_relation(neighbouring)?)),
        })
    }
    /// Total ρ (rounded up).
    #[getter]
    fn rho(&self) -> f64 {
        match &self.inner {
            Any::Zcdp(a) => a.rho(),
            _ => f64::NAN,
        }
    }
}

#[pymethods]
impl PyPureAccountant {
    #[new]
    #[pyo3(signature = (neighbouring = "add_remove"))]
    fn py_new(neighbouring: &str) -> PyResult<Self> {
        Ok(Self {
            inner: Any::Pure(PureAccountant::new(parse_relation(neighbouring)?)),
        })
    }
}

#[pymethods]
impl PyApproxAccountant {
    #[new]
    #[pyo3(signature = (neighbouring = "add_remove"))]
    fn py_new(neighbouring: &str) -> PyResult<Self> {
        Ok(Self {
            inner: Any::Approx(ApproxAccountant::new(parse_relation(neighbouring)?)),
        })
    }
}

/// Any of the accountant classes, by value.
fn extract_any(ob: &Bound<'_, PyAny>) -> PyResult<Any> {
    if let Ok(a) = ob.extract::<PyRef<'_, PyRdpAccountant>>() {
        return Ok(a.inner.clone());
    }
    if let Ok(a) = ob.extract::<PyRef<'_, PyPldAccountant>>() {
        return Ok(a.inner.clone());
    }
    if let Ok(a) = ob.extract::<PyRef<'_, PyZcdpAccountant>>() {
        return Ok(a.inner.clone());
    }
    if let Ok(a) = ob.extract::<PyRef<'_, PyPureAccountant>>() {
        return Ok(a.inner.clone());
    }
    if let Ok(a) = ob.extract::<PyRef<'_, PyApproxAccountant>>() {
        return Ok(a.inner.clone());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "expected a dpinfer accountant (RdpAccountant, PldAccountant, ZcdpAccountant, \
         PureDpAccountant, ApproxDpAccountant)",
    ))
}

// ---------------------------------------------------------------------------------------
// Budget filter
// ---------------------------------------------------------------------------------------

/// A budget filter: admits an event only if the composition stays within the (ε, δ)
/// budget; otherwise raises :class:`dpinfer.errors.BudgetExceeded` and records **nothing**.
/// The filter stays open after a refusal (a later, smaller event may be admitted; safe
/// because the decision depends only on public parameters).
///
/// Privacy: the accountant's guarantee at the filter's δ, for the accountant's relation.
/// Valid with adaptively chosen parameters for pure DP, zCDP, RDP (Feldman–Zrnic 2021) and
/// Gaussian DP (Smith–Thakurta 2022); the approximate-DP accountant uses basic composition.
#[pyclass(name = "BudgetFilter", module = "dpinfer._native")]
#[derive(Clone, Debug)]
pub(crate) struct PyBudgetFilter {
    inner: BudgetFilter<Any>,
}

#[pymethods]
impl PyBudgetFilter {
    /// Wraps a copy of `accountant` (which may already hold events) with budget (ε, δ);
    /// δ = 0 only with a pure accountant.
    #[new]
    fn py_new(accountant: &Bound<'_, PyAny>, epsilon: f64, delta: f64) -> PyResult<Self> {
        let a = extract_any(accountant)?;
        Ok(Self {
            inner: BudgetFilter::new(a, epsilon, delta).map_err(acc)?,
        })
    }
    /// Admits `count` repetitions of `event` and returns the new spend, or raises
    /// BudgetExceeded (nothing recorded).
    #[pyo3(signature = (event, count = 1))]
    fn try_compose(&mut self, py: Python<'_>, event: &PyEvent, count: u64) -> PyResult<PyReport> {
        let node = event.node.clone();
        let inner = &mut self.inner;
        py.detach(|| node.with_event(|e| inner.try_compose_n(e, count)))
            .map(PyReport::from)
            .map_err(acc)
    }
    /// Like `try_compose` but returns False instead of raising BudgetExceeded.
    #[pyo3(signature = (event, count = 1))]
    fn admit(&mut self, py: Python<'_>, event: &PyEvent, count: u64) -> PyResult<bool> {
        let node = event.node.clone();
        let inner = &mut self.inner;
        match py.detach(|| node.with_event(|e| inner.try_compose_n(e, count))) {
            Ok(_) => Ok(true),
            Err(AccountantError::BudgetExceeded { .. }) => Ok(false),
            Err(e) => Err(acc(e)),
        }
    }
    /// The spend so far at the filter's δ.
    fn spent(&self, py: Python<'_>) -> PyResult<PyReport> {
        py.detach(|| self.inner.spent())
            .map(PyReport::from)
            .map_err(acc)
    }
    /// The budget (ε, δ).
    #[getter]
    fn budget(&self) -> (f64, f64) {
        self.inner.budget()
    }
    /// ε still available at the filter's δ (budget minus spend, ≥ 0).
    #[getter]
    fn remaining_epsilon(&self, py: Python<'_>) -> PyResult<f64> {
        let spent = self.spent(py)?.epsilon;
        Ok((self.inner.budget().0 - spent).max(0.0))
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        let (e, d) = self.inner.budget();
        let s = self.spent(py).map(|r| r.epsilon).unwrap_or(f64::NAN);
        format!("BudgetFilter(budget=(epsilon={e:?}, delta={d:?}), spent_epsilon={s:?})")
    }
}

// ---------------------------------------------------------------------------------------
// Conversions and calibration (plain functions)
// ---------------------------------------------------------------------------------------

/// RDP curve → (ε, δ) at `delta` (best of Mironov and Balle/CKS over the grid).
#[pyfunction]
fn rdp_to_epsilon(orders: Vec<f64>, rdp: Vec<f64>, delta: f64) -> PyResult<PyReport> {
    convert::rdp_to_approx(&orders, &rdp, delta)
        .map(PyReport::from)
        .map_err(acc)
}

/// RDP curve → smallest δ at `epsilon`.
#[pyfunction]
fn rdp_to_delta(orders: Vec<f64>, rdp: Vec<f64>, epsilon: f64) -> PyResult<PyReport> {
    convert::rdp_to_delta(&orders, &rdp, epsilon)
        .map(PyReport::from)
        .map_err(acc)
}

/// ρ-zCDP → (ε, δ) at `delta` (Canonne–Kamath–Steinke 2020 Prop. 12, optimised).
#[pyfunction]
fn zcdp_to_epsilon(rho: f64, delta: f64) -> PyResult<PyReport> {
    convert::zcdp_to_approx(rho, delta)
        .map(PyReport::from)
        .map_err(acc)
}

/// The largest ρ with ρ-zCDP ⇒ (ε, δ)-DP (Bun–Steinke conversion inverted).
#[pyfunction]
fn rho_for_epsilon_delta(epsilon: f64, delta: f64) -> PyResult<f64> {
    convert::rho_for_approx(epsilon, delta).map_err(acc)
}

/// The largest total Gaussian-PLD mean μ with δ(ε; μ) ≤ delta.
#[pyfunction]
fn max_pld_mu(epsilon: f64, delta: f64) -> PyResult<f64> {
    calibrate::max_pld_mu(epsilon, delta).map_err(acc)
}

fn parse_method(s: &str) -> PyResult<Method> {
    match s {
        // Python-side aliases of the exact Gaussian PLD (Gaussian DP, PRV accountant names).
        "gdp" | "prv" => Ok(Method::Pld),
        _ => s.parse().map_err(|_| {
            invalid(
                "accountant",
                None,
                format!("accountant must be 'rdp', 'pld' or 'zcdp', not {s:?}"),
            )
        }),
    }
}

/// The MCMC budgets' accountant: the names of [`parse_method`], PLD or zCDP only.
fn pld_or_zcdp(accountant: &str) -> PyResult<Method> {
    match parse_method(accountant)? {
        m @ (Method::Pld | Method::Zcdp) => Ok(m),
        _ => Err(invalid(
            "accountant",
            None,
            "accountant must be 'pld' or 'zcdp'".into(),
        )),
    }
}

/// σ for `steps` Gaussian releases of sensitivity Δ (no subsampling) to meet (ε, δ).
#[pyfunction]
#[pyo3(signature = (epsilon, delta, steps, sensitivity = 1.0, accountant = "pld"))]
fn gaussian_sigma(
    py: Python<'_>,
    epsilon: f64,
    delta: f64,
    steps: u64,
    sensitivity: f64,
    accountant: &str,
) -> PyResult<f64> {
    let m = parse_method(accountant)?;
    py.detach(|| calibrate::gaussian_sigma(epsilon, delta, steps, sensitivity, m))
        .map_err(acc)
}

/// Smallest noise multiplier z = σ/Δ (relative tolerance 1e-9, rounded up) such that
/// `steps` Poisson-subsampled Gaussian steps with rate q are (ε, δ)-DP by the RDP
/// accountant on `orders` (default: the crate's 34 orders). Add/remove relation.
#[pyfunction]
#[pyo3(signature = (epsilon, delta, steps, sample_rate, orders = None))]
fn poisson_gaussian_sigma_rdp(
    py: Python<'_>,
    epsilon: f64,
    delta: f64,
    steps: u64,
    sample_rate: f64,
    orders: Option<Vec<f64>>,
) -> PyResult<f64> {
    let orders = orders.unwrap_or_else(|| DEFAULT_ORDERS.to_vec());
    py.detach(|| calibrate::poisson_gaussian_sigma_rdp(epsilon, delta, steps, sample_rate, &orders))
        .map_err(acc)
}

/// Smallest noise multiplier z = σ/Δ such that `steps` Poisson-subsampled Gaussian steps
/// with rate q are (ε, δ)-DP by the numerical PLD accountant (FFT composition, pessimistic
/// connect-the-dots discretisation; both add/remove directions, the worse one). Tighter than
/// the RDP calibration. Add/remove relation.
#[pyfunction]
fn poisson_gaussian_sigma_pld(
    py: Python<'_>,
    epsilon: f64,
    delta: f64,
    steps: u64,
    sample_rate: f64,
) -> PyResult<f64> {
    py.detach(|| {
        dpinfer_accountants::pld_numeric::poisson_gaussian_sigma(
            epsilon,
            delta,
            steps,
            sample_rate,
            dpinfer_accountants::pld_numeric::Discretisation::default(),
        )
    })
    .map_err(acc)
}

/// DP-penalty maximum iterations (thesis Thm 6 zCDP / Thm 7 PLD) for noise τ, n rows,
/// exponent a. Replace-one relation.
#[pyfunction]
#[pyo3(signature = (epsilon, delta, tau, n, a, accountant = "pld"))]
fn dp_penalty_max_steps(
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: u64,
    a: f64,
    accountant: &str,
) -> PyResult<u64> {
    if pld_or_zcdp(accountant)? == Method::Zcdp {
        calibrate::dp_penalty_max_steps_zcdp(epsilon, delta, tau, n, a)
    } else {
        calibrate::dp_penalty_max_steps_pld(epsilon, delta, tau, n, a)
    }
    .map_err(acc)
}

/// DP-HMC maximum iterations (thesis §5.2) for log-likelihood noise τ_l, gradient noise
/// τ_g, n rows and L leapfrog steps.
#[pyfunction]
#[pyo3(signature = (epsilon, delta, tau_l, tau_g, n, leapfrog, accountant = "pld"))]
#[allow(clippy::too_many_arguments)]
fn dp_hmc_max_steps(
    epsilon: f64,
    delta: f64,
    tau_l: f64,
    tau_g: f64,
    n: u64,
    leapfrog: u64,
    accountant: &str,
) -> PyResult<u64> {
    if pld_or_zcdp(accountant)? == Method::Zcdp {
        calibrate::dp_hmc_max_steps_zcdp(epsilon, delta, tau_l, tau_g, n, leapfrog)
    } else {
        calibrate::dp_hmc_max_steps_pld(epsilon, delta, tau_l, tau_g, n, leapfrog)
    }
    .map_err(acc)
}

/// DP-Barker maximum iterations (thesis Thm 8) for batch |B| of n rows; returns (k, order).
#[pyfunction]
#[pyo3(signature = (epsilon, delta, batch, n, max_order = 1024))]
fn dp_barker_max_steps(
    epsilon: f64,
    delta: f64,
    batch: u64,
    n: u64,
    max_order: u64,
) -> PyResult<(u64, u64)> {
    calibrate::dp_barker_max_steps(epsilon, delta, batch, n, max_order).map_err(acc)
}

/// One release written in the event grammar of ``dpinfer account --event``,
/// ``kind:key=value,…`` (e.g. ``"gaussian:sigma=1,poisson=0.01,count=10000"``), as an
/// :class:`Event`: the base mechanism, inside its sampling node (``poisson=q`` or
/// ``wor=batch/population``), inside ``Event.self_composed(…, count)`` when ``count`` is not
/// 1. Syntax errors raise ``InvalidParameterError`` whose ``name`` is the key at fault
/// (``None`` for an unknown kind); parameter values are checked when the event is composed.
#[pyfunction]
fn parse_event(text: &str) -> PyResult<PyEvent> {
    let spec: EventSpec = text.parse().map_err(|e: ParseEventError| {
        let mut msg = e.to_string();
        if let Some(src) = core::error::Error::source(&e) {
            msg = format!("{msg}: {src}");
        }
        invalid(e.key().unwrap_or("event"), None, msg)
    })?;
    let (event, count) = spec.to_pair();
    if count == 1 {
        PyEvent::new(event)
    } else {
        PyEvent::new(EventBuf::SelfComposed {
            event: Box::new(event),
            count,
        })
    }
}

/// The event grammar's canonical text of ``event`` (the inverse of :func:`parse_event`):
/// a grammar kind, optionally inside one sampling node and one ``self_composed``. Other
/// trees (compositions, nested sampling) raise ``UnsupportedEventError``.
#[pyfunction]
fn format_event(event: &PyEvent) -> PyResult<String> {
    let spec = match &*event.node {
        EventBuf::SelfComposed { event, count } => EventSpec::from_event(event, *count),
        other => EventSpec::from_event(other, 1),
    };
    spec.map(|s| s.to_string()).map_err(acc)
}

/// The crate's default RDP orders (34 orders from 1.25 to 256).
#[pyfunction]
fn default_rdp_orders() -> Vec<f64> {
    DEFAULT_ORDERS.to_vec()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyEvent>()?;
    m.add_class::<PyReport>()?;
    m.add_class::<PyRdpAccountant>()?;
    m.add_class::<PyPldAccountant>()?;
    m.add_class::<PyZcdpAccountant>()?;
    m.add_class::<PyPureAccountant>()?;
    m.add_class::<PyApproxAccountant>()?;
    m.add_class::<PyBudgetFilter>()?;
    m.add_function(wrap_pyfunction!(rdp_to_epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(rdp_to_delta, m)?)?;
    m.add_function(wrap_pyfunction!(zcdp_to_epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(rho_for_epsilon_delta, m)?)?;
    m.add_function(wrap_pyfunction!(max_pld_mu, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_sigma, m)?)?;
    m.add_function(wrap_pyfunction!(poisson_gaussian_sigma_rdp, m)?)?;
    m.add_function(wrap_pyfunction!(poisson_gaussian_sigma_pld, m)?)?;
    m.add_function(wrap_pyfunction!(dp_penalty_max_steps, m)?)?;
    m.add_function(wrap_pyfunction!(dp_hmc_max_steps, m)?)?;
    m.add_function(wrap_pyfunction!(dp_barker_max_steps, m)?)?;
    m.add_function(wrap_pyfunction!(default_rdp_orders, m)?)?;
    m.add_function(wrap_pyfunction!(parse_event, m)?)?;
    m.add_function(wrap_pyfunction!(format_event, m)?)?;
    Ok(())
}
