//! Models declared in the config rather than built in: `[[model.prior]]` tables (one per
//! parameter, or a Dirichlet block) and `[model] kind = "command"` external simulators.
//! The distributions are the library's (`dpinfer::simulators::prior`), the worker pool is
//! `dpinfer_workers`; this module only reads the tables.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::error::{Context, Result, bail, err};
use dpinfer::simulators::prior::DeclaredPrior;
use dpinfer::simulators::{Prior, SimError, Simulator};
use dpinfer_workers::{CommandSimulator, Pool, PoolSettings};
use rand::Rng;

use crate::config::ModelConfig;
use crate::observe::{Observer, Shared};
pub use crate::prior_decl::{PriorDecl, build_prior};
pub use crate::summary_decl::{
    DeclaredSummary, PROVEN_RELATION, SummaryDecl, USER_ADD_REMOVE, USER_REPLACE_ONE,
};

/// `[model] kind = "command"`: an external simulator with a declared prior.
#[derive(Debug)]
pub struct CommandModel {
    /// The worker pool as a simulator (with `[model.summary]` as its output map).
    pub sim: CommandSimulator,
    /// The declared prior.
    pub prior: DeclaredPrior,
    /// Parameter names.
    pub names: Vec<String>,
    /// Values per observation row (for the MMD; default 1).
    pub row_dim: usize,
    /// `[model.summary]`: applied to every simulation (the simulator's output map) and, for
    /// library summaries, to the observed data.
    pub summary: Option<DeclaredSummary>,
    /// `[model.summary] kind = "simulator"`, `observed = "raw"`: the worker summarises the
    /// observed data ([`dpinfer_workers::Pool::summarise`]).
    pub worker_summarises_data: bool,
    /// Hears the workers' fatal errors (set once by [`crate::run::run_with`]; stderr if unset).
    observer: OnceLock<Shared>,
}

impl CommandModel {
    /// Tells `observer` of the workers' fatal errors from now on (the first observer set
    /// stays; without one they go to stderr).
    pub fn observe_with(&self, observer: &Arc<dyn Observer>) {
        let _ = self.observer.set(Shared(Arc::clone(observer)));
    }

    /// The typed error behind the last fatal worker failure (rows, exit status, stderr
    /// tail), once: the caller that turns the library's `SimError` code into its own error
    /// puts this text there instead (one `error:` line, not two).
    pub fn take_error(&self) -> Option<dpinfer_workers::WorkerError> {
        self.sim.take_error()
    }
}

/// A fatal worker error nobody took ([`CommandModel::take_error`]) is not lost: it goes to
/// the observer (stderr if unset) when the model is dropped.
impl Drop for CommandModel {
    fn drop(&mut self) {
        if let Some(e) = self.sim.take_error() {
            match self.observer.get() {
                Some(o) => o.0.note(&format!("error: {e}")),
                None => crate::errln!("error: {e}"),
            }
        }
    }
}

impl CommandModel {
    /// Builds the model from `[model]`.
    ///
    /// # Errors
    /// Missing or invalid keys, named.
    pub fn build(c: &ModelConfig) -> Result<Self> {
        let command = c.command.clone().ok_or_else(|| {
            err!(
                key = "model.command";
                "model.command is required for kind = \"command\" (e.g. [\"python3\", \"sim.py\"])"
            )
        })?;
        let outputs = c.outputs.ok_or_else(|| {
            err!(
                key = "model.outputs";
                "model.outputs (values per simulation) is required for kind = \"command\""
            )
        })?;
        let row_dim = c.row_dim.unwrap_or(1);
        if row_dim == 0 || outputs == 0 || !outputs.is_multiple_of(row_dim) {
            bail!(
                key = "model.outputs";
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
                bail!(
                    key = format!("model.{key}");
                    "model.{key} belongs to a built-in model, not to kind = \"command\""
                );
            }
        }
        let timeout = c.timeout.unwrap_or(60.0);
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0) {
            bail!(key = "model.timeout"; "model.timeout must be in (0, 86400] seconds, got {timeout:?}");
        }
        let (prior, names) = build_prior(&c.prior)?;
        let summary = c
            .summary
            .as_ref()
            .map(|d| crate::summary_decl::build(d, outputs, row_dim))
            .transpose()?;
        let mut settings = PoolSettings::new(command, names.clone(), outputs);
        settings.dir.clone_from(&c.base_dir);
        settings.batch = c.batch.unwrap_or(64);
        settings.timeout = Duration::from_secs_f64(timeout);
        settings.retries = c.retries.unwrap_or(2);
        let mut sim = CommandSimulator::new(Pool::new(settings)?, 1);
        if let Some(s) = summary.clone() {
            let len = s.output_len();
            sim = sim.with_output_map(
                len,
                Arc::new(move |raw: &[f64], out: &mut [f64]| {
                    let v = s.compute(raw).map_err(|e| format!("{e:#}"))?;
                    out.copy_from_slice(&v);
                    Ok(())
                }),
            )?;
        }
        Ok(Self {
            sim,
            prior,
            names,
            row_dim,
            summary,
            worker_summarises_data: c
                .summary
                .as_ref()
                .is_some_and(SummaryDecl::worker_summarises_data),
            observer: OnceLock::new(),
        })
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
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        self.prior.marginal_ln_density(j, x)
    }
}

/// One θ at a time through the pool (row id 0); a rejection is recoverable. On a fatal
/// failure the library carries the `SimError` code; the worker's own text (row, exit status,
/// stderr tail) stays with the model ([`CommandModel::take_error`]) for the caller's error.
impl Simulator for CommandModel {
    fn param_dim(&self) -> usize {
        self.names.len()
    }
    fn output_dim(&self) -> usize {
        self.sim.output_dim()
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        self.sim.simulate(theta, rng, out)
    }
}

/// Reads observed data from an Arrow IPC file (`.arrow`, `.feather`, `.ipc`; the file format
/// pandas, polars, R `arrow` and DuckDB write): one row per observation, every column numeric
/// (`float64`, `float32` or an integer type) without nulls, values returned row-major. With
/// `strict_rows` the number of columns must be `row_dim`.
///
/// The file is read like every input ([`dpinfer_ledger::files::read_input`]: a regular file
/// or a pipe, never a device, at most `DPINFER_MAX_INPUT_BYTES`) and decoded with every
/// message checked before arrow sees it ([`dpinfer_workers::ipc::read_file`]: a forged buffer
/// length is an error, not a panic).
///
/// # Errors
/// I/O, a device, a file above the input cap, not an Arrow file or a damaged one, non-numeric
/// or null columns, non-finite values, a column count that is not the model's row dimension,
/// an empty table — each naming the file and the column.
pub fn read_arrow_data(
    path: &std::path::Path,
    row_dim: usize,
    strict_rows: bool,
) -> Result<Vec<f64>> {
    let bytes = dpinfer_ledger::files::read_input(path, "data file", None)?;
    let (schema, batches) = dpinfer_workers::ipc::read_file(bytes)
        .with_context(|| format!("data file {} is not a valid Arrow IPC file", path.display()))?;
    numeric_rows(
        path,
        &schema,
        batches.into_iter().map(Ok),
        row_dim,
        strict_rows,
    )
}

/// Reads observed data from a Parquet file (`.parquet`; pandas, polars, R `arrow`, DuckDB and
/// Spark write it; snappy, zstd and gzip compression) exactly as [`read_arrow_data`] reads
/// an Arrow IPC file (the same input rules: no device, at most `DPINFER_MAX_INPUT_BYTES`).
/// Built with the CLI's `parquet` feature only.
///
/// # Errors
/// As [`read_arrow_data`]; a file that is not Parquet or uses another codec.
#[cfg(feature = "parquet")]
pub fn read_parquet_data(
    path: &std::path::Path,
    row_dim: usize,
    strict_rows: bool,
) -> Result<Vec<f64>> {
    let bytes = dpinfer_ledger::files::read_input(path, "data file", None)?;
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes::Bytes::from(bytes),
    )
    .with_context(|| format!("data file {} is not a Parquet file", path.display()))?;
    let schema = Arc::clone(builder.schema());
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
    /// The values of a primitive column of type `T`, each converted by `to`.
    fn as_f64<T: arrow_array::ArrowPrimitiveType>(
        a: &arrow_array::ArrayRef,
        to: impl Fn(T::Native) -> f64,
    ) -> Vec<f64> {
        a.as_primitive::<T>()
            .values()
            .iter()
            .map(|&x| to(x))
            .collect()
    }
    let cols = schema.fields().len();
    if strict_rows && cols != row_dim {
        bail!(
            Data,
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
                    Data,
                    "data file {}: column {:?} holds nulls",
                    path.display(),
                    f.name()
                );
            }
            // Every numeric column as f64 (64-bit integers beyond 2^53 round to nearest).
            #[allow(clippy::cast_precision_loss)]
            let v: Vec<f64> = match a.data_type() {
                DataType::Float64 => a.as_primitive::<Float64Type>().values().to_vec(),
                DataType::Float32 => as_f64::<Float32Type>(a, f64::from),
                DataType::Int8 => as_f64::<Int8Type>(a, f64::from),
                DataType::Int16 => as_f64::<Int16Type>(a, f64::from),
                DataType::Int32 => as_f64::<Int32Type>(a, f64::from),
                DataType::Int64 => as_f64::<Int64Type>(a, |x| x as f64),
                DataType::UInt8 => as_f64::<UInt8Type>(a, f64::from),
                DataType::UInt16 => as_f64::<UInt16Type>(a, f64::from),
                DataType::UInt32 => as_f64::<UInt32Type>(a, f64::from),
                DataType::UInt64 => as_f64::<UInt64Type>(a, |x| x as f64),
                other => bail!(
                    Data,
                    "data file {}: column {:?} has type {other}, expected numbers",
                    path.display(),
                    f.name()
                ),
            };
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                bail!(
                    Data,
                    "data file {}: column {:?} row {} is not finite",
                    path.display(),
                    f.name(),
                    vals.len() / cols.max(1) + i + 1
                );
            }
            columns.push(v);
        }
        // A batch without columns holds no values, however many rows it declares.
        if columns.is_empty() {
            continue;
        }
        for r in 0..batch.num_rows() {
            vals.extend(columns.iter().map(|c| c[r]));
        }
    }
    if vals.is_empty() {
        bail!(Data, "data file {} holds no values", path.display());
    }
    if row_dim > 1 && !vals.len().is_multiple_of(row_dim) {
        bail!(
            Data,
            "data file {}: {} values do not form rows of the model's dimension {row_dim}",
            path.display(),
            vals.len()
        );
    }
    Ok(vals)
}
