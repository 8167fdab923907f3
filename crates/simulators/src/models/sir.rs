//! Stochastic SIR epidemic as a Markov jump process (Xiong, Ju, Zhang, *Simulation-based
//! inference from privacy-protected data*, §4.1 and Appendix E.1).
//!
//! K people; infections at rate β S I / K (S → S − 1, I → I + 1), recoveries at rate γ I
//! (I → I − 1, R → R + 1); start (S, I, R) = (K − 1, 1, 0). θ = (β, γ) on the natural scale.
//! The output is I(t_ℓ) (counts, as `f64`) at L observation times, one per incremental
//! block: the evenly spaced grid t_ℓ = ℓ·T/(L − 1), ℓ = 0..L−1 (T the last observation time),
//! or explicit times ([`SirSettings::with_times`]).
//!
//! Paper settings: K = 10⁶, L = 10 observations at t = 0, 17, 34, …, 153 (the authors' code,
//! see below); priors log β ~ N(log 0.4, 0.5) and log γ ~ N(log 0.125, 0.2) where **0.5 and
//! 0.2 are variances**; θ* = (e^−0.5, e^−3).
//!
//! **Observation times — what we chose and why.** The appendix records the process on a unit
//! grid over [0, 160] and publishes I(t) at "L = 10 evenly-spaced points in time". The
//! authors' code takes every ⌊160/9⌋ = 17th day from 0: t = 0, 17, …, 153, which is the
//! evenly spaced grid with T = 153 (t_ℓ = 153ℓ/9 = 17ℓ exactly). That grid is the default
//! (before issue 13 it was ℓ·160/9 = 0, 17.8, …, 160, which shifts the posterior of log β on
//! the published privatized curve by −0.05 to −0.06). It includes t = 0, matching the
//! published private statistic whose first entry 0.0010 equals n(I(0) + m)/(K + 2m)/n ≈ 0.001
//! for I(0) = 1.
//!
//! [`Sir`] is exact (Gillespie 1977, direct method). Between observation times it uses the
//! memorylessness of the exponential holding time: a waiting time that would cross t_ℓ is
//! discarded and redrawn from t_ℓ, which leaves the law of the path unchanged. The process
//! has at most 2K − 1 events, so every run terminates.
//!
//! [`SirTauLeap`] is an **approximate** tau-leaping simulator (Gillespie 2001): Poisson
//! numbers of infections and recoveries per step τ, clamped to the available S and I. Opt-in
//! only; its error against the exact simulator is measured in the tests.

use crate::dist;
use crate::error::{SimError, check_len, positive};
use crate::prior::{LogNormal, Product};
use crate::simulator::{IncrementalSimulator, Simulator};
use rand_core::Rng;

/// Most observation times an explicit grid ([`SirSettings::with_times`]) can hold.
pub const SIR_MAX_OBS: usize = 64;

/// Settings shared by the exact and tau-leaping SIR simulators.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SirSettings {
    /// Population size K ≥ 2 (≤ 2⁵³ so counts are exact in `f64`).
    pub population: u64,
    /// Last observation time T > 0 of the evenly spaced grid t_ℓ = ℓ T/(L − 1) (unused when
    /// `times` is set).
    pub t_end: f64,
    /// Number of observation times L ≥ 2.
    pub n_obs: usize,
    /// Explicit observation times (the first `n_obs` entries: finite, ≥ 0, strictly
    /// increasing); `None` for the evenly spaced grid. Set with [`SirSettings::with_times`].
    pub times: Option<[f64; SIR_MAX_OBS]>,
}

impl SirSettings {
    /// The paper's setting: K = 10⁶, L = 10 observations at t = 0, 17, …, 153 (the authors'
    /// grid: evenly spaced with T = 153, so t_ℓ = 17ℓ exactly; see the module docs).
    #[must_use]
    pub const fn paper() -> Self {
        Self {
            population: 1_000_000,
            t_end: 153.0,
            n_obs: 10,
            times: None,
        }
    }

    /// The same settings observed at the explicit times `times` (L = `times.len()`).
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] unless `2 ≤ L ≤` [`SIR_MAX_OBS`];
    /// [`SimError::InvalidParameter`] for a time that is negative, non-finite or not
    /// strictly after the previous one.
    pub fn with_times(mut self, times: &[f64]) -> Result<Self, SimError> {
        if times.len() < 2 || times.len() > SIR_MAX_OBS {
            return Err(SimError::InvalidSize {
                name: "observation times",
                value: times.len() as u64,
            });
        }
        let mut arr = [0.0; SIR_MAX_OBS];
        arr[..times.len()].copy_from_slice(times);
        self.n_obs = times.len();
        self.t_end = times[times.len() - 1];
        self.times = Some(arr);
        self.validate()?;
        Ok(self)
    }

    fn validate(&self) -> Result<(), SimError> {
        if self.population < 2 || self.population > (1u64 << 53) {
            return Err(SimError::InvalidSize {
                name: "population",
                value: self.population,
            });
        }
        if self.n_obs < 2 {
            return Err(SimError::InvalidSize {
                name: "n_obs",
                value: self.n_obs as u64,
            });
        }
        match &self.times {
            None => {
                positive("t_end", self.t_end)?;
            }
            Some(t) => {
                if self.n_obs > SIR_MAX_OBS {
                    return Err(SimError::InvalidSize {
                        name: "n_obs",
                        value: self.n_obs as u64,
                    });
                }
                let mut prev = -1.0;
                for &x in &t[..self.n_obs] {
                    if !(x.is_finite() && x >= 0.0 && x > prev) {
                        return Err(SimError::InvalidParameter {
                            name: "observation time",
                            value: x,
                        });
                    }
                    prev = x;
                }
            }
        }
        Ok(())
    }

    /// Observation time ℓ.
    #[inline]
    #[must_use]
    pub fn obs_time(&self, l: usize) -> f64 {
        if let Some(t) = &self.times {
            return t[l.min(self.n_obs - 1).min(SIR_MAX_OBS - 1)];
        }
        #[allow(clippy::cast_precision_loss)]
        let (l, last) = (l as f64, (self.n_obs - 1) as f64);
        if l >= last {
            self.t_end
        } else {
            self.t_end * l / last
        }
    }

    #[allow(clippy::cast_precision_loss)]
    fn k(&self) -> f64 {
        self.population as f64
    }
}

impl Default for SirSettings {
    fn default() -> Self {
        Self::paper()
    }
}

/// The paper's true parameter θ* = (e^−0.5, e^−3).
#[must_use]
pub fn theta_star() -> [f64; 2] {
    [libm::exp(-0.5), libm::exp(-3.0)]
}

/// The paper's prior: log β ~ N(log 0.4, 0.5), log γ ~ N(log 0.125, 0.2) (variances).
///
/// # Errors
/// Never (kept fallible for uniformity).
pub fn paper_prior() -> Result<Product<LogNormal, LogNormal>, SimError> {
    Ok(Product::new(
        LogNormal::new(libm::log(0.4), libm::sqrt(0.5))?,
        LogNormal::new(libm::log(0.125), libm::sqrt(0.2))?,
    ))
}

/// State of one SIR trajectory between observation blocks.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SirRun {
    beta_over_k: f64,
    gamma: f64,
    s: f64,
    i: f64,
    t: f64,
    next_obs: usize,
    events: u64,
}

impl SirRun {
    /// Susceptibles S(t) at the last observation time reached.
    #[must_use]
    pub const fn susceptible(&self) -> f64 {
        self.s
    }
    /// Infected I(t).
    #[must_use]
    pub const fn infected(&self) -> f64 {
        self.i
    }
    /// Current time t.
    #[must_use]
    pub const fn time(&self) -> f64 {
        self.t
    }
    /// Number of events simulated so far.
    #[must_use]
    pub const fn events(&self) -> u64 {
        self.events
    }
}

fn start_run(s: &SirSettings, theta: &[f64]) -> Result<SirRun, SimError> {
    check_len("theta", 2, theta.len())?;
    for (i, &x) in theta.iter().enumerate() {
        if !(x.is_finite() && x >= 0.0) {
            return Err(SimError::OutsideSupport { index: i });
        }
    }
    let k = s.k();
    Ok(SirRun {
        beta_over_k: theta[0] / k,
        gamma: theta[1],
        s: k - 1.0,
        i: 1.0,
        t: 0.0,
        next_obs: 0,
        events: 0,
    })
}

/// Exact Gillespie SIR simulator.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Sir {
    s: SirSettings,
}

impl Sir {
    /// Validates the settings.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for K < 2, K > 2⁵³ or L < 2; [`SimError::InvalidParameter`]
    /// for a non-finite or non-positive T.
    pub fn new(s: SirSettings) -> Result<Self, SimError> {
        s.validate()?;
        Ok(Self { s })
    }

    /// The paper's setting (K = 10⁶, L = 10 at t = 0, 17, …, 153).
    #[must_use]
    pub const fn paper() -> Self {
        Self {
            s: SirSettings::paper(),
        }
    }

    /// The settings.
    #[must_use]
    pub const fn settings(&self) -> &SirSettings {
        &self.s
    }

    /// Advances an exact trajectory to time `t_stop` (the Gillespie hot loop).
    #[inline]
    #[allow(clippy::unused_self)] // same signature as the tau-leap simulator's (shared impls)
    fn advance<R: Rng + ?Sized>(&self, run: &mut SirRun, t_stop: f64, rng: &mut R) {
        let (bk, g) = (run.beta_over_k, run.gamma);
        let (mut s, mut i, mut t) = (run.s, run.i, run.t);
        let mut events = 0u64;
        while i > 0.0 {
            // per-infected rates: infection c = β S/K, recovery γ; total a₀ = I (c + γ)
            let c = bk * s;
            let a0 = i * (c + g);
            if a0 <= 0.0 {
                break; // γ = 0 and S = 0 (or β = 0): the state is absorbing.
            }
            let dt = dist::exponential(rng) / a0;
            if t + dt > t_stop {
                break; // memoryless: discard and redraw from t_stop
            }
            t += dt;
            events += 1;
            // Infection iff U·a₀ < I·c ⇔ c(1 − U) > U γ. Written branch-free and without I so
            // the loop-carried dependency is one multiply and a compare (the reaction choice is
            // a coin flip the CPU cannot predict).
            let u = dist::uniform01(rng);
            let infect = f64::from(u8::from(c * (1.0 - u) > u * g));
            s -= infect;
            i += 2.0 * infect - 1.0;
        }
        run.s = s;
        run.i = i;
        run.t = t_stop;
        run.events += events;
    }
}

/// `Simulator` + `IncrementalSimulator` for an SIR simulator type with a field `s:
/// SirSettings` and a method `advance(&self, run, t_stop, rng)` (exact Gillespie or tau-leap):
/// one observation per block, the infected count at each observation time.
macro_rules! sir_simulator {
    ($ty:ty) => {
        impl Simulator for $ty {
            fn param_dim(&self) -> usize {
                2
            }
            fn output_dim(&self) -> usize {
                self.s.n_obs
            }
            fn simulate<R: Rng + ?Sized>(
                &self,
                theta: &[f64],
                rng: &mut R,
                out: &mut [f64],
            ) -> Result<(), SimError> {
                // One block per observation, never stopped: the block-by-block run itself.
                self.simulate_until(theta, rng, out, |_, _| false).map(drop)
            }
        }

        impl IncrementalSimulator for $ty {
            type Run = SirRun;
            fn n_blocks(&self) -> usize {
                self.s.n_obs
            }
            fn block_len(&self) -> usize {
                1
            }
            fn begin(&self, theta: &[f64]) -> Result<SirRun, SimError> {
                start_run(&self.s, theta)
            }
            fn next_block<R: Rng + ?Sized>(
                &self,
                run: &mut SirRun,
                rng: &mut R,
                out: &mut [f64],
            ) -> Result<(), SimError> {
                check_len("out", 1, out.len())?;
                if run.next_obs >= self.s.n_obs {
                    return Err(SimError::Exhausted);
                }
                let t_stop = self.s.obs_time(run.next_obs);
                self.advance(run, t_stop, rng);
                out[0] = run.i;
                run.next_obs += 1;
                Ok(())
            }
        }
    };
}

sir_simulator!(Sir);

/// **Approximate** tau-leaping SIR simulator (opt-in; not the paper's method).
///
/// Each step of length τ (shortened to land on observation times) draws
/// infections ~ Poisson(β S I/K · τ) and recoveries ~ Poisson(γ I · τ) from the state at the
/// start of the step, then clamps infections to S and recoveries to I (post-infection). The
/// bias is O(τ); see the crate tests for its measured error against [`Sir`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SirTauLeap {
    s: SirSettings,
    tau: f64,
}

impl SirTauLeap {
    /// Tau-leaping with step `tau`.
    ///
    /// # Errors
    /// As [`Sir::new`]; [`SimError::InvalidParameter`] for a non-finite or non-positive `tau`.
    pub fn new(s: SirSettings, tau: f64) -> Result<Self, SimError> {
        s.validate()?;
        Ok(Self {
            s,
            tau: positive("tau", tau)?,
        })
    }

    /// The settings.
    #[must_use]
    pub const fn settings(&self) -> &SirSettings {
        &self.s
    }

    fn advance<R: Rng + ?Sized>(&self, run: &mut SirRun, t_stop: f64, rng: &mut R) {
        while run.t < t_stop && run.i > 0.0 {
            let h = self.tau.min(t_stop - run.t);
            #[allow(clippy::cast_precision_loss)]
            let inf = (dist::poisson(rng, run.beta_over_k * run.s * run.i * h) as f64).min(run.s);
            #[allow(clippy::cast_precision_loss)]
            let rec = (dist::poisson(rng, run.gamma * run.i * h) as f64).min(run.i + inf);
            run.s -= inf;
            run.i += inf - rec;
            run.t += h;
            run.events += 1;
        }
        run.t = t_stop;
    }
}

sir_simulator!(SirTauLeap);
