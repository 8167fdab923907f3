//! The text printed at the end of a run; the results folder itself (samples, diagnostics,
//! `summary.json`, plots) is the pipeline's ([`dpinfer_pipeline::folder`]), so `dpinfer run`
//! and Python's `dpinfer.run` write the same folder.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use dpinfer_pipeline::results::Outcome;
use dpinfer_pipeline::summary::{self, table};

/// Writing and printing an [`Outcome`] (the CLI's side of a finished inference).
pub trait OutcomeFiles {
    /// The text printed at the end of a run.
    fn report(&self) -> String;
    /// Writes the folder ([`dpinfer_pipeline::folder::write`]), `model` naming the model in
    /// the plot titles (see [`model_title`]); returns the file names.
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
        Ok(dpinfer_pipeline::folder::write(self, dir, model)?)
    }
}

pub use dpinfer_pipeline::folder::model_title;
use dpinfer_pipeline::folder::{claim_rounded_up, fmt_eps};
