//! The crate's error type: one `#[non_exhaustive]` enum; the tensor library's own errors are
//! carried as text so that its types never appear in this crate's API.

use core::fmt;

/// Everything that can go wrong in this crate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NeuralError {
    /// A dimension is zero or larger than the crate's limit.
    Dimension {
        /// Which dimension (`target_dim`, `context_dim`, `hidden`, …).
        name: &'static str,
        /// The value given.
        value: usize,
        /// The largest accepted value.
        max: usize,
    },
    /// A numeric setting is NaN, infinite or outside its range.
    Setting {
        /// The setting, as named in the settings struct.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The accepted range, in words.
        expected: &'static str,
    },
    /// A buffer has the wrong length.
    Length {
        /// Which buffer.
        name: &'static str,
        /// Its expected length.
        expected: usize,
        /// Its length.
        got: usize,
    },
    /// A value in a data row is NaN or infinite.
    NonFinite {
        /// Which buffer (`target`, `context`).
        name: &'static str,
        /// The row.
        row: usize,
    },
    /// A row weight is not a finite positive number.
    Weight {
        /// The row.
        row: usize,
        /// The weight given.
        value: f64,
    },
    /// A round has too few simulated pairs to hold out a validation set.
    TooFewPairs {
        /// Pairs in the round.
        pairs: usize,
        /// The least accepted.
        needed: usize,
    },
    /// Training produced a NaN or infinite loss (too large a learning rate, or data far
    /// outside the standardisation fitted in an earlier round).
    Diverged {
        /// The epoch (from 0) in which it happened.
        epoch: usize,
    },
    /// A file could not be read or written.
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A file is not an estimator saved by this crate, or is damaged.
    Format {
        /// What is wrong with it.
        message: String,
    },
    /// The confidential-data simulator failed (a fatal error of the model), or every
    /// simulation of a round was rejected.
    Simulation {
        /// The round (from 1).
        round: usize,
        /// What went wrong.
        message: String,
    },
    /// The mechanism's noise map `τ(u, s)` refused a simulated statistic or the observation.
    Mechanism {
        /// The mechanism's message.
        message: String,
    },
    /// The prior could not be sampled or an MCMC kernel refused its settings.
    Sampler {
        /// Which step (`prior`, `mcmc`).
        stage: &'static str,
        /// The message.
        message: String,
    },
    /// Too few draws of the estimated posterior fell in the prior's support to truncate it.
    Truncation {
        /// Draws accepted.
        accepted: usize,
        /// Draws made.
        drawn: usize,
    },
    /// The tensor library reported an error (a bug in this crate if it ever happens).
    Backend {
        /// The library's message.
        message: String,
    },
}

impl fmt::Display for NeuralError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dimension { name, value, max } => {
                write!(f, "{name} = {value} is invalid: must be in 1..={max}")
            }
            Self::Setting {
                name,
                value,
                expected,
            } => write!(f, "{name} = {value} is invalid: must be {expected}"),
            Self::Length {
                name,
                expected,
                got,
            } => write!(f, "{name} has {got} values, expected {expected}"),
            Self::NonFinite { name, row } => write!(f, "{name} row {row} is NaN or infinite"),
            Self::Weight { row, value } => {
                write!(f, "weight of row {row} is {value}: must be finite and > 0")
            }
            Self::TooFewPairs { pairs, needed } => write!(
                f,
                "a round of {pairs} pairs is too small: at least {needed} are needed to hold out a validation set"
            ),
            Self::Diverged { epoch } => {
                write!(f, "training diverged (non-finite loss) in epoch {epoch}")
            }
            Self::Io { path, message } => write!(f, "{path}: {message}"),
            Self::Format { message } => write!(f, "not a dpinfer-neural estimator file: {message}"),
            Self::Simulation { round, message } => {
                write!(f, "simulation failed in round {round}: {message}")
            }
            Self::Mechanism { message } => write!(f, "noise map: {message}"),
            Self::Sampler { stage, message } => write!(f, "{stage}: {message}"),
            Self::Truncation { accepted, drawn } => write!(
                f,
                "only {accepted} of {drawn} posterior draws fell in the prior's support: \
                 the estimate puts almost no mass there"
            ),
            Self::Backend { message } => write!(f, "tensor library error: {message}"),
        }
    }
}

impl core::error::Error for NeuralError {}

/// The crate's result type.
pub type Result<T, E = NeuralError> = core::result::Result<T, E>;

/// Wraps the tensor library's error (its type stays inside the crate).
#[allow(clippy::needless_pass_by_value)]
pub(crate) fn backend(e: candle_core::Error) -> NeuralError {
    NeuralError::Backend {
        message: e.to_string(),
    }
}
