//! Several chains on one privacy budget.
//!
//! # Privacy
//!
//! Every chain of a private sampler reads the same private data, so the chains **compose**:
//! the run releases everything every chain released. The per-iteration releases are identical
//! mechanisms (zCDP, PLD and RDP all compose additively), so `m` chains of `k₁, …, k_m`
//! iterations cost what one chain of `Σ k_i` iterations costs **plus** whatever each chain
//! releases once on its own: DP HMC with [`GradientCharging::Reuse`] releases a noisy start
//! gradient when each chain is built, so `m` chains release `kL + m` gradients, not `kL + 1`.
//! [`Budgeted::chains_limit`] returns the total iteration count the budget allows for `m`
//! chains with those per-chain releases charged; the [`ChainShares`] splits that count over the
//! chains, and [`MultiChain`] caps each chain at its share, so the run as a whole refuses to
//! exceed the budget. [`Budgeted::releases`] reports what a chain actually released (the
//! tests compose these over every chain and check them against the budget). Each chain needs
//! its own proposal RNG stream and its own noise CSPRNG.
//!
//! [`GradientCharging::Reuse`]: crate::budget::GradientCharging::Reuse

use alloc::vec::Vec;
use rand_core::Rng;

use crate::McmcError;
use crate::sampler::{MarkovChain, Trace};

/// The noisy releases a private sampler has made so far (an audit record: every noise draw
/// that touched the data is counted where it is drawn).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Releases {
    /// Gaussian mechanisms on the whole data set (DP penalty tests; DP HMC acceptance tests
    /// and gradients, including a start gradient released at construction).
    pub gaussian: u64,
    /// Their summed cost `Σ Δ²/(2σ²)` with the σ actually used: the zCDP ρ and the Gaussian
    /// PLD mean μ of their composition (Bun–Steinke 2016 Lemma 2.3; SMM19 Lemma 11).
    pub gaussian_rho: f64,
    /// How many of the `gaussian` releases were gradients (DP HMC).
    pub gradients: u64,
    /// Subsampled acceptance tests (DP Barker, subsampled DP penalty), each one
    /// iteration's subsampled mechanism as accounted by WBK19 (thesis Theorems 8–9).
    pub subsampled: u64,
}

/// Samplers whose run length is limited by a privacy budget.
pub trait Budgeted: MarkovChain {
    /// Iterations the budget allows in total (`None`: exact kernel, unlimited).
    fn limit(&self) -> Option<u64>;
    /// Iterations the budget allows **summed over** `chains` chains built with the same
    /// privacy parameters, charging each chain's one-off releases (DP HMC with reused
    /// gradients: one start gradient per chain). `None` for exact kernels; never more than
    /// [`Budgeted::limit`].
    ///
    /// # Errors
    ///
    /// [`McmcError::InvalidSize`] for `chains == 0`; accounting failures.
    fn chains_limit(&self, chains: u64) -> Result<Option<u64>, McmcError>;
    /// Lowers the limit to `cap`.
    fn cap(&mut self, cap: u64);
    /// What this chain has released so far.
    fn releases(&self) -> Releases;
    /// The privacy budget (`None`: exact kernel).
    fn budget(&self) -> Option<&crate::budget::Budget>;
}

/// The budget accessors of a private sampler that embeds a [`crate::sampler::Meter`] as
/// `meter`: inherent `cap_iterations`, `max_iterations`, `chains_max_iterations`, `budget`,
/// `released`, `epsilon_spent`, and the [`Budgeted`] impl.
macro_rules! metered {
    ($t:ident) => {
        impl<P, L, N> $t<P, L, N> {
            /// Lowers the iteration limit to `cap` (never raises it); used to split one budget
            /// over several chains (see [`crate::ChainShares`]). No effect on exact kernels.
            pub fn cap_iterations(&mut self, cap: u64) {
                if let Some(b) = self.meter.budget.as_mut() {
                    b.cap(cap);
                }
            }

            /// Iterations the budget allows in total (`None` for exact kernels).
            #[must_use]
            pub fn max_iterations(&self) -> Option<u64> {
                self.meter.budget.map(|b| b.max_iterations())
            }

            /// Iterations the budget allows **summed over** `chains` chains with these privacy
            /// parameters ([`crate::budget::Budget::chains_limit`]: DP HMC with reused
            /// gradients charges one start gradient per chain). Never more than
            /// `max_iterations`; `None` for exact kernels.
            ///
            /// # Errors
            ///
            /// [`McmcError::InvalidSize`] for `chains == 0`; accounting failures.
            pub fn chains_max_iterations(
                &self,
                chains: u64,
            ) -> Result<Option<u64>, crate::McmcError> {
                crate::chains::check_chains(chains)?;
                self.meter
                    .budget
                    .map(|b| b.chains_limit(chains))
                    .transpose()
            }

            /// The privacy budget (`None` for exact kernels).
            #[must_use]
            pub fn budget(&self) -> Option<&crate::budget::Budget> {
                self.meter.budget.as_ref()
            }

            /// The noisy releases made so far (see [`crate::Releases`]).
            #[must_use]
            pub fn released(&self) -> crate::Releases {
                self.meter.released
            }

            /// (ε, δ) spent by the iterations run so far (`None` for exact kernels).
            ///
            /// # Errors
            ///
            /// Accounting failures.
            pub fn epsilon_spent(&self) -> Result<Option<(f64, f64)>, crate::McmcError> {
                self.meter.spent()
            }
        }

        impl<P, L, N> crate::Budgeted for $t<P, L, N>
        where
            $t<P, L, N>: crate::MarkovChain,
        {
            fn limit(&self) -> Option<u64> {
                self.max_iterations()
            }
            fn chains_limit(&self, chains: u64) -> Result<Option<u64>, crate::McmcError> {
                self.chains_max_iterations(chains)
            }
            fn cap(&mut self, cap: u64) {
                self.cap_iterations(cap);
            }
            fn releases(&self) -> crate::Releases {
                self.released()
            }
            fn budget(&self) -> Option<&crate::budget::Budget> {
                self.meter.budget.as_ref()
            }
        }
    };
}
pub(crate) use metered;

/// [`MarkovChain`] for a random-walk kernel (DP penalty, subsampled DP penalty, Barker) that
/// embeds a `walk: Walker`, a `prior` and a `meter`: one place runs the iteration — refuse a
/// step past the budget, propose θ′, ask the kernel's own acceptance test
/// `accept(rng, Proposed) -> Result<Counts, McmcError>`, move and assemble the step record.
/// `$noise` bounds the noise source `N`. Includes [`metered!`]'s budget accessors.
macro_rules! walk_chain {
    ($t:ident, $($noise:tt)+) => {
        crate::chains::metered!($t);

        impl<P: Prior, L: RowLikelihood, N: $($noise)+> MarkovChain for $t<P, L, N> {
            fn dim(&self) -> usize {
                self.walk.theta.len()
            }
            fn position(&self) -> &[f64] {
                &self.walk.theta
            }
            fn step<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<Step<'_>, McmcError> {
                self.meter.begin()?;
                let proposed = self.walk.propose(rng, &self.prior);
                let counts = self.accept(rng, proposed)?;
                self.walk.decide(counts.accepted, proposed.log_prior);
                Ok(self.meter.step(&self.walk.theta, counts))
            }
        }
    };
}
pub(crate) use walk_chain;

/// `chains` as a `u64`, refusing 0.
pub(crate) fn check_chains(chains: u64) -> Result<u64, McmcError> {
    if chains == 0 {
        return Err(McmcError::InvalidSize {
            name: "chains",
            value: 0,
        });
    }
    Ok(chains)
}

/// Splits one run's iteration budget over chains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainShares {
    /// Iterations allowed in total, over all chains.
    pub total: u64,
    /// Each chain's share (sums to at most `total`).
    pub shares: Vec<u64>,
}

impl ChainShares {
    /// Splits `total` iterations as evenly as possible over `chains` chains.
    ///
    /// # Errors
    ///
    /// [`McmcError::InvalidSize`] for `chains == 0`.
    pub fn split(total: u64, chains: usize) -> Result<Self, McmcError> {
        let m = u64::try_from(chains).map_err(|_| McmcError::InvalidSize {
            name: "chains",
            value: chains,
        })?;
        if m == 0 {
            return Err(McmcError::InvalidSize {
                name: "chains",
                value: 0,
            });
        }
        let base = total / m;
        let extra = total % m;
        let shares = (0..m).map(|i| base + u64::from(i < extra)).collect();
        Ok(Self { total, shares })
    }
}

/// Several chains of the same private sampler sharing one budget.
#[derive(Debug)]
pub struct MultiChain<S> {
    chains: Vec<S>,
    shares: Option<ChainShares>,
}

impl<S: Budgeted> MultiChain<S> {
    /// Takes chains built with the **same** privacy parameters (so each one's own limit is the
    /// whole budget's iteration count) and caps each at an equal share of the count the budget
    /// allows for this many chains ([`Budgeted::chains_limit`]: per-chain one-off releases
    /// are charged).
    ///
    /// # Errors
    ///
    /// [`McmcError::InvalidSize`] for no chains; [`McmcError::InvalidParameter`] if the chains
    /// disagree on private/exact or on their limits; [`McmcError::BudgetExhausted`] if a
    /// share is 0.
    pub fn new(mut chains: Vec<S>) -> Result<Self, McmcError> {
        let first = chains
            .first()
            .ok_or(McmcError::InvalidSize {
                name: "chains",
                value: 0,
            })?
            .limit();
        if chains.iter().any(|c| c.limit() != first) {
            return Err(McmcError::param("chain limits", f64::NAN));
        }
        let m = u64::try_from(chains.len()).map_err(|_| McmcError::InvalidSize {
            name: "chains",
            value: chains.len(),
        })?;
        let total = chains[0].chains_limit(m)?;
        for c in &chains[1..] {
            if c.chains_limit(m)? != total {
                return Err(McmcError::param("chain limits", f64::NAN));
            }
        }
        let shares = match total {
            None => None,
            Some(total) => {
                let l = ChainShares::split(total, chains.len())?;
                if l.shares.contains(&0) {
                    return Err(McmcError::BudgetExhausted { allowed: total });
                }
                for (c, &s) in chains.iter_mut().zip(&l.shares) {
                    c.cap(s);
                }
                Some(l)
            }
        };
        Ok(Self { chains, shares })
    }

    /// The budget split (`None` for exact kernels).
    #[must_use]
    pub fn shares(&self) -> Option<&ChainShares> {
        self.shares.as_ref()
    }

    /// The chains.
    #[must_use]
    pub fn chains(&self) -> &[S] {
        &self.chains
    }

    /// Everything the run has released so far, summed over the chains (compose
    /// `gaussian_rho` as one Gaussian PLD / zCDP ρ, `subsampled` as that many subsampled
    /// steps).
    #[must_use]
    pub fn releases(&self) -> Releases {
        self.chains
            .iter()
            .map(Budgeted::releases)
            .fold(Releases::default(), |a, r| Releases {
                gaussian: a.gaussian + r.gaussian,
                gaussian_rho: a.gaussian_rho + r.gaussian_rho,
                gradients: a.gradients + r.gradients,
                subsampled: a.subsampled + r.subsampled,
            })
    }

    /// Runs chain `i` for `iterations` with `rngs[i]` (one independent stream per chain);
    /// private chains stop at their share. Returns one trace per chain.
    ///
    /// # Errors
    ///
    /// [`McmcError::DimensionMismatch`] if `rngs.len()` differs from the number of chains;
    /// the first sampler error other than the budget running out.
    pub fn run<R: Rng>(
        &mut self,
        iterations: u64,
        burn_in: u64,
        rngs: &mut [R],
    ) -> Result<Vec<Trace>, McmcError> {
        let legs = self.legs(iterations, burn_in);
        self.run_legs(&legs, rngs, &())
    }

    /// One leg per chain: its share (capped at `iterations`) in a single segment.
    fn legs(&self, iterations: u64, burn_in: u64) -> Vec<Leg> {
        self.chains
            .iter()
            .map(|c| {
                let n = c.limit().map_or(iterations, |l| l.min(iterations));
                Leg {
                    iterations: n,
                    burn_in,
                    segment: n.max(1),
                }
            })
            .collect()
    }

    /// Runs chain `i` for `legs[i]` with `rngs[i]`, reporting every segment to `progress`.
    pub(crate) fn run_legs<R: Rng>(
        &mut self,
        legs: &[Leg],
        rngs: &mut [R],
        progress: &dyn Progress,
    ) -> Result<Vec<Trace>, McmcError> {
        self.check_rngs(rngs.len())?;
        self.chains
            .iter_mut()
            .zip(rngs.iter_mut())
            .zip(legs)
            .enumerate()
            .map(|(i, ((c, rng), leg))| leg.run(i, c, rng, progress))
            .collect()
    }

    fn check_rngs(&self, got: usize) -> Result<(), McmcError> {
        if got != self.chains.len() {
            return Err(McmcError::DimensionMismatch {
                expected: self.chains.len(),
                got,
            });
        }
        Ok(())
    }
}

/// What one chain of a run does: `iterations` steps in segments of `segment`, the first
/// `burn_in` draws discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Leg {
    pub(crate) iterations: u64,
    pub(crate) burn_in: u64,
    pub(crate) segment: u64,
}

impl Leg {
    fn run<S: MarkovChain, R: Rng>(
        &self,
        chain: usize,
        c: &mut S,
        rng: &mut R,
        progress: &dyn Progress,
    ) -> Result<Trace, McmcError> {
        let mut t = Trace::with_burn_in(self.burn_in);
        let mut done = 0;
        while done < self.iterations {
            let k = self.segment.min(self.iterations - done);
            c.run(k, rng, &mut t)?;
            done += k;
            progress.advanced(chain, k);
        }
        Ok(t)
    }
}

/// Receives a multi-chain run's progress (from the chain's worker thread under
/// `run_parallel`, hence `Sync`). `()` ignores it.
pub trait Progress: Sync {
    /// Chain `chain` has run `iterations` more iterations.
    fn advanced(&self, chain: usize, iterations: u64) {
        let _ = (chain, iterations);
    }
}

impl Progress for () {}

#[cfg(feature = "parallel")]
impl<S: Budgeted + Send> MultiChain<S> {
    /// As [`MultiChain::run`], the chains run as tasks of the current rayon thread pool
    /// (choose the thread count with `rayon::ThreadPool::install`). Each chain only uses its
    /// own RNG streams, so the traces are bit-identical to [`MultiChain::run`] for every
    /// thread count.
    ///
    /// # Errors
    ///
    /// As [`MultiChain::run`] (the first error in chain order); [`McmcError::WorkerFailed`]
    /// if a chain panicked (a bug in a caller's model), instead of propagating the panic.
    pub fn run_parallel<R: Rng + Send>(
        &mut self,
        iterations: u64,
        burn_in: u64,
        rngs: &mut [R],
    ) -> Result<Vec<Trace>, McmcError> {
        let legs = self.legs(iterations, burn_in);
        self.run_legs_parallel(&legs, rngs, &())
    }

    /// [`MultiChain::run_legs`] on the rayon pool.
    pub(crate) fn run_legs_parallel<R: Rng + Send>(
        &mut self,
        legs: &[Leg],
        rngs: &mut [R],
        progress: &dyn Progress,
    ) -> Result<Vec<Trace>, McmcError> {
        use core::panic::AssertUnwindSafe;
        use rayon::prelude::*;
        self.check_rngs(rngs.len())?;
        let results: Vec<Result<Trace, McmcError>> = self
            .chains
            .par_iter_mut()
            .zip(rngs.par_iter_mut())
            .zip(legs.par_iter())
            .enumerate()
            .map(|(i, ((c, rng), leg))| {
                std::panic::catch_unwind(AssertUnwindSafe(|| leg.run(i, c, rng, progress)))
                    .map_err(|_| McmcError::WorkerFailed)?
            })
            .collect();
        results.into_iter().collect()
    }
}
