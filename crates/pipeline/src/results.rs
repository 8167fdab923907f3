//! A finished inference as a value ([`Outcome`]): samples, weights, the privacy ledger, the
//! sampler's facts, diagnostics and the warnings a statistician needs before trusting it.
//! Front ends write it (the CLI's results folder) or hand it over (Python).

use std::sync::Arc;

use crate::private::Ledger;
use crate::summary::{Marginal, summarise};
pub use dpinfer_plots::Chart;

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
    /// The prior (set by [`Outcome::diagnose`]): its draws, which the posterior is compared
    /// with, and its exact marginal densities, drawn as a dashed grey curve under each
    /// marginal (a KDE of the draws for a coordinate without a closed form).
    pub prior_draws: Option<PriorDraws>,
}

/// A prior's exact marginal log densities: `(j, x) ↦ ln p_j(x)`, `None` for a coordinate
/// without a closed form ([`Prior::marginal_ln_density`](dpinfer::simulators::Prior::marginal_ln_density)).
pub type MarginalLnDensity = Arc<dyn Fn(usize, f64) -> Option<f64> + Send + Sync>;

/// The model's prior as a run's outcome keeps it: [`PRIOR_DRAWS`] draws, and the marginal
/// densities where the prior knows them.
#[derive(Clone)]
pub struct PriorDraws {
    /// Draws of the prior, row-major.
    pub draws: Vec<f64>,
    /// The prior's exact marginal log densities (`None`: the prior has none).
    pub marginal: Option<MarginalLnDensity>,
}

impl core::fmt::Debug for PriorDraws {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PriorDraws")
            .field("draws", &self.draws.len())
            .field("marginal", &self.marginal.is_some())
            .finish()
    }
}

impl PriorDraws {
    /// The exact marginal density of coordinate `j` (not its log: `0` outside the support),
    /// when the prior has a closed form for it; the plots draw it instead of a KDE of the
    /// draws.
    #[must_use]
    pub fn marginal_density(&self, j: usize) -> Option<impl Fn(f64) -> f64 + '_> {
        let m = self.marginal.as_ref()?;
        // The closed form exists per coordinate, not per point: one probe says which.
        m(j, 0.0)?;
        Some(move |x: f64| {
            m(j, x)
                .map(f64::exp)
                // The trait never returns NaN; a broken implementation draws nothing there.
                .filter(|p| !p.is_nan())
                .unwrap_or(0.0)
        })
    }
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
    /// posterior that a two-sample KS test cannot tell from the prior's draws (row-major,
    /// [`PRIOR_DRAWS`] draws of the model's prior) at the 5 % level for every parameter. The
    /// prior is kept for the plots.
    pub fn diagnose(&mut self, prior: Option<PriorDraws>) {
        self.prior_draws = prior;
        let prior_draws = self.prior_draws.as_ref().map(|p| p.draws.as_slice());
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
}
