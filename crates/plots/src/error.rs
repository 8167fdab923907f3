//! The crate's error type.

use core::fmt;

/// Why a plot could not be drawn from its inputs.
///
/// Variants name the input (`what`: `"samples"`, `"weights"`, `"truth"`, a series label …)
/// and a position, never a data value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlotError {
    /// An input that must hold at least one value is empty.
    Empty {
        /// Which input.
        what: String,
    },
    /// A value that must be finite is NaN or infinite.
    NonFinite {
        /// Which input.
        what: String,
        /// Position of the first offending value.
        index: usize,
    },
    /// A finite value beyond ±[`MAX_ABS`](crate::MAX_ABS): the axis span would overflow.
    TooLarge {
        /// Which input.
        what: String,
        /// Position of the first offending value.
        index: usize,
    },
    /// Two inputs that must have the same length do not.
    LengthMismatch {
        /// Which input.
        what: String,
        /// The length required.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A weight is NaN, infinite or negative.
    InvalidWeight {
        /// Position of the first offending weight.
        index: usize,
    },
    /// Every weight is zero: there is nothing to draw.
    ZeroWeights,
    /// The number of chains of a rank plot is zero or above
    /// [`MAX_CHAINS`](crate::MAX_CHAINS).
    InvalidChains {
        /// The number asked for.
        chains: usize,
    },
    /// More panels than a plot lays out readably (pair plots: at most
    /// [`MAX_PAIR_COLUMNS`](crate::MAX_PAIR_COLUMNS) columns).
    TooMany {
        /// Which input.
        what: String,
        /// The limit.
        max: usize,
        /// The number given.
        found: usize,
    },
    /// A prior density function returned NaN or a negative value (+∞ is allowed: it is
    /// drawn at the top of the frame).
    InvalidDensity {
        /// Position of the grid point (0 to 120 from the left edge of the panel).
        index: usize,
    },
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty { what } => write!(f, "{what} is empty"),
            Self::NonFinite { what, index } => {
                write!(f, "{what}[{index}] is NaN or infinite")
            }
            Self::TooLarge { what, index } => write!(
                f,
                "{what}[{index}] is beyond ±{:e}, too large to plot",
                crate::MAX_ABS
            ),
            Self::LengthMismatch {
                what,
                expected,
                found,
            } => write!(f, "{what} has {found} values, expected {expected}"),
            Self::InvalidWeight { index } => {
                write!(f, "weight {index} is NaN, infinite or negative")
            }
            Self::ZeroWeights => f.write_str("every weight is zero"),
            Self::InvalidChains { chains } => write!(
                f,
                "{chains} chains: a rank plot needs 1 to {} chains",
                crate::MAX_CHAINS
            ),
            Self::TooMany { what, max, found } => {
                write!(f, "{found} {what}, at most {max} can be plotted")
            }
            Self::InvalidDensity { index } => write!(
                f,
                "the prior density is NaN or negative at grid point {index}"
            ),
        }
    }
}

impl core::error::Error for PlotError {}

/// Checks that `values` is non-empty and every value is finite and within ±[`crate::MAX_ABS`].
pub(crate) fn finite_values(what: &str, values: &[f64]) -> Result<(), PlotError> {
    if values.is_empty() {
        return Err(PlotError::Empty { what: what.into() });
    }
    for (index, v) in values.iter().enumerate() {
        if !v.is_finite() {
            return Err(PlotError::NonFinite {
                what: what.into(),
                index,
            });
        }
    }
    bounded(what, values)
}

/// Checks that every finite value of `values` is within ±[`crate::MAX_ABS`] (non-finite values
/// pass: line charts and traces draw them as gaps).
pub(crate) fn bounded(what: &str, values: &[f64]) -> Result<(), PlotError> {
    match values
        .iter()
        .position(|v| v.abs() > crate::MAX_ABS && v.is_finite())
    {
        Some(index) => Err(PlotError::TooLarge {
            what: what.into(),
            index,
        }),
        None => Ok(()),
    }
}

/// Checks that `found` equals `expected`.
pub(crate) fn same_length(what: &str, expected: usize, found: usize) -> Result<(), PlotError> {
    if expected == found {
        Ok(())
    } else {
        Err(PlotError::LengthMismatch {
            what: what.into(),
            expected,
            found,
        })
    }
}

/// Checks weights: one per sample, each finite and non-negative, not all zero.
pub(crate) fn weights(samples: usize, weights: &[f64]) -> Result<(), PlotError> {
    same_length("weights", samples, weights.len())?;
    if let Some(index) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
        return Err(PlotError::InvalidWeight { index });
    }
    let total: f64 = weights.iter().sum();
    if total > 0.0 && total.is_finite() {
        Ok(())
    } else if total > 0.0 {
        // finite weights whose sum overflows
        Err(PlotError::TooLarge {
            what: "sum of the weights".into(),
            index: 0,
        })
    } else {
        Err(PlotError::ZeroWeights)
    }
}
