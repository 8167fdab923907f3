//! The results folder is the library's (`dpinfer_pipeline::folder`): a finished run writes
//! samples (CSV, Arrow, and Parquet with the `parquet` feature), `summary.json` and plots, and
//! each table reads back to the outcome's samples bit for bit.

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

/// Whether `html` is well-formed: every element closed in order (void elements, `/>`
/// self-closing tags, the doctype and comments aside), no stray `<`, quotes balanced in tags.
fn well_formed(html: &str) -> Result<(), String> {
    const VOID: [&str; 5] = ["meta", "br", "hr", "img", "link"];
    let mut open: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        let end = rest.find('>').ok_or("a tag is not closed by `>`")?;
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') {
            continue;
        }
        if tag.contains('<') || !tag.matches('"').count().is_multiple_of(2) {
            return Err(format!("malformed tag <{tag}>"));
        }
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(o) if o == name.trim() => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.is_empty() {
            return Err(format!("bad tag <{tag}>"));
        }
        if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
            open.push(name);
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed: {open:?}"))
    }
}

/// Issue 32 ("a report a person opens"): every results folder has `report.html`, one
/// well-formed, self-contained page (no script, no external resource, the plots inlined) with
/// the summary table, the privacy claim in plain words, every warning and the diagnostics.
#[test]
fn the_folder_has_a_self_contained_report() {
    assert!(well_formed("<p>a<b>c</b></p><br>").is_ok());
    assert!(well_formed("<p>a<b>c</p></b>").is_err() && well_formed("<div><p></p>").is_err());
    let dir = scratch("report");
    let cfg = config();
    let mut finished = run::run_with(&cfg, &dir, 1, &quiet()).unwrap();
    // A warning with markup in it must reach the page, escaped.
    finished
        .outcome
        .warnings
        .push("check <this> & [sampler] generations = 8".into());
    let written = folder::write(&finished.outcome, &dir, "gaussian-mean").unwrap();
    let o = finished.close().unwrap();
    assert_eq!(written.last().map(String::as_str), Some("report.html"));
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    well_formed(&page).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    for bad in ["http:", "https:", "src=", "<script", "href=", "url("] {
        // the SVGs' namespace is the one URL a page with inline SVG carries
        let hits = page
            .replace(r#"xmlns="http://www.w3.org/2000/svg""#, "")
            .contains(bad);
        assert!(!hits, "report.html refers outside itself: {bad}");
    }
    for w in &o.warnings {
        let escaped = w
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;");
        assert!(page.contains(&escaped), "warning missing: {w}");
    }
    let eps = dpinfer_pipeline::summary::fmt_up(o.ledger.epsilon);
    assert!(page.contains(&format!("(ε = {eps}, δ = ")), "claim missing");
    assert!(page.contains("differentially private"));
    assert!(page.contains("for any one person"));
    assert!(page.contains(&o.ledger.neighbouring.replace('&', "&amp;")));
    assert!(page.contains("<td>mu</td>"));
    // every plot of the folder is inlined
    let svgs = written.iter().filter(|f| f.ends_with(".svg")).count();
    assert!(svgs >= 1);
    assert_eq!(page.matches("<svg ").count(), svgs);
    let _ = std::fs::remove_dir_all(&dir);
}
