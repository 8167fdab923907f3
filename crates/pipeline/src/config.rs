//! The run configuration (`CONFIG.toml`): model, data, distance, sampler, privacy, seeds, output.
//!
//! Every table rejects unknown keys, and [`Config::validate`] checks every number before any
//! work starts, so a bad config costs one clear error line and writes nothing.

use std::path::{Path, PathBuf};

use crate::error::{Context, Result, bail};
use crate::observe::Observer;
use serde::{Deserialize, Serialize};

pub use crate::sampler::{SamplerConfig, SamplerKind};
use crate::sampler::{read_table, take_tag, variant};

/// A whole run, as read from TOML.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Which built-in model.
    pub model: ModelConfig,
    /// Observed data (default: the model's embedded data set).
    #[serde(default)]
    pub data: DataConfig,
    /// Distance between simulated and observed data (ABC samplers).
    #[serde(default)]
    pub distance: DistanceConfig,
    /// Sampler and its settings.
    pub sampler: SamplerConfig,
    /// Privacy budget.
    #[serde(default)]
    pub privacy: PrivacyConfig,
    /// Seeds.
    #[serde(default)]
    pub seeds: SeedConfig,
    /// Results folder.
    #[serde(default)]
    pub output: OutputConfig,
}

/// `[model]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// `gaussian-mean`, `uniform-mixture`, `cubic-outbreak`, `sir`, `banana`.
    pub name: String,
    /// Observations per data set (model default when absent).
    pub n: Option<usize>,
    /// gaussian-mean: known noise sd (default 1).
    pub sigma: Option<f64>,
    /// gaussian-mean: prior mean (default 0).
    pub prior_mean: Option<f64>,
    /// gaussian-mean: prior sd (default 10).
    pub prior_sd: Option<f64>,
    /// sir: population size (default 10⁶).
    pub population: Option<u64>,
    /// sir: tau-leaping step (default 0.5 days).
    pub tau: Option<f64>,
    /// Version of the public random numbers the simulator draws (`dpinfer_simulators::
    /// StreamVersion`): 1 (default; polar normals, every earlier seeded output) or 2
    /// (ziggurat normals, ≈ 6× faster normals). Part of the shard fingerprint unless 1, so
    /// configs without the key keep their fingerprints.
    #[serde(default, skip_serializing_if = "is_stream_v1")]
    pub stream_version: Option<u32>,
    /// sir: observation times (default the authors' 0, 17, …, 153); sets the number of
    /// observations (`n`, if also given, must equal its length).
    #[serde(default)]
    pub obs_times: Option<Vec<f64>>,
    /// Independent data sets per simulation and in the observed data (default 1): the
    /// pairs table simulates `datasets` data sets at each θ (one after the other, from the
    /// row's public stream), the embedded data are as many data sets simulated at the true θ
    /// (a data file holds them one after the other), and the private pass compares data set
    /// `j` with observed data set `j` by the `l2` distance clipped at C and averages the
    /// `datasets` distances: sensitivity C/n under replace-one of one whole data set (ABCDP
    /// §6.3 and Theorem 1; `dpinfer_distances::sensitivity::clipped_mean`). Built-in models,
    /// `distance.kind = "l2"` and the pairs samplers only. Absent or 1 is left out of the
    /// fingerprints, so configs without the key keep theirs.
    #[serde(default, skip_serializing_if = "is_one_dataset")]
    pub datasets: Option<usize>,
    /// `"command"`: an external simulator (run by the worker pool of the `external` module); absent: a built-in model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// command: program and arguments, run without a shell in the config file's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// command: values per simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<usize>,
    /// command: values per observation row (default 1), for the MMD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_dim: Option<usize>,
    /// command: rows per request batch (default 64; never changes a number).
    #[serde(default, skip_serializing)]
    pub batch: Option<usize>,
    /// command: seconds a worker may take per batch (default 60; never changes a number).
    #[serde(default, skip_serializing)]
    pub timeout: Option<f64>,
    /// command: retries of a failed batch on a fresh worker (default 2).
    #[serde(default, skip_serializing)]
    pub retries: Option<u32>,
    /// `[[model.prior]]`: the declared prior, one table per parameter (command models).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prior: Vec<crate::prior_decl::PriorDecl>,
    /// `[model.summary]`: declared summary statistics (command models; `crate::summary_decl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<crate::summary_decl::SummaryDecl>,
    /// The config file's folder (the command's working directory); set by [`Config::load`].
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// Whether `[model] stream_version` is absent or 1 (the default, left out of fingerprints).
#[allow(clippy::ref_option, clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if signature
fn is_stream_v1(v: &Option<u32>) -> bool {
    matches!(v, None | Some(1))
}

/// Whether `[model] datasets` is absent or 1 (the default, left out of fingerprints).
#[allow(clippy::ref_option, clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if signature
fn is_one_dataset(v: &Option<usize>) -> bool {
    matches!(v, None | Some(1))
}

/// `[data]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    /// CSV file of observations (one row per observation, no header), relative to the config.
    pub path: Option<PathBuf>,
    /// Seed of the embedded data set when the model simulates it at its true θ.
    pub seed: Option<u64>,
}

/// `[distance]`, by `kind` (default `rff-mmd`); unknown keys are errors naming the key.
/// Serializes as the flat table of earlier versions (every key, `null` when unset;
/// `features` 100 for l2), so [`Config::public_hash`] and the shard headers keep their values.
#[derive(Debug, Clone, PartialEq)]
pub enum DistanceConfig {
    /// `rff-mmd`: random-feature MMD between data sets.
    RffMmd(RffMmd),
    /// `l2`: clipped weighted L2 on the simulator output as summary vector.
    L2(L2),
}

/// `[distance] kind = "rff-mmd"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RffMmd {
    /// Number of features D (even; D/2 frequencies; default 100).
    #[serde(default = "RffMmd::default_features")]
    pub features: usize,
    /// Gaussian-kernel bandwidth; default: median heuristic on one public prior-predictive
    /// data set.
    pub bandwidth: Option<f64>,
    /// Version of the feature map's `sin`/`cos` (`dpinfer_distances::KernelVersion`): 1
    /// (default; every earlier seeded embedding) or 2 (fewer operations, other last bits).
    /// Part of the shard fingerprint and the private step's input unless 1, so configs
    /// without the key keep their fingerprints.
    pub kernel_version: Option<u32>,
    /// Version of the rounding allowance on top of the distance's sensitivity `2/n`
    /// (`dpinfer_distances::AllowanceVersion`): 1 (default; every earlier release's noise
    /// scale) or 2 (a bound linear in `u·n`, needed at large `n`). It changes no distance,
    /// only the private step's calibration: part of the private step's input unless 1, never
    /// of the shard fingerprint.
    pub allowance_version: Option<u32>,
}

impl RffMmd {
    fn default_features() -> usize {
        100
    }

    /// The kernel version (absent: version 1). Only versions 1 and 2 are accepted: version 3
    /// changes only the `exp` of the exact kernels and keeps version 2's `sin`/`cos`, so for
    /// the random features it would be version 2 under another number.
    ///
    /// # Errors
    /// A number that names no version, or 3.
    pub fn kernel_version(&self) -> Result<dpinfer::distances::KernelVersion> {
        use dpinfer::distances::KernelVersion;
        match KernelVersion::try_from(self.kernel_version.unwrap_or(1)) {
            Ok(v @ (KernelVersion::V1 | KernelVersion::V2)) => Ok(v),
            _ => Err(
                crate::error::err!(key = "distance.kernel_version"; "distance.kernel_version must be 1 or 2 (version 3 changes only the exact kernels' exp, which rff-mmd does not use)"),
            ),
        }
    }

    /// The rounding-allowance version (absent: version 1).
    ///
    /// # Errors
    /// A number that names no version.
    pub fn allowance_version(&self) -> Result<dpinfer::distances::AllowanceVersion> {
        dpinfer::distances::AllowanceVersion::try_from(self.allowance_version.unwrap_or(1))
            .map_err(|_| crate::error::err!(key = "distance.allowance_version"; "distance.allowance_version must be 1 or 2"))
    }
}

/// `[distance] kind = "l2"`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2 {
    /// Weights per summary (default all 1).
    pub weights: Option<Vec<f64>>,
    /// Clip C of the distance (required by the private samplers).
    pub clip: Option<f64>,
}

impl Default for DistanceConfig {
    fn default() -> Self {
        Self::RffMmd(RffMmd {
            features: RffMmd::default_features(),
            bandwidth: None,
            kernel_version: None,
            allowance_version: None,
        })
    }
}

impl DistanceConfig {
    /// Reads the `[distance]` table.
    ///
    /// # Errors
    /// An unknown `kind`, unknown keys (named), values of the wrong type.
    pub fn read(mut t: toml::Table, _: &mut Vec<String>) -> Result<Self, String> {
        let kind = take_tag(&mut t, "distance", "kind")?.unwrap_or_else(|| "rff-mmd".into());
        match kind.as_str() {
            "rff-mmd" => Ok(Self::RffMmd(variant("distance", "kind = \"rff-mmd\"", t)?)),
            "l2" => Ok(Self::L2(variant("distance", "kind = \"l2\"", t)?)),
            other => Err(format!(
                "unknown distance.kind {other:?} (expected rff-mmd or l2)"
            )),
        }
    }

    /// The `kind` name.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::RffMmd(_) => "rff-mmd",
            Self::L2(_) => "l2",
        }
    }

    /// l2: the weights.
    #[must_use]
    pub fn weights(&self) -> Option<&[f64]> {
        match self {
            Self::L2(d) => d.weights.as_deref(),
            Self::RffMmd(_) => None,
        }
    }

    /// l2: the clip C.
    #[must_use]
    pub fn clip(&self) -> Option<f64> {
        match self {
            Self::L2(d) => d.clip,
            Self::RffMmd(_) => None,
        }
    }

    /// Sets `kernel_version` (a caller's override of the config, e.g. Python's
    /// `dpinfer.run(..., kernel_version=2)`).
    ///
    /// # Errors
    /// A number that names no version, or a distance without random features (`l2`).
    pub fn set_kernel_version(&mut self, version: u32) -> Result<()> {
        match self {
            Self::RffMmd(d) => {
                let v = RffMmd {
                    kernel_version: Some(version),
                    ..d.clone()
                };
                v.kernel_version()?;
                *d = v;
                Ok(())
            }
            Self::L2(_) => bail!(
                key = "distance.kernel_version"; "distance.kernel_version applies to kind = \"rff-mmd\" (the l2 distance has \
                 no random features)"
            ),
        }
    }

    /// The distance's own checks.
    fn check(&self) -> Result<()> {
        match self {
            Self::RffMmd(d) => {
                if let Some(b) = d.bandwidth {
                    finite_pos("distance.bandwidth", b)?;
                }
                d.kernel_version()?;
                d.allowance_version()?;
                if d.features < 2 || !d.features.is_multiple_of(2) {
                    bail!(
                        key = "distance.features"; "distance.features must be an even number ≥ 2, got {}",
                        d.features
                    );
                }
            }
            Self::L2(d) => {
                if let Some(c) = d.clip {
                    finite_pos("distance.clip", c)?;
                }
                if let Some(w) = &d.weights
                    && w.iter().any(|x| !(x.is_finite() && *x >= 0.0))
                {
                    bail!(key = "distance.weights"; "distance.weights must be finite and non-negative");
                }
            }
        }
        Ok(())
    }
}

impl Serialize for DistanceConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The earlier flat `[distance]` struct, field order included.
        #[derive(Serialize)]
        struct Flat<'a> {
            kind: &'a str,
            features: usize,
            bandwidth: Option<f64>,
            weights: Option<&'a [f64]>,
            clip: Option<f64>,
            /// Only when not 1: configs of version 1 keep their hashes and fingerprints.
            #[serde(skip_serializing_if = "Option::is_none")]
            kernel_version: Option<u32>,
            /// Only when not 1, likewise.
            #[serde(skip_serializing_if = "Option::is_none")]
            allowance_version: Option<u32>,
        }
        let (features, bandwidth, kernel_version, allowance_version) = match self {
            Self::RffMmd(d) => (
                d.features,
                d.bandwidth,
                d.kernel_version.filter(|&v| v != 1),
                d.allowance_version.filter(|&v| v != 1),
            ),
            Self::L2(_) => (RffMmd::default_features(), None, None, None),
        };
        let (kind, weights, clip) = (self.kind(), self.weights(), self.clip());
        let flat = Flat {
            kind,
            features,
            bandwidth,
            weights,
            clip,
            kernel_version,
            allowance_version,
        };
        flat.serialize(s)
    }
}

impl<'de> Deserialize<'de> for DistanceConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_table(d, Self::read)
    }
}

/// `[privacy]`: the budget, and for SMC-ABC on a privatized statistic the release
/// mechanism (`release = "binomial-curve" | "laplace"` with its own keys).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrivacyConfig {
    /// Total ε (required by private samplers; NaN when absent — an `epsilon = nan` written
    /// in the table is refused as a value, not read as absent).
    pub epsilon: f64,
    /// Total δ (0 for pure-DP samplers).
    pub delta: f64,
    /// The release of the observed statistic, if any.
    #[serde(flatten)]
    pub release: Option<ReleaseConfig>,
    /// Whether the table wrote `epsilon` (TOML allows `epsilon = nan`): a NaN `epsilon` is
    /// "absent" only when it was not written, so an explicit NaN is refused as an invalid
    /// value, not as a missing key. Not serialized: fingerprints are unchanged.
    #[serde(skip)]
    epsilon_written: bool,
}

/// `[privacy]` without the release keys.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct Budget {
    #[serde(default)]
    epsilon: Option<f64>,
    #[serde(default)]
    delta: f64,
}

/// `privacy.release`: the mechanism that privatizes the observed statistic.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "release")]
pub enum ReleaseConfig {
    /// `binomial-curve` (sir).
    #[serde(rename = "binomial-curve")]
    BinomialCurve(BinomialRelease),
    /// `laplace`.
    #[serde(rename = "laplace")]
    Laplace(LaplaceRelease),
}

/// `release = "binomial-curve"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BinomialRelease {
    /// Trials n per time point (default 1000).
    #[serde(default = "thousand")]
    pub release_n: u64,
    /// Pseudo-count m (default 1000).
    #[serde(default = "thousand")]
    pub release_m: u64,
}

fn thousand() -> u64 {
    1000
}

/// `release = "laplace"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaplaceRelease {
    /// L1 sensitivity of the statistic (under replace-one; default: the model's proven one).
    pub release_sensitivity: Option<f64>,
    /// Lower end of the statistic's range (default −1).
    #[serde(default = "minus_one")]
    pub release_lo: f64,
    /// Upper end of the statistic's range (default 1).
    #[serde(default = "one")]
    pub release_hi: f64,
}

fn minus_one() -> f64 {
    -1.0
}

fn one() -> f64 {
    1.0
}

impl Default for PrivacyConfig {
    fn default() -> Self {
        Self {
            epsilon: f64::NAN,
            delta: 0.0,
            release: None,
            epsilon_written: false,
        }
    }
}

impl PrivacyConfig {
    /// Reads the `[privacy]` table.
    ///
    /// # Errors
    /// An unknown `release`, unknown keys (named), values of the wrong type.
    pub fn read(mut t: toml::Table, _: &mut Vec<String>) -> Result<Self, String> {
        let release = take_tag(&mut t, "privacy", "release")?;
        let mut b = toml::Table::new();
        for k in ["epsilon", "delta"] {
            if let Some(v) = t.remove(k) {
                b.insert(k.into(), v);
            }
        }
        let budget: Budget = variant("privacy", "", b)?;
        let release = match release.as_deref() {
            None => {
                if let Some(k) = t.keys().next() {
                    return Err(format!(
                        "unknown field `{k}` in [privacy] (release keys need privacy.release =                          \"binomial-curve\" or \"laplace\")"
                    ));
                }
                None
            }
            Some("binomial-curve") => Some(ReleaseConfig::BinomialCurve(variant(
                "privacy",
                "release = \"binomial-curve\"",
                t,
            )?)),
            Some("laplace") => Some(ReleaseConfig::Laplace(variant(
                "privacy",
                "release = \"laplace\"",
                t,
            )?)),
            Some(other) => {
                return Err(format!(
                    "unknown privacy.release {other:?} (expected binomial-curve or laplace)"
                ));
            }
        };
        Ok(Self {
            epsilon: budget.epsilon.unwrap_or(f64::NAN),
            delta: budget.delta,
            release,
            epsilon_written: budget.epsilon.is_some(),
        })
    }
}

impl<'de> Deserialize<'de> for PrivacyConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_table(d, Self::read)
    }
}

/// Where the data owner's privacy noise comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NoiseSeed {
    /// The operating system's CSPRNG (the only private choice).
    Os,
    /// A fixed seed: reproducible, **not private** (tests and demonstrations).
    Fixed(u64),
}

impl<'de> Deserialize<'de> for NoiseSeed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            S(String),
            N(u64),
        }
        match Raw::deserialize(d)? {
            Raw::S(s) if s == "os" => Ok(Self::Os),
            Raw::S(s) => Err(serde::de::Error::custom(format!(
                "seeds.noise must be \"os\" or an integer, not {s:?}"
            ))),
            Raw::N(n) => Ok(Self::Fixed(n)),
        }
    }
}

/// `[seeds]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SeedConfig {
    /// Seed of all public randomness (prior draws, simulations, proposals).
    pub run: u64,
    /// Privacy noise: `"os"` (default) or an integer (not private).
    pub noise: NoiseSeed,
}

impl Default for SeedConfig {
    fn default() -> Self {
        Self {
            run: 2021,
            noise: NoiseSeed::Os,
        }
    }
}

/// `[output]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Results folder, relative to the working directory.
    pub dir: PathBuf,
    /// Worker threads of the public simulation step (0 = all cores).
    pub threads: usize,
}

impl Default for OutputConfig {
    fn default() -> Self {
        Self {
            dir: PathBuf::from("results"),
            threads: 0,
        }
    }
}

/// `v` if it is finite, normal (not subnormal) and `> 0`: the rule of every scale in a config
/// (`model.prior_sd`, `model.sigma`, a `[[model.prior]]` table's `sd`, `rate`, …). A
/// subnormal scale passes the library's `> 0` checks but makes densities and samples
/// degenerate (its reciprocal overflows).
///
/// # Errors
/// Any other value: a config error about key `name` (`privacy.epsilon`), named by it.
pub(crate) fn finite_pos(name: &str, v: f64) -> Result<f64> {
    finite_pos_at(name, name, v)
}

/// [`finite_pos`] for a value named in words (`model.prior "mu" (normal): `sd``) that
/// belongs to config key `key` (`model.prior`).
///
/// # Errors
/// Any other value: a config error about `key`, named by `name`.
pub(crate) fn finite_pos_at(key: &str, name: &str, v: f64) -> Result<f64> {
    if v.is_normal() && v > 0.0 {
        Ok(v)
    } else {
        bail!(key = key; "{name} must be a finite, normal (not subnormal) number > 0, got {v:?}")
    }
}

impl Config {
    /// Reads and validates a config file. Relative data paths are resolved against the
    /// config file's folder.
    ///
    /// # Errors
    /// I/O, TOML syntax, unknown keys, invalid values.
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_with(path, &crate::Stderr::default())
    }

    /// [`Config::load`], its warnings told to `observer` as `warning: …` notes.
    ///
    /// # Errors
    /// As [`Config::load`].
    pub fn load_with(path: &Path, observer: &dyn Observer) -> Result<Self> {
        let text = dpinfer_ledger::files::read_input_text(
            path,
            "config",
            Some(dpinfer_ledger::files::MAX_CONFIG_BYTES),
        )?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        Self::parse_with(&text, base, observer)
            .with_context(|| format!("invalid config {}", path.display()))
    }

    /// Reads and validates a config from TOML text; relative paths in it (data files, a
    /// command model's program) are resolved against `base`. Warnings (keys a non-private
    /// sampler ignores) go to stderr; [`Config::parse_with`] chooses where.
    ///
    /// # Errors
    /// TOML syntax, unknown keys ([`Error::Toml`](crate::Error::Toml), naming key and
    /// section), invalid values ([`Error::Config`](crate::Error::Config), naming the key).
    pub fn parse(text: &str, base: &Path) -> Result<Self> {
        Self::parse_with(text, base, &crate::Stderr::default())
    }

    /// [`Config::parse`], its warnings told to `observer` as `warning: …` notes (before an
    /// error, if there is one).
    ///
    /// # Errors
    /// As [`Config::parse`].
    pub fn parse_with(text: &str, base: &Path, observer: &dyn Observer) -> Result<Self> {
        let (c, warnings) = crate::sampler::collect_warnings(|| Self::parse_quietly(text, base));
        for w in warnings {
            observer.note(&format!("warning: {w}"));
        }
        c
    }

    fn parse_quietly(text: &str, base: &Path) -> Result<Self> {
        if text.len() as u64 > dpinfer_ledger::files::MAX_CONFIG_BYTES {
            bail!(
                "config text of {} bytes is above the limit of {} bytes",
                text.len(),
                dpinfer_ledger::files::MAX_CONFIG_BYTES
            );
        }
        let mut c: Self = toml::from_str(text)?;
        c.model.base_dir = base.to_path_buf();
        if let Some(p) = &c.data.path
            && p.is_relative()
        {
            c.data.path = Some(base.join(p));
        }
        c.validate().and_then(|()| check_limits(&c))?;
        Ok(c)
    }

    /// The sampler kind.
    #[must_use]
    pub fn kind(&self) -> SamplerKind {
        self.sampler.kind()
    }

    /// Checks what the library cannot check by itself (which sections go together, the
    /// budget a private sampler needs) and runs the library's own checks of the settings
    /// known before the data are read; the model-specific checks happen when the model is
    /// built, the private passes' when they are built (still before any simulation).
    ///
    /// # Errors
    /// The first invalid value, named.
    pub fn validate(&self) -> Result<()> {
        let kind = self.kind();
        let name = self.sampler.name();
        let p = &self.privacy;
        if p.release.is_some() && !kind.takes_release() {
            bail!(
                key = "privacy.release"; "privacy.release belongs to smc-abc, sppe and sple (inference from a privatized \
                 statistic)"
            );
        }
        if kind.needs_release() && p.release.is_none() {
            bail!(
                key = "privacy.release"; "privacy.release is required for {name}: the neural samplers infer from a \
                 privatized statistic and simulate its mechanism (privacy.release = \
                 \"binomial-curve\" or \"laplace\")"
            );
        }
        if kind.is_private() || p.release.is_some() {
            if p.epsilon.is_nan() && !p.epsilon_written {
                bail!(key = "privacy.epsilon"; "privacy.epsilon is required for the private sampler {name}");
            }
            finite_pos("privacy.epsilon", p.epsilon)?;
        }
        if !(p.delta.is_finite() && (0.0..1.0).contains(&p.delta)) {
            bail!(key = "privacy.delta"; "privacy.delta must be in [0, 1), got {:?}", p.delta);
        }
        if kind.needs_delta() && p.delta <= 0.0 {
            bail!(key = "privacy.delta"; "privacy.delta must be > 0 for {name} (an (ε, δ) sampler)");
        }
        self.sampler.check(p.epsilon, p.delta)?;
        self.distance.check()?;
        for (name, v) in [
            ("model.sigma", self.model.sigma),
            ("model.prior_sd", self.model.prior_sd),
            ("model.tau", self.model.tau),
        ] {
            if let Some(v) = v {
                finite_pos(name, v)?;
            }
        }
        match &p.release {
            Some(ReleaseConfig::BinomialCurve(r)) if r.release_n == 0 || r.release_m == 0 => {
                bail!(key = "privacy.release_n"; "privacy.release_n and privacy.release_m must be positive");
            }
            Some(ReleaseConfig::Laplace(r)) => {
                if let Some(s) = r.release_sensitivity {
                    finite_pos("privacy.release_sensitivity", s)?;
                }
                if !(r.release_lo.is_finite() && r.release_hi.is_finite())
                    || r.release_lo >= r.release_hi
                {
                    bail!(key = "privacy.release_lo"; "privacy.release_lo must be below privacy.release_hi");
                }
            }
            _ => {}
        }
        if let Some(m) = self.model.prior_mean
            && !m.is_finite()
        {
            bail!(key = "model.prior_mean"; "model.prior_mean must be finite, got {m:?}");
        }
        self.check_datasets()?;
        if let DistanceConfig::L2(d) = &self.distance
            && kind.is_private()
            && kind.uses_pairs()
            && d.clip.is_none()
        {
            bail!(key = "distance.clip"; "distance.clip is required for the l2 distance of a private sampler");
        }
        Ok(())
    }

    /// `[model] datasets`: at least 1; more than 1 only for a built-in model, the `l2`
    /// distance (the mean of the per-data-set clipped distances, whose sensitivity C/n is
    /// proved for it) and the samplers over a pairs table (rejection, svt-abc, soft-abc,
    /// gaussian-abc).
    ///
    /// # Errors
    /// A config error about `model.datasets`.
    fn check_datasets(&self) -> Result<()> {
        let Some(n) = self.model.datasets else {
            return Ok(());
        };
        if n == 0 {
            bail!(key = "model.datasets"; "model.datasets must be at least 1, got 0");
        }
        if n == 1 {
            return Ok(());
        }
        if self.model.kind.as_deref() == Some("command") {
            bail!(
                key = "model.datasets";
                "model.datasets = {n} applies to the built-in models only; an external simulator \
                 (model.kind = \"command\") returns one data set per row"
            );
        }
        if !matches!(self.distance, DistanceConfig::L2(_)) {
            bail!(
                key = "model.datasets";
                "model.datasets = {n} needs distance.kind = \"l2\": the private step averages \
                 the clipped L2 distances of the {n} data sets (sensitivity C/{n}), got \
                 distance.kind = {:?}",
                self.distance.kind()
            );
        }
        let kind = self.kind();
        if !kind.uses_pairs() {
            bail!(
                key = "model.datasets";
                "model.datasets = {n} applies to the samplers over a pairs table (rejection, \
                 svt-abc, soft-abc, gaussian-abc), not to {}",
                self.sampler.name()
            );
        }
        Ok(())
    }

    /// A stable hash of what determines the public pairs table, and nothing else: the model
    /// (its built-in settings, `stream_version` unless 1, a command model's program, outputs,
    /// row dimension, declared prior, and the declared summary's kind, clip, levels and lags),
    /// the distance's summary map (`rff-mmd`: features, bandwidth, `kernel_version` unless 1,
    /// never `allowance_version`;
    /// `l2`: none — its rows are the simulator's outputs), the pair count and the run seed.
    /// Shards of different tables never mix, and a table is reusable by every config that
    /// would simulate it: the settings of the private step — the `l2` weights and clip, a
    /// declared summary's `sensitivity`, `relation` and `observed`, ε, δ, the sampler kind
    /// and its settings, the noise seed — do not enter. A data file that sizes the model
    /// (`model.n` absent) enters through [`Config::table_hash`].
    ///
    /// Configs without any of the left-out keys hash exactly as before
    /// ([`Config::legacy_public_hash`]), so their stored shards keep their header.
    #[must_use]
    pub fn public_hash(&self) -> u64 {
        self.table_hash(None)
    }

    /// [`Config::public_hash`] with `model.n` taken as `data_n` when the config leaves it to
    /// the data file (`data_n`: the observations of the data file, for a model sized by it).
    #[must_use]
    pub fn table_hash(&self, data_n: Option<usize>) -> u64 {
        let mut model = self.model.clone();
        if model.n.is_none() {
            model.n = data_n;
        }
        if let Some(s) = &mut model.summary {
            // How the private step compares and bounds the summaries, not what is simulated.
            s.sensitivity = None;
            s.relation = None;
            s.observed = None;
        }
        let distance = match &self.distance {
            // The l2 rows are θ and the raw simulator output: weights and clip are the
            // private step's.
            DistanceConfig::L2(_) => DistanceConfig::L2(L2::default()),
            // The rounding allowance sizes the private step's noise, not the table.
            DistanceConfig::RffMmd(d) => DistanceConfig::RffMmd(RffMmd {
                allowance_version: None,
                ..d.clone()
            }),
        };
        hash_json(&(&model, &distance, self.sampler.pairs(), self.seeds.run))
    }

    /// The shard hash of dpinfer before issue 31 (every key of `[model]` and `[distance]`,
    /// the l2 clip and a declared sensitivity included): tables written then carry it, and a
    /// config they fit still accepts them ([`crate::public::Public::fits`]).
    #[must_use]
    pub fn legacy_public_hash(&self) -> u64 {
        hash_json(&(
            &self.model,
            &self.distance,
            self.sampler.pairs(),
            self.seeds.run,
        ))
    }
}

/// FNV-1a of the JSON text of `value` (the shard header's config hash).
pub(crate) fn hash_json<T: Serialize>(value: &T) -> u64 {
    // Serialising these plain data types (string keys, finite numbers) cannot fail.
    let s = serde_json::to_string(value).unwrap_or_default();
    dpinfer::math::Fnv1a::of(s.as_bytes())
}

/// Checks every count of `cfg` against its bound.
///
/// # Errors
/// The first count above its bound, named.
pub(crate) fn check_limits(cfg: &Config) -> Result<()> {
    use crate::limits::*;
    use crate::sampler::as_u64;
    let mut counts = vec![
        ("sampler.pairs", as_u64(cfg.sampler.pairs()), MAX_PAIRS),
        ("model.n", as_u64(cfg.model.n), MAX_N),
        ("model.datasets", as_u64(cfg.model.datasets), MAX_N),
    ];
    if let DistanceConfig::RffMmd(d) = &cfg.distance {
        counts.push(("distance.features", Some(d.features as u64), MAX_FEATURES));
    }
    counts.extend(cfg.sampler.limits());
    for d in &cfg.model.prior {
        if let Some(k) = d.k {
            counts.push(("model.prior k", Some(k as u64), MAX_PRIOR_PARAMS));
        }
    }
    // A Dirichlet block is k parameters; every other table one. Saturating: k may be huge.
    let params = cfg.model.prior.iter().fold(0_u64, |n, d| {
        let k = if d.dist == "dirichlet" {
            d.k.unwrap_or(1)
        } else {
            1
        };
        n.saturating_add(k as u64)
    });
    if params > 0 {
        counts.push((
            "model.prior (parameters of all tables)",
            Some(params),
            MAX_PRIOR_PARAMS,
        ));
    }
    counts.push((
        "model.retries",
        cfg.model.retries.map(u64::from),
        MAX_RETRIES,
    ));
    if let Some(ReleaseConfig::BinomialCurve(r)) = &cfg.privacy.release {
        counts.push(("privacy.release_n", Some(r.release_n), MAX_RELEASE_N));
        counts.push(("privacy.release_m", Some(r.release_m), MAX_RELEASE_N));
    }
    for (name, v, max) in counts {
        if let Some(v) = v
            && v > max
        {
            bail!(key = name; "{name} = {v} is above the supported maximum of {max}");
        }
    }
    if cfg.output.threads > MAX_THREADS {
        bail!(
            key = "output.threads"; "output.threads = {} is above the maximum of {}",
            cfg.output.threads,
            MAX_THREADS
        );
    }
    Ok(())
}
