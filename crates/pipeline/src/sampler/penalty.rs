//! `kind = "dp-penalty"`: the DP penalty algorithm (Yıldırım & Ermiş 2019) with the guided
//! random walk ([`dpinfer::mcmc::run::DpPenalty`]).

use dpinfer::mcmc::run::{Kernel, Target, WalkKind};
use serde::{Deserialize, Serialize};

use super::McmcKernel;

/// `[sampler] kind = "dp-penalty"` (unset keys keep the library's defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpPenalty {
    /// Random-walk proposal scale.
    pub proposal_scale: Option<f64>,
    /// Per-coordinate proposal scales (overrides `proposal_scale`).
    pub proposal_scales: Option<Vec<f64>>,
    /// Temperature of the target π(θ)·L(θ)^temperature.
    pub temperature: Option<f64>,
    /// Log-likelihood-ratio clip.
    pub ratio_clip: Option<f64>,
    /// Noise multiplier τ.
    pub tau: Option<f64>,
    /// `pld` (tight) or `zcdp`.
    pub accounting: Option<String>,
}

impl McmcKernel for DpPenalty {
    fn kernel(&self, target: Target) -> crate::Result<Kernel> {
        let mut k = dpinfer::mcmc::run::DpPenalty::new(target);
        let scales = self.proposal_scales.as_ref();
        k.walk = super::walk(
            WalkKind::Guided,
            self.proposal_scale,
            scales,
            self.temperature,
        );
        k.clip = self.ratio_clip.unwrap_or(k.clip);
        k.tau = self.tau.unwrap_or(k.tau);
        k.accounting = super::accounting(self.accounting.as_deref())?.unwrap_or(k.accounting);
        Ok(Kernel::DpPenalty(k))
    }
}
