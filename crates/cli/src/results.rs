//! The results folder of an [`Outcome`]: samples (CSV and Arrow), diagnostics (CSV), a
//! machine-readable summary (JSON) and SVG plots; and the text printed at the end of a run.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use dpinfer_pipeline::private::Ledger;
use dpinfer_pipeline::results::Outcome;
use dpinfer_pipeline::summary::{self, Marginal, table};
use dpinfer_plots::{Column, PairPlot};

use crate::files::{Replace, write_atomic};

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

/// Writing and printing an [`Outcome`] (the CLI's side of a finished inference).
pub trait OutcomeFiles {
    /// The text printed at the end of a run.
    fn report(&self) -> String;
    /// Writes the folder: `samples.csv` and `samples.arrow`, `summary.json`, diagnostics
    /// CSVs and SVG plots, `model` naming the model in the plot titles (see [`model_title`]);
    /// returns the file names.
    ///
    /// # Errors
    /// I/O.
    fn write(&self, dir: &Path, model: &str) -> Result<Vec<String>>;
}

impl OutcomeFiles for Outcome {
    fn report(&self) -> String {
        let n = self.samples.len() / self.names.len().max(1);
        let mut s = format!(
            "{} on {}: {n} {} samples{}\n\n",
            self.sampler,
            self.model,
            if self.weights.is_some() {
                "weighted"
            } else {
                "posterior"
            },
            if self.reproduced {
                " (stored release reproduced; no new noise drawn, no new privacy cost)"
            } else {
                ""
            }
        );
        if n == 0 {
            s.push_str("no samples were released (nothing accepted)\n");
        } else {
            s.push_str(&table(&self.marginals()));
        }
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        let l = &self.ledger;
        let _ = write!(
            s,
            "\nprivacy: ε = {}, δ = {}\n  accountant: {}\n  conversion: {}\n  neighbouring: {}\n  mechanism: {}\n  noise: {}\n",
            fmt_eps(l.epsilon),
            summary::fmt_up(l.delta),
            l.accountant,
            l.conversion,
            l.neighbouring,
            l.mechanism,
            l.noise
        );
        if let Some(c) = &l.claim {
            let _ = writeln!(s, "  claim: {}", claim_rounded_up(c));
        }
        if !self.facts.is_empty() {
            s.push_str("facts:");
            for (k, v) in &self.facts {
                let _ = write!(s, " {k} = {}", summary::fmt_sig(*v, 6));
            }
            s.push('\n');
        }
        s
    }

    fn write(&self, dir: &Path, model: &str) -> Result<Vec<String>> {
        std::fs::create_dir_all(dir)?;
        let mut files = Vec::new();
        let d = self.names.len().max(1);
        // samples.csv
        let mut csv = self.names.join(",");
        if self.weights.is_some() {
            csv.push_str(",weight");
        }
        csv.push('\n');
        for (i, row) in self.samples.chunks_exact(d).enumerate() {
            let mut first = true;
            for v in row {
                if !first {
                    csv.push(',');
                }
                first = false;
                let _ = write!(csv, "{v:?}");
            }
            if let Some(w) = &self.weights {
                let _ = write!(csv, ",{:?}", w.get(i).copied().unwrap_or(f64::NAN));
            }
            csv.push('\n');
        }
        put(dir, "samples.csv", csv.as_bytes(), &mut files)?;
        // samples.arrow: the same table, columnar
        {
            let mut names = self.names.clone();
            let values: Vec<f64> = match &self.weights {
                None => self.samples.clone(),
                Some(w) => {
                    names.push("weight".to_string());
                    self.samples
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
            if !names.is_empty() {
                dpinfer_pipeline::arrow::write_table(
                    &dir.join("samples.arrow"),
                    &names,
                    &values,
                    &[
                        ("dpinfer.format", "samples".to_string()),
                        ("dpinfer.model", self.model.clone()),
                        ("dpinfer.sampler", self.sampler.clone()),
                    ],
                    Replace::Owned,
                )?;
                files.push("samples.arrow".to_string());
            }
        }
        // summary.json
        let marg = self.marginals();
        let facts = self
            .facts
            .iter()
            .map(|(k, v)| (k.clone(), json_num(*v)))
            .collect();
        let js = SummaryJson {
            model: &self.model,
            sampler: &self.sampler,
            samples: self.samples.len() / d,
            weighted: self.weights.is_some(),
            reproduced_release: self.reproduced,
            quantile_levels: summary::LEVELS,
            parameters: &marg,
            warnings: &self.warnings,
            privacy: &self.ledger,
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
        for t in &self.diagnostics {
            let mut csv = t.columns.join(",");
            csv.push('\n');
            for r in &t.rows {
                let line: Vec<String> = r.iter().map(|v| format!("{v:?}")).collect();
                csv.push_str(&line.join(","));
                csv.push('\n');
            }
            put(dir, &format!("{}.csv", t.stem), csv.as_bytes(), &mut files)?;
        }
        // plots
        let cols = self.columns();
        if !self.samples.is_empty() {
            for (j, name) in self.names.iter().enumerate() {
                // Parameter j's prior draws; non-finite ones are left out, as before the plots
                // moved to dpinfer-plots (which refuses them).
                let prior: Option<Vec<f64>> = self.prior_draws.as_ref().map(|p| {
                    let col = p.iter().skip(j).step_by(d).copied();
                    col.filter(|v| v.is_finite()).collect()
                });
                let mut plot = dpinfer_plots::Marginal::new(name, &cols[j])
                    .title(format!("posterior of {name} ({})", self.sampler))
                    .legend();
                if let Some(w) = &self.weights {
                    plot = plot.weights(w);
                }
                if let Some(t) = self.truth.as_ref().and_then(|t| t.get(j)) {
                    plot = plot.truth(*t);
                }
                if let Some(p) = prior.as_deref().filter(|p| !p.is_empty()) {
                    plot = plot.prior(p);
                }
                let svg = plot.svg()?;
                put(
                    dir,
                    &format!("marginal-{name}.svg"),
                    svg.as_bytes(),
                    &mut files,
                )?;
            }
            if d > 1 {
                let columns: Vec<Column<'_>> = self
                    .names
                    .iter()
                    .zip(&cols)
                    .map(|(n, c)| Column::new(n, c))
                    .collect();
                // Red marks the true θ only where the model has one.
                let mut plot = PairPlot::new(&columns).title(format!(
                    "{model} posterior, {}{}",
                    self.sampler,
                    if self.truth.is_some() {
                        " (true θ in red)"
                    } else {
                        ""
                    }
                ));
                if let Some(w) = &self.weights {
                    plot = plot.weights(w);
                }
                if let Some(t) = &self.truth {
                    plot = plot.truth(t);
                }
                put(dir, "pairs.svg", plot.svg()?.as_bytes(), &mut files)?;
            }
        }
        for c in &self.charts {
            let svg = if c.stem == "trace" {
                // MCMC: trace and rank plots per parameter, the halves as split-R̂'s chains.
                let title = format!("{} and rank plots", c.title);
                dpinfer_plots::trace_rank_plot(&title, &c.series, 2)?
            } else {
                c.svg()?
            };
            put(dir, &format!("{}.svg", c.stem), svg.as_bytes(), &mut files)?;
        }
        Ok(files)
    }
}

/// The model's name in plot titles: a command model's `[model] name` (its outcome says only
/// "command"), else the outcome's model (a built-in model's name).
#[must_use]
pub fn model_title<'a>(cfg: &'a dpinfer_pipeline::config::Config, outcome: &'a Outcome) -> &'a str {
    if cfg.model.kind.as_deref() == Some("command") {
        &cfg.model.name
    } else {
        &outcome.model
    }
}

fn put(dir: &Path, name: &str, bytes: &[u8], files: &mut Vec<String>) -> Result<()> {
    write_atomic(&dir.join(name), bytes, Replace::Owned)?;
    files.push(name.to_string());
    Ok(())
}

/// The claim's prose with its ε and δ printed as on the `privacy:` line, rounded up (the
/// claim's own text prints them in full, e.g. `ε = 0.9999999999999992` beside `ε = 1`); the
/// full values stay in `summary.json` and the ledger.
fn claim_rounded_up(c: &dpinfer::accountants::Claim) -> String {
    let text = c.to_string();
    let (e, d) = (c.report.epsilon, c.report.delta);
    let full = format!("(ε = {e}, δ = {d})");
    match text.strip_prefix(&full) {
        Some(rest) => format!("(ε = {}, δ = {}){rest}", fmt_eps(e), summary::fmt_up(d)),
        // Never print a claim we could not round consistently as if it were rounded.
        None => text,
    }
}

fn fmt_eps(e: f64) -> String {
    if e.is_finite() {
        summary::fmt_up(e)
    } else {
        "∞ (not private)".into()
    }
}

fn json_num(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or_else(
        || serde_json::Value::String(format!("{v}")),
        serde_json::Value::Number,
    )
}
