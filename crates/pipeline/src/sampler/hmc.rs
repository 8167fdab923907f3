//! `kind = "dp-hmc"`: DP Hamiltonian Monte Carlo (Räisä et al., thesis Algorithm 3,
//! [`dpinfer::mcmc::run::DpHmc`]); the table is the library's [`DpHmcOptions`] beside the
//! [`Chain`](super::Chain) keys.

use dpinfer::mcmc::run::{DpHmcOptions, Kernel, Target};

use super::{Limit, McmcKernel};
use crate::limits::MAX_LEAPFROG;

impl McmcKernel for DpHmcOptions {
    fn limits(&self) -> Vec<Limit> {
        let l = self.leapfrog_steps.map(u64::from);
        vec![("sampler.leapfrog_steps", l, MAX_LEAPFROG)]
    }

    fn kernel(&self, target: Target) -> crate::Result<Kernel> {
        Ok(Self::kernel(self, target))
    }
}
