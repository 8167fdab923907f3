//! MCMC from the command line: turns `[sampler]` into a `dpinfer-mcmc` run (random-walk
//! Metropolis, DP penalty, DP Barker, DP HMC), runs it on the models with a per-row
//! likelihood (gaussian-mean, banana) and writes the trace, diagnostics and ε spent. The
//! library owns the samplers, their defaults, the budget and the run; this file only maps
//! config keys and writes results.

use std::path::Path;

use crate::error::{Result, bail};
use dpinfer::mcmc::model::{BananaPriorGrad, GaussianPrior, PriorGradient};
use dpinfer::mcmc::run::{Kernel, Run, Target};
use dpinfer::simulators::{RowGradient, RowLikelihood};

mod outcome;

use crate::config::Config;
use crate::model::Model;
use crate::observe::{McmcProgress, Observer};
use crate::private::{noise_label, noise_rng};
use crate::results::Outcome;
use crate::sampler::{Chain, setting_error};

/// Runs the configured MCMC sampler on the observed data. A private sampler calls
/// `before_noise` once its settings are checked and its iteration count fixed, right before
/// the chain draws its first noise (the caller marks its ledger there); `observer` hears the
/// chain's progress.
///
/// # Errors
/// Models without a likelihood, invalid settings, sampler failures, `before_noise`'s error.
pub fn run(
    cfg: &Config,
    model: &Model,
    obs: &[f64],
    _dir: &Path,
    before_noise: &mut dyn FnMut() -> Result<()>,
    observer: &dyn Observer,
) -> Result<Outcome> {
    let data = |e| crate::error::err!(Data, "data: {e}");
    match model {
        Model::GaussianMean(m) => {
            let p = m.prior();
            let prior = GaussianPrior::new(1, p.mean(), p.sd())
                .map_err(|e| setting_error(&e, &cfg.sampler))?;
            let lik = m.likelihood(obs).map_err(data)?;
            drive(cfg, model, prior, lik, &[p.mean()], before_noise, observer)
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
                observer,
            )
        }
        _ => bail!(
            "model {} has no per-row likelihood; MCMC samplers need gaussian-mean or banana \
             (use an ABC sampler)",
            model.name()
        ),
    }
}

/// `[sampler]` and `[privacy]` as a library kernel (unset keys keep the library's defaults)
/// and the chain keys.
fn kernel(cfg: &Config) -> Result<(Kernel, &Chain)> {
    let (epsilon, delta) = (cfg.privacy.epsilon, cfg.privacy.delta);
    let target = Target { epsilon, delta };
    let Some((chain, kernel)) = cfg.sampler.mcmc() else {
        bail!("{} is not an MCMC sampler", cfg.sampler.name());
    };
    Ok((kernel.kernel(target)?, chain))
}

fn drive<P, L>(
    cfg: &Config,
    model: &Model,
    prior: P,
    lik: L,
    init: &[f64],
    before_noise: &mut dyn FnMut() -> Result<()>,
    observer: &dyn Observer,
) -> Result<Outcome>
where
    P: PriorGradient + Clone,
    L: RowLikelihood + RowGradient + Clone,
{
    let (kernel, chain) = kernel(cfg)?;
    let settings = chain.settings(cfg.seeds.run);
    let private = kernel.is_private();
    let noise = if private {
        vec![noise_rng(cfg.seeds.noise)?]
    } else {
        Vec::new()
    };
    let n = lik.n_rows() as f64;
    let init = chain.init.as_deref().unwrap_or(init);
    let run = Run::new(prior, lik, init, &kernel, &settings, noise)
        .map_err(|e| setting_error(&e, &cfg.sampler))?;
    if private {
        before_noise()?;
    }
    observer.start("sampling", run.iterations().iter().sum());
    let out = run.run(&McmcProgress(observer));
    observer.finish();
    let out = out.map_err(|e| setting_error(&e, &cfg.sampler))?;
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
