//! The results folder is the library's (`dpinfer_pipeline::folder`): a finished run writes
//! samples (CSV, Arrow, and Parquet with the `parquet` feature), `summary.json` and plots, and
//! each table reads back to the outcome's samples bit for bit.

#![allow(clippy::unwrap_used, clippy::std_instead_of_alloc)]

use std::path::{Path, PathBuf};

use std::sync::Arc;

use dpinfer_pipeline::{Config, Observer, Quiet, folder, run};

fn quiet() -> Arc<dyn Observer> {
    Arc::new(Quiet)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dpinfer-pipeline-folder-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Soft-ABC (weighted samples) on the Gaussian-mean model with a fixed noise seed (a test
/// setting).
fn config() -> Config {
    Config::parse(
        r#"
        [model]
        name = "gaussian-mean"
        n = 200

        [distance]
        kind = "rff-mmd"
        features = 30

        [sampler]
        kind = "soft-abc"
        pairs = 400
        epsilon_abc = 0.05
        clip = 0.3

        [privacy]
        epsilon = 2.0
        delta = 1e-6

        [seeds]
        run = 3
        noise = 9
        "#,
        Path::new("."),
    )
    .unwrap()
}

/// The outcome's table as the folder stores it: the parameters, then the weight.
fn expected(o: &dpinfer_pipeline::Outcome) -> (Vec<String>, Vec<f64>) {
    let d = o.names.len();
    let w = o.weights.as_ref().unwrap();
    let mut names = o.names.clone();
    names.push("weight".into());
    let values = o
        .samples
        .chunks_exact(d)
        .zip(w)
        .flat_map(|(r, w)| r.iter().copied().chain([*w]))
        .collect();
    (names, values)
}

#[test]
fn the_library_writes_the_whole_results_folder_and_its_tables_read_back() {
    let dir = scratch("whole");
    let cfg = config();
    let finished = run::run_with(&cfg, &dir, 1, &quiet()).unwrap();
    let written = folder::write(
        &finished.outcome,
        &dir,
        folder::model_title(&cfg, &finished.outcome),
    )
    .unwrap();
    let o = finished.close().unwrap();
    assert!(o.weights.is_some() && !o.samples.is_empty());
    for f in [
        "samples.csv",
        "samples.arrow",
        "summary.json",
        "marginal-mu.svg",
    ] {
        assert!(
            written.iter().any(|w| w == f),
            "{f} not written: {written:?}"
        );
    }
    #[cfg(feature = "parquet")]
    assert!(written.iter().any(|w| w == "samples.parquet"));
    #[cfg(not(feature = "parquet"))]
    assert!(!dir.join("samples.parquet").exists());
    for f in &written {
        assert!(dir.join(f).is_file(), "{f} listed but not in the folder");
    }
    let (names, values) = expected(&o);
    let (an, av, meta) = dpinfer_pipeline::arrow::read_table(&dir.join("samples.arrow")).unwrap();
    assert_eq!(an, names);
    assert_eq!(
        av.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(
        meta.get("dpinfer.format").map(String::as_str),
        Some("samples")
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["weighted"], serde_json::Value::Bool(true));
    assert_eq!(
        summary["samples"].as_u64(),
        Some((o.samples.len() / o.names.len()) as u64)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `samples.parquet` holds the same table as `samples.arrow`: the columns by name, every
/// value bit for bit, the schema metadata.
#[cfg(feature = "parquet")]
#[test]
fn samples_parquet_reads_back_bit_for_bit() {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let dir = scratch("parquet");
    let cfg = config();
    let finished = run::run_with(&cfg, &dir, 1, &quiet()).unwrap();
    folder::write(&finished.outcome, &dir, "gaussian-mean").unwrap();
    let o = finished.close().unwrap();
    let (names, values) = expected(&o);
    let file = std::fs::File::open(dir.join("samples.parquet")).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let schema = builder.schema().clone();
    let got: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(got, names);
    assert_eq!(
        schema.metadata().get("dpinfer.model").map(String::as_str),
        Some("gaussian-mean")
    );
    let mut back = Vec::new();
    for batch in builder.build().unwrap() {
        let batch = batch.unwrap();
        let cols: Vec<&arrow_array::Float64Array> = batch
            .columns()
            .iter()
            .map(|c| c.as_any().downcast_ref().unwrap())
            .collect();
        for r in 0..batch.num_rows() {
            back.extend(cols.iter().map(|c| c.value(r)));
        }
    }
    assert_eq!(
        back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
