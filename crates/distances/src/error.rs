//! The crate's error type.

use core::fmt;

/// Why a distance, kernel or sensitivity could not be built or evaluated.
///
/// Every variant carries only shapes and parameter positions, never data values, so an error
/// message cannot leak a private record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DistanceError {
    /// A data set has no rows (or a weight vector has no entries).
    Empty,
    /// The row dimension is zero.
    ZeroDimension,
    /// A row-major buffer's length is not a multiple of its dimension.
    RaggedRows {
        /// Buffer length.
        len: usize,
        /// Declared dimension.
        dim: usize,
    },
    /// Two inputs that must have the same dimension (or length) do not.
    DimensionMismatch {
        /// The dimension the first argument fixed.
        expected: usize,
        /// The dimension found.
        found: usize,
    },
    /// Two data sets that must have the same number of rows do not.
    RowCountMismatch {
        /// Rows of the first set.
        left: usize,
        /// Rows of the second set.
        right: usize,
    },
    /// An estimator needs at least `needed` rows per set.
    TooFewRows {
        /// Minimum number of rows.
        needed: usize,
        /// Rows supplied.
        found: usize,
    },
    /// A kernel bandwidth is NaN, infinite, not positive, or so small/large that
    /// `1/(2 l²)` is not a finite positive number.
    InvalidBandwidth,
    /// A kernel bound `B_k` is NaN, infinite or not positive.
    InvalidKernelBound,
    /// A weight is NaN, infinite or negative (index of the first offending weight).
    InvalidWeight {
        /// Position of the weight.
        index: usize,
    },
    /// A clipping bound `C` is NaN, infinite or not positive.
    InvalidClip,
    /// A data-set size used in a sensitivity is zero (or too small for the estimator).
    InvalidSize,
    /// Random-feature frequencies are empty, ragged or not finite.
    InvalidFrequencies,
    /// A caller buffer is too short.
    BufferTooSmall {
        /// Length needed.
        needed: usize,
        /// Length supplied.
        found: usize,
    },
    /// A subsample index is out of range.
    IndexOutOfRange {
        /// Offending index.
        index: usize,
        /// Number of rows.
        len: usize,
    },
    /// The median heuristic produced zero or a non-finite bandwidth (all distances equal
    /// zero, or the simulated data hold non-finite values). Only public (simulated) data
    /// reach this error.
    DegenerateBandwidth,
    /// A caller-defined (unbounded) kernel produced a non-finite value.
    NonFiniteKernel,
    /// A sample value or statistic is NaN or infinite where a finite value is required
    /// (the two-sample KS functions).
    NonFiniteValue,
    /// A sensitivity was asked for under a neighbouring relation its bound was not proved
    /// for (see [`crate::Sensitivity::value_for`]).
    IncompatibleRelation {
        /// The relation asked for.
        relation: crate::Neighbouring,
    },
    /// A stated sensitivity ([`crate::Sensitivity::declared`]) that is not finite and
    /// positive.
    InvalidSensitivity,
    /// A kernel version number that names no [`crate::KernelVersion`].
    UnknownKernelVersion {
        /// The number given.
        number: u32,
    },
    /// A rounding-allowance version number that names no [`crate::AllowanceVersion`].
    UnknownAllowanceVersion {
        /// The number given.
        number: u32,
    },
}

impl fmt::Display for DistanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => f.write_str("empty input"),
            Self::ZeroDimension => f.write_str("row dimension must be at least 1"),
            Self::RaggedRows { len, dim } => {
                write!(
                    f,
                    "buffer length {len} is not a multiple of dimension {dim}"
                )
            }
            Self::DimensionMismatch { expected, found } => {
                write!(f, "dimension mismatch: expected {expected}, found {found}")
            }
            Self::RowCountMismatch { left, right } => {
                write!(f, "row count mismatch: {left} vs {right}")
            }
            Self::TooFewRows { needed, found } => {
                write!(f, "need at least {needed} rows, found {found}")
            }
            Self::InvalidBandwidth => f.write_str(
                "bandwidth must be finite and positive with 1/(2 l^2) finite and positive",
            ),
            Self::InvalidKernelBound => f.write_str("kernel bound must be finite and positive"),
            Self::InvalidWeight { index } => {
                write!(f, "weight {index} must be finite and non-negative")
            }
            Self::InvalidClip => f.write_str("clipping bound must be finite and positive"),
            Self::InvalidSize => f.write_str("data-set size too small for this sensitivity"),
            Self::InvalidFrequencies => {
                f.write_str("random-feature frequencies must be non-empty, whole rows, finite")
            }
            Self::BufferTooSmall { needed, found } => {
                write!(f, "buffer too small: need {needed}, found {found}")
            }
            Self::IndexOutOfRange { index, len } => {
                write!(f, "index {index} out of range for {len} rows")
            }
            Self::DegenerateBandwidth => {
                f.write_str("median heuristic gave a zero or non-finite bandwidth")
            }
            Self::NonFiniteKernel => f.write_str("kernel produced a non-finite value"),
            Self::NonFiniteValue => f.write_str("a value is NaN or infinite"),
            Self::IncompatibleRelation { relation } => write!(
                f,
                "the sensitivity bound is not proved for the {relation} neighbouring relation"
            ),
            Self::InvalidSensitivity => f.write_str("sensitivity must be finite and positive"),
            Self::UnknownKernelVersion { number } => {
                write!(f, "kernel version {number} does not exist (1 or 2)")
            }
            Self::UnknownAllowanceVersion { number } => {
                write!(
                    f,
                    "rounding-allowance version {number} does not exist (1 or 2)"
                )
            }
        }
    }
}

impl core::error::Error for DistanceError {}
