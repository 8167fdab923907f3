//! The run configuration (`CONFIG.toml`): model, data, distance, sampler, privacy, seeds, output.
//!
//! Every table rejects unknown keys, and [`Config::validate`] checks every number before any
//! work starts, so a bad config costs one clear error line and writes nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

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

/// `[data]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    /// CSV file of observations (one row per observation, no header), relative to the config.
    pub path: Option<PathBuf>,
    /// Seed of the embedded data set when the model simulates it at its true θ.
    pub seed: Option<u64>,
}

/// `[distance]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DistanceConfig {
    /// `rff-mmd` (random-feature MMD between data sets) or `l2` (clipped weighted L2 on the
    /// simulator output as summary vector).
    pub kind: String,
    /// rff-mmd: number of features D (even; D/2 frequencies).
    pub features: usize,
    /// rff-mmd: Gaussian-kernel bandwidth; default: median heuristic on one public
    /// prior-predictive data set.
    pub bandwidth: Option<f64>,
    /// l2: weights per summary (default all 1).
    pub weights: Option<Vec<f64>>,
    /// l2: clip C of the distance (required for l2).
    pub clip: Option<f64>,
}

impl Default for DistanceConfig {
    fn default() -> Self {
        Self {
            kind: "rff-mmd".into(),
            features: 100,
            bandwidth: None,
            weights: None,
            clip: None,
        }
    }
}

/// `[sampler]`: one flat table; which keys apply depends on `kind`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SamplerConfig {
    /// `rejection`, `svt-abc`, `soft-abc`, `gaussian-abc`, `smc-abc`, `rwmh`, `dp-penalty`,
    /// `dp-barker`, `dp-hmc`.
    pub kind: String,
    /// ABC: number of public (θ, simulation) pairs T.
    pub pairs: Option<usize>,
    /// ABC: threshold ε_abc.
    pub epsilon_abc: Option<f64>,
    /// svt-abc: maximum number of accepted pairs c.
    pub c: Option<u64>,
    /// svt-abc: RESAMPLE (fresh threshold noise after each acceptance).
    pub resample: Option<bool>,
    /// svt-abc / gaussian-abc / soft-abc: clipping bound of the distance (default: the
    /// distance's own bound).
    pub clip: Option<f64>,
    /// rejection: keep the `accept` closest pairs (default T/100).
    pub accept: Option<usize>,
    /// smc-abc: particles.
    pub particles: Option<usize>,
    /// smc-abc: final tolerance.
    pub final_tolerance: Option<f64>,
    /// smc-abc: maximum generations.
    pub generations: Option<usize>,
    /// smc-abc: quantile α of the adaptive tolerance schedule.
    pub alpha: Option<f64>,
    /// smc-abc: simulation budget.
    pub simulations: Option<u64>,
    /// MCMC: iterations (private samplers: capped by the budget).
    pub iterations: Option<u64>,
    /// MCMC: burn-in iterations dropped from the samples.
    pub burn_in: Option<u64>,
    /// MCMC: random-walk proposal scale.
    pub proposal_scale: Option<f64>,
    /// MCMC: per-coordinate proposal scales (overrides `proposal_scale`).
    pub proposal_scales: Option<Vec<f64>>,
    /// MCMC: initial θ (a public choice; default: the prior's centre).
    pub init: Option<Vec<f64>>,
    /// MCMC: temperature of the target π(θ)·L(θ)^temperature (DP Barker: batch/n in the
    /// thesis experiments).
    pub temperature: Option<f64>,
    /// dp-penalty / dp-hmc: log-likelihood-ratio clip.
    pub ratio_clip: Option<f64>,
    /// dp-penalty: noise multiplier τ.
    pub tau: Option<f64>,
    /// dp-barker: minibatch size.
    pub batch: Option<usize>,
    /// dp-hmc: leapfrog step size.
    pub step_size: Option<f64>,
    /// dp-hmc: diagonal inverse mass matrix (default all 1).
    pub inv_mass: Option<Vec<f64>>,
    /// dp-hmc: leapfrog steps.
    pub leapfrog_steps: Option<u32>,
    /// dp-hmc: gradient clip.
    pub grad_clip: Option<f64>,
    /// dp-hmc: gradient noise multiplier.
    pub tau_g: Option<f64>,
    /// dp-hmc: log-likelihood noise multiplier.
    pub tau_l: Option<f64>,
    /// Private MCMC accounting: `pld` (default, tight) or `zcdp`.
    pub accounting: Option<String>,
}

impl SamplerConfig {
    /// A fixed sampler section, for fingerprints that must not depend on sampler settings.
    #[must_use]
    pub fn release_key() -> Self {
        Self {
            kind: "smc-abc".into(),
            pairs: None,
            epsilon_abc: None,
            c: None,
            resample: None,
            clip: None,
            accept: None,
            particles: None,
            final_tolerance: None,
            generations: None,
            alpha: None,
            simulations: None,
            iterations: None,
            burn_in: None,
            proposal_scale: None,
            proposal_scales: None,
            init: None,
            temperature: None,
            ratio_clip: None,
            tau: None,
            batch: None,
            step_size: None,
            inv_mass: None,
            leapfrog_steps: None,
            grad_clip: None,
            tau_g: None,
            tau_l: None,
            accounting: None,
        }
    }
}

/// `[privacy]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PrivacyConfig {
    /// Total ε (required by private samplers; no default).
    pub epsilon: f64,
    /// Total δ (0 for pure-DP samplers).
    pub delta: f64,
    /// SMC-ABC on a privatized statistic: `"binomial-curve"` (sir) or `"laplace"`.
    pub release: Option<String>,
    /// binomial-curve: trials n per time point (default 1000).
    pub release_n: Option<u64>,
    /// binomial-curve: pseudo-count m (default 1000).
    pub release_m: Option<u64>,
    /// laplace: L1 sensitivity of the statistic (under replace-one).
    pub release_sensitivity: Option<f64>,
    /// laplace: lower end of the statistic's range (default −1).
    pub release_lo: Option<f64>,
    /// laplace: upper end of the statistic's range (default 1).
    pub release_hi: Option<f64>,
}

impl Default for PrivacyConfig {
    fn default() -> Self {
        Self {
            epsilon: f64::NAN,
            delta: 0.0,
            release: None,
            release_n: None,
            release_m: None,
            release_sensitivity: None,
            release_lo: None,
            release_hi: None,
        }
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

/// The sampler families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplerKind {
    /// Non-private rejection ABC over the public pairs (nearest `accept`).
    Rejection,
    /// ABCDP: sparse vector over the pairs (Park et al. 2021, Algorithm 1).
    SvtAbc,
    /// Soft ABCDP: Gaussian noisy distances, weights.
    SoftAbc,
    /// Gaussian rejection ABCDP.
    GaussianAbc,
    /// SMC-ABC (non-private, or on privatized data).
    SmcAbc,
    /// Random-walk Metropolis (non-private).
    Rwmh,
    /// DP penalty algorithm.
    DpPenalty,
    /// DP Barker.
    DpBarker,
    /// DP HMC.
    DpHmc,
}

impl SamplerKind {
    /// Parses the `kind` string.
    ///
    /// # Errors
    /// Unknown names.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "rejection" => Self::Rejection,
            "svt-abc" => Self::SvtAbc,
            "soft-abc" => Self::SoftAbc,
            "gaussian-abc" => Self::GaussianAbc,
            "smc-abc" => Self::SmcAbc,
            "rwmh" => Self::Rwmh,
            "dp-penalty" => Self::DpPenalty,
            "dp-barker" => Self::DpBarker,
            "dp-hmc" => Self::DpHmc,
            other => bail!(
                "unknown sampler.kind {other:?} (expected rejection, svt-abc, soft-abc, \
                 gaussian-abc, smc-abc, rwmh, dp-penalty, dp-barker, dp-hmc)"
            ),
        })
    }

    /// Samplers whose only private step is a pass over public pairs (shardable).
    #[must_use]
    pub fn uses_pairs(self) -> bool {
        matches!(
            self,
            Self::Rejection | Self::SvtAbc | Self::SoftAbc | Self::GaussianAbc
        )
    }

    /// MCMC samplers (need a per-row likelihood).
    #[must_use]
    pub fn is_mcmc(self) -> bool {
        matches!(
            self,
            Self::Rwmh | Self::DpPenalty | Self::DpBarker | Self::DpHmc
        )
    }

    /// Samplers that release something computed from private data.
    #[must_use]
    pub fn is_private(self) -> bool {
        !matches!(self, Self::Rejection | Self::Rwmh | Self::SmcAbc)
    }
}

fn finite_pos(name: &str, v: f64) -> Result<f64> {
    if v.is_normal() && v > 0.0 {
        Ok(v)
    } else {
        bail!("{name} must be a finite, normal (not subnormal) number > 0, got {v:?}")
    }
}

impl Config {
    /// Reads and validates a config file. Relative data paths are resolved against the
    /// config file's folder.
    ///
    /// # Errors
    /// I/O, TOML syntax, unknown keys, invalid values.
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            crate::files::read_input_text(path, "config", Some(crate::files::MAX_CONFIG_BYTES))?;
        let mut c: Self =
            toml::from_str(&text).with_context(|| format!("invalid config {}", path.display()))?;
        c.model.base_dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."))
            .to_path_buf();
        if let Some(p) = &c.data.path
            && p.is_relative()
        {
            let base = path.parent().unwrap_or_else(|| Path::new("."));
            c.data.path = Some(base.join(p));
        }
        c.validate()
            .and_then(|()| check_limits(&c))
            .with_context(|| format!("invalid config {}", path.display()))?;
        Ok(c)
    }

    /// The sampler kind.
    ///
    /// # Errors
    /// Unknown kind.
    pub fn kind(&self) -> Result<SamplerKind> {
        SamplerKind::parse(&self.sampler.kind)
    }

    /// Checks every value; the model-specific checks happen when the model is built.
    ///
    /// # Errors
    /// The first invalid value, named.
    pub fn validate(&self) -> Result<()> {
        let kind = self.kind()?;
        let p = &self.privacy;
        if p.release.is_some() && kind != SamplerKind::SmcAbc {
            bail!("privacy.release belongs to smc-abc (inference from a privatized statistic)");
        }
        if kind.is_private() || p.release.is_some() {
            if p.epsilon.is_nan() {
                bail!(
                    "privacy.epsilon is required for the private sampler {}",
                    self.sampler.kind
                );
            }
            finite_pos("privacy.epsilon", p.epsilon)?;
        }
        if !(p.delta.is_finite() && (0.0..1.0).contains(&p.delta)) {
            bail!("privacy.delta must be in [0, 1), got {}", p.delta);
        }
        let s = &self.sampler;
        if kind.uses_pairs() {
            match s.pairs {
                Some(t) if t > 0 => {}
                _ => bail!("sampler.pairs must be a positive integer for {}", s.kind),
            }
        }
        if matches!(
            kind,
            SamplerKind::SvtAbc | SamplerKind::SoftAbc | SamplerKind::GaussianAbc
        ) {
            finite_pos(
                "sampler.epsilon_abc",
                s.epsilon_abc
                    .context("sampler.epsilon_abc is required for this sampler")?,
            )?;
        }
        if kind == SamplerKind::SvtAbc && s.c.unwrap_or(0) == 0 {
            bail!("sampler.c (maximum accepted pairs) must be a positive integer for svt-abc");
        }
        if matches!(
            kind,
            SamplerKind::SoftAbc
                | SamplerKind::DpPenalty
                | SamplerKind::DpBarker
                | SamplerKind::DpHmc
        ) && p.delta <= 0.0
        {
            bail!(
                "privacy.delta must be > 0 for {} (an (ε, δ) sampler)",
                s.kind
            );
        }
        for (name, v) in [
            ("sampler.clip", s.clip),
            ("sampler.final_tolerance", s.final_tolerance),
            ("sampler.proposal_scale", s.proposal_scale),
            ("sampler.temperature", s.temperature),
            ("sampler.ratio_clip", s.ratio_clip),
            ("sampler.tau", s.tau),
            ("sampler.step_size", s.step_size),
            ("sampler.grad_clip", s.grad_clip),
            ("sampler.tau_g", s.tau_g),
            ("sampler.tau_l", s.tau_l),
            ("model.sigma", self.model.sigma),
            ("model.prior_sd", self.model.prior_sd),
            ("model.tau", self.model.tau),
            ("distance.bandwidth", self.distance.bandwidth),
            ("distance.clip", self.distance.clip),
            ("privacy.release_sensitivity", p.release_sensitivity),
        ] {
            if let Some(v) = v {
                finite_pos(name, v)?;
            }
        }
        if p.release_n == Some(0) || p.release_m == Some(0) {
            bail!("privacy.release_n and privacy.release_m must be positive");
        }
        if let (Some(lo), Some(hi)) = (p.release_lo, p.release_hi)
            && !(lo.is_finite() && hi.is_finite() && lo < hi)
        {
            bail!("privacy.release_lo must be below privacy.release_hi");
        }
        if let Some(m) = self.model.prior_mean
            && !m.is_finite()
        {
            bail!("model.prior_mean must be finite, got {m}");
        }
        if let Some(a) = s.alpha
            && !(a > 0.0 && a < 1.0)
        {
            bail!("sampler.alpha must be in (0, 1), got {a}");
        }
        if let Some(v) = &s.proposal_scales
            && v.iter().any(|x| !(x.is_finite() && *x > 0.0))
        {
            bail!("sampler.proposal_scales must be finite and positive");
        }
        if let Some(v) = &s.inv_mass
            && v.iter().any(|x| !(x.is_finite() && *x > 0.0))
        {
            bail!("sampler.inv_mass must be finite and positive");
        }
        if let Some(v) = &s.init
            && v.iter().any(|x| !x.is_finite())
        {
            bail!("sampler.init must be finite");
        }
        if let Some(w) = &self.distance.weights
            && w.iter().any(|x| !(x.is_finite() && *x >= 0.0))
        {
            bail!("distance.weights must be finite and non-negative");
        }
        match self.distance.kind.as_str() {
            "rff-mmd" => {
                if self.distance.features < 2 || !self.distance.features.is_multiple_of(2) {
                    bail!(
                        "distance.features must be an even number ≥ 2, got {}",
                        self.distance.features
                    );
                }
            }
            "l2" => {
                if kind.uses_pairs()
                    && kind != SamplerKind::Rejection
                    && self.distance.clip.is_none()
                {
                    bail!("distance.clip is required for the l2 distance of a private sampler");
                }
            }
            other => bail!("unknown distance.kind {other:?} (expected rff-mmd or l2)"),
        }
        if let Some(a) = &s.accounting
            && a != "pld"
            && a != "zcdp"
        {
            bail!("sampler.accounting must be \"pld\" or \"zcdp\", got {a:?}");
        }
        Ok(())
    }

    /// A stable hash of everything the public simulation step depends on (model, data size,
    /// distance, pair count, run seed) — shards of different configs never mix.
    #[must_use]
    pub fn public_hash(&self) -> u64 {
        let public = (
            &self.model,
            &self.distance,
            self.sampler.pairs,
            self.seeds.run,
        );
        let s = serde_json::to_string(&public).unwrap_or_default();
        // FNV-1a 64.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in s.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    }
}

/// Checks every count of `cfg` against its bound.
///
/// # Errors
/// The first count above its bound, named.
pub(crate) fn check_limits(cfg: &Config) -> Result<()> {
    use crate::limits::*;
    let s = &cfg.sampler;
    let as_u64 = |v: Option<usize>| v.map(|x| x as u64);
    for (name, v, max) in [
        ("sampler.pairs", as_u64(s.pairs), MAX_PAIRS),
        ("model.n", as_u64(cfg.model.n), MAX_N),
        (
            "distance.features",
            Some(cfg.distance.features as u64),
            MAX_FEATURES,
        ),
        ("sampler.particles", as_u64(s.particles), MAX_PARTICLES),
        ("sampler.accept", as_u64(s.accept), MAX_PARTICLES),
        (
            "sampler.generations",
            as_u64(s.generations),
            MAX_GENERATIONS,
        ),
        ("sampler.simulations", s.simulations, MAX_SIMULATIONS),
        ("sampler.iterations", s.iterations, MAX_ITERATIONS),
        ("sampler.burn_in", s.burn_in, MAX_ITERATIONS),
        (
            "sampler.leapfrog_steps",
            s.leapfrog_steps.map(u64::from),
            MAX_LEAPFROG,
        ),
        ("sampler.c", s.c, MAX_COUNT),
        ("sampler.batch", as_u64(s.batch), MAX_COUNT),
        ("privacy.release_n", cfg.privacy.release_n, MAX_RELEASE_N),
        ("privacy.release_m", cfg.privacy.release_m, MAX_RELEASE_N),
    ] {
        if let Some(v) = v
            && v > max
        {
            bail!("{name} = {v} is above the supported maximum of {max}");
        }
    }
    if s.leapfrog_steps == Some(0) {
        bail!("sampler.leapfrog_steps must be at least 1");
    }
    if cfg.output.threads > MAX_THREADS {
        bail!(
            "output.threads = {} is above the maximum of {}",
            cfg.output.threads,
            MAX_THREADS
        );
    }
    Ok(())
}
