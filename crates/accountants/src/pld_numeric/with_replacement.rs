//! Sampling **with replacement** (`dp_accounting`'s `SampledWithReplacementDpEvent`, which
//! neither of its accountants accounts): a batch of `m` draws, each uniform over the `n`
//! records, before a base mechanism; **substitution** (replace-one) neighbours.
//!
//! # Analysis
//! The record that differs is drawn `K ~ Bin(m, 1/n)` times. Write the output law as
//! `(1 − η)M₀ + ηM₁` with `η = P(K ≥ 1) = 1 − (1 − 1/n)^m`, `M₀` the law given `K = 0` (the
//! same for both neighbours) and `M₁`, `M₁'` the laws given `K ≥ 1`. By advanced joint
//! convexity (Balle, Barthe, Gaboardi, "Privacy amplification by subsampling: tight analyses
//! via couplings and divergences", NeurIPS 2018, Thm 2), for `e^{ε'} = 1 + η(e^ε − 1)`,
//! `H_{e^{ε'}}(M‖M') ≤ η·max(H_{e^ε}(M₁‖M₀), H_{e^ε}(M₁‖M₁'))`. Given `K = k`, replacing
//! the `k` draws of the record by draws of other records (`M₁ → M₀`) or by its substitute
//! (`M₁ → M₁'`) changes `k` entries of the batch: by joint convexity both divergences are at
//! most `f(ε) = Σ_{k≥1} w_k δ_k(ε)`, `w_k = P(K = k | K ≥ 1)`, where `δ_k` is the privacy
//! profile of the base mechanism for a group of `k` substitutions (sensitivity `kΔ` for the
//! Gaussian and Laplace mechanisms, `kε` for a pure ε-DP one) — the bound of BBG 2018's
//! sampling-with-replacement theorem. `f` is the profile of the pair that reveals `k`
//! (`P_r = Σ w_k P_k⊗[k]`, `Q_r = Σ w_k Q_k⊗[k]`), and `η·f(ε)` at `ε'` is, for `ε' ≥ 0`,
//! the profile of the subsampled pair `(ηP_r + (1 − η)Q_r, Q_r)`, whose PLD is the mixture
//! over `k` ([`super::base::Pmf::mix`]) of the remove-direction PLDs of the group pairs
//! Poisson-subsampled at rate `η`. That profile is made a symmetric PLD as for sampling
//! without replacement ([`super::base::symmetrise`]). Groups beyond the largest computed
//! (their total weight bounded by a geometric tail, or a group whose loss range exceeds the
//! grid) are counted as **distinguishable** (loss `+∞`): pessimistic.

use dpinfer_math::{NeumaierSum, ln_binomial_int};

use super::base::{Pmf, discretise, symmetrise};
use super::{Direction, Mechanism};
use crate::AccountantError;

/// Largest group size computed (beyond it the remaining weight is put at `+∞`).
const MAX_GROUP: u64 = 4096;

/// The draws of one sampled-with-replacement step.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Draws {
    /// Batch size `m ≥ 1`.
    pub(crate) batch: u64,
    /// Dataset size `n ≥ 1`.
    pub(crate) population: u64,
}

impl Draws {
    /// `η = 1 − (1 − 1/n)^m`, rounded up (a larger rate dominates), in `(0, 1]`.
    pub(crate) fn eta(self) -> f64 {
        if self.population == 1 {
            return 1.0;
        }
        #[allow(clippy::cast_precision_loss)]
        let (m, n) = (self.batch as f64, self.population as f64);
        let e = -libm::expm1(m * libm::log1p(-1.0 / n));
        // expm1, log1p, the product and the quotient: a few ulp; 8 ulp up.
        (e * (1.0 + 8.0 * f64::EPSILON)).clamp(f64::MIN_POSITIVE, 1.0)
    }
}

impl Mechanism {
    /// The base pair for a group of `k` substitutions: Gaussian (`μ·k²`), Laplace and pure ε
    /// (randomized response) (`ε·k`); `None` for the others (no group pair used here) or
    /// beyond the grid's range.
    fn group(self, k: u64) -> Option<Self> {
        #[allow(clippy::cast_precision_loss)]
        let kf = k as f64;
        match self {
            Self::Gaussian { mu } => {
                let m = mu * kf * kf;
                (m <= 1e4).then_some(Self::Gaussian { mu: m })
            }
            Self::Laplace { epsilon } => {
                let e = epsilon * kf;
                (e <= 700.0).then_some(Self::Laplace { epsilon: e })
            }
            Self::RandomizedResponse { epsilon } => {
                let e = epsilon * kf;
                (e <= 700.0).then_some(Self::RandomizedResponse { epsilon: e })
            }
            _ => None,
        }
    }

    /// Whether sampling with replacement is accounted for this base pair.
    pub(crate) fn has_groups(self) -> bool {
        self.group(1).is_some()
    }
}

/// The symmetric pessimistic PLD of one sampled-with-replacement step (see the module
/// docs) on the grid `h·ℤ`.
///
/// # Errors
/// As [`discretise`], [`Pmf::mix`] and [`symmetrise`]; [`AccountantError::Unsupported`]
/// for a base pair without groups.
pub(crate) fn discretise_wr(
    mechanism: Mechanism,
    draws: Draws,
    h: f64,
    tail: f64,
) -> Result<Pmf, AccountantError> {
    let eta = draws.eta();
    let (m, n) = (draws.batch, draws.population);
    #[allow(clippy::cast_precision_loss)]
    let (mf, nf) = (m as f64, n as f64);
    let (lp, lq) = (-libm::log(nf), libm::log1p(-1.0 / nf));
    let u = f64::EPSILON;
    // P(K = k) with its relative error bound (the exponent's absolute error).
    let term = |k: u64| {
        #[allow(clippy::cast_precision_loss)]
        let kf = k as f64;
        let c = ln_binomial_int(m, k);
        let (a, b) = (kf * lp, (mf - kf) * lq);
        let rel = 8.0 * u * (c.abs() + a.abs() + b.abs() + 1.0);
        if n == 1 {
            // Every draw is the record: K = m.
            return (if k == m { 1.0 } else { 0.0 }, 0.0);
        }
        (libm::exp(c + a + b), rel)
    };
    let mut parts: alloc::vec::Vec<(Pmf, f64)> = alloc::vec::Vec::new();
    let mut worst_rel = 0.0_f64;
    let mut k = if n == 1 { m } else { 1 };
    loop {
        let (b, rel) = term(k);
        let Some(g) = mechanism.group(k) else { break };
        if b > 0.0 {
            parts.push((discretise(g, eta, Direction::Remove, h, tail)?, b / eta));
            worst_rel = worst_rel.max(rel + 4.0 * u);
        }
        if k >= m || k >= MAX_GROUP {
            break;
        }
        // The rest Σ_{j>k} P(K = j) ≤ P(K = k)·r/(1 − r), r = (m − k)/((k + 1)(n − 1)),
        // once r < 1 (the ratios fall with k).
        #[allow(clippy::cast_precision_loss)]
        let r = (mf - k as f64) / ((k as f64 + 1.0) * (nf - 1.0));
        if r < 1.0 && b * r / (1.0 - r) * (1.0 + rel) <= tail * eta {
            break;
        }
        k += 1;
    }
    if parts.is_empty() {
        return Err(AccountantError::Unsupported {
            event: "SampledWithReplacement",
            accountant: "numerical PLD (this base mechanism)",
        });
    }
    // Weights of the computed groups, each rounded down by the largest relative error bound;
    // the rest (≥ the true rest) goes to a distinguishable group: loss +∞ with
    // probability η, the remainder at the grid's lowest loss (≤ 0: it does not enter the
    // profile on ε ≥ 0 that `symmetrise` keeps).
    let shrink = 1.0 - worst_rel.min(1.0);
    let mut weights: alloc::vec::Vec<f64> = parts.iter().map(|(_, w)| w * shrink).collect();
    let used: f64 = NeumaierSum::sum_iter(weights.iter().copied());
    let rest = (1.0 - used).max(0.0);
    let lowest = parts.iter().map(|(p, _)| p.offset).min().unwrap_or(0);
    let far = Pmf {
        offset: lowest.min(0),
        probs: alloc::vec![1.0 - eta],
        inf: eta,
        slack: 0.0,
    };
    let mut refs: alloc::vec::Vec<(&Pmf, f64)> = parts
        .iter()
        .map(|(p, _)| p)
        .zip(weights.iter().copied())
        .collect();
    if rest > 0.0 {
        refs.push((&far, rest));
    }
    // Normalise the last weight so that the weights sum to 1 exactly enough for `mix`.
    let total: f64 = refs.iter().map(|(_, w)| *w).sum();
    if let Some(last) = refs.last_mut() {
        last.1 += 1.0 - total;
    }
    weights.clear();
    let mixed = Pmf::mix(&refs)?;
    let mut out = symmetrise(&mixed, h)?;
    out.slack += 4.0 * u;
    Ok(out)
}
