//! MCMC from the command line: turns `[sampler]` into a `dpinfer-mcmc` run (random-walk
//! Metropolis, DP penalty, DP Barker, DP HMC), runs it on the models with a per-row
//! likelihood (gaussian-mean, banana) and writes the trace, diagnostics and ε spent. The
//! library owns the samplers, their defaults, the budget and the run; this file only maps
//! config keys and writes results.

use std::path::Path;

use anyhow::{Result, bail};
use dpinfer::mcmc::McmcError;
use dpinfer::mcmc::budget::Accounting;
use dpinfer::mcmc::model::{BananaPriorGrad, GaussianPrior, PriorGradient};
use dpinfer::mcmc::run::{
    DpBarker, DpHmc, DpPenalty, Kernel, Run, RunSettings, Scale, Target, Walk, WalkKind,
};
use dpinfer::simulators::{RowGradient, RowLikelihood};

mod outcome;

use crate::config::{Config, SamplerKind};
use crate::model::Model;
use crate::private::{noise_label, noise_rng};
use crate::progress::Bar;
use crate::results::Outcome;

/// Names the config key behind a library error.
fn mcmc_err(e: McmcError) -> anyhow::Error {
    match e {
        McmcError::WrongLength { .. } => anyhow::anyhow!("sampler.{e}"),
        McmcError::InvalidSize { name, value } if name == "iterations" || name == "burn_in" => {
            anyhow::anyhow!("sampler.{name} = {value} must be positive and burn_in < iterations")
        }
        McmcError::BudgetExhausted { allowed } => anyhow::anyhow!(
            "the privacy budget allows only {allowed} iterations; increase privacy.epsilon or \
             the noise multiplier"
        ),
        e => anyhow::anyhow!("mcmc: {e}"),
    }
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
    let data = |e| anyhow::anyhow!("data: {e}");
    match model {
        Model::GaussianMean(m) => {
            let p = m.prior();
            let prior = GaussianPrior::new(1, p.mean(), p.sd()).map_err(mcmc_err)?;
            let lik = m.likelihood(obs).map_err(data)?;
            drive(cfg, model, prior, lik, &[p.mean()], before_noise)
        }
        Model::Banana(b) => {
            let lik = b.data(obs).map_err(data)?;
            let init = vec![0.0; b.settings().dim];
            drive(
                cfg,
                model,
                BananaPriorGrad::new(b),
                lik,
                &init,
                before_noise,
            )
        }
        _ => bail!(
            "model {} has no per-row likelihood; MCMC samplers need gaussian-mean or banana \
             (use an ABC sampler)",
            model.name()
        ),
    }
}

/// `dst = src` for every configured `src` (unset keys keep the library's default).
macro_rules! set {
    ($($dst:expr => $src:expr),+) => {$(
        if let Some(v) = &$src {
            $dst.clone_from(v);
        }
    )+};
}

/// `[sampler]` and `[privacy]` as a library kernel (unset keys keep the library's defaults).
fn kernel(cfg: &Config) -> Result<Kernel> {
    let s = &cfg.sampler;
    let walk = |kind| {
        let mut w = Walk::new(kind);
        set!(w.scale => s.proposal_scale.map(Scale::Uniform), w.temperature => s.temperature);
        set!(w.scale => s.proposal_scales.clone().map(Scale::PerCoordinate));
        w
    };
    let (epsilon, delta) = (cfg.privacy.epsilon, cfg.privacy.delta);
    let target = Target { epsilon, delta };
    let accounting = s.accounting.as_deref().and_then(Accounting::from_name);
    Ok(match cfg.kind()? {
        SamplerKind::Rwmh => Kernel::Rwmh(walk(WalkKind::Gaussian)),
        SamplerKind::DpPenalty => {
            let mut k = DpPenalty::new(target);
            k.walk = walk(WalkKind::Guided);
            set!(k.clip => s.ratio_clip, k.tau => s.tau, k.accounting => accounting);
            Kernel::DpPenalty(k)
        }
        SamplerKind::DpBarker => {
            let mut k = DpBarker::new(target);
            k.walk = walk(WalkKind::Gaussian);
            set!(k.batch => s.batch);
            Kernel::DpBarker(k)
        }
        SamplerKind::DpHmc => {
            let mut k = DpHmc::new(target);
            set!(k.step_size => s.step_size, k.leapfrog_steps => s.leapfrog_steps);
            set!(k.inv_mass => s.inv_mass.clone().map(Some), k.temperature => s.temperature);
            set!(k.ratio_clip => s.ratio_clip, k.grad_clip => s.grad_clip);
            set!(k.tau_l => s.tau_l, k.tau_g => s.tau_g, k.accounting => accounting);
            Kernel::DpHmc(k)
        }
        _ => bail!("{} is not an MCMC sampler", s.kind),
    })
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
    let (s, kernel) = (&cfg.sampler, kernel(cfg)?);
    let mut settings = RunSettings {
        seed: cfg.seeds.run,
        burn_in: s.burn_in,
        ..Default::default()
    };
    set!(settings.iterations => s.iterations);
    let private = kernel.is_private();
    let noise = if private {
        vec![noise_rng(cfg.seeds.noise)?]
    } else {
        Vec::new()
    };
    let n = lik.n_rows() as f64;
    let init = s.init.as_deref().unwrap_or(init);
    let run = Run::new(prior, lik, init, &kernel, &settings, noise).map_err(mcmc_err)?;
    if private {
        before_noise()?;
    }
    let pb = Bar(crate::progress::bar(
        run.iterations().iter().sum(),
        "sampling",
    ));
    let out = run.run(&pb).map_err(mcmc_err)?;
    pb.0.finish_and_clear();
    let ledger = outcome::ledger(&out, noise_label(cfg.seeds.noise));
    let facts = match out.budget {
        Some(_) => vec![
            ("iterations".into(), out.iterations[0] as f64),
            ("n".into(), n),
        ],
        None => Vec::new(),
    };
    Ok(outcome::outcome(cfg, model, out, ledger, facts))
}
