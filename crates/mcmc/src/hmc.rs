//! Hamiltonian Monte Carlo (leapfrog, diagonal mass matrix; Neal 2012, thesis §5.1) and DP
//! HMC (thesis §5.2, Algorithm 3, **without** the friction term, which breaks volume
//! preservation and hence the acceptance test).

use alloc::vec;
use alloc::vec::Vec;
use dpinfer_simulators::likelihood::CHUNK;
use dpinfer_simulators::{RowGradient, RowLikelihood};
use rand_core::{CryptoRng, Rng};

use crate::McmcError;
use crate::budget::{Accounting, Budget, GradientCharging, Mechanism};
use crate::error::positive;
use crate::model::{PriorGradient, log_ratio_sum};
use crate::noise::PrivacyNoise;
use crate::penalty::check_common;
use crate::rng::{NoNoise, log_uniform, std_normal};
use crate::sampler::{Counts, MarkovChain, Meter, Step};

/// Settings of (DP) HMC.
#[derive(Clone, Debug, PartialEq)]
pub struct HmcSettings {
    /// Leapfrog step size η.
    pub step_size: f64,
    /// Leapfrog steps per iteration L (≥ 1).
    pub leapfrog_steps: u32,
    /// Diagonal of the inverse mass matrix `M⁻¹` (length d).
    pub inv_mass: Vec<f64>,
    /// Likelihood temperature `T ∈ (0, 1]`.
    pub temperature: f64,
}

/// Privacy parameters of DP HMC (thesis §5.2).
///
/// # Privacy
///
/// Substitute-one-row neighbours, public `n`. Per-row gradients are clipped to L2 norm
/// `grad_clip` (sensitivity `2 b_g`) and get noise `N(0, σ_g² I)`, `σ_g = 2τ_g√n b_g`; per-row
/// log-likelihood ratios are clipped to `±ratio_clip·‖θ'−θ‖₂` (sensitivity `2b_l‖θ'−θ‖`) and get
/// noise of sd `σ_l = 2τ_l√n b_l‖θ'−θ‖`. Each release is a Gaussian mechanism with PLD
/// `N(μ, 2μ)`, `μ = 1/(2τ²n)`; the number of iterations is the largest the (ε, δ) target
/// allows with `charging` gradient releases (thesis §5.2: `k(L+1)` fresh or `kL+1` reused).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HmcPrivacy {
    /// Per-row log-likelihood-ratio bound per unit distance `b_l`.
    pub ratio_clip: f64,
    /// Per-row gradient L2 bound `b_g`.
    pub grad_clip: f64,
    /// Noise scale of the ratio releases τ_l.
    pub tau_l: f64,
    /// Noise scale of the gradient releases τ_g.
    pub tau_g: f64,
    /// Target ε.
    pub epsilon: f64,
    /// Target δ.
    pub delta: f64,
    /// zCDP or exact PLD.
    pub accounting: Accounting,
    /// Fresh start gradient every iteration, or Algorithm 3's reuse.
    pub charging: GradientCharging,
}

#[derive(Clone, Copy, Debug)]
struct Private {
    p: HmcPrivacy,
    sd_g: f64,
    sd_l_unit: f64,
}

/// HMC / DP HMC sampler.
#[derive(Debug)]
pub struct Hmc<P, L, N = NoNoise> {
    prior: P,
    lik: L,
    s: HmcSettings,
    theta: Vec<f64>,
    theta_new: Vec<f64>,
    p: Vec<f64>,
    grad_start: Vec<f64>,
    grad_buf: Vec<f64>,
    log_prior: f64,
    private: Option<Private>,
    clip: Option<f64>,
    noise: N,
    grads_evaluated: usize,
    grads_clipped: usize,
    /// Whether Algorithm 3's start gradient has been released (lazily, at the first step).
    start_released: bool,
    meter: Meter,
}

fn validate(s: &HmcSettings, d: usize) -> Result<(), McmcError> {
    positive("step_size", s.step_size)?;
    if s.leapfrog_steps == 0 {
        return Err(McmcError::InvalidSize {
            name: "leapfrog_steps",
            value: 0,
        });
    }
    if s.inv_mass.len() != d {
        return Err(McmcError::DimensionMismatch {
            expected: d,
            got: s.inv_mass.len(),
        });
    }
    for &m in &s.inv_mass {
        positive("inv_mass", m)?;
    }
    Ok(())
}

impl<P: PriorGradient, L: RowGradient> Hmc<P, L, NoNoise> {
    /// Exact (non-private) HMC.
    ///
    /// # Errors
    ///
    /// Dimension mismatches, `n = 0`, bad settings or initial point.
    pub fn exact(prior: P, lik: L, settings: HmcSettings, init: &[f64]) -> Result<Self, McmcError> {
        Self::build(prior, lik, settings, init, None, NoNoise)
    }
}

impl<P, L> Hmc<P, L, NoNoise> {
    /// Clips per-row log-likelihood ratios in the acceptance test to `±clip · ‖θ'−θ‖₂` without
    /// adding noise (the thesis §7.2 clipping experiment for HMC).
    ///
    /// # Errors
    ///
    /// `clip` not finite and positive.
    pub fn with_ratio_clip(mut self, clip: f64) -> Result<Self, McmcError> {
        self.clip = Some(positive("clip", clip)?);
        Ok(self)
    }
}

impl<P: PriorGradient, L: RowGradient, N: CryptoRng> Hmc<P, L, N> {
    /// DP HMC with noise from the CSPRNG `noise`.
    ///
    /// # Errors
    ///
    /// As [`Hmc::exact`], invalid privacy parameters, or a budget that allows no iteration.
    pub fn private(
        prior: P,
        lik: L,
        settings: HmcSettings,
        privacy: HmcPrivacy,
        init: &[f64],
        noise: N,
    ) -> Result<Self, McmcError> {
        positive("ratio_clip", privacy.ratio_clip)?;
        positive("grad_clip", privacy.grad_clip)?;
        if crate::model::usable_bound(privacy.grad_clip).is_none() {
            return Err(McmcError::param("grad_clip", privacy.grad_clip));
        }
        let n = lik.n_rows();
        let budget = Budget::new(
            Mechanism::Hmc {
                tau_l: privacy.tau_l,
                tau_g: privacy.tau_g,
                n,
                leapfrog: settings.leapfrog_steps,
                charging: privacy.charging,
                accounting: privacy.accounting,
            },
            privacy.epsilon,
            privacy.delta,
        )?;
        #[allow(clippy::cast_precision_loss)]
        let sqrt_n = libm::sqrt(n as f64);
        let pr = Private {
            p: privacy,
            sd_g: 2.0 * privacy.tau_g * sqrt_n * privacy.grad_clip,
            sd_l_unit: 2.0 * privacy.tau_l * sqrt_n * privacy.ratio_clip,
        };
        Self::build(prior, lik, settings, init, Some((pr, budget)), noise)
    }
}

impl<P: PriorGradient, L: RowGradient, N: PrivacyNoise> Hmc<P, L, N> {
    fn build(
        prior: P,
        lik: L,
        s: HmcSettings,
        init: &[f64],
        private: Option<(Private, Budget)>,
        noise: N,
    ) -> Result<Self, McmcError> {
        let lp = check_common(&prior, &lik, s.temperature, init)?;
        let d = init.len();
        validate(&s, d)?;
        let rows_per = (CHUNK / d).max(1);
        let h = Self {
            prior,
            lik,
            s,
            theta: init.to_vec(),
            theta_new: init.to_vec(),
            p: vec![0.0; d],
            grad_start: vec![0.0; d],
            grad_buf: vec![0.0; rows_per * d],
            log_prior: lp,
            private: private.map(|p| p.0),
            clip: None,
            meter: Meter::new(private.map(|p| p.1)),
            noise,
            grads_evaluated: 0,
            grads_clipped: 0,
            start_released: false,
        };
        // Algorithm 3's G_{1,0} (the "+1") is released at the first step, not here: a chain
        // that is built but never run (or refused by `MultiChain`) has released nothing.
        Ok(h)
    }

    /// Gradient of the (tempered, clipped, noisy) log posterior at `theta` into `out`.
    fn gradient(&mut self, theta: &[f64], out: &mut [f64]) -> Result<(), McmcError> {
        let n = self.lik.n_rows();
        let d = theta.len();
        if !theta.iter().all(|x| x.is_finite()) {
            // A diverged trajectory: data are not touched; the proposal will be rejected.
            out.fill(0.0);
            return Ok(());
        }
        match self.private {
            Some(pr) => {
                let c = self
                    .lik
                    .clipped_grad_sum(theta, 0, n, pr.p.grad_clip, out)?;
                self.grads_clipped += c;
                // ℓ₂ sensitivity 2b_g; every coordinate of the clipped sum lies in ±n b_g.
                #[allow(clippy::cast_precision_loss)]
                let bound = n as f64 * pr.p.grad_clip;
                let sd = self
                    .noise
                    .release_vec(out, pr.sd_g, 2.0 * pr.p.grad_clip, bound)?;
                let c = 2.0 * pr.p.grad_clip;
                self.meter.released.gaussian += 1;
                self.meter.released.gradients += 1;
                self.meter.released.gaussian_rho += c * c / (2.0 * sd * sd);
            }
            None if d <= CHUNK => {
                // The model's fused pass with an inactive bound (only non-finite rows change).
                self.lik
                    .clipped_grad_sum(theta, 0, n, crate::model::MAX_CLIP, out)?;
            }
            None => {
                out.fill(0.0);
                let rows_per = self.grad_buf.len() / d;
                let mut start = 0;
                while start < n {
                    let m = (n - start).min(rows_per);
                    self.lik
                        .row_grad(theta, start, &mut self.grad_buf[..m * d])?;
                    for row in self.grad_buf[..m * d].chunks_exact(d) {
                        for (o, g) in out.iter_mut().zip(row) {
                            *o += g;
                        }
                    }
                    start += m;
                }
            }
        }
        self.grads_evaluated += n;
        let mut gp = vec![0.0; d];
        self.prior.grad_ln_density(theta, &mut gp);
        for (o, g) in out.iter_mut().zip(&gp) {
            *o = self.s.temperature * *o + g;
        }
        Ok(())
    }

    fn kinetic(&self, p: &[f64]) -> f64 {
        0.5 * p
            .iter()
            .zip(&self.s.inv_mass)
            .map(|(x, m)| x * x * m)
            .sum::<f64>()
    }
}

crate::chains::metered!(Hmc);

impl<P: PriorGradient, L: RowGradient + RowLikelihood, N: PrivacyNoise> MarkovChain
    for Hmc<P, L, N>
{
    fn dim(&self) -> usize {
        self.theta.len()
    }
    fn position(&self) -> &[f64] {
        &self.theta
    }
    fn step<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<Step<'_>, McmcError> {
        self.meter.begin()?;
        self.grads_evaluated = 0;
        self.grads_clipped = 0;
        let d = self.theta.len();
        let eta = self.s.step_size;
        for j in 0..d {
            self.p[j] = std_normal(rng) / libm::sqrt(self.s.inv_mass[j]);
        }
        let k0 = self.kinetic(&self.p);
        let reuse = matches!(self.private, Some(p) if p.p.charging == GradientCharging::Reuse);
        let mut g = vec![0.0; d];
        if reuse && !self.start_released {
            // Algorithm 3: G_{1,0} released once before the first trajectory (the "+1").
            let th = self.theta.clone();
            self.gradient(&th, &mut g)?;
            self.grad_start.copy_from_slice(&g);
            self.start_released = true;
        } else if reuse {
            g.copy_from_slice(&self.grad_start);
        } else {
            let th = self.theta.clone();
            self.gradient(&th, &mut g)?;
            self.grad_start.copy_from_slice(&g);
        }
        self.theta_new.copy_from_slice(&self.theta);
        let mut th = self.theta_new.clone();
        for _ in 0..self.s.leapfrog_steps {
            for j in 0..d {
                self.p[j] += 0.5 * eta * g[j];
                th[j] += eta * self.s.inv_mass[j] * self.p[j];
            }
            self.gradient(&th, &mut g)?;
            for (pj, gj) in self.p.iter_mut().zip(&g) {
                *pj += 0.5 * eta * gj;
            }
        }
        self.theta_new.copy_from_slice(&th);
        let k1 = self.kinetic(&self.p);
        let lp_new = self.prior.ln_density(&self.theta_new);
        let dist = libm::sqrt(
            self.theta
                .iter()
                .zip(&self.theta_new)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>(),
        );
        let n = self.lik.n_rows();
        let mut noise_sd = 0.0;
        let mut evaluated = 0;
        let mut clipped = 0;
        let accepted = if !lp_new.is_finite() || !k1.is_finite() || !dist.is_finite() {
            false
        } else if dist == 0.0 {
            true
        } else if self
            .private
            .is_some_and(|pr| crate::model::usable_bound(pr.p.ratio_clip * dist).is_none())
        {
            false
        } else {
            let (sum, var) = match self.private {
                Some(pr) => {
                    let cs = self.lik.clipped_log_ratio_sum(
                        &self.theta,
                        &self.theta_new,
                        0,
                        n,
                        pr.p.ratio_clip * dist,
                    )?;
                    clipped = cs.clipped;
                    let sd = pr.sd_l_unit * dist;
                    let c = 2.0 * pr.p.ratio_clip * dist;
                    #[allow(clippy::cast_precision_loss)]
                    let bound = n as f64 * pr.p.ratio_clip * dist;
                    let (noisy, sd_eff) = self.noise.release(cs.sum, sd, c, bound)?;
                    self.meter.released.gaussian += 1;
                    self.meter.released.gaussian_rho += c * c / (2.0 * sd_eff * sd_eff);
                    noise_sd = sd_eff * self.s.temperature;
                    (noisy, noise_sd * noise_sd)
                }
                None => match self.clip.and_then(|l| crate::model::usable_bound(l * dist)) {
                    Some(b) => {
                        let cs = self.lik.clipped_log_ratio_sum(
                            &self.theta,
                            &self.theta_new,
                            0,
                            n,
                            b,
                        )?;
                        clipped = cs.clipped;
                        (cs.sum, 0.0)
                    }
                    None => (
                        log_ratio_sum(&self.lik, &self.theta, &self.theta_new, 0, n)?,
                        0.0,
                    ),
                },
            };
            evaluated = n;
            let dh = self.s.temperature * sum + lp_new - self.log_prior + k0 - k1;
            log_uniform(rng) < dh - 0.5 * var
        };
        if accepted {
            self.theta.copy_from_slice(&self.theta_new);
            self.log_prior = lp_new;
            if reuse {
                self.grad_start.copy_from_slice(&g);
            }
        }
        Ok(self.meter.step(
            &self.theta,
            Counts {
                accepted,
                ratios: (evaluated, clipped),
                gradients: (self.grads_evaluated, self.grads_clipped),
                noise_sd,
            },
        ))
    }
}
