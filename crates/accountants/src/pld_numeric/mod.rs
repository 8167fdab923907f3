//! Numerical privacy-loss distributions (`alloc`): tight accounting of **subsampled**
//! Gaussian, Laplace and pure-ε (randomized-response) steps, as in Google's `dp_accounting`
//! `PLDAccountant` and Microsoft's `prv-accountant`.
//!
//! # Construction
//! * Each step is a *dominating pair* `(P, Q)`: Gaussian `(N(Δ, σ²), N(0, σ²))`, Laplace
//!   `(Lap(Δ, b), Lap(0, b))`, pure ε-DP `(RR_ε, RR_ε')` (randomized response, the worst case
//!   of any ε-DP mechanism, Kairouz–Oh–Viswanath 2015). Poisson subsampling at rate q gives
//!   the pairs `(qP + (1−q)Q, Q)` (**remove**) and `(Q, qP + (1−q)Q)` (**add**)
//!   (Zhu–Dong–Wang, "Optimal accounting of differential privacy via characteristic
//!   function", AISTATS 2022, Prop. 30). Under add/remove both directions are composed
//!   separately and the **worse** of the two δ(ε) (or ε(δ)) is reported; under replace-one
//!   the unsubsampled pairs are symmetric and one direction suffices. Sampling without
//!   replacement (replace-one) uses the symmetric pair of [`Component::without_replacement`].
//! * A mixture of Gaussians (`Σᵢ pᵢ N(cᵢ, σ²)` vs `N(0, σ²)`, [`Mechanism::MixtureOfGaussians`])
//!   is not symmetric: both add/remove directions are discretised by their own
//!   connect-the-dots construction (`mixture.rs`, integrals over the noise coordinate).
//! * A truncated Poisson-subsampled Gaussian ([`crate::Event::TruncatedSubsampledGaussian`]) is
//!   the mixture, branch revealed, of discretised PLDs (`Pmf::mix`, one general operation):
//!   the Poisson-subsampled Gaussian and a replace-one subsampled Gaussian of sensitivity 2Δ
//!   (`truncated.rs`, as `dp_accounting`). Sampling with replacement
//!   ([`crate::Event::SampledWithReplacement`]) mixes the group-k pairs subsampled at
//!   `η = 1 − (1 − 1/n)^m` and symmetrises the result (`with_replacement.rs`, Balle–Barthe–
//!   Gaboardi 2018).
//! * The per-step loss range is cut where at most [`TAIL_BUDGET`]`/steps` of mass lies beyond
//!   it; that mass goes to the top grid point and to `+∞` (pessimistic, counted in δ).
//! * Each pair's privacy loss is discretised on the grid `h·ℤ` with the **pessimistic
//!   connect-the-dots** construction (V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar,
//!   P. Manurangsi, "Connect the dots: tighter discrete approximations of privacy loss
//!   distributions", PoPETs 2022, Algorithm 1): its δ-curve equals the exact one at the grid
//!   points and interpolates linearly in `e^ε` between them, so it dominates the exact curve
//!   (δ is convex in `e^ε`) and composition keeps the domination. The masses are formed from
//!   `Q`-integrals evaluated by Gauss–Legendre quadrature or closed forms, never from second
//!   differences of δ (no cancellation; relative error ~10⁻¹⁴).
//! * Composition: one real FFT per distinct step, per-bin powers by **repeated squaring**
//!   (self-composition in `O(log n)` products), heterogeneous steps multiplied bin-wise. The
//!   window is chosen by Chernoff bounds so that at most `truncation` (default 10⁻¹⁵) of mass
//!   falls outside; that mass is **added to δ**. FFT round-off is bounded (Higham 2002,
//!   Thm 24.2; the dominant low-frequency bins are recomputed by a direct compensated DFT) and
//!   also added to δ. When at most `N/64` bins survive the powering (many steps), δ(ε) is
//!   evaluated from them in closed form (two geometric series per bin); otherwise one inverse
//!   FFT gives the composed masses.
//! * Where those absolute allowances are a visible part of δ (> δ/1000: tiny δ after many
//!   steps), Gaussian and Laplace steps are composed again **exponentially tilted** (`tilt.rs`):
//!   the FFT error then enters δ multiplied by the Chernoff factor `M^n e^{−λk}`, of the order
//!   of δ, instead of 1; the smaller upper bound is reported.
//! * With `bounds`, [`ComposedPld::new`] also reports a certified lower bound, giving an
//!   interval `[lower, upper]` for ε (as prv-accountant reports), from the same composition:
//!   the connect-the-dots PLD is a randomized rounding of each step's loss, whose summed
//!   error is at most `h·√(N·ln(10¹⁵)/2) + N·h²/4` except with probability 10⁻¹⁵
//!   (Hoeffding), so the exact ε is at least the computed one (at a δ raised by that
//!   probability) minus that shift — `O(h√N)` wide, e.g. 0.04 for 10⁴ steps at h = 10⁻⁴.
//!
//! # Privacy
//! Upper bounds (never below the exact value, up to the documented allowances, which are
//! all *added* to δ) for the neighbouring relation of the accountant: add/remove for Poisson
//! subsampling, replace-one for sampling without replacement; sensitivities must be given
//! for that relation.
//!
//! The FFT is [`dpinfer_math::rfft`] (radix-2, `libm` twiddles): the same bits on every target.

mod base;
mod calibrate;
mod compose;
mod discrete;
mod mixture;
mod tilt;
mod truncated;
mod with_replacement;

pub use calibrate::{poisson_gaussian_max_steps, poisson_gaussian_sigma};
pub use mixture::MixtureAtoms;

use alloc::vec::Vec;

use dpinfer_math::NeumaierSum;

use crate::curves::{count_up, event_pure, gaussian_mu};
use crate::error::{count_in, non_negative, positive, rate};
use crate::event::MAX_EVENT_DEPTH;
use crate::{AccountantError, Event, Neighbouring, round_up};

/// Bisection of `[lo, hi]` for the threshold of a predicate true below it and false above
/// it (`above(lo)` true, `above(hi)` false): at most 200 halvings, until `hi − lo ≤ 10⁻¹²·hi`.
/// Returns the final `(lo, hi)`: `lo` still satisfies the predicate, `hi` does not.
fn bisect(mut lo: f64, mut hi: f64, above: impl Fn(f64) -> bool) -> (f64, f64) {
    for _ in 0..200 {
        if hi - lo <= 1e-12 * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if above(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi)
}

pub use compose_api::*;

/// Default discretisation interval `h` of the loss grid (as `dp_accounting`'s
/// `PLDAccountant`).
pub const DEFAULT_INTERVAL: f64 = 1e-4;
/// Default bound on the composition's mass outside the FFT window (added to δ).
pub const DEFAULT_TRUNCATION: f64 = 1e-15;
/// Total mass (over all steps) beyond the per-step loss grids, moved to the grids' top point
/// and to `+∞` (so at most this much is added to δ, inside the reported infinity mass).
pub const TAIL_BUDGET: f64 = 1e-12;

/// The direction of a dominating pair under add/remove neighbours.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `(qP + (1−q)Q, Q)`: the neighbour without the record is the reference.
    Remove,
    /// `(Q, qP + (1−q)Q)`: the neighbour with the record is the reference.
    Add,
}

/// A base mechanism, as the dominating pair of its privacy loss (symmetric but for the
/// mixture of Gaussians).
// The mixture's points are stored inline (≤ 16) so that `Mechanism` and `Component` stay
// `Copy`; a `ComponentCounts` holds one entry per distinct step, so the size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Copy, Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Mechanism {
    /// Gaussian with PLD mean `μ = Δ²/(2σ²) > 0` (loss `N(±μ, 2μ)`).
    Gaussian {
        /// `Δ²/(2σ²)`.
        mu: f64,
    },
    /// Laplace with `ε = Δ/b > 0` (loss on `[−ε, ε]` with atoms at the ends).
    Laplace {
        /// `Δ/b`.
        epsilon: f64,
    },
    /// Randomized response, the dominating pair of any pure ε-DP mechanism (loss `±ε`).
    RandomizedResponse {
        /// ε > 0.
        epsilon: f64,
    },
    /// k-ary randomized response ([`crate::Event::RandomizedResponse`]): loss `±ε` with
    /// `Q`-masses `(1 − r)/(1 + e^{±ε})` and loss 0 with mass `r` (the outputs other than
    /// the two values compared, `r = (k − 2)p/k`). `r = 0` is
    /// [`Mechanism::RandomizedResponse`]. A larger `ε` or a smaller `r` is a dominating pair
    /// (the other is its post-processing), so both are rounded that way.
    KaryRandomizedResponse {
        /// ε > 0, `ln(1 + k(1 − p)/p)`.
        epsilon: f64,
        /// `r ∈ [0, 1)`, the mass of loss 0.
        neutral: f64,
    },
    /// Discrete Laplace on ℤ of scale `β` (`Q(z) ∝ e^{−|z|/β}`, the sampler
    /// `dpinfer_mechanisms::sampling::discrete_laplace` with `β = t/s`), shifted by the
    /// integer sensitivity `k` (grid units): the pair `(DLap(k, β), DLap(0, β))`
    /// (Canonne–Kamath–Steinke 2020, Alg. 2). Loss on `[−k/β, k/β]`, lattice step `2/β`.
    DiscreteLaplace {
        /// `β > 0` (grid units).
        scale: f64,
        /// `k ≥ 1` (grid units, ≤ 2⁵²).
        shift: u64,
    },
    /// Discrete Gaussian `N_ℤ(0, σ²)` (`Q(z) ∝ e^{−z²/2σ²}`, the sampler
    /// `dpinfer_mechanisms::sampling::discrete_gaussian`), shifted by the integer
    /// sensitivity `k`: the pair `(N_ℤ(k, σ²), N_ℤ(0, σ²))` (CKS 2020, Alg. 3, Thm 4).
    /// Loss `(2z − k)k/(2σ²)`; lattice sums by enumeration of the ≈ `24.4σ + k` points (at
    /// most 2²⁵) or, on the samplers' fine lattices (σ ≥ 2.5·10⁵, `k/σ² ≤ 2·10⁻⁶`), by
    /// Euler–Maclaurin with a negligible remainder.
    DiscreteGaussian {
        /// `σ > 0` (grid units).
        sigma: f64,
        /// `k ≥ 1` (grid units).
        shift: u64,
    },
    /// Mixture of Gaussians ([`crate::Event::MixtureOfGaussians`]): `Σᵢ pᵢ N(cᵢ, σ²)`
    /// against `N(0, σ²)` (add/remove; not symmetric: both directions are discretised,
    /// neither subsampled nor sampled without replacement).
    MixtureOfGaussians(MixtureAtoms),
}

/// One step: a base [`Mechanism`] Poisson-subsampled at rate `q` (`q = 1`: no subsampling),
/// or sampled without replacement with ratio `q = batch/population`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Component {
    mechanism: Mechanism,
    q: f64,
    without_replacement: bool,
    truncation: Option<truncated::Truncation>,
    draws: Option<with_replacement::Draws>,
}

impl Component {
    /// A step. `q = 1` is the plain mechanism.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for `q ∉ (0, 1]` or a non-positive/non-finite
    /// mechanism parameter.
    pub fn new(mechanism: Mechanism, q: f64) -> Result<Self, AccountantError> {
        rate("q", q)?;
        match mechanism {
            Mechanism::Gaussian { mu } => {
                positive("mu", mu)?;
                // Beyond μ = 10⁴ the loss range exceeds the grid at any useful interval.
                if mu > 1e4 {
                    return Err(AccountantError::InvalidParameter {
                        name: "mu",
                        value: mu,
                    });
                }
            }
            Mechanism::Laplace { epsilon } | Mechanism::RandomizedResponse { epsilon } => {
                positive("epsilon", epsilon)?;
                if epsilon > 700.0 {
                    return Err(AccountantError::InvalidParameter {
                        name: "epsilon",
                        value: epsilon,
                    });
                }
            }
            Mechanism::KaryRandomizedResponse { epsilon, neutral } => {
                positive("epsilon", epsilon)?;
                if epsilon > 700.0 {
                    return Err(AccountantError::InvalidParameter {
                        name: "epsilon",
                        value: epsilon,
                    });
                }
                if !(0.0..1.0).contains(&neutral) {
                    return Err(AccountantError::InvalidParameter {
                        name: "neutral",
                        value: neutral,
                    });
                }
            }
            Mechanism::DiscreteLaplace { scale, shift } => {
                let b = positive("scale", scale)?;
                count_in("shift", shift, 1..=(1 << 52))?;
                #[allow(clippy::cast_precision_loss)]
                let e = shift as f64 / b;
                if b > 4.5e15 || e > 700.0 {
                    return Err(AccountantError::InvalidParameter {
                        name: "scale",
                        value: scale,
                    });
                }
            }
            Mechanism::MixtureOfGaussians(_) => {
                if q < 1.0 {
                    return Err(AccountantError::Unsupported {
                        event: "MixtureOfGaussians",
                        accountant: "numerical PLD (subsampled)",
                    });
                }
            }
            Mechanism::DiscreteGaussian { sigma, shift } => {
                let s = positive("sigma", sigma)?;
                count_in("shift", shift, 1..=(1 << 52))?;
                #[allow(clippy::cast_precision_loss)]
                let r = shift as f64 / s;
                if 0.5 * r * r > 1e4 || discrete::DGauss::atoms(s, shift) > discrete::MAX_ATOMS {
                    return Err(AccountantError::InvalidParameter {
                        name: "sigma",
                        value: sigma,
                    });
                }
            }
        }
        Ok(Self {
            mechanism,
            q,
            without_replacement: false,
            truncation: None,
            draws: None,
        })
    }
    /// A step run on a batch of `batch` draws **with replacement** from `population` rows
    /// (replace-one neighbours; [`crate::Event::SampledWithReplacement`]): the symmetric PLD
    /// of the module `with_replacement` (BBG 2018 advanced joint convexity and group
    /// privacy), for Gaussian, Laplace and pure-ε base pairs.
    ///
    /// # Errors
    /// As [`Component::new`]; [`AccountantError::InvalidCount`] unless `1 ≤ batch ≤ 2⁵³`
    /// and `1 ≤ population ≤ 2⁵³`; [`AccountantError::Unsupported`] for other base pairs.
    pub fn with_replacement(
        mechanism: Mechanism,
        batch: u64,
        population: u64,
    ) -> Result<Self, AccountantError> {
        count_in("population", population, 1..=truncated::MAX_POPULATION)?;
        count_in("batch", batch, 1..=truncated::MAX_POPULATION)?;
        if !mechanism.has_groups() {
            return Err(AccountantError::Unsupported {
                event: "SampledWithReplacement",
                accountant: "numerical PLD (this base mechanism)",
            });
        }
        let draws = with_replacement::Draws { batch, population };
        let mut c = Self::new(mechanism, draws.eta())?;
        c.draws = Some(draws);
        Ok(c)
    }
    /// A truncated Poisson-subsampled Gaussian step ([`crate::Event::TruncatedSubsampledGaussian`]):
    /// PLD mean `mu = Δ²/(2σ²)`, rate `q`, `population` records, batches cut to `batch`
    /// (add/remove relation). When truncation is impossible (`batch ≥ population`) this is
    /// the plain Poisson-subsampled Gaussian.
    ///
    /// # Errors
    /// As [`Component::new`]; [`AccountantError::InvalidCount`] unless
    /// `1 ≤ batch` and `1 ≤ population ≤ 2⁵³`; [`AccountantError::NumericalFailure`] if a
    /// binomial tail is too long to sum.
    pub fn truncated_gaussian(
        mu: f64,
        q: f64,
        population: u64,
        batch: u64,
    ) -> Result<Self, AccountantError> {
        count_in("population", population, 1..=truncated::MAX_POPULATION)?;
        count_in("batch", batch, 1..)?;
        let mut c = Self::new(Mechanism::Gaussian { mu }, q)?;
        c.truncation = truncated::Truncation::new(population, q, batch)?;
        Ok(c)
    }
    /// Whether the step's batches are truncated (with a positive probability).
    #[must_use]
    pub fn is_truncated(&self) -> bool {
        self.truncation.is_some()
    }
    /// A step run on a sample of `batch` out of `population` rows drawn **without
    /// replacement** (replace-one neighbours), ratio `γ = batch/population` (rounded up).
    ///
    /// # Privacy
    /// Replace-one relation; the base mechanism's parameters must use the replace-one
    /// sensitivity. The PLD is the symmetric pair whose privacy profile for ε ≥ 0 is that of
    /// `(γP + (1−γ)Q, Q)`: by advanced joint convexity (Balle–Barthe–Gaboardi 2018, Thm 2)
    /// the mechanism's δ(ε) in either order is at most `γ·δ_{P‖Q}(ε')` with
    /// `e^{ε} = 1 + γ(e^{ε'} − 1)`, which is that profile; the symmetric extension to ε < 0
    /// (`δ(ε) = 1 − e^ε + e^ε δ(−ε)`) then dominates the mechanism for every ε.
    ///
    /// # Errors
    /// As [`Component::new`], and [`AccountantError::InvalidCount`] unless
    /// `1 ≤ batch ≤ population`.
    pub fn without_replacement(
        mechanism: Mechanism,
        batch: u64,
        population: u64,
    ) -> Result<Self, AccountantError> {
        count_in("batch", batch, 1..=population)?;
        let g = count_up(batch) / count_up(population);
        let g = if g * count_up(population) < count_up(batch) {
            g.next_up()
        } else {
            g
        };
        let mut c = Self::new(mechanism, g.min(1.0))?;
        c.without_replacement = c.q < 1.0;
        Ok(c)
    }
    /// Whether the sample is drawn without replacement (else Poisson).
    #[must_use]
    pub fn is_without_replacement(&self) -> bool {
        self.without_replacement
    }
    /// The base mechanism.
    #[must_use]
    pub fn mechanism(&self) -> Mechanism {
        self.mechanism
    }
    /// The Poisson sampling rate.
    #[must_use]
    pub fn q(&self) -> f64 {
        self.q
    }
}

/// Grid interval and truncation bound.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Discretisation {
    interval: f64,
    truncation: f64,
}

impl Default for Discretisation {
    fn default() -> Self {
        Self {
            interval: DEFAULT_INTERVAL,
            truncation: DEFAULT_TRUNCATION,
        }
    }
}

impl Discretisation {
    /// Interval `h ∈ [10⁻⁷, 1]` and truncation mass `∈ [10⁻³⁰⁰, 10⁻³]`.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] outside those ranges.
    pub fn new(interval: f64, truncation: f64) -> Result<Self, AccountantError> {
        if !(1e-7..=1.0).contains(&interval) {
            return Err(AccountantError::InvalidParameter {
                name: "interval",
                value: interval,
            });
        }
        if !(1e-300..=1e-3).contains(&truncation) {
            return Err(AccountantError::InvalidParameter {
                name: "truncation",
                value: truncation,
            });
        }
        Ok(Self {
            interval,
            truncation,
        })
    }
    /// The grid interval `h`.
    #[must_use]
    pub fn interval(&self) -> f64 {
        self.interval
    }
    /// The truncation bound.
    #[must_use]
    pub fn truncation(&self) -> f64 {
        self.truncation
    }
}

/// The events an accountant has composed that need a numerical PLD: distinct
/// [`Component`]s with their counts (identical steps are merged, so 10⁶ DP-SGD steps are one
/// entry). Plain Gaussians are kept apart as one exact PLD mean μ.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComponentCounts {
    parts: Vec<(Component, u64)>,
}

/// The former name of [`ComponentCounts`] (it clashed with the release ledger,
/// `dpinfer_ledger::Ledger`).
#[deprecated(note = "renamed to `ComponentCounts`")]
pub type Ledger = ComponentCounts;

impl ComponentCounts {
    /// No components.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
    /// No numerical component recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
    /// The recorded components and counts.
    #[must_use]
    pub fn parts(&self) -> &[(Component, u64)] {
        &self.parts
    }
    /// Records `count` repetitions of `c` (merged with an equal component).
    ///
    /// # Errors
    /// [`AccountantError::InvalidCount`] if a count overflows `u64`.
    pub fn push(&mut self, c: Component, count: u64) -> Result<(), AccountantError> {
        if count == 0 {
            return Ok(());
        }
        if let Some(e) = self.parts.iter_mut().find(|(x, _)| *x == c) {
            e.1 =
                e.1.checked_add(count)
                    .ok_or(AccountantError::InvalidCount {
                        name: "count",
                        value: count,
                    })?;
        } else {
            self.parts.push((c, count));
        }
        Ok(())
    }
    /// Records `count` repetitions of the component `make` builds from the leaf mechanism of
    /// `ev` ([`leaf`]); a leaf without privacy loss records nothing.
    fn push_leaf(
        &mut self,
        ev: &Event<'_>,
        relation: Neighbouring,
        depth: usize,
        count: u64,
        make: impl FnOnce(Mechanism) -> Result<Component, AccountantError>,
    ) -> Result<(), AccountantError> {
        match leaf(ev, relation, depth)? {
            None => Ok(()),
            Some(mech) => self.push(make(mech)?, count),
        }
    }
    /// Splits `count` repetitions of `event` into an exact Gaussian PLD mean (plain Gaussian
    /// leaves, μ adds) and numerical components, without recording anything; the event must
    /// already be validated for `relation`.
    ///
    /// # Errors
    /// [`AccountantError::Unsupported`] for events this PLD cannot express (sampling without
    /// zCDP, approximate DP with δ > 0, subsampled compositions or Gaussians), overflowing
    /// counts, parameter errors.
    pub fn split(
        event: &Event<'_>,
        relation: Neighbouring,
        count: u64,
    ) -> Result<(f64, ComponentCounts), AccountantError> {
        let mut mu = NeumaierSum::new();
        let mut out = ComponentCounts::new();
        collect(event, relation, count, 0, &mut mu, &mut out)?;
        let m = mu.sum();
        if !m.is_finite() {
            return Err(AccountantError::NumericalFailure {
                what: "composition overflow",
            });
        }
        Ok((round_up(m), out))
    }
    /// Appends every component of `other`.
    ///
    /// # Errors
    /// As [`ComponentCounts::push`]; on error `self` is unchanged.
    pub fn merge(&mut self, other: &ComponentCounts) -> Result<(), AccountantError> {
        let mut next = self.clone();
        for &(c, n) in &other.parts {
            next.push(c, n)?;
        }
        *self = next;
        Ok(())
    }
}

fn unsupported(ev: &Event<'_>) -> AccountantError {
    AccountantError::Unsupported {
        event: ev.name(),
        accountant: "numerical PLD",
    }
}

/// The base mechanism of a leaf event (or `None` if it is a no-op, e.g. Δ = 0).
fn leaf(
    ev: &Event<'_>,
    relation: Neighbouring,
    depth: usize,
) -> Result<Option<Mechanism>, AccountantError> {
    match *ev {
        Event::Gaussian { sigma, sensitivity } => {
            let mu = gaussian_mu(sigma, sensitivity)?;
            Ok((mu > 0.0).then_some(Mechanism::Gaussian { mu }))
        }
        Event::Laplace { scale, sensitivity } => {
            let b = positive("scale", scale)?;
            let d = non_negative("sensitivity", sensitivity)?;
            let e = round_up(d / b);
            Ok((e > 0.0).then_some(Mechanism::Laplace { epsilon: e }))
        }
        Event::DiscreteLaplace { scale, sensitivity } => {
            positive("scale", scale)?;
            Ok((sensitivity > 0).then_some(Mechanism::DiscreteLaplace {
                scale,
                shift: sensitivity,
            }))
        }
        Event::DiscreteGaussian { sigma, sensitivity } => {
            positive("sigma", sigma)?;
            Ok((sensitivity > 0).then_some(Mechanism::DiscreteGaussian {
                sigma,
                shift: sensitivity,
            }))
        }
        Event::RandomizedResponse { noise, buckets } => {
            let e = crate::curves::randomized_response_epsilon(noise, buckets)?;
            // (k − 2)p/k rounded down (at most 4 roundings of 2⁻⁵³ each).
            let neutral = (count_up(buckets.saturating_sub(2)) * noise / count_up(buckets)
                * (1.0 - 8.0 * f64::EPSILON))
                .max(0.0);
            Ok((e > 0.0).then_some(Mechanism::KaryRandomizedResponse {
                epsilon: e,
                neutral,
            }))
        }
        Event::MixtureOfGaussians {
            sigma,
            sensitivities,
            probs,
        } => Ok(Some(Mechanism::MixtureOfGaussians(MixtureAtoms::new(
            sigma,
            sensitivities,
            probs,
        )?))),
        Event::PureEpsilon { .. }
        | Event::ExponentialMechanism { .. }
        | Event::SparseVector { .. }
        | Event::BinomialCurve { .. }
        | Event::ApproxDp { delta: 0.0, .. } => {
            let e = event_pure(ev, relation, depth)?;
            Ok((e > 0.0).then_some(Mechanism::RandomizedResponse { epsilon: e }))
        }
        _ => Err(unsupported(ev)),
    }
}

fn collect(
    ev: &Event<'_>,
    relation: Neighbouring,
    count: u64,
    depth: usize,
    mu: &mut NeumaierSum,
    out: &mut ComponentCounts,
) -> Result<(), AccountantError> {
    if depth > MAX_EVENT_DEPTH {
        return Err(AccountantError::TooDeep);
    }
    if count == 0 {
        return Ok(());
    }
    match *ev {
        Event::Gaussian { sigma, sensitivity } => {
            let m = gaussian_mu(sigma, sensitivity)?;
            mu.add(round_up(count_up(count) * m));
            Ok(())
        }
        Event::TreeAggregation {
            sigma,
            sensitivity,
            steps,
        } => {
            let m = crate::curves::tree_aggregation_mu(sigma, sensitivity, steps)?;
            mu.add(round_up(count_up(count) * m));
            Ok(())
        }
        Event::TruncatedSubsampledGaussian {
            sigma,
            sensitivity,
            q,
            batch,
            population,
        } => {
            let m = gaussian_mu(sigma, sensitivity)?;
            if m > 0.0 {
                out.push(
                    Component::truncated_gaussian(m, q, population, batch)?,
                    count,
                )?;
            }
            Ok(())
        }
        Event::PoissonSampled { q, event } => {
            rate("q", q)?;
            match leaf(event, relation, depth + 1)? {
                None => Ok(()),
                Some(Mechanism::Gaussian { mu: m }) if q >= 1.0 => {
                    mu.add(round_up(count_up(count) * m));
                    Ok(())
                }
                Some(mech) => out.push(Component::new(mech, q)?, count),
            }
        }
        Event::SelfComposed { event, count: c } => {
            let total = count.checked_mul(c).ok_or(AccountantError::InvalidCount {
                name: "count",
                value: c,
            })?;
            collect(event, relation, total, depth + 1, mu, out)
        }
        Event::Composed(events) => {
            for e in events {
                collect(e, relation, count, depth + 1, mu, out)?;
            }
            Ok(())
        }
        Event::SampledWithReplacement {
            batch,
            population,
            event,
        } => out.push_leaf(event, relation, depth + 1, count, |mech| {
            Component::with_replacement(mech, batch, population)
        }),
        Event::SampledWithoutReplacement {
            batch,
            population,
            event,
        } => out.push_leaf(event, relation, depth + 1, count, |mech| {
            Component::without_replacement(mech, batch, population)
        }),
        _ => out.push_leaf(ev, relation, depth, count, |mech| Component::new(mech, 1.0)),
    }
}

mod compose_api {
    use alloc::vec::Vec;

    use super::base::{
        GRID_TOO_WIDE, Pmf, discretise, discretise_wor, mirror, mirror_deficit_upper,
    };
    use super::compose::{Composed, U, WINDOW_TOO_WIDE, Workspace, compose};
    use super::tilt::{TiltPart, Tilted, order_for_delta, order_for_index};
    use super::{Component, Direction, Discretisation, Mechanism, bisect};
    use crate::error::{non_negative, open_unit};
    use crate::{AccountantError, Neighbouring, round_up};

    /// A (ε, δ) guarantee from a numerical PLD with its error budget.
    #[derive(Copy, Clone, Debug, PartialEq)]
    pub struct PldReport {
        /// ε (an upper bound, rounded up).
        pub epsilon: f64,
        /// δ (an upper bound, rounded up).
        pub delta: f64,
        /// The grid interval `h` of the loss discretisation.
        pub interval: f64,
        /// Mass outside the FFT window, added to δ (0 if nothing was truncated).
        pub truncation_mass: f64,
        /// FFT and quadrature round-off allowance, added to δ.
        pub roundoff: f64,
        /// Mass of the loss `+∞` (from the discretisation's upper end), part of δ.
        pub infinity_mass: f64,
        /// Certified lower bound of the reported quantity (ε for `epsilon`, δ for `delta`),
        /// when bounds were requested (see [`ComposedPld::new`]).
        pub lower: Option<f64>,
        /// The direction that attained the reported value.
        pub direction: Direction,
    }

    /// The composition of a [`super::ComponentCounts`] (plus an exact Gaussian PLD mean) as discrete
    /// PLDs, one per direction, ready for any number of δ(ε) / ε(δ) queries.
    #[derive(Clone, Debug)]
    pub struct ComposedPld {
        h: f64,
        dirs: Vec<(Direction, Composed)>,
        lower: Option<LowerBound>,
        /// Per direction, the steps for a tilted composition (`tilt.rs`) when every step's
        /// discretisation bounds its masses relatively (Gaussian, Laplace).
        tilt: Option<Vec<Vec<TiltPart>>>,
        /// The truncation bound of the compositions.
        truncation: f64,
    }

    /// The tilted composition is tried when the plain one's allowances exceed this fraction
    /// of the requested δ (or leave nothing of it).
    const TILT_TRIGGER: f64 = 1e-3;

    /// The certified lower bound's loss shift `s` and probability penalty (see
    /// [`ComposedPld::new`]).
    #[derive(Copy, Clone, Debug)]
    struct LowerBound {
        shift: f64,
        penalty: f64,
    }

    /// Failure probability of the Hoeffding bound on the summed rounding errors.
    const LOWER_ETA: f64 = 1e-15;

    impl LowerBound {
        /// `N` steps on the grid `h` whose losses outside the per-step ranges have total
        /// probability ≤ `2·tail_total`: `s = min(N·h, h·√(N·ln(1/η)/2) + N·h²/4)`,
        /// penalty `η + 2·tail_total`.
        fn new(steps: f64, h: f64, tail_total: f64) -> Self {
            let det = steps * h;
            let hoeffding =
                h * libm::sqrt(steps * libm::log(1.0 / LOWER_ETA) / 2.0) + steps * h * h / 4.0;
            Self {
                shift: round_up(det.min(hoeffding)),
                penalty: round_up(LOWER_ETA + 2.0 * tail_total),
            }
        }
    }

    fn direction_set(relation: Neighbouring, parts: &[(Component, u64)]) -> &'static [Direction] {
        // Without subsampling every pair here but the mixture is symmetric: add = remove.
        if relation == Neighbouring::AddRemove
            && parts.iter().any(|(c, _)| {
                (c.q < 1.0 && !c.without_replacement && c.draws.is_none())
                    || matches!(c.mechanism, Mechanism::MixtureOfGaussians(_))
            })
        {
            &[Direction::Remove, Direction::Add]
        } else {
            &[Direction::Remove]
        }
    }

    /// Coarsest interval the automatic grid choice goes to (beyond it the grid error is
    /// reported).
    const MAX_INTERVAL: f64 = 1e3;

    /// The discretised and composed PLD of each direction on the grid `h·ℤ`.
    fn compose_directions(
        all: &[(Component, u64)],
        relation: Neighbouring,
        h: f64,
        tail: f64,
        truncation: f64,
        ws: &mut Workspace,
        tiltable: bool,
    ) -> Result<DirectionsOut, AccountantError> {
        let mut dirs = Vec::new();
        let mut tilts = Vec::new();
        let mut removes: Vec<Pmf> = Vec::new();
        // The symmetric replace-one branch of truncated steps, discretised once.
        let mut swapped: Vec<Option<Pmf>> = alloc::vec![None; all.len()];
        for &d in direction_set(relation, all) {
            let mut pess: Vec<Pmf> = Vec::with_capacity(all.len());
            let mut cur_tilt: Vec<TiltPart> = Vec::new();
            for (i, (c, _)) in all.iter().enumerate() {
                // The add direction of a symmetric base pair is the mirror of the remove one
                // (`base::mirror`), when its weights stay ≤ 2.
                let mirrored = match (d, c.mechanism) {
                    (Direction::Add, Mechanism::MixtureOfGaussians(_)) => None,
                    (Direction::Add, _) if !c.without_replacement && c.draws.is_none() => {
                        removes.get(i).and_then(|r| mirror(r, h))
                    }
                    _ => None,
                };
                let was_mirrored = mirrored.is_some();
                pess.push(match (mirrored, c.truncation, c.mechanism) {
                    (Some(m), _, _) => m,
                    (None, _, _) if c.draws.is_some() => match c.draws {
                        Some(dr) => {
                            super::with_replacement::discretise_wr(c.mechanism, dr, h, tail)?
                        }
                        None => discretise(c.mechanism, c.q, d, h, tail)?,
                    },
                    (None, _, _) if c.without_replacement => {
                        discretise_wor(c.mechanism, c.q, h, tail)?
                    }
                    (None, Some(tr), Mechanism::Gaussian { mu }) => {
                        super::truncated::discretise(mu, c.q, tr, d, h, tail, &mut swapped[i])?
                    }
                    (None, _, _) => discretise(c.mechanism, c.q, d, h, tail)?,
                });
                if tiltable && let Some(p) = pess.last() {
                    // A mirror's masses are e^{−ℓ}·(remove masses): its slack covers the
                    // remove slack, plus the loss's rounding (|ℓ|·u).
                    #[allow(clippy::cast_precision_loss)]
                    let far = (p.offset.unsigned_abs() as f64)
                        .max((p.offset + p.probs.len() as i64).unsigned_abs() as f64)
                        * h;
                    // A mirrored step's mass at +∞ (`mirror_deficit_upper`) is computed when
                    // a tilted composition is asked for (`ComposedPld::tilt_parts`).
                    let (rel, inf) = if was_mirrored {
                        (p.slack + far * U, 1.0)
                    } else {
                        (p.slack, p.inf * (1.0 + p.slack))
                    };
                    cur_tilt.push(TiltPart {
                        pmf: p.clone(),
                        count: all[i].1,
                        rel,
                        inf,
                        mirrored: was_mirrored,
                    });
                }
            }
            if all.is_empty() {
                pess.push(Pmf {
                    offset: 0,
                    probs: alloc::vec![1.0],
                    inf: 0.0,
                    slack: 0.0,
                });
            }
            let counts = all.iter().map(|(_, n)| *n).chain(core::iter::repeat(1));
            let refs: Vec<(&Pmf, u64)> = pess.iter().zip(counts).collect();
            dirs.push((d, compose(&refs, h, truncation, ws)?));
            tilts.push(cur_tilt);
            if d == Direction::Remove {
                removes = pess;
            }
        }
        Ok((dirs, tilts))
    }

    /// The composed directions and, per direction, the steps for a tilted composition
    /// (empty unless asked for).
    type DirectionsOut = (Vec<(Direction, Composed)>, Vec<Vec<TiltPart>>);

    impl ComposedPld {
        /// Discretises and composes `parts` (each `count` times) and one Gaussian of PLD mean
        /// `gaussian_mu` (0 for none). With `bounds`, the reports also carry a certified
        /// lower bound (no extra composition).
        ///
        /// # Lower bound
        /// The connect-the-dots PLD of one step is a randomized rounding of its loss `L` to
        /// the two neighbouring grid points that keeps `E[e^{−L}]` (Doroshenko et al. 2022):
        /// the rounding error `e` has range `h` and `0 ≤ E[e | L] ≤ h²/8 + O(h³)` (≤ h²/4
        /// is used). Composed over `N` steps, `L̃ = L + Σe` and, by Hoeffding's inequality
        /// for the conditionally independent errors, `Σe ≤ s = h√(N ln(1/η)/2) + N h²/4`
        /// except with probability
        /// `η = 10⁻¹⁵` (and always `Σe < N h`). Losses outside the per-step grid ranges
        /// (probability ≤ `2·TAIL_BUDGET`) are the only other exception. Hence the exact
        /// `δ(ε) ≥ δ̃(ε + s) − η − 2·TAIL_BUDGET` (the computed δ̃ less its round-off and
        /// truncation allowances), and `ε(δ) ≥ ε̃(δ + penalty) − s`: the same idea as
        /// prv-accountant's error bounds (Gopi, Lee, Wutschitz, NeurIPS 2021), with a width
        /// `O(h√N)` instead of the `N·h` of a rounded-down PLD. Not available when a
        /// component is sampled without replacement (only an upper bound of its PLD is known).
        ///
        /// # Privacy
        /// Upper bounds for the relation the components were derived under: add/remove
        /// (both directions, the worse reported) or replace-one (unsubsampled only).
        ///
        /// # Errors
        /// [`AccountantError::InvalidParameter`] for a bad μ; [`AccountantError::InvalidCount`]
        /// for a zero count; [`AccountantError::NumericalFailure`] if the grid or the FFT
        /// window would be too large or the discretisation failed its mass check.
        pub fn new(
            parts: &[(Component, u64)],
            gaussian_mu: f64,
            relation: Neighbouring,
            discretisation: Discretisation,
            bounds: bool,
        ) -> Result<Self, AccountantError> {
            let mu = non_negative("mu", gaussian_mu)?;
            let mut all: Vec<(Component, u64)> = parts.to_vec();
            if mu > 0.0 {
                all.push((Component::new(Mechanism::Gaussian { mu }, 1.0)?, 1));
            }
            for (c, _) in &all {
                if relation == Neighbouring::AddRemove && c.draws.is_some() {
                    return Err(AccountantError::IncompatibleRelation {
                        event: "SampledWithReplacement",
                        relation,
                    });
                }
                if relation == Neighbouring::ReplaceOne
                    && c.q < 1.0
                    && !c.without_replacement
                    && c.draws.is_none()
                {
                    return Err(AccountantError::IncompatibleRelation {
                        event: "PoissonSampled",
                        relation,
                    });
                }
                if relation == Neighbouring::ReplaceOne
                    && matches!(c.mechanism, Mechanism::MixtureOfGaussians(_))
                {
                    return Err(AccountantError::IncompatibleRelation {
                        event: "MixtureOfGaussians",
                        relation,
                    });
                }
                if relation == Neighbouring::ReplaceOne && c.truncation.is_some() {
                    return Err(AccountantError::IncompatibleRelation {
                        event: "TruncatedSubsampledGaussian",
                        relation,
                    });
                }
                if relation == Neighbouring::AddRemove && c.without_replacement {
                    return Err(AccountantError::IncompatibleRelation {
                        event: "SampledWithoutReplacement",
                        relation,
                    });
                }
            }
            if let Some(&(_, 0)) = all.iter().find(|(_, n)| *n == 0) {
                return Err(AccountantError::InvalidCount {
                    name: "count",
                    value: 0,
                });
            }
            // Per-step loss range: the tails beyond it (≤ `tail` of mass each) go to the top
            // grid point and to +∞ (pessimistic), adding at most TAIL_BUDGET to δ in total.
            #[allow(clippy::cast_precision_loss)]
            let steps: f64 = all.iter().map(|(_, n)| *n as f64).sum();
            let tail = (super::TAIL_BUDGET / steps.max(1.0)).clamp(1e-300, 1e-14);
            let mut ws = Workspace::default();
            // The grid adapts to the composed loss: the requested interval unless a step's
            // grid or the composition's window would be too wide, then doubled until both
            // fit (every interval gives a pessimistic PLD; the one used is reported).
            let mut h = discretisation.interval;
            // Steps whose discretisation bounds every mass relatively (`base::discretise`
            // of a Gaussian or Laplace pair) can be composed tilted (`tilt.rs`).
            let tiltable = !all.is_empty()
                && all.iter().all(|(c, _)| {
                    !c.without_replacement
                        && c.truncation.is_none()
                        && c.draws.is_none()
                        && matches!(
                            c.mechanism,
                            Mechanism::Gaussian { .. } | Mechanism::Laplace { .. }
                        )
                });
            let (dirs, tilts) = loop {
                match compose_directions(
                    &all,
                    relation,
                    h,
                    tail,
                    discretisation.truncation,
                    &mut ws,
                    tiltable,
                ) {
                    Err(AccountantError::NumericalFailure { what })
                        if (what == WINDOW_TOO_WIDE || what == GRID_TOO_WIDE)
                            && h < MAX_INTERVAL =>
                    {
                        h *= 2.0;
                    }
                    r => break r?,
                }
            };
            // Sampling with or without replacement and truncated batches are accounted through upper
            // bounds of their pairs: no certified lower bound.
            let certifiable = bounds
                && !all.is_empty()
                && all.iter().all(|(c, _)| {
                    !c.without_replacement && c.truncation.is_none() && c.draws.is_none()
                });
            let lower = certifiable.then(|| LowerBound::new(steps, h, round_up(steps * tail)));
            Ok(Self {
                h,
                dirs,
                lower,
                tilt: tiltable.then_some(tilts),
                truncation: discretisation.truncation,
            })
        }

        /// The grid interval.
        #[must_use]
        pub fn interval(&self) -> f64 {
            self.h
        }

        /// δ(ε): the worse direction's pessimistic δ, rounded up; `lower` the certified lower
        /// bound if bounds were requested.
        ///
        /// # Errors
        /// [`AccountantError::InvalidParameter`] unless `0 ≤ ε < ∞`.
        pub fn delta(&self, epsilon: f64) -> Result<PldReport, AccountantError> {
            let eps = non_negative("epsilon", epsilon)?;
            let mut best: Option<PldReport> = None;
            for (i, (d, c)) in self.dirs.iter().enumerate() {
                let v = round_up(c.delta_upper(self.h, eps)).min(1.0);
                let mut rep = PldReport {
                    epsilon: eps,
                    delta: v,
                    interval: self.h,
                    truncation_mass: c.truncation,
                    roundoff: c.roundoff,
                    infinity_mass: c.inf,
                    lower: None,
                    direction: *d,
                };
                // Allowances a visible part of δ: the tilted composition, tilted for this ε,
                // and the smaller upper bound (see `epsilon`).
                if let Some(t) = &self.tilt
                    && c.truncation + c.roundoff > TILT_TRIGGER * v
                    && let Some((vt, allowance, inf)) =
                        self.tilted_delta(&self.tilt_parts(t, i), eps, v)
                    && vt < v
                {
                    rep.delta = vt;
                    rep.truncation_mass = 0.0;
                    rep.roundoff = allowance;
                    rep.infinity_mass = inf;
                }
                if best.is_none_or(|b| rep.delta > b.delta) {
                    best = Some(rep);
                }
            }
            let mut r = best.ok_or(AccountantError::NumericalFailure { what: "empty pld" })?;
            if let Some(lb) = self.lower {
                let lo = self
                    .dirs
                    .iter()
                    .map(|(_, c)| c.delta_lower(self.h, eps + lb.shift) - lb.penalty)
                    .fold(0.0, f64::max);
                r.lower = Some(lo.next_down().max(0.0));
            }
            Ok(r)
        }

        /// ε(δ): the smallest ε ≥ 0 whose pessimistic δ(ε) ≤ `delta` in both directions,
        /// rounded up; `lower` is the certified lower bound if bounds were requested.
        ///
        /// # Errors
        /// [`AccountantError::InvalidParameter`] unless `0 < δ < 1`;
        /// [`AccountantError::DeltaTooSmall`] if the mass at `+∞` plus the allowances already
        /// exceed `delta`.
        pub fn epsilon(&self, delta: f64) -> Result<PldReport, AccountantError> {
            let delta = open_unit("delta", delta)?;
            let mut best: Option<PldReport> = None;
            for (i, (d, c)) in self.dirs.iter().enumerate() {
                let plain = if c.is_spectral() {
                    spectral_upper(c, self.h, delta)
                } else {
                    scan_upper(c, self.h, delta)
                };
                let mut rep = PldReport {
                    epsilon: f64::INFINITY,
                    delta,
                    interval: self.h,
                    truncation_mass: c.truncation,
                    roundoff: c.roundoff,
                    infinity_mass: c.inf,
                    lower: None,
                    direction: *d,
                };
                // Allowances a visible part of δ (or all of it): try the tilted composition,
                // whose allowances are relative to δ, and keep the smaller upper bound.
                let heavy = match plain {
                    Err(AccountantError::DeltaTooSmall { .. }) => true,
                    _ => c.truncation + c.roundoff > TILT_TRIGGER * delta,
                };
                let tilted = match (&self.tilt, heavy) {
                    (Some(t), true) => self.tilted_epsilon(&self.tilt_parts(t, i), delta),
                    _ => None,
                };
                match (plain, tilted) {
                    (Ok(e), Some((et, _, _))) if e <= et => rep.epsilon = e,
                    (_, Some((et, allowance, inf))) => {
                        rep.epsilon = et;
                        rep.truncation_mass = 0.0;
                        rep.roundoff = allowance;
                        rep.infinity_mass = inf;
                    }
                    (Ok(e), None) => rep.epsilon = e,
                    (Err(e), None) => return Err(e),
                }
                if best.is_none_or(|b| rep.epsilon > b.epsilon) {
                    best = Some(rep);
                }
            }
            let mut r = best.ok_or(AccountantError::NumericalFailure { what: "empty pld" })?;
            if let Some(lb) = self.lower {
                let mut lo = 0.0_f64;
                for (_, c) in &self.dirs {
                    let e = if c.is_spectral() {
                        spectral_lower(c, self.h, delta, lb)
                    } else {
                        scan_lower(c, self.h, delta, lb)
                    };
                    lo = lo.max(e);
                }
                r.lower = Some(lo.next_down().max(0.0));
            }
            Ok(r)
        }
    }

    impl ComposedPld {
        /// The steps of direction `i` for a tilted composition, with the mass at `+∞` of each
        /// mirrored step computed now from the remove direction's step
        /// (`mirror_deficit_upper`; the trivial bound 1 if there were none).
        fn tilt_parts<'a>(
            &self,
            tilts: &'a [Vec<TiltPart>],
            i: usize,
        ) -> alloc::borrow::Cow<'a, [TiltPart]> {
            let parts = &tilts[i];
            if !parts.iter().any(|p| p.mirrored) {
                return alloc::borrow::Cow::Borrowed(parts);
            }
            let removes = self
                .dirs
                .iter()
                .position(|(d, _)| *d == Direction::Remove)
                .and_then(|r| tilts.get(r));
            let mut owned = parts.clone();
            for (k, p) in owned.iter_mut().enumerate() {
                if p.mirrored {
                    p.inf = removes
                        .and_then(|r| r.get(k))
                        .map_or(1.0, |r| mirror_deficit_upper(&r.pmf, self.h));
                    p.mirrored = false;
                }
            }
            alloc::borrow::Cow::Owned(owned)
        }

        /// δ(ε) of one direction by the tilted composition of its steps, tilted by the
        /// Chernoff order at ε (searched from the order for the plain upper bound `plain`),
        /// with its allowance and mass at `+∞`; `None` if it cannot answer.
        fn tilted_delta(
            &self,
            parts: &[TiltPart],
            eps: f64,
            plain: f64,
        ) -> Option<(f64, f64, f64)> {
            let start = order_for_delta(parts, plain.clamp(1e-300, 0.5))?;
            let lambda = order_for_index(parts, eps / self.h, start)?;
            let t = Tilted::new(parts, lambda, self.h, self.truncation).ok()?;
            let (v, allowance) = t.delta_upper(self.h, eps);
            Some((v, allowance, t.inf()))
        }

        /// ε(δ) of one direction by the tilted composition of its steps (`tilt.rs`), with
        /// the allowance added to δ there and the mass at `+∞`; `None` if it cannot answer.
        fn tilted_epsilon(&self, parts: &[TiltPart], delta: f64) -> Option<(f64, f64, f64)> {
            let lambda = order_for_delta(parts, delta)?;
            let mut t = Tilted::new(parts, lambda, self.h, self.truncation).ok()?;
            let mut e = t.epsilon(self.h, delta).unwrap_or(f64::INFINITY);
            let (_, mut allowance) = t.delta_upper(self.h, e);
            // The Chernoff order for δ can be far from the best tilt where δ is reached
            // (heavy tails: small q with little noise); a second composition tilted for the
            // estimated ε, if the first one's allowance is still a visible part of δ.
            if allowance.is_nan() || allowance > TILT_TRIGGER * delta {
                let k = t.estimate(self.h, delta) / self.h;
                if let Some(l2) = order_for_index(parts, k, t.lambda())
                    && let Ok(t2) = Tilted::new(parts, l2, self.h, self.truncation)
                    && let Ok(e2) = t2.epsilon(self.h, delta)
                    && e2 < e
                {
                    e = e2;
                    allowance = t2.delta_upper(self.h, e2).1;
                    t = t2;
                }
            }
            if !e.is_finite() {
                return None;
            }
            Some((e, allowance, t.inf()))
        }
    }

    /// ε(δ) upper bound of one direction from its loss masses: the closed-form scan, then
    /// verified with the direct sum (nudged up if needed).
    fn scan_upper(c: &Composed, h: f64, delta: f64) -> Result<f64, AccountantError> {
        let mass: f64 = c.probs.iter().sum();
        #[allow(clippy::cast_precision_loss)]
        let scan_err = 4.0 * c.probs.len() as f64 * f64::EPSILON * mass;
        let spent = c.inf + c.truncation + c.roundoff + scan_err;
        let target = delta - spent;
        if target.is_nan() || target <= 0.0 {
            return Err(AccountantError::DeltaTooSmall {
                requested: delta,
                spent,
            });
        }
        let mut e = round_up(c.epsilon_for(h, target));
        let mut guard = 0;
        let mut step = h * 1e-3;
        while c.delta_upper(h, e) > delta {
            e = round_up(e + step);
            step *= 2.0;
            guard += 1;
            if guard > 64 || !e.is_finite() {
                return Err(AccountantError::NumericalFailure {
                    what: "pld epsilon search",
                });
            }
        }
        Ok(e)
    }

    /// ε(δ) lower bound of one direction from its loss masses (see [`ComposedPld::new`]).
    fn scan_lower(c: &Composed, h: f64, delta: f64, lb: LowerBound) -> f64 {
        let mass: f64 = c.probs.iter().sum();
        #[allow(clippy::cast_precision_loss)]
        let scan_err = 4.0 * c.probs.len() as f64 * f64::EPSILON * mass;
        let target = delta + lb.penalty + c.truncation + c.roundoff_lower + scan_err - c.inf;
        if target >= mass {
            return 0.0;
        }
        (c.epsilon_for(h, target) - lb.shift) * (1.0 - 1e-12)
    }

    /// ε(δ) upper bound of one direction evaluated from its spectrum: bisection keeping
    /// `δ_upper(hi) ≤ δ` (so `hi` is always verified).
    fn spectral_upper(c: &Composed, h: f64, delta: f64) -> Result<f64, AccountantError> {
        let spent = c.inf + c.truncation + c.roundoff;
        if spent.is_nan() || spent >= delta {
            return Err(AccountantError::DeltaTooSmall {
                requested: delta,
                spent,
            });
        }
        if c.delta_upper(h, 0.0) <= delta {
            return Ok(0.0);
        }
        let mut lo = 0.0;
        let mut hi = c.top_loss(h).max(h);
        let mut guard = 0;
        while c.delta_upper(h, hi) > delta {
            lo = hi;
            hi = 2.0 * hi + h;
            guard += 1;
            if guard > 64 || !hi.is_finite() {
                return Err(AccountantError::NumericalFailure {
                    what: "pld epsilon search",
                });
            }
        }
        // "not ≤ δ", not "> δ": a NaN δ-curve value keeps `hi` verified.
        let not_within = |mid: f64| {
            !matches!(
                c.delta_upper(h, mid).partial_cmp(&delta),
                Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
            )
        };
        Ok(bisect(lo, hi, not_within).1)
    }

    /// ε(δ) lower bound of one direction evaluated from its spectrum: bisection keeping
    /// `δ_lower(lo + s) − penalty > δ`, so that the exact ε exceeds `lo`.
    fn spectral_lower(c: &Composed, h: f64, delta: f64, lb: LowerBound) -> f64 {
        let above = |e: f64| c.delta_lower(h, e + lb.shift) - lb.penalty > delta;
        if !above(0.0) {
            return 0.0;
        }
        let lo = 0.0;
        let hi = c.top_loss(h).max(h);
        if above(hi) {
            return hi;
        }
        bisect(lo, hi, above).0
    }

    #[cfg(test)]
    mod tests {
        #![allow(clippy::unwrap_used)]
        use super::*;

        /// Where the plain composition's allowances are small, the tilted composition gives
        /// the same ε(δ) (10⁻⁴ relative: both carry allowances of a few 10⁻⁹ here) and δ(ε)
        /// up to the plain one's allowances: the tilt and untilt change nothing but the
        /// error bounds.
        #[test]
        fn tilted_agrees_with_plain_where_both_are_tight() {
            for (sigma, q, n, delta) in [
                (1.1, 0.01, 1000u64, 1e-5),
                (0.5, 1e-3, 1000, 1e-5),
                (1.0, 1e-6, 100_000, 1e-5),
            ] {
                let mu = 1.0 / (2.0 * sigma * sigma);
                let step = Component::new(Mechanism::Gaussian { mu }, q).unwrap();
                let c = ComposedPld::new(
                    &[(step, n)],
                    0.0,
                    Neighbouring::AddRemove,
                    Discretisation::default(),
                    false,
                )
                .unwrap();
                let tilts = c.tilt.as_ref().unwrap();
                for (i, (_, plain)) in c.dirs.iter().enumerate() {
                    let p = if plain.is_spectral() {
                        spectral_upper(plain, c.h, delta).unwrap()
                    } else {
                        scan_upper(plain, c.h, delta).unwrap()
                    };
                    let (t, allowance, _) =
                        c.tilted_epsilon(&c.tilt_parts(tilts, i), delta).unwrap();
                    assert!(
                        (t - p).abs() <= 1e-4 * p + 1e-9,
                        "{sigma} {q} {n} dir {i}: tilted {t} plain {p} allowance {allowance:e} plain {:e}",
                        plain.roundoff
                    );
                    for eps in [0.5 * p, p, 1.5 * p] {
                        let dp = round_up(plain.delta_upper(c.h, eps)).min(1.0);
                        let (dt, _, _) = c.tilted_delta(&c.tilt_parts(tilts, i), eps, dp).unwrap();
                        // The plain mass at +∞ of a mirrored step is its complement
                        // `1 − Σ`, a few ulp of noise per step; the tilted one is exact.
                        let allowances = plain.roundoff + plain.truncation + plain.inf;
                        assert!(
                            (dt - dp).abs() <= 1e-4 * dp + 1.01 * allowances + 1e-15,
                            "{sigma} {q} {n} dir {i} ε {eps}: tilted {dt} plain {dp}"
                        );
                    }
                }
            }
        }
    }
}
