//! `kind = "dp-penalty"`: the DP penalty algorithm (Yıldırım & Ermiş 2019) with the guided
//! random walk ([`dpinfer::mcmc::run::DpPenalty`]); the table is the library's
//! [`DpPenaltyOptions`] beside the [`Chain`](super::Chain) keys.

use dpinfer::mcmc::run::{DpPenaltyOptions, Kernel, Target};

use super::McmcKernel;

impl McmcKernel for DpPenaltyOptions {
    fn kernel(&self, target: Target) -> crate::Result<Kernel> {
        Ok(Self::kernel(self, target))
    }
}
