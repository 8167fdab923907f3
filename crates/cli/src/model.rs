//! The built-in models behind one enum: prior draws, simulation, the embedded data sets and
//! the true θ where the paper knows it.

use std::path::Path;

use anyhow::{Context, Result, bail};
use dpinfer::simulators::models::banana::{Banana, BananaSettings};
use dpinfer::simulators::models::cubic::{CubicOutbreak, NETHERLANDS_CASES};
use dpinfer::simulators::models::gaussian::GaussianMean;
use dpinfer::simulators::models::linreg::{BETA_STAR, LinRegSettings, LinearRegression};
use dpinfer::simulators::models::mixture::{PAPER_N, THETA_STAR, UniformMixture};
use dpinfer::simulators::models::sir::{self, SirSettings, SirTauLeap};
use dpinfer::simulators::models::tb::{TRUE_THETA, TbPrior, Tuberculosis};
use dpinfer::simulators::prior::{DeclaredPrior, Dirichlet, IidNormal, LogNormal, Product};
use dpinfer::simulators::{Prior, SimError, SimStream, Simulator, StreamVersion};
use rand::Rng;

use crate::config::ModelConfig;

/// Stream domain of the embedded observed data set.
pub const OBS_DOMAIN: u64 = 0x4f42_5300; // "OBS"

/// True mean of the embedded gaussian-mean data set.
pub const GAUSSIAN_TRUE_MEAN: f64 = 1.0;

/// A built-in model with its prior.
#[derive(Debug, Clone)]
pub enum Model {
    /// y_i ~ N(μ, σ²), μ ~ N(μ₀, τ₀²): conjugate, exact posterior.
    GaussianMean(GaussianMean),
    /// Mixture of uniforms, θ ~ Dirichlet(1) (ABCDP §6.1).
    UniformMixture(UniformMixture, Dirichlet),
    /// Cubic outbreak curve (ABCDP §6.2), data: the Netherlands 2009 case counts.
    Cubic(CubicOutbreak, IidNormal),
    /// SIR by tau-leaping (Xiong et al. §4.1).
    Sir(Box<SirTauLeap>, Product<LogNormal, LogNormal>),
    /// Banana (Räisä 2021 §2.3), for MCMC.
    Banana(Banana),
    /// Linear regression through clamped, normalised sufficient statistics (Xiong et al. §4.2),
    /// two predictors.
    LinReg(LinearRegression<2>, IidNormal),
    /// Tuberculosis birth–death–mutation model with 8 genotype summaries (ABCDP §6.3).
    Tuberculosis(Tuberculosis, TbPrior),
    /// `kind = "command"`: the user's simulator as external worker processes, with a
    /// declared prior (`crate::declared`).
    Command(std::sync::Arc<crate::declared::CommandModel>),
    /// A built-in model whose paper prior is replaced by `[[model.prior]]` tables (same
    /// parameter names, in θ order): the simulator, data and truth are the inner model's.
    /// Samplers with a model-specific prior (the MCMC samplers' exact priors, sharded SMC's
    /// simplex check) do not recognise it and refuse it rather than ignore the override.
    WithPrior(Box<(Model, DeclaredPrior)>),
}

/// Prior view of a [`Model`].
#[derive(Debug, Clone, Copy)]
pub struct ModelPrior<'a>(pub &'a Model);
/// Simulator view of a [`Model`].
#[derive(Debug, Clone, Copy)]
pub struct ModelSim<'a>(pub &'a Model);

fn sim_err(e: SimError) -> anyhow::Error {
    anyhow::anyhow!("model: {e}")
}

impl Model {
    /// Builds the model named in the config; `n_override` is the observed data size when a
    /// data file decides it.
    ///
    /// # Errors
    /// Unknown model name or invalid model parameters.
    pub fn build(c: &ModelConfig, n_override: Option<usize>) -> Result<Self> {
        match c.kind.as_deref() {
            Some("command") => {
                // The worker draws its own random numbers from the row seeds: the stream
                // version of the built-in models has no meaning there.
                if c.stream_version.is_some() {
                    bail!(
                        "model.stream_version applies to the built-in models only; an external \
                         simulator (model.kind = \"command\") draws from its row seeds itself"
                    );
                }
                return Ok(Self::Command(std::sync::Arc::new(
                    crate::declared::CommandModel::build(c)?,
                )));
            }
            None | Some("builtin") => {}
            Some(other) => bail!("unknown model.kind {other:?} (expected \"command\" or none)"),
        }
        if !c.prior.is_empty() {
            let paper = Self::build(
                &ModelConfig {
                    prior: Vec::new(),
                    ..c.clone()
                },
                n_override,
            )?;
            let (prior, names) = crate::declared::build_prior(&c.prior)?;
            if names != paper.names() {
                bail!(
                    "model.prior declares the parameters {names:?}; the {} model's θ is {:?} \
                     (one [[model.prior]] table per parameter, in this order)",
                    paper.name(),
                    paper.names()
                );
            }
            return Ok(Self::WithPrior(Box::new((paper, prior))));
        }
        for (key, set) in [
            ("command", c.command.is_some()),
            ("outputs", c.outputs.is_some()),
            ("row_dim", c.row_dim.is_some()),
            ("batch", c.batch.is_some()),
            ("timeout", c.timeout.is_some()),
            ("retries", c.retries.is_some()),
            ("summary", c.summary.is_some()),
        ] {
            if set {
                bail!("model.{key} belongs to kind = \"command\"");
            }
        }
        let n = n_override.or(c.n);
        let version = StreamVersion::try_from(c.stream_version.unwrap_or(1))
            .map_err(|_| anyhow::anyhow!("model.stream_version must be 1 or 2"))?;
        if c.obs_times.is_some() && c.name != "sir" {
            bail!("model.obs_times applies to the sir model only");
        }
        Ok(match c.name.as_str() {
            "gaussian-mean" => Self::GaussianMean(
                GaussianMean::new(
                    n.unwrap_or(100),
                    c.sigma.unwrap_or(1.0),
                    c.prior_mean.unwrap_or(0.0),
                    c.prior_sd.unwrap_or(10.0),
                )
                .map_err(sim_err)?
                .with_stream_version(version),
            ),
            "uniform-mixture" => {
                let m = UniformMixture::new(5, n.unwrap_or(PAPER_N)).map_err(sim_err)?;
                let p = m.prior().map_err(sim_err)?;
                Self::UniformMixture(m, p)
            }
            "cubic-outbreak" => {
                let m = CubicOutbreak::paper().with_stream_version(version);
                if let Some(n) = n
                    && n != NETHERLANDS_CASES.len()
                {
                    bail!(
                        "model.n = {n}: the cubic-outbreak curve has {} points",
                        NETHERLANDS_CASES.len()
                    );
                }
                let p = m.prior().map_err(sim_err)?;
                Self::Cubic(m, p)
            }
            "sir" => {
                let mut s = SirSettings::paper();
                if let Some(k) = c.population {
                    s.population = k;
                }
                if let Some(t) = &c.obs_times {
                    if let Some(n) = n
                        && n != t.len()
                    {
                        bail!("model.n = {n} but model.obs_times has {} times", t.len());
                    }
                    s = s.with_times(t).map_err(sim_err)?;
                } else if let Some(n) = n {
                    s.n_obs = n;
                }
                let m = SirTauLeap::new(s, c.tau.unwrap_or(0.5)).map_err(sim_err)?;
                Self::Sir(Box::new(m), sir::paper_prior().map_err(sim_err)?)
            }
            "linear-regression" => {
                let mut s = LinRegSettings::paper();
                if let Some(n) = n {
                    s.n = n;
                }
                let m = LinearRegression::new(s)
                    .map_err(sim_err)?
                    .with_stream_version(version);
                let p = m.prior().map_err(sim_err)?;
                Self::LinReg(m, p)
            }
            "tuberculosis" => {
                if n.is_some() {
                    bail!("model.n: the tuberculosis model's summaries have a fixed size");
                }
                Self::Tuberculosis(Tuberculosis::reference(), TbPrior::reference())
            }
            "banana" => {
                let mut s = BananaSettings::thesis_2d();
                s.n = n.unwrap_or(10_000);
                Self::Banana(
                    Banana::new(s)
                        .map_err(sim_err)?
                        .with_stream_version(version),
                )
            }
            other => bail!(
                "unknown model.name {other:?} (expected gaussian-mean, uniform-mixture, \
                 cubic-outbreak, sir, linear-regression, tuberculosis, banana)"
            ),
        })
    }

    /// The model behind a declared prior (`WithPrior`), otherwise `self`: for checks that
    /// depend on the simulator and its statistic only (a release's proven sensitivity, the
    /// SIR binomial release, the simplex of uniform-mixture), never on the prior.
    #[must_use]
    pub fn base(&self) -> &Self {
        match self {
            Self::WithPrior(b) => b.0.base(),
            _ => self,
        }
    }

    /// Config name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::GaussianMean(_) => "gaussian-mean",
            Self::UniformMixture(..) => "uniform-mixture",
            Self::Cubic(..) => "cubic-outbreak",
            Self::Sir(..) => "sir",
            Self::Banana(_) => "banana",
            Self::LinReg(..) => "linear-regression",
            Self::Tuberculosis(..) => "tuberculosis",
            Self::Command(_) => "command",
            Self::WithPrior(b) => match &b.0 {
                Self::GaussianMean(_) => "gaussian-mean (declared prior)",
                Self::UniformMixture(..) => "uniform-mixture (declared prior)",
                Self::Cubic(..) => "cubic-outbreak (declared prior)",
                Self::Sir(..) => "sir (declared prior)",
                Self::Banana(_) => "banana (declared prior)",
                Self::LinReg(..) => "linear-regression (declared prior)",
                Self::Tuberculosis(..) => "tuberculosis (declared prior)",
                Self::Command(_) | Self::WithPrior(_) => "declared prior",
            },
        }
    }

    /// dim θ.
    #[must_use]
    pub fn dim(&self) -> usize {
        ModelSim(self).param_dim()
    }

    /// Parameter names.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        match self {
            Self::GaussianMean(_) => vec!["mu".into()],
            Self::UniformMixture(..) => (1..=5).map(|i| format!("theta{i}")).collect(),
            Self::Cubic(..) => (0..4).map(|i| format!("a{i}")).collect(),
            Self::Sir(..) => vec!["beta".into(), "gamma".into()],
            Self::Banana(b) => (1..=b.settings().dim)
                .map(|i| format!("theta{i}"))
                .collect(),
            Self::LinReg(..) => vec!["beta0".into(), "beta1".into(), "beta2".into()],
            Self::Tuberculosis(..) => vec!["R1".into(), "t1".into(), "R2".into(), "beta".into()],
            Self::Command(m) => m.names.clone(),
            Self::WithPrior(b) => b.0.names(),
        }
    }

    /// The true θ of the embedded data set, when there is one.
    #[must_use]
    pub fn truth(&self) -> Option<Vec<f64>> {
        match self {
            Self::GaussianMean(_) => Some(vec![GAUSSIAN_TRUE_MEAN]),
            Self::UniformMixture(..) => Some(THETA_STAR.to_vec()),
            Self::Cubic(..) => None,
            Self::Sir(..) => Some(sir::theta_star().to_vec()),
            Self::Banana(b) => {
                let mut t = vec![0.0; b.settings().dim];
                t[0] = dpinfer::simulators::models::banana::THESIS_THETA_1;
                t[1] = dpinfer::simulators::models::banana::THESIS_THETA_2;
                Some(t)
            }
            Self::LinReg(..) => Some(BETA_STAR.to_vec()),
            Self::Tuberculosis(..) => Some(TRUE_THETA.to_vec()),
            Self::Command(_) => None,
            Self::WithPrior(b) => b.0.truth(),
        }
    }

    /// Length of one observation row: the data set is `rows × row_dim`, row-major, and the
    /// MMD compares the sets of rows. Curves (cubic, SIR) are sets of 1-D values for the MMD
    /// and one summary vector for the L2 distance.
    #[must_use]
    pub fn row_dim(&self) -> usize {
        match self {
            Self::Banana(b) => b.settings().dim,
            Self::Command(m) => m.row_dim,
            Self::WithPrior(b) => b.0.row_dim(),
            _ => 1,
        }
    }

    /// Values in one simulated data set.
    #[must_use]
    pub fn output_len(&self) -> usize {
        ModelSim(self).output_dim()
    }

    /// Whether a data file decides the simulated data size (i.i.d. models).
    #[must_use]
    pub fn iid_rows(&self) -> bool {
        match self {
            Self::WithPrior(b) => b.0.iid_rows(),
            _ => matches!(
                self,
                Self::GaussianMean(_) | Self::UniformMixture(..) | Self::Banana(_)
            ),
        }
    }

    /// The observed data as the distance sees them: a command model's library summary
    /// (`[model.summary]`) of the raw observations, otherwise the data unchanged. A declared
    /// summary needs `distance.kind = "l2"` (the sensitivity it proves is for the clipped
    /// weighted L2 distance).
    ///
    /// # Errors
    /// A declared summary with another distance, data of the wrong length, NaN.
    pub fn observe(&self, data: Vec<f64>, distance_kind: &str) -> Result<Vec<f64>> {
        let Self::Command(m) = self else {
            return Ok(data);
        };
        let Some(s) = &m.summary else {
            return Ok(data);
        };
        if distance_kind != "l2" {
            bail!(
                "model.summary needs distance.kind = \"l2\" (got {distance_kind:?}): its \
                 sensitivity is derived for the clipped weighted L2 distance"
            );
        }
        if !s.summarises_data() {
            return Ok(data);
        }
        s.compute(&data)
            .context("observed data (the data file holds the raw observations)")
    }

    /// The sensitivity of the clipped weighted L2 distance to the observed summary that a
    /// declared summary justifies, with the ledger label of its neighbouring relation (proven
    /// for library summaries, labelled user-declared otherwise); `None` when only the clip C
    /// bounds it.
    ///
    /// # Errors
    /// Invalid weights or clip.
    pub fn summary_sensitivity(
        &self,
        weights: &[f64],
        clip: f64,
    ) -> Result<Option<(f64, &'static str)>> {
        match self {
            Self::Command(m) => match &m.summary {
                Some(s) => s.distance_sensitivity(weights, clip),
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// The model's paper prior as `[[model.prior]]` tables (TOML), for the models whose prior
    /// is a product of the declarable distributions: a config that pastes them in gets the
    /// same prior density, support and parameter order (tested), and edits them to override
    /// it. `None` for priors that are not such a product (tuberculosis: truncated joint
    /// constraints; banana: the thesis prior) and for declared priors.
    #[must_use]
    pub fn paper_prior_toml(&self) -> Option<String> {
        let table = |name: &str, dist: &str, keys: &[(&str, String)]| {
            let mut t = format!("[[model.prior]]\nname = \"{name}\"\ndist = \"{dist}\"\n");
            for (k, v) in keys {
                t.push_str(&format!("{k} = {v}\n"));
            }
            t
        };
        let normals = |names: &[String]| {
            names
                .iter()
                .map(|n| table(n, "normal", &[("mean", "0.0".into()), ("sd", "1.0".into())]))
                .collect::<Vec<_>>()
                .join("\n")
        };
        match self {
            Self::GaussianMean(m) => {
                let p = m.prior();
                Some(table(
                    "mu",
                    "normal",
                    &[
                        ("mean", format!("{:?}", p.mean())),
                        ("sd", format!("{:?}", p.sd())),
                    ],
                ))
            }
            Self::UniformMixture(m, _) => Some(table(
                "theta",
                "dirichlet",
                &[("k", m.param_dim().to_string()), ("a", "1.0".into())],
            )),
            // CubicOutbreak::prior and LinearRegression::prior: i.i.d. N(0, 1).
            Self::Cubic(..) | Self::LinReg(..) => Some(normals(&self.names())),
            Self::Sir(_, p) => {
                let (b, g) = (p.a.log_normal(), p.b.log_normal());
                Some(format!(
                    "{}\n{}",
                    table(
                        "beta",
                        "log-normal",
                        &[
                            ("mu", format!("{:?}", b.mean())),
                            ("sigma", format!("{:?}", b.sd()))
                        ]
                    ),
                    table(
                        "gamma",
                        "log-normal",
                        &[
                            ("mu", format!("{:?}", g.mean())),
                            ("sigma", format!("{:?}", g.sd()))
                        ]
                    )
                ))
            }
            Self::Banana(_) | Self::Tuberculosis(..) | Self::Command(_) | Self::WithPrior(_) => {
                None
            }
        }
    }

    /// The embedded observed data set: the paper's data, or one simulation at the true θ
    /// from `SimStream::with_domain(seed, OBS_DOMAIN, 0)`.
    ///
    /// # Errors
    /// Simulator failures.
    pub fn default_data(&self, seed: u64) -> Result<Vec<f64>> {
        if let Self::Cubic(..) = self {
            return Ok(NETHERLANDS_CASES.to_vec());
        }
        if let Self::WithPrior(b) = self {
            // The embedded data set does not depend on the prior.
            return b.0.default_data(seed);
        }
        if let Self::Command(_) = self {
            bail!("a command model has no embedded data set: give [data] path = \"observed.csv\"");
        }
        let truth = self.truth().context("model has no true θ")?;
        let mut out = vec![0.0; ModelSim(self).output_dim()];
        let mut rng = SimStream::with_domain(seed, OBS_DOMAIN, 0);
        ModelSim(self)
            .simulate(&truth, &mut rng, &mut out)
            .map_err(sim_err)?;
        Ok(out)
    }
}

impl Prior for ModelPrior<'_> {
    fn dim(&self) -> usize {
        match self.0 {
            Model::GaussianMean(m) => m.prior().dim(),
            Model::UniformMixture(_, p) => p.dim(),
            Model::Cubic(_, p) => p.dim(),
            Model::Sir(_, p) => p.dim(),
            Model::Banana(b) => b.prior().dim(),
            Model::LinReg(_, p) => p.dim(),
            Model::Tuberculosis(_, p) => p.dim(),
            Model::Command(m) => m.dim(),
            Model::WithPrior(b) => b.1.dim(),
        }
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        match self.0 {
            Model::GaussianMean(m) => m.prior().sample(rng, out),
            Model::UniformMixture(_, p) => p.sample(rng, out),
            Model::Cubic(_, p) => p.sample(rng, out),
            Model::Sir(_, p) => p.sample(rng, out),
            Model::Banana(b) => b.prior().sample(rng, out),
            Model::LinReg(_, p) => p.sample(rng, out),
            Model::Tuberculosis(_, p) => p.sample(rng, out),
            Model::Command(m) => m.sample(rng, out),
            Model::WithPrior(b) => b.1.sample(rng, out),
        }
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        match self.0 {
            Model::GaussianMean(m) => m.prior().ln_density(theta),
            Model::UniformMixture(_, p) => p.ln_density(theta),
            Model::Cubic(_, p) => p.ln_density(theta),
            Model::Sir(_, p) => p.ln_density(theta),
            Model::Banana(b) => b.prior().ln_density(theta),
            Model::LinReg(_, p) => p.ln_density(theta),
            Model::Tuberculosis(_, p) => p.ln_density(theta),
            Model::Command(m) => m.ln_density(theta),
            Model::WithPrior(b) => b.1.ln_density(theta),
        }
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        match self.0 {
            Model::GaussianMean(m) => m.prior().in_support(theta),
            Model::UniformMixture(_, p) => p.in_support(theta),
            Model::Cubic(_, p) => p.in_support(theta),
            Model::Sir(_, p) => p.in_support(theta),
            Model::Banana(b) => b.prior().in_support(theta),
            Model::LinReg(_, p) => p.in_support(theta),
            Model::Tuberculosis(_, p) => p.in_support(theta),
            Model::Command(m) => m.in_support(theta),
            Model::WithPrior(b) => b.1.in_support(theta),
        }
    }
}

impl Simulator for ModelSim<'_> {
    fn param_dim(&self) -> usize {
        match self.0 {
            Model::GaussianMean(m) => m.param_dim(),
            Model::UniformMixture(m, _) => m.param_dim(),
            Model::Cubic(m, _) => m.param_dim(),
            Model::Sir(m, _) => m.param_dim(),
            Model::Banana(m) => m.param_dim(),
            Model::LinReg(m, _) => m.param_dim(),
            Model::Tuberculosis(m, _) => m.param_dim(),
            Model::Command(m) => m.param_dim(),
            Model::WithPrior(b) => ModelSim(&b.0).param_dim(),
        }
    }
    fn output_dim(&self) -> usize {
        match self.0 {
            Model::GaussianMean(m) => m.output_dim(),
            Model::UniformMixture(m, _) => m.output_dim(),
            Model::Cubic(m, _) => m.output_dim(),
            Model::Sir(m, _) => m.output_dim(),
            Model::Banana(m) => m.output_dim(),
            Model::LinReg(m, _) => m.output_dim(),
            Model::Tuberculosis(m, _) => m.output_dim(),
            Model::Command(m) => m.output_dim(),
            Model::WithPrior(b) => ModelSim(&b.0).output_dim(),
        }
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        match self.0 {
            Model::GaussianMean(m) => m.simulate(theta, rng, out),
            Model::UniformMixture(m, _) => m.simulate(theta, rng, out),
            Model::Cubic(m, _) => m.simulate(theta, rng, out),
            Model::Sir(m, _) => m.simulate(theta, rng, out),
            Model::Banana(m) => m.simulate(theta, rng, out),
            Model::LinReg(m, _) => m.simulate(theta, rng, out),
            Model::Tuberculosis(m, _) => m.simulate(theta, rng, out),
            Model::Command(m) => m.simulate(theta, rng, out),
            Model::WithPrior(b) => ModelSim(&b.0).simulate(theta, rng, out),
        }
    }
}

/// Reads observed data: an Arrow IPC file by its extension (`.arrow`, `.feather`, `.ipc`;
/// `crate::declared::read_arrow_data`), a Parquet file (`.parquet`, with the `parquet`
/// feature), otherwise a CSV of numbers (no header; `#` comments and blank lines skipped) into row-major
/// values, checking that every value is finite, every line has the same number of values and,
/// with `strict_rows` (one observation per line), that this number is `row_dim`.
///
/// # Errors
/// I/O, parse errors, ragged rows, non-finite values — each names the line.
pub fn read_data(path: &Path, row_dim: usize, strict_rows: bool) -> Result<Vec<f64>> {
    if matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("arrow" | "feather" | "ipc")
    ) {
        return crate::declared::read_arrow_data(path, row_dim, strict_rows);
    }
    if path.extension().and_then(|e| e.to_str()) == Some("parquet") {
        #[cfg(feature = "parquet")]
        return crate::declared::read_parquet_data(path, row_dim, strict_rows);
        #[cfg(not(feature = "parquet"))]
        bail!(
            "data file {}: this dpinfer was built without Parquet support; rebuild with \
             `cargo build --release -p dpinfer-cli --features parquet`, or save the data as Arrow IPC \
             (.arrow) or CSV",
            path.display()
        );
    }
    let text = crate::files::read_input_text(path, "data file", None)?;
    let mut vals = Vec::new();
    let mut per_row: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut k = 0;
        for f in line.split([',', ' ', '\t']).filter(|s| !s.is_empty()) {
            let v: f64 = f.trim().parse().with_context(|| {
                format!(
                    "data file {} line {}: {f:?} is not a number",
                    path.display(),
                    i + 1
                )
            })?;
            if !v.is_finite() {
                bail!(
                    "data file {} line {}: non-finite value {v}",
                    path.display(),
                    i + 1
                );
            }
            vals.push(v);
            k += 1;
        }
        if strict_rows && k != row_dim {
            bail!(
                "data file {} line {}: {k} values, the model's rows have dimension {row_dim}",
                path.display(),
                i + 1
            );
        }
        match per_row {
            None => per_row = Some(k),
            Some(p) if p != k => bail!(
                "data file {} line {}: {k} values, earlier rows have {p}",
                path.display(),
                i + 1
            ),
            Some(_) => {}
        }
    }
    if vals.is_empty() {
        bail!("data file {} holds no values", path.display());
    }
    if row_dim > 1 && vals.len() % row_dim != 0 {
        bail!(
            "data file {}: {} values do not form rows of the model's dimension {row_dim}",
            path.display(),
            vals.len()
        );
    }
    Ok(vals)
}

#[cfg(test)]
mod tests {
    use super::{Model, ModelPrior, ModelSim};
    use crate::config::ModelConfig;
    use dpinfer::simulators::Simulator;

    fn sir(extra: &str) -> anyhow::Result<Model> {
        let c: ModelConfig = toml::from_str(&format!("name = \"sir\"\n{extra}")).unwrap();
        Model::build(&c, None)
    }

    /// Issue 16: a built-in model's paper prior written as `[[model.prior]]` tables
    /// (`paper_prior_toml`) is the same prior: equal log densities (to 1e-12) at 300 draws
    /// from the paper prior and at points outside its support, the same support, the same
    /// parameter order.
    #[test]
    fn paper_priors_are_expressible_as_declared_tables() {
        use dpinfer::simulators::{Prior, SimStream};
        for name in [
            "gaussian-mean",
            "uniform-mixture",
            "cubic-outbreak",
            "sir",
            "linear-regression",
        ] {
            let c: ModelConfig = toml::from_str(&format!("name = \"{name}\"")).unwrap();
            let paper = Model::build(&c, None).unwrap();
            let tables = paper.paper_prior_toml().unwrap();
            let c2: ModelConfig =
                // (a `[model]` table parsed alone: `[[model.prior]]` becomes `[[prior]]`)
                toml::from_str(&format!(
                    "name = \"{name}\"\n{}",
                    tables.replace("[[model.prior]]", "[[prior]]")
                ))
                .unwrap();
            let declared = Model::build(&c2, None).unwrap();
            assert!(matches!(declared, Model::WithPrior(_)), "{name}");
            assert_eq!(declared.names(), paper.names(), "{name}");
            let (p, q) = (ModelPrior(&paper), ModelPrior(&declared));
            let mut rng = SimStream::with_domain(5, 0, 0);
            let mut th = vec![0.0; p.dim()];
            for i in 0..300 {
                p.sample(&mut rng, &mut th).unwrap();
                let (a, b) = (p.ln_density(&th), q.ln_density(&th));
                assert!(
                    (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                    "{name} at {th:?}: {a} vs {b}"
                );
                assert!(q.in_support(&th), "{name}");
                // Off the support (negative rates, off the simplex) or far in the tails.
                let mut off = th.clone();
                let j = i % off.len();
                off[j] = -0.5 - f64::from(u32::try_from(i).unwrap());
                assert_eq!(p.in_support(&off), q.in_support(&off), "{name} at {off:?}");
                let (a, b) = (p.ln_density(&off), q.ln_density(&off));
                // Both −∞ off the support, else equal to 1e-12.
                let same = (a.is_infinite() && a.to_bits() == b.to_bits())
                    || (a - b).abs() <= 1e-12 * a.abs().max(1.0);
                assert!(same, "{name}: {a} vs {b}");
            }
            // The simulator is the built-in one.
            assert_eq!(declared.output_len(), paper.output_len());
            assert_eq!(
                declared.default_data(3).unwrap(),
                paper.default_data(3).unwrap()
            );
        }
        for name in ["banana", "tuberculosis"] {
            let c: ModelConfig = toml::from_str(&format!("name = \"{name}\"")).unwrap();
            assert!(Model::build(&c, None).unwrap().paper_prior_toml().is_none());
        }
    }

    /// An override replaces the prior, and must name the model's parameters in order.
    #[test]
    fn stream_version_is_refused_for_an_external_simulator() {
        let c: ModelConfig = toml::from_str(
            "name = \"sim\"\nkind = \"command\"\ncommand = [\"python3\"]\nstream_version = 2",
        )
        .unwrap();
        let e = Model::build(&c, None).unwrap_err().to_string();
        assert!(
            e.contains("model.stream_version applies to the built-in models only"),
            "{e}"
        );
    }

    #[test]
    fn a_builtin_prior_can_be_overridden() {
        use dpinfer::simulators::Prior;
        let c: ModelConfig = toml::from_str(
            "name = \"sir\"\n[[prior]]\nname = \"beta\"\ndist = \"uniform\"\nlo = 0.1\nhi = 1.0\n\
             [[prior]]\nname = \"gamma\"\ndist = \"gamma\"\nshape = 2.0\nrate = 20.0\n",
        )
        .unwrap();
        let m = Model::build(&c, None).unwrap();
        assert_eq!(m.name(), "sir (declared prior)");
        let p = ModelPrior(&m);
        assert!(!p.in_support(&[1.5, 0.1]), "outside the declared uniform");
        // Uniform(0.1, 1) × Gamma(2, rate 20): ln(1/0.9) + ln(20² · 0.1 · e^{−2}).
        let want = (1.0_f64 / 0.9).ln() + (400.0_f64 * 0.1).ln() - 2.0;
        assert!((p.ln_density(&[0.5, 0.1]) - want).abs() < 1e-12);
        let swapped: ModelConfig = toml::from_str(
            "name = \"sir\"\n[[prior]]\nname = \"gamma\"\ndist = \"uniform\"\nlo = 0.1\nhi = 1.0\n\
             [[prior]]\nname = \"beta\"\ndist = \"uniform\"\nlo = 0.1\nhi = 1.0\n",
        )
        .unwrap();
        let e = Model::build(&swapped, None).unwrap_err().to_string();
        assert!(e.contains("[\"beta\", \"gamma\"]"), "{e}");
        let short: ModelConfig = toml::from_str(
            "name = \"sir\"\n[[prior]]\nname = \"beta\"\ndist = \"uniform\"\nlo = 0.1\nhi = 1.0\n",
        )
        .unwrap();
        assert!(Model::build(&short, None).is_err());
    }

    /// Issue 13 defect 3: the config sets the SIR observation times; the default is the
    /// authors' grid 0, 17, …, 153.
    #[test]
    fn sir_observation_times_from_the_config() {
        let Model::Sir(m, _) = sir("").unwrap() else {
            panic!("not sir")
        };
        let s = m.settings();
        assert_eq!(
            (0..10).map(|l| s.obs_time(l)).collect::<Vec<_>>(),
            (0..10).map(|l| 17.0 * f64::from(l)).collect::<Vec<_>>()
        );
        let model = sir("obs_times = [0.0, 10.0, 25.0]").unwrap();
        assert_eq!(ModelSim(&model).output_dim(), 3);
        let Model::Sir(m, _) = &model else {
            panic!("not sir")
        };
        assert!((m.settings().obs_time(2) - 25.0).abs() < f64::EPSILON);
        assert!(sir("obs_times = [0.0, 10.0]\nn = 3").is_err());
        assert!(sir("obs_times = [5.0, 1.0]").is_err());
        let c: ModelConfig =
            toml::from_str("name = \"gaussian-mean\"\nobs_times = [0.0, 1.0]").unwrap();
        assert!(Model::build(&c, None).is_err());
    }
}
