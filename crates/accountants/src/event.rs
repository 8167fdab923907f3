//! The event vocabulary: what a mechanism reports to an accountant (in the spirit of
//! Google `dp_accounting`'s `DpEvent`).
//!
//! Events are plain `Copy` values. Nested events (`PoissonSampled`, `SelfComposed`, …) hold
//! *borrowed* sub-events, and `Composed` a borrowed slice, so a whole event tree can live on
//! the stack of a `no_std` device. With `alloc`, a `Vec<Event>` borrowed as a slice is the
//! owned form of `Composed`.
//!
//! ```
//! use dpinfer_accountants::Event;
//! let step = Event::Gaussian { sigma: 1.0, sensitivity: 1.0 };
//! let sampled = Event::PoissonSampled { q: 0.01, event: &step };
//! let run = Event::SelfComposed { event: &sampled, count: 10_000 };
//! let parts = [run, Event::PureEpsilon { epsilon: 0.1 }];
//! let all = Event::Composed(&parts);
//! assert_eq!(all.name(), "Composed");
//! ```

use crate::Neighbouring;
use crate::error::{AccountantError, count_in, non_negative, positive, rate};

/// Maximum nesting depth of an event tree (deeper trees give [`AccountantError::TooDeep`]).
pub const MAX_EVENT_DEPTH: usize = 32;

/// Which bound the binomial infection-curve mechanism reports.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum BinomialBound {
    /// Exact per-release bound `n·ln(1 + 1/m)` composed over the `L` releases (the ratio
    /// bound `((1+m)/m)^n` from the proof of Xiong et al. Prop. 4, before it is relaxed).
    /// Never larger than [`BinomialBound::Paper`]. The default.
    #[default]
    Exact,
    /// The stated bound of Xiong et al. Prop. 4: `ε = nL/m`.
    Paper,
}

impl BinomialBound {
    /// Both bounds.
    pub const ALL: [Self; 2] = [Self::Exact, Self::Paper];

    /// The name used by `Display`, `FromStr` and serde: `"exact"` or `"paper"`.
    ///
    /// ```
    /// use dpinfer_accountants::BinomialBound;
    /// assert_eq!("paper".parse::<BinomialBound>()?, BinomialBound::Paper);
    /// assert_eq!(BinomialBound::Exact.to_string(), "exact");
    /// assert!("loose".parse::<BinomialBound>().is_err());
    /// # Ok::<(), dpinfer_accountants::ParseNameError>(())
    /// ```
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Paper => "paper",
        }
    }
}

display_and_parse_by_name!(BinomialBound, "binomial bound", "exact, paper");

/// One privacy-relevant release, or a combination of releases.
///
/// Sensitivities are ℓ₂ (Gaussian) or ℓ₁ (Laplace) sensitivities *under the accountant's
/// neighbouring relation* ([`Neighbouring`]).
#[derive(Copy, Clone, PartialEq, Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// Gaussian mechanism `N(f(x), σ²I)` on a query with ℓ₂ sensitivity Δ (thesis Thm 4).
    Gaussian {
        /// Noise standard deviation σ > 0.
        sigma: f64,
        /// ℓ₂ sensitivity Δ ≥ 0.
        sensitivity: f64,
    },
    /// Laplace mechanism with scale b on a query with ℓ₁ sensitivity Δ: ε = Δ/b-DP and the
    /// RDP curve of Mironov 2017 Prop. 6.
    Laplace {
        /// Laplace scale b > 0.
        scale: f64,
        /// ℓ₁ sensitivity Δ ≥ 0.
        sensitivity: f64,
    },
    /// Any ε-DP mechanism.
    PureEpsilon {
        /// ε ≥ 0.
        epsilon: f64,
    },
    /// Any (ε, δ)-DP mechanism (only the approximate-DP accountant can use it).
    ApproxDp {
        /// ε ≥ 0.
        epsilon: f64,
        /// δ ∈ [0, 1].
        delta: f64,
    },
    /// Any ρ-zCDP mechanism.
    Zcdp {
        /// ρ ≥ 0.
        rho: f64,
    },
    /// Sparse vector / SVT-ABC (ABCDP, Park et al. 2021, Theorem 1): `c` accepted answers
    /// with Laplace scale `b` on queries of sensitivity Δ. Pure ε = (c+1)Δ/b without
    /// threshold resampling, 2cΔ/b with; `c = 0` (no accepted answer) costs the threshold
    /// alone, Δ/b, either way (see [`crate::curves::sparse_vector_epsilon`]).
    SparseVector {
        /// Number of above-threshold answers `c ≥ 0`.
        c: u64,
        /// Laplace scale b > 0.
        scale: f64,
        /// Sensitivity Δ ≥ 0.
        sensitivity: f64,
        /// Whether the threshold noise is resampled after each acceptance.
        resample: bool,
    },
    /// Binomial infection-curve release (Xiong et al., Proposition 4): `L` releases of
    /// `Binomial(n, (I + m)/(K + 2m))`.
    BinomialCurve {
        /// Trials per release `n ≥ 1`.
        n: u64,
        /// Pseudo-count `m > 0`.
        m: f64,
        /// Number of releases `L ≥ 1`.
        releases: u64,
        /// Which bound to report (default: exact).
        bound: BinomialBound,
    },
    /// Poisson subsampling with rate `q ∈ (0, 1]` before `event`. Add/remove relation only.
    PoissonSampled {
        /// Inclusion probability of each row.
        q: f64,
        /// The mechanism run on the sample.
        event: &'a Event<'a>,
    },
    /// Uniform sampling of `batch` rows out of `population` without replacement before
    /// `event`. Replace-one relation only.
    SampledWithoutReplacement {
        /// Sample size `1 ≤ batch ≤ population`.
        batch: u64,
        /// Dataset size.
        population: u64,
        /// The mechanism run on the sample.
        event: &'a Event<'a>,
    },
    /// A batch of `batch` draws, each uniform over the `population` rows (**with
    /// replacement**: a row may be drawn several times), before `event` (`dp_accounting`'s
    /// `SampledWithReplacementDpEvent`). **Substitution** (replace-one) relation only: the
    /// neighbours have the same number of rows and differ in one, and `event`'s sensitivity
    /// is the replace-one sensitivity of **one draw** (a row drawn `k` times moves the output
    /// by up to `k` times it). Accounted by the numerical PLD for Gaussian, Laplace and
    /// pure-ε `event`s through advanced joint convexity and group privacy (Balle, Barthe,
    /// Gaboardi 2018; see [`crate::pld_numeric`]); the other accountants refuse it.
    SampledWithReplacement {
        /// Number of draws `m ≥ 1` (may exceed the population).
        batch: u64,
        /// Dataset size `n ≥ 1`.
        population: u64,
        /// The mechanism run on the batch.
        event: &'a Event<'a>,
    },
    /// Repeat-and-select (Papernot & Steinke, "Hyperparameter tuning with Rényi differential
    /// privacy", ICLR 2022; `dp_accounting`'s `RepeatAndSelectDpEvent`): `event` is run a
    /// random number `K` of times with mean `mean` and only the best run is released (e.g.
    /// private hyperparameter tuning). `K`'s law by `shape`: `∞` Poisson, `1` geometric, `0`
    /// logarithmic, `(0, ∞)` truncated negative binomial. RDP only (their Theorems 2 and 6,
    /// [`crate::curves`]); the other accountants refuse it.
    RepeatAndSelect {
        /// The repeated mechanism.
        event: &'a Event<'a>,
        /// `E[K] ≥ 1`.
        mean: f64,
        /// The shape `η ≥ 0` of `K`'s law (`f64::INFINITY`: Poisson).
        shape: f64,
    },
    /// Random allocation ("balls in bins"; Feldman & Shenfeld 2025, arXiv 2502.08202; the
    /// sampling of shuffled-batch DP-SGD): `steps = t` Gaussian steps (noise σ, ℓ₂
    /// sensitivity Δ), each record used in exactly `selected = k` of them, chosen uniformly at
    /// random. Add/remove relation only. RDP only, an **upper bound**
    /// ([`crate::curves::random_allocation_rdp`]: the remove direction exact at integer orders
    /// ≤ 64, the add direction by the arithmetic–geometric mean inequality); `k = 1` only
    /// (`k > 1` is refused: no bound is implemented for it); epochs compose
    /// (`SelfComposed`).
    RandomAllocation {
        /// Noise standard deviation σ > 0 per step.
        sigma: f64,
        /// ℓ₂ sensitivity Δ ≥ 0 of one record in one step.
        sensitivity: f64,
        /// Number of steps `t ≥ 1`.
        steps: u64,
        /// Steps per record `1 ≤ k ≤ t`.
        selected: u64,
    },
    /// `count` adaptive repetitions of `event` (composed without looping).
    SelfComposed {
        /// The repeated event.
        event: &'a Event<'a>,
        /// Number of repetitions (0 is the empty composition).
        count: u64,
    },
    /// Adaptive composition of several events.
    Composed(&'a [Event<'a>]),
    /// Discrete Laplace noise on ℤ of scale `β` (`P(z) ∝ e^{−|z|/β}`: the exact sampler
    /// `dpinfer_mechanisms::sampling::discrete_laplace` with `β = t/s`) added to an
    /// integer-valued query of ℓ₁ sensitivity `k` **in grid units** (one coordinate).
    /// Pure ε = k/β (Canonne–Kamath–Steinke 2020, Prop. 5); the numerical PLD
    /// ([`crate::pld_numeric`]) uses its exact lattice privacy loss.
    DiscreteLaplace {
        /// Scale β > 0 in grid units.
        scale: f64,
        /// Integer sensitivity `k` in grid units (0: no cost).
        sensitivity: u64,
    },
    /// Discrete Gaussian noise `N_ℤ(0, σ²)` (the exact sampler
    /// `dpinfer_mechanisms::sampling::discrete_gaussian`) added to an integer-valued scalar
    /// query of sensitivity `k` **in grid units**. ρ = k²/(2σ²)-zCDP (Canonne–Kamath–Steinke
    /// 2020, Thm 14); the numerical PLD uses its exact lattice privacy loss.
    DiscreteGaussian {
        /// σ > 0 in grid units.
        sigma: f64,
        /// Integer sensitivity `k` in grid units (0: no cost).
        sensitivity: u64,
    },
    /// One iteration of DP-Barker (Heikkilä, Jälkö, Dikmen, Honkela 2019; Räisä 2021 thesis
    /// §3.2, Theorem 8): the Barker acceptance test on the log-likelihood ratio of a batch of
    /// `batch` rows drawn without replacement from `population`, with Gaussian noise of
    /// variance 2 minus the batch sample variance and the `V_corr` correction. Assumes every
    /// row's log-likelihood ratio is bounded by `√|B|/n` (thesis Theorem 8; clip or temper
    /// otherwise). RDP at integer orders `2 ≤ α < |B|/5`: the WBK19 amplification with
    /// `q = |B|/n` of the base bound `ε'(α)` ([`crate::calibrate::dp_barker_rdp`]); no bound
    /// (+∞) at higher orders. Replace-one relation only (substitute one row, thesis §2.1).
    DpBarker {
        /// Batch size `|B|`, `11 ≤ |B| ≤ n` (below 11 no order `2 ≤ α < |B|/5` exists).
        batch: u64,
        /// Dataset size `n`.
        population: u64,
    },
    /// k-ary randomized response (Warner 1965; `dp_accounting`'s
    /// `RandomizedResponseDpEvent`): one record's value, one of `k` buckets, is reported as
    /// is with probability `1 − p` and as a uniformly random bucket with probability `p`.
    /// Replace-one relation only (the record's value changes; `dp_accounting` refuses
    /// add/remove too). Changing `x` to `x'` gives the output laws
    /// `(1 − p + p/k, p/k, p/k, …)` and `(p/k, 1 − p + p/k, p/k, …)`, so the mechanism is
    /// exactly `ε = ln(1 + k(1 − p)/p)`-DP; its RDP is the Rényi divergence of that pair
    /// ([`crate::curves::randomized_response_rdp`]) and its numerical PLD the pair's loss
    /// `±ε` with mass `(k − 2)p/k` at loss 0. `k = 1` or `p = 1` release nothing.
    RandomizedResponse {
        /// Noise parameter `p ∈ (0, 1]`: the probability of a uniformly random report
        /// (`p = 0`, the raw value, has no finite ε and is refused).
        noise: f64,
        /// Number of buckets `k ≥ 1`.
        buckets: u64,
    },
    /// An ε-bounded-range selection (Durfee–Rogers 2019): for any neighbours the privacy
    /// loss `ln P(M(x) = y)/P(M(x') = y)` varies by at most ε over the outputs `y`. The
    /// exponential mechanism sampling `y ∝ exp(ε·u(x, y)/(2Δ))` for a utility of sensitivity
    /// Δ is one (its loss is `ε(u(x, y) − u(x', y))/(2Δ)` plus a constant), and so is
    /// report-noisy-max with Gumbel noise (the same law). ε-DP, and `ε²/8`-zCDP (Cesar–Rogers
    /// 2021: bounded range implies `ε²/8`-zCDP, by Hoeffding's lemma on the loss); RDP
    /// `min(ε, αε²/8)`. The numerical PLD uses the randomized-response pair of ε-DP (an upper
    /// bound: bounded range has no single dominating pair). Permute-and-flip and
    /// report-noisy-max with exponential noise are ε-DP but not shown bounded-range here:
    /// account them as [`Event::PureEpsilon`].
    ExponentialMechanism {
        /// ε ≥ 0 (the range of the privacy loss).
        epsilon: f64,
    },
    /// One epoch of tree aggregation (DP-FTRL; Kairouz et al. 2021, "Practical and private
    /// (deep) learning without sampling or shuffling", Appendix D; `dp_accounting`'s
    /// `SingleEpochTreeAggregationDpEvent` with one tree): the noisy sums of every complete
    /// dyadic block of `steps` leaves, Gaussian noise σ per node, each record in at most one
    /// leaf with ℓ₂ sensitivity Δ per node (under the accountant's relation). A record is in
    /// at most `d = ⌈log₂(steps + 1)⌉` released nodes, so the release is exactly the Gaussian
    /// mechanism with sensitivity `Δ·√d` ([`crate::curves::tree_aggregation_depth`]): zCDP
    /// and RDP `d·Δ²/(2σ²)` (times α), the exact Gaussian PLD. Epochs that reuse records are
    /// composed (`SelfComposed`); a tree per epoch with records in several trees is not this
    /// event.
    TreeAggregation {
        /// Noise standard deviation σ > 0 per node.
        sigma: f64,
        /// ℓ₂ sensitivity Δ ≥ 0 of one record's contribution to a node.
        sensitivity: f64,
        /// Number of leaves (steps) `T ≥ 1` of the tree.
        steps: u64,
    },
    /// The mixture-of-Gaussians mechanism (`dp_accounting`'s `MixtureOfGaussiansDpEvent`;
    /// Choquette-Choo, Ganesh, Steinke, Thakurta, "Privacy amplification for matrix
    /// mechanisms", ICLR 2024, arXiv 2310.15526): Gaussian noise σ on a query whose
    /// sensitivity to the added/removed record is random, `cᵢ` with probability `pᵢ` (e.g.
    /// `c = (0, 1), p = (1 − q, q)` is the Poisson-subsampled Gaussian; their Cor. 4.7
    /// reduces banded matrix mechanisms to it). Dominating pair `Σᵢ pᵢ N(cᵢ, σ²)` vs
    /// `N(0, σ²)`, add/remove relation only; accounted by the numerical PLD (both
    /// directions, as `dp_accounting`); no RDP, zCDP or pure bound is given here.
    MixtureOfGaussians {
        /// Noise standard deviation σ > 0.
        sigma: f64,
        /// The sensitivities `cᵢ ≥ 0` (at least one > 0, at most
        /// [`MAX_MIXTURE_ATOMS`] entries).
        sensitivities: &'a [f64],
        /// Their probabilities `pᵢ ∈ [0, 1]`, summing to 1 (within 10⁻⁹; normalised).
        probs: &'a [f64],
    },
    /// The Gaussian mechanism on a **truncated Poisson sample** (`dp_accounting`'s
    /// `TruncatedSubsampledGaussianDpEvent`; arXiv 2508.15089): each of `population` records
    /// is sampled with probability `q`, a sample of more than `batch` records is cut to a
    /// uniformly random `batch` of them (fixed-size batches for DP-SGD), and Gaussian noise σ
    /// is added to a sum of ℓ₂ sensitivity Δ. Add/remove relation only; `population` counts
    /// the neighbour that holds the record (as `dp_accounting`'s `dataset_size`). Accounted
    /// by the numerical PLD as `dp_accounting` does: the mixture, over whether the batch is
    /// truncated given that the record is sampled (probability `t = P(Bin(n − 1, q) ≥ B)`),
    /// of the Poisson-subsampled Gaussian and of a replace-one subsampled Gaussian with
    /// sensitivity 2Δ at rate `q' = P(Bin(n, q) ≥ B + 1)·B/(t·n)` (see
    /// [`crate::pld_numeric`]); no certified lower bound. No RDP, zCDP or pure bound is
    /// known for truncation that is not looser than the untruncated worst case, so those
    /// accountants refuse it ([`AccountantError::Unsupported`]).
    TruncatedSubsampledGaussian {
        /// Noise standard deviation σ > 0.
        sigma: f64,
        /// ℓ₂ sensitivity Δ ≥ 0 of one record.
        sensitivity: f64,
        /// Poisson sampling rate `q ∈ (0, 1]`.
        q: f64,
        /// The largest batch `B ≥ 1` (the truncated batch size).
        batch: u64,
        /// Dataset size `n ≥ 1` (at most 2⁵³).
        population: u64,
    },
}

/// Most entries of [`Event::MixtureOfGaussians`].
pub const MAX_MIXTURE_ATOMS: usize = 16;

/// Validates a mixture of Gaussians ([`Event::MixtureOfGaussians`]): σ > 0 finite, equal
/// non-empty lengths ≤ [`MAX_MIXTURE_ATOMS`], sensitivities finite ≥ 0 with one > 0,
/// probabilities in `[0, 1]` summing to 1 within 10⁻⁹, and `max cᵢ/σ ≤ 100` (beyond it the
/// loss range exceeds any useful grid).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] naming `sigma`, `sensitivities` or `probs`.
pub(crate) fn check_mixture(sigma: f64, c: &[f64], p: &[f64]) -> Result<(), AccountantError> {
    let bad = |name: &'static str, value: f64| AccountantError::InvalidParameter { name, value };
    positive("sigma", sigma)?;
    #[allow(clippy::cast_precision_loss)]
    if c.len() != p.len() || c.is_empty() || c.len() > MAX_MIXTURE_ATOMS {
        return Err(bad("probs", p.len() as f64));
    }
    let (mut sum, mut top) = (0.0, 0.0_f64);
    for (&ci, &pi) in c.iter().zip(p) {
        if !(ci.is_finite() && ci >= 0.0) {
            return Err(bad("sensitivities", ci));
        }
        if !(0.0..=1.0).contains(&pi) {
            return Err(bad("probs", pi));
        }
        sum += pi;
        if pi > 0.0 {
            top = top.max(ci);
        }
    }
    if (sum - 1.0).abs() > 1e-9 {
        return Err(bad("probs", sum));
    }
    if top <= 0.0 {
        return Err(bad("sensitivities", top));
    }
    if top / sigma > 100.0 {
        return Err(bad("sigma", sigma));
    }
    Ok(())
}

impl Event<'_> {
    /// A short static name of the variant (used in errors).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Gaussian { .. } => "Gaussian",
            Self::Laplace { .. } => "Laplace",
            Self::PureEpsilon { .. } => "PureEpsilon",
            Self::ApproxDp { .. } => "ApproxDp",
            Self::Zcdp { .. } => "Zcdp",
            Self::SparseVector { .. } => "SparseVector",
            Self::BinomialCurve { .. } => "BinomialCurve",
            Self::PoissonSampled { .. } => "PoissonSampled",
            Self::SampledWithoutReplacement { .. } => "SampledWithoutReplacement",
            Self::SampledWithReplacement { .. } => "SampledWithReplacement",
            Self::RepeatAndSelect { .. } => "RepeatAndSelect",
            Self::RandomAllocation { .. } => "RandomAllocation",
            Self::SelfComposed { .. } => "SelfComposed",
            Self::Composed(_) => "Composed",
            Self::DiscreteLaplace { .. } => "DiscreteLaplace",
            Self::DiscreteGaussian { .. } => "DiscreteGaussian",
            Self::DpBarker { .. } => "DpBarker",
            Self::RandomizedResponse { .. } => "RandomizedResponse",
            Self::ExponentialMechanism { .. } => "ExponentialMechanism",
            Self::TreeAggregation { .. } => "TreeAggregation",
            Self::MixtureOfGaussians { .. } => "MixtureOfGaussians",
            Self::TruncatedSubsampledGaussian { .. } => "TruncatedSubsampledGaussian",
        }
    }

    /// Checks every parameter in the tree and that the sampling schemes match `relation`.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] / [`AccountantError::InvalidCount`] for bad
    /// parameters, [`AccountantError::IncompatibleRelation`] for Poisson sampling under
    /// replace-one or sampling without replacement under add/remove,
    /// [`AccountantError::TooDeep`] beyond [`MAX_EVENT_DEPTH`].
    pub fn validate(&self, relation: Neighbouring) -> Result<(), AccountantError> {
        self.validate_at(relation, 0)
    }

    fn validate_at(&self, relation: Neighbouring, depth: usize) -> Result<(), AccountantError> {
        if depth > MAX_EVENT_DEPTH {
            return Err(AccountantError::TooDeep);
        }
        match *self {
            Self::Gaussian { sigma, sensitivity } => {
                positive("sigma", sigma)?;
                non_negative("sensitivity", sensitivity)?;
            }
            Self::Laplace { scale, sensitivity } => {
                positive("scale", scale)?;
                non_negative("sensitivity", sensitivity)?;
            }
            Self::PureEpsilon { epsilon } | Self::ExponentialMechanism { epsilon } => {
                non_negative("epsilon", epsilon)?;
            }
            Self::ApproxDp { epsilon, delta } => {
                crate::ApproxDp::new(epsilon, delta)?;
            }
            Self::Zcdp { rho } => {
                non_negative("rho", rho)?;
            }
            Self::SparseVector {
                scale, sensitivity, ..
            } => {
                positive("scale", scale)?;
                non_negative("sensitivity", sensitivity)?;
            }
            Self::BinomialCurve { n, m, releases, .. } => {
                count_in("n", n, 1..)?;
                count_in("releases", releases, 1..)?;
                positive("m", m)?;
            }
            Self::PoissonSampled { q, event } => {
                rate("q", q)?;
                only_under("PoissonSampled", Neighbouring::AddRemove, relation)?;
                event.validate_at(relation, depth + 1)?;
            }
            Self::SampledWithoutReplacement {
                batch,
                population,
                event,
            } => {
                count_in("population", population, 1..)?;
                count_in("batch", batch, 1..=population)?;
                only_under(
                    "SampledWithoutReplacement",
                    Neighbouring::ReplaceOne,
                    relation,
                )?;
                event.validate_at(relation, depth + 1)?;
            }
            Self::SampledWithReplacement {
                batch,
                population,
                event,
            } => {
                count_in("population", population, 1..=(1 << 53))?;
                count_in("batch", batch, 1..=(1 << 53))?;
                only_under("SampledWithReplacement", Neighbouring::ReplaceOne, relation)?;
                event.validate_at(relation, depth + 1)?;
            }
            Self::RepeatAndSelect { event, mean, shape } => {
                crate::curves::check_repeat_and_select(mean, shape)?;
                event.validate_at(relation, depth + 1)?;
            }
            Self::RandomAllocation {
                sigma,
                sensitivity,
                steps,
                selected,
            } => {
                positive("sigma", sigma)?;
                non_negative("sensitivity", sensitivity)?;
                count_in("steps", steps, 1..)?;
                count_in("selected", selected, 1..=steps)?;
                only_under("RandomAllocation", Neighbouring::AddRemove, relation)?;
            }
            Self::SelfComposed { event, .. } => event.validate_at(relation, depth + 1)?,
            Self::Composed(events) => {
                for e in events {
                    e.validate_at(relation, depth + 1)?;
                }
            }
            Self::DiscreteLaplace { scale, .. } => {
                positive("scale", scale)?;
            }
            Self::DiscreteGaussian { sigma, .. } => {
                positive("sigma", sigma)?;
            }
            Self::DpBarker { batch, population } => {
                check_dp_barker(batch, population)?;
                only_under("DpBarker", Neighbouring::ReplaceOne, relation)?;
            }
            Self::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            } => {
                crate::curves::tree_aggregation_mu(sigma, sensitivity, steps)?;
            }
            Self::MixtureOfGaussians {
                sigma,
                sensitivities,
                probs,
            } => {
                check_mixture(sigma, sensitivities, probs)?;
                only_under("MixtureOfGaussians", Neighbouring::AddRemove, relation)?;
            }
            Self::TruncatedSubsampledGaussian {
                sigma,
                sensitivity,
                q,
                batch,
                population,
            } => {
                check_truncated(sigma, sensitivity, q, batch, population)?;
                only_under(
                    "TruncatedSubsampledGaussian",
                    Neighbouring::AddRemove,
                    relation,
                )?;
            }
            Self::RandomizedResponse { noise, buckets } => {
                check_randomized_response(noise, buckets)?;
                only_under("RandomizedResponse", Neighbouring::ReplaceOne, relation)?;
            }
        }
        Ok(())
    }
}

/// Smallest DP-Barker batch with an admissible order (`2 ≤ α < |B|/5`, thesis Theorem 8).
pub(crate) const DP_BARKER_MIN_BATCH: u64 = 11;

/// Refuses `event`, analysed under the `only` neighbouring relation alone, under any other
/// ([`AccountantError::IncompatibleRelation`]).
fn only_under(
    event: &'static str,
    only: Neighbouring,
    relation: Neighbouring,
) -> Result<(), AccountantError> {
    if relation == only {
        Ok(())
    } else {
        Err(AccountantError::IncompatibleRelation { event, relation })
    }
}

/// The parameter checks of [`Event::DpBarker`]: `n ≥ 1` and `11 ≤ |B| ≤ n`.
pub(crate) fn check_dp_barker(batch: u64, population: u64) -> Result<(), AccountantError> {
    count_in("population", population, 1..)?;
    count_in("batch", batch, DP_BARKER_MIN_BATCH..=population)?;
    Ok(())
}

/// The parameter checks of [`Event::TruncatedSubsampledGaussian`]: σ > 0, Δ ≥ 0,
/// `q ∈ (0, 1]`, `B ≥ 1`, `1 ≤ n ≤ 2⁵³`.
pub(crate) fn check_truncated(
    sigma: f64,
    sensitivity: f64,
    q: f64,
    batch: u64,
    population: u64,
) -> Result<(), AccountantError> {
    positive("sigma", sigma)?;
    non_negative("sensitivity", sensitivity)?;
    rate("q", q)?;
    count_in("population", population, 1..=(1 << 53))?;
    count_in("batch", batch, 1..)?;
    Ok(())
}

/// The parameter checks of [`Event::RandomizedResponse`]: `p ∈ (0, 1]`, `k ≥ 1`.
pub(crate) fn check_randomized_response(noise: f64, buckets: u64) -> Result<(), AccountantError> {
    rate("noise", noise)?;
    count_in("buckets", buckets, 1..)?;
    Ok(())
}

/// The event in one line, parameters in full (shortest round-trip form), e.g.
/// `PoissonSampled(q = 0.01, Gaussian(σ = 1, Δ₂ = 1))`.
impl core::fmt::Display for Event<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::Gaussian { sigma, sensitivity } => {
                write!(f, "Gaussian(σ = {sigma}, Δ₂ = {sensitivity})")
            }
            Self::Laplace { scale, sensitivity } => {
                write!(f, "Laplace(b = {scale}, Δ₁ = {sensitivity})")
            }
            Self::PureEpsilon { epsilon } => write!(f, "PureEpsilon(ε = {epsilon})"),
            Self::ApproxDp { epsilon, delta } => write!(f, "ApproxDp(ε = {epsilon}, δ = {delta})"),
            Self::Zcdp { rho } => write!(f, "Zcdp(ρ = {rho})"),
            Self::SparseVector {
                c,
                scale,
                sensitivity,
                resample,
            } => write!(
                f,
                "SparseVector(c = {c}, b = {scale}, Δ = {sensitivity}, {})",
                if resample {
                    "threshold resampled"
                } else {
                    "threshold kept"
                }
            ),
            Self::BinomialCurve {
                n,
                m,
                releases,
                bound,
            } => write!(
                f,
                "BinomialCurve(n = {n}, m = {m}, releases = {releases}, {bound} bound)"
            ),
            Self::PoissonSampled { q, event } => write!(f, "PoissonSampled(q = {q}, {event})"),
            Self::SampledWithoutReplacement {
                batch,
                population,
                event,
            } => write!(
                f,
                "SampledWithoutReplacement({batch} of {population}, {event})"
            ),
            Self::SampledWithReplacement {
                batch,
                population,
                event,
            } => write!(
                f,
                "SampledWithReplacement({batch} draws of {population}, {event})"
            ),
            Self::RepeatAndSelect { event, mean, shape } => write!(
                f,
                "RepeatAndSelect(mean {mean}, shape {shape}, best of {event})"
            ),
            Self::RandomAllocation {
                sigma,
                sensitivity,
                steps,
                selected,
            } => write!(
                f,
                "RandomAllocation({selected} of {steps} steps, Gaussian(σ = {sigma}, Δ₂ = {sensitivity}))"
            ),
            Self::SelfComposed { event, count } => write!(f, "SelfComposed({count} × {event})"),
            Self::DiscreteLaplace { scale, sensitivity } => {
                write!(
                    f,
                    "DiscreteLaplace(β = {scale}, k = {sensitivity} grid units)"
                )
            }
            Self::DiscreteGaussian { sigma, sensitivity } => {
                write!(
                    f,
                    "DiscreteGaussian(σ = {sigma}, k = {sensitivity} grid units)"
                )
            }
            Self::DpBarker { batch, population } => {
                write!(f, "DpBarker({batch} of {population})")
            }
            Self::RandomizedResponse { noise, buckets } => {
                write!(f, "RandomizedResponse(p = {noise}, k = {buckets})")
            }
            Self::ExponentialMechanism { epsilon } => {
                write!(f, "ExponentialMechanism(ε = {epsilon}, bounded range)")
            }
            Self::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            } => write!(
                f,
                "TreeAggregation(σ = {sigma}, Δ₂ = {sensitivity}, {steps} steps)"
            ),
            Self::MixtureOfGaussians {
                sigma,
                sensitivities,
                probs,
            } => {
                write!(f, "MixtureOfGaussians(σ = {sigma}")?;
                for (c, p) in sensitivities.iter().zip(probs.iter()) {
                    write!(f, ", Δ₂ = {c} w.p. {p}")?;
                }
                f.write_str(")")
            }
            Self::TruncatedSubsampledGaussian {
                sigma,
                sensitivity,
                q,
                batch,
                population,
            } => write!(
                f,
                "TruncatedSubsampledGaussian(q = {q} of {population}, batches cut to {batch}, \
                 Gaussian(σ = {sigma}, Δ₂ = {sensitivity}))"
            ),
            Self::Composed(events) => {
                f.write_str("Composed[")?;
                for (i, e) in events.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str("]")
            }
        }
    }
}
