//! Typed errors of the library crates → the Python exceptions of `dpinfer.errors`.
//!
//! The exception classes live in Python (so that they can inherit from both `DpinferError`
//! and `ValueError`); they are looked up once and cached.

use dpinfer_abc::AbcError;
use dpinfer_accountants::AccountantError;
use dpinfer_mechanisms::MechanismError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// Builds an instance of `dpinfer.errors.<class>` with `msg` and the given attributes.
pub(crate) fn raise(class: &str, msg: String, attrs: &[(&str, Option<f64>)]) -> PyErr {
    Python::attach(|py| {
        let build = || -> PyResult<PyErr> {
            let module =
                ERRORS.get_or_try_init(py, || py.import("dpinfer.errors").map(Bound::unbind))?;
            let cls = module.bind(py).getattr(class)?;
            let inst = cls.call1((msg.clone(),))?;
            for (k, v) in attrs {
                inst.setattr(*k, *v)?;
            }
            Ok(PyErr::from_value(inst))
        };
        // If the Python module itself is broken, fall back to a plain ValueError.
        build().unwrap_or_else(|e| e)
    })
}

/// An invalid-parameter error raised by the binding itself (shapes, names of options).
pub(crate) fn invalid(name: &str, value: Option<f64>, msg: String) -> PyErr {
    named("InvalidParameterError", msg, name, value)
}

/// Maps an accountant error.
pub(crate) fn acc(e: AccountantError) -> PyErr {
    let msg = e.to_string();
    match e {
        AccountantError::InvalidParameter { name, value } => {
            named("InvalidParameterError", msg, name, Some(value))
        }
        AccountantError::InvalidCount { name, value } =>
        {
            #[allow(clippy::cast_precision_loss)]
            named("InvalidParameterError", msg, name, Some(value as f64))
        }
        AccountantError::IncompatibleRelation { .. } => {
            raise("IncompatibleRelationError", msg, &[])
        }
        AccountantError::Unsupported { .. } => raise("UnsupportedEventError", msg, &[]),
        AccountantError::InvalidGrid | AccountantError::TooDeep => {
            raise("InvalidParameterError", msg, &[])
        }
        AccountantError::DeltaTooSmall { requested, .. } => {
            named("DeltaTooSmallError", msg, "delta", Some(requested))
        }
        AccountantError::BudgetExceeded { epsilon, budget } => raise(
            "BudgetExceeded",
            msg,
            &[("epsilon", Some(epsilon)), ("budget", Some(budget))],
        ),
        AccountantError::Infeasible { .. } => raise("InfeasibleError", msg, &[]),
        _ => raise("NumericalError", msg, &[]),
    }
}

fn named(class: &str, msg: String, name: &str, value: Option<f64>) -> PyErr {
    let e = raise(class, msg, &[("value", value)]);
    Python::attach(|py| {
        let _ = e.value(py).setattr("name", name);
    });
    e
}

/// Maps a mechanism error.
pub(crate) fn mech(e: MechanismError) -> PyErr {
    let msg = e.to_string();
    match e {
        MechanismError::NonFinite { param }
        | MechanismError::NotPositive { param }
        | MechanismError::OutOfRange { param }
        | MechanismError::EmptyInterval { param } => {
            named("InvalidParameterError", msg, param, None)
        }
        MechanismError::ZeroDenominator | MechanismError::LengthMismatch { .. } => {
            raise("InvalidParameterError", msg, &[])
        }
        MechanismError::Entropy => raise("EntropyError", msg, &[]),
        MechanismError::BudgetExhausted => raise("BudgetExhausted", msg, &[]),
        _ => raise("NumericalError", msg, &[]),
    }
}

/// Maps an ABC error.
pub(crate) fn abc(e: AbcError) -> PyErr {
    let msg = e.to_string();
    match e {
        AbcError::InvalidParameter { name, value } => {
            named("InvalidParameterError", msg, name, Some(value))
        }
        AbcError::InvalidCount { name, value } =>
        {
            #[allow(clippy::cast_precision_loss)]
            named("InvalidParameterError", msg, name, Some(value as f64))
        }
        AbcError::Empty { name }
        | AbcError::LengthMismatch { name, .. }
        | AbcError::NonFiniteValue { name } => named("InvalidParameterError", msg, name, None),
        AbcError::Model(_) | AbcError::Redraws { .. } => raise("ModelError", msg, &[]),
        AbcError::Finished | AbcError::BudgetExhausted { .. } => raise("BudgetExhausted", msg, &[]),
        // The mechanism refused the noise parameters a setting gives (e.g. a Laplace scale
        // `(c+1)Δ/ε` off its grid for `epsilon_total = 1e308`): the setting is the invalid
        // parameter, named with its value, and the message names both.
        AbcError::Mechanism {
            setting: Some((name, value)),
            error:
                MechanismError::NonFinite { .. }
                | MechanismError::NotPositive { .. }
                | MechanismError::OutOfRange { .. }
                | MechanismError::EmptyInterval { .. }
                | MechanismError::ZeroDenominator
                | MechanismError::LengthMismatch { .. },
        } => named("InvalidParameterError", msg, name, Some(value)),
        AbcError::Mechanism {
            error: MechanismError::Entropy,
            ..
        } => raise("EntropyError", msg, &[]),
        AbcError::Mechanism {
            setting: None,
            error,
        } => mech(error),
        _ => raise("NumericalError", msg, &[]),
    }
}

/// Maps an MCMC error.
pub(crate) fn mcmc(e: dpinfer_mcmc::McmcError) -> PyErr {
    use dpinfer_mcmc::McmcError as E;
    let msg = e.to_string();
    match e {
        E::InvalidParameter { name, value } => {
            named("InvalidParameterError", msg, name, Some(value))
        }
        E::InvalidSize { name, value } =>
        {
            #[allow(clippy::cast_precision_loss)]
            named("InvalidParameterError", msg, name, Some(value as f64))
        }
        E::DimensionMismatch { .. } | E::InvalidInitialPoint => {
            raise("InvalidParameterError", msg, &[])
        }
        E::BudgetExhausted { .. } => raise("BudgetExhausted", msg, &[]),
        E::Accountant(a) => acc(a),
        E::Mechanism(m) => mech(m),
        E::Model(_) => raise("ModelError", msg, &[]),
        _ => raise("NumericalError", msg, &[]),
    }
}
