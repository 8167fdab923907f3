//! The crate's error type.

use core::fmt;

use dpinfer_math::check::{self, ParamError};

/// Everything that can go wrong when building or running a mechanism.
///
/// Errors carry public parameters only (scales, sizes, bounds), never data values, so
/// they can be logged without leaking anything private.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MechanismError {
    /// A real parameter is NaN or ±∞.
    NonFinite {
        /// Which parameter.
        param: &'static str,
    },
    /// A parameter must be `> 0` (or `≥ 0` for sensitivities) and is not.
    NotPositive {
        /// Which parameter.
        param: &'static str,
    },
    /// A parameter is outside the documented range of the algorithm.
    OutOfRange {
        /// Which parameter.
        param: &'static str,
    },
    /// A lower bound is not below its upper bound.
    EmptyInterval {
        /// Which pair of bounds.
        param: &'static str,
    },
    /// An integer denominator or range size is zero.
    ZeroDenominator,
    /// Slice lengths do not match (or a slice that must be non-empty is empty).
    LengthMismatch {
        /// The expected length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// Exact integer arithmetic would overflow for these parameters. The sampler stops
    /// and returns this instead of resampling, so the output distribution is never
    /// silently truncated.
    Overflow,
    /// The caller's fallible noise RNG reported an entropy failure; no output is released.
    Entropy,
    /// A constant-work sampler used all its trials without accepting (probability is
    /// documented per function); no output is released.
    TrialsExhausted,
    /// The privacy budget of a stateful mechanism (e.g. the sparse vector's `c`
    /// positive answers) is used up; no further answers are released.
    BudgetExhausted,
}

impl fmt::Display for MechanismError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NonFinite { param } => write!(f, "parameter `{param}` is NaN or infinite"),
            Self::NotPositive { param } => write!(f, "parameter `{param}` must be positive"),
            Self::OutOfRange { param } => {
                write!(f, "parameter `{param}` is outside the supported range")
            }
            Self::EmptyInterval { param } => {
                write!(f, "bounds `{param}`: lower bound must be below upper bound")
            }
            Self::ZeroDenominator => f.write_str("zero denominator or empty integer range"),
            Self::LengthMismatch { expected, found } => {
                write!(f, "length mismatch: expected {expected}, found {found}")
            }
            Self::Overflow => f.write_str("exact integer arithmetic would overflow"),
            Self::Entropy => f.write_str("the noise RNG failed to produce entropy"),
            Self::TrialsExhausted => f.write_str("constant-work sampler exhausted its trials"),
            Self::BudgetExhausted => f.write_str("the mechanism's privacy budget is used up"),
        }
    }
}

impl core::error::Error for MechanismError {}

/// A rejected parameter: NaN/±∞ is [`MechanismError::NonFinite`], anything else out of
/// range [`MechanismError::NotPositive`] (the validators are `dpinfer_math::check`).
impl From<ParamError> for MechanismError {
    fn from(e: ParamError) -> Self {
        if e.non_finite() {
            Self::NonFinite { param: e.name }
        } else {
            Self::NotPositive { param: e.name }
        }
    }
}

/// Validates that `x` is finite and `> 0` ([`check::positive`]).
pub(crate) fn positive(param: &'static str, x: f64) -> Result<f64, MechanismError> {
    Ok(check::positive(param, x)?)
}

/// Validates that `x` is finite and `≥ 0` (−0 is accepted and returned as +0;
/// [`check::non_negative`]).
pub(crate) fn non_negative(param: &'static str, x: f64) -> Result<f64, MechanismError> {
    Ok(check::non_negative(param, x)?.abs())
}

/// Validates that `x` is finite ([`check::finite`]).
pub(crate) fn finite(param: &'static str, x: f64) -> Result<f64, MechanismError> {
    Ok(check::finite(param, x)?)
}
