//! A whole MCMC run as one call: settings types that own every default and check every
//! value, several chains on one privacy budget ([`MultiChain`]), each run in segments with
//! a [`Progress`] observer, the ε-spent trajectory and the final (ε, δ).
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use dpinfer_mcmc::model::{GaussianMean, GaussianPrior};
//! use dpinfer_mcmc::run::{DpPenalty, Kernel, Run, RunSettings, Target};
//! use rand::SeedableRng;
//! use rand::rngs::ChaCha20Rng;
//!
//! let rows: Vec<f64> = (0..500).map(|i| 1.0 + f64::from(i % 9) / 9.0 - 0.44).collect();
//! let lik = GaussianMean::new(1, &rows, 1.0)?;
//! let prior = GaussianPrior::new(1, 0.0, 10.0)?;
//! // Defaults: clip 5, τ 0.5, α = ½, exact Gaussian PLD accounting, guided random walk.
//! let kernel = Kernel::DpPenalty(DpPenalty::new(Target { epsilon: 3.0, delta: 1e-6 }));
//! let settings = RunSettings { iterations: 400, chains: 2, seed: 7, ..RunSettings::default() };
//! // One noise CSPRNG per chain (secret-seeded in practice).
//! let noise = (0..2).map(|i| ChaCha20Rng::seed_from_u64(100 + i)).collect();
//! let run = Run::new(prior, lik, &[0.0], &kernel, &settings, noise)?;
//! let out = run.run(&())?;
//! let (eps, delta) = out.spent.unwrap();
//! assert!(eps <= 3.0 && delta == 1e-6);
//! assert_eq!(out.traces.len(), 2);
//! # }
//! # Ok::<(), dpinfer_mcmc::McmcError>(())
//! ```
//!
//! # Privacy
//!
//! The chains of a private kernel share one (ε, δ) target: [`MultiChain`] splits the
//! iteration count the target allows for that many chains (per-chain one-off releases
//! charged) and every chain stops at its share; the reported ε is the composition over every
//! iteration of every chain ([`Budget::spent`]). Substitute-one-row neighbours, public `n`.
//! Public randomness (proposals, momenta, batches) of chain `i` is
//! `SimStream::with_domain(seed, CHAIN_DOMAIN, i)`; privacy noise comes only from the
//! caller's CSPRNGs.
//!
//! # Models without gradients
//!
//! [`Run::new`] takes a prior and a likelihood with gradients ([`PriorGradient`],
//! [`RowGradient`]) because one of its kernels (HMC) differentiates. A model without them
//! (a front end's callback, a simulator-backed likelihood) runs every other kernel through
//! [`Run::without_gradient`], which wraps both in [`NoGradient`] and refuses the gradient
//! kernels up front ([`McmcError::GradientRequired`]); the draws are bit-identical to
//! [`Run::new`] on the same model.

mod gradient;
mod options;

pub use gradient::{NO_GRADIENT, NoGradient};
pub use options::{DpBarkerOptions, DpHmcOptions, DpPenaltyOptions, RwmhOptions};

use alloc::vec;
use alloc::vec::Vec;
use dpinfer_accountants::Claim;
use dpinfer_simulators::{Prior, RowGradient, RowLikelihood, SimStream};
use rand_core::CryptoRng;

use crate::budget::{Accounting, Budget, GradientCharging};
use crate::chains::{Leg, Progress};
use crate::diagnostics::{ess_bulk, split_rhat};
use crate::model::PriorGradient;
use crate::rng::NoNoise;
use crate::{
    Barker, BarkerPrivacy, BarkerSettings, Budgeted, Hmc, HmcPrivacy, HmcSettings, McmcError,
    MultiChain, Penalty, PenaltyPrivacy, PenaltySettings, Proposal, Releases, Shear, Trace,
};

/// Stream domain of the chains' public randomness.
pub const CHAIN_DOMAIN: u64 = 0x4d43_4d43_0000_0000;

/// The (ε, δ) a private run may spend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    /// ε > 0.
    pub epsilon: f64,
    /// δ ∈ (0, 1).
    pub delta: f64,
}

/// Proposal step sizes.
#[derive(Clone, Debug, PartialEq)]
pub enum Scale {
    /// The same step size for every coordinate.
    Uniform(f64),
    /// One step size per coordinate.
    PerCoordinate(Vec<f64>),
}

impl Scale {
    fn resolve(&self, d: usize) -> Result<Vec<f64>, McmcError> {
        match self {
            Self::Uniform(s) => Ok(vec![*s; d]),
            Self::PerCoordinate(v) => check_len("proposal_scales", v, d).map(<[f64]>::to_vec),
        }
    }
}

/// Which random walk proposes θ' ([`Proposal`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WalkKind {
    /// Every coordinate moves ([`Proposal::Gaussian`]).
    Gaussian,
    /// One coordinate moves ([`Proposal::OneCoordinate`]).
    OneCoordinate,
    /// The guided random walk ([`Proposal::GuidedRandomWalk`]).
    Guided,
    /// A Gaussian walk in the public sheared coordinates of a banana
    /// ([`Proposal::Sheared`]).
    Sheared(Shear),
}

/// A random-walk proposal and the likelihood temperature.
#[derive(Clone, Debug, PartialEq)]
pub struct Walk {
    /// Step sizes (default 0.05 for every coordinate).
    pub scale: Scale,
    /// Proposal kind.
    pub kind: WalkKind,
    /// Likelihood temperature `T ∈ (0, 1]` (default 1).
    pub temperature: f64,
}

impl Walk {
    /// Step 0.05 in every coordinate, temperature 1.
    #[must_use]
    pub fn new(kind: WalkKind) -> Self {
        Self {
            scale: Scale::Uniform(0.05),
            kind,
            temperature: 1.0,
        }
    }

    /// The random-walk kernels' settings for dimension `d`.
    fn penalty_settings(&self, d: usize) -> Result<PenaltySettings, McmcError> {
        Ok(PenaltySettings {
            proposal: self.proposal(d)?,
            temperature: self.temperature,
        })
    }

    /// As [`Walk::penalty_settings`], for Barker.
    fn barker_settings(&self, d: usize) -> Result<BarkerSettings, McmcError> {
        Ok(BarkerSettings {
            proposal: self.proposal(d)?,
            temperature: self.temperature,
        })
    }

    fn proposal(&self, d: usize) -> Result<Proposal, McmcError> {
        let scale = self.scale.resolve(d)?;
        Ok(match self.kind {
            WalkKind::Gaussian => Proposal::Gaussian { scale },
            WalkKind::OneCoordinate => Proposal::OneCoordinate { scale },
            WalkKind::Guided => Proposal::GuidedRandomWalk { scale },
            WalkKind::Sheared(shear) => Proposal::Sheared { scale, shear },
        })
    }
}

/// DP penalty ([`Penalty::private`]) with the defaults of [`DpPenalty::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct DpPenalty {
    /// Proposal (default: guided random walk, step 0.05) and temperature.
    pub walk: Walk,
    /// Per-row log-ratio clip per unit distance `L` (default 5).
    pub clip: f64,
    /// Noise scale τ (default 0.5).
    pub tau: f64,
    /// Exponent α of `n` in the noise multiplier `τ n^α` (default ½).
    pub n_exponent: f64,
    /// zCDP or exact Gaussian PLD (default PLD).
    pub accounting: Accounting,
    /// The (ε, δ) target.
    pub target: Target,
}

impl DpPenalty {
    /// Defaults: guided random walk with step 0.05, T = 1, clip 5, τ = 0.5, α = ½, PLD.
    #[must_use]
    pub fn new(target: Target) -> Self {
        Self {
            walk: Walk::new(WalkKind::Guided),
            clip: 5.0,
            tau: 0.5,
            n_exponent: 0.5,
            accounting: Accounting::Pld,
            target,
        }
    }
}

/// DP Barker ([`Barker::private`]) with the defaults of [`DpBarker::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct DpBarker {
    /// Proposal (default: Gaussian, step 0.05) and temperature.
    pub walk: Walk,
    /// Batch size |B| (default 1000).
    pub batch: usize,
    /// The (ε, δ) target.
    pub target: Target,
}

impl DpBarker {
    /// Defaults: Gaussian proposal with step 0.05, T = 1, batch 1000.
    #[must_use]
    pub fn new(target: Target) -> Self {
        Self {
            walk: Walk::new(WalkKind::Gaussian),
            batch: 1000,
            target,
        }
    }
}

/// DP HMC ([`Hmc::private`]) with the defaults of [`DpHmc::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct DpHmc {
    /// Leapfrog step size η (default 0.01).
    pub step_size: f64,
    /// Leapfrog steps L (default 10).
    pub leapfrog_steps: u32,
    /// Diagonal inverse mass matrix (default: all 1).
    pub inv_mass: Option<Vec<f64>>,
    /// Likelihood temperature (default 1).
    pub temperature: f64,
    /// Per-row log-ratio clip per unit distance `b_l` (default 5).
    pub ratio_clip: f64,
    /// Per-row gradient L2 clip `b_g` (default 5).
    pub grad_clip: f64,
    /// Noise scale of the ratio releases τ_l (default 0.5).
    pub tau_l: f64,
    /// Noise scale of the gradient releases τ_g (default 0.5).
    pub tau_g: f64,
    /// zCDP or exact Gaussian PLD (default PLD).
    pub accounting: Accounting,
    /// Gradient charging (default Algorithm 3's reuse).
    pub charging: GradientCharging,
    /// The (ε, δ) target.
    pub target: Target,
}

impl DpHmc {
    /// Defaults: η = 0.01, L = 10, unit mass, T = 1, clips 5, τ_l = τ_g = 0.5, PLD, reuse.
    #[must_use]
    pub fn new(target: Target) -> Self {
        Self {
            step_size: 0.01,
            leapfrog_steps: 10,
            inv_mass: None,
            temperature: 1.0,
            ratio_clip: 5.0,
            grad_clip: 5.0,
            tau_l: 0.5,
            tau_g: 0.5,
            accounting: Accounting::Pld,
            charging: GradientCharging::Reuse,
            target,
        }
    }
}

/// Exact (non-private) HMC ([`Hmc::exact`]) with the defaults of [`Leapfrog::default`].
#[derive(Clone, Debug, PartialEq)]
pub struct Leapfrog {
    /// Leapfrog step size η (default 0.01).
    pub step_size: f64,
    /// Leapfrog steps L (default 10).
    pub leapfrog_steps: u32,
    /// Diagonal inverse mass matrix (default: all 1).
    pub inv_mass: Option<Vec<f64>>,
    /// Likelihood temperature (default 1).
    pub temperature: f64,
}

impl Default for Leapfrog {
    /// η = 0.01, L = 10, unit mass, T = 1 (the leapfrog defaults of [`DpHmc::new`]).
    fn default() -> Self {
        Self {
            step_size: 0.01,
            leapfrog_steps: 10,
            inv_mass: None,
            temperature: 1.0,
        }
    }
}

/// [`HmcSettings`] for dimension `d` (`inv_mass` checked against `d`, default all 1).
fn hmc_settings(
    step_size: f64,
    leapfrog_steps: u32,
    inv_mass: Option<&[f64]>,
    temperature: f64,
    d: usize,
) -> Result<HmcSettings, McmcError> {
    Ok(HmcSettings {
        step_size,
        leapfrog_steps,
        inv_mass: match inv_mass {
            Some(v) => check_len("inv_mass", v, d)?.to_vec(),
            None => vec![1.0; d],
        },
        temperature,
    })
}

/// The chains `c` builds, as one [`MultiChain`]; the first construction error otherwise.
fn chains_of<C: Budgeted>(
    c: impl Iterator<Item = Result<C, McmcError>>,
) -> Result<MultiChain<C>, McmcError> {
    MultiChain::new(c.collect::<Result<_, _>>()?)
}

/// The sampler of a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Kernel {
    /// Non-private random-walk Metropolis–Hastings ([`Penalty::exact`]; default walk:
    /// Gaussian, step 0.05, T = 1).
    Rwmh(Walk),
    /// Non-private random-walk Metropolis–Hastings with every per-row log-likelihood ratio
    /// clipped to `±clip·‖θ'−θ‖₂` and no noise ([`Penalty::with_clip`]; the thesis §7.2
    /// clipping experiment). **Not private.**
    ClippedRwmh {
        /// Proposal and temperature.
        walk: Walk,
        /// Per-row clip per unit distance `L` (finite, > 0).
        clip: f64,
    },
    /// Non-private MCMC with the Barker acceptance test ([`Barker::exact`]; thesis §3.2).
    Barker(Walk),
    /// Non-private HMC ([`Hmc::exact`]); needs gradients.
    Hmc(Leapfrog),
    /// DP penalty.
    DpPenalty(DpPenalty),
    /// DP Barker.
    DpBarker(DpBarker),
    /// DP HMC; needs gradients.
    DpHmc(DpHmc),
}

impl Kernel {
    /// Whether the kernel adds privacy noise (and so needs noise CSPRNGs and a target).
    #[must_use]
    pub fn is_private(&self) -> bool {
        matches!(
            self,
            Self::DpPenalty(_) | Self::DpBarker(_) | Self::DpHmc(_)
        )
    }

    /// Whether the kernel evaluates prior and likelihood gradients (HMC, DP HMC): the
    /// kernels [`Run::without_gradient`] refuses.
    #[must_use]
    pub fn needs_gradient(&self) -> bool {
        matches!(self, Self::Hmc(_) | Self::DpHmc(_))
    }

    /// The (ε, δ) target of a private kernel.
    #[must_use]
    pub fn target(&self) -> Option<Target> {
        match self {
            Self::Rwmh(_) | Self::ClippedRwmh { .. } | Self::Barker(_) | Self::Hmc(_) => None,
            Self::DpPenalty(k) => Some(k.target),
            Self::DpBarker(k) => Some(k.target),
            Self::DpHmc(k) => Some(k.target),
        }
    }
}

/// Run length and chain layout, for every kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSettings {
    /// Iterations per chain (private kernels: capped at the chain's share of the budget).
    /// Default 5000.
    pub iterations: u64,
    /// Draws discarded per chain (default `iterations / 2`; a private chain cut short by its
    /// budget discards at most half of what it ran).
    pub burn_in: Option<u64>,
    /// Chains (default 1), each with its own public stream and noise CSPRNG.
    pub chains: usize,
    /// Seed of the public randomness (default 0).
    pub seed: u64,
    /// Segments per chain after which [`Progress`] hears of it and ε spent is recorded
    /// (default 40; never changes a draw; every segment costs one accountant evaluation).
    pub segments: u64,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            iterations: 5000,
            burn_in: None,
            chains: 1,
            seed: 0,
            segments: 40,
        }
    }
}

impl RunSettings {
    /// The burn-in (default `iterations / 2`).
    #[must_use]
    pub fn burn_in(&self) -> u64 {
        self.burn_in.unwrap_or(self.iterations / 2)
    }

    /// Checks `iterations ≥ 1`, `burn_in < iterations`, `chains ≥ 1`, `segments ≥ 1`.
    ///
    /// # Errors
    ///
    /// [`McmcError::InvalidSize`] naming the field.
    pub fn validate(&self) -> Result<(), McmcError> {
        let size = |name, value: u64| McmcError::InvalidSize {
            name,
            value: usize::try_from(value).unwrap_or(usize::MAX),
        };
        if self.iterations == 0 {
            return Err(size("iterations", 0));
        }
        if self.burn_in() >= self.iterations {
            return Err(size("burn_in", self.burn_in()));
        }
        if self.chains == 0 {
            return Err(size("chains", 0));
        }
        if self.segments == 0 {
            return Err(size("segments", 0));
        }
        Ok(())
    }
}

fn check_len<'a>(name: &'static str, v: &'a [f64], d: usize) -> Result<&'a [f64], McmcError> {
    if v.len() == d {
        Ok(v)
    } else {
        Err(McmcError::WrongLength {
            name,
            expected: d,
            got: v.len(),
        })
    }
}

/// The chains of a run, by kernel.
#[derive(Debug)]
enum Chains<P, L, N> {
    Exact(MultiChain<Penalty<P, L, NoNoise>>),
    ExactBarker(MultiChain<Barker<P, L, NoNoise>>),
    ExactHmc(MultiChain<Hmc<P, L, NoNoise>>),
    Penalty(MultiChain<Penalty<P, L, N>>),
    Barker(MultiChain<Barker<P, L, N>>),
    Hmc(MultiChain<Hmc<P, L, N>>),
}

/// A checked run: chains built, the budget split, every chain's iterations fixed, and no
/// noise drawn yet (a caller that must record a release before the first noise draw does
/// so between [`Run::new`] and [`Run::run`]).
#[derive(Debug)]
pub struct Run<P, L, N> {
    chains: Chains<P, L, N>,
    legs: Vec<Leg>,
    seed: u64,
    budget: Option<Budget>,
    allowed: Option<u64>,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// One trace per chain (after burn-in).
    pub traces: Vec<Trace>,
    /// Iterations each chain ran.
    pub iterations: Vec<u64>,
    /// ε spent over the run after every segment: `(iterations of all chains, ε)`, from
    /// `(0, 0)`; empty for exact kernels.
    pub epsilon: Vec<(u64, f64)>,
    /// (ε, δ) the whole run spent (every iteration of every chain); `None` for exact kernels.
    pub spent: Option<(f64, f64)>,
    /// The run's budget (`None` for exact kernels).
    pub budget: Option<Budget>,
    /// Iterations the budget allowed over all chains.
    pub allowed: Option<u64>,
    /// Every noisy release, summed over the chains (an audit record).
    pub releases: Releases,
    /// The run's privacy claim as a value (relation, events with counts, accountant,
    /// conversion, report; [`Budget::claim`]); `None` for exact kernels.
    pub claim: Option<Claim>,
}

impl<P, L, N> Run<P, L, N>
where
    P: PriorGradient + Clone,
    L: RowLikelihood + RowGradient + Clone,
    N: CryptoRng,
{
    /// Builds `settings.chains` chains of `kernel` from `init`, splits the budget and fixes
    /// every chain's iterations. `noise` holds one CSPRNG per chain for a private kernel and
    /// must be empty for an exact one.
    ///
    /// # Errors
    ///
    /// Invalid settings ([`RunSettings::validate`], [`McmcError::WrongLength`] for
    /// `init`, `proposal_scales`, `inv_mass`), a sampler's own checks,
    /// [`McmcError::DimensionMismatch`] for the wrong number of noise CSPRNGs,
    /// [`McmcError::BudgetExhausted`] if a chain's share is below 2 iterations.
    pub fn new(
        prior: P,
        lik: L,
        init: &[f64],
        kernel: &Kernel,
        settings: &RunSettings,
        noise: Vec<N>,
    ) -> Result<Self, McmcError> {
        settings.validate()?;
        let d = lik.dim();
        check_len("init", init, d)?;
        let want = if kernel.is_private() {
            settings.chains
        } else {
            0
        };
        if noise.len() != want {
            return Err(McmcError::DimensionMismatch {
                expected: want,
                got: noise.len(),
            });
        }
        let m = settings.chains;
        let chains = match kernel {
            Kernel::Rwmh(w) => {
                let s = w.penalty_settings(d)?;
                let c = (0..m).map(|_| Penalty::exact(prior.clone(), lik.clone(), s.clone(), init));
                Chains::Exact(chains_of(c)?)
            }
            Kernel::ClippedRwmh { walk, clip } => {
                let s = walk.penalty_settings(d)?;
                let c = (0..m).map(|_| {
                    Penalty::exact(prior.clone(), lik.clone(), s.clone(), init)?.with_clip(*clip)
                });
                Chains::Exact(chains_of(c)?)
            }
            Kernel::Barker(w) => {
                let s = w.barker_settings(d)?;
                let c = (0..m).map(|_| Barker::exact(prior.clone(), lik.clone(), s.clone(), init));
                Chains::ExactBarker(chains_of(c)?)
            }
            Kernel::Hmc(h) => {
                let s = hmc_settings(
                    h.step_size,
                    h.leapfrog_steps,
                    h.inv_mass.as_deref(),
                    h.temperature,
                    d,
                )?;
                let c = (0..m).map(|_| Hmc::exact(prior.clone(), lik.clone(), s.clone(), init));
                Chains::ExactHmc(chains_of(c)?)
            }
            Kernel::DpPenalty(k) => {
                let s = k.walk.penalty_settings(d)?;
                let p = PenaltyPrivacy {
                    clip: k.clip,
                    tau: k.tau,
                    n_exponent: k.n_exponent,
                    epsilon: k.target.epsilon,
                    delta: k.target.delta,
                    accounting: k.accounting,
                };
                let c = noise
                    .into_iter()
                    .map(|r| Penalty::private(prior.clone(), lik.clone(), s.clone(), p, init, r));
                Chains::Penalty(chains_of(c)?)
            }
            Kernel::DpBarker(k) => {
                let s = k.walk.barker_settings(d)?;
                let p = BarkerPrivacy {
                    batch: k.batch,
                    epsilon: k.target.epsilon,
                    delta: k.target.delta,
                };
                let c = noise
                    .into_iter()
                    .map(|r| Barker::private(prior.clone(), lik.clone(), s.clone(), p, init, r));
                Chains::Barker(chains_of(c)?)
            }
            Kernel::DpHmc(k) => {
                let s = hmc_settings(
                    k.step_size,
                    k.leapfrog_steps,
                    k.inv_mass.as_deref(),
                    k.temperature,
                    d,
                )?;
                let p = HmcPrivacy {
                    ratio_clip: k.ratio_clip,
                    grad_clip: k.grad_clip,
                    tau_l: k.tau_l,
                    tau_g: k.tau_g,
                    epsilon: k.target.epsilon,
                    delta: k.target.delta,
                    accounting: k.accounting,
                    charging: k.charging,
                };
                let c = noise
                    .into_iter()
                    .map(|r| Hmc::private(prior.clone(), lik.clone(), s.clone(), p, init, r));
                Chains::Hmc(chains_of(c)?)
            }
        };
        let Plan {
            legs,
            budget,
            allowed,
        } = match &chains {
            Chains::Exact(mc) => plan(mc, settings)?,
            Chains::ExactBarker(mc) => plan(mc, settings)?,
            Chains::ExactHmc(mc) => plan(mc, settings)?,
            Chains::Penalty(mc) => plan(mc, settings)?,
            Chains::Barker(mc) => plan(mc, settings)?,
            Chains::Hmc(mc) => plan(mc, settings)?,
        };
        Ok(Self {
            chains,
            legs,
            seed: settings.seed,
            budget,
            allowed,
        })
    }
}

impl<P, L, N> Run<NoGradient<P>, NoGradient<L>, N>
where
    P: Prior + Clone,
    L: RowLikelihood + Clone,
    N: CryptoRng,
{
    /// [`Run::new`] for a prior and likelihood without gradients (each wrapped in
    /// [`NoGradient`]): every kernel but [`Kernel::Hmc`] and [`Kernel::DpHmc`], with the draws,
    /// budget and claim [`Run::new`] gives for the same model, kernel and seeds.
    ///
    /// # Errors
    ///
    /// [`McmcError::GradientRequired`] for a kernel that needs gradients
    /// ([`Kernel::needs_gradient`]); otherwise as [`Run::new`].
    pub fn without_gradient(
        prior: P,
        lik: L,
        init: &[f64],
        kernel: &Kernel,
        settings: &RunSettings,
        noise: Vec<N>,
    ) -> Result<Self, McmcError> {
        if kernel.needs_gradient() {
            return Err(McmcError::GradientRequired);
        }
        Run::new(
            NoGradient(prior),
            NoGradient(lik),
            init,
            kernel,
            settings,
            noise,
        )
    }
}

/// Every chain's leg, the budget and the iterations it allows over all chains.
fn plan<S: Budgeted>(mc: &MultiChain<S>, settings: &RunSettings) -> Result<Plan, McmcError> {
    let burn_in = settings.burn_in();
    let allowed = mc.shares().map(|l| l.total);
    let legs = mc
        .chains()
        .iter()
        .map(|c| match c.limit() {
            None => Ok(leg(settings.iterations, burn_in, settings.segments)),
            Some(share) => {
                let k = settings.iterations.min(share);
                if k < 2 {
                    return Err(McmcError::BudgetExhausted {
                        allowed: allowed.unwrap_or(share),
                    });
                }
                // Only a chain cut short by its budget discards at most half of what it ran.
                let b = if k < settings.iterations {
                    burn_in.min(k / 2)
                } else {
                    burn_in
                };
                Ok(leg(k, b, settings.segments))
            }
        })
        .collect::<Result<_, _>>()?;
    let budget = mc.chains().first().and_then(|c| c.budget().copied());
    Ok(Plan {
        legs,
        budget,
        allowed,
    })
}

/// Every chain's leg, the budget and the iterations it allows over all chains.
struct Plan {
    legs: Vec<Leg>,
    budget: Option<Budget>,
    allowed: Option<u64>,
}

fn leg(iterations: u64, burn_in: u64, segments: u64) -> Leg {
    Leg {
        iterations,
        burn_in,
        segment: iterations.div_ceil(segments).max(1),
    }
}

impl<P, L, N> Run<P, L, N> {
    /// Iterations each chain will run.
    #[must_use]
    pub fn iterations(&self) -> Vec<u64> {
        self.legs.iter().map(|l| l.iterations).collect()
    }

    /// The budget (`None` for exact kernels).
    #[must_use]
    pub fn budget(&self) -> Option<&Budget> {
        self.budget.as_ref()
    }

    /// Iterations the budget allows over all chains (`None` for exact kernels).
    #[must_use]
    pub fn allowed(&self) -> Option<u64> {
        self.allowed
    }

    fn rngs(&self) -> Vec<SimStream> {
        (0..self.legs.len() as u64)
            .map(|i| SimStream::with_domain(self.seed, CHAIN_DOMAIN, i))
            .collect()
    }

    fn output(self, traces: Vec<Trace>, releases: Releases) -> Result<RunOutput, McmcError> {
        let chains = self.legs.len() as u64;
        let (epsilon, spent, claim) = match &self.budget {
            None => (Vec::new(), None, None),
            Some(b) => {
                let segments = self
                    .legs
                    .iter()
                    .map(|l| l.iterations.div_ceil(l.segment))
                    .max()
                    .unwrap_or(0);
                let mut eps = vec![(0, 0.0)];
                for s in 1..=segments {
                    let done: u64 = self
                        .legs
                        .iter()
                        .map(|l| s.saturating_mul(l.segment).min(l.iterations))
                        .sum();
                    eps.push((done, b.spent(done, chains)?.0));
                }
                let total = self.legs.iter().map(|l| l.iterations).sum();
                (eps, Some(b.spent(total, chains)?), b.claim(total, chains)?)
            }
        };
        Ok(RunOutput {
            traces,
            iterations: self.iterations(),
            epsilon,
            spent,
            budget: self.budget,
            allowed: self.allowed,
            releases,
            claim,
        })
    }
}

impl RunOutput {
    /// Per coordinate `(bulk ESS, R̂)` of the kept draws: over the chains (split-R̂) when there
    /// are several, over the two halves of the draws as two chains for one chain. NaN where a
    /// chain is too short.
    #[must_use]
    pub fn diagnostics(&self) -> Vec<(f64, f64)> {
        let d = self.traces.first().map_or(0, |t| t.dim);
        (0..d)
            .map(|j| {
                let cols: Vec<Vec<f64>> = self.traces.iter().map(|t| t.coordinate(j)).collect();
                let all: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
                let rhat = if let [col] = all.as_slice() {
                    let half = col.len() / 2;
                    let (a, b) = col.split_at(half);
                    split_rhat(&[a, &b[..half.min(b.len())]])
                } else {
                    split_rhat(&all)
                };
                let ess = ess_bulk(&all).unwrap_or(f64::NAN);
                (ess, rhat.unwrap_or(f64::NAN))
            })
            .collect()
    }
}

/// Runs `mc` (sequentially, or on the rayon pool) and sums its releases.
macro_rules! drive {
    ($self:ident, $progress:ident, $method:ident) => {{
        let mut rngs = $self.rngs();
        let legs = $self.legs.clone();
        let (traces, releases) = match &mut $self.chains {
            Chains::Exact(mc) => (mc.$method(&legs, &mut rngs, $progress)?, mc.releases()),
            Chains::ExactBarker(mc) => (mc.$method(&legs, &mut rngs, $progress)?, mc.releases()),
            Chains::ExactHmc(mc) => (mc.$method(&legs, &mut rngs, $progress)?, mc.releases()),
            Chains::Penalty(mc) => (mc.$method(&legs, &mut rngs, $progress)?, mc.releases()),
            Chains::Barker(mc) => (mc.$method(&legs, &mut rngs, $progress)?, mc.releases()),
            Chains::Hmc(mc) => (mc.$method(&legs, &mut rngs, $progress)?, mc.releases()),
        };
        $self.output(traces, releases)
    }};
}

impl<P, L, N> Run<P, L, N>
where
    P: PriorGradient,
    L: RowLikelihood + RowGradient,
    N: CryptoRng,
{
    /// Runs every chain in turn, telling `progress` after every segment.
    ///
    /// # Errors
    ///
    /// The first sampler or accounting error.
    pub fn run(mut self, progress: &dyn Progress) -> Result<RunOutput, McmcError> {
        drive!(self, progress, run_legs)
    }
}

#[cfg(feature = "parallel")]
impl<P, L, N> Run<P, L, N>
where
    P: PriorGradient + Send,
    L: RowLikelihood + RowGradient + Send,
    N: CryptoRng + Send,
{
    /// As [`Run::run`], the chains as tasks of the current rayon pool: bit-identical to
    /// [`Run::run`] for every thread count (each chain only uses its own streams).
    ///
    /// # Errors
    ///
    /// As [`Run::run`]; [`McmcError::WorkerFailed`] if a chain panicked.
    pub fn run_parallel(mut self, progress: &dyn Progress) -> Result<RunOutput, McmcError> {
        drive!(self, progress, run_legs_parallel)
    }
}
