//! `kind = "rwmh"`: non-private random-walk Metropolis ([`Kernel::Rwmh`]).

use dpinfer::mcmc::run::{Kernel, Target, WalkKind};
use serde::{Deserialize, Serialize};

use super::McmcKernel;

/// Keys of the private MCMC samplers an rwmh table may carry (ignored with a warning).
pub(super) const SIBLING_KEYS: &[&str] = &[
    "ratio_clip",
    "tau",
    "accounting",
    "batch",
    "step_size",
    "leapfrog_steps",
    "inv_mass",
    "grad_clip",
    "tau_l",
    "tau_g",
];

/// `[sampler] kind = "rwmh"` (unset keys keep the library's defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rwmh {
    /// Random-walk proposal scale.
    pub proposal_scale: Option<f64>,
    /// Per-coordinate proposal scales (overrides `proposal_scale`).
    pub proposal_scales: Option<Vec<f64>>,
    /// Temperature of the target π(θ)·L(θ)^temperature.
    pub temperature: Option<f64>,
}

/// Non-private: the budget `target` is not used.
impl McmcKernel for Rwmh {
    fn kernel(&self, _target: Target) -> crate::Result<Kernel> {
        let walk = super::walk(
            WalkKind::Gaussian,
            self.proposal_scale,
            self.proposal_scales.as_ref(),
            self.temperature,
        );
        Ok(Kernel::Rwmh(walk))
    }
}
