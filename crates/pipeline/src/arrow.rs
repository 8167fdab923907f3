//! Arrow IPC files (the "file" flavour, `.arrow`, readable by pyarrow, pandas, polars, R
//! arrow, DuckDB) for the tables people analyse further: the posterior samples and the public
//! (θ, output) pairs. One `Float64` column per quantity, no nulls, no compression; the shard
//! files stay the checksummed exchange format between machines, Arrow is the format for
//! analysis.

use crate::error::{Context, Result, bail, err};
use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch};
use arrow_ipc::writer::FileWriter;
use arrow_schema::{DataType, Field, Schema};
use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

/// Rows per record batch (bounded memory for the column copies of large tables).
const BATCH_ROWS: usize = 65_536;

/// Checks a row-major table (`values.len() = rows · names.len()`, non-empty distinct names)
/// and returns its schema: one non-nullable `Float64` column per name, `metadata` on it.
fn schema(names: &[String], values: &[f64], metadata: &[(&str, String)]) -> Result<Arc<Schema>> {
    let d = names.len();
    if d == 0 {
        bail!(Data, "an Arrow table needs at least one column");
    }
    if !values.len().is_multiple_of(d) {
        bail!(
            Data,
            "{} values are not whole rows of {d} columns",
            values.len()
        );
    }
    let mut seen = std::collections::HashSet::new();
    for n in names {
        if n.is_empty() || !seen.insert(n.as_str()) {
            bail!(
                Data,
                "column names must be non-empty and distinct (got {n:?})"
            );
        }
    }
    let meta: HashMap<String, String> = metadata
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    Ok(Arc::new(
        Schema::new(
            names
                .iter()
                .map(|n| Field::new(n, DataType::Float64, false))
                .collect::<Vec<_>>(),
        )
        .with_metadata(meta),
    ))
}

/// The record batches of a checked row-major table ([`schema`]), [`BATCH_ROWS`] rows each.
fn batches<'a>(
    schema: &'a Arc<Schema>,
    values: &'a [f64],
) -> impl Iterator<Item = core::result::Result<RecordBatch, arrow_schema::ArrowError>> + 'a {
    let d = schema.fields().len();
    values.chunks(BATCH_ROWS * d).map(move |chunk| {
        let rows = chunk.len() / d;
        let cols: Vec<ArrayRef> = (0..d)
            .map(|k| {
                Arc::new(Float64Array::from_iter_values(
                    (0..rows).map(|r| chunk[r * d + k]),
                )) as ArrayRef
            })
            .collect();
        RecordBatch::try_new(schema.clone(), cols)
    })
}

/// Writes a row-major table (`values.len() = rows · names.len()`) as an Arrow IPC file with
/// one non-nullable `Float64` column per name, plus `metadata` on the schema; written to a
/// unique temporary name, fsynced and renamed into place ([`dpinfer_ledger::files::write_atomic_with`];
/// `replace` says whether an existing file may be replaced).
///
/// # Errors
/// Empty or duplicate column names, a length that is not whole rows, I/O.
pub fn write_table(
    path: &Path,
    names: &[String],
    values: &[f64],
    metadata: &[(&str, String)],
    replace: dpinfer_ledger::files::Replace,
) -> Result<()> {
    let schema = schema(names, values, metadata)?;
    Ok(dpinfer_ledger::files::write_atomic_with(
        path,
        replace,
        |file| -> Result<()> {
            let mut w = FileWriter::try_new(std::io::BufWriter::new(file), &schema)?;
            for batch in batches(&schema, values) {
                w.write(&batch?)?;
            }
            w.finish()?;
            let mut inner = w.into_inner()?;
            inner.flush()?;
            Ok(())
        },
    )?)
}

/// [`write_table`] as a Parquet file (`.parquet`: pandas, polars, R `arrow`, DuckDB, Spark):
/// the same columns and schema metadata (also as the file's key-value metadata), snappy
/// compression, written atomically. Built with the `parquet` feature only.
///
/// # Errors
/// As [`write_table`].
#[cfg(feature = "parquet")]
pub fn write_parquet(
    path: &Path,
    names: &[String],
    values: &[f64],
    metadata: &[(&str, String)],
    replace: dpinfer_ledger::files::Replace,
) -> Result<()> {
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    let schema = schema(names, values, metadata)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(
            metadata
                .iter()
                .map(|(k, v)| KeyValue::new((*k).to_string(), v.clone()))
                .collect(),
        ))
        .build();
    Ok(dpinfer_ledger::files::write_atomic_with(
        path,
        replace,
        |file| -> Result<()> {
            let mut w =
                ArrowWriter::try_new(std::io::BufWriter::new(file), schema.clone(), Some(props))?;
            for batch in batches(&schema, values) {
                w.write(&batch?)?;
            }
            let mut inner = w.into_inner()?;
            inner.flush()?;
            Ok(())
        },
    )?)
}

/// A table read back: column names, row-major values, schema metadata.
pub type Table = (Vec<String>, Vec<f64>, HashMap<String, String>);

/// Reads an Arrow IPC file written by [`write_table`] back as (column names, row-major
/// values, schema metadata). Every column must be a non-null `Float64`. The file is read
/// within the input cap (`DPINFER_MAX_INPUT_BYTES`, no devices) and every message is checked
/// before it is decoded ([`dpinfer_workers::ipc::read_file`]).
///
/// # Errors
/// Not an Arrow IPC file or a damaged one, other column types, nulls, I/O, a device, a file
/// above the cap.
pub fn read_table(path: &Path) -> Result<Table> {
    let bytes = dpinfer_ledger::files::read_bounded(path, "Arrow table", None)?;
    let (schema, batches) = dpinfer_workers::ipc::read_file(bytes)
        .with_context(|| format!("{} is not a valid Arrow IPC file", path.display()))?;
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let meta: HashMap<String, String> = schema.metadata().clone().into();
    let d = names.len();
    let mut values = Vec::new();
    for batch in batches {
        let cols: Vec<&Float64Array> = batch
            .columns()
            .iter()
            .map(|c| {
                c.as_any()
                    .downcast_ref::<Float64Array>()
                    .filter(|a| a.null_count() == 0)
                    .ok_or_else(|| {
                        err!(Data, "every column must be a Float64 column without nulls")
                    })
            })
            .collect::<Result<_>>()?;
        if cols.is_empty() {
            continue;
        }
        for r in 0..batch.num_rows() {
            for col in cols.iter().take(d) {
                values.push(col.value(r));
            }
        }
    }
    Ok((names, values, meta))
}
