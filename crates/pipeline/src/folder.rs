//! The results folder of an [`Outcome`], written the same way by both front ends (the
//! `dpinfer` command and Python's `dpinfer.run`): `samples.csv` and `samples.arrow` (and
//! `samples.parquet` with the `parquet` feature), `summary.json`, one CSV per diagnostics
//! table, the SVG plots and `report.html` (all of it on one self-contained page). Every file
//! is written atomically and durably
//! ([`dpinfer_ledger::write_atomic`]), replacing only files the folder already owns.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use dpinfer_ledger::files::Replace;
use dpinfer_plots::{Column, PairPlot};

use crate::config::Config;
use crate::error::Result;
use crate::private::Ledger;
use crate::results::Outcome;
use crate::summary::{self, Marginal};

mod report;

/// `summary.json`.
#[derive(Serialize)]
struct SummaryJson<'a> {
    model: &'a str,
    sampler: &'a str,
    samples: usize,
    weighted: bool,
    reproduced_release: bool,
    quantile_levels: [f64; 5],
    parameters: &'a [Marginal],
    warnings: &'a [String],
    privacy: &'a Ledger,
    facts: serde_json::Map<String, serde_json::Value>,
}

/// The model's name in plot titles: a command model's `[model] name` (its outcome says only
/// "command"), else the outcome's model (a built-in model's name).
#[must_use]
pub fn model_title<'a>(cfg: &'a Config, outcome: &'a Outcome) -> &'a str {
    if cfg.model.kind.as_deref() == Some("command") {
        &cfg.model.name
    } else {
        &outcome.model
    }
}

/// The samples as one row-major table with its column names: the parameters, then a
/// `weight` column for weighted samples.
fn sample_table(o: &Outcome) -> (Vec<String>, Vec<f64>) {
    let d = o.names.len().max(1);
    let mut names = o.names.clone();
    let values: Vec<f64> = match &o.weights {
        None => o.samples.clone(),
        Some(w) => {
            names.push("weight".to_string());
            o.samples
                .chunks_exact(d)
                .enumerate()
                .flat_map(|(i, row)| {
                    row.iter()
                        .copied()
                        .chain(core::iter::once(w.get(i).copied().unwrap_or(f64::NAN)))
                })
                .collect()
        }
    };
    (names, values)
}

/// Writes the results folder of `outcome` into `dir` (created if missing): `samples.csv`,
/// `samples.arrow` (and `samples.parquet` with the `parquet` feature), `summary.json`, the
/// diagnostics CSVs, the SVG plots and `report.html` (the summary table, the privacy claim in
/// plain words, warnings, diagnostics and the plots inlined; no external resource), `model`
/// naming the model in the plot titles (see
/// [`model_title`]); returns the file names in the order written.
///
/// # Errors
/// I/O, a refused target (a file the folder does not own), a plot the layout refuses.
pub fn write(outcome: &Outcome, dir: &Path, model: &str) -> Result<Vec<String>> {
    let o = outcome;
    std::fs::create_dir_all(dir).map_err(|e| crate::Error::io(dir, e))?;
    let mut files = Vec::new();
    let d = o.names.len().max(1);
    // samples.csv
    let mut csv = o.names.join(",");
    if o.weights.is_some() {
        csv.push_str(",weight");
    }
    csv.push('\n');
    for (i, row) in o.samples.chunks_exact(d).enumerate() {
        let mut first = true;
        for v in row {
            if !first {
                csv.push(',');
            }
            first = false;
            let _ = write!(csv, "{v:?}");
        }
        if let Some(w) = &o.weights {
            let _ = write!(csv, ",{:?}", w.get(i).copied().unwrap_or(f64::NAN));
        }
        csv.push('\n');
    }
    put(dir, "samples.csv", csv.as_bytes(), &mut files)?;
    // samples.arrow (and samples.parquet): the same table, columnar
    let (names, values) = sample_table(o);
    if !names.is_empty() {
        let meta = [
            ("dpinfer.format", "samples".to_string()),
            ("dpinfer.model", o.model.clone()),
            ("dpinfer.sampler", o.sampler.clone()),
        ];
        crate::arrow::write_table(
            &dir.join("samples.arrow"),
            &names,
            &values,
            &meta,
            Replace::Owned,
        )?;
        files.push("samples.arrow".to_string());
        #[cfg(feature = "parquet")]
        {
            crate::arrow::write_parquet(
                &dir.join("samples.parquet"),
                &names,
                &values,
                &meta,
                Replace::Owned,
            )?;
            files.push("samples.parquet".to_string());
        }
    }
    // summary.json
    let marg = o.marginals();
    let facts = o
        .facts
        .iter()
        .map(|(k, v)| (k.clone(), json_num(*v)))
        .collect();
    let js = SummaryJson {
        model: &o.model,
        sampler: &o.sampler,
        samples: o.samples.len() / d,
        weighted: o.weights.is_some(),
        reproduced_release: o.reproduced,
        quantile_levels: summary::LEVELS,
        parameters: &marg,
        warnings: &o.warnings,
        privacy: &o.ledger,
        facts,
    };
    let v = serde_json::to_value(&js)?;
    put(
        dir,
        "summary.json",
        serde_json::to_string_pretty(&v)?.as_bytes(),
        &mut files,
    )?;
    // diagnostics
    for t in &o.diagnostics {
        let mut csv = t.columns.join(",");
        csv.push('\n');
        for r in &t.rows {
            let line: Vec<String> = r.iter().map(|v| format!("{v:?}")).collect();
            csv.push_str(&line.join(","));
            csv.push('\n');
        }
        put(dir, &format!("{}.csv", t.stem), csv.as_bytes(), &mut files)?;
    }
    // plots, kept for the report
    let mut plots: Vec<(String, String)> = Vec::new();
    let cols = o.columns();
    if !o.samples.is_empty() {
        for (j, name) in o.names.iter().enumerate() {
            // The prior's exact marginal density of parameter j where it has one, else its
            // draws (non-finite ones left out: dpinfer-plots refuses them) as a KDE; the
            // legend says which.
            let density = o.prior_draws.as_ref().and_then(|p| p.marginal_density(j));
            let prior: Option<Vec<f64>> =
                o.prior_draws
                    .as_ref()
                    .filter(|_| density.is_none())
                    .map(|p| {
                        let col = p.draws.iter().skip(j).step_by(d).copied();
                        col.filter(|v| v.is_finite()).collect()
                    });
            let mut plot = dpinfer_plots::Marginal::new(name, &cols[j])
                .title(format!("posterior of {name} ({})", o.sampler))
                .legend();
            if let Some(w) = &o.weights {
                plot = plot.weights(w);
            }
            if let Some(t) = o.truth.as_ref().and_then(|t| t.get(j)) {
                plot = plot.truth(*t);
            }
            if let Some(f) = &density {
                plot = plot.prior_density(f);
            } else if let Some(p) = prior.as_deref().filter(|p| !p.is_empty()) {
                plot = plot.prior(p);
            }
            let svg = plot.svg()?;
            put_plot(
                dir,
                format!("marginal-{name}.svg"),
                svg,
                &mut files,
                &mut plots,
            )?;
        }
        if d > 1 {
            // The diagonal draws the prior's exact marginal density where it has one, as the
            // marginal plots do (no KDE of prior draws there: the diagonal stays uncluttered).
            let densities: Vec<_> = (0..d)
                .map(|j| o.prior_draws.as_ref().and_then(|p| p.marginal_density(j)))
                .collect();
            let columns: Vec<Column<'_>> = o
                .names
                .iter()
                .zip(&cols)
                .zip(&densities)
                .map(|((n, c), f)| match f {
                    Some(f) => Column::new(n, c).prior_density(f),
                    None => Column::new(n, c),
                })
                .collect();
            // Red marks the true θ only where the model has one.
            let mut plot = PairPlot::new(&columns).title(format!(
                "{model} posterior, {}{}",
                o.sampler,
                if o.truth.is_some() {
                    " (true θ in red)"
                } else {
                    ""
                }
            ));
            if let Some(w) = &o.weights {
                plot = plot.weights(w);
            }
            if let Some(t) = &o.truth {
                plot = plot.truth(t);
            }
            put_plot(dir, "pairs.svg".into(), plot.svg()?, &mut files, &mut plots)?;
        }
    }
    for c in &o.charts {
        let svg = if c.stem == "trace" {
            // MCMC: trace and rank plots per parameter, the halves as split-R̂'s chains.
            let title = format!("{} and rank plots", c.title);
            dpinfer_plots::trace_rank_plot(&title, &c.series, 2)?
        } else {
            c.svg()?
        };
        put_plot(dir, format!("{}.svg", c.stem), svg, &mut files, &mut plots)?;
    }
    let page = report::html(o, model, &plots);
    put(dir, "report.html", page.as_bytes(), &mut files)?;
    Ok(files)
}

/// [`put`] for a plot, which the report shows too.
fn put_plot(
    dir: &Path,
    name: String,
    svg: String,
    files: &mut Vec<String>,
    plots: &mut Vec<(String, String)>,
) -> Result<()> {
    put(dir, &name, svg.as_bytes(), files)?;
    plots.push((name, svg));
    Ok(())
}

/// The claim's prose with its ε and δ printed rounded up as everywhere else (the claim's own
/// text prints them in full, e.g. `ε = 0.9999999999999992` beside `ε = 1`); the full values
/// stay in `summary.json` and the ledger.
#[must_use]
pub fn claim_rounded_up(c: &dpinfer::accountants::Claim) -> String {
    let text = c.to_string();
    let (e, d) = (c.report.epsilon, c.report.delta);
    let full = format!("(ε = {e}, δ = {d})");
    match text.strip_prefix(&full) {
        Some(rest) => format!("(ε = {}, δ = {}){rest}", fmt_eps(e), summary::fmt_up(d)),
        // Never print a claim we could not round consistently as if it were rounded.
        None => text,
    }
}

/// ε for people: rounded up ([`summary::fmt_up`]), or `∞ (not private)`.
#[must_use]
pub fn fmt_eps(e: f64) -> String {
    if e.is_finite() {
        summary::fmt_up(e)
    } else {
        "∞ (not private)".into()
    }
}

fn put(dir: &Path, name: &str, bytes: &[u8], files: &mut Vec<String>) -> Result<()> {
    dpinfer_ledger::write_atomic(&dir.join(name), bytes, Replace::Owned)?;
    files.push(name.to_string());
    Ok(())
}

fn json_num(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or_else(
        || serde_json::Value::String(format!("{v}")),
        serde_json::Value::Number,
    )
}
