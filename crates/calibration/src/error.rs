//! The crate's typed errors.

use core::fmt;

use dpinfer_math::check::ParamError;

/// An invalid setting, an inconsistent set of replicate results, or a replicate whose problem
/// gave unusable output. Never carries data values, only sizes, indices and parameter names.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CalibrationError {
    /// A numeric parameter outside its domain (named; the value is a setting, not data).
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A size or count outside its domain (named).
    InvalidSize {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: u64,
    },
    /// A slice of the wrong length.
    LengthMismatch {
        /// What was measured.
        name: &'static str,
        /// The length required.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// Replicate `index` produced a non-finite θ, reference point or posterior draw.
    NonFinite {
        /// The replicate.
        index: u64,
        /// `"theta"`, `"reference"` or `"draws"`.
        what: &'static str,
    },
    /// Two results for the same replicate that differ (identical duplicates are merged).
    Conflict {
        /// The replicate.
        index: u64,
    },
    /// Results made with different settings (dimension or number of draws) cannot be merged or
    /// summarised together.
    Mismatch {
        /// `"dim"` or `"draws"`.
        what: &'static str,
    },
    /// A summary needs at least this many replicates.
    TooFewReplicates {
        /// The minimum.
        needed: usize,
        /// The number given.
        found: usize,
    },
}

impl fmt::Display for CalibrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidParameter { name, value } => write!(f, "invalid {name}: {value}"),
            Self::InvalidSize { name, value } => write!(f, "invalid {name}: {value}"),
            Self::LengthMismatch {
                name,
                expected,
                found,
            } => write!(f, "{name} has length {found}, expected {expected}"),
            Self::NonFinite { index, what } => {
                write!(f, "replicate {index}: non-finite {what}")
            }
            Self::Conflict { index } => {
                write!(f, "two different results for replicate {index}")
            }
            Self::Mismatch { what } => {
                write!(
                    f,
                    "replicate results disagree on {what} (made with other settings)"
                )
            }
            Self::TooFewReplicates { needed, found } => {
                write!(f, "{found} replicates; at least {needed} needed")
            }
        }
    }
}

impl core::error::Error for CalibrationError {}

/// A rejected parameter is a [`CalibrationError::InvalidParameter`] (the validators are
/// `dpinfer_math::check`, shared by the workspace).
impl From<ParamError> for CalibrationError {
    fn from(e: ParamError) -> Self {
        Self::InvalidParameter {
            name: e.name,
            value: e.value,
        }
    }
}

/// The error of one replicate: the engine's own check, or the problem's error.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ReplicateError<E> {
    /// The engine rejected a setting or the problem's output.
    Calibration(CalibrationError),
    /// The problem (prior, release or sampler) failed in replicate `index`.
    Problem {
        /// The replicate.
        index: u64,
        /// The problem's error.
        error: E,
    },
}

impl<E> From<CalibrationError> for ReplicateError<E> {
    fn from(e: CalibrationError) -> Self {
        Self::Calibration(e)
    }
}

impl<E: fmt::Display> fmt::Display for ReplicateError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Calibration(e) => e.fmt(f),
            Self::Problem { index, error } => write!(f, "replicate {index}: {error}"),
        }
    }
}

impl<E: core::error::Error + 'static> core::error::Error for ReplicateError<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Calibration(e) => Some(e),
            Self::Problem { error, .. } => Some(error),
        }
    }
}
