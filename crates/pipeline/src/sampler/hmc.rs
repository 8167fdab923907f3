//! `kind = "dp-hmc"`: DP Hamiltonian Monte Carlo (Räisä et al., thesis Algorithm 3,
//! [`dpinfer::mcmc::run::DpHmc`]).

use dpinfer::mcmc::run::{Kernel, Target};
use serde::{Deserialize, Serialize};

use super::{Limit, McmcKernel};
use crate::limits::MAX_LEAPFROG;

/// `[sampler] kind = "dp-hmc"` (unset keys keep the library's defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpHmc {
    /// Leapfrog step size.
    pub step_size: Option<f64>,
    /// Leapfrog steps.
    pub leapfrog_steps: Option<u32>,
    /// Diagonal inverse mass matrix (default all 1).
    pub inv_mass: Option<Vec<f64>>,
    /// Temperature of the target π(θ)·L(θ)^temperature.
    pub temperature: Option<f64>,
    /// Log-likelihood-ratio clip.
    pub ratio_clip: Option<f64>,
    /// Gradient clip.
    pub grad_clip: Option<f64>,
    /// Log-likelihood noise multiplier.
    pub tau_l: Option<f64>,
    /// Gradient noise multiplier.
    pub tau_g: Option<f64>,
    /// `pld` (tight) or `zcdp`.
    pub accounting: Option<String>,
}

impl McmcKernel for DpHmc {
    fn limits(&self) -> Vec<Limit> {
        let l = self.leapfrog_steps.map(u64::from);
        vec![("sampler.leapfrog_steps", l, MAX_LEAPFROG)]
    }

    fn kernel(&self, target: Target) -> crate::Result<Kernel> {
        let s = self;
        let mut k = dpinfer::mcmc::run::DpHmc::new(target);
        k.step_size = s.step_size.unwrap_or(k.step_size);
        k.leapfrog_steps = s.leapfrog_steps.unwrap_or(k.leapfrog_steps);
        if let Some(m) = &s.inv_mass {
            k.inv_mass = Some(m.clone());
        }
        k.temperature = s.temperature.unwrap_or(k.temperature);
        k.ratio_clip = s.ratio_clip.unwrap_or(k.ratio_clip);
        k.grad_clip = s.grad_clip.unwrap_or(k.grad_clip);
        k.tau_l = s.tau_l.unwrap_or(k.tau_l);
        k.tau_g = s.tau_g.unwrap_or(k.tau_g);
        k.accounting = super::accounting(s.accounting.as_deref())?.unwrap_or(k.accounting);
        Ok(Kernel::DpHmc(k))
    }
}
