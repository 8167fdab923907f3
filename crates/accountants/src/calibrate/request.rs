//! Calibration questions as values, for front ends (`dpinfer account sigma|max-steps`, the
//! Python binding, configuration files): which calibration answers them, the defaults, and
//! the checks, in one place. Every number comes from the functions of [`crate::calibrate`]
//! and [`crate::pld_numeric`]; this module only chooses among them.
//!
//! ```
//! use dpinfer_accountants::calibrate::{Method, MaxStepsRequest, SigmaRequest};
//! use dpinfer_accountants::ConversionRule;
//! // σ for 5000 DP-SGD steps at q = 1 % within (2, 1e-5): RDP unless told otherwise.
//! let s = SigmaRequest { poisson: Some(0.01), ..SigmaRequest::new(2.0, 1e-5, 5000) }.calibrate()?;
//! assert_eq!(s.method, Method::Rdp);
//! assert_eq!(s.to_string(), "rdp, Poisson q = 0.01, add/remove");
//! assert!((s.sigma - 1.695).abs() < 1e-3);
//! // DP penalty with the defaults (a = 0.5, exact PLD): 1431 iterations (mcmc README).
//! let k = MaxStepsRequest::penalty(0.1).max_steps(6.0, 1e-6, 100_000, ConversionRule::Tightest)?;
//! assert_eq!(k.steps, 1431);
//! # Ok::<(), dpinfer_accountants::AccountantError>(())
//! ```

use core::fmt;

use super::{Method, gaussian_sigma, poisson_gaussian_sigma_rdp_with};
use crate::error::positive;
use crate::pld_numeric::{Discretisation, poisson_gaussian_sigma};
use crate::{AccountantError, ConversionRule, DEFAULT_ORDERS, round_up};

/// The smallest Gaussian σ for `steps` releases of ℓ₂ sensitivity `sensitivity` within
/// (`epsilon`, `delta`), optionally Poisson subsampled at rate `poisson`.
///
/// `method` `None` is the default: [`Method::Pld`] (exact Gaussian PLD, thesis Thm 7)
/// without sampling, [`Method::Rdp`] (MTZ19 on [`DEFAULT_ORDERS`] with conversion `rule`)
/// with it. With sampling, `Some(Method::Pld)` is the numerical PLD
/// ([`crate::pld_numeric::poisson_gaussian_sigma`], default discretisation), tighter than
/// RDP; zCDP has no subsampling bound here. Without sampling, `rule` is not used (the
/// Gaussian's RDP calibration uses the tightest conversion).
///
/// # Privacy
/// With Poisson sampling the guarantee is for the add/remove relation (MTZ19); without it,
/// for whichever relation `sensitivity` is computed under.
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct SigmaRequest {
    /// Budget ε > 0.
    pub epsilon: f64,
    /// Budget δ ∈ (0, 1).
    pub delta: f64,
    /// Number of releases ≥ 1.
    pub steps: u64,
    /// ℓ₂ sensitivity of one release, > 0.
    pub sensitivity: f64,
    /// Poisson sampling rate q ∈ (0, 1], if the releases are subsampled.
    pub poisson: Option<f64>,
    /// The accountant to calibrate for (`None`: the default above).
    pub method: Option<Method>,
    /// RDP → (ε, δ) conversion of the RDP calibration.
    pub rule: ConversionRule,
}

/// A calibrated σ and how it was calibrated. `Display` is the "how":
/// `pld`, `rdp, Poisson q = 0.01, add/remove`, `pld (numerical), Poisson q = …`.
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct Sigma {
    /// The noise standard deviation (rounded up).
    pub sigma: f64,
    /// The method used.
    pub method: Method,
    /// The Poisson rate, if the releases are subsampled.
    pub poisson: Option<f64>,
}

impl fmt::Display for Sigma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.poisson {
            None => f.write_str(self.method.name()),
            Some(q) => {
                if self.method == Method::Pld {
                    f.write_str("pld (numerical)")?;
                } else {
                    f.write_str(self.method.name())?;
                }
                write!(f, ", Poisson q = {q}, add/remove")
            }
        }
    }
}

impl SigmaRequest {
    /// Unit sensitivity, no sampling, the default method, the tightest conversion.
    #[must_use]
    pub fn new(epsilon: f64, delta: f64, steps: u64) -> Self {
        Self {
            epsilon,
            delta,
            steps,
            sensitivity: 1.0,
            poisson: None,
            method: None,
            rule: ConversionRule::Tightest,
        }
    }

    /// The method [`SigmaRequest::calibrate`] uses.
    #[must_use]
    pub fn method(&self) -> Method {
        match (self.method, self.poisson) {
            (Some(m), _) => m,
            (None, None) => Method::Pld,
            (None, Some(_)) => Method::Rdp,
        }
    }

    /// Calibrates σ (rounded up; the calibrations re-check the budget with the accountant's
    /// own formula).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] / [`AccountantError::InvalidCount`] for bad
    /// inputs (also a σ that overflows: `sensitivity`), [`AccountantError::Unsupported`] for
    /// zCDP with Poisson sampling, [`AccountantError::Infeasible`] for ε = 0, and the
    /// calibrations' numerical errors.
    pub fn calibrate(&self) -> Result<Sigma, AccountantError> {
        let method = self.method();
        let sens = positive("sensitivity", self.sensitivity)?;
        let sigma = match self.poisson {
            None => gaussian_sigma(self.epsilon, self.delta, self.steps, sens, method)?,
            Some(q) => {
                let z = match method {
                    Method::Zcdp => {
                        return Err(AccountantError::Unsupported {
                            event: "PoissonSampled",
                            accountant: "zCDP calibration",
                        });
                    }
                    Method::Pld => poisson_gaussian_sigma(
                        self.epsilon,
                        self.delta,
                        self.steps,
                        q,
                        Discretisation::default(),
                    )?,
                    Method::Rdp => poisson_gaussian_sigma_rdp_with(
                        self.epsilon,
                        self.delta,
                        self.steps,
                        q,
                        &DEFAULT_ORDERS,
                        self.rule,
                    )?,
                };
                let s = scaled_up(z, sens);
                if !s.is_finite() {
                    return Err(AccountantError::InvalidParameter {
                        name: "sensitivity",
                        value: sens,
                    });
                }
                s
            }
        };
        Ok(Sigma {
            sigma,
            method,
            poisson: self.poisson,
        })
    }
}

/// `σ = z·Δ` rounded up (for the calibrated multiplier `z > 0` and sensitivity `Δ > 0`): a
/// product below the smallest positive double rounds up to that double, never down to 0.0
/// (the rule `gaussian_sigma` follows for the unsampled case).
fn scaled_up(z: f64, sens: f64) -> f64 {
    round_up(z * sens).max(f64::from_bits(1))
}

#[cfg(all(test, feature = "alloc"))]
#[allow(clippy::unwrap_used, clippy::float_cmp)] // the same calls give the same bits
mod tests {
    use super::super::max_steps::{MaxStepsRequest, PrivateMcmc};
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn sigma_dispatch_is_the_calibration_functions() {
        let r = SigmaRequest::new(1.0, 1e-5, 1000);
        let s = r.calibrate().unwrap();
        assert_eq!(s.method, Method::Pld);
        assert_eq!(
            s.sigma,
            gaussian_sigma(1.0, 1e-5, 1000, 1.0, Method::Pld).unwrap()
        );
        assert_eq!(s.to_string(), "pld");
        let r = SigmaRequest {
            poisson: Some(0.05),
            sensitivity: 3.0,
            rule: ConversionRule::Classic,
            ..SigmaRequest::new(1.0, 1e-6, 200)
        };
        let s = r.calibrate().unwrap();
        let z = poisson_gaussian_sigma_rdp_with(
            1.0,
            1e-6,
            200,
            0.05,
            &DEFAULT_ORDERS,
            ConversionRule::Classic,
        )
        .unwrap();
        assert_eq!(s.sigma, round_up(z * 3.0));
        let zcdp = SigmaRequest {
            method: Some(Method::Zcdp),
            ..r
        };
        assert!(matches!(
            zcdp.calibrate(),
            Err(AccountantError::Unsupported { .. })
        ));
        let huge = SigmaRequest {
            sensitivity: 1e308,
            ..r
        };
        assert!(matches!(
            huge.calibrate(),
            Err(AccountantError::InvalidParameter {
                name: "sensitivity",
                ..
            })
        ));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let b = SigmaRequest {
                sensitivity: bad,
                ..r
            };
            assert!(b.calibrate().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_sigma_below_the_smallest_double_rounds_up_not_to_zero() {
        // proptest's case (properties::sigma_requests_never_panic without the CI seed): the
        // multiplier times a subnormal sensitivity underflowed to 0.0, and `round_up(0.0)` is
        // 0.0 — a "no noise" answer below the σ the request needs.
        for method in [Method::Rdp, Method::Pld] {
            let r = SigmaRequest {
                epsilon: 0.0,
                delta: 0.999_999_999_999_999_8,
                steps: 1,
                sensitivity: 5e-324,
                poisson: Some(2.2e-308),
                method: Some(method),
                rule: ConversionRule::Tightest,
            };
            if let Ok(s) = r.calibrate() {
                assert!(s.sigma > 0.0 && s.sigma.is_finite(), "{method:?}: {s:?}");
            }
        }
        // and a multiplier under ½ at the smallest sensitivity: the product rounds to 0.0
        assert_eq!(scaled_up(0.25, 5e-324), 5e-324);
        assert_eq!(scaled_up(2.0, 3.0), round_up(6.0));
    }

    #[test]
    fn max_steps_defaults_and_checks() {
        let t = ConversionRule::Tightest;
        let p = MaxStepsRequest::penalty(0.1);
        assert_eq!(p.max_steps(6.0, 1e-6, 100_000, t).unwrap().steps, 1431);
        let z = MaxStepsRequest::Penalty {
            tau: 0.1,
            a: 0.5,
            method: Method::Zcdp,
        };
        assert!(z.max_steps(6.0, 1e-6, 100_000, t).unwrap().steps < 1431);
        let huge_a = MaxStepsRequest::Penalty {
            tau: 0.1,
            a: 1e5,
            method: Method::Pld,
        };
        assert!(matches!(
            huge_a.max_steps(6.0, 1e-6, 100_000, t),
            Err(AccountantError::InvalidParameter { name: "a", .. })
        ));
        let rdp = MaxStepsRequest::Penalty {
            tau: 0.1,
            a: 0.5,
            method: Method::Rdp,
        };
        assert!(rdp.max_steps(6.0, 1e-6, 100_000, t).is_err());
        let h = MaxStepsRequest::Hmc {
            tau_l: 0.1,
            tau_g: 0.2,
            leapfrog: 0,
            method: Method::Pld,
        };
        assert!(matches!(
            h.max_steps(1.0, 1e-5, 1000, t),
            Err(AccountantError::InvalidCount {
                name: "leapfrog",
                ..
            })
        ));
        let b = MaxStepsRequest::barker(1000)
            .max_steps(6.0, 1e-5, 100_000, t)
            .unwrap();
        assert_eq!((b.steps, b.rdp_order), (8563, Some(5)), "the CLI's figure");
        assert_eq!("hmc".parse::<PrivateMcmc>().unwrap(), PrivateMcmc::Hmc);
        assert_eq!(MaxStepsRequest::hmc(1.0, 1.0).sampler(), PrivateMcmc::Hmc);
    }
}
