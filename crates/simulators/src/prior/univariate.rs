//! One-dimensional priors beyond the normal family: truncated normal, gamma, beta, exponential.
//!
//! Every density is normalised and computed with `libm` and `dpinfer-math` only, so values are
//! identical on every platform; every sampler draws from [`crate::dist`] (public simulation
//! randomness).
//!
//! # References
//! - C. P. Robert (1995), *Simulation of truncated normal variables*, Statistics and Computing
//!   5:121–125 (exponential and uniform proposals for tails and short intervals).
//! - G. Marsaglia, W. W. Tsang (2000), *A simple method for generating gamma variables*
//!   (gamma, and beta as G_a / (G_a + G_b)).

use crate::dist;
use crate::error::{SimError, check_len, finite, positive};
use crate::prior::{LN_SQRT_2PI, Prior};
use dpinfer_math::{ln_gamma, ln_norm_cdf, ln_norm_sf, log_sub_exp, norm_cdf_diff};
use rand_core::Rng;

/// Attempt budget of the rejection loops. Each regime below accepts with a probability bounded
/// away from zero (≈ 0.49 or more for the normal and uniform proposals around 0; Robert 1995,
/// §2–3 for the tails), so the budget only trips on a programming error.
const MAX_ATTEMPTS: u64 = 10_000;

/// Shared body of the scalar priors: length check, one draw.
macro_rules! scalar_prior {
    ($t:ty) => {
        impl Prior for $t {
            fn dim(&self) -> usize {
                1
            }
            fn sample<R: Rng + ?Sized>(
                &self,
                rng: &mut R,
                out: &mut [f64],
            ) -> Result<(), SimError> {
                check_len("out", 1, out.len())?;
                out[0] = self.draw(rng)?;
                Ok(())
            }
            fn ln_density(&self, theta: &[f64]) -> f64 {
                match theta {
                    [x] => self.ln_pdf(*x),
                    _ => f64::NEG_INFINITY,
                }
            }
            fn in_support(&self, theta: &[f64]) -> bool {
                matches!(theta, [x] if self.ln_pdf(*x) > f64::NEG_INFINITY)
            }
            fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
                (j == 0).then(|| self.ln_pdf(x))
            }
        }
    };
}

/// Normal N(mean, sd²) truncated to `[lo, hi]` (either end may be infinite, not both), with
/// the normalised density φ((x − mean)/sd) / (sd · Z), Z = Φ(β) − Φ(α), α = (lo − mean)/sd,
/// β = (hi − mean)/sd. ln Z is computed in log space (tails by `ln Φ` differences), so
/// truncations far in a tail (α = 40, Z ≈ 10⁻³⁵⁰) keep a finite, accurate density.
///
/// Sampling is exact (Robert 1995): a normal proposal when `[α, β]` holds 0 and is wide, a
/// uniform proposal on short intervals, and a translated-exponential proposal with the optimal
/// rate λ* = (α + √(α² + 4))/2 in a tail.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TruncatedNormal {
    mean: f64,
    sd: f64,
    lo: f64,
    hi: f64,
    ln_z: f64,
}

impl TruncatedNormal {
    /// N(mean, sd²) restricted to `[lo, hi]`.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless `mean` is finite, `sd` finite and > 0, `lo < hi`
    /// (NaN rejected, `lo = −∞` / `hi = +∞` allowed, not both infinite), and the interval has
    /// positive normal mass in `f64` log space.
    pub fn new(mean: f64, sd: f64, lo: f64, hi: f64) -> Result<Self, SimError> {
        let mean = finite("mean", mean)?;
        let sd = positive("sd", sd)?;
        if lo.is_nan() || lo == f64::INFINITY {
            return Err(SimError::InvalidParameter {
                name: "lo",
                value: lo,
            });
        }
        if hi.is_nan() || hi <= lo || (lo.is_infinite() && hi.is_infinite()) {
            return Err(SimError::InvalidParameter {
                name: "hi",
                value: hi,
            });
        }
        let a = (lo - mean) / sd;
        let b = (hi - mean) / sd;
        let ln_z = ln_mass(a, b);
        if !(ln_z.is_finite() && ln_z <= 0.0) {
            return Err(SimError::InvalidParameter {
                name: "hi",
                value: hi,
            });
        }
        Ok(Self {
            mean,
            sd,
            lo,
            hi,
            ln_z,
        })
    }

    /// `ln Z`, the log normal mass of the truncation interval.
    #[must_use]
    pub const fn ln_mass(&self) -> f64 {
        self.ln_z
    }

    /// Log density at a scalar (−∞ outside `[lo, hi]`).
    #[must_use]
    pub fn ln_pdf(&self, x: f64) -> f64 {
        if !(x >= self.lo && x <= self.hi && x.is_finite()) {
            return f64::NEG_INFINITY;
        }
        let z = (x - self.mean) / self.sd;
        -0.5 * z * z - libm::log(self.sd) - LN_SQRT_2PI - self.ln_z
    }

    /// One draw.
    ///
    /// # Errors
    /// [`SimError::TooManyAttempts`] only if the rejection budget is exhausted (probability
    /// < 10⁻¹⁰⁰⁰ for any valid settings).
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<f64, SimError> {
        let a = (self.lo - self.mean) / self.sd;
        let b = (self.hi - self.mean) / self.sd;
        // Work on the side of 0 where the interval lies: reflect [a, b] ⊂ (−∞, 0] to [−b, −a].
        let (a2, b2, sign) = if b <= 0.0 {
            (-b, -a, -1.0)
        } else {
            (a, b, 1.0)
        };
        let z = std_truncated(rng, a2, b2)?;
        let x = self.mean + self.sd * sign * z;
        // Rounding in mean + sd·z can leave the interval by an ulp; clamp back in.
        Ok(x.clamp(self.lo, self.hi))
    }
}

/// ln(Φ(b) − Φ(a)) for a < b, stable in both tails.
fn ln_mass(a: f64, b: f64) -> f64 {
    if a >= 0.0 {
        log_sub_exp(ln_norm_sf(a), ln_norm_sf(b))
    } else if b <= 0.0 {
        log_sub_exp(ln_norm_cdf(b), ln_norm_cdf(a))
    } else {
        libm::log(norm_cdf_diff(b, a))
    }
}

/// Standard normal restricted to `[a, b]` with `b > 0` (Robert 1995).
fn std_truncated<R: Rng + ?Sized>(rng: &mut R, a: f64, b: f64) -> Result<f64, SimError> {
    const SQRT_2PI: f64 = 2.506_628_274_631_000_5;
    for _ in 0..MAX_ATTEMPTS {
        if a <= 0.0 {
            // 0 ∈ [a, b].
            if b - a < SQRT_2PI {
                // Uniform proposal, accept with exp(−z²/2) ≥ e^{−π} … in practice ≥ 0.4.
                let z = a + (b - a) * dist::uniform01(rng);
                if dist::uniform01(rng) <= libm::exp(-0.5 * z * z) {
                    return Ok(z);
                }
            } else {
                // Wide interval around 0: plain normal proposal, mass ≥ Φ(√(2π)) − ½ ≈ 0.49.
                let z = dist::std_normal(rng);
                if z >= a && z <= b {
                    return Ok(z);
                }
            }
            continue;
        }
        // 0 < a < b: the right tail.
        let lam = 0.5 * (a + libm::sqrt(a * a + 4.0));
        // Robert's criterion: uniform proposal when the interval is short.
        let uniform_better = b < a + 2.0 * libm::sqrt(core::f64::consts::E)
            / (a + libm::sqrt(a * a + 4.0))
            * libm::exp(0.25 * (a * a - a * libm::sqrt(a * a + 4.0)));
        if uniform_better {
            let z = a + (b - a) * dist::uniform01(rng);
            if dist::uniform01(rng) <= libm::exp(0.5 * (a * a - z * z)) {
                return Ok(z);
            }
        } else {
            let z = a + dist::exponential(rng) / lam;
            let d = z - lam;
            if z <= b && dist::uniform01(rng) <= libm::exp(-0.5 * d * d) {
                return Ok(z);
            }
        }
    }
    Err(SimError::TooManyAttempts {
        attempts: MAX_ATTEMPTS,
    })
}

scalar_prior!(TruncatedNormal);

/// Gamma(shape k, rate λ) with density λ^k x^{k−1} e^{−λx} / Γ(k) on x > 0 (mean k/λ).
/// A scale parametrisation is `Gamma::new(k, 1/scale)`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Gamma {
    shape: f64,
    rate: f64,
    ln_norm: f64,
}

impl Gamma {
    /// Gamma(shape, rate).
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless `shape ∈ [1e-3, 1e8]` (below, draws underflow to
    /// 0 in `f64`) and `rate` is finite and > 0.
    pub fn new(shape: f64, rate: f64) -> Result<Self, SimError> {
        if !(1e-3..=1e8).contains(&shape) {
            return Err(SimError::InvalidParameter {
                name: "shape",
                value: shape,
            });
        }
        let rate = positive("rate", rate)?;
        Ok(Self {
            shape,
            rate,
            ln_norm: shape * libm::log(rate) - ln_gamma(shape),
        })
    }
    /// Shape k.
    #[must_use]
    pub const fn shape(&self) -> f64 {
        self.shape
    }
    /// Rate λ.
    #[must_use]
    pub const fn rate(&self) -> f64 {
        self.rate
    }
    /// Log density at a scalar (−∞ for x ≤ 0).
    #[must_use]
    pub fn ln_pdf(&self, x: f64) -> f64 {
        if !(x > 0.0 && x.is_finite()) {
            return f64::NEG_INFINITY;
        }
        self.ln_norm + (self.shape - 1.0) * libm::log(x) - self.rate * x
    }
    /// One draw (Marsaglia–Tsang; never fails, the `Result` matches the other priors).
    ///
    /// # Errors
    /// None in practice; kept for a uniform interface.
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<f64, SimError> {
        // A draw that underflows to 0 lies outside the open support: redraw (probability
        // < 1e-300 for shape ≥ 1e-3).
        for _ in 0..MAX_ATTEMPTS {
            let x = dist::gamma(rng, self.shape) / self.rate;
            if x > 0.0 && x.is_finite() {
                return Ok(x);
            }
        }
        Err(SimError::TooManyAttempts {
            attempts: MAX_ATTEMPTS,
        })
    }
}

scalar_prior!(Gamma);

/// Beta(a, b) with density x^{a−1}(1 − x)^{b−1} / B(a, b) on the open interval (0, 1).
/// Drawn as G_a / (G_a + G_b) from two gamma variates, in log space (ln G(α) = ln G(α + 1) +
/// ln U / α) so that shapes below 1 do not underflow.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Beta {
    a: f64,
    b: f64,
    ln_norm: f64,
}

impl Beta {
    /// Beta(a, b).
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless both shapes lie in `[1e-3, 1e8]`.
    pub fn new(a: f64, b: f64) -> Result<Self, SimError> {
        if !(1e-3..=1e8).contains(&a) {
            return Err(SimError::InvalidParameter {
                name: "a",
                value: a,
            });
        }
        if !(1e-3..=1e8).contains(&b) {
            return Err(SimError::InvalidParameter {
                name: "b",
                value: b,
            });
        }
        Ok(Self {
            a,
            b,
            ln_norm: ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b),
        })
    }
    /// Log density at a scalar (−∞ outside (0, 1)).
    #[must_use]
    pub fn ln_pdf(&self, x: f64) -> f64 {
        if !(x > 0.0 && x < 1.0) {
            return f64::NEG_INFINITY;
        }
        self.ln_norm + (self.a - 1.0) * libm::log(x) + (self.b - 1.0) * libm::log1p(-x)
    }
    /// One draw.
    ///
    /// # Errors
    /// [`SimError::TooManyAttempts`] if every attempt rounds to 0 or 1 (only for extreme
    /// shapes, probability negligible inside the accepted range).
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<f64, SimError> {
        for _ in 0..MAX_ATTEMPTS {
            let la = ln_gamma_variate(rng, self.a);
            let lb = ln_gamma_variate(rng, self.b);
            // x = 1 / (1 + e^{lb − la}), and 1 − x = 1 / (1 + e^{la − lb}).
            let x = 1.0 / (1.0 + libm::exp(lb - la));
            if x > 0.0 && x < 1.0 {
                return Ok(x);
            }
        }
        Err(SimError::TooManyAttempts {
            attempts: MAX_ATTEMPTS,
        })
    }
}

/// ln of a Gamma(shape, 1) variate, without underflow for small shapes.
fn ln_gamma_variate<R: Rng + ?Sized>(rng: &mut R, shape: f64) -> f64 {
    if shape < 1.0 {
        libm::log(dist::gamma(rng, shape + 1.0)) + libm::log(dist::uniform_open01(rng)) / shape
    } else {
        libm::log(dist::gamma(rng, shape))
    }
}

scalar_prior!(Beta);

/// Exponential with rate λ: density λ e^{−λx} on x ≥ 0 (mean 1/λ).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Exponential {
    rate: f64,
}

impl Exponential {
    /// Exp(rate).
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless `rate` is finite and > 0.
    pub fn new(rate: f64) -> Result<Self, SimError> {
        Ok(Self {
            rate: positive("rate", rate)?,
        })
    }
    /// Log density at a scalar (−∞ for x < 0).
    #[must_use]
    pub fn ln_pdf(&self, x: f64) -> f64 {
        if !(x >= 0.0 && x.is_finite()) {
            return f64::NEG_INFINITY;
        }
        libm::log(self.rate) - self.rate * x
    }
    /// One draw (ziggurat exponential divided by the rate).
    ///
    /// # Errors
    /// None; the `Result` matches the other priors.
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<f64, SimError> {
        Ok(dist::exponential(rng) / self.rate)
    }
}

scalar_prior!(Exponential);
