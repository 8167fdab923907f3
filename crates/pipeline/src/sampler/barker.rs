//! `kind = "dp-barker"`: DP Barker with minibatches (Heikkilä et al. 2019,
//! [`dpinfer::mcmc::run::DpBarker`]).

use dpinfer::mcmc::run::{Kernel, Target, WalkKind};
use serde::{Deserialize, Serialize};

use super::{Limit, McmcKernel, as_u64};
use crate::limits::MAX_COUNT;

/// `[sampler] kind = "dp-barker"` (unset keys keep the library's defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpBarker {
    /// Random-walk proposal scale.
    pub proposal_scale: Option<f64>,
    /// Per-coordinate proposal scales (overrides `proposal_scale`).
    pub proposal_scales: Option<Vec<f64>>,
    /// Temperature of the target π(θ)·L(θ)^temperature (batch/n in the thesis experiments).
    pub temperature: Option<f64>,
    /// Minibatch size.
    pub batch: Option<usize>,
}

impl McmcKernel for DpBarker {
    fn limits(&self) -> Vec<Limit> {
        vec![("sampler.batch", as_u64(self.batch), MAX_COUNT)]
    }

    fn kernel(&self, target: Target) -> crate::Result<Kernel> {
        let mut k = dpinfer::mcmc::run::DpBarker::new(target);
        let scales = self.proposal_scales.as_ref();
        k.walk = super::walk(
            WalkKind::Gaussian,
            self.proposal_scale,
            scales,
            self.temperature,
        );
        k.batch = self.batch.unwrap_or(k.batch);
        Ok(Kernel::DpBarker(k))
    }
}
