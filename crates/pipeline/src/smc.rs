//! SMC-ABC from the command line (Beaumont et al. 2009 population Monte Carlo, as in
//! `dpinfer-abc`), with per-generation diagnostics and trajectory plots.
//!
//! # Privacy
//!
//! SMC-ABC post-processes its observation. Run on raw data it is **not** private, and the
//! ledger says so; it is private exactly when the observed data file is itself the output of a
//! DP mechanism (e.g. a curve released with `dpinfer`'s binomial mechanism), whose ε the data
//! owner already charged.

use std::path::Path;

use crate::error::{Result, bail};
use dpinfer::abc::smc::{Privatized, SmcSettings};
use dpinfer::distances::{ClippedWeightedL2, RffReference, Rows};
use dpinfer::simulators::SimStream;

use crate::config::Config;
use crate::model::{Model, ModelPrior, ModelSim};
use crate::observe::Observer;
use crate::private::Ledger;
use crate::public::Public;
use crate::results::{Chart, Diagnostic, Outcome};
use crate::sampler::{SamplerConfig, SmcAbc};
use dpinfer_plots::Series;

/// Stream domain of the SMC run's public randomness.
const SMC_RUN_DOMAIN: u64 = 0x534d_4352_0000_0000;

/// Runs SMC-ABC on the observed data; `observer` hears how it stopped.
///
/// # Errors
/// Invalid settings, simulator failures.
pub fn run(
    cfg: &Config,
    model: &Model,
    obs: &[f64],
    _dir: &Path,
    observer: &dyn Observer,
) -> Result<Outcome> {
    let SamplerConfig::SmcAbc(s) = &cfg.sampler else {
        bail!("{} is not smc-abc", cfg.sampler.name());
    };
    let settings = SmcSettings::try_from(s)?;
    let particles = settings.particles;
    // The distance: RFF MMD to the observed embedding, or (clipped weighted) L2 on outputs.
    let mut pcfg = cfg.clone();
    pcfg.sampler = SamplerConfig::SmcAbc(SmcAbc {
        pairs: Some(1),
        ..s.clone()
    });
    let public = Public::new(&pcfg, model.clone())?;
    let features = public.features()?;
    let rd = model.row_dim();
    let weights = cfg
        .distance
        .weights()
        .map_or_else(|| vec![1.0; obs.len()], <[f64]>::to_vec);
    let l2 = ClippedWeightedL2::new(&weights, cfg.distance.clip().unwrap_or(f64::MAX))?;
    let reference = match &features {
        Some(f) => Some(RffReference::new(*f, Rows::new(obs, rd)?)?),
        None => {
            crate::error::ensure!(
                obs.len() == weights.len(),
                Data,
                "observed data have {} values, distance.weights {}",
                obs.len(),
                weights.len()
            );
            None
        }
    };
    let dist = |sim: &[f64]| -> f64 {
        match &reference {
            Some(r) => Rows::new(sim, rd)
                .ok()
                .and_then(|rows| r.mmd(rows).ok())
                .unwrap_or(f64::INFINITY),
            None => l2.distance(sim, obs).unwrap_or(f64::INFINITY),
        }
    };
    let sim = Privatized::new(ModelSim(model), crate::release::replica(cfg, model)?);
    let mut smc = dpinfer::abc::smc::SmcAbc::new(ModelPrior(model), sim, dist, settings)?;
    let mut rng = SimStream::with_domain(cfg.seeds.run, SMC_RUN_DOMAIN, 0);
    let stop = smc.run(&mut rng)?;
    observer.note(&format!(
        "SMC-ABC {}: {}",
        if stop.reached_target() {
            "finished"
        } else {
            "warning: stopped early"
        },
        stop.explain()
    ));
    let hist = smc.history().to_vec();
    let rows: Vec<Vec<f64>> = hist
        .iter()
        .map(|g| {
            vec![
                g.generation as f64,
                g.tolerance,
                g.simulations as f64,
                g.total_simulations as f64,
                g.acceptance_rate,
                g.ess,
                f64::from(u8::from(g.resampled)),
            ]
        })
        .collect();
    let x: Vec<f64> = hist.iter().map(|g| g.generation as f64).collect();
    let series = |label: &str, f: &dyn Fn(&dpinfer::abc::smc::GenerationStats) -> f64| Series {
        label: label.into(),
        x: x.clone(),
        y: hist.iter().map(f).collect(),
    };
    let charts = vec![
        Chart {
            stem: "smc-tolerance".into(),
            title: "SMC-ABC tolerance per generation".into(),
            xlabel: "generation".into(),
            ylabel: "tolerance".into(),
            series: vec![series("tolerance", &|g| g.tolerance)],
            log_y: true,
        },
        Chart {
            stem: "smc-acceptance-ess".into(),
            title: "SMC-ABC acceptance rate and ESS fraction".into(),
            xlabel: "generation".into(),
            ylabel: "fraction".into(),
            series: vec![
                series("acceptance rate", &|g| g.acceptance_rate),
                series("ESS / particles", &|g| g.ess / particles as f64),
            ],
            log_y: false,
        },
    ];
    Ok(Outcome {
        model: model.name().into(),
        sampler: cfg.sampler.name().into(),
        names: model.names(),
        samples: smc.particles().to_vec(),
        weights: Some(smc.weights().to_vec()),
        truth: model.truth(),
        ledger: Ledger::not_private(
            "SMC-ABC on the observed data as given (private only if the data file is a DP release)",
        ),
        facts: vec![
            ("generations".into(), hist.len() as f64),
            ("simulations".into(), smc.simulations() as f64),
            (
                "final_tolerance".into(),
                hist.last().map_or(f64::NAN, |g| g.tolerance),
            ),
        ],
        diagnostics: vec![Diagnostic {
            stem: "smc-generations".into(),
            columns: [
                "generation",
                "tolerance",
                "simulations",
                "total_simulations",
                "acceptance_rate",
                "ess",
                "resampled",
            ]
            .iter()
            .map(|s| (*s).to_string())
            .collect(),
            rows,
        }],
        charts,
        reproduced: false,
        warnings: if stop.reached_target() {
            Vec::new()
        } else {
            vec![format!("SMC-ABC stopped early: {}", stop.explain())]
        },
        prior_draws: None,
    })
}
