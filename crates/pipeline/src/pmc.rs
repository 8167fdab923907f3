//! SMC-ABC in generations that shard: the files around the library's population Monte Carlo
//! with a fixed number of proposals per generation ([`dpinfer::abc::pmc`], Beaumont, Cornuet,
//! Marin & Robert 2009).
//!
//! Generation g's M rows are the library's pairs table of generation g (prior draws for
//! g = 0, kernel proposals from population g−1 otherwise), so `dpinfer simulate --generation
//! g --population POP` shards them and `merge` assembles them bit for bit; `smc-step` runs
//! [`pmc::select`] on the merged table and writes `population-genNNN.json`.
//!
//! # Privacy
//!
//! Like every SMC-ABC this post-processes its observation: **not** private on raw data.

use std::path::Path;

use crate::error::{Context, Result, bail, ensure, err};
use dpinfer::abc::pairs::PublicPairs;
use dpinfer::abc::pmc::{self, PmcKernel};
use dpinfer::math::Fnv1a;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::model::{Model, ModelPrior};
use crate::observe::Observer;
use crate::private::{Ledger, observed};
use crate::public::Public;
use crate::results::{Chart, Diagnostic, Outcome};
use dpinfer_ledger::files::Replace;
use dpinfer_ledger::write_atomic;
use dpinfer_plots::Series;

/// One generation's population file: the library's population (serialized field by field,
/// [`pmc::Population`] with abc's `serde` feature) and the hash of the table it came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Population {
    /// The population.
    #[serde(flatten)]
    pub population: pmc::Population,
    /// Hash of the table this population came from.
    pub table_hash: u64,
}

impl std::ops::Deref for Population {
    type Target = pmc::Population;

    fn deref(&self) -> &pmc::Population {
        &self.population
    }
}

impl Population {
    /// Reads a population file.
    ///
    /// # Errors
    /// I/O or malformed JSON.
    pub fn read(path: &Path) -> Result<Self> {
        let text = dpinfer_ledger::files::read_input(path, "population", None)?;
        let p: Self = serde_json::from_slice(&text)
            .with_context(|| format!("population {}", path.display()))?;
        p.check()
            .with_context(|| format!("population {}", path.display()))?;
        Ok(p)
    }

    /// Internal consistency ([`pmc::Population::validate`]).
    ///
    /// # Errors
    /// The first inconsistency found.
    pub fn check(&self) -> Result<()> {
        use dpinfer::abc::AbcError;
        match self.population.validate() {
            Ok(()) => Ok(()),
            Err(AbcError::InvalidParameter {
                name: "weights", ..
            }) => {
                bail!(Data, "weights must be finite and non-negative")
            }
            Err(AbcError::InvalidParameter {
                name: "weights (sum)",
                value,
            }) => bail!(Data, "weights sum to {value}, not 1"),
            Err(AbcError::InvalidParameter { name: "ess", .. }) => {
                bail!(
                    Data,
                    "stored ESS {} is not the ESS of the weights",
                    self.ess
                )
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Fingerprint of the whole population (mixed into the shard header's config hash), so an
    /// edited tolerance or table hash changes it as an edited particle does.
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv1a::new();
        h.write_f64s(&self.particles);
        h.write_f64s(&self.weights);
        h.write(&self.generation.to_le_bytes());
        h.write(&self.table_hash.to_le_bytes());
        h.write(&self.tolerance.to_le_bytes());
        h.write(&self.proposals.to_le_bytes());
        h.finish()
    }

    /// The file name of generation `g`'s population.
    #[must_use]
    pub fn file_name(generation: u32) -> String {
        format!("population-gen{generation:03}.json")
    }

    /// Writes it atomically into `dir`.
    ///
    /// # Errors
    /// I/O.
    pub fn write(&self, dir: &Path) -> Result<()> {
        Ok(write_atomic(
            &dir.join(Self::file_name(self.generation)),
            serde_json::to_string_pretty(self)?.as_bytes(),
            Replace::Owned,
        )?)
    }
}

/// Generation g's public step: the model and the kernel of population g−1.
///
/// # Errors
/// A missing population for g ≥ 1, a population of another dimension, a Dirichlet prior.
pub fn public_for(
    cfg: &Config,
    model: Model,
    generation: u32,
    population: Option<&Population>,
) -> Result<Public> {
    if matches!(model.base(), Model::UniformMixture(..)) {
        // The library would report 10 000 proposals outside the support; say why up front.
        bail!(
            "sharded SMC-ABC perturbs θ with a Gaussian kernel: the Dirichlet (simplex) prior of uniform-mixture is not supported"
        );
    }
    let mech = crate::release::mechanism(cfg, &model)?;
    let replica = mech.as_ref().map(|(_, r)| r.mechanism()).transpose()?;
    let mut public = Public::new(cfg, model)?;
    if let Some((_, r)) = &mech {
        // The replica's noise is in every row: its parameters (from ε and the release's
        // sensitivity) determine the table. Earlier tables, hashed without them, are still
        // accepted through `legacy_hash`.
        public.config_hash ^= crate::config::hash_json(r);
    }
    public.replica = replica;
    match (generation, population) {
        (0, _) => {}
        (g, None) => bail!(
            "generation {g} needs --population (the population of generation {})",
            g - 1
        ),
        (g, Some(p)) => {
            ensure!(
                p.generation + 1 == g,
                Data,
                "--population is generation {}, generation {g} needs {}",
                p.generation,
                g - 1
            );
            ensure!(
                p.dim == public.theta_dim(),
                Data,
                "population dimension {} ≠ θ dimension {}",
                p.dim,
                public.theta_dim()
            );
            let k = PmcKernel::new(p)
                .with_context(|| format!("population of generation {}", p.generation))?;
            public.config_hash ^= p.fingerprint();
            public.legacy_hash ^= p.fingerprint();
            public.kernel = Some(k);
        }
    }
    Ok(public)
}

/// The central step of generation g ([`pmc::select`]): keep the N nearest rows, weight them.
///
/// # Errors
/// A table of the wrong shape, N > M, degenerate weights.
pub fn step(
    cfg: &Config,
    public: &Public,
    rows: &[f64],
    obs: &[f64],
    generation: u32,
) -> Result<Population> {
    ensure!(
        generation == public.generation(),
        Internal,
        "internal: generation {generation} with the public step of generation {}",
        public.generation()
    );
    let pairs = PublicPairs::from_table(public.theta_dim(), public.summary_dim(), rows)
        .context("pairs table has the wrong row length")?;
    let n = settings(cfg)?.particles;
    let o = observed(cfg, public, obs)?;
    let p = pmc::select(
        &ModelPrior(&public.model),
        public.kernel.as_ref(),
        &pairs,
        o.discrepancy()?,
        n,
    )?;
    let mut h = Fnv1a::new();
    h.write_f64s(rows);
    Ok(Population {
        population: p,
        table_hash: h.finish(),
    })
}

/// `dpinfer run` for `smc-abc` with `sampler.pairs`: every generation in-process, exactly as
/// the sharded workflow would compute it; the population files go into `dir`, `observer`
/// hears each generation's tolerance and ESS.
///
/// # Errors
/// As [`public_for`] and [`step`].
pub fn run(
    cfg: &Config,
    model: &Model,
    obs: &[f64],
    dir: &Path,
    threads: usize,
    observer: &dyn Observer,
) -> Result<Outcome> {
    let settings = settings(cfg)?;
    let mut pop: Option<Population> = None;
    let mut hist: Vec<Population> = Vec::new();
    for g in 0..settings.generations {
        let public = public_for(cfg, model.clone(), g, pop.as_ref())?;
        let rows = public.rows(0, public.total, threads, &|_| {})?;
        let p = step(cfg, &public, &rows, obs, g)?;
        p.write(dir)?;
        // Continue from the file, exactly as a sharded run does.
        let p = Population::read(&dir.join(Population::file_name(g)))?;
        observer.note(&format!(
            "generation {g}: tolerance {:.6}, ESS {:.1}",
            p.tolerance, p.ess
        ));
        let done = settings.done_after(&p);
        hist.push(p.clone());
        pop = Some(p);
        if done {
            break;
        }
    }
    let last = pop.ok_or_else(|| err!(Internal, "no generation ran"))?;
    let x: Vec<f64> = hist.iter().map(|p| f64::from(p.generation)).collect();
    Ok(Outcome {
        model: model.name().into(),
        sampler: "smc-abc (sharded PMC)".into(),
        names: model.names(),
        samples: last.particles.clone(),
        weights: Some(last.weights.clone()),
        truth: model.truth(),
        ledger: Ledger::not_private("SMC-ABC (PMC) on the observed data as given"),
        facts: vec![
            ("generations".into(), hist.len() as f64),
            ("proposals_per_generation".into(), last.proposals as f64),
            ("final_tolerance".into(), last.tolerance),
        ],
        diagnostics: vec![Diagnostic {
            stem: "smc-generations".into(),
            columns: vec![
                "generation".into(),
                "tolerance".into(),
                "ess".into(),
                "proposals".into(),
            ],
            rows: hist
                .iter()
                .map(|p| {
                    vec![
                        f64::from(p.generation),
                        p.tolerance,
                        p.ess,
                        p.proposals as f64,
                    ]
                })
                .collect(),
        }],
        charts: vec![
            Chart {
                stem: "smc-tolerance".into(),
                title: "SMC-ABC tolerance per generation".into(),
                xlabel: "generation".into(),
                ylabel: "tolerance".into(),
                series: vec![Series {
                    label: "tolerance".into(),
                    x: x.clone(),
                    y: hist.iter().map(|p| p.tolerance).collect(),
                }],
                log_y: true,
            },
            Chart {
                stem: "smc-ess".into(),
                title: "SMC-ABC effective sample size".into(),
                xlabel: "generation".into(),
                ylabel: "ESS".into(),
                series: vec![Series {
                    label: "ESS".into(),
                    x,
                    y: hist.iter().map(|p| p.ess).collect(),
                }],
                log_y: false,
            },
        ],
        reproduced: false,
        warnings: Vec::new(),
        prior_draws: None,
    })
}

/// The library's PMC settings from `[sampler]` (the library owns the defaults and checks).
///
/// # Errors
/// Another sampler kind; settings the library refuses, named by their config key.
pub fn settings(cfg: &Config) -> Result<pmc::PmcSettings> {
    match &cfg.sampler {
        crate::sampler::SamplerConfig::SmcAbc(s) => pmc::PmcSettings::try_from(s),
        s => bail!("{} is not smc-abc", s.name()),
    }
}
