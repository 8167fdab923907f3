//! Models declared in the config rather than built in: `[[model.prior]]` tables (one per
//! parameter, or a Dirichlet block) and `[model] kind = "command"` external simulators.
//! The distributions are the library's (`dpinfer::simulators::prior`); this module only reads
//! the tables.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use dpinfer::simulators::prior::{
    Beta, DeclaredPrior, Dirichlet, Exponential, Gamma, LogNormal, Marginal, Normal,
    TruncatedNormal, Uniform,
};
use dpinfer::simulators::summaries::{ClippedSummary, SummaryKind, SummarySensitivity};
use dpinfer::simulators::{Prior, SimError, Simulator};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::config::ModelConfig;
use crate::external::{Answer, ExternalSettings, Pool, Request};

/// Error code of [`SimError::Model`] for a θ the external simulator rejected (recoverable).
pub const REJECT_CODE: u32 = 1;
/// Error code of [`SimError::Model`] for a failed external simulation (fatal; the message
/// was printed to stderr).
pub const FAILED_CODE: u32 = 2;

/// One `[[model.prior]]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PriorDecl {
    /// Parameter name (a Dirichlet block of `k` names `name1 … namek`).
    pub name: String,
    /// `uniform`, `normal`, `truncated-normal`, `log-normal`, `gamma`, `beta`, `exponential`,
    /// `dirichlet`.
    pub dist: String,
    /// uniform / truncated-normal: lower end (truncated-normal: default −∞).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    /// uniform / truncated-normal: upper end (truncated-normal: default +∞).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    /// normal / truncated-normal: mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// normal / truncated-normal: standard deviation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd: Option<f64>,
    /// log-normal: mean of ln θ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mu: Option<f64>,
    /// log-normal: sd of ln θ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
    /// gamma: shape k.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<f64>,
    /// gamma / exponential: rate (give `rate` or `scale`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// gamma / exponential: scale = 1/rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// beta: first shape a; dirichlet: concentration α.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<f64>,
    /// beta: second shape b.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    /// dirichlet: number of components k ≥ 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
}

impl PriorDecl {
    fn need(&self, key: &str, v: Option<f64>) -> Result<f64> {
        v.with_context(|| {
            format!(
                "model.prior {:?} ({}): `{key}` is required",
                self.name, self.dist
            )
        })
    }

    /// The keys this distribution accepts; any other key given is an error.
    fn check_keys(&self, allowed: &[&str]) -> Result<()> {
        let given = [
            ("lo", self.lo.is_some()),
            ("hi", self.hi.is_some()),
            ("mean", self.mean.is_some()),
            ("sd", self.sd.is_some()),
            ("mu", self.mu.is_some()),
            ("sigma", self.sigma.is_some()),
            ("shape", self.shape.is_some()),
            ("rate", self.rate.is_some()),
            ("scale", self.scale.is_some()),
            ("a", self.a.is_some()),
            ("b", self.b.is_some()),
            ("k", self.k.is_some()),
        ];
        for (key, set) in given {
            if set && !allowed.contains(&key) {
                bail!(
                    "model.prior {:?}: `{key}` does not apply to dist = {:?} (keys: {})",
                    self.name,
                    self.dist,
                    allowed.join(", ")
                );
            }
        }
        Ok(())
    }

    fn rate(&self) -> Result<f64> {
        match (self.rate, self.scale) {
            (Some(r), None) => Ok(r),
            (None, Some(s)) if s.is_finite() && s > 0.0 => Ok(1.0 / s),
            (None, Some(s)) => bail!("model.prior {:?}: scale must be > 0, got {s}", self.name),
            _ => bail!(
                "model.prior {:?} ({}): give exactly one of `rate` and `scale`",
                self.name,
                self.dist
            ),
        }
    }

    /// The library block and its parameter names.
    ///
    /// # Errors
    /// Unknown distribution, missing or foreign keys, invalid values (named).
    pub fn build(&self) -> Result<(Marginal, Vec<String>)> {
        let e =
            |err: SimError| anyhow::anyhow!("model.prior {:?} ({}): {err}", self.name, self.dist);
        let one = vec![self.name.clone()];
        Ok(match self.dist.as_str() {
            "uniform" => {
                self.check_keys(&["lo", "hi"])?;
                let u = Uniform::new(self.need("lo", self.lo)?, self.need("hi", self.hi)?)
                    .map_err(e)?;
                (Marginal::Uniform(u), one)
            }
            "normal" => {
                self.check_keys(&["mean", "sd"])?;
                let n = Normal::new(self.need("mean", self.mean)?, self.need("sd", self.sd)?)
                    .map_err(e)?;
                (Marginal::Normal(n), one)
            }
            "truncated-normal" => {
                self.check_keys(&["mean", "sd", "lo", "hi"])?;
                let t = TruncatedNormal::new(
                    self.need("mean", self.mean)?,
                    self.need("sd", self.sd)?,
                    self.lo.unwrap_or(f64::NEG_INFINITY),
                    self.hi.unwrap_or(f64::INFINITY),
                )
                .map_err(e)?;
                (Marginal::TruncatedNormal(t), one)
            }
            "log-normal" => {
                self.check_keys(&["mu", "sigma"])?;
                let l = LogNormal::new(self.need("mu", self.mu)?, self.need("sigma", self.sigma)?)
                    .map_err(e)?;
                (Marginal::LogNormal(l), one)
            }
            "gamma" => {
                self.check_keys(&["shape", "rate", "scale"])?;
                let g = Gamma::new(self.need("shape", self.shape)?, self.rate()?).map_err(e)?;
                (Marginal::Gamma(g), one)
            }
            "beta" => {
                self.check_keys(&["a", "b"])?;
                let b = Beta::new(self.need("a", self.a)?, self.need("b", self.b)?).map_err(e)?;
                (Marginal::Beta(b), one)
            }
            "exponential" => {
                self.check_keys(&["rate", "scale"])?;
                let x = Exponential::new(self.rate()?).map_err(e)?;
                (Marginal::Exponential(x), one)
            }
            "dirichlet" => {
                self.check_keys(&["k", "a"])?;
                let k = self.k.with_context(|| {
                    format!("model.prior {:?} (dirichlet): `k` is required", self.name)
                })?;
                let d = Dirichlet::new(k, self.a.unwrap_or(1.0)).map_err(e)?;
                (
                    Marginal::Dirichlet(d),
                    (1..=k).map(|i| format!("{}{i}", self.name)).collect(),
                )
            }
            other => bail!(
                "model.prior {:?}: unknown dist {other:?} (expected uniform, normal, \
                 truncated-normal, log-normal, gamma, beta, exponential, dirichlet)",
                self.name
            ),
        })
    }
}

/// The product prior and parameter names of `[[model.prior]]` tables.
///
/// # Errors
/// No tables, invalid tables, repeated names.
pub fn build_prior(decls: &[PriorDecl]) -> Result<(DeclaredPrior, Vec<String>)> {
    if decls.is_empty() {
        bail!("a command model needs its prior: one [[model.prior]] table per parameter");
    }
    let mut blocks = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for d in decls {
        if d.name.is_empty()
            || !d
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            bail!(
                "model.prior name {:?}: use letters, digits and _ only",
                d.name
            );
        }
        let (b, n) = d.build()?;
        for x in &n {
            if names.contains(x) || x == "row" || x == "seed" {
                bail!("model.prior name {x:?} is repeated or reserved");
            }
        }
        blocks.push(b);
        names.extend(n);
    }
    let p = DeclaredPrior::new(blocks).map_err(|e| anyhow::anyhow!("model.prior: {e}"))?;
    Ok((p, names))
}

/// `[model.summary]` of a command model: the summary statistics the `l2` distance compares.
///
/// * `kind = "identity" | "mean" | "quantiles" | "lag-products"`: a library summary
///   ([`ClippedSummary`]) of the simulator's `outputs` scalar values and of the observed data
///   (the data file then holds the raw observations), every value clipped to the declared
///   `[lo, hi]`; its replace-one L2 sensitivity is **proven** by the library. A `sensitivity`
///   given as well is checked: one below the proven bound is refused.
/// * `kind = "simulator"`: the simulator's outputs are the summary already (the data file
///   holds the observed summary). Without `sensitivity` the distance's clip C is its
///   sensitivity (it holds for any pair of data sets); with `sensitivity` (the summary's L2
///   sensitivity) and `relation`, that **user-declared** value is used and labelled so in the
///   ledger — dpinfer cannot check it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SummaryDecl {
    /// `identity`, `mean`, `quantiles`, `lag-products` or `simulator`.
    pub kind: String,
    /// Library summaries: lower clipping bound of every observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    /// Library summaries: upper clipping bound of every observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    /// quantiles: levels in (0, 1], increasing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<Vec<f64>>,
    /// lag-products: lags, increasing (0 = mean square).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lags: Option<Vec<usize>>,
    /// L2 sensitivity of the summary vector (simulator: user-declared; library: checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<f64>,
    /// simulator with `sensitivity`: the neighbouring relation it holds under,
    /// `replace-one` or `add-remove`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
}

/// Ledger label of a proven library-summary sensitivity.
pub const PROVEN_RELATION: &str = "replace-one (one observation of Y* changed; Δ proven from \
     the declared summary and its clip [lo, hi], ×√max w, capped at C)";
/// Ledger label of a user-declared replace-one sensitivity.
pub const USER_REPLACE_ONE: &str = "USER-DECLARED replace-one (one observation of Y* \
     changed; the summary's Δ₂ in model.summary is the user's claim, not checked by dpinfer)";
/// Ledger label of a user-declared add/remove sensitivity.
pub const USER_ADD_REMOVE: &str = "USER-DECLARED add/remove (one observation of Y* added or \
     removed; the summary's Δ₂ in model.summary is the user's claim, not checked by dpinfer)";

/// A validated `[model.summary]` for a simulator with `raw_len` scalar outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredSummary {
    decl: SummaryDecl,
    raw_len: usize,
}

impl DeclaredSummary {
    /// Validates `decl` for `raw_len` outputs of dimension `row_dim` per observation.
    ///
    /// # Errors
    /// Unknown kind, missing or foreign keys, invalid clip, levels or lags, too few
    /// observations, a checked sensitivity below the proven one, an invalid declared one.
    pub fn build(decl: &SummaryDecl, raw_len: usize, row_dim: usize) -> Result<Self> {
        let d = Self {
            decl: decl.clone(),
            raw_len,
        };
        let k = decl.kind.as_str();
        let given = |key: &str, set: bool| -> Result<()> {
            if set {
                bail!("model.summary: `{key}` does not apply to kind = {k:?}");
            }
            Ok(())
        };
        if let Some(v) = decl.sensitivity
            && !(v.is_finite() && v > 0.0)
        {
            bail!("model.summary.sensitivity must be finite and > 0, got {v}");
        }
        match k {
            "simulator" => {
                given("lo", decl.lo.is_some())?;
                given("hi", decl.hi.is_some())?;
                given("levels", decl.levels.is_some())?;
                given("lags", decl.lags.is_some())?;
                match (&decl.sensitivity, decl.relation.as_deref()) {
                    (None, None) | (Some(_), Some("replace-one" | "add-remove")) => {}
                    (Some(_), None) => bail!(
                        "model.summary.sensitivity is user-declared: say under which \
                         neighbouring relation it holds, relation = \"replace-one\" or \
                         \"add-remove\""
                    ),
                    (None, Some(_)) => {
                        bail!("model.summary.relation belongs with a declared sensitivity")
                    }
                    (Some(_), Some(r)) => bail!(
                        "model.summary.relation = {r:?} (expected \"replace-one\" or \
                         \"add-remove\")"
                    ),
                }
            }
            "identity" | "mean" | "quantiles" | "lag-products" => {
                given("relation", decl.relation.is_some())?;
                given("levels", k != "quantiles" && decl.levels.is_some())?;
                given("lags", k != "lag-products" && decl.lags.is_some())?;
                if row_dim != 1 {
                    bail!(
                        "model.summary kind = {k:?} summarises scalar observations; the \
                         model's rows have dimension {row_dim}"
                    );
                }
                let s = d.library()?;
                let proven = s
                    .sensitivity(raw_len)
                    .map_err(|e| anyhow::anyhow!("model.summary ({k}, {raw_len} values): {e}"))?;
                if let Some(v) = decl.sensitivity
                    && v < proven.l2
                {
                    bail!(
                        "model.summary.sensitivity = {v} is below the proven replace-one L2 \
                         sensitivity {} of this summary over [{}, {}] with n = {raw_len}: it \
                         would under-report ε; leave it out to use the proven value",
                        proven.l2,
                        s_lo(decl),
                        s_hi(decl)
                    );
                }
            }
            other => bail!(
                "model.summary.kind {other:?}: expected identity, mean, quantiles, \
                 lag-products (library summaries with a proven sensitivity) or simulator"
            ),
        }
        Ok(d)
    }

    /// The library summary, `None` for `kind = "simulator"`.
    fn library(&self) -> Result<ClippedSummary<'_>> {
        let d = &self.decl;
        let lo =
            d.lo.context("model.summary: `lo` (clip of each observation) is required")?;
        let hi =
            d.hi.context("model.summary: `hi` (clip of each observation) is required")?;
        let kind = match d.kind.as_str() {
            "identity" => SummaryKind::Identity,
            "mean" => SummaryKind::Mean,
            "quantiles" => SummaryKind::Quantiles(
                d.levels
                    .as_deref()
                    .context("model.summary: `levels` is required for quantiles")?,
            ),
            "lag-products" => SummaryKind::LagProducts(
                d.lags
                    .as_deref()
                    .context("model.summary: `lags` is required for lag-products")?,
            ),
            other => bail!("model.summary kind {other:?} is not a library summary"),
        };
        ClippedSummary::new(kind, lo, hi)
            .map_err(|e| anyhow::anyhow!("model.summary ({}): {e}", d.kind))
    }

    fn is_library(&self) -> bool {
        self.decl.kind != "simulator"
    }

    /// Values per summary.
    #[must_use]
    pub fn output_len(&self) -> usize {
        if self.is_library() {
            self.library()
                .map_or(self.raw_len, |s| s.output_len(self.raw_len))
        } else {
            self.raw_len
        }
    }

    /// The summary of `raw` (the simulator's outputs, or the raw observed data): the library
    /// summary, or `raw` itself for `kind = "simulator"`.
    ///
    /// # Errors
    /// A length other than the simulator's output length; NaN values.
    pub fn compute(&self, raw: &[f64]) -> Result<Vec<f64>> {
        if raw.len() != self.raw_len {
            bail!(
                "{} values where the summary expects model.outputs = {}",
                raw.len(),
                self.raw_len
            );
        }
        if !self.is_library() {
            return Ok(raw.to_vec());
        }
        let s = self.library()?;
        let mut out = vec![0.0; s.output_len(raw.len())];
        let mut scratch = vec![0.0; raw.len()];
        s.compute(raw, &mut out, &mut scratch)
            .map_err(|e| anyhow::anyhow!("model.summary: {e}"))?;
        Ok(out)
    }

    /// Whether the data file holds raw observations (library summaries) rather than the
    /// observed summary itself.
    #[must_use]
    pub fn summarises_data(&self) -> bool {
        self.is_library()
    }

    /// Δ of the clipped weighted L2 distance to the observed summary and the ledger label of
    /// its neighbouring relation; `None` when the summary gives no bound beyond the clip C.
    ///
    /// # Errors
    /// Invalid weights or clip.
    pub fn distance_sensitivity(
        &self,
        weights: &[f64],
        clip: f64,
    ) -> Result<Option<(f64, &'static str)>> {
        let (l2, relation) = if self.is_library() {
            let proven = self
                .library()?
                .sensitivity(self.raw_len)
                .map_err(|e| anyhow::anyhow!("model.summary: {e}"))?;
            (
                self.decl.sensitivity.unwrap_or(proven.l2).max(proven.l2),
                PROVEN_RELATION,
            )
        } else {
            match (self.decl.sensitivity, self.decl.relation.as_deref()) {
                (Some(v), Some("replace-one")) => (v, USER_REPLACE_ONE),
                (Some(v), Some(_)) => (v, USER_ADD_REMOVE),
                _ => return Ok(None),
            }
        };
        // Only the L2 bound enters the distance's sensitivity.
        let s = SummarySensitivity {
            l1: f64::INFINITY,
            l2,
            relation: if relation == USER_ADD_REMOVE {
                "add-remove"
            } else {
                "replace-one"
            },
        };
        let d = s
            .clipped_weighted_l2(weights, clip)
            .map_err(|e| anyhow::anyhow!("distance: {e}"))?;
        Ok(Some((d, relation)))
    }
}

fn s_lo(d: &SummaryDecl) -> f64 {
    d.lo.unwrap_or(f64::NAN)
}
fn s_hi(d: &SummaryDecl) -> f64 {
    d.hi.unwrap_or(f64::NAN)
}

/// `[model] kind = "command"`: an external simulator with a declared prior.
#[derive(Debug)]
pub struct CommandModel {
    /// The worker pool.
    pub pool: Pool,
    /// The declared prior.
    pub prior: DeclaredPrior,
    /// Parameter names.
    pub names: Vec<String>,
    /// Values per observation row (for the MMD; default 1).
    pub row_dim: usize,
    /// `[model.summary]`: applied to every simulation (inside the pool) and, for library
    /// summaries, to the observed data.
    pub summary: Option<DeclaredSummary>,
}

impl CommandModel {
    /// Builds the model from `[model]`.
    ///
    /// # Errors
    /// Missing or invalid keys, named.
    pub fn build(c: &ModelConfig) -> Result<Self> {
        let command = c.command.clone().context(
            "model.command is required for kind = \"command\" (e.g. [\"python3\", \"sim.py\"])",
        )?;
        let outputs = c
            .outputs
            .context("model.outputs (values per simulation) is required for kind = \"command\"")?;
        let row_dim = c.row_dim.unwrap_or(1);
        if row_dim == 0 || outputs == 0 || !outputs.is_multiple_of(row_dim) {
            bail!(
                "model.outputs = {outputs} must be a positive multiple of model.row_dim = {row_dim}"
            );
        }
        for (key, v) in [
            ("n", c.n.is_some()),
            ("sigma", c.sigma.is_some()),
            ("prior_mean", c.prior_mean.is_some()),
            ("prior_sd", c.prior_sd.is_some()),
            ("population", c.population.is_some()),
            ("tau", c.tau.is_some()),
        ] {
            if v {
                bail!("model.{key} belongs to a built-in model, not to kind = \"command\"");
            }
        }
        let timeout = c.timeout.unwrap_or(60.0);
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0) {
            bail!("model.timeout must be in (0, 86400] seconds, got {timeout}");
        }
        let (prior, names) = build_prior(&c.prior)?;
        let summary = c
            .summary
            .as_ref()
            .map(|d| DeclaredSummary::build(d, outputs, row_dim))
            .transpose()?;
        let pool = Pool::new(ExternalSettings {
            command,
            dir: c.base_dir.clone(),
            param_names: names.clone(),
            outputs,
            batch: c.batch.unwrap_or(64),
            timeout: Duration::from_secs_f64(timeout),
            retries: c.retries.unwrap_or(2),
            summary: summary.clone(),
        })?;
        Ok(Self {
            pool,
            prior,
            names,
            row_dim,
            summary,
        })
    }

    /// One simulation through the pool (row id 0, seed from `rng`): the per-row path used
    /// where the CLI simulates one θ at a time. A failure is printed to stderr and returned
    /// as a fatal [`SimError::Model`]; a rejection as a recoverable one.
    ///
    /// # Errors
    /// As above.
    pub fn simulate_one<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        let outputs = self.output_dim();
        if theta.len() != self.names.len() || out.len() != outputs {
            return Err(SimError::DimensionMismatch {
                what: "theta/out",
                expected: self.names.len(),
                got: theta.len(),
            });
        }
        let req = Request {
            row: 0,
            seed: rng.next_u64(),
            theta: theta.to_vec(),
        };
        match self.pool.run(std::slice::from_ref(&req), 1) {
            Ok(a) => match a.into_iter().next() {
                Some(Answer::Output(v)) => {
                    out.copy_from_slice(&v);
                    Ok(())
                }
                Some(Answer::Reject) => Err(SimError::Model {
                    code: REJECT_CODE,
                    recoverable: true,
                }),
                None => Err(SimError::Model {
                    code: FAILED_CODE,
                    recoverable: false,
                }),
            },
            Err(e) => {
                crate::errln!("error: {e:#}");
                Err(SimError::Model {
                    code: FAILED_CODE,
                    recoverable: false,
                })
            }
        }
    }
}

impl Prior for CommandModel {
    fn dim(&self) -> usize {
        self.prior.dim()
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        self.prior.sample(rng, out)
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        self.prior.ln_density(theta)
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        self.prior.in_support(theta)
    }
}

impl Simulator for CommandModel {
    fn param_dim(&self) -> usize {
        self.names.len()
    }
    fn output_dim(&self) -> usize {
        self.summary
            .as_ref()
            .map_or(self.pool.settings().outputs, DeclaredSummary::output_len)
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        self.simulate_one(theta, rng, out)
    }
}

/// Reads observed data from an Arrow IPC file (`.arrow`, `.feather`, `.ipc`; the file format
/// pandas, polars, R `arrow` and DuckDB write): one row per observation, every column numeric
/// (`float64`, `float32` or an integer type) without nulls, values returned row-major. With
/// `strict_rows` the number of columns must be `row_dim`.
///
/// # Errors
/// I/O, not an Arrow file, non-numeric or null columns, non-finite values, a column count that
/// is not the model's row dimension, an empty table — each naming the file and the column.
pub fn read_arrow_data(
    path: &std::path::Path,
    row_dim: usize,
    strict_rows: bool,
) -> Result<Vec<f64>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read data file {}", path.display()))?;
    let reader = arrow_ipc::reader::FileReader::try_new(std::io::BufReader::new(file), None)
        .with_context(|| format!("data file {} is not an Arrow IPC file", path.display()))?;
    let schema = reader.schema();
    numeric_rows(path, &schema, reader, row_dim, strict_rows)
}

/// Reads observed data from a Parquet file (`.parquet`; pandas, polars, R `arrow`, DuckDB and
/// Spark write it; snappy, zstd and gzip compression) exactly as [`read_arrow_data`] reads
/// an Arrow IPC file. Built with the CLI's `parquet` feature only.
///
/// # Errors
/// As [`read_arrow_data`]; a file that is not Parquet or uses another codec.
#[cfg(feature = "parquet")]
pub fn read_parquet_data(
    path: &std::path::Path,
    row_dim: usize,
    strict_rows: bool,
) -> Result<Vec<f64>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read data file {}", path.display()))?;
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .with_context(|| format!("data file {} is not a Parquet file", path.display()))?;
    let schema = std::sync::Arc::clone(builder.schema());
    let reader = builder
        .build()
        .with_context(|| format!("data file {}: cannot read its row groups", path.display()))?;
    numeric_rows(path, &schema, reader, row_dim, strict_rows)
}

/// The numeric columns of a table read batch by batch, as row-major values (the shared body
/// of [`read_arrow_data`] and the Parquet reader).
fn numeric_rows(
    path: &std::path::Path,
    schema: &arrow_schema::Schema,
    reader: impl Iterator<Item = Result<arrow_array::RecordBatch, arrow_schema::ArrowError>>,
    row_dim: usize,
    strict_rows: bool,
) -> Result<Vec<f64>> {
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
        UInt32Type, UInt64Type,
    };
    use arrow_schema::DataType;
    let cols = schema.fields().len();
    if strict_rows && cols != row_dim {
        bail!(
            "data file {}: {cols} columns, the model's rows have dimension {row_dim}",
            path.display()
        );
    }
    let mut vals = Vec::new();
    for batch in reader {
        let batch =
            batch.with_context(|| format!("data file {}: damaged batch", path.display()))?;
        let mut columns: Vec<Vec<f64>> = Vec::with_capacity(cols);
        for (f, a) in schema.fields().iter().zip(batch.columns()) {
            if a.null_count() > 0 {
                bail!(
                    "data file {}: column {:?} holds nulls",
                    path.display(),
                    f.name()
                );
            }
            #[allow(clippy::cast_precision_loss)]
            let v: Vec<f64> = match a.data_type() {
                DataType::Float64 => a.as_primitive::<Float64Type>().values().to_vec(),
                DataType::Float32 => a
                    .as_primitive::<Float32Type>()
                    .values()
                    .iter()
                    .map(|&x| f64::from(x))
                    .collect(),
                DataType::Int8 => a
                    .as_primitive::<Int8Type>()
                    .values()
                    .iter()
                    .map(|&x| f64::from(x))
                    .collect(),
                DataType::Int16 => a
                    .as_primitive::<Int16Type>()
                    .values()
                    .iter()
                    .map(|&x| f64::from(x))
                    .collect(),
                DataType::Int32 => a
                    .as_primitive::<Int32Type>()
                    .values()
                    .iter()
                    .map(|&x| f64::from(x))
                    .collect(),
                DataType::Int64 => a
                    .as_primitive::<Int64Type>()
                    .values()
                    .iter()
                    .map(|&x| x as f64)
                    .collect(),
                DataType::UInt8 => a
                    .as_primitive::<UInt8Type>()
                    .values()
                    .iter()
                    .map(|&x| f64::from(x))
                    .collect(),
                DataType::UInt16 => a
                    .as_primitive::<UInt16Type>()
                    .values()
                    .iter()
                    .map(|&x| f64::from(x))
                    .collect(),
                DataType::UInt32 => a
                    .as_primitive::<UInt32Type>()
                    .values()
                    .iter()
                    .map(|&x| f64::from(x))
                    .collect(),
                DataType::UInt64 => a
                    .as_primitive::<UInt64Type>()
                    .values()
                    .iter()
                    .map(|&x| x as f64)
                    .collect(),
                other => bail!(
                    "data file {}: column {:?} has type {other}, expected numbers",
                    path.display(),
                    f.name()
                ),
            };
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                bail!(
                    "data file {}: column {:?} row {} is not finite",
                    path.display(),
                    f.name(),
                    vals.len() / cols.max(1) + i + 1
                );
            }
            columns.push(v);
        }
        for r in 0..batch.num_rows() {
            vals.extend(columns.iter().map(|c| c[r]));
        }
    }
    if vals.is_empty() {
        bail!("data file {} holds no values", path.display());
    }
    if row_dim > 1 && !vals.len().is_multiple_of(row_dim) {
        bail!(
            "data file {}: {} values do not form rows of the model's dimension {row_dim}",
            path.display(),
            vals.len()
        );
    }
    Ok(vals)
}
