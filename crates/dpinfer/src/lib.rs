#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "math")]
pub use dpinfer_math as math;

#[cfg(feature = "accountants")]
pub use dpinfer_accountants as accountants;

#[cfg(feature = "mechanisms")]
pub use dpinfer_mechanisms as mechanisms;

#[cfg(feature = "distances")]
pub use dpinfer_distances as distances;

#[cfg(feature = "simulators")]
pub use dpinfer_simulators as simulators;

#[cfg(feature = "abc")]
pub use dpinfer_abc as abc;

#[cfg(feature = "mcmc")]
pub use dpinfer_mcmc as mcmc;

/// The names most programs need, from every enabled crate: `use dpinfer::prelude::*;`.
///
/// Types whose names collide across crates are renamed: the Gaussian and Laplace *kernels*
/// of `dpinfer-distances` are `GaussianKernel` and `LaplaceKernel` (the mechanisms keep
/// `Gaussian` and `Laplace`). `Neighbouring` is the one relation type of the workspace (the
/// accountants'; the distances crate re-exports it).
pub mod prelude {
    #[cfg(feature = "abc")]
    pub use dpinfer_abc::AbcError;
    #[cfg(all(feature = "abc", feature = "alloc"))]
    pub use dpinfer_abc::{
        analysis::Resample,
        pairs::PublicPairs,
        rejection::{RejectionAbc, RejectionSettings, Rule},
        smc::{SmcAbc, SmcSettings, Tolerance},
        soft::{SoftAbcdp, SoftAbcdpSettings},
        svt::{SvtAbc, SvtAbcSettings},
    };
    #[cfg(feature = "accountants")]
    pub use dpinfer_accountants::{
        Accountant, AccountantError, ApproxAccountant, BudgetFilter, Event, Neighbouring,
        PldAccountant, PureAccountant, RdpAccountant, Report, ZcdpAccountant,
    };
    #[cfg(all(feature = "accountants", feature = "alloc"))]
    pub use dpinfer_accountants::{AccountantKind, Claim, EventBuf};
    #[cfg(feature = "distances")]
    pub use dpinfer_distances::{
        ClippedWeightedL2, DistanceError, Gaussian as GaussianKernel, Kernel,
        Laplace as LaplaceKernel, MmdReference, RandomFourierFeatures,
        Relations as SensitivityRelations, RffReference, Rows, Sensitivity, median_heuristic,
    };
    #[cfg(feature = "math")]
    pub use dpinfer_math::{ln_norm_cdf, log_add_exp, logsumexp, norm_cdf, norm_quantile};
    #[cfg(all(feature = "mcmc", feature = "alloc"))]
    pub use dpinfer_mcmc::{
        Barker, BarkerPrivacy, BarkerSettings, Hmc, HmcPrivacy, HmcSettings, MarkovChain, Penalty,
        PenaltyPrivacy, PenaltySettings, Proposal, Trace,
    };
    #[cfg(feature = "mcmc")]
    pub use dpinfer_mcmc::{McmcError, budget::Accounting};
    #[cfg(feature = "mechanisms")]
    pub use dpinfer_mechanisms::{
        BinomialCurve, Gaussian, Laplace, MechanismError, NoiseRng, SparseVector,
        SparseVectorSettings,
    };
    #[cfg(feature = "simulators")]
    pub use dpinfer_simulators::{
        Prior, RowGradient, RowLikelihood, SimError, SimStream, Simulator,
    };
}
