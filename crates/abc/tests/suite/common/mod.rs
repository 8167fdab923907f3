//! Shared test fixtures: the Gaussian-mean toy with a conjugate prior.
#![allow(
    clippy::unwrap_used,
    clippy::float_cmp,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]
#![allow(dead_code, unreachable_pub, missing_docs)]

use dpinfer_abc::smc::{SmcSettings, Tolerance};
use dpinfer_simulators::{FnSimulator, Simulator};

/// y_i ~ N(θ, 1), i = 1..n; the summary is the sample mean ~ N(θ, 1/n), drawn directly.
pub fn gaussian_mean(n: f64) -> impl Simulator + Copy + core::fmt::Debug + Send + Sync {
    FnSimulator::new(1, 1, move |theta, rng, out| {
        out[0] = theta[0] + dpinfer_simulators::dist::std_normal(rng) / n.sqrt();
        Ok(())
    })
    .unwrap()
}

/// θ ∈ ℝ² → θ + N(0, 0.1²) per coordinate.
pub fn noisy2() -> impl Simulator + Copy + core::fmt::Debug + Send + Sync {
    FnSimulator::new(2, 2, |theta, rng, out| {
        for (o, t) in out.iter_mut().zip(theta) {
            *o = t + 0.1 * dpinfer_simulators::dist::std_normal(rng);
        }
        Ok(())
    })
    .unwrap()
}

/// SMC-ABC with `particles` particles, each tolerance the median of the previous
/// generation's distances (the first ∞), down to `final_tolerance`; other settings default.
pub fn median_smc(particles: usize, final_tolerance: f64) -> SmcSettings {
    SmcSettings {
        particles,
        tolerance: Tolerance::Quantile {
            initial: f64::INFINITY,
            alpha: 0.5,
        },
        final_tolerance,
        ..SmcSettings::default()
    }
}

/// Exact posterior N(m, s²) for prior N(0, tau²), observed mean `ybar`, n obs of variance 1.
pub fn exact_posterior(tau: f64, n: f64, ybar: f64) -> (f64, f64) {
    let prec = 1.0 / (tau * tau) + n;
    (n * ybar / prec, (1.0 / prec).sqrt())
}

/// Mean, sd and CDF grid of the exact ABC posterior with the uniform kernel |s − ybar| ≤ eps:
/// π_ε(θ) ∝ φ(θ/τ) [Φ((ybar+ε−θ)√n) − Φ((ybar−ε−θ)√n)], by trapezoid quadrature.
#[derive(Debug)]
pub struct AbcPosterior {
    pub mean: f64,
    pub sd: f64,
    grid: Vec<f64>,
    cdf: Vec<f64>,
}

impl AbcPosterior {
    pub fn new(tau: f64, n: f64, ybar: f64, eps: f64) -> Self {
        let (m, s) = exact_posterior(tau, n, ybar);
        let (lo, hi) = (m - 12.0 * s - eps, m + 12.0 * s + eps);
        let k = 40_000;
        let h = (hi - lo) / f64::from(k);
        let sn = n.sqrt();
        let dens = |t: f64| {
            let prior = (-0.5 * (t / tau) * (t / tau)).exp();
            let lik = if eps > 0.0 {
                dpinfer_math::norm_cdf((ybar + eps - t) * sn)
                    - dpinfer_math::norm_cdf((ybar - eps - t) * sn)
            } else {
                (-0.5 * ((ybar - t) * sn).powi(2)).exp()
            };
            prior * lik
        };
        let mut grid = Vec::with_capacity(k as usize + 1);
        let mut cdf = Vec::with_capacity(k as usize + 1);
        let (mut z, mut m1, mut m2, mut prev) = (0.0, 0.0, 0.0, dens(lo));
        grid.push(lo);
        cdf.push(0.0);
        for i in 1..=k {
            let t = lo + h * f64::from(i);
            let d = dens(t);
            let tp = t - h;
            z += 0.5 * h * (prev + d);
            m1 += 0.5 * h * (prev * tp + d * t);
            m2 += 0.5 * h * (prev * tp * tp + d * t * t);
            grid.push(t);
            cdf.push(z);
            prev = d;
        }
        for c in &mut cdf {
            *c /= z;
        }
        let mean = m1 / z;
        let sd = (m2 / z - mean * mean).sqrt();
        Self {
            mean,
            sd,
            grid,
            cdf,
        }
    }

    pub fn cdf(&self, t: f64) -> f64 {
        let i = self.grid.partition_point(|&g| g <= t);
        if i == 0 {
            return 0.0;
        }
        if i >= self.grid.len() {
            return 1.0;
        }
        let (g0, g1) = (self.grid[i - 1], self.grid[i]);
        let w = (t - g0) / (g1 - g0);
        self.cdf[i - 1] * (1.0 - w) + self.cdf[i] * w
    }

    /// Kolmogorov–Smirnov statistic of unweighted samples against this CDF.
    pub fn ks(&self, samples: &[f64]) -> f64 {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len() as f64;
        let mut d: f64 = 0.0;
        for (i, &x) in s.iter().enumerate() {
            let f = self.cdf(x);
            d = d
                .max((f - i as f64 / n).abs())
                .max(((i + 1) as f64 / n - f).abs());
        }
        d
    }
}

/// Weighted mean and sd.
pub fn weighted_mean_sd(x: &[f64], w: &[f64]) -> (f64, f64) {
    let tw: f64 = w.iter().sum();
    let m = x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / tw;
    let v = x
        .iter()
        .zip(w)
        .map(|(a, b)| b * (a - m) * (a - m))
        .sum::<f64>()
        / tw;
    (m, v.sqrt())
}

/// Runs `f` on a dedicated rayon pool of `threads` threads.
pub fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// A table of one-dimensional pairs: θ_t = t and the stored output ρ_t (with [`ident`] as
/// the distance, the tests fix every ρ_t exactly).
#[cfg(feature = "alloc")]
pub fn one_d_pairs(rhos: &[f64]) -> dpinfer_abc::pairs::PublicPairs {
    let thetas: Vec<f64> = (0..rhos.len()).map(|i| i as f64).collect();
    dpinfer_abc::pairs::PublicPairs::from_parts(1, 1, thetas, rhos.to_vec()).unwrap()
}

/// The distance that is the stored output itself.
pub fn ident(y: &[f64]) -> f64 {
    y[0]
}
