//! `kind = "rwmh"`: non-private random-walk Metropolis ([`Kernel::Rwmh`]); the table is the
//! library's [`RwmhOptions`] beside the [`Chain`](super::Chain) keys.

use dpinfer::mcmc::run::{Kernel, RwmhOptions, Target};

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

/// Non-private: the budget `target` is not used.
impl McmcKernel for RwmhOptions {
    fn kernel(&self, _target: Target) -> crate::Result<Kernel> {
        Ok(Self::kernel(self))
    }
}
