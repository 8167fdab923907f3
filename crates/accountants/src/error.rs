//! The crate's error type.

use core::fmt;
use core::ops::RangeBounds;

use dpinfer_math::check::{self, ParamError};

use crate::Neighbouring;

/// Everything that can go wrong in this crate.
///
/// Errors carry privacy *parameters* (ε, δ, σ, α, q, counts) and static names, never data.
/// The enum is `Copy` and `#[non_exhaustive]`: match with a wildcard arm.
///
/// ```
/// use dpinfer_accountants::{AccountantError, Zcdp};
/// assert!(matches!(Zcdp::new(f64::NAN), Err(AccountantError::InvalidParameter { .. })));
/// ```
#[derive(Copy, Clone, PartialEq, Debug)]
#[non_exhaustive]
pub enum AccountantError {
    /// A real-valued parameter was NaN, infinite, negative, zero where zero is invalid, or
    /// outside its documented range.
    InvalidParameter {
        /// Name of the parameter (`"sigma"`, `"delta"`, …).
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// An integer parameter (count, order, batch size, population) was out of range.
    InvalidCount {
        /// Name of the parameter.
        name: &'static str,
        /// The offending value.
        value: u64,
    },
    /// The event needs a different neighbouring relation than the accountant uses
    /// (Poisson sampling is analysed under add/remove, sampling without replacement under
    /// replace-one).
    IncompatibleRelation {
        /// The kind of event.
        event: &'static str,
        /// The accountant's relation.
        relation: Neighbouring,
    },
    /// This accountant cannot represent this event (e.g. a Gaussian in a pure-DP accountant).
    Unsupported {
        /// The kind of event.
        event: &'static str,
        /// The accountant or notion.
        accountant: &'static str,
    },
    /// An RDP grid was empty, unsorted, contained an order `≤ 1`, or two curves had
    /// different grids.
    InvalidGrid,
    /// Composition nested deeper than [`crate::MAX_EVENT_DEPTH`].
    TooDeep,
    /// The requested δ is not larger than the δ already spent by approximate-DP events.
    DeltaTooSmall {
        /// The requested total δ.
        requested: f64,
        /// The δ spent so far (sum of the events' δ).
        spent: f64,
    },
    /// The budget filter refused an event; nothing was recorded.
    BudgetExceeded {
        /// ε (at the filter's δ) the composition would have reached.
        epsilon: f64,
        /// The filter's ε budget.
        budget: f64,
    },
    /// A numerical routine (series, root search, bracketing) did not produce a
    /// trustworthy bound. Reported instead of a value that might under-state privacy loss.
    NumericalFailure {
        /// What failed.
        what: &'static str,
    },
    /// No parameter value meets the target (e.g. no σ yields the budget within range, or
    /// not even one step fits the budget).
    Infeasible {
        /// What was being calibrated.
        what: &'static str,
    },
}

/// Reals print in shortest round-trip form (`{:?}`: `1e-300`, `2.0`), never as a
/// 300-digit decimal.
impl fmt::Display for AccountantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidParameter { name, value } => {
                write!(f, "invalid parameter {name} = {value:?}")
            }
            Self::InvalidCount { name, value } => write!(f, "invalid count {name} = {value}"),
            Self::IncompatibleRelation { event, relation } => write!(
                f,
                "event {event} is not analysed under the {relation} neighbouring relation"
            ),
            Self::Unsupported { event, accountant } => {
                write!(f, "event {event} cannot be accounted by {accountant}")
            }
            Self::InvalidGrid => f.write_str(
                "RDP order grid must be non-empty, strictly increasing, orders > 1, and equal across curves",
            ),
            Self::TooDeep => f.write_str("event tree nested too deeply"),
            Self::DeltaTooSmall { requested, spent } => write!(
                f,
                "requested delta {requested:?} is not larger than the delta already spent {spent:?}"
            ),
            Self::BudgetExceeded { epsilon, budget } => write!(
                f,
                "budget exceeded: epsilon would be {epsilon:?} > budget {budget:?}; nothing recorded"
            ),
            Self::NumericalFailure { what } => write!(f, "numerical failure: {what}"),
            Self::Infeasible { what } => write!(f, "no feasible solution: {what}"),
        }
    }
}

impl core::error::Error for AccountantError {}

/// A rejected parameter is an [`AccountantError::InvalidParameter`] (the validators are
/// `dpinfer_math::check`, shared by the workspace).
impl From<ParamError> for AccountantError {
    fn from(e: ParamError) -> Self {
        Self::InvalidParameter {
            name: e.name,
            value: e.value,
        }
    }
}

/// Validates a finite, non-negative real ([`check::non_negative`]).
pub(crate) fn non_negative(name: &'static str, value: f64) -> Result<f64, AccountantError> {
    Ok(check::non_negative(name, value)?)
}

/// Validates a finite, strictly positive real ([`check::positive`]).
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64, AccountantError> {
    Ok(check::positive(name, value)?)
}

/// Validates a probability in the open interval `(0, 1)` ([`check::open_unit`]).
pub(crate) fn open_unit(name: &'static str, value: f64) -> Result<f64, AccountantError> {
    Ok(check::open_unit(name, value)?)
}

/// Validates a sampling rate in `(0, 1]` ([`check::rate`]).
pub(crate) fn rate(name: &'static str, value: f64) -> Result<f64, AccountantError> {
    Ok(check::rate(name, value)?)
}

/// Validates a probability in `[0, 1]` ([`check::probability`]).
pub(crate) fn probability(name: &'static str, value: f64) -> Result<f64, AccountantError> {
    Ok(check::probability(name, value)?)
}

/// Validates a count in `range`, else [`AccountantError::InvalidCount`] naming it.
pub(crate) fn count_in(
    name: &'static str,
    value: u64,
    range: impl RangeBounds<u64>,
) -> Result<u64, AccountantError> {
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(AccountantError::InvalidCount { name, value })
    }
}

/// Rejects NaN/±∞ *results* that would otherwise leak into an `Ok` (a numerical failure,
/// not a bad parameter).
pub(crate) fn finite(what: &'static str, value: f64) -> Result<f64, AccountantError> {
    check::finite(what, value).map_err(|_| AccountantError::NumericalFailure { what })
}

/// A name that does not parse as an [`crate::AccountantKind`], [`crate::Neighbouring`] or
/// [`crate::ConversionRule`] (`FromStr`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct ParseNameError {
    /// What was being parsed (`"accountant"`, `"neighbouring relation"`, …).
    pub what: &'static str,
    /// The accepted names, comma separated.
    pub expected: &'static str,
}

impl fmt::Display for ParseNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} (expected one of: {})",
            self.what, self.expected
        )
    }
}

impl core::error::Error for ParseNameError {}
