//! The crate's error type.

use core::fmt;

/// Everything that can go wrong when building or stepping a sampler or computing a budget.
///
/// Errors carry only public parameters (ε, δ, σ, sizes), never data values.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum McmcError {
    /// A real parameter is NaN, infinite, or outside its valid range.
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// A vector has the wrong length.
    DimensionMismatch {
        /// Expected length.
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// A named vector setting has the wrong length for the parameter dimension.
    WrongLength {
        /// Setting name (`init`, `proposal_scales`, `inv_mass`, …).
        name: &'static str,
        /// The parameter dimension.
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// A size parameter is invalid (zero rows, batch larger than data, zero chains …).
    InvalidSize {
        /// Parameter name.
        name: &'static str,
        /// The rejected value.
        value: usize,
    },
    /// The starting point has a non-finite log prior.
    InvalidInitialPoint,
    /// The privacy budget allows no (further) iteration.
    BudgetExhausted {
        /// Iterations the budget allows in total.
        allowed: u64,
    },
    /// No fitted V_corr table exists for this noise variance.
    VcorrUnavailable {
        /// Requested total noise variance σ².
        sigma2: f64,
    },
    /// A numerical search in the accountant did not converge.
    AccountingFailed,
    /// The model reported a (parameter) error.
    Model(dpinfer_simulators::SimError),
    /// The accountant rejected a parameter or failed numerically.
    Accountant(dpinfer_accountants::AccountantError),
    /// The noise mechanism rejected a parameter or the noise RNG failed.
    Mechanism(dpinfer_mechanisms::MechanismError),
    /// A worker thread of a parallel run panicked.
    WorkerFailed,
    /// The kernel evaluates gradients (HMC, DP HMC) and the model has none.
    GradientRequired,
}

impl From<dpinfer_mechanisms::MechanismError> for McmcError {
    fn from(e: dpinfer_mechanisms::MechanismError) -> Self {
        Self::Mechanism(e)
    }
}

impl From<dpinfer_accountants::AccountantError> for McmcError {
    fn from(e: dpinfer_accountants::AccountantError) -> Self {
        Self::Accountant(e)
    }
}

impl From<dpinfer_simulators::SimError> for McmcError {
    fn from(e: dpinfer_simulators::SimError) -> Self {
        Self::Model(e)
    }
}

impl McmcError {
    pub(crate) fn param(name: &'static str, value: f64) -> Self {
        Self::InvalidParameter { name, value }
    }
}

impl fmt::Display for McmcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidParameter { name, value } => {
                write!(f, "invalid parameter {name} = {value}")
            }
            Self::DimensionMismatch { expected, got } => {
                write!(f, "dimension mismatch: expected {expected}, got {got}")
            }
            Self::WrongLength {
                name,
                expected,
                got,
            } => write!(f, "{name} has {got} values, θ has {expected}"),
            Self::InvalidSize { name, value } => write!(f, "invalid size {name} = {value}"),
            Self::InvalidInitialPoint => f.write_str("initial point has a non-finite log prior"),
            Self::BudgetExhausted { allowed } => {
                write!(f, "privacy budget exhausted after {allowed} iterations")
            }
            Self::VcorrUnavailable { sigma2 } => write!(
                f,
                "no validated V_corr table for noise variance {sigma2} (grid 0.25..=2 in steps of 0.25)"
            ),
            Self::AccountingFailed => f.write_str("privacy accounting search did not converge"),
            Self::Model(e) => write!(f, "model error: {e}"),
            Self::Accountant(e) => write!(f, "accountant error: {e}"),
            Self::Mechanism(e) => write!(f, "mechanism error: {e}"),
            Self::WorkerFailed => f.write_str("a worker thread of a parallel run failed"),
            Self::GradientRequired => {
                f.write_str("this kernel (HMC, DP HMC) needs prior and likelihood gradients")
            }
        }
    }
}

impl core::error::Error for McmcError {}

/// A rejected parameter is a [`McmcError::InvalidParameter`] (the validators are
/// `dpinfer_math::check`, shared by the workspace).
impl From<dpinfer_math::check::ParamError> for McmcError {
    fn from(e: dpinfer_math::check::ParamError) -> Self {
        Self::param(e.name, e.value)
    }
}

/// Checks that `x` is finite and strictly positive.
pub(crate) fn positive(name: &'static str, x: f64) -> Result<f64, McmcError> {
    Ok(dpinfer_math::check::positive(name, x)?)
}

/// Checks `0 < x < 1`.
pub(crate) fn open_unit(name: &'static str, x: f64) -> Result<f64, McmcError> {
    Ok(dpinfer_math::check::open_unit(name, x)?)
}
