//! Random-walk Metropolis–Hastings and the DP penalty algorithm (thesis §2.2, §3.1;
//! Yildirim & Ermiş 2019).

use dpinfer_simulators::{Prior, RowLikelihood};
use rand_core::{CryptoRng, Rng};

use crate::McmcError;
use crate::budget::{Accounting, Budget, Mechanism, penalty_multiplier};
use crate::error::positive;
use crate::model::log_ratio_sum;
use crate::noise::PrivacyNoise;
use crate::proposal::{Proposal, Proposed, Walker};
use crate::rng::{NoNoise, log_uniform};
use crate::sampler::{Counts, MarkovChain, Meter, Step};

/// Settings shared by the exact and private random-walk kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct PenaltySettings {
    /// Proposal distribution.
    pub proposal: Proposal,
    /// Likelihood temperature `T ∈ (0, 1]` (target `p(X|θ)^T p(θ)`).
    pub temperature: f64,
}

/// Privacy parameters of DP penalty.
///
/// # Privacy
///
/// Substitute-one-row neighbours, public `n`. Per-row ratios are clipped to `±L‖θ'−θ‖₂`, so
/// the clipped, tempered sum has sensitivity `c = 2TL‖θ'−θ‖₂`; Gaussian noise of standard
/// deviation `τ n^α c` is added (thesis Theorem 6, normalised sensitivity 1 and noise
/// multiplier `τ n^α` per release). The number of iterations is the largest the (ε, δ)
/// target allows under `accounting` (Theorem 6 or 7), and the sampler refuses to step beyond
/// it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenaltyPrivacy {
    /// Per-row log-likelihood-ratio Lipschitz bound `L` (clip bound per unit ‖θ'−θ‖₂).
    pub clip: f64,
    /// Noise scale τ.
    pub tau: f64,
    /// Exponent α of `n` in the noise multiplier `τ n^α` (YE19 use α = ½ in examples).
    pub n_exponent: f64,
    /// Target ε.
    pub epsilon: f64,
    /// Target δ.
    pub delta: f64,
    /// Accounting used to derive the iteration count.
    pub accounting: Accounting,
}

#[derive(Clone, Copy, Debug)]
struct Private {
    clip: f64,
    multiplier: f64,
}

/// Random-walk MH / DP penalty sampler.
///
/// * [`Penalty::exact`]: exact Metropolis–Hastings on the (tempered) posterior (RWMH with the
///   Gaussian proposal); optionally with per-row clipping ([`Penalty::with_clip`], the
///   thesis §7.2 clipping experiment).
/// * [`Penalty::private`]: DP penalty: clipped ratios, Gaussian noise from a `CryptoRng`,
///   penalty-corrected acceptance `min{1, exp(λ̃ − σ²/2)}`. With the clip inactive it
///   targets the exact tempered posterior (Ceperley & Dewing 1999).
#[derive(Debug)]
pub struct Penalty<P, L, N = NoNoise> {
    prior: P,
    lik: L,
    walk: Walker,
    temperature: f64,
    clip: Option<f64>,
    private: Option<Private>,
    noise: N,
    meter: Meter,
}

pub(crate) fn check_common<P: Prior, L: RowLikelihood>(
    prior: &P,
    lik: &L,
    temperature: f64,
    init: &[f64],
) -> Result<f64, McmcError> {
    let d = lik.dim();
    if prior.dim() != d {
        return Err(McmcError::DimensionMismatch {
            expected: d,
            got: prior.dim(),
        });
    }
    if init.len() != d {
        return Err(McmcError::DimensionMismatch {
            expected: d,
            got: init.len(),
        });
    }
    if lik.n_rows() == 0 {
        return Err(McmcError::InvalidSize {
            name: "n",
            value: 0,
        });
    }
    if !(temperature.is_finite() && temperature > 0.0 && temperature <= 1.0) {
        return Err(McmcError::param("temperature", temperature));
    }
    let lp = prior.ln_density(init);
    if !lp.is_finite() || init.iter().any(|x| !x.is_finite()) {
        return Err(McmcError::InvalidInitialPoint);
    }
    Ok(lp)
}

impl<P: Prior, L: RowLikelihood> Penalty<P, L, NoNoise> {
    /// Exact (non-private) random-walk Metropolis–Hastings.
    ///
    /// # Errors
    ///
    /// Dimension mismatches, `n = 0`, `T ∉ (0, 1]`, bad proposal scales, or an initial point
    /// with non-finite log prior.
    pub fn exact(
        prior: P,
        lik: L,
        settings: PenaltySettings,
        init: &[f64],
    ) -> Result<Self, McmcError> {
        let walk = Walker::new(&prior, &lik, settings.proposal, settings.temperature, init)?;
        Ok(Self {
            walk,
            prior,
            lik,
            temperature: settings.temperature,
            clip: None,
            private: None,
            noise: NoNoise,
            meter: Meter::default(),
        })
    }

    /// Clips per-row ratios to `±clip · ‖θ'−θ‖₂` without adding noise (thesis §7.2).
    ///
    /// # Errors
    ///
    /// `clip` not finite and positive.
    pub fn with_clip(mut self, clip: f64) -> Result<Self, McmcError> {
        self.clip = Some(positive("clip", clip)?);
        Ok(self)
    }
}

impl<P: Prior, L: RowLikelihood, N: CryptoRng> Penalty<P, L, N> {
    /// DP penalty. Privacy noise is drawn from `noise` (a CSPRNG, never the proposal RNG).
    ///
    /// # Errors
    ///
    /// As [`Penalty::exact`]; invalid privacy parameters; [`McmcError::BudgetExhausted`] if
    /// the budget allows no iteration.
    pub fn private(
        prior: P,
        lik: L,
        settings: PenaltySettings,
        privacy: PenaltyPrivacy,
        init: &[f64],
        noise: N,
    ) -> Result<Self, McmcError> {
        let walk = Walker::new(&prior, &lik, settings.proposal, settings.temperature, init)?;
        positive("clip", privacy.clip)?;
        let n = lik.n_rows();
        let budget = Budget::new(
            Mechanism::Penalty {
                tau: privacy.tau,
                n,
                n_exponent: privacy.n_exponent,
                accounting: privacy.accounting,
            },
            privacy.epsilon,
            privacy.delta,
        )?;
        let multiplier = penalty_multiplier(privacy.tau, n, privacy.n_exponent)?;
        Ok(Self {
            walk,
            prior,
            lik,
            temperature: settings.temperature,
            clip: Some(privacy.clip),
            private: Some(Private {
                clip: privacy.clip,
                multiplier,
            }),
            noise,
            meter: Meter::new(Some(budget)),
        })
    }
}

crate::chains::walk_chain!(Penalty, PrivacyNoise);

impl<P: Prior, L: RowLikelihood, N: PrivacyNoise> Penalty<P, L, N> {
    /// The (DP) penalty test of the proposal.
    fn accept<R: Rng + ?Sized>(&mut self, rng: &mut R, new: Proposed) -> Result<Counts, McmcError> {
        if let Some(accepted) = Walker::data_free_decision(new, self.clip) {
            return Ok(Counts::walk(accepted, (0, 0), 0.0));
        }
        let (dist, lp_new) = (new.dist, new.log_prior);
        let n = self.lik.n_rows();
        let mut clipped = 0;
        let mut noise_sd = 0.0;
        let mut sum = match self.clip {
            Some(l) => {
                let cs = self.lik.clipped_log_ratio_sum(
                    &self.walk.theta,
                    &self.walk.proposed,
                    0,
                    n,
                    l * dist,
                )?;
                clipped = cs.clipped;
                cs.sum
            }
            None => log_ratio_sum(&self.lik, &self.walk.theta, &self.walk.proposed, 0, n)?,
        };
        let mut penalty = 0.0;
        if let Some(p) = self.private {
            // Sensitivity of the clipped sum c = 2L‖θ'−θ‖, noise sd τ n^α c (Theorem 6);
            // |sum| ≤ n L ‖θ'−θ‖ is the public range. Tempering is post-processing.
            let c = 2.0 * p.clip * dist;
            #[allow(clippy::cast_precision_loss)]
            let bound = n as f64 * p.clip * dist;
            let (noisy, sd_eff) = self.noise.release(sum, p.multiplier * c, c, bound)?;
            self.meter.released.gaussian += 1;
            self.meter.released.gaussian_rho += c * c / (2.0 * sd_eff * sd_eff);
            sum = noisy;
            noise_sd = self.temperature * sd_eff;
            penalty = 0.5 * noise_sd * noise_sd;
        }
        let lambda = self.temperature * sum + lp_new - self.walk.log_prior;
        // NaN λ (exact kernel with a NaN row) rejects.
        let accepted = log_uniform(rng) < lambda - penalty;
        Ok(Counts::walk(accepted, (n, clipped), noise_sd))
    }
}
