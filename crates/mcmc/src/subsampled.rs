//! DP penalty with subsampling (thesis §4.1, Lemma 1, Theorem 9).

use dpinfer_simulators::{Prior, RowLikelihood};
use rand_core::{CryptoRng, Rng};

use crate::McmcError;
use crate::batch::Batcher;
use crate::budget::{Budget, Mechanism};
use crate::error::positive;
use crate::noise::PrivacyNoise;
use crate::proposal::{Proposal, Proposed, Walker};
use crate::rng::{NoNoise, log_uniform};
use crate::sampler::{Counts, MarkovChain, Meter, Step};

/// Settings of subsampled (DP) penalty.
#[derive(Clone, Debug, PartialEq)]
pub struct SubsampledPenaltySettings {
    /// Proposal distribution.
    pub proposal: Proposal,
    /// Likelihood temperature `T ∈ (0, 1]`.
    pub temperature: f64,
    /// Batch size `b = |B|` (≥ 2, ≤ n), drawn without replacement every iteration.
    pub batch: usize,
    /// Per-row clip bound per unit distance `L` (ratios clipped to `±L‖θ'−θ‖₂`).
    pub clip: f64,
}

/// Privacy parameters of subsampled DP penalty.
///
/// # Privacy
///
/// Substitute-one-row neighbours, public `n`, batches without replacement. The released
/// quantity is `λ* − σ_b²/2` with sensitivity `c = Δ_λ + Δ_σ` (Theorem 9, Lemma 1) and noise
/// variance `τc²`, so each step is `(α, α/(2τ))`-RDP before amplification; WBK19 (sum through
/// `j = α`) gives the per-iteration RDP, and the run length is the largest `k` meeting
/// (ε, δ) over orders `2..=256`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubsampledPenaltyPrivacy {
    /// Noise variance multiplier τ (noise variance `τ c(θ, θ')²`).
    pub tau: f64,
    /// Target ε.
    pub epsilon: f64,
    /// Target δ.
    pub delta: f64,
}

#[derive(Clone, Copy, Debug)]
struct Private {
    tau: f64,
}

/// Subsampled penalty sampler: accept with probability
/// `min{1, exp(λ* − (σ² + σ_b²)/2)}`, `λ* = (nT/|B|) Σ_B clip(r_j) + ln p(θ')/p(θ)`,
/// `σ_b² = (nT)²/|B|² Σ_B (r_j − R/|B|)²` (thesis §4.1). Without privacy noise (σ² = 0) it
/// is the penalty method's correction for subsampling error alone (a CLT approximation).
#[derive(Debug)]
pub struct SubsampledPenalty<P, L, N = NoNoise> {
    prior: P,
    lik: L,
    walk: Walker,
    s: SubsampledPenaltySettings,
    batcher: Batcher,
    private: Option<Private>,
    noise: N,
    meter: Meter,
}

/// Sensitivity `c(θ, θ') = Δ_λ + Δ_σ` of `λ* − σ_b²/2` (thesis Theorem 9 / Lemma 1) for
/// `n` rows, batch `b`, temperature `T`, clip `L` and distance `‖θ'−θ‖₂`.
#[must_use]
pub fn subsampled_sensitivity(n: usize, b: usize, temperature: f64, clip: f64, dist: f64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let (nf, bf) = (n as f64, b as f64);
    let r = clip * dist;
    let k = nf * temperature / bf;
    let d_lambda = 2.0 * k * r;
    let d_sigma = k * k * (1.0 - 1.0 / bf).abs() * r * r + 2.0 * (bf - 1.0) / bf * k * k * r * r;
    d_lambda + d_sigma
}

impl<P: Prior, L: RowLikelihood> SubsampledPenalty<P, L, NoNoise> {
    /// Without privacy noise.
    ///
    /// # Errors
    ///
    /// As [`crate::Penalty::exact`]; batch outside `2..=n`; bad clip.
    pub fn exact(
        prior: P,
        lik: L,
        settings: SubsampledPenaltySettings,
        init: &[f64],
    ) -> Result<Self, McmcError> {
        let walk = Walker::new(
            &prior,
            &lik,
            settings.proposal.clone(),
            settings.temperature,
            init,
        )?;
        positive("clip", settings.clip)?;
        let n = lik.n_rows();
        if settings.batch < 2 || settings.batch > n {
            return Err(McmcError::InvalidSize {
                name: "batch",
                value: settings.batch,
            });
        }
        Ok(Self {
            walk,
            batcher: Batcher::new(n, settings.batch),
            prior,
            lik,
            s: settings,
            private: None,
            noise: NoNoise,
            meter: Meter::default(),
        })
    }
}

impl<P: Prior, L: RowLikelihood, N: CryptoRng> SubsampledPenalty<P, L, N> {
    /// Subsampled DP penalty with noise from the CSPRNG `noise`.
    ///
    /// # Errors
    ///
    /// As [`SubsampledPenalty::exact`]; invalid τ, ε, δ; zero budget.
    pub fn private(
        prior: P,
        lik: L,
        settings: SubsampledPenaltySettings,
        privacy: SubsampledPenaltyPrivacy,
        init: &[f64],
        noise: N,
    ) -> Result<Self, McmcError> {
        let e = SubsampledPenalty::exact(prior, lik, settings, init)?;
        let n = e.lik.n_rows();
        let budget = Budget::new(
            Mechanism::SubsampledPenalty {
                tau: privacy.tau,
                n,
                batch: e.s.batch,
                rule: dpinfer_accountants::ConversionRule::Tightest,
            },
            privacy.epsilon,
            privacy.delta,
        )?;
        Ok(SubsampledPenalty {
            prior: e.prior,
            lik: e.lik,
            walk: e.walk,
            s: e.s,
            batcher: e.batcher,
            private: Some(Private { tau: privacy.tau }),
            noise,
            meter: Meter::new(Some(budget)),
        })
    }
}

crate::chains::walk_chain!(SubsampledPenalty, PrivacyNoise);

impl<P: Prior, L: RowLikelihood, N: PrivacyNoise> SubsampledPenalty<P, L, N> {
    /// The subsampled (DP) penalty test of the proposal.
    fn accept<R: Rng + ?Sized>(&mut self, rng: &mut R, new: Proposed) -> Result<Counts, McmcError> {
        let (n, b, clip) = (self.lik.n_rows(), self.s.batch, self.s.clip);
        if let Some(accepted) = Walker::data_free_decision(new, Some(clip)) {
            return Ok(Counts::walk(accepted, (0, 0), 0.0));
        }
        let (dist, lp_new) = (new.dist, new.log_prior);
        let mut noise_sd = 0.0;
        let rows = self.batcher.draw(rng);
        let batch = self.walk.clipped_rows(&self.lik, rows, clip * dist)?;
        let (s, s2) = (batch.sum, batch.sum_sq);
        #[allow(clippy::cast_precision_loss)]
        let (nf, bf) = (n as f64, b as f64);
        let k = nf * self.s.temperature / bf;
        // σ_b² = (nT/b)² (Σ r² − R²/b)
        let sb2 = (k * k * (s2 - s * s / bf)).max(0.0);
        // The data-dependent part λ*_data − σ_b²/2 is what is released (Theorem 9).
        let mut data = k * s - 0.5 * sb2;
        let mut var = 0.0;
        if let Some(p) = self.private {
            let c = subsampled_sensitivity(n, b, self.s.temperature, clip, dist);
            let r = clip * dist;
            let bound = nf * self.s.temperature * r + k * k * bf * r * r;
            let (noisy, sd_eff) = self.noise.release(data, libm::sqrt(p.tau) * c, c, bound)?;
            self.meter.released.subsampled += 1;
            data = noisy;
            noise_sd = sd_eff;
            var = sd_eff * sd_eff;
        }
        let released = data + lp_new - self.walk.log_prior;
        let accepted = log_uniform(rng) < released - 0.5 * var;
        Ok(Counts::walk(accepted, (b, batch.clipped), noise_sd))
    }
}
