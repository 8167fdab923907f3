//! A library MCMC run as CLI results: the ledger (the run's privacy claim, or for DP Barker
//! the budget's (ε, δ)), facts, the trace and ε-spent charts and the diagnostic tables.

use dpinfer::accountants::Neighbouring;
use dpinfer::mcmc::run::RunOutput;

use crate::config::Config;
use crate::model::Model;
use crate::private::Ledger;
use crate::results::{Chart, Diagnostic, Outcome};
use dpinfer_plots::Series;

/// The ledger of a run: its privacy claim (the value; prose generated from it) or, for DP
/// Barker, which has no accountants event yet, the budget's (ε, δ) and mechanism.
pub(super) fn ledger(out: &RunOutput, noise: String) -> Ledger {
    let (Some(b), Some((epsilon, delta))) = (&out.budget, out.spent) else {
        return Ledger::not_private("random-walk Metropolis on the raw data");
    };
    let (m, k, allowed) = (b.mechanism(), out.iterations[0], out.allowed.unwrap_or(0));
    let mechanism = format!("{m}; {k} iterations (budget allows {allowed})");
    match &out.claim {
        Some(c) => Ledger::from_claim(c.clone(), mechanism, noise),
        None => Ledger {
            epsilon,
            delta,
            accountant: m.accountant().into(),
            conversion: m.conversion().into(),
            neighbouring: Neighbouring::ReplaceOne.to_string(),
            mechanism,
            noise,
            claim: None,
        },
    }
}

fn series(label: &str, x: Vec<f64>, y: Vec<f64>) -> Series {
    let label = label.into();
    Series { label, x, y }
}

fn chart(stem: &str, title: String, ylabel: &str, series: Vec<Series>) -> Chart {
    let (stem, xlabel, ylabel) = (stem.into(), "iteration".into(), ylabel.into());
    Chart {
        stem,
        title,
        xlabel,
        ylabel,
        series,
        log_y: false,
    }
}

fn table(stem: &str, columns: &[&str], rows: Vec<Vec<f64>>) -> Diagnostic {
    let columns = columns.iter().map(|c| (*c).to_string()).collect();
    Diagnostic {
        stem: stem.into(),
        columns,
        rows,
    }
}

pub(super) fn outcome(
    cfg: &Config,
    model: &Model,
    r: RunOutput,
    ledger: Ledger,
    mut facts: Vec<(String, f64)>,
) -> Outcome {
    let t = &r.traces[0];
    let (names, kept) = (model.names(), t.len());
    facts.push(("acceptance_rate".into(), t.acceptance_rate()));
    facts.push(("clip_fraction_nonprivate".into(), t.clip_fraction()));
    facts.push(("kept_draws".into(), kept as f64));
    let it: Vec<f64> = (0..kept).map(|i| (i as u64 + t.burn_in) as f64).collect();
    let mut rows = Vec::new();
    for (j, (ess, rhat)) in r.diagnostics().into_iter().enumerate() {
        facts.push((format!("ess_bulk_{}", names[j]), ess));
        facts.push((format!("split_rhat_{}", names[j]), rhat));
        rows.push(vec![j as f64, ess, rhat]);
    }
    let trace = (0..t.dim).map(|j| series(&names[j], it.clone(), t.coordinate(j)));
    let title = format!("{} trace (after burn-in)", cfg.sampler.name());
    let mut charts = vec![chart("trace", title, "θ", trace.collect())];
    if let Some(&(last, _)) = r.epsilon.last() {
        let (x, y) = r.epsilon.iter().map(|&(k, e)| (k as f64, e)).unzip();
        let budget = series(
            "budget",
            vec![0.0, last as f64],
            vec![cfg.privacy.epsilon; 2],
        );
        let title = format!("ε spent (δ = {})", ledger.delta);
        charts.push(chart(
            "epsilon-spent",
            title,
            "ε",
            vec![series("ε spent", x, y), budget],
        ));
    }
    let noise = t
        .noise_sd
        .iter()
        .enumerate()
        .map(|(i, s)| vec![i as f64, *s]);
    let diagnostics = vec![
        table(
            "chain-diagnostics",
            &["parameter", "ess_bulk", "split_rhat"],
            rows,
        ),
        table("noise-sd", &["iteration", "noise_sd"], noise.collect()),
    ];
    let warnings = lowered_burn_in(cfg, &r).into_iter().collect();
    Outcome {
        model: model.name().into(),
        sampler: cfg.sampler.name().into(),
        names,
        samples: t.draws.clone(),
        weights: None,
        truth: model.truth(),
        ledger,
        facts,
        diagnostics,
        charts,
        reproduced: false,
        warnings,
        prior_draws: None,
    }
}

/// The warning for a chain the budget cut short: the library then discards at most half of
/// the iterations it ran (`dpinfer_mcmc::run`'s plan), which can be less than the configured
/// (or default) `burn_in`. The summary says so and names the keys, instead of a silent change.
fn lowered_burn_in(cfg: &Config, r: &RunOutput) -> Option<String> {
    let (chain, _) = cfg.sampler.mcmc()?;
    let asked = chain.settings(0);
    let cut = r
        .traces
        .iter()
        .find(|t| t.burn_in < asked.burn_in() && t.iterations < asked.iterations)?;
    Some(format!(
        "the privacy budget allows {} of the {} iterations asked for, so the burn-in was \
         lowered from {} to {} (half of what ran): set [sampler] iterations to at most {} and \
         burn_in below it, or raise the budget",
        cut.iterations,
        asked.iterations,
        asked.burn_in(),
        cut.burn_in,
        cut.iterations
    ))
}
