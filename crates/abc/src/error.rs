//! The crate's error type.

use core::fmt;

/// Everything that can go wrong when building or stepping an ABC sampler.
///
/// Errors carry parameter names and parameter values (ε, δ, σ, sizes), never private data or
/// values derived from it (distances to the observed data are never reported).
#[derive(Copy, Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AbcError {
    /// A numeric parameter is NaN, infinite, or outside its valid range.
    InvalidParameter {
        /// Which parameter.
        name: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// A count or size parameter is outside its valid range (for example zero particles).
    InvalidCount {
        /// Which parameter.
        name: &'static str,
        /// The rejected value.
        value: usize,
    },
    /// An input slice is empty where at least one element is needed.
    Empty {
        /// Which input.
        name: &'static str,
    },
    /// Two inputs that must agree in length do not.
    LengthMismatch {
        /// Which input.
        name: &'static str,
        /// The length that was expected.
        expected: usize,
        /// The length that was found.
        found: usize,
    },
    /// All importance weights are zero (every log-weight is −∞), so nothing can be normalised.
    ZeroTotalWeight,
    /// A public input (parameter draw, simulated summary, log-weight) is NaN or +∞.
    NonFiniteValue {
        /// Which input.
        name: &'static str,
    },
    /// The covariance of the particle population is not positive definite even after jitter.
    DegenerateCovariance,
    /// A sampler was stepped after it had already finished.
    Finished,
    /// The simulation budget was exhausted before the sampler could finish.
    BudgetExhausted {
        /// The budget (number of simulations) that was spent.
        budget: u64,
    },
    /// The prior or the simulator failed fatally; carries the error it reported (a
    /// recoverable simulator failure is a rejection, never this).
    Model(dpinfer_simulators::SimError),
    /// `tries` consecutive θ drawn for one row of a pairs table were each rejected by the
    /// simulator (recoverable failures, [`dpinfer_simulators::SimError::is_recoverable`]):
    /// the simulator can (numerically) not run the proposals it is given.
    Redraws {
        /// How many θ were drawn.
        tries: u64,
    },
    /// The privacy accountant rejected a computation (parameters out of its range).
    Accounting,
    /// The privacy mechanism refused: it rejected the noise parameters a pass derived from its
    /// settings (e.g. a Laplace scale `(c+1)Δ/ε` outside the mechanism's grid range for an
    /// extreme ε), or its noise generator failed while stepping. Carries the mechanism's own
    /// error (parameter name and reason) and, when the pass knows it, the setting the rejected
    /// parameter chiefly follows from, with that setting's value.
    Mechanism {
        /// The pass setting (`epsilon_total`, `epsilon_abc`, `sensitivity`, `clip`, `bound`)
        /// and its value the rejected parameter follows from; `None` when the failure is
        /// not about a setting (the noise RNG failed).
        setting: Option<(&'static str, f64)>,
        /// What the mechanism reported.
        error: dpinfer_mechanisms::MechanismError,
    },
    /// A population is (nearly) degenerate in coordinate `coordinate` (0-based): its weighted
    /// standard deviation is below `1e-8` of its scale, or it is (almost) a linear function of
    /// the other coordinates, so a perturbation kernel fitted to it would not move.
    DegeneratePopulation {
        /// The coordinate (0-based).
        coordinate: usize,
    },
    /// `tries` consecutive kernel proposals fell outside the prior's support.
    SupportMissed {
        /// How many proposals were drawn.
        tries: u64,
    },
    /// The public setup of a random-feature summary failed (`summary::RffSummary::setup`).
    Setup(SetupFailure),
}

/// Why the public setup of a random-feature summary failed (`summary::RffSummary::setup`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum SetupFailure {
    /// The prior or the simulator failed fatally.
    Model(dpinfer_simulators::SimError),
    /// `summary::MAX_SETUP_REDRAWS` consecutive θ the simulator could not run.
    Redraws {
        /// How many θ were drawn.
        tries: usize,
    },
    /// The median heuristic or the feature map refused the data set.
    Distance(dpinfer_distances::DistanceError),
}

impl fmt::Display for SetupFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Model(e) => write!(f, "simulation: {e}"),
            Self::Redraws { tries } => write!(
                f,
                "{tries} consecutive prior draws the simulator could not run"
            ),
            Self::Distance(e) => write!(f, "median heuristic bandwidth: {e}"),
        }
    }
}

impl fmt::Display for AbcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidParameter { name, value } => {
                write!(f, "invalid parameter `{name}` = {value}")
            }
            Self::InvalidCount { name, value } => write!(f, "invalid count `{name}` = {value}"),
            Self::Empty { name } => write!(f, "input `{name}` is empty"),
            Self::LengthMismatch {
                name,
                expected,
                found,
            } => write!(f, "input `{name}` has length {found}, expected {expected}"),
            Self::ZeroTotalWeight => f.write_str("all importance weights are zero"),
            Self::NonFiniteValue { name } => write!(f, "input `{name}` holds a NaN or +inf"),
            Self::DegenerateCovariance => {
                f.write_str("particle covariance is not positive definite")
            }
            Self::Finished => f.write_str("the sampler has already finished"),
            Self::BudgetExhausted { budget } => {
                write!(f, "simulation budget of {budget} exhausted")
            }
            Self::Model(e) => write!(f, "the prior or simulator failed: {e}"),
            Self::Redraws { tries } => write!(
                f,
                "{tries} consecutive θ draws of one row the simulator could not run"
            ),
            Self::Accounting => f.write_str("the privacy accountant rejected the parameters"),
            Self::Mechanism {
                setting: Some((name, value)),
                error,
            } => write!(
                f,
                "the privacy mechanism rejected the noise parameters `{name}` = {value:?} \
                 gives: {error}"
            ),
            Self::Mechanism {
                setting: None,
                error,
            } => write!(f, "the privacy mechanism failed: {error}"),
            Self::DegeneratePopulation { coordinate } => write!(
                f,
                "the population is degenerate in θ{}: its particles are (nearly) identical or \
                 a linear function of the other coordinates, so the perturbation kernel would \
                 not move",
                coordinate + 1
            ),
            Self::SupportMissed { tries } => write!(
                f,
                "{tries} consecutive kernel proposals fell outside the prior's support"
            ),
            Self::Setup(e) => write!(f, "public random-feature setup: {e}"),
        }
    }
}

impl core::error::Error for AbcError {}

/// A rejected parameter is an [`AbcError::InvalidParameter`] (the validators are
/// `dpinfer_math::check`, shared by the workspace).
impl From<dpinfer_math::check::ParamError> for AbcError {
    fn from(e: dpinfer_math::check::ParamError) -> Self {
        Self::InvalidParameter {
            name: e.name,
            value: e.value,
        }
    }
}

/// The mechanism's `error` while a pass builds it from its settings, as
/// [`AbcError::Mechanism`] attributed to the setting the rejected parameter follows from:
/// `from` lists (mechanism parameter name, setting name, setting value); a parameter not
/// listed (or an error naming none) is attributed to no setting.
#[cfg(feature = "alloc")]
pub(crate) fn mechanism_rejected(
    error: dpinfer_mechanisms::MechanismError,
    from: &[(&str, &'static str, f64)],
) -> AbcError {
    use dpinfer_mechanisms::MechanismError as M;
    let param = match error {
        M::NonFinite { param }
        | M::NotPositive { param }
        | M::OutOfRange { param }
        | M::EmptyInterval { param } => Some(param),
        _ => None,
    };
    let setting = param
        .and_then(|p| from.iter().find(|f| f.0 == p))
        .map(|f| (f.1, f.2));
    AbcError::Mechanism { setting, error }
}

/// The mechanism's `error` while a pass steps (no setting to blame: the noise RNG failed).
#[cfg(feature = "alloc")]
pub(crate) fn mechanism_failed(error: dpinfer_mechanisms::MechanismError) -> AbcError {
    AbcError::Mechanism {
        setting: None,
        error,
    }
}

/// Checks `x` is finite and `> 0`.
pub(crate) fn positive(name: &'static str, x: f64) -> Result<f64, AbcError> {
    Ok(dpinfer_math::check::positive(name, x)?)
}

/// Checks `x` is finite and `>= 0`.
pub(crate) fn non_negative(name: &'static str, x: f64) -> Result<f64, AbcError> {
    Ok(dpinfer_math::check::non_negative(name, x)?)
}

/// Checks `x` is finite.
pub(crate) fn finite(name: &'static str, x: f64) -> Result<f64, AbcError> {
    Ok(dpinfer_math::check::finite(name, x)?)
}

/// Checks a length: [`AbcError::LengthMismatch`] naming `name` unless `found == expected`.
pub(crate) fn check_len(name: &'static str, expected: usize, found: usize) -> Result<(), AbcError> {
    if found == expected {
        Ok(())
    } else {
        Err(AbcError::LengthMismatch {
            name,
            expected,
            found,
        })
    }
}

/// The θ dimension a sampler runs at: the prior's, which must be non-zero
/// ([`AbcError::InvalidCount`]) and equal the simulator's `param_dim`
/// ([`AbcError::LengthMismatch`]). (Only the `alloc` samplers, rejection and SMC-ABC, use it.)
#[cfg(feature = "alloc")]
pub(crate) fn model_dim(prior_dim: usize, sim_param_dim: usize) -> Result<usize, AbcError> {
    if prior_dim == 0 {
        return Err(AbcError::InvalidCount {
            name: "dim",
            value: 0,
        });
    }
    check_len("simulator param_dim", prior_dim, sim_param_dim)?;
    Ok(prior_dim)
}
