//! Small test problems with exact (or quadrature) posteriors.

use core::convert::Infallible;

use dpinfer_calibration::Problem;
use dpinfer_math::{erfc, erfcx};
use dpinfer_mechanisms::idealized::{IdealizedGaussian, IdealizedLaplace};
use dpinfer_simulators::SimStream;
use dpinfer_simulators::dist::{uniform01, ziggurat_normal};

/// θ ∈ R^dim, θⱼ ~ N(0, 1) i.i.d.; per coordinate `n` rows xᵢ ~ N(θⱼ, 1); the mean released with
/// Gaussian noise of sd `noise_sd` (simulated, public seeded noise). The sampler draws the
/// conjugate normal posterior exactly, assuming noise sd `assumed_noise_sd` and multiplying
/// the posterior sd by `sd_factor` (1 and `assumed = noise`: exact).
#[derive(Clone, Debug)]
pub(crate) struct Conjugate {
    pub(crate) dim: usize,
    pub(crate) n: usize,
    pub(crate) noise_sd: f64,
    pub(crate) assumed_noise_sd: f64,
    pub(crate) sd_factor: f64,
}

impl Conjugate {
    pub(crate) fn exact(dim: usize, n: usize, noise_sd: f64) -> Self {
        Self {
            dim,
            n,
            noise_sd,
            assumed_noise_sd: noise_sd,
            sd_factor: 1.0,
        }
    }
}

/// The sample mean of `n` rows N(θ, 1) (the confidential data).
fn data_mean(theta: f64, n: usize, data: &mut SimStream) -> f64 {
    let mut s = 0.0;
    for _ in 0..n {
        s += theta + ziggurat_normal(data);
    }
    s / n as f64
}

impl Problem for Conjugate {
    type Release = Vec<f64>;
    type Error = Infallible;
    fn dim(&self) -> usize {
        self.dim
    }
    fn prior(&self, rng: &mut SimStream, theta: &mut [f64]) -> Result<(), Infallible> {
        for t in theta {
            *t = ziggurat_normal(rng);
        }
        Ok(())
    }
    fn release(
        &self,
        theta: &[f64],
        data: &mut SimStream,
        noise: &mut SimStream,
    ) -> Result<Vec<f64>, Infallible> {
        Ok(theta
            .iter()
            .map(|&t| {
                let m = data_mean(t, self.n, data);
                if self.noise_sd > 0.0 {
                    IdealizedGaussian::new(self.noise_sd)
                        .unwrap()
                        .add_noise(m, noise)
                } else {
                    m
                }
            })
            .collect())
    }
    fn posterior(
        &self,
        release: &Vec<f64>,
        rng: &mut SimStream,
        n: usize,
        out: &mut Vec<f64>,
    ) -> Result<(), Infallible> {
        let v = 1.0 / self.n as f64 + self.assumed_noise_sd * self.assumed_noise_sd;
        let precision = 1.0 + 1.0 / v;
        let sd = self.sd_factor / precision.sqrt();
        for _ in 0..n {
            for &y in release {
                out.push(y / v / precision + sd * ziggurat_normal(rng));
            }
        }
        Ok(())
    }
}

/// The density of N(0, s²) ⊛ Laplace(b) at d (the exponentially modified Gaussian pair).
pub(crate) fn normal_laplace_density(d: f64, s: f64, b: f64) -> f64 {
    let side = |d: f64| {
        // exp(s²/2b² − d/b)·erfc((s/b − d/s)/√2)
        let z = (s / b - d / s) / core::f64::consts::SQRT_2;
        if z >= 0.0 {
            erfcx(z) * (-d * d / (2.0 * s * s)).exp()
        } else {
            (s * s / (2.0 * b * b) - d / b).exp() * erfc(z)
        }
    };
    (side(d) + side(-d)) / (4.0 * b)
}

/// θ ~ N(0, 1); `n` rows N(θ, 1); their mean released with Laplace noise of scale `b`
/// (simulated, public seeded noise). The sampler draws the posterior by quadrature on a grid
/// (inverse CDF, linear within a cell), with the mechanism in the likelihood (`naive = false`)
/// or ignoring it (`naive = true`: the release treated as the noiseless mean).
#[derive(Clone, Debug)]
pub(crate) struct LaplaceMean {
    pub(crate) n: usize,
    pub(crate) b: f64,
    pub(crate) naive: bool,
}

const GRID: usize = 1201;
const LO: f64 = -6.0;
const HI: f64 = 6.0;

impl Problem for LaplaceMean {
    type Release = f64;
    type Error = Infallible;
    fn dim(&self) -> usize {
        1
    }
    fn prior(&self, rng: &mut SimStream, theta: &mut [f64]) -> Result<(), Infallible> {
        theta[0] = ziggurat_normal(rng);
        Ok(())
    }
    fn release(
        &self,
        theta: &[f64],
        data: &mut SimStream,
        noise: &mut SimStream,
    ) -> Result<f64, Infallible> {
        let m = data_mean(theta[0], self.n, data);
        Ok(IdealizedLaplace::new(self.b).unwrap().add_noise(m, noise))
    }
    fn posterior(
        &self,
        y: &f64,
        rng: &mut SimStream,
        n: usize,
        out: &mut Vec<f64>,
    ) -> Result<(), Infallible> {
        let s = (1.0 / self.n as f64).sqrt();
        let h = (HI - LO) / (GRID - 1) as f64;
        let dens: Vec<f64> = (0..GRID)
            .map(|i| {
                let t = LO + h * i as f64;
                let prior = (-0.5 * t * t).exp();
                let lik = if self.naive {
                    (-0.5 * ((y - t) / s).powi(2)).exp()
                } else {
                    normal_laplace_density(y - t, s, self.b)
                };
                prior * lik
            })
            .collect();
        let mut cdf = vec![0.0; GRID];
        for i in 1..GRID {
            cdf[i] = cdf[i - 1] + 0.5 * h * (dens[i - 1] + dens[i]);
        }
        let total = cdf[GRID - 1];
        for _ in 0..n {
            let u = uniform01(rng) * total;
            let i = cdf.partition_point(|&c| c <= u).clamp(1, GRID - 1);
            let (c0, c1) = (cdf[i - 1], cdf[i]);
            let frac = if c1 > c0 { (u - c0) / (c1 - c0) } else { 0.5 };
            out.push(LO + h * ((i - 1) as f64 + frac));
        }
        Ok(())
    }
}
