//! `kind = "dp-barker"`: DP Barker with minibatches (Heikkilä et al. 2019,
//! [`dpinfer::mcmc::run::DpBarker`]); the table is the library's [`DpBarkerOptions`] beside
//! the [`Chain`](super::Chain) keys.

use dpinfer::mcmc::run::{DpBarkerOptions, Kernel, Target};

use super::{Limit, McmcKernel, as_u64};
use crate::limits::MAX_COUNT;

impl McmcKernel for DpBarkerOptions {
    fn limits(&self) -> Vec<Limit> {
        vec![("sampler.batch", as_u64(self.batch), MAX_COUNT)]
    }

    fn kernel(&self, target: Target) -> crate::Result<Kernel> {
        Ok(Self::kernel(self, target))
    }
}
