//! The results folder: samples (CSV), diagnostics (CSV), a machine-readable summary (JSON)
//! and SVG plots.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::files::{Replace, write_atomic};
use crate::private::Ledger;
use crate::summary::{Marginal, summarise, table};
pub use dpinfer_plots::Chart;
use dpinfer_plots::{Column, PairPlot};

/// A finished inference, ready to be written.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Model name.
    pub model: String,
    /// Sampler kind.
    pub sampler: String,
    /// Parameter names.
    pub names: Vec<String>,
    /// Samples, row-major.
    pub samples: Vec<f64>,
    /// Optional weights (normalised or not).
    pub weights: Option<Vec<f64>>,
    /// The true θ, when known.
    pub truth: Option<Vec<f64>>,
    /// The privacy ledger.
    pub ledger: Ledger,
    /// Sampler facts.
    pub facts: Vec<(String, f64)>,
    /// Diagnostic tables: (file stem, column names, rows).
    pub diagnostics: Vec<Diagnostic>,
    /// Extra line charts: (file stem, title, x label, y label, series, log y).
    pub charts: Vec<Chart>,
    /// Whether the release was reproduced from an earlier invocation.
    pub reproduced: bool,
    /// Warnings about the posterior (few draws, no convergence, indistinguishable from the
    /// prior, an early stop), printed and stored in `summary.json`.
    pub warnings: Vec<String>,
    /// Draws of the prior (row-major, set by [`Outcome::diagnose`]), drawn as a dashed grey
    /// density under each marginal.
    pub prior_draws: Option<Vec<f64>>,
}

/// Fewer effective draws than this make the 2.5 %/97.5 % quantiles unreliable.
pub const MIN_DRAWS: f64 = 30.0;
/// Split-R̂ above this means the chain has not converged (Vehtari et al. 2021, §4).
pub const MAX_RHAT: f64 = 1.01;
/// Bulk ESS below this per chain is too little for stable summaries (Vehtari et al. 2021).
pub const MIN_ESS: f64 = 100.0;
/// Prior draws the posterior is compared with.
pub const PRIOR_DRAWS: usize = 4000;

/// A diagnostics table written as CSV.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// File stem.
    pub stem: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<f64>>,
}

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

impl Outcome {
    /// Columns of the samples.
    #[must_use]
    pub fn columns(&self) -> Vec<Vec<f64>> {
        let d = self.names.len().max(1);
        (0..d)
            .map(|j| self.samples.chunks_exact(d).map(|r| r[j]).collect())
            .collect()
    }

    /// Effective number of draws: Kish's `(Σw)²/Σw²` for weighted samples, else the count.
    #[must_use]
    pub fn effective_draws(&self) -> f64 {
        let n = self.samples.len() / self.names.len().max(1);
        match &self.weights {
            None => n as f64,
            Some(w) => {
                let (s, s2) = w
                    .iter()
                    .filter(|x| x.is_finite())
                    .fold((0.0, 0.0), |(s, s2), x| (s + x, s2 + x * x));
                if s2 > 0.0 { s * s / s2 } else { 0.0 }
            }
        }
    }

    /// Adds the warnings a statistician needs before trusting the summary: quantiles from
    /// fewer than [`MIN_DRAWS`] effective draws; MCMC that has not converged (split-R̂ above
    /// [`MAX_RHAT`] or bulk ESS below [`MIN_ESS`], read from the sampler's facts); and a
    /// posterior that a two-sample KS test cannot tell from `prior_draws` (row-major,
    /// [`PRIOR_DRAWS`] draws of the model's prior) at the 5 % level for every parameter.
    pub fn diagnose(&mut self, prior_draws: Option<&[f64]>) {
        self.prior_draws = prior_draws.map(<[f64]>::to_vec);
        let n = self.samples.len() / self.names.len().max(1);
        let ne = self.effective_draws();
        if n > 0 && ne < MIN_DRAWS {
            self.warnings.push(format!(
                "the posterior rests on {} (effective {}) draws, fewer than {MIN_DRAWS}: the 2.5 % and 97.5 % quantiles are unreliable; ask for more samples",
                n,
                crate::summary::fmt_sig(ne.round(), 4)
            ));
        }
        for name in &self.names {
            let fact = |key: &str| {
                self.facts
                    .iter()
                    .find(|(k, _)| k == &format!("{key}_{name}"))
                    .map(|(_, v)| *v)
            };
            let rhat = fact("split_rhat").filter(|r| r.is_nan() || *r > MAX_RHAT);
            let ess = fact("ess_bulk").filter(|e| e.is_nan() || *e < MIN_ESS);
            if rhat.is_some() || ess.is_some() {
                let mut why = Vec::new();
                if let Some(r) = rhat {
                    why.push(format!(
                        "split R̂ = {} > {MAX_RHAT}",
                        crate::summary::fmt_sig(r, 4)
                    ));
                }
                if let Some(e) = ess {
                    why.push(format!(
                        "bulk ESS = {} < {MIN_ESS}",
                        crate::summary::fmt_sig(e.round(), 4)
                    ));
                }
                self.warnings.push(format!(
                    "the chain has not converged for {name} ({}; Vehtari et al. 2021): run more iterations or tune the step size before using this posterior",
                    why.join(", ")
                ));
            }
        }
        let d = self.names.len();
        if let Some(prior) = prior_draws.filter(|p| d > 0 && n > 1 && p.len() >= d)
            && ne >= 2.0
        {
            let cols = self.columns();
            let m = prior.len() / d;
            let mut worst: Option<(f64, f64)> = None; // (p-value, D) of the clearest parameter
            for (j, col) in cols.iter().enumerate() {
                let mut post = match self.weights.as_deref() {
                    None => col.clone(),
                    Some(w) => match dpinfer_plots::resample(col, w) {
                        Ok(post) => post,
                        Err(_) => return,
                    },
                };
                let mut pri: Vec<f64> = prior.chunks_exact(d).map(|r| r[j]).collect();
                post.retain(|v| v.is_finite());
                pri.retain(|v| v.is_finite());
                let Ok(stat) = dpinfer::distances::ks_statistic(&mut post, &mut pri) else {
                    return;
                };
                let Ok(p) = dpinfer::distances::ks_p_value(stat, ne, m as f64) else {
                    return;
                };
                if worst.is_none_or(|(wp, _)| p < wp) {
                    worst = Some((p, stat));
                }
            }
            if let Some((p, stat)) = worst.filter(|(p, _)| *p >= 0.05) {
                self.warnings.push(format!(
                    "the posterior is indistinguishable from the prior (two-sample KS against {m} prior draws: p >= 0.05 for every parameter, smallest p = {}, D = {}): the data carried little information about θ at this privacy level; raise ε, use more informative summaries or more data",
                    crate::summary::fmt_sig(p, 4),
                    crate::summary::fmt_sig(stat, 4)
                ));
            }
        }
    }

    /// Posterior marginals.
    #[must_use]
    pub fn marginals(&self) -> Vec<Marginal> {
        summarise(
            &self.names,
            &self.columns(),
            self.weights.as_deref(),
            self.truth.as_deref(),
        )
    }

    /// The text printed at the end of a run.
    #[must_use]
    pub fn report(&self) -> String {
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
            crate::summary::fmt_up(l.delta),
            l.accountant,
            l.conversion,
            l.neighbouring,
            l.mechanism,
            l.noise
        );
        if let Some(c) = &l.claim {
            let _ = writeln!(s, "  claim: {c}");
        }
        if !self.facts.is_empty() {
            s.push_str("facts:");
            for (k, v) in &self.facts {
                let _ = write!(s, " {k} = {}", crate::summary::fmt_sig(*v, 6));
            }
            s.push('\n');
        }
        s
    }

    /// Writes the folder: `samples.csv` and `samples.arrow`, `summary.json`, diagnostics CSVs and SVG plots.
    ///
    /// # Errors
    /// I/O.
    pub fn write(&self, dir: &Path) -> Result<Vec<String>> {
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
                crate::arrow::write_table(
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
            quantile_levels: crate::summary::LEVELS,
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
                    .title(format!("posterior of {name} ({})", self.sampler));
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
                let mut plot = PairPlot::new(&columns).title(format!(
                    "{} posterior, {} (true θ in red)",
                    self.model, self.sampler
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

fn put(dir: &Path, name: &str, bytes: &[u8], files: &mut Vec<String>) -> Result<()> {
    write_atomic(&dir.join(name), bytes, Replace::Owned)?;
    files.push(name.to_string());
    Ok(())
}

fn fmt_eps(e: f64) -> String {
    if e.is_finite() {
        crate::summary::fmt_up(e)
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
