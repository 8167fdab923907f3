//! Cubic outbreak curve of ABCDP §6.2 (Park, Vinaroz, Jitkrittum 2021, eq. 12):
//! y(t) = a₃ + a₂ t + a₁ t² + a₀ t³, prior a_i ~ N(0, 1), 18 daily points (Netherlands
//! COVID-19 cases, 27 Feb – 17 Mar 2020).
//!
//! **Time scaling and noise — what we chose and why.** The ABCDP reference code
//! (`code/abcdp/figure_covid.py` in ParkLabML/ABCDP) evaluates the polynomial at the raw day
//! indices t = 0, 1, …, 17 (no rescaling) with θ = (a₀, a₁, a₂, a₃) multiplying (t³, t², t, 1),
//! and adds **no observation noise**: the simulator is deterministic. We reproduce exactly
//! that by default (`noise_sd = 0`, `t_i = i`). Because a deterministic simulator makes ABC
//! degenerate for some uses, an optional Gaussian observation noise `noise_sd > 0` and a time
//! scale `dt` (t_i = i·dt) are available; both are opt-in and off in [`CubicOutbreak::paper`].
//!
//! **More points on the same window.** [`CubicOutbreak::on_paper_window`] spreads `n` points
//! evenly over the paper's 18 days (t_i = i·17/(n − 1); `n = 18` is the paper's curve). With
//! a differentially private distance the data size is what limits the answer (the MMD's
//! sensitivity is 2/n, ABCDP Lemma 1), and no real series of more points exists here, so the
//! registry simulates such a series at the public [`SYNTHETIC_THETA`].

use crate::error::{SimError, check_len, finite};
use crate::prior::IidNormal;
use crate::simulator::{IncrementalSimulator, Simulator};
use crate::stream::StreamVersion;
use rand_core::Rng;

/// The 18 observed daily case counts used by the reference code (ECDC data for the
/// Netherlands, 27 Feb – 17 Mar 2020), as listed in `figure_covid.py`.
pub const NETHERLANDS_CASES: [f64; 18] = [
    1.0, 7.0, 10.0, 24.0, 38.0, 82.0, 128.0, 188.0, 265.0, 321.0, 382.0, 503.0, 614.0, 804.0,
    959.0, 1135.0, 1413.0, 1705.0,
];

/// Last time of the paper's window: its 18 daily counts are at t = 0, 1, …, 17.
pub const PAPER_LAST_DAY: f64 = 17.0;

/// The public θ* = (a₀, a₁, a₂, a₃) of the synthetic outbreak series (stated by us, not the
/// paper): y(t) = 0.25 t³ + 1.5 t², a curve the N(0, 1) prior finds plausible and that stays
/// within 47 cases of each of the 18 [`NETHERLANDS_CASES`] (a₀ and a₁ are the non-private
/// posterior means of `examples/cubic-outbreak-nonprivate.toml`, 0.245 and 1.54, rounded; a₂
/// and a₃, which the counts hardly pin down, are the prior mean 0).
pub const SYNTHETIC_THETA: [f64; 4] = [0.25, 1.5, 0.0, 0.0];

/// The cubic curve simulator; θ = (a₀, a₁, a₂, a₃), output y(t_0..t_{n−1}), one point per
/// incremental block.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CubicOutbreak {
    n: usize,
    dt: f64,
    noise_sd: f64,
    version: StreamVersion,
}

impl CubicOutbreak {
    /// The reference setting: 18 points at t = 0..17, no noise.
    #[must_use]
    pub const fn paper() -> Self {
        Self {
            n: 18,
            dt: 1.0,
            noise_sd: 0.0,
            version: StreamVersion::V1,
        }
    }

    /// `n` points at t_i = i·`dt` with N(0, `noise_sd`²) observation noise (0 = none).
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for n = 0; [`SimError::InvalidParameter`] for non-finite or
    /// non-positive `dt`, or non-finite or negative `noise_sd`.
    pub fn new(n: usize, dt: f64, noise_sd: f64) -> Result<Self, SimError> {
        if n == 0 {
            return Err(SimError::InvalidSize {
                name: "n",
                value: 0,
            });
        }
        let dt = crate::error::positive("dt", dt)?;
        let noise_sd = finite("noise_sd", noise_sd)?;
        if noise_sd < 0.0 {
            return Err(SimError::InvalidParameter {
                name: "noise_sd",
                value: noise_sd,
            });
        }
        Ok(Self {
            n,
            dt,
            noise_sd,
            version: StreamVersion::V1,
        })
    }

    /// `n ≥ 2` points spread evenly over the paper's window, t_i = i·17/(n − 1), no noise:
    /// the same outbreak observed more (or less) often. `n = 18` is [`CubicOutbreak::paper`]
    /// (dt = 17/17 = 1 exactly, so every value is the same).
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for n < 2.
    pub fn on_paper_window(n: usize) -> Result<Self, SimError> {
        if n < 2 {
            return Err(SimError::InvalidSize {
                name: "n",
                value: u64::try_from(n).unwrap_or(u64::MAX),
            });
        }
        #[allow(clippy::cast_precision_loss)] // n − 1 < 2⁵³ for any curve that fits in memory
        Self::new(n, PAPER_LAST_DAY / (n - 1) as f64, 0.0)
    }

    /// The paper's prior a_i ~ N(0, 1), i = 0..3.
    ///
    /// # Errors
    /// Never (kept fallible for uniformity).
    pub fn prior(&self) -> Result<IidNormal, SimError> {
        IidNormal::new(4, 0.0, 1.0)
    }

    /// Noise-free curve value at observation index i.
    #[inline]
    fn curve(&self, th: &[f64; 4], i: usize) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let t = i as f64 * self.dt;
        // Horner: ((a0 t + a1) t + a2) t + a3
        ((th[0] * t + th[1]) * t + th[2]) * t + th[3]
    }
}

stream_versioned! {
    /// Only the observation noise draws normals (none by default).
    impl[] CubicOutbreak
}

/// Run state of [`CubicOutbreak`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CubicRun {
    theta: [f64; 4],
    done: usize,
}

impl Simulator for CubicOutbreak {
    fn param_dim(&self) -> usize {
        4
    }
    fn output_dim(&self) -> usize {
        self.n
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

impl IncrementalSimulator for CubicOutbreak {
    type Run = CubicRun;
    fn n_blocks(&self) -> usize {
        self.n
    }
    fn block_len(&self) -> usize {
        1
    }
    fn begin(&self, theta: &[f64]) -> Result<CubicRun, SimError> {
        check_len("theta", 4, theta.len())?;
        if let Some(i) = theta.iter().position(|x| !x.is_finite()) {
            return Err(SimError::OutsideSupport { index: i });
        }
        Ok(CubicRun {
            theta: [theta[0], theta[1], theta[2], theta[3]],
            done: 0,
        })
    }
    fn next_block<R: Rng + ?Sized>(
        &self,
        run: &mut CubicRun,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        super::one_value_block(&mut run.done, self.n, out, |i| {
            let mut y = self.curve(&run.theta, i);
            if self.noise_sd > 0.0 {
                y += self.noise_sd * self.version.std_normal(rng);
            }
            if !y.is_finite() {
                return Err(SimError::Degenerate {
                    what: "curve overflow",
                });
            }
            Ok(y)
        })
    }
}
