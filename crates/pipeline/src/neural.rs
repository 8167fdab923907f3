//! SPPE and SPLE (Xiong, Ju & Zhang, Algorithms 1–2) from a config: the library's
//! [`dpinfer_neural::sppe`] / [`dpinfer_neural::sple`] on the release's `s_dp°`, with the
//! model as the confidential-data simulator (a built-in model, a declared prior, or a
//! `kind = "command"` worker pool: each round's simulations are one batched call) and the
//! release's mechanism as the noise map `τ(u, s)`.
//!
//! # Privacy
//!
//! Inference from an already-released `s_dp°` is post-processing (Dwork & Roth 2014,
//! Prop. 2.1): the run's only privacy cost is the release that produced `s_dp°`, whose claim
//! the ledger records (`crate::release`); the simulations' uniforms are public, seeded
//! streams, never the release's noise.

use std::path::Path;

use crate::config::Config;
use crate::error::{Result, bail};
use crate::model::{Model, ModelPrior, ModelSim};
use crate::observe::Observer;
use crate::private::Ledger;
use crate::release::Mech;
use crate::results::{Chart, Diagnostic, Outcome};
use crate::sampler::{SamplerConfig, setting_error};
use dpinfer::mechanisms::{MechanismError, NoiseMap};
use dpinfer::simulators::{BatchSimulator, SimStream};
use dpinfer_neural::{
    ConditionalFlow, NeuralError, ProposalReport, RoundReport, SequentialSettings,
};
use dpinfer_plots::Series;

/// The trained estimator in the results folder (safetensors, [`ConditionalFlow::load`]):
/// SPPE's `q(θ | s_dp)`, SPLE's `q(s_dp | θ)`.
pub const ESTIMATOR_FILE: &str = "estimator.safetensors";

/// Stream domain of SPPE's posterior draws in the results (public randomness); job 0.
pub const SAMPLE_DOMAIN: u64 = 0x4e45_5552_5341_0000; // "NEURSA"

/// The release mechanism's noise map as the release applies it: the binomial curve's counts
/// (the simulated curve rounded to counts, as the release rounds the observed one) divided by
/// `n`, the vector Laplace as it is.
#[derive(Debug, Clone, Copy)]
pub struct ReleaseNoise<'a>(&'a Mech);

impl<'a> ReleaseNoise<'a> {
    /// The noise map of `mech`. Every release `privacy.release` can make has one; a mechanism
    /// without a noise map would be refused here, naming `privacy.release`.
    ///
    /// # Errors
    /// None today (kept for mechanisms without a noise map).
    pub fn of(mech: &'a Mech) -> Result<Self> {
        match mech {
            Mech::Binomial(..) | Mech::Laplace(..) => Ok(Self(mech)),
        }
    }
}

impl NoiseMap for ReleaseNoise<'_> {
    fn noise_dim(&self, len: usize) -> core::result::Result<usize, MechanismError> {
        match self.0 {
            Mech::Binomial(m, ..) => m.noise_dim(len),
            Mech::Laplace(m, ..) => m.noise_dim(len),
        }
    }

    fn tau(
        &self,
        u: &[f64],
        s: &[f64],
        out: &mut [f64],
    ) -> core::result::Result<(), MechanismError> {
        match self.0 {
            Mech::Binomial(m, n, ..) => {
                let counts: Vec<f64> = s.iter().map(|x| x.round()).collect();
                m.tau(u, &counts, out)?;
                for o in out.iter_mut() {
                    *o /= *n as f64;
                }
                Ok(())
            }
            Mech::Laplace(m, ..) => m.tau(u, s, out),
        }
    }
}

/// What either sampler leaves: posterior draws, the estimator, the rounds, SPLE's final MCMC.
struct Fitted {
    samples: Vec<f64>,
    estimator: ConditionalFlow,
    rounds: Vec<RoundReport>,
    mcmc: Option<dpinfer_neural::McmcReport>,
}

/// A library error in the config's words: settings errors name their `sampler.` key.
fn neural_err(sampler: &SamplerConfig, e: NeuralError) -> crate::Error {
    let kind = sampler.name();
    match e {
        NeuralError::Dimension { .. }
        | NeuralError::Setting { .. }
        | NeuralError::TooFewPairs { .. } => setting_error(&e, sampler),
        NeuralError::Length { .. } | NeuralError::Mechanism { .. } => crate::error::err!(
            key = "privacy.release";
            "{kind}: the release's mechanism does not fit the model's statistic: {e}"
        ),
        e => crate::error::err!(Data, "{kind}: {e}"),
    }
}

/// Runs the sampler on `sim`.
fn fit<S: BatchSimulator + ?Sized>(
    sampler: &SamplerConfig,
    prior: &ModelPrior<'_, std::sync::Arc<crate::declared::CommandModel>>,
    sim: &S,
    noise: &ReleaseNoise<'_>,
    s_dp: &[f64],
    settings: &SequentialSettings,
) -> Result<Fitted> {
    let e = |e| neural_err(sampler, e);
    if sampler.name() == "sppe" {
        let r = dpinfer_neural::sppe(prior, sim, noise, s_dp, settings).map_err(e)?;
        let mut rng = SimStream::with_domain(settings.seed, SAMPLE_DOMAIN, 0);
        let (samples, _) = r
            .posterior
            .sample(
                prior,
                settings.posterior_draws,
                settings.min_acceptance,
                &mut rng,
            )
            .map_err(e)?;
        let estimator = r.posterior.into_flow();
        Ok(Fitted {
            samples,
            estimator,
            rounds: r.rounds,
            mcmc: None,
        })
    } else {
        let r = dpinfer_neural::sple(prior, sim, noise, s_dp, settings).map_err(e)?;
        Ok(Fitted {
            samples: r.posterior,
            estimator: r.likelihood,
            rounds: r.rounds,
            mcmc: Some(r.posterior_mcmc),
        })
    }
}

/// SPPE or SPLE (`cfg.sampler`) on the released statistic `s_dp` whose mechanism is `mech`;
/// writes the trained estimator to [`ESTIMATOR_FILE`] in `dir` (held locked by the caller).
/// The outcome's ledger is the caller's: the release's.
///
/// # Errors
/// Settings the library refuses (named by key), a mechanism that does not fit the model's
/// statistic (`privacy.release`), simulator failures, training that diverged, I/O.
pub fn run(
    cfg: &Config,
    model: &Model,
    s_dp: &[f64],
    mech: &Mech,
    dir: &Path,
    threads: usize,
    observer: &dyn Observer,
) -> Result<Outcome> {
    let (SamplerConfig::Sppe(s) | SamplerConfig::Sple(s)) = &cfg.sampler else {
        bail!("{} is not sppe or sple", cfg.sampler.name());
    };
    let kind = cfg.sampler.name();
    let settings = s.settings(kind, cfg.seeds.run)?;
    let noise = ReleaseNoise::of(mech)?;
    let prior = ModelPrior(model);
    let t0 = std::time::Instant::now();
    let fitted = if let Model::User(m) = model {
        let workers = crate::public::resolve_threads(threads);
        // Every worker starts now (a Python worker imports numpy and pyarrow), together.
        m.sim.pool().start(workers)?;
        // each round is one call: the pool splits it into `[model] batch` requests
        fit(
            &cfg.sampler,
            &prior,
            &m.sim.on(workers),
            &noise,
            s_dp,
            &settings,
        )?
    } else {
        fit(
            &cfg.sampler,
            &prior,
            &ModelSim(model),
            &noise,
            s_dp,
            &settings,
        )?
    };
    observer.note(&format!(
        "{kind}: {} rounds of {} simulations (M = {}) in {:.1} s",
        settings.rounds,
        settings.simulations,
        settings.noise_draws,
        t0.elapsed().as_secs_f64()
    ));
    let path = dir.join(ESTIMATOR_FILE);
    // atomically, never through a link at that name, like every file of the folder
    let bytes = fitted
        .estimator
        .to_bytes()
        .map_err(|e| crate::error::err!(Data, "writing {}: {e}", path.display()))?;
    dpinfer_ledger::write_atomic(&path, &bytes, dpinfer_ledger::Replace::Owned)?;
    Ok(outcome(model, kind, &settings, fitted))
}

/// The per-round table's columns (`rounds.csv`).
pub const ROUND_COLUMNS: [&str; 11] = [
    "round",
    "simulations",
    "rejected",
    "rows",
    "epochs",
    "best_epoch",
    "train_loss",
    "validation_loss",
    "proposal_acceptance",
    "mcmc_rhat_max",
    "mcmc_ess_min",
];

/// One row of `rounds.csv`: the losses at the kept (best) epoch; SPPE's truncation acceptance
/// or SPLE's MCMC R̂ (largest) and bulk ESS (smallest) of the proposal that drew the round (NaN
/// where they do not apply).
fn round_row(r: &RoundReport) -> Vec<f64> {
    let at = |v: &[f64]| v.get(r.fit.best_epoch).copied().unwrap_or(f64::NAN);
    let (acc, rhat, ess) = match &r.proposal {
        ProposalReport::Prior => (1.0, f64::NAN, f64::NAN),
        ProposalReport::Truncated { acceptance } => (*acceptance, f64::NAN, f64::NAN),
        ProposalReport::Mcmc(m) => (m.acceptance, max(&m.rhat), min(&m.ess_bulk)),
        _ => (f64::NAN, f64::NAN, f64::NAN),
    };
    vec![
        r.round as f64,
        r.simulations as f64,
        r.rejected as f64,
        r.rows as f64,
        r.fit.epochs as f64,
        r.fit.best_epoch as f64,
        at(&r.fit.train_loss),
        at(&r.fit.validation_loss),
        acc,
        rhat,
        ess,
    ]
}

/// The largest value (NaN if any is NaN, or none).
fn max(v: &[f64]) -> f64 {
    v.iter()
        .try_fold(f64::NEG_INFINITY, |a, &x| (!x.is_nan()).then(|| a.max(x)))
        .filter(|m| m.is_finite())
        .unwrap_or(f64::NAN)
}

/// The smallest value (NaN if any is NaN, or none).
fn min(v: &[f64]) -> f64 {
    -max(&v.iter().map(|x| -x).collect::<Vec<_>>())
}

fn outcome(model: &Model, kind: &str, settings: &SequentialSettings, f: Fitted) -> Outcome {
    let names = model.names();
    let rows: Vec<Vec<f64>> = f.rounds.iter().map(round_row).collect();
    let x: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    let column = |j: usize| rows.iter().map(|r| r[j]).collect::<Vec<f64>>();
    let charts = vec![Chart {
        stem: format!("{kind}-loss"),
        title: format!("{} loss per round (at the kept epoch)", kind.to_uppercase()),
        xlabel: "round".into(),
        ylabel: "loss".into(),
        series: vec![
            Series {
                label: "training".into(),
                x: x.clone(),
                y: column(6),
            },
            Series {
                label: "validation".into(),
                x,
                y: column(7),
            },
        ],
        log_y: false,
    }];
    let mut facts = vec![
        ("rounds".into(), settings.rounds as f64),
        (
            "simulations".into(),
            f.rounds.iter().map(|r| r.simulations as f64).sum(),
        ),
        ("noise_draws".into(), settings.noise_draws as f64),
        (
            "final_validation_loss".into(),
            rows.last().map_or(f64::NAN, |r| r[7]),
        ),
    ];
    if let Some(m) = &f.mcmc {
        facts.push(("mcmc_acceptance".into(), m.acceptance));
        for (j, name) in names.iter().enumerate() {
            let get = |v: &[f64]| v.get(j).copied().unwrap_or(f64::NAN);
            facts.push((format!("split_rhat_{name}"), get(&m.rhat)));
            facts.push((format!("ess_bulk_{name}"), get(&m.ess_bulk)));
        }
    }
    Outcome {
        model: model.name().into(),
        sampler: kind.into(),
        names,
        samples: f.samples,
        weights: None,
        truth: model.truth(),
        // replaced by the release's ledger (the only privacy cost) by the caller
        ledger: Ledger::not_private(
            "neural inference on the observed statistic (private through its release)",
        ),
        facts,
        diagnostics: vec![Diagnostic {
            stem: "rounds".into(),
            columns: ROUND_COLUMNS.iter().map(|s| (*s).to_string()).collect(),
            rows,
        }],
        charts,
        reproduced: false,
        warnings: Vec::new(),
        prior_draws: None,
    }
}
