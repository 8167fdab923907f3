//! Privacy claims as values: what a private pass released, under which neighbouring relation,
//! and what it costs according to which accountant and conversion.
//!
//! A [`Claim`] is produced by [`Claim::account`], which composes the released events in a
//! fresh accountant and records the [`Report`]. Because it is a plain value it can be
//! stored (feature `serde`), compared, recomputed by anyone (`Claim::account` with the same
//! inputs gives the same bits), and printed as prose ([`core::fmt::Display`]).
//!
//! ```
//! use dpinfer_accountants::{AccountantKind, Claim, ConversionRule, Event, EventBuf, Neighbouring};
//! let step = Event::Gaussian { sigma: 1.0, sensitivity: 1.0 };
//! let sampled = Event::PoissonSampled { q: 0.01, event: &step };
//! let claim = Claim::account(
//!     Neighbouring::AddRemove,
//!     AccountantKind::Rdp,
//!     ConversionRule::Tightest,
//!     vec![(EventBuf::from(&sampled), 10_000)],
//!     1e-5,
//! )?;
//! assert!((claim.epsilon() - 6.7194).abs() < 1e-3);
//! assert_eq!(claim.delta(), 1e-5);
//! assert!(claim.to_string().starts_with("(ε = 6.71"));
//! # Ok::<(), dpinfer_accountants::AccountantError>(())
//! ```

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use crate::{
    Accountant, AccountantError, AccountantKind, BinomialBound, ConversionRule, Event,
    Neighbouring, Report,
};

/// An owned event tree: the mirror of [`Event`] with boxes and vectors instead of borrows,
/// so it can be stored in a [`Claim`], sent, and serialised (feature `serde`).
///
/// Convert with [`EventBuf::from`] (`&Event` → `EventBuf`) and borrow back with
/// [`EventBuf::with_event`]. The parameters mean exactly what they mean in [`Event`].
#[derive(Clone, PartialEq, Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
#[non_exhaustive]
pub enum EventBuf {
    /// [`Event::Gaussian`].
    Gaussian {
        /// Noise standard deviation σ > 0.
        sigma: f64,
        /// ℓ₂ sensitivity Δ ≥ 0.
        sensitivity: f64,
    },
    /// [`Event::Laplace`].
    Laplace {
        /// Laplace scale b > 0.
        scale: f64,
        /// ℓ₁ sensitivity Δ ≥ 0.
        sensitivity: f64,
    },
    /// [`Event::PureEpsilon`].
    PureEpsilon {
        /// ε ≥ 0.
        epsilon: f64,
    },
    /// [`Event::ApproxDp`].
    ApproxDp {
        /// ε ≥ 0.
        epsilon: f64,
        /// δ ∈ [0, 1].
        delta: f64,
    },
    /// [`Event::Zcdp`].
    Zcdp {
        /// ρ ≥ 0.
        rho: f64,
    },
    /// [`Event::SparseVector`].
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
    /// [`Event::BinomialCurve`].
    BinomialCurve {
        /// Trials per release `n ≥ 1`.
        n: u64,
        /// Pseudo-count `m > 0`.
        m: f64,
        /// Number of releases `L ≥ 1`.
        releases: u64,
        /// Which bound to report.
        bound: BinomialBound,
    },
    /// [`Event::PoissonSampled`].
    PoissonSampled {
        /// Inclusion probability of each row.
        q: f64,
        /// The mechanism run on the sample.
        event: Box<EventBuf>,
    },
    /// [`Event::SampledWithoutReplacement`].
    SampledWithoutReplacement {
        /// Sample size.
        batch: u64,
        /// Dataset size.
        population: u64,
        /// The mechanism run on the sample.
        event: Box<EventBuf>,
    },
    /// [`Event::SampledWithReplacement`].
    SampledWithReplacement {
        /// Number of draws.
        batch: u64,
        /// Dataset size.
        population: u64,
        /// The mechanism run on the batch.
        event: Box<EventBuf>,
    },
    /// [`Event::RepeatAndSelect`].
    RepeatAndSelect {
        /// The repeated mechanism.
        event: Box<EventBuf>,
        /// `E[K] ≥ 1`.
        mean: f64,
        /// The shape of `K`'s law (`∞`: Poisson).
        shape: f64,
    },
    /// [`Event::RandomAllocation`].
    RandomAllocation {
        /// Noise standard deviation σ > 0 per step.
        sigma: f64,
        /// ℓ₂ sensitivity Δ ≥ 0.
        sensitivity: f64,
        /// Number of steps `t ≥ 1`.
        steps: u64,
        /// Steps per record `k`.
        selected: u64,
    },
    /// [`Event::SelfComposed`].
    SelfComposed {
        /// The repeated event.
        event: Box<EventBuf>,
        /// Number of repetitions.
        count: u64,
    },
    /// [`Event::Composed`].
    Composed(Vec<EventBuf>),
    /// [`Event::DiscreteLaplace`].
    DiscreteLaplace {
        /// Scale β > 0 in grid units.
        scale: f64,
        /// Integer sensitivity `k` in grid units.
        sensitivity: u64,
    },
    /// [`Event::DiscreteGaussian`].
    DiscreteGaussian {
        /// σ > 0 in grid units.
        sigma: f64,
        /// Integer sensitivity `k` in grid units.
        sensitivity: u64,
    },
    /// [`Event::DpBarker`].
    DpBarker {
        /// Batch size `|B|`.
        batch: u64,
        /// Dataset size `n`.
        population: u64,
    },
    /// [`Event::RandomizedResponse`].
    RandomizedResponse {
        /// Noise parameter `p ∈ (0, 1]`.
        noise: f64,
        /// Number of buckets `k ≥ 1`.
        buckets: u64,
    },
    /// [`Event::ExponentialMechanism`].
    ExponentialMechanism {
        /// ε ≥ 0 (the range of the privacy loss).
        epsilon: f64,
    },
    /// [`Event::TreeAggregation`].
    TreeAggregation {
        /// Noise standard deviation σ > 0 per node.
        sigma: f64,
        /// ℓ₂ sensitivity Δ ≥ 0 per node.
        sensitivity: f64,
        /// Number of leaves (steps) `T ≥ 1`.
        steps: u64,
    },
    /// [`Event::MixtureOfGaussians`].
    MixtureOfGaussians {
        /// Noise standard deviation σ > 0.
        sigma: f64,
        /// The sensitivities `cᵢ ≥ 0`.
        sensitivities: Vec<f64>,
        /// Their probabilities `pᵢ`, summing to 1.
        probs: Vec<f64>,
    },
    /// [`Event::TruncatedSubsampledGaussian`].
    TruncatedSubsampledGaussian {
        /// Noise standard deviation σ > 0.
        sigma: f64,
        /// ℓ₂ sensitivity Δ ≥ 0.
        sensitivity: f64,
        /// Poisson sampling rate `q ∈ (0, 1]`.
        q: f64,
        /// The largest batch `B ≥ 1`.
        batch: u64,
        /// Dataset size `n ≥ 1`.
        population: u64,
    },
}

impl From<&Event<'_>> for EventBuf {
    fn from(e: &Event<'_>) -> Self {
        match *e {
            Event::Gaussian { sigma, sensitivity } => Self::Gaussian { sigma, sensitivity },
            Event::Laplace { scale, sensitivity } => Self::Laplace { scale, sensitivity },
            Event::PureEpsilon { epsilon } => Self::PureEpsilon { epsilon },
            Event::ApproxDp { epsilon, delta } => Self::ApproxDp { epsilon, delta },
            Event::Zcdp { rho } => Self::Zcdp { rho },
            Event::SparseVector {
                c,
                scale,
                sensitivity,
                resample,
            } => Self::SparseVector {
                c,
                scale,
                sensitivity,
                resample,
            },
            Event::BinomialCurve {
                n,
                m,
                releases,
                bound,
            } => Self::BinomialCurve {
                n,
                m,
                releases,
                bound,
            },
            Event::PoissonSampled { q, event } => Self::PoissonSampled {
                q,
                event: Box::new(Self::from(event)),
            },
            Event::SampledWithoutReplacement {
                batch,
                population,
                event,
            } => Self::SampledWithoutReplacement {
                batch,
                population,
                event: Box::new(Self::from(event)),
            },
            Event::SampledWithReplacement {
                batch,
                population,
                event,
            } => Self::SampledWithReplacement {
                batch,
                population,
                event: Box::new(Self::from(event)),
            },
            Event::RepeatAndSelect { event, mean, shape } => Self::RepeatAndSelect {
                event: Box::new(Self::from(event)),
                mean,
                shape,
            },
            Event::RandomAllocation {
                sigma,
                sensitivity,
                steps,
                selected,
            } => Self::RandomAllocation {
                sigma,
                sensitivity,
                steps,
                selected,
            },
            Event::SelfComposed { event, count } => Self::SelfComposed {
                event: Box::new(Self::from(event)),
                count,
            },
            Event::Composed(events) => Self::Composed(events.iter().map(Self::from).collect()),
            Event::DiscreteLaplace { scale, sensitivity } => {
                Self::DiscreteLaplace { scale, sensitivity }
            }
            Event::DiscreteGaussian { sigma, sensitivity } => {
                Self::DiscreteGaussian { sigma, sensitivity }
            }
            Event::DpBarker { batch, population } => Self::DpBarker { batch, population },
            Event::RandomizedResponse { noise, buckets } => {
                Self::RandomizedResponse { noise, buckets }
            }
            Event::ExponentialMechanism { epsilon } => Self::ExponentialMechanism { epsilon },
            Event::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            } => Self::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            },
            Event::MixtureOfGaussians {
                sigma,
                sensitivities,
                probs,
            } => Self::MixtureOfGaussians {
                sigma,
                sensitivities: sensitivities.to_vec(),
                probs: probs.to_vec(),
            },
            Event::TruncatedSubsampledGaussian {
                sigma,
                sensitivity,
                q,
                batch,
                population,
            } => Self::TruncatedSubsampledGaussian {
                sigma,
                sensitivity,
                q,
                batch,
                population,
            },
        }
    }
}

impl From<Event<'_>> for EventBuf {
    fn from(e: Event<'_>) -> Self {
        Self::from(&e)
    }
}

impl EventBuf {
    /// Calls `f` with the borrowed [`Event`] tree equal to `self`.
    ///
    /// The borrowed tree is built level by level (children of one level in one buffer), so
    /// the recursion depth is the depth of the tree, not its size.
    ///
    /// ```
    /// use dpinfer_accountants::{Event, EventBuf};
    /// let g = Event::Gaussian { sigma: 2.0, sensitivity: 1.0 };
    /// let parts = [Event::SelfComposed { event: &g, count: 3 }, Event::Zcdp { rho: 0.1 }];
    /// let tree = Event::Composed(&parts);
    /// let owned = EventBuf::from(&tree);
    /// assert!(owned.with_event(|e| *e == tree));
    /// ```
    pub fn with_event<R>(&self, f: impl FnOnce(&Event<'_>) -> R) -> R {
        // Breadth-first levels: the children of the nodes of one level are contiguous, in
        // order, in the next level.
        let mut levels: Vec<Vec<&Self>> = alloc::vec![alloc::vec![self]];
        loop {
            let mut next = Vec::new();
            if let Some(last) = levels.last() {
                for node in last {
                    node.push_children(&mut next);
                }
            }
            if next.is_empty() {
                break;
            }
            levels.push(next);
        }
        build(&levels, &[], f)
    }

    fn push_children<'a>(&'a self, out: &mut Vec<&'a Self>) {
        match self {
            Self::PoissonSampled { event, .. }
            | Self::SampledWithoutReplacement { event, .. }
            | Self::SampledWithReplacement { event, .. }
            | Self::RepeatAndSelect { event, .. }
            | Self::SelfComposed { event, .. } => out.push(event),
            Self::Composed(events) => out.extend(events.iter()),
            _ => {}
        }
    }

    /// A short static name of the variant (the same as [`Event::name`]).
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.with_event(|e| e.name())
    }
}

/// Builds the deepest remaining level of `levels` from its already built children `below`,
/// then recurses upwards; at the root calls `f`.
fn build<R>(levels: &[Vec<&EventBuf>], below: &[Event<'_>], f: impl FnOnce(&Event<'_>) -> R) -> R {
    let Some((level, upper)) = levels.split_last() else {
        // `below` is the root level, which holds exactly `self`.
        return match below.first() {
            Some(root) => f(root),
            None => f(&Event::Composed(&[])),
        };
    };
    let mut built = Vec::with_capacity(level.len());
    let mut next = 0usize;
    let mut child = move |n: usize| {
        let s = below.get(next..next + n).unwrap_or(&[]);
        next += n;
        s
    };
    for node in level {
        let e = match *node {
            EventBuf::Gaussian { sigma, sensitivity } => Event::Gaussian {
                sigma: *sigma,
                sensitivity: *sensitivity,
            },
            EventBuf::Laplace { scale, sensitivity } => Event::Laplace {
                scale: *scale,
                sensitivity: *sensitivity,
            },
            EventBuf::PureEpsilon { epsilon } => Event::PureEpsilon { epsilon: *epsilon },
            EventBuf::ApproxDp { epsilon, delta } => Event::ApproxDp {
                epsilon: *epsilon,
                delta: *delta,
            },
            EventBuf::Zcdp { rho } => Event::Zcdp { rho: *rho },
            EventBuf::SparseVector {
                c,
                scale,
                sensitivity,
                resample,
            } => Event::SparseVector {
                c: *c,
                scale: *scale,
                sensitivity: *sensitivity,
                resample: *resample,
            },
            EventBuf::BinomialCurve {
                n,
                m,
                releases,
                bound,
            } => Event::BinomialCurve {
                n: *n,
                m: *m,
                releases: *releases,
                bound: *bound,
            },
            EventBuf::PoissonSampled { q, .. } => match child(1) {
                [event] => Event::PoissonSampled { q: *q, event },
                _ => Event::Composed(&[]),
            },
            EventBuf::RandomAllocation {
                sigma,
                sensitivity,
                steps,
                selected,
            } => Event::RandomAllocation {
                sigma: *sigma,
                sensitivity: *sensitivity,
                steps: *steps,
                selected: *selected,
            },
            EventBuf::RepeatAndSelect { mean, shape, .. } => match child(1) {
                [event] => Event::RepeatAndSelect {
                    event,
                    mean: *mean,
                    shape: *shape,
                },
                _ => Event::Composed(&[]),
            },
            EventBuf::SampledWithReplacement {
                batch, population, ..
            } => match child(1) {
                [event] => Event::SampledWithReplacement {
                    batch: *batch,
                    population: *population,
                    event,
                },
                _ => Event::Composed(&[]),
            },
            EventBuf::SampledWithoutReplacement {
                batch, population, ..
            } => match child(1) {
                [event] => Event::SampledWithoutReplacement {
                    batch: *batch,
                    population: *population,
                    event,
                },
                _ => Event::Composed(&[]),
            },
            EventBuf::SelfComposed { count, .. } => match child(1) {
                [event] => Event::SelfComposed {
                    event,
                    count: *count,
                },
                _ => Event::Composed(&[]),
            },
            EventBuf::Composed(events) => Event::Composed(child(events.len())),
            EventBuf::DiscreteLaplace { scale, sensitivity } => Event::DiscreteLaplace {
                scale: *scale,
                sensitivity: *sensitivity,
            },
            EventBuf::DiscreteGaussian { sigma, sensitivity } => Event::DiscreteGaussian {
                sigma: *sigma,
                sensitivity: *sensitivity,
            },
            EventBuf::DpBarker { batch, population } => Event::DpBarker {
                batch: *batch,
                population: *population,
            },
            EventBuf::RandomizedResponse { noise, buckets } => Event::RandomizedResponse {
                noise: *noise,
                buckets: *buckets,
            },
            EventBuf::ExponentialMechanism { epsilon } => {
                Event::ExponentialMechanism { epsilon: *epsilon }
            }
            EventBuf::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            } => Event::TreeAggregation {
                sigma: *sigma,
                sensitivity: *sensitivity,
                steps: *steps,
            },
            EventBuf::MixtureOfGaussians {
                sigma,
                sensitivities,
                probs,
            } => Event::MixtureOfGaussians {
                sigma: *sigma,
                sensitivities,
                probs,
            },
            EventBuf::TruncatedSubsampledGaussian {
                sigma,
                sensitivity,
                q,
                batch,
                population,
            } => Event::TruncatedSubsampledGaussian {
                sigma: *sigma,
                sensitivity: *sensitivity,
                q: *q,
                batch: *batch,
                population: *population,
            },
        };
        built.push(e);
    }
    build(upper, &built, f)
}

impl fmt::Display for EventBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_event(|e| fmt::Display::fmt(e, f))
    }
}

/// A privacy claim: what a private pass released and what it costs, as a value.
///
/// Build it with [`Claim::account`]; its `report` is then exactly what a fresh accountant
/// of kind `accountant` with conversion `rule` reports at δ = `report.delta` after
/// composing every `(event, count)` of `events` under `relation`. The fields are public so
/// a stored claim can be read back; a claim read from elsewhere can be checked by calling
/// [`Claim::account`] with its fields and comparing (the numbers are deterministic).
///
/// # Privacy
/// The guarantee is (`report.epsilon`, `report.delta`)-DP under `relation`, for adaptive
/// composition of the listed releases; sensitivities inside the events are the ones for
/// `relation`.
#[derive(Clone, PartialEq, Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Claim {
    /// The neighbouring relation the guarantee is stated for.
    pub relation: Neighbouring,
    /// Each released event with how many times it was released.
    pub events: Vec<(EventBuf, u64)>,
    /// The accountant that composed the events.
    pub accountant: AccountantKind,
    /// The conversion rule the accountant used (ignored by exact notions).
    pub rule: ConversionRule,
    /// (ε, δ) and the conversion that produced them.
    pub report: Report,
}

impl Claim {
    /// Composes `events` (each `count` times) in a fresh accountant of `kind` under
    /// `relation` with conversion `rule`, and reports ε at `delta`.
    ///
    /// # Errors
    /// Every error of [`Accountant::compose_n`] (bad event parameters, an event the
    /// accountant cannot express, an event incompatible with `relation`) and of
    /// [`Accountant::epsilon`] (δ outside `(0, 1)` — the pure accountant also takes `δ = 0`
    /// — or δ already spent).
    pub fn account(
        relation: Neighbouring,
        kind: AccountantKind,
        rule: ConversionRule,
        events: Vec<(EventBuf, u64)>,
        delta: f64,
    ) -> Result<Self, AccountantError> {
        let report = report(kind.boxed(relation, rule)?.as_mut(), &events, delta)?;
        Ok(Self {
            relation,
            events,
            accountant: kind,
            rule,
            report,
        })
    }

    /// The claim a fresh accountant makes for this claim's relation, accountant kind, rule,
    /// events and δ — for checking a stored claim: it is trustworthy when
    /// `claim.recompute()? == claim` (the numbers are deterministic, bit for bit).
    ///
    /// # Errors
    /// As [`Claim::account`].
    pub fn recompute(&self) -> Result<Self, AccountantError> {
        Self::account(
            self.relation,
            self.accountant,
            self.rule,
            self.events.clone(),
            self.report.delta,
        )
    }

    /// The claimed ε.
    #[must_use]
    pub fn epsilon(&self) -> f64 {
        self.report.epsilon
    }

    /// The claimed δ.
    #[must_use]
    pub fn delta(&self) -> f64 {
        self.report.delta
    }

    /// Total number of releases (the sum of the counts, saturating).
    #[must_use]
    pub fn releases(&self) -> u64 {
        self.events
            .iter()
            .fold(0u64, |s, &(_, c)| s.saturating_add(c))
    }
}

fn report(
    acc: &mut dyn Accountant,
    events: &[(EventBuf, u64)],
    delta: f64,
) -> Result<Report, AccountantError> {
    Query::EpsilonAt(delta).ask(acc, events)
}

/// What to ask an accountant about a composition: ε at a given δ, or δ at a given ε.
#[derive(Copy, Clone, PartialEq, Debug)]
pub enum Query {
    /// The smallest certified ε at this δ ([`Accountant::epsilon`]).
    EpsilonAt(f64),
    /// The smallest certified δ at this ε ([`Accountant::delta`]).
    DeltaAt(f64),
}

impl Query {
    /// Composes `events` (each `count` times, in order) into `acc` and asks it.
    ///
    /// # Errors
    /// The accountant's errors ([`Accountant::compose_n`], [`Accountant::epsilon`],
    /// [`Accountant::delta`]).
    pub fn ask(
        self,
        acc: &mut dyn Accountant,
        events: &[(EventBuf, u64)],
    ) -> Result<Report, AccountantError> {
        for (event, count) in events {
            event.with_event(|e| acc.compose_n(e, *count))?;
        }
        match self {
            Self::EpsilonAt(delta) => acc.epsilon(delta),
            Self::DeltaAt(epsilon) => acc.delta(epsilon),
        }
    }

    /// The answered quantity of a report: ε for [`Query::EpsilonAt`], δ for
    /// [`Query::DeltaAt`].
    #[must_use]
    pub fn answer(self, r: &Report) -> f64 {
        match self {
            Self::EpsilonAt(_) => r.epsilon,
            Self::DeltaAt(_) => r.delta,
        }
    }

    /// Puts the question to a fresh accountant of every kind in `kinds`
    /// ([`AccountantKind::boxed`] under `relation` with `rule`) and returns each answer, or
    /// why that accountant cannot give one, in the order of `kinds`. Each `Ok` report is a
    /// valid upper bound for `relation`, so the smallest ([`Query::tightest`]) is too.
    ///
    /// ```
    /// use dpinfer_accountants::{AccountantKind, ConversionRule, Event, EventBuf, Neighbouring, Query};
    /// let g = EventBuf::from(Event::Gaussian { sigma: 2.0, sensitivity: 1.0 });
    /// let q = Query::EpsilonAt(1e-5);
    /// let each = q.ask_each(
    ///     &AccountantKind::ALL,
    ///     Neighbouring::AddRemove,
    ///     ConversionRule::Tightest,
    ///     &[(g, 100)],
    /// );
    /// assert!(each[0].1.is_err()); // pure DP cannot express a Gaussian
    /// let (kind, best) = q.tightest(&each).unwrap();
    /// assert_eq!(kind, AccountantKind::Pld); // the exact Gaussian PLD
    /// assert!((best.epsilon - 33.1037).abs() < 1e-3);
    /// ```
    #[must_use]
    pub fn ask_each(
        self,
        kinds: &[AccountantKind],
        relation: Neighbouring,
        rule: ConversionRule,
        events: &[(EventBuf, u64)],
    ) -> Vec<(AccountantKind, Result<Report, AccountantError>)> {
        kinds
            .iter()
            .map(|&k| {
                let answer = k
                    .boxed(relation, rule)
                    .and_then(|mut a| self.ask(a.as_mut(), events));
                (k, answer)
            })
            .collect()
    }

    /// The tightest finite answer of [`Query::ask_each`] (smallest ε, or δ), the first one on
    /// ties; `None` if no accountant gave a finite answer.
    #[must_use]
    pub fn tightest(
        self,
        answers: &[(AccountantKind, Result<Report, AccountantError>)],
    ) -> Option<(AccountantKind, Report)> {
        answers
            .iter()
            .filter_map(|(k, r)| r.as_ref().ok().map(|r| (*k, *r)))
            .filter(|(_, r)| self.answer(r).is_finite())
            .min_by(|a, b| self.answer(&a.1).total_cmp(&self.answer(&b.1)))
    }
}

/// One paragraph of prose generated from the value, e.g.
/// `(ε = 1.5, δ = 0.00001)-DP under the add/remove neighbouring relation, by the RDP
/// accountant with the tightest conversion (…), composing 1 release: 1 × Gaussian(σ = 2, Δ = 1).`
/// Numbers are printed in full (shortest round-trip form), never rounded down.
impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "(ε = {}, δ = {})-DP under the {} neighbouring relation, by the {} accountant",
            self.report.epsilon,
            self.report.delta,
            self.relation,
            self.accountant.label()
        )?;
        if matches!(
            self.accountant,
            AccountantKind::Rdp | AccountantKind::RdpIntegers | AccountantKind::Zcdp
        ) {
            write!(f, " with the {} conversion rule", self.rule)?;
        }
        write!(f, " ({})", self.report.conversion)?;
        let n = self.releases();
        write!(
            f,
            ", composing {n} release{}",
            if n == 1 { "" } else { "s" }
        )?;
        for (i, (event, count)) in self.events.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { "; " })?;
            write!(f, "{count} × {event}")?;
        }
        f.write_str(".")
    }
}
