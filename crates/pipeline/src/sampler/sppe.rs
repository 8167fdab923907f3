//! `kind = "sppe"` (and, through the same table, `kind = "sple"`, see `super::sple`): the
//! neural sequential samplers of Xiong, Ju & Zhang on a privatized statistic
//! (`crate::neural`). Every key is optional: an unset key keeps
//! [`SequentialSettings::default`] (the library owns the defaults and the checks).

use dpinfer::simulators::qmc::Sampling;
use dpinfer_neural::{
    ChainSettings, FlowSettings, MafSettings, NsfSettings, SequentialSettings, SplineImpl,
    TrainSettings,
};
use serde::{Deserialize, Serialize};

/// `[sampler] kind = "sppe"` / `"sple"` (unset keys keep the library's defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Neural {
    /// Rounds R (default 10).
    pub rounds: Option<usize>,
    /// Simulations N per round (default 1000): each round is one batched public step.
    pub simulations: Option<usize>,
    /// Noise draws M per simulated statistic (default 8; a power of two with RQMC).
    pub noise_draws: Option<usize>,
    /// `"rqmc"` (scrambled Sobol, default) or `"mc"` (plain Monte Carlo).
    pub sampling: Option<String>,
    /// `"nsf"` (the paper's neural spline flow, default) or `"maf"`.
    pub flow: Option<String>,
    /// Flow layers (default: the flow's, 8 for nsf, 5 for maf).
    pub layers: Option<usize>,
    /// Hidden units (default 50).
    pub hidden: Option<usize>,
    /// Spline bins of the nsf (default 10).
    pub bins: Option<usize>,
    /// The nsf's spline implementation, a versioned setting (`dpinfer_neural::SplineImpl`):
    /// 1, the tensor spline (default: seeded results trained before version 2 reproduce), or
    /// 2, the fused spline (the same densities for the same weights, about 1.6× less CPU per
    /// atomic-loss epoch; trained weights differ in the last bits). Left out of the serialized
    /// config when unset, so configs without it fingerprint as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spline: Option<u32>,
    /// Minibatch rows (default 100).
    pub batch_size: Option<usize>,
    /// Adam's learning rate (default 5e-4).
    pub learning_rate: Option<f64>,
    /// Early-stopping patience in epochs (default 20).
    pub patience: Option<usize>,
    /// Epoch cap per round (default 1000).
    pub max_epochs: Option<usize>,
    /// Posterior draws in the results (default 1000).
    pub samples: Option<usize>,
    /// SPPE: atoms of the atomic loss (default 10).
    pub atoms: Option<usize>,
    /// SPLE: MCMC chains (default 4).
    pub chains: Option<usize>,
    /// SPLE: warm-up iterations per chain (default 400).
    pub warmup: Option<usize>,
    /// SPLE: thinning (default 4).
    pub thin: Option<usize>,
}

/// The SPLE-only keys (refused for SPPE) and the SPPE-only keys (refused for SPLE).
const SPLE_ONLY: &[&str] = &["chains", "warmup", "thin"];
const SPPE_ONLY: &[&str] = &["atoms"];

impl Neural {
    /// The keys that are set, by name.
    fn set_keys(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.atoms.is_some() {
            v.push("atoms");
        }
        if self.chains.is_some() {
            v.push("chains");
        }
        if self.warmup.is_some() {
            v.push("warmup");
        }
        if self.thin.is_some() {
            v.push("thin");
        }
        v
    }

    /// The library's settings for `kind` (`"sppe"` or `"sple"`) with the run seed `seed`:
    /// unset keys keep [`SequentialSettings::default`], and the library's checks run.
    ///
    /// # Errors
    /// A key of the other sampler, an unknown `sampling` or `flow`, a value the library
    /// refuses — each [`Error::Config`](crate::Error::Config) naming its `sampler.` key.
    pub fn settings(&self, kind: &str, seed: u64) -> crate::Result<SequentialSettings> {
        let other = if kind == "sppe" { SPLE_ONLY } else { SPPE_ONLY };
        if let Some(k) = self.set_keys().into_iter().find(|k| other.contains(k)) {
            return Err(crate::error::err!(
                key = format!("sampler.{k}");
                "sampler.{k} does not apply to {kind}"
            ));
        }
        let d = SequentialSettings::default();
        let sampling = match self.sampling.as_deref() {
            None | Some("rqmc") => Sampling::Rqmc,
            Some("mc") => Sampling::MonteCarlo,
            Some(s) => {
                return Err(crate::error::err!(
                    key = "sampler.sampling";
                    "sampler.sampling must be \"rqmc\" or \"mc\", got {s:?}"
                ));
            }
        };
        let flow = match self.flow.as_deref() {
            None | Some("nsf") => {
                let n = NsfSettings::default();
                let spline = match self.spline {
                    None => n.spline,
                    Some(v) => SplineImpl::try_from(v).map_err(|_| {
                        crate::error::err!(
                            key = "sampler.spline";
                            "sampler.spline must be 1 (tensor) or 2 (fused), got {v}"
                        )
                    })?,
                };
                FlowSettings::Nsf(NsfSettings {
                    layers: self.layers.unwrap_or(n.layers),
                    hidden: self.hidden.unwrap_or(n.hidden),
                    bins: self.bins.unwrap_or(n.bins),
                    spline,
                    ..n
                })
            }
            Some("maf") => {
                if self.bins.is_some() {
                    return Err(crate::error::err!(
                        key = "sampler.bins";
                        "sampler.bins belongs to the spline flow (sampler.flow = \"nsf\")"
                    ));
                }
                if self.spline.is_some() {
                    return Err(crate::error::err!(
                        key = "sampler.spline";
                        "sampler.spline belongs to the spline flow (sampler.flow = \"nsf\")"
                    ));
                }
                let m = MafSettings::default();
                FlowSettings::Maf(MafSettings {
                    layers: self.layers.unwrap_or(m.layers),
                    hidden: self.hidden.unwrap_or(m.hidden),
                    ..m
                })
            }
            Some(f) => {
                return Err(crate::error::err!(
                    key = "sampler.flow";
                    "sampler.flow must be \"nsf\" or \"maf\", got {f:?}"
                ));
            }
        };
        let t = TrainSettings::default();
        let c = ChainSettings::default();
        let settings = SequentialSettings {
            rounds: self.rounds.unwrap_or(d.rounds),
            simulations: self.simulations.unwrap_or(d.simulations),
            noise_draws: self.noise_draws.unwrap_or(d.noise_draws),
            sampling,
            flow,
            train: TrainSettings {
                batch_size: self.batch_size.unwrap_or(t.batch_size),
                learning_rate: self.learning_rate.unwrap_or(t.learning_rate),
                patience: self.patience.unwrap_or(t.patience),
                max_epochs: self.max_epochs.unwrap_or(t.max_epochs),
                ..t
            },
            atoms: self.atoms.unwrap_or(d.atoms),
            chains: ChainSettings {
                chains: self.chains.unwrap_or(c.chains),
                warmup: self.warmup.unwrap_or(c.warmup),
                thin: self.thin.unwrap_or(c.thin),
            },
            posterior_draws: self.samples.unwrap_or(d.posterior_draws),
            seed,
            ..d
        };
        settings
            .check()
            .map_err(|e| super::setting_error(&e, self))?;
        Ok(settings)
    }
}

/// SPPE or SPLE (`crate::neural`) on the released statistic, simulating its mechanism. The
/// library bounds every count of its settings (`SequentialSettings::check`).
impl super::Sequential for Neural {
    fn check(&self, kind: &str) -> crate::Result<()> {
        self.settings(kind, 0).map(|_| ())
    }

    fn run(&self, on: &super::SequentialRun<'_>) -> crate::Result<crate::results::Outcome> {
        let mech = on
            .mech
            .ok_or_else(|| {
                crate::error::err!(key = "privacy.release"; "privacy.release is required for sppe and sple")
            })?;
        let (cfg, model, dir) = (on.cfg, on.model, on.dir);
        crate::neural::run(cfg, model, on.target, mech, dir, on.threads, on.observer)
    }
}
