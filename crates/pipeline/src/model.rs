//! `[model]` → the library's model registry (`dpinfer::simulators::models::registry`): the
//! seven built-in paper models with their priors, a `kind = "command"` external simulator as
//! the registry's user model, `[[model.prior]]` overrides; and reading observed data files.

use std::path::Path;
use std::sync::Arc;

use crate::error::{Context, Result, bail, err};
use dpinfer::simulators::StreamVersion;
use dpinfer::simulators::models::registry::{self, ModelError, ModelName, ModelSpec, UserModel};
pub use dpinfer::simulators::models::registry::{ModelPrior, ModelSim};
use dpinfer::simulators::summaries::DeclaredSummary;

use crate::config::ModelConfig;
use crate::declared::CommandModel;
use crate::observe::Observer;

/// A built-in model with its prior, a command model, or either with a declared prior.
pub type Model = registry::Model<Arc<CommandModel>>;

impl UserModel for CommandModel {
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn label(&self) -> &'static str {
        "command"
    }
    fn row_dim(&self) -> usize {
        self.row_dim
    }
    fn declared_summary(&self) -> Option<&DeclaredSummary> {
        self.summary.as_ref()
    }
}

/// The exact marginal log densities of the model's prior
/// ([`Prior::marginal_ln_density`](dpinfer::simulators::Prior::marginal_ln_density)), owning
/// only the prior: a command model's declared prior is copied out, so the outcome that keeps
/// this function does not keep the worker pool alive.
#[must_use]
pub fn marginal_ln_density(model: &Model) -> crate::results::MarginalLnDensity {
    use dpinfer::simulators::Prior as _;
    match model {
        registry::Model::User(c) => {
            let p = c.prior.clone();
            Arc::new(move |j, x| p.marginal_ln_density(j, x))
        }
        registry::Model::WithPrior(b) => {
            let p = b.1.clone();
            Arc::new(move |j, x| p.marginal_ln_density(j, x))
        }
        builtin => {
            let m = builtin.clone();
            Arc::new(move |j, x| ModelPrior(&m).marginal_ln_density(j, x))
        }
    }
}

/// The built-in model's settings of `[model]` (name, n, sigma, prior_mean, prior_sd,
/// population, tau, obs_times, stream_version).
impl TryFrom<&ModelConfig> for ModelSpec {
    type Error = crate::Error;
    fn try_from(c: &ModelConfig) -> Result<Self> {
        let name: ModelName = c.name.parse().map_err(|_| {
            crate::error::err!(
                key = "model.name";
                "unknown model.name {:?} (expected gaussian-mean, uniform-mixture, \
                 cubic-outbreak, sir, linear-regression, tuberculosis, banana)",
                c.name
            )
        })?;
        let stream_version = StreamVersion::try_from(c.stream_version.unwrap_or(1))
            .map_err(|_| {
                crate::error::err!(key = "model.stream_version"; "model.stream_version must be 1 or 2")
            })?;
        Ok(Self {
            name,
            n: c.n,
            sigma: c.sigma,
            prior_mean: c.prior_mean,
            prior_sd: c.prior_sd,
            population: c.population,
            tau: c.tau,
            obs_times: c.obs_times.clone(),
            stream_version,
        })
    }
}

/// A model error in the config's words.
fn config_error(e: ModelError) -> crate::Error {
    match e {
        ModelError::Size { model, n, expected } => match (model, expected) {
            (ModelName::Sir, Some(e)) => {
                crate::error::err!(key = "model.n"; "model.n = {n} but model.obs_times has {e} times")
            }
            (_, Some(e)) => {
                crate::error::err!(key = "model.n"; "model.n = {n}: the {model} curve has {e} points")
            }
            (_, None) => {
                crate::error::err!(key = "model.n"; "model.n: the {model} model's summaries have a fixed size")
            }
        },
        ModelError::PriorNames {
            model,
            declared,
            expected,
        } => crate::error::err!(
            key = "model.prior";
            "model.prior declares the parameters {declared:?}; the {model} model's θ is \
             {expected:?} (one [[model.prior]] table per parameter, in this order)"
        ),
        // about the model as a whole, no one key
        e => crate::error::err!("model: {e}"),
    }
}

/// Building a [`Model`] from `[model]` and the CLI's view of its observed data.
pub trait BuildModel: Sized {
    /// Builds the model named in the config; `n_override` is the observed data size when a
    /// data file decides it.
    ///
    /// # Errors
    /// Unknown model name or kind, keys of another kind, invalid model parameters, a
    /// declared prior over other parameters.
    fn build(c: &ModelConfig, n_override: Option<usize>) -> Result<Self>;

    /// The observed data as the distance sees them ([`registry::Model::summarise_observed`]).
    /// A declared summary needs `distance.kind = "l2"` (the sensitivity it proves is for the
    /// clipped weighted L2 distance).
    ///
    /// # Errors
    /// A declared summary with another distance, data of the wrong length, NaN.
    fn observe(&self, data: Vec<f64>, distance_kind: &str) -> Result<Vec<f64>>;

    /// A user model's workers report their fatal errors to `observer` (the first one set
    /// stays); built-in models report nothing.
    fn observe_with(&self, observer: &Arc<dyn Observer>);

    /// A user model's typed error behind its last fatal failure, once
    /// ([`CommandModel::take_error`]); built-in models have none.
    fn take_worker_error(&self) -> Option<dpinfer_workers::WorkerError>;

    /// `e`, or — when a user model's worker failed fatally — the worker's own error (rows,
    /// exit status, stderr tail) with `what` as its context: the library only carries a
    /// `SimError` code.
    fn explain(&self, e: crate::Error, what: &str) -> crate::Error {
        match self.take_worker_error() {
            Some(w) => crate::Error::from(w).context(what.to_string()),
            None => e,
        }
    }
}

impl BuildModel for Model {
    fn build(c: &ModelConfig, n_override: Option<usize>) -> Result<Self> {
        match c.kind.as_deref() {
            Some("command") => {
                // The worker draws its own random numbers from the row seeds: the stream
                // version of the built-in models has no meaning there.
                if c.stream_version.is_some() {
                    bail!(
                        key = "model.stream_version";
                        "model.stream_version applies to the built-in models only; an external \
                         simulator (model.kind = \"command\") draws from its row seeds itself"
                    );
                }
                if c.datasets.is_some_and(|n| n != 1) {
                    bail!(
                        key = "model.datasets";
                        "model.datasets applies to the built-in models only; an external \
                         simulator (model.kind = \"command\") returns one data set per row"
                    );
                }
                return Ok(Self::User(Arc::new(CommandModel::build(c)?)));
            }
            None | Some("builtin") => {}
            Some(other) => bail!(
                key = "model.kind";
                "unknown model.kind {other:?} (expected \"command\" or none)"
            ),
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
                bail!(key = format!("model.{key}"); "model.{key} belongs to kind = \"command\"");
            }
        }
        let mut spec = ModelSpec::try_from(c)?;
        spec.n = n_override.or(c.n);
        let mut model = Self::builtin(&spec).map_err(config_error)?;
        if !c.prior.is_empty() {
            let (prior, names) = crate::declared::build_prior(&c.prior)?;
            model = model.with_prior(prior, &names).map_err(config_error)?;
        }
        match c.datasets {
            // One data set: the model itself, today's outputs bit for bit.
            None | Some(1) => Ok(model),
            Some(n) => model.replicated(n).map_err(
                |e| crate::error::err!(key = "model.datasets"; "model.datasets = {n}: {e}"),
            ),
        }
    }

    fn observe_with(&self, observer: &Arc<dyn Observer>) {
        match self {
            Self::User(m) => m.observe_with(observer),
            Self::WithPrior(inner) => inner.0.observe_with(observer),
            _ => {}
        }
    }

    fn take_worker_error(&self) -> Option<dpinfer_workers::WorkerError> {
        match self {
            Self::User(m) => m.take_error(),
            Self::WithPrior(inner) => inner.0.take_worker_error(),
            _ => None,
        }
    }

    fn observe(&self, data: Vec<f64>, distance_kind: &str) -> Result<Vec<f64>> {
        if self.declared_summary().is_some() && distance_kind != "l2" {
            bail!(
                key = "model.summary";
                "model.summary needs distance.kind = \"l2\" (got {distance_kind:?}): its \
                 sensitivity is derived for the clipped weighted L2 distance"
            );
        }
        if let Self::User(m) = self
            && m.worker_summarises_data
        {
            // The user's program summarises the raw observations by the code it applies to
            // its simulations (model.summary.observed = "raw").
            return m.sim.pool().summarise(&data).map_err(|e| {
                crate::Error::from(e).context(
                    "summarising the observed data with the worker (model.summary.observed = \"raw\")"
                        .to_string(),
                )
            });
        }
        self.summarise_observed(data)
            .context("observed data (the data file holds the raw observations)")
    }
}

/// Reads observed data: an Arrow IPC file by its extension (`.arrow`, `.feather`, `.ipc`;
/// `crate::declared::read_arrow_data`), a Parquet file (`.parquet`, with the `parquet`
/// feature), otherwise a CSV of numbers (`#` comments and blank lines skipped) into row-major
/// values, checking that every value is finite, every line has the same number of values and,
/// with `strict_rows` (one observation per line), that this number is `row_dim`.
///
/// The first line may be a header, as pandas, R and spreadsheets write it: a line none of
/// whose fields is a number (names split on commas, else tabs, else spaces; quotes
/// stripped). Its names must be distinct and non-empty, one per value of a row: as many as
/// the model's row dimension with `strict_rows`, otherwise as many as the values of each
/// following line.
///
/// # Errors
/// I/O, parse errors, ragged rows, non-finite values, a header whose names do not match the
/// rows — each names the line.
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
            Data,
            "data file {}: this dpinfer was built without Parquet support; rebuild with \
             `cargo build --release -p dpinfer-cli --features parquet`, or save the data as Arrow IPC \
             (.arrow) or CSV",
            path.display()
        );
    }
    let text = dpinfer_ledger::files::read_input_text(path, "data file", None)?;
    let mut vals = Vec::new();
    let mut per_row: Option<usize> = None;
    // (line number, names) of a header line, until the first data line has checked it
    let mut header: Option<(usize, Vec<String>)> = None;
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if std::mem::take(&mut first)
            && let Some(names) = header_names(line)
        {
            let d = names.len();
            let repeated = names
                .iter()
                .enumerate()
                .find(|(j, n)| names[..*j].contains(n))
                .map(|(_, n)| n);
            if strict_rows && d != row_dim {
                bail!(
                    Data,
                    "data file {} line {}: the header names {d} column(s) {names:?}, the \
                     model's rows have dimension {row_dim}{}",
                    path.display(),
                    i + 1,
                    index_hint(&names)
                );
            }
            if let Some(j) = names.iter().position(String::is_empty) {
                bail!(
                    Data,
                    "data file {} line {}: column {} of the header has no name{}",
                    path.display(),
                    i + 1,
                    j + 1,
                    index_hint(&names)
                );
            }
            if let Some(n) = repeated {
                bail!(
                    Data,
                    "data file {} line {}: the header names the column {n:?} twice{}",
                    path.display(),
                    i + 1,
                    index_hint(&names)
                );
            }
            header = Some((i + 1, names));
            continue;
        }
        let mut k = 0;
        for f in line.split([',', ' ', '\t']).filter(|s| !s.is_empty()) {
            let v: f64 = f
                .trim()
                .parse()
                .map_err(|e| err!(Data, "{e}"))
                .with_context(|| {
                    format!(
                        "data file {} line {}: {f:?} is not a number",
                        path.display(),
                        i + 1
                    )
                })?;
            if !v.is_finite() {
                bail!(
                    Data,
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
                Data,
                "data file {} line {}: {k} values, the model's rows have dimension {row_dim}",
                path.display(),
                i + 1
            );
        }
        if let Some((at, names)) = header.take()
            && names.len() != k
        {
            bail!(
                Data,
                "data file {} line {at}: the header names {} column(s) {names:?}, line {} \
                 holds {k} values{}",
                path.display(),
                names.len(),
                i + 1,
                index_hint(&names)
            );
        }
        match per_row {
            None => per_row = Some(k),
            Some(p) if p != k => bail!(
                Data,
                "data file {} line {}: {k} values, earlier rows have {p}",
                path.display(),
                i + 1
            ),
            Some(_) => {}
        }
    }
    if vals.is_empty() {
        bail!(Data, "data file {} holds no values", path.display());
    }
    if row_dim > 1 && vals.len() % row_dim != 0 {
        bail!(
            Data,
            "data file {}: {} values do not form rows of the model's dimension {row_dim}",
            path.display(),
            vals.len()
        );
    }
    Ok(vals)
}

/// The names of a CSV header line: `Some` if none of its fields is a number (split on
/// commas, else tabs, else spaces; surrounding quotes and spaces stripped).
fn header_names(line: &str) -> Option<Vec<String>> {
    let fields: Vec<&str> = if line.contains(',') {
        line.split(',').collect()
    } else if line.contains('\t') {
        line.split('\t').collect()
    } else {
        line.split(' ').filter(|f| !f.is_empty()).collect()
    };
    let names: Vec<String> = fields
        .iter()
        .map(|f| {
            f.trim()
                .trim_matches(|c| c == '"' || c == '\'')
                .trim()
                .to_string()
        })
        .collect();
    if names.iter().any(|n| n.parse::<f64>().is_ok()) {
        return None;
    }
    Some(names)
}

/// A hint for a header whose first name is empty: pandas' `to_csv` writes its index column
/// under an empty name (the index would otherwise be read as data).
fn index_hint(names: &[String]) -> &'static str {
    if names.first().is_some_and(String::is_empty) {
        " (the first column has no name: an index column? pandas: to_csv(index=False))"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::{BuildModel as _, Model, ModelPrior, ModelSim};
    use crate::config::ModelConfig;
    use dpinfer::simulators::Simulator;

    fn sir(extra: &str) -> crate::Result<Model> {
        let c: ModelConfig = toml::from_str(&format!("name = \"sir\"\n{extra}")).unwrap();
        Model::build(&c, None)
    }

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

    /// An override replaces the prior, and must name the model's parameters in order.
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

    /// Issue 31, item 2: a CSV header line (pandas, R) is accepted when its names match the
    /// rows, and refused with a typed data error naming the line otherwise. Before, every
    /// header was refused ("\"S_A\" is not a number").
    #[test]
    fn a_csv_header_is_accepted_when_its_names_match_the_rows() {
        use super::read_data;
        use crate::Error;
        let dir = std::env::temp_dir().join(format!("dpinfer-header-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let plain = read_data(&file("plain.csv", "1.5,2\n3,4.25\n"), 2, true).unwrap();
        for (name, text) in [
            ("comma.csv", "S_A,S_B\n1.5,2\n3,4.25\n"),
            (
                "quoted.csv",
                "# a comment\n\"S A\", \"S B\"\n1.5,2\n3,4.25\n",
            ),
            ("tabs.tsv", "x\ty\n1.5\t2\n3\t4.25\n"),
            ("spaces.txt", "x y\n1.5 2\n3 4.25\n"),
        ] {
            assert_eq!(
                read_data(&file(name, text), 2, true).unwrap(),
                plain,
                "{name}"
            );
        }
        // not strict (one data set of scalars, or a curve): the names match each line's values
        let curve = read_data(&file("curve.csv", "I\n1\n2\n3\n"), 1, false).unwrap();
        assert_eq!(curve, [1.0, 2.0, 3.0]);
        let refused = |name: &str, text: &str, strict: bool| -> String {
            match read_data(&file(name, text), 2, strict) {
                Err(Error::Data(m)) => m,
                other => panic!("{name}: {other:?}"),
            }
        };
        let e = refused("three.csv", "a,b,c\n1,2\n", true);
        assert!(e.contains("line 1: the header names 3 column(s)"), "{e}");
        assert!(e.contains("rows have dimension 2"), "{e}");
        let e = refused("ragged.csv", "a,b,c\n1,2\n", false);
        assert!(e.contains("line 2 holds 2 values"), "{e}");
        let e = refused("index.csv", ",a\n0,1.5\n1,2\n", true);
        assert!(e.contains("column 1 of the header has no name"), "{e}");
        assert!(e.contains("index=False"), "{e}");
        let e = refused("twice.csv", "a,a\n1,2\n", true);
        assert!(e.contains("the column \"a\" twice"), "{e}");
        // a mixed line is data with a bad field; a header after the first line is data too
        let e = format!(
            "{:#}",
            read_data(&file("mixed.csv", "a,1\n1,2\n"), 2, true).unwrap_err()
        );
        assert!(e.contains("\"a\" is not a number"), "{e}");
        let e = format!(
            "{:#}",
            read_data(&file("late.csv", "1,2\na,b\n"), 2, true).unwrap_err()
        );
        assert!(e.contains("line 2") && e.contains("not a number"), "{e}");
        assert!(read_data(&file("only.csv", "a,b\n"), 2, true).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
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
