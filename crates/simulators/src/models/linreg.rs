//! Bayesian linear regression data model of Xiong, Ju, Zhang (§4.2, Appendix E.2), the setting
//! of Ju et al. (2022): predictors x₀ᵢ ~ N_p(m, Σ), outcomes y | x₀ ~ N(x β, σ²) with
//! x = (1, x₀) (intercept), prior β ~ N(0, I_{p+1}). Paper setting: p = 2, m = (0.9, −1.17),
//! Σ = I, σ² = 2, n = 100, θ* = β* = (−1.79, −2.89, −0.66).
//!
//! The simulator outputs the clamped, normalised sufficient statistics used by the private
//! mechanism, s̃ = (x̃ᵀỹ/n, ỹᵀỹ/n, x̃ᵀx̃/n), in the paper's vector order: the p + 1 entries of
//! x̃ᵀỹ/n, then ỹᵀỹ/n, then the upper triangle of x̃ᵀx̃/n row by row **without** its (1,1)
//! entry (always 1 because of the intercept column). For p = 2 that is 9 numbers.
//!
//! **Clamping — what we chose and why.** Each predictor is clamped to `[−x_bound, x_bound]` and
//! divided by `x_bound`; y is clamped to `[−y_bound, y_bound]` and divided by `y_bound`, so
//! every entry of x̃ (intercept included) and ỹ lies in [−1, 1]. The paper defers the bounds to
//! its supplement, which we could not access; we use x_bound = y_bound = 10, the values
//! implied by the paper's own s̃ at θ* (e.g. (x̃ᵀx̃/n)₁₂ = mean(x₁)/x_bound = 0.0938 with
//! mean(x₁) ≈ 0.9, and ỹᵀỹ/n = `E[y²]`/y_bound² ≈ 23.9/100 ≈ 0.2499 at θ*). Both are settings.
//! The refined L1 sensitivity of s̃ under this normalisation is Δ = (p² + 3p + 3)/n (paper).

use crate::error::{SimError, check_len, finite, positive};
use crate::prior::IidNormal;
use crate::simulator::Simulator;
use crate::stream::StreamVersion;
use rand_core::Rng;

/// Settings of the regression data model with `P` predictors (public fields).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LinRegSettings<const P: usize> {
    /// Number of subjects n ≥ 1.
    pub n: usize,
    /// Predictor mean m.
    pub mean: [f64; P],
    /// Predictor covariance Σ (symmetric positive definite).
    pub cov: [[f64; P]; P],
    /// Noise variance σ².
    pub noise_var: f64,
    /// Clamp bound for predictors.
    pub x_bound: f64,
    /// Clamp bound for outcomes.
    pub y_bound: f64,
}

impl LinRegSettings<2> {
    /// The paper's setting: n = 100, m = (0.9, −1.17), Σ = I, σ² = 2, bounds 10.
    #[must_use]
    pub const fn paper() -> Self {
        Self {
            n: 100,
            mean: [0.9, -1.17],
            cov: [[1.0, 0.0], [0.0, 1.0]],
            noise_var: 2.0,
            x_bound: 10.0,
            y_bound: 10.0,
        }
    }
}

stream_versioned! {
    /// Predictors and noise are versioned; the prior is not.
    impl[const P: usize] LinearRegression<P>
}

/// The paper's true coefficients β* = (−1.79, −2.89, −0.66) (intercept first).
pub const BETA_STAR: [f64; 3] = [-1.79, -2.89, -0.66];

/// The paper's s̃ at β* (Appendix E.2), for reference: (x̃ᵀỹ/n, ỹᵀỹ/n, upper x̃ᵀx̃/n w/o (1,1)).
pub const PAPER_S_TILDE: [f64; 9] = [
    -0.3742, -0.0629, 0.0299, 0.2499, 0.0938, -0.1270, 0.0180, -0.0094, 0.0280,
];

/// The validated regression model with `P` predictors; θ = β ∈ ℝ^{P+1}.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LinearRegression<const P: usize> {
    s: LinRegSettings<P>,
    chol: [[f64; P]; P],
    noise_sd: f64,
    version: StreamVersion,
}

impl<const P: usize> LinearRegression<P> {
    /// Validates the settings and factorises Σ = L Lᵀ.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for n = 0, P = 0 or P > 15; [`SimError::InvalidParameter`] for
    /// non-finite entries, an asymmetric or not positive-definite Σ, or non-positive
    /// σ²/bounds.
    #[allow(clippy::needless_range_loop)] // index arithmetic of the Cholesky factorisation
    pub fn new(s: LinRegSettings<P>) -> Result<Self, SimError> {
        if s.n == 0 {
            return Err(SimError::InvalidSize {
                name: "n",
                value: 0,
            });
        }
        if P == 0 || P > 15 {
            return Err(SimError::InvalidSize {
                name: "P",
                value: P as u64,
            });
        }
        for &m in &s.mean {
            finite("mean", m)?;
        }
        let noise_sd = libm::sqrt(positive("noise_var", s.noise_var)?);
        positive("x_bound", s.x_bound)?;
        positive("y_bound", s.y_bound)?;
        let mut l = [[0.0; P]; P];
        for i in 0..P {
            for j in 0..P {
                let c = finite("cov", s.cov[i][j])?;
                if (c - s.cov[j][i]).abs() > 1e-12 * (1.0 + c.abs()) {
                    return Err(SimError::InvalidParameter {
                        name: "cov (asymmetric)",
                        value: c,
                    });
                }
            }
        }
        for i in 0..P {
            for j in 0..=i {
                let mut acc = s.cov[i][j];
                for k in 0..j {
                    acc -= l[i][k] * l[j][k];
                }
                if i == j {
                    if acc.is_nan() || acc <= 0.0 {
                        return Err(SimError::InvalidParameter {
                            name: "cov (not positive definite)",
                            value: acc,
                        });
                    }
                    l[i][i] = libm::sqrt(acc);
                } else {
                    l[i][j] = acc / l[j][j];
                }
            }
        }
        Ok(Self {
            s,
            chol: l,
            noise_sd,
            version: StreamVersion::V1,
        })
    }

    /// The settings.
    #[must_use]
    pub const fn settings(&self) -> &LinRegSettings<P> {
        &self.s
    }

    /// The paper's prior β ~ N(0, I_{P+1}).
    ///
    /// # Errors
    /// Never (kept fallible for uniformity).
    pub fn prior(&self) -> Result<IidNormal, SimError> {
        IidNormal::new(P + 1, 0.0, 1.0)
    }

    /// Length of s̃: (P+1) + 1 + (P+1)(P+2)/2 − 1.
    #[must_use]
    pub const fn stats_len() -> usize {
        (P + 1) + 1 + (P + 1) * (P + 2) / 2 - 1
    }

    /// The L1 sensitivity of [`clamped_stats`](Self::clamped_stats) over `n` subjects under
    /// **replace-one** neighbours (n public): the paper's `Δ₁ = (P² + 3P + 3)/n` (Xiong et al.
    /// §4.2), rounded up. Every entry of s̃ is a mean over subjects of a product of values in
    /// [−1, 1], so replacing one subject moves s̃ by `(f(r′) − f(r))/n`; for P = 2 the largest
    /// `‖f(r′) − f(r)‖₁` is 9.375 (numerical maximisation; `tests/suite/models.rs` searches
    /// adversarially and checks the bound and that it is not vacuous), below the paper's 13.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for `n = 0`.
    pub fn l1_sensitivity(n: usize) -> Result<f64, SimError> {
        if n == 0 {
            return Err(SimError::InvalidSize {
                name: "n",
                value: 0,
            });
        }
        #[allow(clippy::cast_precision_loss)]
        let (p, n) = (P as f64, n as f64);
        Ok(((p * p + 3.0 * p + 3.0) / n).next_up())
    }

    /// Draws one subject: predictors into `x0`, returns y.
    #[allow(clippy::needless_range_loop)]
    fn draw_row<R: Rng + ?Sized>(&self, beta: &[f64], rng: &mut R, x0: &mut [f64; P]) -> f64 {
        let mut z = [0.0; P];
        for zi in &mut z {
            *zi = self.version.std_normal(rng);
        }
        let mut y = beta[0];
        for i in 0..P {
            let mut v = self.s.mean[i];
            for k in 0..=i {
                v += self.chol[i][k] * z[k];
            }
            x0[i] = v;
            y += beta[i + 1] * v;
        }
        y + self.noise_sd * self.version.std_normal(rng)
    }

    /// s̃ of raw data given column-major predictors `x0` (`x0[i·n + j]`, i < P) and outcomes `y`
    /// (n = `y.len()`), written into `out` (length [`stats_len`](Self::stats_len)). Non-finite
    /// data values are mapped deterministically (NaN → 0, ±∞ → ±bound) — they never raise an
    /// error, so the error behaviour does not depend on private data.
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] for inconsistent lengths or empty data.
    pub fn clamped_stats(&self, x0: &[f64], y: &[f64], out: &mut [f64]) -> Result<(), SimError> {
        let n = y.len();
        if n == 0 {
            return Err(SimError::DimensionMismatch {
                what: "y",
                expected: 1,
                got: 0,
            });
        }
        check_len("x0", P * n, x0.len())?;
        check_len("out", Self::stats_len(), out.len())?;
        let mut acc = Acc::<P>::new();
        let mut xr = [0.0; P];
        for j in 0..n {
            for (i, v) in xr.iter_mut().enumerate() {
                *v = x0[i * n + j];
            }
            acc.add(&self.s, &xr, y[j]);
        }
        acc.write(n, out);
        Ok(())
    }
}

/// Running sums of x̃ᵀỹ, ỹᵀỹ and x̃ᵀx̃ (x̃ with intercept).
struct Acc<const P: usize> {
    xy: [f64; 16],
    yy: f64,
    xx: [[f64; 16]; 16],
}

/// Clamp-and-normalise with NaN → 0.
#[inline]
fn norm(v: f64, bound: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(-bound, bound) / bound
    }
}

impl<const P: usize> Acc<P> {
    fn new() -> Self {
        Self {
            xy: [0.0; 16],
            yy: 0.0,
            xx: [[0.0; 16]; 16],
        }
    }
    fn add(&mut self, s: &LinRegSettings<P>, x0: &[f64; P], y: f64) {
        let mut xt = [0.0; 16];
        xt[0] = 1.0;
        for i in 0..P {
            xt[i + 1] = norm(x0[i], s.x_bound);
        }
        let yt = norm(y, s.y_bound);
        self.yy += yt * yt;
        for i in 0..=P {
            self.xy[i] += xt[i] * yt;
            for j in i..=P {
                self.xx[i][j] += xt[i] * xt[j];
            }
        }
    }
    fn write(&self, n: usize, out: &mut [f64]) {
        #[allow(clippy::cast_precision_loss)]
        let inv = 1.0 / n as f64;
        let mut k = 0;
        for i in 0..=P {
            out[k] = self.xy[i] * inv;
            k += 1;
        }
        out[k] = self.yy * inv;
        k += 1;
        for i in 0..=P {
            for j in i..=P {
                if i == 0 && j == 0 {
                    continue;
                }
                out[k] = self.xx[i][j] * inv;
                k += 1;
            }
        }
    }
}

impl<const P: usize> Simulator for LinearRegression<P> {
    fn param_dim(&self) -> usize {
        P + 1
    }
    fn output_dim(&self) -> usize {
        Self::stats_len()
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        check_len("theta", P + 1, theta.len())?;
        check_len("out", Self::stats_len(), out.len())?;
        if let Some(i) = theta.iter().position(|x| !x.is_finite()) {
            return Err(SimError::OutsideSupport { index: i });
        }
        let mut acc = Acc::<P>::new();
        let mut x0 = [0.0; P];
        for _ in 0..self.s.n {
            let y = self.draw_row(theta, rng, &mut x0);
            acc.add(&self.s, &x0, y);
        }
        acc.write(self.s.n, out);
        Ok(())
    }
}
