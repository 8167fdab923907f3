//! The iteration budget of a private MCMC sampler as a value ([`MaxStepsRequest`]), for front
//! ends and for `dpinfer-mcmc`'s budgets: which calibration function answers it, the defaults
//! and the checks, in one place. No allocator needed.

use super::{
    Method, dp_barker_max_steps_with, dp_hmc_max_steps, dp_penalty_max_steps, largest_fitting,
};
use crate::error::count_in;
use crate::{
    Accountant, AccountantError, ConversionRule, Event, Neighbouring, PldAccountant, ZcdpAccountant,
};

/// A private MCMC sampler whose iteration budget [`MaxStepsRequest::max_steps`] computes.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum PrivateMcmc {
    /// DP penalty (thesis Theorems 6–7).
    Penalty,
    /// DP HMC (thesis §5).
    Hmc,
    /// DP Barker (thesis Theorem 8).
    Barker,
}

impl PrivateMcmc {
    /// Every sampler.
    pub const ALL: [Self; 3] = [Self::Penalty, Self::Hmc, Self::Barker];

    /// `"penalty"`, `"hmc"` or `"barker"` (`Display`, `FromStr`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Penalty => "penalty",
            Self::Hmc => "hmc",
            Self::Barker => "barker",
        }
    }
}

display_and_parse_by_name!(PrivateMcmc, "sampler", "penalty, hmc, barker");

/// The former name of [`PrivateMcmc`] (it said less than the pipeline's sampler kinds).
#[deprecated(note = "renamed to `PrivateMcmc`")]
pub type Sampler = PrivateMcmc;

/// The settings a private MCMC sampler's iteration budget depends on.
#[derive(Copy, Clone, PartialEq, Debug)]
pub enum MaxStepsRequest {
    /// DP penalty: noise sd `τ·n^a·2c` per iteration.
    Penalty {
        /// Noise multiplier τ > 0.
        tau: f64,
        /// Exponent a > 0 of n.
        a: f64,
        /// [`Method::Zcdp`] (Theorem 6) or [`Method::Pld`] (Theorem 7).
        method: Method,
    },
    /// DP HMC: one gradient release before the loop, `leapfrog` gradient releases and one
    /// log-likelihood-ratio release per iteration.
    Hmc {
        /// Log-likelihood-ratio noise multiplier τ_l > 0.
        tau_l: f64,
        /// Gradient noise multiplier τ_g > 0.
        tau_g: f64,
        /// Leapfrog steps L ≥ 1.
        leapfrog: u64,
        /// [`Method::Zcdp`] or [`Method::Pld`].
        method: Method,
    },
    /// DP Barker: RDP (WBK19 amplification at integer orders), conversion from the call.
    Barker {
        /// Minibatch size |B|.
        batch: u64,
        /// Largest RDP order tried.
        max_order: u64,
    },
}

/// What [`MaxStepsRequest::max_steps`] found.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct MaxSteps {
    /// The largest number of iterations within the budget.
    pub steps: u64,
    /// DP Barker: the RDP order that allows them.
    pub rdp_order: Option<u64>,
}

impl MaxStepsRequest {
    /// Default exponent a of the DP penalty noise.
    pub const DEFAULT_A: f64 = 0.5;
    /// Default leapfrog steps per DP HMC iteration.
    pub const DEFAULT_LEAPFROG: u64 = 10;
    /// Default largest RDP order of the DP Barker budget.
    pub const DEFAULT_MAX_ORDER: u64 = 256;
    /// Default method of the penalty and HMC budgets (exact Gaussian PLD).
    pub const DEFAULT_METHOD: Method = Method::Pld;

    /// DP penalty with noise multiplier `tau` and the defaults.
    #[must_use]
    pub fn penalty(tau: f64) -> Self {
        Self::Penalty {
            tau,
            a: Self::DEFAULT_A,
            method: Self::DEFAULT_METHOD,
        }
    }

    /// DP HMC with noise multipliers `tau_l`, `tau_g` and the defaults.
    #[must_use]
    pub fn hmc(tau_l: f64, tau_g: f64) -> Self {
        Self::Hmc {
            tau_l,
            tau_g,
            leapfrog: Self::DEFAULT_LEAPFROG,
            method: Self::DEFAULT_METHOD,
        }
    }

    /// DP Barker with minibatch size `batch` and the default largest order.
    #[must_use]
    pub fn barker(batch: u64) -> Self {
        Self::Barker {
            batch,
            max_order: Self::DEFAULT_MAX_ORDER,
        }
    }

    /// The sampler.
    #[must_use]
    pub fn sampler(&self) -> PrivateMcmc {
        match self {
            Self::Penalty { .. } => PrivateMcmc::Penalty,
            Self::Hmc { .. } => PrivateMcmc::Hmc,
            Self::Barker { .. } => PrivateMcmc::Barker,
        }
    }

    /// The largest number of iterations on `n` rows within (`epsilon`, `delta`)
    /// ([`dp_penalty_max_steps`], [`dp_hmc_max_steps`], [`dp_barker_max_steps_with`] with
    /// `rule`).
    ///
    /// # Privacy
    /// Replace-one neighbours (the samplers' sensitivities are sups over substituted rows).
    ///
    /// # Errors
    /// [`AccountantError::Unsupported`] for [`Method::Rdp`] with the penalty or HMC budget;
    /// [`AccountantError::InvalidParameter`] for an exponent `a` whose `n^a` (or `τ·n^a`)
    /// over- or underflows; [`AccountantError::InvalidCount`] for `leapfrog = 0`; and the
    /// errors of the calibration functions.
    pub fn max_steps(
        &self,
        epsilon: f64,
        delta: f64,
        n: u64,
        rule: ConversionRule,
    ) -> Result<MaxSteps, AccountantError> {
        let just = |steps| MaxSteps {
            steps,
            rdp_order: None,
        };
        match *self {
            Self::Penalty { tau, a, method } => {
                // The noise sd is τ·n^a·2c: an exponent that over- or underflows it is the
                // exponent's fault, not τ's — but a τ that is no valid noise multiplier is
                // τ's (named by the calibration function).
                #[allow(clippy::cast_precision_loss)] // n^a only screens for overflow
                let scale = libm::pow(n as f64, a);
                let tau_valid = tau.is_finite() && tau > 0.0;
                if !(a.is_finite()
                    && scale.is_normal()
                    && (!tau_valid || (tau * scale).is_finite()))
                {
                    return Err(AccountantError::InvalidParameter {
                        name: "a",
                        value: a,
                    });
                }
                let k = dp_penalty_max_steps(method, epsilon, delta, tau, n, a)?;
                let sigma = tau * scale;
                largest_fitting(k, |j| gaussian_fits(method, &[(sigma, j)], epsilon, delta))
                    .map(just)
            }
            Self::Hmc {
                tau_l,
                tau_g,
                leapfrog,
                method,
            } => {
                count_in("leapfrog", leapfrog, 1..)?;
                let k = dp_hmc_max_steps(method, epsilon, delta, tau_l, tau_g, n, leapfrog)?;
                #[allow(clippy::cast_precision_loss)] // as the samplers' σ = τ√n
                let sqrt_n = libm::sqrt(n as f64);
                let (sl, sg) = (tau_l * sqrt_n, tau_g * sqrt_n);
                largest_fitting(k, |j| {
                    let g = j.saturating_mul(leapfrog).saturating_add(1);
                    gaussian_fits(method, &[(sl, j), (sg, g)], epsilon, delta)
                })
                .map(just)
            }
            Self::Barker { batch, max_order } => {
                let (steps, order) =
                    dp_barker_max_steps_with(epsilon, delta, batch, n, max_order, rule)?;
                // Checked by the RDP accountant of the samplers' claims where there is an
                // allocator (its order grid is 2..=256: a count found at a higher order is
                // kept only if that grid certifies it too).
                #[cfg(feature = "alloc")]
                let steps = largest_fitting(steps, |j| {
                    let events = alloc::vec![(
                        crate::EventBuf::DpBarker {
                            batch,
                            population: n,
                        },
                        j
                    )];
                    let c = crate::Claim::account(
                        Neighbouring::ReplaceOne,
                        crate::AccountantKind::RdpIntegers,
                        rule,
                        events,
                        delta,
                    )?;
                    Ok::<_, AccountantError>(c.epsilon() <= epsilon)
                })?;
                Ok(MaxSteps {
                    steps,
                    rdp_order: Some(order),
                })
            }
        }
    }
}

/// Whether `releases` (Gaussian noise sd σ over sensitivity 1, each released `count` times, in
/// order) composed by the accountant of `method` — the accountant and conversion of the
/// samplers' claims (`dpinfer-mcmc`'s `Budget::claim`: PLD, or zCDP with the classic
/// conversion of thesis Theorem 1) — certify ε ≤ `epsilon` at `delta`. The calibration
/// formulas round on their own; this re-checks their count with the accountant's roundings.
fn gaussian_fits(
    method: Method,
    releases: &[(f64, u64)],
    epsilon: f64,
    delta: f64,
) -> Result<bool, AccountantError> {
    let relation = Neighbouring::ReplaceOne;
    let mut pld = PldAccountant::new(relation);
    let mut zcdp = ZcdpAccountant::new(relation).with_conversion(ConversionRule::Classic);
    let acc: &mut dyn Accountant = match method {
        Method::Pld => &mut pld,
        Method::Zcdp => &mut zcdp,
        // No RDP penalty/HMC budget (refused before).
        Method::Rdp => return Ok(true),
    };
    for &(sigma, count) in releases {
        let g = Event::Gaussian {
            sigma,
            sensitivity: 1.0,
        };
        acc.compose_n(&g, count)?;
    }
    Ok(acc.epsilon(delta)?.epsilon <= epsilon)
}
