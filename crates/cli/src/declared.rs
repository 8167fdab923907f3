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
        let pool = Pool::new(ExternalSettings {
            command,
            dir: c.base_dir.clone(),
            param_names: names.clone(),
            outputs,
            batch: c.batch.unwrap_or(64),
            timeout: Duration::from_secs_f64(timeout),
            retries: c.retries.unwrap_or(2),
        })?;
        Ok(Self {
            pool,
            prior,
            names,
            row_dim,
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
        let outputs = self.pool.settings().outputs;
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
        self.pool.settings().outputs
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
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
        UInt32Type, UInt64Type,
    };
    use arrow_schema::DataType;
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read data file {}", path.display()))?;
    let reader = arrow_ipc::reader::FileReader::try_new(std::io::BufReader::new(file), None)
        .with_context(|| format!("data file {} is not an Arrow IPC file", path.display()))?;
    let schema = reader.schema();
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
