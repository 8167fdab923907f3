//! The pipeline's error type: one variant per cause a caller can act on.
//!
//! | variant | cause | what a caller can do |
//! |---|---|---|
//! | [`Error::Config`], [`Error::Toml`] | an invalid config key or setting (the message names the key, e.g. `privacy.delta must be in [0, 1), got 2.0`, and the key is data: `Error::Config { key, .. }`, [`Error::config_key`]); TOML the config parser refused (syntax, a wrong type, an unknown key named with its section) — [`Error::is_config`] is either | fix the config |
//! | [`Error::Data`] | invalid observed data, pairs table or population file (the message names the file and line or row) | fix or regenerate the file |
//! | [`Error::Ledger`] | `dpinfer-ledger`: a **refused** release ([`Error::is_refused_release`]: [`dpinfer_ledger::Error::AlreadyReleased`], [`dpinfer_ledger::Error::Unfinished`], [`dpinfer_ledger::Error::DifferentInput`], …), the results folder's lock and writes, shard files, and the capped reads of every input file (config, data, population) | a refused release: use another results folder; never expect a retry in the same folder to draw noise |
//! | [`Error::Worker`], [`Error::Simulator`] | a simulator worker process or a simulator failed | fix the model program or its parameters |
//! | [`Error::Abc`], [`Error::Mcmc`], [`Error::Accountant`], [`Error::Distance`], [`Error::Mechanism`], [`Error::Plot`], [`Error::Calibration`], [`Error::Model`], [`Error::Summary`] | a library crate refused its input | as the library's error says |
//! | [`Error::Io`], [`Error::Json`], [`Error::Arrow`], `Error::Parquet` | I/O (with the path when known) and file formats | |
//! | [`Error::OutOfMemory`], [`Error::Overflow`], [`Error::Threads`], [`Error::Entropy`], [`Error::Internal`] | resources, OS randomness, a broken invariant (a bug; nothing was released) | |
//! | [`Error::Context`] | what was being done, around the error underneath | [`Error::root`] is the cause |
//!
//! Messages: `Display` of a variant prints its own message only; a wrapped library error is
//! *transparent* (its `Display` and its [`source`](core::error::Error::source) are the
//! wrapped error's), and [`Error::Context`] prints its context and has the wrapped error as
//! its source. `{:#}` prints the whole chain, `": "`-separated, exactly as `anyhow`'s `{:#}`
//! prints it for an `anyhow::Error` made from this one: `context: cause: cause's cause`, the
//! text the `dpinfer` command prints.
//!
//! Inside the crate, the [`Context`] extension trait adds `.context(..)` and
//! `.with_context(..)` to results (and to options: a missing value is an [`Error::Config`]
//! about no one key; a required key left out names it, `ok_or_else(|| err!(key = …; …))`),
//! and `bail!`, `ensure!` and `err!` build messages (`bail!(key = k; "…")` is an
//! [`Error::Config`] error about key `k`, `bail!("…")` one about no one key, `bail!(Data, "…")`
//! names the variant).

use core::fmt;
use std::path::PathBuf;

use dpinfer::abc::AbcError;
use dpinfer::accountants::AccountantError;
use dpinfer::distances::DistanceError;
use dpinfer::mcmc::McmcError;
use dpinfer::mechanisms::MechanismError;
use dpinfer::simulators::SimError;
use dpinfer::simulators::models::registry::ModelError;
use dpinfer::simulators::summaries::SummaryError;
use dpinfer_plots::PlotError;
use dpinfer_workers::WorkerError;

/// A pipeline result.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// Why a pipeline step failed. See the [module documentation](self) for what each variant
/// means to a caller; [`Error::root`] looks through [`Error::Context`] layers.
///
/// ```
/// use std::path::Path;
/// use dpinfer_pipeline::{Config, Error};
///
/// let text = "[model]\nname = \"gaussian-mean\"\n[sampler]\nkind = \"rejection\"\n\
///             pairs = 100\n[privacy]\ndelta = 2.0\n";
/// let e = Config::parse(text, Path::new(".")).unwrap_err();
/// assert!(matches!(e.root(), Error::Config { key: Some(k), .. } if k == "privacy.delta"));
/// assert_eq!(e.config_key().as_deref(), Some("privacy.delta"));
/// assert_eq!(format!("{e:#}"), "privacy.delta must be in [0, 1), got 2.0");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An invalid config key or setting (or command-line setting such as a thread or shard
    /// count); the message names the key.
    Config {
        /// The config key at fault (`privacy.delta`, `sampler.c`, `model.prior`), when the
        /// error is about one: always given by the code that raised it
        /// ([`Error::config_at`]), never read back from the message.
        key: Option<String>,
        /// The message.
        message: String,
    },
    /// Invalid or unreadable data: observed data, a pairs table, a population file.
    Data(String),
    /// Not enough memory for a table the config asks for.
    OutOfMemory(String),
    /// The operating system's randomness (the privacy noise's seed) is unavailable.
    Entropy(String),
    /// A broken internal invariant (a bug; nothing was released).
    Internal(String),
    /// The results folder, its lock, the restart-safe ledger or a shard file: a refused
    /// private release (already released, unfinished, different input, changed claim) or
    /// a failed one.
    Ledger(dpinfer_ledger::Error),
    /// A simulator worker process failed.
    Worker(WorkerError),
    /// A simulator failed or refused its parameters.
    Simulator(SimError),
    /// The model registry refused a model's settings.
    Model(ModelError),
    /// A declared summary was refused.
    Summary(SummaryError),
    /// ABC (`dpinfer-abc`) refused its input.
    Abc(AbcError),
    /// MCMC (`dpinfer-mcmc`) refused its input.
    Mcmc(McmcError),
    /// A privacy accountant refused its input.
    Accountant(AccountantError),
    /// A distance refused its input.
    Distance(DistanceError),
    /// A privacy mechanism refused its input.
    Mechanism(MechanismError),
    /// A chart could not be drawn.
    Plot(PlotError),
    /// The calibration statistics refused their input (`dpinfer calibrate`).
    Calibration(dpinfer_calibration::CalibrationError),
    /// A count that does not fit the platform's integers (a table too large for a 32-bit
    /// platform).
    Overflow(core::num::TryFromIntError),
    /// The worker threads could not be started.
    Threads(rayon::ThreadPoolBuildError),
    /// I/O outside the ledger's file functions, with the path when known. Prints as the OS
    /// error (a [`Error::Context`] layer above it says what was being done).
    Io {
        /// The file or folder.
        path: Option<PathBuf>,
        /// The OS error.
        source: std::io::Error,
    },
    /// TOML syntax or a value of the wrong type in a config.
    Toml(toml::de::Error),
    /// JSON reading or writing.
    Json(serde_json::Error),
    /// An Arrow IPC file.
    Arrow(arrow_schema::ArrowError),
    /// A Parquet file.
    #[cfg(feature = "parquet")]
    Parquet(parquet::errors::ParquetError),
    /// What was being done when `source` happened.
    Context {
        /// What was being done (e.g. `invalid config run.toml`).
        context: String,
        /// The error underneath.
        source: Box<Error>,
    },
}

impl Error {
    /// The error under every [`Error::Context`] layer: the cause to match on.
    #[must_use]
    pub fn root(&self) -> &Self {
        let mut e = self;
        while let Self::Context { source, .. } = e {
            e = source;
        }
        e
    }

    /// The ledger error under the context layers, if the cause is one: a refused release is
    /// `matches!(e.ledger(), Some(dpinfer_ledger::Error::AlreadyReleased { .. }))`.
    #[must_use]
    pub fn ledger(&self) -> Option<&dpinfer_ledger::Error> {
        match self.root() {
            Self::Ledger(e) => Some(e),
            _ => None,
        }
    }

    /// `true` if the config is at fault: an invalid setting ([`Error::Config`]) or TOML the
    /// config parser refused ([`Error::Toml`]: syntax, a wrong type, an unknown key).
    #[must_use]
    pub fn is_config(&self) -> bool {
        matches!(self.root(), Self::Config { .. } | Self::Toml(_))
    }

    /// A config error about `key`.
    #[must_use]
    pub fn config_at(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Config {
            key: Some(key.into()),
            message: message.into(),
        }
    }

    /// A config error about no one key (`--threads 9999 is above …`, `sampler rejection is
    /// not a pairs-based sampler`): its key is `None`, whatever the text says. An error
    /// about a key names it as data ([`Error::config_at`], `err!(key = …; …)`); the key is
    /// never read back from a message.
    #[must_use]
    pub fn config(message: impl Into<String>) -> Self {
        Self::Config {
            key: None,
            message: message.into(),
        }
    }

    /// The config key the error is about, under the context layers: an
    /// [`Error::Config`]'s key; a model setting the registry refused (`model.name`,
    /// `model.<setting>`, `model.n`, `model.prior`); the unknown field a TOML table refused
    /// (`` unknown field `x` ``, its name as the parser gives it) or the key a `[sampler]`
    /// table's own message starts with (`unknown sampler.kind …`): TOML errors carry only
    /// text, so this is the one place a key is read from a message ([`Error::Config`]
    /// carries its key as data). `None` when the error is not about one key.
    #[must_use]
    pub fn config_key(&self) -> Option<String> {
        use dpinfer::simulators::models::registry::ModelError as M;
        match self.root() {
            Self::Config { key, .. } => key.clone(),
            Self::Model(M::UnknownName(_)) => Some("model.name".into()),
            Self::Model(M::NotApplicable { setting, .. }) => Some(format!("model.{setting}")),
            Self::Model(M::Size { .. }) => Some("model.n".into()),
            Self::Model(M::PriorNames { .. }) => Some("model.prior".into()),
            Self::Model(M::Sim(SimError::InvalidParameter { name, .. })) => {
                Some(format!("model.{name}"))
            }
            Self::Toml(e) => {
                let m = e.message();
                m.split_once("unknown field `")
                    .and_then(|(_, rest)| rest.split_once('`'))
                    .map(|(k, _)| k.to_owned())
                    .or_else(|| leading_key(m).map(str::to_owned))
                    .or_else(|| section_key(m))
            }
            _ => None,
        }
    }

    /// `true` if the ledger **refused** a private release so that no budget is spent twice:
    /// the folder holds a release of another input, an unfinished or once-only release, or a
    /// stored release that fails its checksum, claim or MAC. Retrying in the same folder will
    /// refuse again; use another results folder.
    #[must_use]
    pub fn is_refused_release(&self) -> bool {
        use dpinfer_ledger::Error as L;
        matches!(
            self.ledger(),
            Some(
                L::DifferentInput(_)
                    | L::LedgerVersion { .. }
                    | L::Unfinished { .. }
                    | L::AlreadyReleased { .. }
                    | L::ReleaseChecksum(_)
                    | L::ClaimMismatch { .. }
                    | L::MacNeedsKey(_)
                    | L::MacMissing(_)
                    | L::MacMalformed
                    | L::MacMismatch(_)
            )
        )
    }

    /// An I/O error on `path`.
    #[must_use]
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: Some(path.into()),
            source,
        }
    }

    /// `self` wrapped in a [`Error::Context`] layer.
    #[must_use]
    pub fn context(self, context: impl fmt::Display) -> Self {
        Self::Context {
            context: context.to_string(),
            source: Box::new(self),
        }
    }

    /// The wrapped library error, when this layer is transparent.
    fn transparent(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(match self {
            Self::Ledger(e) => e,
            Self::Worker(e) => e,
            Self::Simulator(e) => e,
            Self::Model(e) => e,
            Self::Summary(e) => e,
            Self::Abc(e) => e,
            Self::Mcmc(e) => e,
            Self::Accountant(e) => e,
            Self::Distance(e) => e,
            Self::Mechanism(e) => e,
            Self::Plot(e) => e,
            Self::Calibration(e) => e,
            Self::Overflow(e) => e,
            Self::Threads(e) => e,
            Self::Toml(e) => e,
            Self::Json(e) => e,
            Self::Arrow(e) => e,
            #[cfg(feature = "parquet")]
            Self::Parquet(e) => e,
            _ => return None,
        })
    }
}

impl fmt::Display for Error {
    /// This layer's message; with `{:#}` the whole chain, `": "`-separated (as `anyhow`
    /// prints it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config { message: m, .. }
            | Self::Data(m)
            | Self::OutOfMemory(m)
            | Self::Entropy(m)
            | Self::Internal(m) => f.write_str(m)?,
            Self::Io { source, .. } => write!(f, "{source}")?,
            Self::Context { context, .. } => f.write_str(context)?,
            e => match e.transparent() {
                Some(inner) => write!(f, "{inner}")?,
                None => unreachable_display(f)?,
            },
        }
        if f.alternate() {
            let mut cause = core::error::Error::source(self);
            while let Some(c) = cause {
                write!(f, ": {c}")?;
                cause = c.source();
            }
        }
        Ok(())
    }
}

/// The config sections a key starts with.
const SECTIONS: [&str; 8] = [
    "model.",
    "sampler.",
    "privacy.",
    "distance.",
    "data.",
    "seeds.",
    "output.",
    "release.",
];

/// The `section.key` (letters, digits, `_`, `.`) a TOML parser message starts with, after an
/// optional `unknown ` (`unknown sampler.kind "x"`, the text a `[sampler]` table's own
/// deserializer gives), if any. Only [`Error::config_key`] on an [`Error::Toml`] reads it:
/// an [`Error::Config`] carries its key as data.
fn leading_key(message: &str) -> Option<&str> {
    let message = message.strip_prefix("unknown ").unwrap_or(message);
    let end = message
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(message.len());
    let word = message[..end].trim_end_matches('.');
    SECTIONS
        .iter()
        .any(|s| word.starts_with(s) && word.len() > s.len())
        .then_some(word)
}

/// The key of a value a table refused, from the text the config reader gives a TOML error
/// (`[sampler] (kind = "dp-hmc"): accounting must be "pld" or "zcdp", got "rdp"` is
/// `sampler.accounting`): the section in brackets and the word before ` must be `.
fn section_key(message: &str) -> Option<String> {
    let (section, rest) = message.strip_prefix('[')?.split_once(']')?;
    let (_, rest) = rest.split_once(": ")?;
    let (word, _) = rest.split_once(" must be ")?;
    let is_key = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    is_key.then(|| format!("{section}.{word}"))
}

/// Every variant without its own message is transparent; kept total without a panic.
fn unreachable_display(f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.write_str("error")
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => source.source(),
            Self::Context { source, .. } => Some(&**source),
            e => e.transparent().and_then(core::error::Error::source),
        }
    }
}

macro_rules! from {
    ($($variant:ident($t:ty)),* $(,)?) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Self::$variant(e)
            }
        }
    )*};
}

from!(
    Ledger(dpinfer_ledger::Error),
    Worker(WorkerError),
    Simulator(SimError),
    Model(ModelError),
    Summary(SummaryError),
    Abc(AbcError),
    Mcmc(McmcError),
    Accountant(AccountantError),
    Distance(DistanceError),
    Mechanism(MechanismError),
    Plot(PlotError),
    Calibration(dpinfer_calibration::CalibrationError),
    Overflow(core::num::TryFromIntError),
    Threads(rayon::ThreadPoolBuildError),
    Toml(toml::de::Error),
    Json(serde_json::Error),
    Arrow(arrow_schema::ArrowError),
);

#[cfg(feature = "parquet")]
from!(Parquet(parquet::errors::ParquetError));

impl From<std::io::Error> for Error {
    fn from(source: std::io::Error) -> Self {
        Self::Io { path: None, source }
    }
}

/// `.context(..)` and `.with_context(..)` on results whose error converts into [`Error`]:
/// the error is wrapped in an [`Error::Context`] layer.
pub trait Context<T> {
    /// Wraps the error in `context`.
    ///
    /// # Errors
    /// The wrapped error.
    fn context<C: fmt::Display>(self, context: C) -> Result<T>;

    /// Wraps the error in the context `f` returns (called only on an error).
    ///
    /// # Errors
    /// The wrapped error.
    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, f: F) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for core::result::Result<T, E> {
    fn context<C: fmt::Display>(self, context: C) -> Result<T> {
        self.map_err(|e| e.into().context(context))
    }

    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, f: F) -> Result<T> {
        self.map_err(|e| e.into().context(f()))
    }
}

/// `.context(..)` on a missing value is an [`Error::Config`] error about no one key (`pairs
/// table size overflows`); a required key left out names its key as data instead:
/// `ok_or_else(|| err!(key = "sampler.pairs"; "sampler.pairs is required"))`.
impl<T> Context<T> for Option<T> {
    fn context<C: fmt::Display>(self, context: C) -> Result<T> {
        self.ok_or_else(|| Error::config(context.to_string()))
    }

    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, f: F) -> Result<T> {
        self.ok_or_else(|| Error::config(f().to_string()))
    }
}

/// An [`Error`] from a format string: `err!(key = k; "…", …)` is an [`Error::Config`] error
/// about key `k` ([`Error::config_at`]), `err!("…", …)` one about no one key
/// ([`Error::config`]), `err!(Data, "…", …)` an [`Error::Data`] one (any message variant by
/// name).
macro_rules! err {
    (key = $key:expr; $($arg:tt)+) => {
        $crate::error::Error::config_at($key, ::std::format!($($arg)+))
    };
    ($kind:ident, $($arg:tt)+) => {
        $crate::error::Error::$kind(::std::format!($($arg)+))
    };
    ($($arg:tt)+) => {
        $crate::error::Error::config(::std::format!($($arg)+))
    };
}

/// Returns [`err!`]`(…)` as the error.
macro_rules! bail {
    ($($arg:tt)+) => {
        return ::core::result::Result::Err($crate::error::err!($($arg)+))
    };
}

/// [`bail!`]`(…)` unless the condition holds.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            $crate::error::bail!($($arg)+);
        }
    };
}

pub(crate) use {bail, ensure, err};

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain a printer builds from `source()` (what `anyhow`'s `{:#}` prints).
    fn chain(e: &dyn core::error::Error) -> String {
        let mut s = e.to_string();
        let mut c = e.source();
        while let Some(x) = c {
            s.push_str(": ");
            s.push_str(&x.to_string());
            c = x.source();
        }
        s
    }

    /// A library error converts into its own variant and prints exactly as itself.
    fn transparent<E: core::error::Error + Into<Error> + 'static>(e: E, is: fn(&Error) -> bool) {
        let (own, expected) = (e.to_string(), chain(&e));
        let ours: Error = e.into();
        assert!(is(&ours), "{ours:?}");
        assert_eq!(ours.to_string(), own);
        assert_eq!(chain(&ours), expected);
        assert_eq!(format!("{ours:#}"), expected);
        assert!(core::ptr::eq(ours.root(), &ours));
    }

    #[test]
    fn library_errors_keep_their_variant_and_text() {
        transparent(AbcError::ZeroTotalWeight, |e| matches!(e, Error::Abc(_)));
        transparent(McmcError::InvalidInitialPoint, |e| {
            matches!(e, Error::Mcmc(_))
        });
        transparent(AccountantError::TooDeep, |e| {
            matches!(e, Error::Accountant(_))
        });
        transparent(DistanceError::Empty, |e| matches!(e, Error::Distance(_)));
        transparent(MechanismError::ZeroDenominator, |e| {
            matches!(e, Error::Mechanism(_))
        });
        transparent(PlotError::ZeroWeights, |e| matches!(e, Error::Plot(_)));
        transparent(
            SimError::DimensionMismatch {
                what: "theta",
                expected: 2,
                got: 3,
            },
            |e| matches!(e, Error::Simulator(_)),
        );
        transparent(
            WorkerError::Protocol {
                reason: "closed".into(),
            },
            |e| matches!(e, Error::Worker(_)),
        );
        transparent(ModelError::UnknownName("x".into()), |e| {
            matches!(e, Error::Model(_))
        });
        // A ledger error with a cause: the cause stays the next link of the chain.
        transparent(
            dpinfer_ledger::Error::Io {
                action: "creating /r".into(),
                source: std::io::Error::other("disk full"),
            },
            |e| matches!(e, Error::Ledger(_)),
        );
        transparent(serde_json::from_str::<u8>("x").unwrap_err(), |e| {
            matches!(e, Error::Json(_))
        });
        transparent(toml::from_str::<toml::Table>("= 1").unwrap_err(), |e| {
            matches!(e, Error::Toml(_))
        });
        transparent(u8::try_from(300_u32).unwrap_err(), |e| {
            matches!(e, Error::Overflow(_))
        });
        transparent(std::io::Error::other("gone"), |e| {
            matches!(e, Error::Io { path: None, .. })
        });
    }

    #[test]
    fn context_layers_print_as_a_chain_and_root_sees_through_them() {
        let io = std::io::Error::other("disk full");
        let e: Result<()> = Err(dpinfer_ledger::Error::Io {
            action: "writing /r/x".into(),
            source: io,
        })
        .context("writing the results");
        let e = e.with_context(|| "run 3").unwrap_err();
        assert_eq!(e.to_string(), "run 3");
        assert_eq!(
            format!("{e:#}"),
            "run 3: writing the results: writing /r/x: disk full"
        );
        assert_eq!(format!("{e:#}"), chain(&e));
        assert!(matches!(e.root(), Error::Ledger(_)));
        assert!(e.ledger().is_some() && !e.is_refused_release() && !e.is_config());
        // A missing value is a config error; its key is never read from its text.
        let none: Option<u8> = None;
        let e = none.context("sampler.pairs is required").unwrap_err();
        assert!(matches!(&e, Error::Config { message: m, .. } if m == "sampler.pairs is required"));
        assert_eq!(e.config_key(), None);
    }

    #[test]
    fn macros_build_the_named_variant() {
        fn config(k: u8) -> Result<()> {
            ensure!(k > 0, "sampler.k = {k} is invalid");
            Ok(())
        }
        fn data() -> Result<()> {
            bail!(Data, "data file {}: no values", "x.csv")
        }
        // A message that starts with a key is still about no one key unless it names it.
        assert!(
            matches!(config(0), Err(Error::Config { key: None, message: m }) if m == "sampler.k = 0 is invalid")
        );
        let e = err!(key = "privacy.epsilon"; "the budget is spent");
        assert_eq!(e.config_key().as_deref(), Some("privacy.epsilon"));
        assert_eq!(e.to_string(), "the budget is spent");
        assert_eq!(Error::config("no key here").config_key(), None);
        // TOML parser text is the one place a key is read from a message.
        let toml_err =
            <toml::de::Error as serde::de::Error>::custom("unknown sampler.kind \"svt\"");
        assert_eq!(
            Error::Toml(toml_err).config_key().as_deref(),
            Some("sampler.kind")
        );
        assert_eq!(
            leading_key("model.summary.lags: lag 4"),
            Some("model.summary.lags")
        );
        assert_eq!(leading_key("sampler. is not a key"), None);
        assert_eq!(
            leading_key("unknown sampler.kind \"svt\""),
            Some("sampler.kind")
        );
        assert_eq!(
            section_key("[sampler] (kind = \"dp-hmc\"): accounting must be \"pld\""),
            Some("sampler.accounting".into())
        );
        assert_eq!(
            section_key("[sampler] (kind = \"x\"): missing field `c`"),
            None
        );
        assert_eq!(section_key("[sampler]: two words must be"), None);
        assert!(config(1).is_ok());
        assert!(matches!(data(), Err(Error::Data(m)) if m == "data file x.csv: no values"));
        assert!(matches!(err!(Internal, "bug {}", 1), Error::Internal(m) if m == "bug 1"));
    }

    #[test]
    fn a_refused_release_is_recognised_under_context() {
        let e = Error::from(dpinfer_ledger::Error::ClaimChanged).context("x");
        assert!(!e.is_refused_release());
        let e = Error::from(dpinfer_ledger::Error::DifferentInput("/r".into())).context("x");
        assert!(e.is_refused_release());
        assert!(matches!(
            e.ledger(),
            Some(dpinfer_ledger::Error::DifferentInput(_))
        ));
    }

    #[test]
    fn the_error_crosses_threads() {
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<Error>();
    }
}
