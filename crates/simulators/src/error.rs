//! The crate's error type.

use core::fmt;

use dpinfer_math::check::{self, ParamError};

/// Everything that can go wrong when building or running a prior, simulator or row likelihood.
///
/// Payloads hold *parameters* (names, dimensions, indices of parameters), never data values or
/// per-record quantities, so an error can be shown without leaking private data.
///
/// Failures are split as in nuts-rs (`LogpError::is_recoverable`): a **recoverable** failure
/// ([`SimError::is_recoverable`] is `true`, e.g. a degenerate draw or an event cap reached for
/// one θ) should be treated by a sampler as a rejection of that proposal; every other variant is
/// **fatal** (a programming or configuration error) and should stop the sampler.
#[derive(Copy, Clone, PartialEq, Debug)]
#[non_exhaustive]
pub enum SimError {
    /// A slice had the wrong length (θ, output buffer, row buffer …).
    DimensionMismatch {
        /// What the slice is (`"theta"`, `"out"`, …).
        what: &'static str,
        /// Required length.
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// A constructor parameter is NaN, infinite, or outside its valid range.
    InvalidParameter {
        /// Parameter name as in the docs.
        name: &'static str,
        /// The rejected value (a model setting, never a data value).
        value: f64,
    },
    /// A size/count parameter is invalid (zero, or too large to be represented).
    InvalidSize {
        /// Parameter name as in the docs.
        name: &'static str,
        /// The rejected value.
        value: u64,
    },
    /// θ lies outside the support of the model (e.g. a negative rate). Recoverable: a sampler
    /// should reject the proposal.
    OutsideSupport {
        /// Index of the first offending coordinate of θ.
        index: usize,
    },
    /// The simulation produced no usable output for this θ (e.g. an event cap was reached, or a
    /// process died out where the model needs it alive). Recoverable: reject this θ.
    Degenerate {
        /// Short static description of what degenerated.
        what: &'static str,
    },
    /// A rejection loop (e.g. a truncated prior) exceeded its attempt budget. Fatal: the
    /// truncation region has (numerically) no mass for these settings.
    TooManyAttempts {
        /// The attempt budget that was exhausted.
        attempts: u64,
    },
    /// The incremental simulation was asked for more observation blocks than it has.
    Exhausted,
    /// A failure reported by a user-defined model. `recoverable` has the meaning above.
    Model {
        /// Model-defined code.
        code: u32,
        /// Whether the sampler may continue (reject this θ).
        recoverable: bool,
    },
}

impl SimError {
    /// `true` when a sampler should treat the failure as a rejection of the current θ and carry
    /// on; `false` when it should stop.
    ///
    /// ```
    /// use dpinfer_simulators::SimError;
    /// assert!(SimError::Degenerate { what: "extinct" }.is_recoverable());
    /// assert!(!SimError::Exhausted.is_recoverable());
    /// ```
    #[must_use]
    pub const fn is_recoverable(&self) -> bool {
        match self {
            Self::OutsideSupport { .. } | Self::Degenerate { .. } => true,
            Self::Model { recoverable, .. } => *recoverable,
            Self::DimensionMismatch { .. }
            | Self::InvalidParameter { .. }
            | Self::InvalidSize { .. }
            | Self::TooManyAttempts { .. }
            | Self::Exhausted => false,
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DimensionMismatch {
                what,
                expected,
                got,
            } => {
                write!(f, "`{what}` has length {got}, expected {expected}")
            }
            Self::InvalidParameter { name, value } => {
                write!(f, "invalid parameter `{name}` = {value:?}")
            }
            Self::InvalidSize { name, value } => write!(f, "invalid size `{name}` = {value}"),
            Self::OutsideSupport { index } => {
                write!(
                    f,
                    "parameter vector outside the support (coordinate {index})"
                )
            }
            Self::Degenerate { what } => write!(f, "degenerate simulation: {what}"),
            Self::TooManyAttempts { attempts } => {
                write!(f, "rejection sampling gave up after {attempts} attempts")
            }
            Self::Exhausted => f.write_str("incremental simulation has no more observations"),
            Self::Model { code, recoverable } => {
                let kind = if *recoverable { "recoverable" } else { "fatal" };
                write!(f, "{kind} model failure (code {code})")
            }
        }
    }
}

impl core::error::Error for SimError {}

/// Checks a slice length; the common first line of every trait method.
///
/// # Errors
/// [`SimError::DimensionMismatch`] when `got != expected`.
#[inline]
pub(crate) const fn check_len(
    what: &'static str,
    expected: usize,
    got: usize,
) -> Result<(), SimError> {
    if expected == got {
        Ok(())
    } else {
        Err(SimError::DimensionMismatch {
            what,
            expected,
            got,
        })
    }
}

/// A rejected parameter is a [`SimError::InvalidParameter`] (the validators are
/// `dpinfer_math::check`, shared by the workspace).
impl From<ParamError> for SimError {
    fn from(e: ParamError) -> Self {
        Self::InvalidParameter {
            name: e.name,
            value: e.value,
        }
    }
}

/// Validates a finite parameter ([`check::finite`]).
pub(crate) fn finite(name: &'static str, value: f64) -> Result<f64, SimError> {
    Ok(check::finite(name, value)?)
}

/// Largest accepted clip bound: sums of up to 2⁶⁴ clipped rows stay finite.
pub(crate) const MAX_CLIP_BOUND: f64 = 1e250;

/// Validates a clip bound `b ∈ (0, 1e250]`.
pub(crate) fn clip_bound(b: f64) -> Result<f64, SimError> {
    if b > 0.0 && b <= MAX_CLIP_BOUND {
        Ok(b)
    } else {
        Err(SimError::InvalidParameter {
            name: "b",
            value: b,
        })
    }
}

/// θ must be finite for the likelihood methods (a parameter check, never a data check).
pub(crate) fn finite_theta(theta: &[f64]) -> Result<(), SimError> {
    match theta.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(SimError::OutsideSupport { index }),
        None => Ok(()),
    }
}

/// θ of length `dim`, all finite: [`check_len`] then [`finite_theta`].
pub(crate) fn finite_theta_of(dim: usize, theta: &[f64]) -> Result<(), SimError> {
    check_len("theta", dim, theta.len())?;
    finite_theta(theta)
}

/// θ and θ′ of length `dim`, all finite: both lengths first (θ, then θ′), then both values,
/// the order the likelihood-ratio methods report errors in.
pub(crate) fn finite_theta_pair(
    dim: usize,
    theta: &[f64],
    theta_new: &[f64],
) -> Result<(), SimError> {
    check_len("theta", dim, theta.len())?;
    check_len("theta_new", dim, theta_new.len())?;
    finite_theta(theta)?;
    finite_theta(theta_new)
}

/// Validates a finite, strictly positive parameter ([`check::positive`]).
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64, SimError> {
    Ok(check::positive(name, value)?)
}
