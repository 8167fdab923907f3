//! Parameter validation, written once for the workspace: one predicate per rule, each
//! returning the value or a [`ParamError`] that every crate's error type converts (`From`).
//!
//! ```
//! use dpinfer_math::check::{self, ParamError, Rule};
//! assert_eq!(check::positive("sigma", 2.0), Ok(2.0));
//! let e = check::positive("sigma", 0.0).unwrap_err();
//! assert_eq!(e, ParamError { name: "sigma", value: 0.0, rule: Rule::Positive });
//! assert!(!e.non_finite());
//! assert!(check::open_unit("delta", 1.0).is_err());
//! assert_eq!(check::rate("q", 1.0), Ok(1.0));
//! assert_eq!(e.to_string(), "invalid parameter sigma = 0: must be finite and > 0");
//! ```

use core::fmt;

/// The rule a parameter broke.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// Finite (not NaN, not ±∞).
    Finite,
    /// Finite and `> 0`.
    Positive,
    /// Finite and `≥ 0`.
    NonNegative,
    /// In the open interval `(0, 1)`.
    OpenUnit,
    /// In `(0, 1]` (a sampling rate).
    Rate,
    /// In `[0, 1]` (a probability).
    Probability,
}

impl Rule {
    /// The rule in words, as used in [`ParamError`]'s message.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Finite => "must be finite",
            Self::Positive => "must be finite and > 0",
            Self::NonNegative => "must be finite and >= 0",
            Self::OpenUnit => "must lie in (0, 1)",
            Self::Rate => "must lie in (0, 1]",
            Self::Probability => "must lie in [0, 1]",
        }
    }
}

/// A parameter that broke a [`Rule`]: its name, its value and the rule.
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct ParamError {
    /// The parameter's name (`"sigma"`, `"delta"`, …).
    pub name: &'static str,
    /// The offending value.
    pub value: f64,
    /// The rule it broke.
    pub rule: Rule,
}

impl ParamError {
    /// Whether the value was NaN or ±∞ (crates that report non-finite values separately
    /// from out-of-range ones branch on this).
    #[must_use]
    pub fn non_finite(&self) -> bool {
        !self.value.is_finite()
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid parameter {} = {}: {}",
            self.name,
            self.value,
            self.rule.describe()
        )
    }
}

impl core::error::Error for ParamError {}

#[inline]
fn ensure(ok: bool, name: &'static str, value: f64, rule: Rule) -> Result<f64, ParamError> {
    if ok {
        Ok(value)
    } else {
        Err(ParamError { name, value, rule })
    }
}

/// `value` if it is finite.
///
/// # Errors
/// [`ParamError`] with [`Rule::Finite`] for NaN and ±∞.
#[inline]
pub fn finite(name: &'static str, value: f64) -> Result<f64, ParamError> {
    ensure(value.is_finite(), name, value, Rule::Finite)
}

/// `value` if it is finite and `> 0`.
///
/// # Errors
/// [`ParamError`] with [`Rule::Positive`] otherwise.
#[inline]
pub fn positive(name: &'static str, value: f64) -> Result<f64, ParamError> {
    ensure(
        value.is_finite() && value > 0.0,
        name,
        value,
        Rule::Positive,
    )
}

/// `value` (unchanged, so `−0.0` stays `−0.0`) if it is finite and `≥ 0`.
///
/// # Errors
/// [`ParamError`] with [`Rule::NonNegative`] otherwise.
#[inline]
pub fn non_negative(name: &'static str, value: f64) -> Result<f64, ParamError> {
    ensure(
        value.is_finite() && value >= 0.0,
        name,
        value,
        Rule::NonNegative,
    )
}

/// `value` if `0 < value < 1`.
///
/// # Errors
/// [`ParamError`] with [`Rule::OpenUnit`] otherwise (NaN included).
#[inline]
pub fn open_unit(name: &'static str, value: f64) -> Result<f64, ParamError> {
    ensure(value > 0.0 && value < 1.0, name, value, Rule::OpenUnit)
}

/// `value` if `0 < value ≤ 1` (a sampling rate).
///
/// # Errors
/// [`ParamError`] with [`Rule::Rate`] otherwise (NaN included).
#[inline]
pub fn rate(name: &'static str, value: f64) -> Result<f64, ParamError> {
    ensure(value > 0.0 && value <= 1.0, name, value, Rule::Rate)
}

/// `value` if `0 ≤ value ≤ 1` (a probability).
///
/// # Errors
/// [`ParamError`] with [`Rule::Probability`] otherwise (NaN included).
#[inline]
pub fn probability(name: &'static str, value: f64) -> Result<f64, ParamError> {
    ensure((0.0..=1.0).contains(&value), name, value, Rule::Probability)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECIAL: [f64; 12] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -1.0,
        -0.0,
        0.0,
        f64::MIN_POSITIVE,
        0.5,
        1.0,
        1.0 + f64::EPSILON,
        f64::MAX,
        -f64::MAX,
    ];

    #[test]
    fn each_rule_is_its_set() {
        for x in SPECIAL {
            let fin = x.is_finite();
            assert_eq!(finite("x", x).is_ok(), fin, "{x}");
            assert_eq!(positive("x", x).is_ok(), fin && x > 0.0, "{x}");
            assert_eq!(non_negative("x", x).is_ok(), fin && x >= 0.0, "{x}");
            assert_eq!(open_unit("x", x).is_ok(), x > 0.0 && x < 1.0, "{x}");
            assert_eq!(rate("x", x).is_ok(), x > 0.0 && x <= 1.0, "{x}");
            assert_eq!(probability("x", x).is_ok(), (0.0..=1.0).contains(&x), "{x}");
            // the value comes back bit for bit
            if let Ok(v) = non_negative("x", x) {
                assert_eq!(v.to_bits(), x.to_bits());
            }
            if let Err(e) = positive("p", x) {
                assert_eq!((e.name, e.rule), ("p", Rule::Positive));
                assert_eq!(e.non_finite(), !fin);
            }
        }
    }
}
