//! `[sampler]`: one config type per sampler kind, each in its own file — the library's own
//! user settings where they are a type of their own (the MCMC kernels' `…Options` of
//! `dpinfer::mcmc::run` in [`Mcmc`], the private passes' `…Options` of `dpinfer::abc::pass`
//! in [`Pass`]; serde behind the libraries' `serde` features), else a struct with its
//! conversion into the library's settings (`TryFrom`: rejection, which has no settings type;
//! SMC-ABC, one table for two library structs; SPPE/SPLE, flat where the library nests). The library owns the defaults and the checks, and
//! `setting_error` turns its errors into config errors naming the key.
//!
//! The table is an internally tagged enum (`kind = "svt-abc"`, …). [`SamplerConfig`]'s
//! `Deserialize` reads the table, picks the struct by `kind` and reads the other keys into it
//! with `deny_unknown_fields`, so a misspelt key is an error naming the key, the section and
//! the kind (serde's derived internally tagged enums report it without the section).
//!
//! The non-private baselines accept the keys of their private siblings and ignore them with a
//! warning, so a private config reruns without privacy by changing only `kind`: `rejection`
//! those of `svt-abc`/`soft-abc`/`gaussian-abc`, `rwmh` those of `dp-penalty`/`dp-barker`/
//! `dp-hmc`.
//!
//! Every kind but `rejection` belongs to a family, a trait through which the pipeline checks,
//! bounds, builds and runs it: [`PairsPass`] (a private pass over the pairs table: check,
//! limits, build, the ledger's mechanism text; the pipeline claims and releases through the
//! library pass), [`McmcKernel`] (an MCMC kernel beside the [`Chain`] keys) and
//! [`Sequential`] (SMC-ABC, SPPE, SPLE, on the data or a `privacy.release`). Adding a sampler
//! is one new file here — its family's `impl` for the library's settings type (or its struct
//! and its conversion into the library's settings) — and one line in the `samplers!` list
//! (`Variant(Struct) = "kind" as pass, private;`: the family, then the flags `private`,
//! `delta`, `release` that give [`SamplerKind`]'s lists).

use crate::error::{Result, bail};
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::{Deserialize, Serialize};

mod barker;
mod gaussian;
mod hmc;
mod penalty;
mod rejection;
mod rwmh;
mod smc;
mod soft;
mod sppe;
mod svt;

pub use dpinfer::abc::pass::{GaussianAbcOptions, SoftAbcOptions, SvtAbcOptions};
pub use dpinfer::mcmc::run::{DpBarkerOptions, DpHmcOptions, DpPenaltyOptions, RwmhOptions};
pub use gaussian::GaussianAbc;
pub use rejection::Rejection;
pub use smc::SmcAbc;
pub use soft::SoftAbc;
pub use sppe::Neural;
pub use svt::SvtAbc;

/// Declares [`SamplerConfig`] and [`SamplerKind`] from one list: variant, struct, `kind` name,
/// its family (`as pass`: a private pass over the pairs table, the struct is a [`PairsPass`];
/// `as mcmc`: an MCMC chain, the struct is an [`Mcmc`] of a [`McmcKernel`]), and for a
/// non-private baseline the keys of its private siblings it ignores.
macro_rules! samplers {
    (@pass $s:ident pass) => { Some($s) };
    (@pass $s:ident $($f:ident)?) => { None };
    (@mcmc $s:ident mcmc) => { Some((&$s.chain, &$s.kernel as &dyn McmcKernel)) };
    (@mcmc $s:ident $($f:ident)?) => { None };
    (@seq $s:ident sequential) => { Some($s) };
    (@seq $s:ident $($f:ident)?) => { None };
    (@is pass pass) => { true };
    (@is mcmc mcmc) => { true };
    (@is sequential sequential) => { true };
    (@is $want:ident $($f:ident)?) => { false };
    (@has $want:ident) => { false };
    (@has private private $($r:ident)*) => { true };
    (@has delta delta $($r:ident)*) => { true };
    (@has release release $($r:ident)*) => { true };
    (@has $want:ident $f:ident $($r:ident)*) => { samplers!(@has $want $($r)*) };
    ($($(#[$doc:meta])* $v:ident($t:ty) = $name:literal $(as $fam:ident $(, $flag:ident)*)? $(ignoring $sib:expr)?;)+) => {
        /// `[sampler]`, by `kind`.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(tag = "kind")]
        pub enum SamplerConfig {
            $($(#[$doc])* #[serde(rename = $name)] $v($t),)+
        }

        /// The sampler families (the `kind` of a [`SamplerConfig`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum SamplerKind {
            $($(#[$doc])* $v,)+
        }

        /// The `kind` names.
        const KINDS: &[&str] = &[$($name),+];

        impl SamplerKind {
            /// Samplers whose private step is one private pass over the pairs table
            /// ([`PairsPass`]).
            #[must_use]
            pub fn is_pass(self) -> bool {
                match self {
                    $(Self::$v => samplers!(@is pass $($fam)?),)+
                }
            }

            /// MCMC samplers ([`McmcKernel`]; they need a per-row likelihood).
            #[must_use]
            pub fn is_mcmc(self) -> bool {
                match self {
                    $(Self::$v => samplers!(@is mcmc $($fam)?),)+
                }
            }

            /// The sequential samplers ([`Sequential`]): the ones that may take a
            /// `privacy.release` (inference from a privatized statistic).
            #[must_use]
            pub fn takes_release(self) -> bool {
                match self {
                    $(Self::$v => samplers!(@is sequential $($fam)?),)+
                }
            }

            /// Samplers that release something computed from private data (registered
            /// `private`; SMC-ABC, SPPE and SPLE post-process an observation or a release
            /// made before them).
            #[must_use]
            pub fn is_private(self) -> bool {
                match self {
                    $(Self::$v => samplers!(@has private $($($flag)*)?),)+
                }
            }

            /// Samplers with an (ε, δ) guarantee (registered `delta`: δ > 0 required).
            #[must_use]
            pub fn needs_delta(self) -> bool {
                match self {
                    $(Self::$v => samplers!(@has delta $($($flag)*)?),)+
                }
            }

            /// Samplers that infer from a privatized statistic only (registered `release`:
            /// `privacy.release` required; the neural samplers SPPE and SPLE).
            #[must_use]
            pub fn needs_release(self) -> bool {
                match self {
                    $(Self::$v => samplers!(@has release $($($flag)*)?),)+
                }
            }
        }

        impl SamplerConfig {
            /// The kind.
            #[must_use]
            pub fn kind(&self) -> SamplerKind {
                match self {
                    $(Self::$v(_) => SamplerKind::$v,)+
                }
            }

            /// The `kind` name as written in the config.
            #[must_use]
            pub fn name(&self) -> &'static str {
                match self {
                    $(Self::$v(_) => $name,)+
                }
            }

            /// The sampler as a private pass over the pairs table, if it is one.
            #[must_use]
            pub fn pairs_pass(&self) -> Option<&dyn PairsPass> {
                match self {
                    $(Self::$v(_s) => samplers!(@pass _s $($fam)?),)+
                }
            }

            /// The sampler as a sequential sampler, if it is one.
            #[must_use]
            pub fn sequential(&self) -> Option<&dyn Sequential> {
                match self {
                    $(Self::$v(_s) => samplers!(@seq _s $($fam)?),)+
                }
            }

            /// The sampler as an MCMC chain, if it is one: its [`Chain`] keys and its kernel.
            #[must_use]
            pub fn mcmc(&self) -> Option<(&Chain, &dyn McmcKernel)> {
                match self {
                    $(Self::$v(_s) => samplers!(@mcmc _s $($fam)?),)+
                }
            }

            /// Table `t` (without `kind`) as the struct of `kind`; `None` for an unknown kind.
            fn parse(kind: &str, mut t: toml::Table, warn: &mut Vec<String>) -> Option<Result<Self, String>> {
                let tag = format!("kind = {kind:?}");
                match kind {
                    $($name => {
                        $(ignore(&mut t, warn, kind, $sib);)?
                        Some(variant("sampler", &tag, t).map(Self::$v))
                    })+
                    _ => None,
                }
            }
        }
    };
}

samplers! {
    /// Non-private rejection ABC over the public pairs (nearest `accept`).
    Rejection(Rejection) = "rejection" ignoring rejection::SIBLING_KEYS;
    /// ABCDP: sparse vector over the pairs (Park et al. 2021, Algorithm 1).
    SvtAbc(SvtAbc) = "svt-abc" as pass, private;
    /// Soft ABCDP: Gaussian noisy distances, weights.
    SoftAbc(SoftAbc) = "soft-abc" as pass, private, delta;
    /// Gaussian rejection ABCDP.
    GaussianAbc(GaussianAbc) = "gaussian-abc" as pass, private;
    /// SMC-ABC (non-private, or on privatized data).
    SmcAbc(SmcAbc) = "smc-abc" as sequential;
    /// Random-walk Metropolis (non-private).
    Rwmh(Mcmc<RwmhOptions>) = "rwmh" as mcmc ignoring rwmh::SIBLING_KEYS;
    /// DP penalty algorithm.
    DpPenalty(Mcmc<DpPenaltyOptions>) = "dp-penalty" as mcmc, private, delta;
    /// DP Barker.
    DpBarker(Mcmc<DpBarkerOptions>) = "dp-barker" as mcmc, private, delta;
    /// DP HMC.
    DpHmc(Mcmc<DpHmcOptions>) = "dp-hmc" as mcmc, private, delta;
    /// SPPE: sequential neural posterior estimation on a privatized statistic (Xiong, Ju &
    /// Zhang, Algorithm 1).
    Sppe(Neural) = "sppe" as sequential, release;
    /// SPLE: sequential neural likelihood estimation on a privatized statistic (Xiong, Ju &
    /// Zhang, Algorithm 2).
    Sple(Neural) = "sple" as sequential, release;
}

impl SamplerKind {
    /// Samplers whose only private step is a pass over public pairs (shardable).
    #[must_use]
    pub fn uses_pairs(self) -> bool {
        self == Self::Rejection || self.is_pass()
    }
}

/// Removes `keys` from `t`, with a warning naming them (a non-private baseline ignoring its
/// private siblings' keys).
fn ignore(t: &mut toml::Table, warn: &mut Vec<String>, kind: &str, keys: &[&str]) {
    let gone: Vec<String> = keys
        .iter()
        .filter_map(|k| t.remove(*k).map(|_| format!("sampler.{k}")))
        .collect();
    if !gone.is_empty() {
        let s = if gone.len() == 1 { "es" } else { "" };
        let gone = gone.join(", ");
        warn.push(format!(
            "{gone} do{s} not apply to the non-private sampler {kind}; ignored"
        ));
    }
}

impl SamplerConfig {
    /// Reads the `[sampler]` table (see the module docs); warnings go to `warn`.
    ///
    /// # Errors
    /// A missing or unknown `kind`, unknown keys (named), values of the wrong type.
    pub fn read(mut t: toml::Table, warn: &mut Vec<String>) -> Result<Self, String> {
        let kinds = KINDS.join(", ");
        let kind = take_tag(&mut t, "sampler", "kind")?
            .ok_or_else(|| format!("[sampler] needs a kind (one of {kinds})"))?;
        Self::parse(&kind, t, warn)
            .unwrap_or_else(|| Err(format!("unknown sampler.kind {kind:?} (expected {kinds})")))
    }

    /// Public (θ, simulation) pairs T per table: required by the pairs samplers, optional
    /// for SMC-ABC (set: the sharded PMC with T proposals per generation).
    #[must_use]
    pub fn pairs(&self) -> Option<usize> {
        match self {
            Self::Rejection(s) => Some(s.pairs),
            Self::SmcAbc(s) => s.pairs,
            _ => self.pairs_pass().map(PairsPass::pairs),
        }
    }

    /// `sampler.clip` of the private ABC passes.
    #[must_use]
    pub fn clip(&self) -> Option<f64> {
        self.pairs_pass().and_then(PairsPass::clip)
    }

    /// A fixed sampler section, for fingerprints that must not depend on sampler settings.
    #[must_use]
    pub fn release_key() -> Self {
        Self::SmcAbc(SmcAbc::default())
    }

    /// The library's checks of the settings, made before the data are read: the private
    /// passes' with the distance's sensitivity still unknown ([`Calibration::nominal`]; the
    /// pass checks again when it is built), SMC's, and the MCMC run settings and accounting
    /// (the MCMC kernels are checked when the chain is built, before any noise).
    ///
    /// # Errors
    /// The first invalid setting, named by its key.
    pub fn check(&self, epsilon: f64, delta: f64) -> Result<()> {
        let nonzero = |name: &str, v: usize| {
            if v == 0 {
                bail!(
                    key = format!("sampler.{name}");
                    "sampler.{name} must be a positive integer for {}",
                    self.name()
                );
            }
            Ok(())
        };
        if let Some(p) = self.pairs_pass() {
            nonzero("pairs", p.pairs())?;
            return p.check(Calibration::nominal(epsilon, delta, p.clip())?);
        }
        if let Some((chain, kernel)) = self.mcmc() {
            chain.check()?;
            return kernel
                .kernel(dpinfer::mcmc::run::Target { epsilon, delta })
                .map(|_| ());
        }
        if let Some(s) = self.sequential() {
            return s.check(self.name());
        }
        match self {
            Self::Rejection(s) => nonzero("pairs", s.pairs),
            // Every other kind belongs to a family, checked above.
            _ => Ok(()),
        }
    }

    /// The counts of `[sampler]` with their bounds (`crate::limits`): key, value, bound.
    #[must_use]
    pub fn limits(&self) -> Vec<Limit> {
        use crate::limits::{MAX_ITERATIONS, MAX_PARTICLES};
        if let Some(p) = self.pairs_pass() {
            return p.limits();
        }
        if let Some((c, k)) = self.mcmc() {
            let mut v = vec![
                ("sampler.iterations", c.iterations, MAX_ITERATIONS),
                ("sampler.burn_in", c.burn_in, MAX_ITERATIONS),
            ];
            v.extend(k.limits());
            return v;
        }
        if let Some(s) = self.sequential() {
            return s.limits();
        }
        match self {
            Self::Rejection(s) => vec![("sampler.accept", as_u64(s.accept), MAX_PARTICLES)],
            // Every other kind belongs to a family, bounded above.
            _ => Vec::new(),
        }
    }
}

/// The [`PairsPass`] methods every pass's table shares: `pairs` and `clip` from its fields of
/// those names, `check` and `build` through its conversion into the library settings
/// `$settings` and the library pass `$pass` (`$pass::new(pairs, dist, settings)`).
macro_rules! pairs_pass {
    ($settings:ty, $($pass:ident)::+) => {
        fn pairs(&self) -> usize {
            self.pairs
        }

        fn clip(&self) -> Option<f64> {
            self.clip
        }

        fn check(&self, cal: $crate::sampler::Calibration) -> $crate::error::Result<()> {
            <$settings>::try_from($crate::sampler::With(self, cal)).map(|_| ())
        }

        fn build<'a>(
            &self,
            pairs: &'a dpinfer::abc::pairs::PublicPairs,
            dist: $crate::private::ObservedDistance<'a>,
            cal: $crate::sampler::Calibration,
        ) -> $crate::error::Result<Box<$crate::sampler::LibraryPass<'a>>> {
            let settings: $settings = $crate::sampler::With(self, cal).try_into()?;
            Ok(Box::new(
                $($pass)::+::new(pairs, dist, settings)
                    .map_err(|e| $crate::sampler::build_error(e, self))?,
            ))
        }
    };
}
pub(crate) use pairs_pass;

/// A count of `[sampler]` with its bound (`crate::limits`): key, value (`None`: unset), bound.
pub type Limit = (&'static str, Option<u64>, u64);

/// A count as the limits' `u64`.
pub(crate) fn as_u64(v: Option<usize>) -> Option<u64> {
    v.map(|x| x as u64)
}

/// An MCMC kernel's `[sampler]` keys (one file in `src/sampler/`, the struct `K` of an
/// [`Mcmc<K>`] table) as the library's [`Kernel`](dpinfer::mcmc::run::Kernel). The pipeline
/// checks, bounds, builds and runs every MCMC sampler through this trait and the [`Chain`]
/// keys beside it; adding one is its library kernel, its config file implementing this trait,
/// one line `Variant(Mcmc<Struct>) = "kind" as mcmc;` in `samplers!` and its Python binding.
pub trait McmcKernel {
    /// Counts bounds of the kernel's own keys (`crate::limits`).
    fn limits(&self) -> Vec<Limit> {
        Vec::new()
    }

    /// The library kernel for the budget `target` (unset keys keep the library's
    /// defaults). The library checks the rest when the chain is built, before any noise.
    ///
    /// # Errors
    /// A setting the conversion refuses, named by its key.
    fn kernel(&self, target: dpinfer::mcmc::run::Target) -> Result<dpinfer::mcmc::run::Kernel>;
}

/// A sequential sampler's `[sampler]` table (one file in `src/sampler/`): SMC-ABC (and its
/// sharded PMC), SPPE, SPLE — post-processing of the observed data or of a statistic
/// released once before it (`privacy.release`, whose mechanism the sampler simulates). The
/// pipeline checks, bounds and runs every such sampler through this trait; adding one is its
/// library file, its config file implementing this trait, one line `Variant(Struct) =
/// "kind" as sequential;` in `samplers!` (`, release` if it needs a `privacy.release`) and
/// its Python binding.
pub trait Sequential {
    /// Counts bounds of the table's keys (`crate::limits`); none where the library bounds
    /// every count of its settings.
    fn limits(&self) -> Vec<Limit> {
        Vec::new()
    }

    /// The library's checks of the settings for the sampler `kind` (its `kind` name).
    ///
    /// # Errors
    /// The first invalid setting, named by its key.
    fn check(&self, kind: &str) -> Result<()>;

    /// Runs the sampler on `on` (the outcome's ledger is the caller's when there is a
    /// release).
    ///
    /// # Errors
    /// Settings the library refuses, a release the sampler needs and does not have,
    /// simulator failures, I/O.
    fn run(&self, on: &SequentialRun<'_>) -> Result<crate::results::Outcome>;
}

/// What a [`Sequential`] sampler runs on.
#[derive(Clone, Copy)]
pub struct SequentialRun<'a> {
    /// The config (its `[sampler]` is the sampler's).
    pub cfg: &'a crate::Config,
    /// The model.
    pub model: &'a crate::model::Model,
    /// The observed data, or the statistic released by `mech`.
    pub target: &'a [f64],
    /// The mechanism of `privacy.release`, if the config has one.
    pub mech: Option<&'a crate::release::Mech>,
    /// The results folder, held locked by the caller.
    pub dir: &'a std::path::Path,
    /// Simulation threads (0 = all cores).
    pub threads: usize,
    /// Progress.
    pub observer: &'a dyn crate::observe::Observer,
}

impl core::fmt::Debug for SequentialRun<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SequentialRun")
            .field("sampler", &self.cfg.sampler.name())
            .field("target", &self.target)
            .field("released", &self.mech.is_some())
            .field("dir", &self.dir)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

/// A sampler whose private step is one pass over the public pairs table: its `[sampler]`
/// table (one file in `src/sampler/`) as the library's
/// [`PrivatePass`](dpinfer::abc::pass::PrivatePass). The pipeline checks, bounds, builds,
/// claims and releases every such pass through this trait; adding one is its library file,
/// its config file implementing this trait, one line `Variant(Struct) = "kind" as pass;` in
/// `samplers!` and its Python binding.
pub trait PairsPass {
    /// Public (θ, simulation) pairs T.
    fn pairs(&self) -> usize;

    /// `sampler.clip`, the clipping bound of the distance (default: the distance's own).
    fn clip(&self) -> Option<f64>;

    /// Counts the config bounds (`crate::limits`): key, value, bound.
    fn limits(&self) -> Vec<Limit> {
        Vec::new()
    }

    /// The library's checks of the settings under `cal` (before the data are read:
    /// [`Calibration::nominal`]).
    ///
    /// # Errors
    /// The first invalid setting, named by its key.
    fn check(&self, cal: Calibration) -> Result<()>;

    /// The library's pass over `pairs` with the distance to the observed data (every check of
    /// the real pass; no noise drawn).
    ///
    /// # Errors
    /// Settings or a calibration the library refuses.
    fn build<'a>(
        &self,
        pairs: &'a dpinfer::abc::pairs::PublicPairs,
        dist: crate::private::ObservedDistance<'a>,
        cal: Calibration,
    ) -> Result<Box<LibraryPass<'a>>>;

    /// The ledger's description of the mechanism, ending with the distance's `scope`.
    fn mechanism(&self, scope: &str) -> String;
}

/// The library's private pass as the pipeline runs it: noise from the pipeline's ChaCha20.
pub type LibraryPass<'a> = dyn dpinfer::abc::pass::PrivatePass<chacha20::ChaCha20Rng> + 'a;

/// A sampler table `.0` with what its conversion into the library's settings needs from
/// outside `[sampler]` (`.1`: the [`Calibration`] of an ABC pass, the MCMC
/// [`Target`](dpinfer::mcmc::run::Target)).
#[derive(Debug, Clone, Copy)]
pub struct With<'a, S, C>(pub &'a S, pub C);

/// What a private ABC pass needs besides `[sampler]`: the budget and the distance's
/// calibration (known once the observed data are embedded).
#[derive(Debug, Clone, Copy)]
pub struct Calibration {
    /// `privacy.epsilon`.
    pub epsilon: f64,
    /// `privacy.delta`.
    pub delta: f64,
    /// Sensitivity Δ of the (clipped) distance, with its neighbouring relations.
    pub sensitivity: dpinfer::distances::Sensitivity,
    /// Clipping bound: `sampler.clip`, at most the distance's own bound.
    pub clip: f64,
}

impl Calibration {
    /// The calibration before the data are read: Δ = 1 (for any pair of data sets) and the
    /// configured clip (else the largest finite bound) stand in for the distance's, so every
    /// other setting is checked.
    ///
    /// # Errors
    /// None in practice (Δ = 1 is a valid sensitivity); an [`Error`](crate::Error) if it were not.
    pub fn nominal(epsilon: f64, delta: f64, clip: Option<f64>) -> Result<Self> {
        use dpinfer::distances::{Relations, Sensitivity};
        Ok(Self {
            epsilon,
            delta,
            sensitivity: Sensitivity::declared(1.0, Relations::ANY_PAIR)?,
            clip: clip.unwrap_or(f64::MAX),
        })
    }

    /// Refuses a threshold at or above the clipping bound (every pair would pass).
    fn threshold(&self, epsilon_abc: f64) -> Result<()> {
        if epsilon_abc >= self.clip {
            bail!(
                key = "sampler.epsilon_abc"; "sampler.epsilon_abc = {epsilon_abc:?} must be below the distance's clipping \
                 bound {:?}: every pair would pass",
                self.clip
            );
        }
        Ok(())
    }
}

/// A library error that may be about one of the library's settings, the setting's name as
/// data (the libraries' `InvalidParameter { name, .. }`), read by [`setting_error`].
pub(crate) trait SettingError: core::fmt::Display {
    /// The prefix of a message about anything else (`sampler: …`, `mcmc: …`).
    const FAMILY: &'static str;

    /// The library's name of the setting the error is about, if it is about one.
    fn setting(&self) -> Option<&'static str>;

    /// The message about the setting under its config name `key`.
    fn about(&self, key: &str) -> String;
}

impl SettingError for dpinfer::abc::AbcError {
    const FAMILY: &'static str = "sampler";

    fn setting(&self) -> Option<&'static str> {
        match *self {
            Self::InvalidParameter { name, .. }
            | Self::InvalidCount { name, .. }
            | Self::Mechanism {
                setting: Some((name, _)),
                ..
            } => Some(name),
            _ => None,
        }
    }

    fn about(&self, key: &str) -> String {
        match self {
            Self::InvalidParameter { value, .. } => format!("{key} = {value:?} is invalid"),
            Self::InvalidCount { value, .. } => format!("{key} = {value} is invalid"),
            Self::Mechanism {
                setting: Some((_, value)),
                error,
            } => format!(
                "{key} = {value:?}: the privacy mechanism rejected the noise parameters it \
                 gives: {error}"
            ),
            e => format!("{key}: {e}"),
        }
    }
}

/// An error of the library pass's constructor (`new(pairs, dist, settings)`) for the table
/// `table`: a mechanism that rejected the noise parameters a setting gives
/// ([`AbcError::Mechanism`](dpinfer::abc::AbcError::Mechanism) naming it) is a config error
/// about that setting's key ([`setting_error`]: `privacy.epsilon` for an extreme budget);
/// anything else stays the library's error.
pub(crate) fn build_error<T: Serialize + ?Sized>(
    e: dpinfer::abc::AbcError,
    table: &T,
) -> crate::Error {
    match e {
        dpinfer::abc::AbcError::Mechanism {
            setting: Some(_), ..
        } => setting_error(&e, table),
        e => e.into(),
    }
}

impl SettingError for dpinfer::mcmc::McmcError {
    const FAMILY: &'static str = "mcmc";

    fn setting(&self) -> Option<&'static str> {
        match *self {
            Self::InvalidParameter { name, .. }
            | Self::InvalidSize { name, .. }
            | Self::WrongLength { name, .. } => Some(name),
            // The iteration count the budget allows: about the budget.
            Self::BudgetExhausted { .. } => Some("epsilon"),
            _ => None,
        }
    }

    fn about(&self, key: &str) -> String {
        match self {
            Self::InvalidSize {
                name: "iterations" | "burn_in",
                value,
            } => format!("{key} = {value} must be positive and burn_in < iterations"),
            Self::InvalidSize { value, .. } => format!("{key} = {value} is invalid"),
            Self::InvalidParameter { value, .. } => format!("{key} = {value:?} is invalid"),
            Self::BudgetExhausted { allowed } => format!(
                "the privacy budget allows only {allowed} iteration{}; increase {key} or the \
                 noise multiplier",
                if *allowed == 1 { "" } else { "s" }
            ),
            // The library's text names the setting: `init has 3 values, θ has 2`.
            e => format!("{}{e}", key.trim_end_matches(|c| c != '.')),
        }
    }
}

impl SettingError for dpinfer_neural::NeuralError {
    const FAMILY: &'static str = "sampler";

    fn setting(&self) -> Option<&'static str> {
        match *self {
            // A name may be followed by words (`hidden units`).
            Self::Dimension { name, .. } | Self::Setting { name, .. } => name.split(' ').next(),
            Self::TooFewPairs { .. } => Some("simulations"),
            _ => None,
        }
    }

    fn about(&self, key: &str) -> String {
        format!("{key}: {self}")
    }
}

/// Library setting names that differ from their `[sampler]` key: the library's name, the
/// key's (`bound` of the soft and Gaussian passes is `sampler.clip`, the penalty kernel's
/// `clip` is `sampler.ratio_clip`, SMC's `max_generations`/`simulation_budget` are
/// `sampler.generations`/`sampler.simulations`, the neural samplers' `posterior_draws` (`n`)
/// is `sampler.samples`, DP Barker's `shear.a`/`shear.m` are `sampler.shear`). Looked up
/// only when the sampler's table has no key of the library's name.
const RENAMED: &[(&str, &str)] = &[
    ("bound", "clip"),
    ("clip", "ratio_clip"),
    ("leapfrog", "leapfrog_steps"),
    ("max_generations", "generations"),
    ("simulation_budget", "simulations"),
    ("posterior_draws", "samples"),
    ("n", "samples"),
    ("shear.a", "shear"),
    ("shear.m", "shear"),
];

/// A library error `e` raised while checking, building or running the sampler of table
/// `table` as a config error about its key, when it is about a setting: the budget
/// (`epsilon`, `delta`, their `_total`) is `privacy.epsilon`/`privacy.delta`; a key of
/// `table`'s serde form (or its [`RENAMED`] key) is `sampler.<key>`; the distance's
/// sensitivity is a calibration, named in words without a key; anything else keeps the
/// library's text after [`SettingError::FAMILY`]. The one map from library errors to config
/// keys: the key is data from the library's error and the table's own field names.
pub(crate) fn setting_error<E: SettingError, T: Serialize + ?Sized>(
    e: &E,
    table: &T,
) -> crate::Error {
    use crate::error::err;
    let other = || err!("{}: {e}", E::FAMILY);
    let Some(name) = e.setting() else {
        return other();
    };
    match name {
        "epsilon" | "epsilon_total" => {
            return err!(key = "privacy.epsilon"; "{}", e.about("privacy.epsilon"));
        }
        "delta" | "delta_total" => {
            return err!(key = "privacy.delta"; "{}", e.about("privacy.delta"));
        }
        "sensitivity" => {
            return crate::Error::Config {
                key: None,
                message: e.about("the distance's sensitivity"),
            };
        }
        _ => {}
    }
    let Ok(serde_json::Value::Object(keys)) = serde_json::to_value(table) else {
        return other();
    };
    let renamed = RENAMED.iter().find(|(from, _)| *from == name).map(|r| r.1);
    match [Some(name), renamed]
        .into_iter()
        .flatten()
        .find(|k| keys.contains_key(*k))
    {
        Some(k) => {
            let key = format!("sampler.{k}");
            err!(key = key.clone(); "{}", e.about(&key))
        }
        None => other(),
    }
}

/// Removes the tag key `tag` of table `[section]` and returns its string value.
///
/// # Errors
/// A tag that is not a string.
pub(crate) fn take_tag(
    t: &mut toml::Table,
    section: &str,
    tag: &str,
) -> Result<Option<String>, String> {
    match t.remove(tag) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(format!(
            "{section}.{tag} must be a string, not {}",
            v.type_str()
        )),
    }
}

/// Reads the rest of table `[section]` (its tag removed) as `T`, naming the section and the
/// tag (`tag`, e.g. `kind = "svt-abc"`; empty for none) in any error: an unknown key reads
/// "unknown field `x` in [section] (tag): expected one of …".
///
/// # Errors
/// Unknown keys, missing required keys, values of the wrong type.
pub(crate) fn variant<T: DeserializeOwned>(
    section: &str,
    tag: &str,
    t: toml::Table,
) -> Result<T, String> {
    toml::Value::Table(t)
        .try_into()
        .map_err(|e: toml::de::Error| {
            let m = e.message().trim_end().to_string();
            let tag = if tag.is_empty() {
                String::new()
            } else {
                format!(" ({tag})")
            };
            match m.strip_prefix("unknown field ") {
                Some(rest) => format!("unknown field {rest}")
                    .replacen(", expected", &format!(" in [{section}]{tag}: expected"), 1)
                    .replacen(", there are no fields", &format!(" in [{section}]{tag}"), 1),
                None => format!("[{section}]{tag}: {m}"),
            }
        })
}

/// Deserializes a table through `read` (a [`SamplerConfig::read`]-like function) inside serde.
pub(crate) fn read_table<'de, D, T>(
    d: D,
    read: impl FnOnce(toml::Table, &mut Vec<String>) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let t = toml::Table::deserialize(d)?;
    let mut warn = Vec::new();
    let v = read(t, &mut warn).map_err(D::Error::custom)?;
    for w in warn {
        warning(&w);
    }
    Ok(v)
}

std::thread_local! {
    /// The warnings of the config being parsed on this thread by [`collect_warnings`]
    /// (`None`: not collecting, warnings go to stderr).
    static WARNINGS: core::cell::RefCell<Option<Vec<String>>> =
        const { core::cell::RefCell::new(None) };
}

/// A config warning: collected while [`collect_warnings`] runs on this thread, else printed
/// to stderr (a `[sampler]` table deserialised directly, outside [`Config::parse_with`]).
///
/// [`Config::parse_with`]: crate::Config::parse_with
fn warning(w: &str) {
    let kept = WARNINGS.with(|c| match c.borrow_mut().as_mut() {
        Some(v) => {
            v.push(w.to_string());
            true
        }
        None => false,
    });
    if !kept {
        crate::errln!("warning: {w}");
    }
}

/// Runs `f` (a deserialisation on this thread) and returns its result with the config
/// warnings it raised, in order.
pub(crate) fn collect_warnings<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    /// Stops collecting (and restores an outer collection) even if `f` unwinds.
    struct Restore(Option<Vec<String>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            WARNINGS.with(|c| *c.borrow_mut() = outer);
        }
    }
    let outer = WARNINGS.with(|c| c.borrow_mut().replace(Vec::new()));
    let restore = Restore(outer);
    let out = f();
    let mine = WARNINGS.with(|c| c.borrow_mut().take()).unwrap_or_default();
    drop(restore);
    (out, mine)
}

impl<'de> Deserialize<'de> for SamplerConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_table(d, Self::read)
    }
}

/// An MCMC sampler's `[sampler]` table: the [`Chain`] keys and the kernel's own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mcmc<K> {
    /// Run length and start.
    #[serde(flatten)]
    pub chain: Chain,
    /// The kernel's keys.
    #[serde(flatten)]
    pub kernel: K,
}

/// Reads an MCMC table: the [`Chain`] keys, then the kernel's (unknown keys refused).
impl<'de, K: DeserializeOwned> Deserialize<'de> for Mcmc<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = toml::Table::deserialize(d)?;
        let (chain, kernel) = split::<D, _, _>(t, &["iterations", "burn_in", "init"])?;
        Ok(Self { chain, kernel })
    }
}

/// Table `t` as the shared keys `keys` (read as `A`) and the rest (read as `B`), each with
/// unknown keys refused; an unknown key's message lists `keys` too.
fn split<'de, D: Deserializer<'de>, A: DeserializeOwned, B: DeserializeOwned>(
    mut t: toml::Table,
    keys: &[&str],
) -> Result<(A, B), D::Error> {
    let mut shared = toml::Table::new();
    for k in keys {
        if let Some(v) = t.remove(*k) {
            shared.insert((*k).into(), v);
        }
    }
    let also = format!(", expected {} or one of", keys.join(", "));
    let err =
        |e: toml::de::Error| D::Error::custom(e.message().replacen(", expected one of", &also, 1));
    Ok((
        toml::Value::Table(shared).try_into().map_err(err)?,
        toml::Value::Table(t).try_into().map_err(err)?,
    ))
}

/// A private pass's `[sampler]` table: the pairs, the library's options of the pass (`O`:
/// `dpinfer::abc::pass::{SvtAbcOptions, SoftAbcOptions, GaussianAbcOptions}`) and the clip,
/// serialized in that order (the keys of the earlier flat structs, in their order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pass<O> {
    /// Public (θ, simulation) pairs T.
    pub pairs: usize,
    /// The pass's own keys.
    #[serde(flatten)]
    pub options: O,
    /// Clipping bound of the distance (default: the distance's own bound).
    pub clip: Option<f64>,
}

/// The keys every pass's table has besides the library's options.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PassKeys {
    pairs: usize,
    clip: Option<f64>,
}

/// Reads a pass's table: `pairs` and `clip`, then the library's options (unknown keys
/// refused).
impl<'de, O: DeserializeOwned> Deserialize<'de> for Pass<O> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = toml::Table::deserialize(d)?;
        let (PassKeys { pairs, clip }, options) = split::<D, _, _>(t, &["pairs", "clip"])?;
        Ok(Self {
            pairs,
            options,
            clip,
        })
    }
}

/// `[sampler]` keys every MCMC sampler takes: the run length and the start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chain {
    /// Iterations (private samplers: capped by the budget; default: the library's).
    pub iterations: Option<u64>,
    /// Burn-in iterations dropped from the samples (default: the library's, half).
    pub burn_in: Option<u64>,
    /// Initial θ (a public choice; default: the prior's centre).
    pub init: Option<Vec<f64>>,
}

impl Chain {
    /// The library's run settings (unset keys keep its defaults) with the run seed.
    #[must_use]
    pub fn settings(&self, seed: u64) -> dpinfer::mcmc::run::RunSettings {
        let d = dpinfer::mcmc::run::RunSettings::default();
        dpinfer::mcmc::run::RunSettings {
            iterations: self.iterations.unwrap_or(d.iterations),
            burn_in: self.burn_in,
            seed,
            ..d
        }
    }

    /// The library's run-settings checks.
    ///
    /// # Errors
    /// `iterations` of 0, `burn_in ≥ iterations`.
    pub fn check(&self) -> Result<()> {
        self.settings(0)
            .validate()
            .map_err(|e| setting_error(&e, self))
    }
}
