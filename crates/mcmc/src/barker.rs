//! Barker's acceptance test and DP Barker (Heikkilä et al. 2019; thesis §3.2, Algorithm 2,
//! Theorem 8).

use dpinfer_simulators::{Prior, RowLikelihood};
use rand_core::{CryptoRng, Rng};

use crate::McmcError;
use crate::batch::Batcher;
use crate::budget::{Budget, Mechanism};
use crate::model::log_ratio_sum;
use crate::noise::PrivacyNoise;
use crate::proposal::{Proposal, Proposed, Walker};
use crate::rng::{NoNoise, logistic};
use crate::sampler::{Counts, MarkovChain, Meter, Step};
use crate::vcorr::VCorr;

/// Settings of (DP) Barker.
#[derive(Clone, Debug, PartialEq)]
pub struct BarkerSettings {
    /// Proposal distribution.
    pub proposal: Proposal,
    /// Likelihood temperature `T = n₀/n ∈ (0, 1]`.
    pub temperature: f64,
}

/// Privacy parameters of DP Barker.
///
/// # Privacy
///
/// Substitute-one-row neighbours, public `n`; batches of fixed size `|B|` drawn without
/// replacement (WBK19 amplification with `q = |B|/n`). Tempered per-row ratios are clipped
/// to `T|r_j| ≤ √|B|/n`, i.e. `|r_j| ≤ √|B|/n₀` (thesis §3.2). The total noise variance is
/// σ² = 2 (the setting of HJDH19's Theorem 8); the run length is the largest `k` whose RDP
/// bound (Theorem 8 + Theorem 1 conversion, orders `2 ≤ α < |B|/5`) meets (ε, δ).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BarkerPrivacy {
    /// Batch size |B| (> 10, ≤ n).
    pub batch: usize,
    /// Target ε.
    pub epsilon: f64,
    /// Target δ.
    pub delta: f64,
}

/// Total noise variance of the DP Barker test.
pub const BARKER_SIGMA2: f64 = 2.0;

#[derive(Clone, Debug)]
struct Private {
    batcher: Batcher,
    bound: f64,
    vcorr: VCorr,
    n: usize,
    batch: usize,
}

/// Barker / DP Barker sampler. [`Barker::exact`] is the exact Barker kernel (full data,
/// logistic test); [`Barker::private`] is DP Barker.
#[derive(Debug)]
pub struct Barker<P, L, N = NoNoise> {
    prior: P,
    lik: L,
    walk: Walker,
    temperature: f64,
    private: Option<Private>,
    noise: N,
    last_batch_var: f64,
    meter: Meter,
}

impl<P: Prior, L: RowLikelihood> Barker<P, L, NoNoise> {
    /// Exact Barker kernel: accept iff `λ + V_log > 0`, `V_log ~ Logistic(0, 1)`.
    ///
    /// # Errors
    ///
    /// As [`crate::Penalty::exact`].
    pub fn exact(
        prior: P,
        lik: L,
        settings: BarkerSettings,
        init: &[f64],
    ) -> Result<Self, McmcError> {
        let walk = Walker::new(&prior, &lik, settings.proposal, settings.temperature, init)?;
        Ok(Self {
            walk,
            prior,
            lik,
            temperature: settings.temperature,
            private: None,
            noise: NoNoise,
            last_batch_var: 0.0,
            meter: Meter::default(),
        })
    }
}

impl<P: Prior, L: RowLikelihood, N: CryptoRng> Barker<P, L, N> {
    /// DP Barker; Gaussian noise and the `V_corr` draw come from `noise`.
    ///
    /// # Errors
    ///
    /// As [`Barker::exact`]; invalid ε, δ or batch (`|B| ≤ 10` or `> n`); zero budget.
    pub fn private(
        prior: P,
        lik: L,
        settings: BarkerSettings,
        privacy: BarkerPrivacy,
        init: &[f64],
        noise: N,
    ) -> Result<Self, McmcError> {
        let b = Barker::exact(prior, lik, settings, init)?;
        let n = b.lik.n_rows();
        let budget = Budget::new(
            Mechanism::Barker {
                n,
                batch: privacy.batch,
                rule: dpinfer_accountants::ConversionRule::Tightest,
            },
            privacy.epsilon,
            privacy.delta,
        )?;
        #[allow(clippy::cast_precision_loss)]
        let bound = libm::sqrt(privacy.batch as f64) / (n as f64 * b.temperature);
        let bound =
            crate::model::usable_bound(bound).ok_or(McmcError::param("per-row bound", bound))?;
        let private = Private {
            batcher: Batcher::new(n, privacy.batch),
            bound,
            vcorr: VCorr::new(BARKER_SIGMA2)?,
            n,
            batch: privacy.batch,
        };
        Ok(Barker {
            prior: b.prior,
            lik: b.lik,
            walk: b.walk,
            temperature: b.temperature,
            private: Some(private),
            noise,
            last_batch_var: 0.0,
            meter: Meter::new(Some(budget)),
        })
    }
}

impl<P, L, N> Barker<P, L, N> {
    /// Batch variance σ_b² of the last private step.
    ///
    /// # Privacy
    ///
    /// Computed from private data and **not** privatised: a diagnostic for the data owner.
    #[must_use]
    pub fn last_batch_variance(&self) -> f64 {
        self.last_batch_var
    }
}

crate::chains::walk_chain!(Barker, PrivacyNoise + Rng);

impl<P: Prior, L: RowLikelihood, N: PrivacyNoise + Rng> Barker<P, L, N> {
    /// The (DP) Barker test of the proposal (its distance is not used).
    fn accept<R: Rng + ?Sized>(&mut self, rng: &mut R, new: Proposed) -> Result<Counts, McmcError> {
        let lp_new = new.log_prior;
        let mut evaluated = 0;
        let mut clipped = 0;
        let mut noise_sd = 0.0;
        let accepted = if lp_new.is_finite() {
            match &mut self.private {
                None => {
                    let n = self.lik.n_rows();
                    let sum =
                        log_ratio_sum(&self.lik, &self.walk.theta, &self.walk.proposed, 0, n)?;
                    evaluated = n;
                    let lambda = self.temperature * sum + lp_new - self.walk.log_prior;
                    lambda + logistic(rng) > 0.0
                }
                Some(p) => {
                    let rows = p.batcher.draw(rng);
                    let batch = self.walk.clipped_rows(&self.lik, rows, p.bound)?;
                    let (s, s2, c) = (batch.sum, batch.sum_sq, batch.clipped);
                    evaluated = rows.len();
                    clipped = c;
                    #[allow(clippy::cast_precision_loss)]
                    let (bf, nf) = (p.batch as f64, p.n as f64);
                    let scale = nf * self.temperature / bf;
                    // σ_b² = (nT)²/|B| · popvar(r) ≤ 1 under the clip bound.
                    let popvar = (s2 / bf - (s / bf) * (s / bf)).max(0.0);
                    let sb2 = (nf * self.temperature) * (nf * self.temperature) / bf * popvar;
                    self.last_batch_var = sb2;
                    // N(0, 2 − σ_b²) = N(0, 1) + N(0, 1 − σ_b²) (σ_b² ≤ 1 under the bound).
                    // The N(0, 1) part goes through the grid mechanism with a σ that does not
                    // depend on the data (so the grid cannot reveal σ_b²); the data-dependent
                    // remainder is a continuous Gaussian from the same CSPRNG.
                    let range = nf * self.temperature * p.bound;
                    let (noisy, sd_eff) =
                        self.noise
                            .release(scale * s, 1.0, 2.0 * scale * p.bound, range)?;
                    self.meter.released.subsampled += 1;
                    let rest = libm::sqrt((BARKER_SIGMA2 - sd_eff * sd_eff - sb2).max(0.0));
                    let noisy = noisy + rest * self.noise.std_normal();
                    noise_sd = libm::sqrt(sd_eff * sd_eff + rest * rest);
                    let corr = p.vcorr.sample(&mut self.noise);
                    noisy + lp_new - self.walk.log_prior + corr > 0.0
                }
            }
        } else {
            false
        };
        Ok(Counts::walk(accepted, (evaluated, clipped), noise_sd))
    }
}
