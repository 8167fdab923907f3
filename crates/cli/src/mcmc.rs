//! MCMC from the command line: random-walk Metropolis (non-private), DP penalty, DP Barker and
//! DP HMC from `dpinfer-mcmc`, on the models with a per-row likelihood (gaussian-mean,
//! banana). Writes the trace, acceptance and ε-spent trajectories.

use std::path::Path;

use anyhow::{Context, Result, bail};
use dpinfer::mcmc::budget::{Accounting, GradientCharging};
use dpinfer::mcmc::diagnostics::{ess_bulk, split_rhat};
use dpinfer::mcmc::model::{BananaPriorGrad, GaussianPrior, PriorGradient};
use dpinfer::mcmc::{
    Barker, BarkerPrivacy, BarkerSettings, Budgeted, Hmc, HmcPrivacy, HmcSettings, McmcError,
    Penalty, PenaltyPrivacy, PenaltySettings, Proposal, Sampler, Trace,
};
use dpinfer::simulators::{RowGradient, RowLikelihood, SimStream};

use crate::config::{Config, SamplerKind};
use crate::model::Model;
use crate::private::{Ledger, noise_rng};
use crate::results::{Chart, Diagnostic, Outcome};
use crate::svg::Series;

/// Stream domain of the chain's public randomness (proposals, momenta, batches).
const MCMC_DOMAIN: u64 = 0x4d43_4d43_0000_0000;
/// Segments of the run after which ε spent is read from the sampler.
const SEGMENTS: u64 = 40;

fn mcmc_err(e: McmcError) -> anyhow::Error {
    anyhow::anyhow!("mcmc: {e}")
}

/// Runs the configured MCMC sampler on the observed data. A private sampler calls
/// `before_noise` once its settings are checked and its iteration count fixed, right before
/// the chain draws its first noise (the caller marks its ledger there).
///
/// # Errors
/// Models without a likelihood, invalid settings, sampler failures, `before_noise`'s error.
pub fn run(
    cfg: &Config,
    model: &Model,
    obs: &[f64],
    _dir: &Path,
    before_noise: &mut dyn FnMut() -> Result<()>,
) -> Result<Outcome> {
    match model {
        Model::GaussianMean(m) => {
            let p = m.prior();
            let prior = GaussianPrior::new(1, p.mean(), p.sd()).map_err(mcmc_err)?;
            let lik = m
                .likelihood(obs)
                .map_err(|e| anyhow::anyhow!("data: {e}"))?;
            drive(cfg, model, prior, lik, &[p.mean()], before_noise)
        }
        Model::Banana(b) => {
            let prior = BananaPriorGrad::new(b);
            let lik = b.data(obs).map_err(|e| anyhow::anyhow!("data: {e}"))?;
            let mut init = vec![0.0; b.settings().dim];
            init[1] = 0.0;
            drive(cfg, model, prior, lik, &init, before_noise)
        }
        _ => bail!(
            "model {} has no per-row likelihood; MCMC samplers need gaussian-mean or banana \
             (use an ABC sampler)",
            model.name()
        ),
    }
}

/// Reads (ε, δ) spent from a chain.
type Spent<S> = dyn Fn(&S) -> Result<Option<(f64, f64)>, McmcError>;

struct Run {
    trace: Trace,
    eps: Vec<(f64, f64)>,
    ledger: Ledger,
    facts: Vec<(String, f64)>,
}

fn segments<S: Sampler>(
    chain: &mut S,
    total: u64,
    burn_in: u64,
    rng: &mut SimStream,
    spent: &Spent<S>,
) -> Result<(Trace, Vec<(f64, f64)>)> {
    let mut trace = Trace::with_burn_in(burn_in);
    let mut eps = vec![(0.0, 0.0)];
    let seg = total.div_ceil(SEGMENTS).max(1);
    let mut done = 0;
    let pb = crate::jobs::bar(total, "sampling");
    while done < total {
        let k = seg.min(total - done);
        chain.run(k, rng, &mut trace).map_err(mcmc_err)?;
        done += k;
        pb.inc(k);
        if let Some((e, _)) = spent(chain).map_err(mcmc_err)? {
            eps.push((done as f64, e));
        }
    }
    pb.finish_and_clear();
    Ok((trace, eps))
}

fn accounting(cfg: &Config) -> (Accounting, &'static str) {
    match cfg.sampler.accounting.as_deref() {
        Some("zcdp") => (Accounting::Zcdp, "zCDP → (ε, δ) (thesis Theorem 6)"),
        _ => (
            Accounting::Pld,
            "Gaussian PLD, exact (ε, δ) (thesis Theorem 7)",
        ),
    }
}

fn drive<P, L>(
    cfg: &Config,
    model: &Model,
    prior: P,
    lik: L,
    init: &[f64],
    before_noise: &mut dyn FnMut() -> Result<()>,
) -> Result<Outcome>
where
    P: PriorGradient + Clone,
    L: RowLikelihood + RowGradient + Clone,
{
    let s = &cfg.sampler;
    let kind = cfg.kind()?;
    let d = init.len();
    let iterations = s.iterations.unwrap_or(5000);
    if iterations == 0 {
        bail!("sampler.iterations must be positive");
    }
    let burn_in = s.burn_in.unwrap_or(iterations / 2);
    if burn_in >= iterations {
        bail!("sampler.burn_in ({burn_in}) must be below sampler.iterations ({iterations})");
    }
    let init = match &s.init {
        Some(v) if v.len() != d => bail!("sampler.init has {} values, θ has {d}", v.len()),
        Some(v) => v.as_slice(),
        None => init,
    };
    let scale = match &s.proposal_scales {
        Some(v) if v.len() != d => {
            bail!("sampler.proposal_scales has {} values, θ has {d}", v.len())
        }
        Some(v) => v.clone(),
        None => vec![s.proposal_scale.unwrap_or(0.05); d],
    };
    let temperature = s.temperature.unwrap_or(1.0);
    let mut rng = SimStream::with_domain(cfg.seeds.run, MCMC_DOMAIN, 0);
    let (eps_total, delta) = (cfg.privacy.epsilon, cfg.privacy.delta);
    let noise_src = match cfg.seeds.noise {
        crate::config::NoiseSeed::Os => "ChaCha20 seeded from the OS CSPRNG".to_string(),
        crate::config::NoiseSeed::Fixed(x) => {
            format!("ChaCha20 from FIXED seed {x} (reproducible, NOT private)")
        }
    };
    let relation = "replace-one (one data row changed)".to_string();
    let n = lik.n_rows() as f64;
    let run = match kind {
        SamplerKind::Rwmh => {
            let settings = PenaltySettings {
                proposal: Proposal::Gaussian { scale },
                temperature,
            };
            let mut chain = Penalty::exact(prior, lik, settings, init).map_err(mcmc_err)?;
            let (trace, _) = segments(&mut chain, iterations, burn_in, &mut rng, &|_| Ok(None))?;
            Run {
                trace,
                eps: Vec::new(),
                ledger: Ledger::not_private("random-walk Metropolis on the raw data"),
                facts: Vec::new(),
            }
        }
        SamplerKind::DpPenalty => {
            let (acc, conv) = accounting(cfg);
            let settings = PenaltySettings {
                proposal: Proposal::GuidedRandomWalk { scale },
                temperature,
            };
            let privacy = PenaltyPrivacy {
                clip: s.ratio_clip.unwrap_or(5.0),
                tau: s.tau.unwrap_or(0.5),
                n_exponent: 0.5,
                epsilon: eps_total,
                delta,
                accounting: acc,
            };
            let mut chain = Penalty::private(
                prior,
                lik,
                settings,
                privacy,
                init,
                noise_rng(cfg.seeds.noise)?,
            )
            .map_err(mcmc_err)?;
            let allowed = chain.max_iterations().unwrap_or(0);
            let describe = |k: u64| Describe {
                accountant: "DP penalty, Gaussian noise on clipped log-ratio sums".into(),
                conversion: conv.into(),
                mechanism: format!(
                    "penalty algorithm (Yildirim & Ermiş 2019; thesis Theorems 6-7), clip {}, τ {}, {k} iterations (budget allows {allowed})",
                    privacy.clip, privacy.tau
                ),
            };
            run_private(
                &mut chain,
                iterations,
                burn_in,
                &mut rng,
                &|c| c.epsilon_spent(),
                &describe,
                before_noise,
            )?
            .into_run(relation, noise_src, n)
        }
        SamplerKind::DpBarker => {
            let settings = BarkerSettings {
                proposal: Proposal::Gaussian { scale },
                temperature,
            };
            let privacy = BarkerPrivacy {
                batch: s.batch.unwrap_or(1000),
                epsilon: eps_total,
                delta,
            };
            let mut chain = Barker::private(
                prior,
                lik,
                settings,
                privacy,
                init,
                noise_rng(cfg.seeds.noise)?,
            )
            .map_err(mcmc_err)?;
            let describe = |k: u64| Describe {
                accountant:
                    "RDP of subsampled Barker tests (Heikkilä et al. 2019; thesis Theorem 9)".into(),
                conversion: "RDP → (ε, δ)".into(),
                mechanism: format!("DP Barker, batch {}, {k} iterations", privacy.batch),
            };
            run_private(
                &mut chain,
                iterations,
                burn_in,
                &mut rng,
                &|c| c.epsilon_spent(),
                &describe,
                before_noise,
            )?
            .into_run(relation, noise_src, n)
        }
        SamplerKind::DpHmc => {
            let (acc, conv) = accounting(cfg);
            let settings = HmcSettings {
                step_size: s.step_size.unwrap_or(0.01),
                leapfrog_steps: s.leapfrog_steps.unwrap_or(10),
                inv_mass: match &s.inv_mass {
                    Some(v) if v.len() != d => {
                        bail!("sampler.inv_mass has {} values, θ has {d}", v.len())
                    }
                    Some(v) => v.clone(),
                    None => vec![1.0; d],
                },
                temperature,
            };
            let privacy = HmcPrivacy {
                ratio_clip: s.ratio_clip.unwrap_or(5.0),
                grad_clip: s.grad_clip.unwrap_or(5.0),
                tau_l: s.tau_l.unwrap_or(0.5),
                tau_g: s.tau_g.unwrap_or(0.5),
                epsilon: eps_total,
                delta,
                accounting: acc,
                charging: GradientCharging::Reuse,
            };
            let mut chain = Hmc::private(
                prior,
                lik,
                settings,
                privacy,
                init,
                noise_rng(cfg.seeds.noise)?,
            )
            .map_err(mcmc_err)?;
            let describe = |k: u64| Describe {
                accountant:
                    "DP HMC, Gaussian noise on clipped log-ratio and gradient sums (thesis §5)"
                        .into(),
                conversion: conv.into(),
                mechanism: format!(
                    "DP HMC, step {}, {} leapfrog steps, {k} iterations",
                    settings_step(s.step_size),
                    s.leapfrog_steps.unwrap_or(10)
                ),
            };
            run_private(
                &mut chain,
                iterations,
                burn_in,
                &mut rng,
                &|c| c.epsilon_spent(),
                &describe,
                before_noise,
            )?
            .into_run(relation, noise_src, n)
        }
        _ => bail!("{} is not an MCMC sampler", s.kind),
    };
    outcome(cfg, model, run)
}

/// How a private chain's ledger describes it.
struct Describe {
    accountant: String,
    conversion: String,
    mechanism: String,
}

/// A finished private chain.
struct PrivateRun {
    trace: Trace,
    eps: Vec<(f64, f64)>,
    k: u64,
    spent: (f64, f64),
    describe: Describe,
}

impl PrivateRun {
    fn into_run(self, neighbouring: String, noise: String, n: f64) -> Run {
        Run {
            trace: self.trace,
            eps: self.eps,
            ledger: Ledger {
                epsilon: self.spent.0,
                delta: self.spent.1,
                accountant: self.describe.accountant,
                conversion: self.describe.conversion,
                neighbouring,
                mechanism: self.describe.mechanism,
                noise,
                claim: None,
            },
            facts: vec![("iterations".into(), self.k as f64), ("n".into(), n)],
        }
    }
}

/// Caps a private chain at what its budget allows, runs it in segments (reading ε spent after
/// each) and returns the trace, the ε trajectory, the iterations run and the final (ε, δ).
fn run_private<S: Budgeted>(
    chain: &mut S,
    iterations: u64,
    burn_in: u64,
    rng: &mut SimStream,
    spent: &Spent<S>,
    describe: &dyn Fn(u64) -> Describe,
    before_noise: &mut dyn FnMut() -> Result<()>,
) -> Result<PrivateRun> {
    let k = cap(chain.limit(), iterations, burn_in)?;
    chain.cap(k);
    before_noise()?;
    let (trace, eps) = segments(chain, k, burn_in.min(k / 2), rng, spent)?;
    let last = spent(chain)
        .map_err(mcmc_err)?
        .context("private chain without a ledger")?;
    Ok(PrivateRun {
        trace,
        eps,
        k,
        spent: last,
        describe: describe(k),
    })
}

fn settings_step(s: Option<f64>) -> f64 {
    s.unwrap_or(0.01)
}

/// The iterations to run: the configured count, capped by the privacy budget.
fn cap(max: Option<u64>, iterations: u64, burn_in: u64) -> Result<u64> {
    let allowed = max.unwrap_or(iterations);
    let k = iterations.min(allowed);
    if k <= burn_in.min(k / 2) || k < 2 {
        bail!(
            "the privacy budget allows only {allowed} iterations; increase privacy.epsilon or \
             the noise multiplier"
        );
    }
    Ok(k)
}

fn outcome(cfg: &Config, model: &Model, r: Run) -> Result<Outcome> {
    let d = r.trace.dim.max(1);
    let draws = &r.trace.draws;
    let names = model.names();
    let kept = draws.len() / d;
    let mut facts = r.facts;
    facts.push(("acceptance_rate".into(), r.trace.acceptance_rate()));
    facts.push(("clip_fraction_nonprivate".into(), r.trace.clip_fraction()));
    facts.push(("kept_draws".into(), kept as f64));
    let mut diag_rows = Vec::new();
    for j in 0..d {
        let col: Vec<f64> = draws.chunks_exact(d).map(|x| x[j]).collect();
        // Two halves as two chains: split-R̂ and bulk ESS of the kept draws.
        let half = col.len() / 2;
        let (a, b) = col.split_at(half);
        let rhat = split_rhat(&[a, &b[..half.min(b.len())]]).unwrap_or(f64::NAN);
        let ess = ess_bulk(&[&col]).unwrap_or(f64::NAN);
        facts.push((format!("ess_bulk_{}", names[j]), ess));
        facts.push((format!("split_rhat_{}", names[j]), rhat));
        diag_rows.push(vec![j as f64, ess, rhat]);
    }
    let it: Vec<f64> = (0..kept)
        .map(|i| (i as u64 + r.trace.burn_in) as f64)
        .collect();
    let mut charts = vec![Chart {
        stem: "trace".into(),
        title: format!("{} trace (after burn-in)", cfg.sampler.kind),
        xlabel: "iteration".into(),
        ylabel: "θ".into(),
        series: (0..d)
            .map(|j| Series {
                label: names[j].clone(),
                x: it.clone(),
                y: draws.chunks_exact(d).map(|x| x[j]).collect(),
            })
            .collect(),
        log_y: false,
    }];
    if !r.eps.is_empty() {
        charts.push(Chart {
            stem: "epsilon-spent".into(),
            title: format!("ε spent (δ = {})", r.ledger.delta),
            xlabel: "iteration".into(),
            ylabel: "ε".into(),
            series: vec![
                Series {
                    label: "ε spent".into(),
                    x: r.eps.iter().map(|p| p.0).collect(),
                    y: r.eps.iter().map(|p| p.1).collect(),
                },
                Series {
                    label: "budget".into(),
                    x: vec![0.0, r.eps.last().map_or(0.0, |p| p.0)],
                    y: vec![cfg.privacy.epsilon; 2],
                },
            ],
            log_y: false,
        });
    }
    let noise: Vec<Vec<f64>> = r
        .trace
        .noise_sd
        .iter()
        .enumerate()
        .map(|(i, s)| vec![i as f64, *s])
        .collect();
    Ok(Outcome {
        model: model.name().into(),
        sampler: cfg.sampler.kind.clone(),
        names,
        samples: draws.clone(),
        weights: None,
        truth: model.truth(),
        ledger: r.ledger,
        facts,
        diagnostics: vec![
            Diagnostic {
                stem: "chain-diagnostics".into(),
                columns: vec!["parameter".into(), "ess_bulk".into(), "split_rhat".into()],
                rows: diag_rows,
            },
            Diagnostic {
                stem: "noise-sd".into(),
                columns: vec!["iteration".into(), "noise_sd".into()],
                rows: noise,
            },
        ],
        charts,
        reproduced: false,
        warnings: Vec::new(),
        prior_draws: None,
    })
}
