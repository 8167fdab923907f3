//! The event grammar: one release (or `count` adaptive repetitions of it) written as text,
//! `kind:key=value,…` — the syntax of `dpinfer account --event`, for every front end
//! (command line, Python, configuration files) and for other DP systems that want to take
//! a privacy event from a user as one string.
//!
//! | kind | keys | event |
//! |---|---|---|
//! | `gaussian` | `sigma`, `sens` (default 1) | [`crate::Event::Gaussian`] |
//! | `laplace` | `b` (scale), `sens` (default 1) | [`crate::Event::Laplace`] |
//! | `dlaplace` | `b` (scale β), integer `sens` (default 1) | [`crate::Event::DiscreteLaplace`] |
//! | `dgaussian` | `sigma`, integer `sens` (default 1) | [`crate::Event::DiscreteGaussian`] |
//! | `pure` | `eps` | [`crate::Event::PureEpsilon`] |
//! | `approx` | `eps`, `delta` | [`crate::Event::ApproxDp`] |
//! | `zcdp` | `rho` | [`crate::Event::Zcdp`] |
//! | `svt` | integer `c`, `b`, `sens` (default 1), `resample` (`0`/`1`, also `false`/`true`; default 0) | [`crate::Event::SparseVector`] |
//! | `binomial` | integer `n`, `m`, integer `releases`, `bound` (`exact` or `paper`; default exact) | [`crate::Event::BinomialCurve`] |
//! | `rr` | `p` (noise), integer `k` (buckets) | [`crate::Event::RandomizedResponse`] (replace-one) |
//! | `em` | `eps` | [`crate::Event::ExponentialMechanism`] (ε-bounded range) |
//! | `tree` | `sigma`, integer `steps`, `sens` (default 1) | [`crate::Event::TreeAggregation`] (one DP-FTRL epoch) |
//! | `mog` | `sigma`, `c` and `p`: lists of reals separated by `\|` (sensitivities, probabilities) | [`crate::Event::MixtureOfGaussians`] (add/remove) |
//! | `alloc` | `sigma`, integer `steps`, integer `k` (default 1), `sens` (default 1) | [`crate::Event::RandomAllocation`] (add/remove; RDP) |
//! | `truncated` | `sigma`, `q` (Poisson rate), integer `batch` (the cap), integer `n` (dataset size), `sens` (default 1) | [`crate::Event::TruncatedSubsampledGaussian`] (add/remove) |
//!
//! plus, on any kind, `count=k` (k adaptive repetitions, default 1) and at most one sampling
//! scheme: `poisson=q` ([`crate::Event::PoissonSampled`], add/remove neighbours) or
//! `wor=batch/population` ([`crate::Event::SampledWithoutReplacement`], replace-one neighbours)
//! or `wr=batch/population` ([`crate::Event::SampledWithReplacement`], `batch` draws with
//! replacement, replace-one neighbours).
//! Around the sampled release, `select=mean[,shape=η]` runs it a random number of times and
//! releases the best run ([`crate::Event::RepeatAndSelect`], RDP only; `η` default 1 =
//! geometric, 0 logarithmic, `inf`/`poisson` Poisson).
//! Keys may come in any order; spaces around kinds, keys and values are ignored, as are
//! empty `,,` items. Numbers are Rust `f64`/`u64` literals; non-finite reals are refused.
//!
//! Parsing ([`core::str::FromStr`]) checks the *syntax* and names the offending key in a
//! typed [`ParseEventError`]; whether the parameters are valid for a neighbouring relation
//! (σ > 0, q ∈ (0, 1], the sampling scheme matching the relation, …) is checked by
//! [`EventSpec::validate`], which is [`crate::Event::validate`] of the event. `Display` prints the
//! canonical form (defaults omitted, sampling before `count`, shortest round-trip numbers),
//! which parses back to an equal spec.
//!
//! ```
//! use dpinfer_accountants::{EventBuf, EventSpec, Neighbouring, Sampling};
//! let spec: EventSpec = "gaussian:sigma=1.1,poisson=0.01,count=1000".parse()?;
//! assert_eq!(spec.count(), 1000);
//! assert_eq!(spec.sampling(), Sampling::Poisson { q: 0.01 });
//! assert!(spec.validate(Neighbouring::AddRemove).is_ok());
//! assert!(spec.validate(Neighbouring::ReplaceOne).is_err()); // Poisson needs add/remove
//! let (event, count) = spec.to_pair();
//! assert!(matches!(event, EventBuf::PoissonSampled { .. }) && count == 1000);
//! // The canonical form round-trips.
//! assert_eq!(spec.to_string().parse::<EventSpec>()?, spec);
//! assert_eq!(" laplace : b = 2 , sens=1 ".parse::<EventSpec>()?.to_string(), "laplace:b=2");
//! // Errors are typed and name the key.
//! let err = "gaussian:sigma=abc".parse::<EventSpec>().unwrap_err();
//! assert_eq!(err.key(), Some("sigma"));
//! assert_eq!(err.to_string(), r#"sigma="abc" is not a number"#);
//! # Ok::<(), dpinfer_accountants::ParseEventError>(())
//! ```

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use core::fmt;
use core::num::{ParseFloatError, ParseIntError};
use core::str::FromStr;

use crate::{AccountantError, BinomialBound, EventBuf, Neighbouring, ParseNameError};

/// The grammar in brief, one kind a line, then the keys every kind takes — for help texts
/// (`dpinfer account epsilon --help` prints it).
pub const SYNTAX: &str = "  gaussian:sigma=σ[,sens=Δ₂]        Gaussian mechanism (Δ₂ default 1)
  laplace:b=b[,sens=Δ₁]             Laplace mechanism (Δ₁ default 1)
  dlaplace:b=β[,sens=k]             discrete Laplace on the integers (β, integer k in grid units)
  dgaussian:sigma=σ[,sens=k]        discrete Gaussian on the integers (σ, integer k in grid units)
  pure:eps=ε                        any ε-DP mechanism
  approx:eps=ε,delta=δ              any (ε, δ)-DP mechanism (approx accountant only)
  zcdp:rho=ρ                        any ρ-zCDP mechanism
  svt:c=c,b=b[,sens=Δ][,resample=0|1]  sparse vector, c answers (ABCDP Thm 1)
  binomial:n=n,m=m,releases=L[,bound=exact|paper]  binomial infection curve (Xiong et al. Prop. 4)
  rr:p=p,k=k                        k-ary randomized response, noise p (replace-one neighbours)
  em:eps=ε                          exponential mechanism / any ε-bounded-range selection
  tree:sigma=σ,steps=T[,sens=Δ₂]    one epoch of tree aggregation over T steps (DP-FTRL)
  mog:sigma=σ,c=c1|c2|…,p=p1|p2|…   mixture of Gaussians: sensitivity ci with probability pi
  alloc:sigma=σ,steps=t[,k=k][,sens=Δ₂]  random allocation: each record in k of t Gaussian steps (RDP, k = 1)
  truncated:sigma=σ,q=q,batch=B,n=n[,sens=Δ₂]  Gaussian on a Poisson sample of n rows cut to B rows
On any event: count=k (k adaptive repetitions, default 1), poisson=q (Poisson subsampling, \
add/remove neighbours only), wor=batch/population (sampling without replacement, \
replace-one neighbours only) or wr=batch/population (batch draws with replacement, \
replace-one neighbours only); select=mean[,shape=η] (repeat-and-select: the best of a random \
number of runs with that mean; η = 1 geometric (default), 0 logarithmic, inf Poisson; RDP only).";

/// How the rows a release sees are chosen.
#[derive(Copy, Clone, PartialEq, Debug, Default)]
pub enum Sampling {
    /// Every row (no amplification). The default.
    #[default]
    None,
    /// Poisson subsampling: each row independently with probability `q`
    /// ([`crate::Event::PoissonSampled`]; add/remove neighbours).
    Poisson {
        /// Inclusion probability of each row.
        q: f64,
    },
    /// `batch` of `population` rows, uniformly without replacement
    /// ([`crate::Event::SampledWithoutReplacement`]; replace-one neighbours).
    WithoutReplacement {
        /// Sample size.
        batch: u64,
        /// Dataset size.
        population: u64,
    },
    /// `batch` draws, each uniform over the `population` rows, with replacement
    /// ([`crate::Event::SampledWithReplacement`]; replace-one neighbours).
    WithReplacement {
        /// Number of draws.
        batch: u64,
        /// Dataset size.
        population: u64,
    },
}

/// One release written in the event grammar (see the [module docs](self)): a base
/// mechanism, how its rows are sampled, and how many times it is repeated.
///
/// Build it by parsing (`"gaussian:sigma=2,count=10".parse()`), with [`EventSpec::new`], or
/// from an owned event tree with [`EventSpec::from_event`]. The fields are private so that
/// every spec can be printed in the grammar: the base is one of the grammar's kinds.
#[derive(Clone, PartialEq, Debug)]
pub struct EventSpec {
    base: EventBuf,
    sampling: Sampling,
    count: u64,
    select: Option<Select>,
}

/// Repeat-and-select around one release ([`crate::Event::RepeatAndSelect`]): the keys
/// `select=mean` and `shape=η` (default 1, geometric; `inf` or `poisson` for Poisson).
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct Select {
    /// The mean number of runs `E[K] ≥ 1`.
    pub mean: f64,
    /// The shape of `K`'s law (`f64::INFINITY`: Poisson).
    pub shape: f64,
}

impl EventSpec {
    /// A spec from its parts.
    ///
    /// # Errors
    /// [`AccountantError::Unsupported`] if `base` is not one of the grammar's kinds (a
    /// sampled, composed or DP-Barker event has no `kind:` of its own).
    pub fn new(base: EventBuf, sampling: Sampling, count: u64) -> Result<Self, AccountantError> {
        match base {
            EventBuf::Gaussian { .. }
            | EventBuf::Laplace { .. }
            | EventBuf::DiscreteLaplace { .. }
            | EventBuf::DiscreteGaussian { .. }
            | EventBuf::PureEpsilon { .. }
            | EventBuf::ApproxDp { .. }
            | EventBuf::Zcdp { .. }
            | EventBuf::SparseVector { .. }
            | EventBuf::BinomialCurve { .. }
            | EventBuf::RandomizedResponse { .. }
            | EventBuf::ExponentialMechanism { .. }
            | EventBuf::TreeAggregation { .. }
            | EventBuf::MixtureOfGaussians { .. }
            | EventBuf::TruncatedSubsampledGaussian { .. }
            | EventBuf::RandomAllocation { .. } => Ok(Self {
                base,
                sampling,
                count,
                select: None,
            }),
            other => Err(AccountantError::Unsupported {
                event: other.name(),
                accountant: "the event grammar",
            }),
        }
    }

    /// The spec of `count` repetitions of `event`: a grammar kind, possibly inside one
    /// Poisson or without-replacement sampling node — the inverse of [`EventSpec::to_pair`].
    ///
    /// # Errors
    /// [`AccountantError::Unsupported`] for any other tree.
    pub fn from_event(event: &EventBuf, count: u64) -> Result<Self, AccountantError> {
        if let EventBuf::RepeatAndSelect { event, mean, shape } = event {
            let inner = Self::from_event(event, count)?;
            if inner.select.is_some() {
                return Err(AccountantError::Unsupported {
                    event: "RepeatAndSelect",
                    accountant: "the event grammar (nested selection)",
                });
            }
            return Ok(inner.with_select(Some(Select {
                mean: *mean,
                shape: *shape,
            })));
        }
        match event {
            EventBuf::PoissonSampled { q, event } => {
                Self::new((**event).clone(), Sampling::Poisson { q: *q }, count)
            }
            EventBuf::SampledWithoutReplacement {
                batch,
                population,
                event,
            } => Self::new(
                (**event).clone(),
                Sampling::WithoutReplacement {
                    batch: *batch,
                    population: *population,
                },
                count,
            ),
            EventBuf::SampledWithReplacement {
                batch,
                population,
                event,
            } => Self::new(
                (**event).clone(),
                Sampling::WithReplacement {
                    batch: *batch,
                    population: *population,
                },
                count,
            ),
            other => Self::new(other.clone(), Sampling::None, count),
        }
    }

    /// The same spec with repeat-and-select around each release (`None`: without).
    #[must_use]
    pub fn with_select(mut self, select: Option<Select>) -> Self {
        self.select = select;
        self
    }

    /// The repeat-and-select wrapper, if any.
    #[must_use]
    pub fn select(&self) -> Option<Select> {
        self.select
    }

    /// The base mechanism (before sampling and repetition).
    #[must_use]
    pub fn base(&self) -> &EventBuf {
        &self.base
    }

    /// The sampling scheme.
    #[must_use]
    pub fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// The number of adaptive repetitions.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// One release: the base event inside its sampling node.
    #[must_use]
    pub fn event(&self) -> EventBuf {
        let sampled = self.sampled();
        match self.select {
            None => sampled,
            Some(Select { mean, shape }) => EventBuf::RepeatAndSelect {
                event: Box::new(sampled),
                mean,
                shape,
            },
        }
    }

    /// The base event inside its sampling node (without the selection).
    fn sampled(&self) -> EventBuf {
        let base = Box::new(self.base.clone());
        match self.sampling {
            Sampling::None => *base,
            Sampling::Poisson { q } => EventBuf::PoissonSampled { q, event: base },
            Sampling::WithoutReplacement { batch, population } => {
                EventBuf::SampledWithoutReplacement {
                    batch,
                    population,
                    event: base,
                }
            }
            Sampling::WithReplacement { batch, population } => EventBuf::SampledWithReplacement {
                batch,
                population,
                event: base,
            },
        }
    }

    /// `(event, count)`: what [`crate::Query::ask`], [`crate::Claim::account`] and
    /// [`crate::Accountant::compose_n`] take.
    #[must_use]
    pub fn to_pair(&self) -> (EventBuf, u64) {
        (self.event(), self.count)
    }

    /// Checks every parameter and that the sampling scheme fits `relation`
    /// ([`crate::Event::validate`] of [`EventSpec::event`]).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] / [`AccountantError::InvalidCount`] naming the
    /// parameter, [`AccountantError::IncompatibleRelation`] for Poisson sampling under
    /// replace-one or sampling without replacement under add/remove.
    pub fn validate(&self, relation: Neighbouring) -> Result<(), AccountantError> {
        self.event().with_event(|e| e.validate(relation))
    }
}

/// Why a string is not an event in the grammar. Each variant names the key (or item) at
/// fault; the event text is carried where the message shows it. `source()` is the number
/// or name parse error where there is one.
#[derive(Clone, PartialEq, Debug)]
#[non_exhaustive]
pub enum ParseEventError {
    /// An item after `kind:` has no `=`.
    NotKeyValue {
        /// The whole event text.
        event: String,
        /// The item.
        item: String,
    },
    /// A key appears twice.
    Duplicate {
        /// The whole event text.
        event: String,
        /// The key as written.
        key: String,
    },
    /// The kind before `:` is not one of the grammar's.
    UnknownKind {
        /// The kind as written (trimmed).
        kind: String,
    },
    /// A key the kind requires is missing.
    Missing {
        /// The whole event text.
        event: String,
        /// The missing key.
        key: &'static str,
    },
    /// A real-valued key is not a number.
    NotANumber {
        /// The key.
        key: &'static str,
        /// The value as written.
        value: String,
        /// Why it does not parse.
        source: ParseFloatError,
    },
    /// A real-valued key is NaN or infinite.
    NotFinite {
        /// The key.
        key: &'static str,
        /// The value as written.
        value: String,
    },
    /// An integer key is not a non-negative integer (`u64`).
    NotAnInteger {
        /// The key (`"wor batch"` / `"wor population"` for the parts of `wor=`).
        key: &'static str,
        /// The value as written.
        value: String,
        /// Why it does not parse.
        source: ParseIntError,
    },
    /// A 0/1 key has another value.
    NotAFlag {
        /// The whole event text.
        event: String,
        /// The key.
        key: &'static str,
        /// The value as written.
        value: String,
    },
    /// `bound=` is not a [`BinomialBound`] name.
    NotABound {
        /// The whole event text.
        event: String,
        /// The value as written.
        value: String,
        /// Why it does not parse.
        source: ParseNameError,
    },
    /// More than one of `poisson`, `wor` and `wr` is given.
    TwoSamplings {
        /// The whole event text.
        event: String,
    },
    /// `wor=` is not `batch/population`.
    NotAFraction {
        /// The whole event text.
        event: String,
        /// The key: `wor` or `wr`.
        key: &'static str,
        /// The value as written.
        value: String,
    },
    /// A key the kind does not take.
    UnknownKey {
        /// The whole event text.
        event: String,
        /// The key.
        key: String,
    },
}

impl ParseEventError {
    /// The key at fault, where there is one (`None` for a bad kind or an item without `=`).
    #[must_use]
    pub fn key(&self) -> Option<&str> {
        match self {
            Self::Duplicate { key, .. } | Self::UnknownKey { key, .. } => Some(key),
            Self::Missing { key, .. }
            | Self::NotANumber { key, .. }
            | Self::NotFinite { key, .. }
            | Self::NotAnInteger { key, .. }
            | Self::NotAFlag { key, .. } => Some(key),
            Self::NotABound { .. } => Some("bound"),
            Self::TwoSamplings { .. } => Some("wor"),
            Self::NotAFraction { key, .. } => Some(key),
            Self::NotKeyValue { .. } | Self::UnknownKind { .. } => None,
        }
    }
}

/// The kinds, for [`ParseEventError::UnknownKind`].
const KINDS: &str = "gaussian, laplace, dlaplace, dgaussian, pure, approx, zcdp, svt, binomial, rr, em, tree, mog, alloc, truncated";

impl fmt::Display for ParseEventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotKeyValue { event, item } => {
                write!(f, "event {event:?}: {item:?} is not key=value")
            }
            Self::Duplicate { event, key } => write!(f, "event {event:?}: {key} given twice"),
            Self::UnknownKind { kind } => {
                write!(f, "unknown event kind {kind:?} (expected {KINDS})")
            }
            Self::Missing { event, key } => write!(f, "event {event:?} needs {key}=…"),
            Self::NotANumber { key, value, .. } => write!(f, "{key}={value:?} is not a number"),
            Self::NotFinite { key, value } => write!(f, "{key}={value} must be finite"),
            Self::NotAnInteger { key, value, .. } => {
                write!(f, "{key}={value:?} is not a non-negative integer")
            }
            Self::NotAFlag { event, key, value } => {
                write!(f, "event {event:?}: {key}={value} must be 0 or 1")
            }
            Self::NotABound { event, value, .. } => write!(f, "event {event:?}: bound={value}"),
            Self::TwoSamplings { event } => {
                write!(f, "event {event:?}: poisson, wor and wr exclude each other")
            }
            Self::NotAFraction { event, key, value } => {
                write!(f, "event {event:?}: {key}={value} must be batch/population")
            }
            Self::UnknownKey { event, key } => write!(f, "event {event:?}: unknown key {key}"),
        }
    }
}

impl core::error::Error for ParseEventError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::NotANumber { source, .. } => Some(source),
            Self::NotAnInteger { source, .. } => Some(source),
            Self::NotABound { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A real: a Rust `f64` literal, finite.
fn real(key: &'static str, v: &str) -> Result<f64, ParseEventError> {
    let x: f64 = v.parse().map_err(|source| ParseEventError::NotANumber {
        key,
        value: v.to_owned(),
        source,
    })?;
    if !x.is_finite() {
        return Err(ParseEventError::NotFinite {
            key,
            value: v.to_owned(),
        });
    }
    Ok(x)
}

/// A non-negative integer (`u64`).
fn integer(key: &'static str, v: &str) -> Result<u64, ParseEventError> {
    v.parse().map_err(|source| ParseEventError::NotAnInteger {
        key,
        value: v.to_owned(),
        source,
    })
}

/// The `key=value` items of one event, removed as they are used.
struct Items<'s> {
    event: &'s str,
    map: BTreeMap<String, String>,
}

impl Items<'_> {
    fn take(&mut self, key: &str) -> Option<String> {
        self.map.remove(key)
    }

    fn need(&mut self, key: &'static str) -> Result<String, ParseEventError> {
        self.take(key).ok_or_else(|| ParseEventError::Missing {
            event: self.event.to_owned(),
            key,
        })
    }

    fn real(&mut self, key: &'static str) -> Result<f64, ParseEventError> {
        real(key, &self.need(key)?)
    }

    fn integer(&mut self, key: &'static str) -> Result<u64, ParseEventError> {
        integer(key, &self.need(key)?)
    }

    /// A non-empty list of reals separated by `|`.
    fn reals(&mut self, key: &'static str) -> Result<alloc::vec::Vec<f64>, ParseEventError> {
        self.need(key)?
            .split('|')
            .map(|v| real(key, v.trim()))
            .collect()
    }

    /// A real sensitivity, default 1.
    fn sens(&mut self) -> Result<f64, ParseEventError> {
        self.take("sens").map_or(Ok(1.0), |v| real("sens", &v))
    }

    /// An integer sensitivity, default 1.
    fn int_sens(&mut self) -> Result<u64, ParseEventError> {
        self.take("sens").map_or(Ok(1), |v| integer("sens", &v))
    }
}

impl FromStr for EventSpec {
    type Err = ParseEventError;

    /// Parses `kind:key=value,…` (see the [module docs](self)). Checks syntax only; see
    /// [`EventSpec::validate`] for the parameters.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
        let mut items = Items {
            event: s,
            map: BTreeMap::new(),
        };
        for item in rest.split(',').filter(|p| !p.trim().is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| ParseEventError::NotKeyValue {
                    event: s.to_owned(),
                    item: item.to_owned(),
                })?;
            if items
                .map
                .insert(k.trim().to_owned(), v.trim().to_owned())
                .is_some()
            {
                return Err(ParseEventError::Duplicate {
                    event: s.to_owned(),
                    key: k.to_owned(),
                });
            }
        }
        let it = &mut items;
        let base = match kind.trim() {
            "gaussian" => EventBuf::Gaussian {
                sigma: it.real("sigma")?,
                sensitivity: it.sens()?,
            },
            "laplace" => EventBuf::Laplace {
                scale: it.real("b")?,
                sensitivity: it.sens()?,
            },
            "dlaplace" => EventBuf::DiscreteLaplace {
                scale: it.real("b")?,
                sensitivity: it.int_sens()?,
            },
            "dgaussian" => EventBuf::DiscreteGaussian {
                sigma: it.real("sigma")?,
                sensitivity: it.int_sens()?,
            },
            "pure" => EventBuf::PureEpsilon {
                epsilon: it.real("eps")?,
            },
            "approx" => EventBuf::ApproxDp {
                epsilon: it.real("eps")?,
                delta: it.real("delta")?,
            },
            "zcdp" => EventBuf::Zcdp {
                rho: it.real("rho")?,
            },
            "svt" => EventBuf::SparseVector {
                c: it.integer("c")?,
                scale: it.real("b")?,
                sensitivity: it.sens()?,
                resample: match it.take("resample").as_deref() {
                    None | Some("0" | "false") => false,
                    Some("1" | "true") => true,
                    Some(v) => {
                        return Err(ParseEventError::NotAFlag {
                            event: s.to_owned(),
                            key: "resample",
                            value: v.to_owned(),
                        });
                    }
                },
            },
            "binomial" => EventBuf::BinomialCurve {
                n: it.integer("n")?,
                m: it.real("m")?,
                releases: it.integer("releases")?,
                bound: match it.take("bound") {
                    None => BinomialBound::default(),
                    Some(v) => v.parse().map_err(|source| ParseEventError::NotABound {
                        event: s.to_owned(),
                        value: v.clone(),
                        source,
                    })?,
                },
            },
            "tree" => EventBuf::TreeAggregation {
                sigma: it.real("sigma")?,
                sensitivity: it.sens()?,
                steps: it.integer("steps")?,
            },
            "mog" => EventBuf::MixtureOfGaussians {
                sigma: it.real("sigma")?,
                sensitivities: it.reals("c")?,
                probs: it.reals("p")?,
            },
            "alloc" => EventBuf::RandomAllocation {
                sigma: it.real("sigma")?,
                sensitivity: it.sens()?,
                steps: it.integer("steps")?,
                selected: match it.take("k") {
                    None => 1,
                    Some(v) => integer("k", &v)?,
                },
            },
            "truncated" => EventBuf::TruncatedSubsampledGaussian {
                sigma: it.real("sigma")?,
                sensitivity: it.sens()?,
                q: it.real("q")?,
                batch: it.integer("batch")?,
                population: it.integer("n")?,
            },
            "em" => EventBuf::ExponentialMechanism {
                epsilon: it.real("eps")?,
            },
            "rr" => EventBuf::RandomizedResponse {
                noise: it.real("p")?,
                buckets: it.integer("k")?,
            },
            other => {
                return Err(ParseEventError::UnknownKind {
                    kind: other.to_owned(),
                });
            }
        };
        let count = match it.take("count") {
            None => 1,
            Some(v) => integer("count", &v)?,
        };
        let fraction = |key: &'static str, w: &str| {
            let (b, p) = w
                .split_once('/')
                .ok_or_else(|| ParseEventError::NotAFraction {
                    event: s.to_owned(),
                    key,
                    value: w.to_owned(),
                })?;
            let (kb, kp) = if key == "wr" {
                ("wr batch", "wr population")
            } else {
                ("wor batch", "wor population")
            };
            Ok::<_, ParseEventError>((integer(kb, b)?, integer(kp, p)?))
        };
        let sampling = match (it.take("poisson"), it.take("wor"), it.take("wr")) {
            (Some(q), None, None) => Sampling::Poisson {
                q: real("poisson", &q)?,
            },
            (None, Some(w), None) => {
                let (batch, population) = fraction("wor", &w)?;
                Sampling::WithoutReplacement { batch, population }
            }
            (None, None, Some(w)) => {
                let (batch, population) = fraction("wr", &w)?;
                Sampling::WithReplacement { batch, population }
            }
            (None, None, None) => Sampling::None,
            _ => {
                return Err(ParseEventError::TwoSamplings {
                    event: s.to_owned(),
                });
            }
        };
        let select = match it.take("select") {
            None => None,
            Some(v) => Some(Select {
                mean: real("select", &v)?,
                shape: match it.take("shape").as_deref() {
                    None => 1.0,
                    Some("inf" | "poisson") => f64::INFINITY,
                    Some(v) => real("shape", v)?,
                },
            }),
        };
        if let Some(key) = items.map.into_keys().next() {
            return Err(ParseEventError::UnknownKey {
                event: s.to_owned(),
                key,
            });
        }
        Ok(Self {
            base,
            sampling,
            count,
            select,
        })
    }
}

/// A real in shortest round-trip form: positional for `1e-4 ≤ |x| < 1e16` (and 0),
/// exponent form outside (never hundreds of digits). Parses back to the same bits.
struct Real(f64);

impl fmt::Display for Real {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x == 0.0 || (1e-4..1e16).contains(&x.abs()) || !x.is_finite() {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}

/// Whether a real sensitivity is the grammar's default (exactly 1).
fn is_one(x: f64) -> bool {
    x.to_bits() == 1f64.to_bits()
}

impl fmt::Display for EventSpec {
    /// The canonical form: keys in the order of the module table, defaults omitted, then
    /// the sampling scheme, then `count` (if not 1).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sens = |f: &mut fmt::Formatter<'_>, s: f64| {
            if is_one(s) {
                Ok(())
            } else {
                write!(f, ",sens={}", Real(s))
            }
        };
        let int_sens = |f: &mut fmt::Formatter<'_>, s: u64| {
            if s == 1 {
                Ok(())
            } else {
                write!(f, ",sens={s}")
            }
        };
        match self.base {
            EventBuf::Gaussian { sigma, sensitivity } => {
                write!(f, "gaussian:sigma={}", Real(sigma))?;
                sens(f, sensitivity)?;
            }
            EventBuf::Laplace { scale, sensitivity } => {
                write!(f, "laplace:b={}", Real(scale))?;
                sens(f, sensitivity)?;
            }
            EventBuf::DiscreteLaplace { scale, sensitivity } => {
                write!(f, "dlaplace:b={}", Real(scale))?;
                int_sens(f, sensitivity)?;
            }
            EventBuf::DiscreteGaussian { sigma, sensitivity } => {
                write!(f, "dgaussian:sigma={}", Real(sigma))?;
                int_sens(f, sensitivity)?;
            }
            EventBuf::PureEpsilon { epsilon } => write!(f, "pure:eps={}", Real(epsilon))?,
            EventBuf::ApproxDp { epsilon, delta } => {
                write!(f, "approx:eps={},delta={}", Real(epsilon), Real(delta))?;
            }
            EventBuf::Zcdp { rho } => write!(f, "zcdp:rho={}", Real(rho))?,
            EventBuf::SparseVector {
                c,
                scale,
                sensitivity,
                resample,
            } => {
                write!(f, "svt:c={c},b={}", Real(scale))?;
                sens(f, sensitivity)?;
                if resample {
                    f.write_str(",resample=1")?;
                }
            }
            EventBuf::BinomialCurve {
                n,
                m,
                releases,
                bound,
            } => {
                write!(f, "binomial:n={n},m={},releases={releases}", Real(m))?;
                if bound != BinomialBound::default() {
                    write!(f, ",bound={bound}")?;
                }
            }
            EventBuf::RandomizedResponse { noise, buckets } => {
                write!(f, "rr:p={},k={buckets}", Real(noise))?;
            }
            EventBuf::ExponentialMechanism { epsilon } => write!(f, "em:eps={}", Real(epsilon))?,
            EventBuf::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            } => {
                write!(f, "tree:sigma={},steps={steps}", Real(sigma))?;
                sens(f, sensitivity)?;
            }
            EventBuf::MixtureOfGaussians {
                sigma,
                ref sensitivities,
                ref probs,
            } => {
                write!(f, "mog:sigma={}", Real(sigma))?;
                for (key, list) in [("c", sensitivities), ("p", probs)] {
                    write!(f, ",{key}=")?;
                    for (i, x) in list.iter().enumerate() {
                        let sep = if i == 0 { "" } else { "|" };
                        write!(f, "{sep}{}", Real(*x))?;
                    }
                }
            }
            EventBuf::RandomAllocation {
                sigma,
                sensitivity,
                steps,
                selected,
            } => {
                write!(f, "alloc:sigma={},steps={steps}", Real(sigma))?;
                if selected != 1 {
                    write!(f, ",k={selected}")?;
                }
                sens(f, sensitivity)?;
            }
            EventBuf::TruncatedSubsampledGaussian {
                sigma,
                sensitivity,
                q,
                batch,
                population,
            } => {
                write!(
                    f,
                    "truncated:sigma={},q={},batch={batch},n={population}",
                    Real(sigma),
                    Real(q)
                )?;
                sens(f, sensitivity)?;
            }
            // `new`/`from_str` admit the grammar's kinds only; anything else (future
            // variants) prints the library's prose rather than a string that would not parse
            // back as something else.
            ref other => write!(f, "{other}")?,
        }
        match self.sampling {
            Sampling::None => {}
            Sampling::Poisson { q } => write!(f, ",poisson={}", Real(q))?,
            Sampling::WithoutReplacement { batch, population } => {
                write!(f, ",wor={batch}/{population}")?;
            }
            Sampling::WithReplacement { batch, population } => {
                write!(f, ",wr={batch}/{population}")?;
            }
        }
        if let Some(Select { mean, shape }) = self.select {
            write!(f, ",select={}", Real(mean))?;
            if shape.is_infinite() {
                f.write_str(",shape=inf")?;
            } else if shape.to_bits() != 1.0_f64.to_bits() {
                write!(f, ",shape={}", Real(shape))?;
            }
        }
        if self.count != 1 {
            write!(f, ",count={}", self.count)?;
        }
        Ok(())
    }
}

/// With the `serde` feature an [`EventSpec`] is its canonical text (`Display`), and is read
/// back with `FromStr` (errors name the key), so a configuration file can hold
/// `event = "gaussian:sigma=1,poisson=0.01,count=100"`.
#[cfg(feature = "serde")]
impl serde::Serialize for EventSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for EventSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = EventSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an event, `kind:key=value,…`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<EventSpec, E> {
                v.parse()
                    .map_err(|e: ParseEventError| match core::error::Error::source(&e) {
                        Some(src) => E::custom(alloc::format!("{e}: {src}")),
                        None => E::custom(e),
                    })
            }
        }
        deserializer.deserialize_str(Text)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)] // parsed literals are exact
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn parse(s: &str) -> Result<EventSpec, ParseEventError> {
        s.parse()
    }

    #[test]
    fn the_cli_grammar() {
        let s = parse("gaussian:sigma=1.5,sens=2,count=10,poisson=0.01").unwrap();
        assert_eq!(s.count(), 10);
        assert_eq!(s.sampling(), Sampling::Poisson { q: 0.01 });
        assert_eq!(
            *s.base(),
            EventBuf::Gaussian {
                sigma: 1.5,
                sensitivity: 2.0
            }
        );
        let s = parse("laplace:b=2,wor=100/10000").unwrap();
        assert_eq!(
            s.sampling(),
            Sampling::WithoutReplacement {
                batch: 100,
                population: 10000
            }
        );
        let s = parse("dgaussian:sigma=16777216,sens=16777216,poisson=0.01").unwrap();
        assert_eq!(
            *s.base(),
            EventBuf::DiscreteGaussian {
                sigma: 16_777_216.0,
                sensitivity: 16_777_216
            }
        );
        let s = parse("dlaplace:b=4").unwrap();
        assert_eq!(
            *s.base(),
            EventBuf::DiscreteLaplace {
                scale: 4.0,
                sensitivity: 1
            }
        );
        let s = parse("svt:c=3,b=2,resample=true").unwrap();
        assert_eq!(
            *s.base(),
            EventBuf::SparseVector {
                c: 3,
                scale: 2.0,
                sensitivity: 1.0,
                resample: true
            }
        );
        assert_eq!(s.to_string(), "svt:c=3,b=2,resample=1");
        let s = parse("binomial:n=10,m=100,releases=2,bound=paper").unwrap();
        assert_eq!(s.to_string(), "binomial:n=10,m=100,releases=2,bound=paper");
        let s = parse(" approx : eps = 0.5 , delta=1e-8,, count=3 ,").unwrap();
        assert_eq!(s.to_string(), "approx:eps=0.5,delta=1e-8,count=3");
        assert_eq!(parse("zcdp:rho=0.25").unwrap().to_string(), "zcdp:rho=0.25");
        assert_eq!(
            parse("pure:eps=1e300").unwrap().to_string(),
            "pure:eps=1e300"
        );
    }

    /// Every error the CLI printed before the grammar moved here, word for word, and the key
    /// each one names.
    #[test]
    fn errors_name_the_key() {
        for (bad, key, msg) in [
            (
                "gaussian",
                Some("sigma"),
                r#"event "gaussian" needs sigma=…"#,
            ),
            (
                "gaussian:sigma=x",
                Some("sigma"),
                r#"sigma="x" is not a number"#,
            ),
            (
                "gaussian:sigma=1,sigma=2",
                Some("sigma"),
                r#"event "gaussian:sigma=1,sigma=2": sigma given twice"#,
            ),
            (
                "gaussian:sigma=1,foo=2",
                Some("foo"),
                r#"event "gaussian:sigma=1,foo=2": unknown key foo"#,
            ),
            (
                "gaussian:sigma=inf",
                Some("sigma"),
                "sigma=inf must be finite",
            ),
            (
                "gaussian:sigma=1,poisson=0.1,wor=1/2",
                Some("wor"),
                r#"event "gaussian:sigma=1,poisson=0.1,wor=1/2": poisson, wor and wr exclude each other"#,
            ),
            (
                "nope:x=1",
                None,
                "unknown event kind \"nope\" (expected gaussian, laplace, dlaplace, dgaussian, \
                 pure, approx, zcdp, svt, binomial, rr, em, tree, mog, alloc, truncated)",
            ),
            (
                "svt:c=1,b=1,resample=2",
                Some("resample"),
                r#"event "svt:c=1,b=1,resample=2": resample=2 must be 0 or 1"#,
            ),
            (
                "dlaplace:b=1,sens=1.5",
                Some("sens"),
                r#"sens="1.5" is not a non-negative integer"#,
            ),
            (
                "dgaussian:sens=2",
                Some("sigma"),
                r#"event "dgaussian:sens=2" needs sigma=…"#,
            ),
            (
                "binomial:n=10,m=100,releases=2,bound=loose",
                Some("bound"),
                r#"event "binomial:n=10,m=100,releases=2,bound=loose": bound=loose"#,
            ),
            (
                "gaussian:sigma=1,wor=10",
                Some("wor"),
                r#"event "gaussian:sigma=1,wor=10": wor=10 must be batch/population"#,
            ),
            (
                "gaussian:sigma=1,wor=a/10",
                Some("wor batch"),
                r#"wor batch="a" is not a non-negative integer"#,
            ),
            (
                "gaussian:sigma=1,count=-3",
                Some("count"),
                r#"count="-3" is not a non-negative integer"#,
            ),
            (
                "gaussian:sigma=1,x",
                None,
                r#"event "gaussian:sigma=1,x": "x" is not key=value"#,
            ),
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.key(), key, "{bad}");
            assert_eq!(e.to_string(), msg, "{bad}");
        }
        let e = parse("gaussian:sigma=x").unwrap_err();
        let src = core::error::Error::source(&e).unwrap().to_string();
        assert_eq!(src, "invalid float literal");
    }

    /// Every kind [`SYNTAX`] lists is one the parser knows, with the keys it shows.
    #[test]
    fn syntax_lists_the_kinds() {
        let kinds: alloc::vec::Vec<&str> = SYNTAX
            .lines()
            .filter_map(|l| l.strip_prefix("  "))
            .filter_map(|l| l.split(':').next())
            .collect();
        assert_eq!(kinds.join(", "), KINDS);
        for example in [
            "gaussian:sigma=1,sens=2",
            "laplace:b=1,sens=2",
            "dlaplace:b=1,sens=2",
            "dgaussian:sigma=1,sens=2",
            "pure:eps=1",
            "approx:eps=1,delta=0.1",
            "zcdp:rho=1",
            "svt:c=1,b=1,sens=1,resample=1",
            "binomial:n=1,m=1,releases=1,bound=paper",
            "rr:p=0.5,k=4",
            "em:eps=1",
            "tree:sigma=1,steps=8,sens=2",
            "mog:sigma=1,c=0|1|2,p=0.81|0.18|0.01",
            "alloc:sigma=1,steps=10,k=2,sens=2",
            "truncated:sigma=1,q=0.01,batch=12,n=1000,sens=2",
        ] {
            parse(example).unwrap();
            parse(&alloc::format!("{example},count=2,poisson=0.5")).unwrap();
            parse(&alloc::format!("{example},wor=1/2")).unwrap();
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_is_the_text() {
        let s = parse("gaussian:sigma=1.5,poisson=0.01,count=10").unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(j, r#""gaussian:sigma=1.5,poisson=0.01,count=10""#);
        assert_eq!(serde_json::from_str::<EventSpec>(&j).unwrap(), s);
        let e = serde_json::from_str::<EventSpec>(r#""gaussian:sigma=x""#).unwrap_err();
        assert!(
            e.to_string()
                .contains(r#"sigma="x" is not a number: invalid float literal"#)
        );
        assert!(serde_json::from_str::<EventSpec>("3").is_err());
    }

    #[test]
    fn parts_and_pairs() {
        let s = parse("gaussian:sigma=2,wor=10/100,count=7").unwrap();
        let (e, n) = s.to_pair();
        assert_eq!(n, 7);
        assert_eq!(EventSpec::from_event(&e, n).unwrap(), s);
        assert!(s.validate(Neighbouring::ReplaceOne).is_ok());
        assert!(matches!(
            s.validate(Neighbouring::AddRemove),
            Err(AccountantError::IncompatibleRelation { .. })
        ));
        let bad = parse("gaussian:sigma=-1").unwrap();
        assert!(matches!(
            bad.validate(Neighbouring::AddRemove),
            Err(AccountantError::InvalidParameter { name: "sigma", .. })
        ));
        let nested = EventBuf::SelfComposed {
            event: Box::new(EventBuf::Zcdp { rho: 1.0 }),
            count: 2,
        };
        assert!(EventSpec::from_event(&nested, 1).is_err());
        assert!(EventSpec::new(nested, Sampling::None, 1).is_err());
        let barker = EventBuf::DpBarker {
            batch: 100,
            population: 1000,
        };
        assert!(EventSpec::new(barker, Sampling::None, 1).is_err());
    }
}
