//! SMC-ABC in generations that shard: ABC population Monte Carlo (Beaumont, Cornuet, Marin &
//! Robert 2009) with a **fixed number M of proposals per generation**.
//!
//! Generation 0 draws its M rows from the prior; generation g ≥ 1 draws row j from the
//! stream (run seed, generation g, j): an ancestor from population g−1 by its weights, plus a
//! Gaussian perturbation with twice the weighted particle covariance (redrawn while outside
//! the prior's support). The rows are the same public (θ, summary) table as for the one-pass
//! samplers, so `dpinfer simulate --generation g --population POP` shards them and `merge`
//! assembles them bit for bit. The central step keeps the N = `particles` rows nearest the
//! observation (tolerance ε_g = the N-th smallest distance, i.e. the N/M quantile) and
//! weights them by `π(θ) / Σ_k w_k K(θ | θ_k)`.
//!
//! # Privacy
//!
//! Like every SMC-ABC this post-processes its observation: **not** private on raw data.
//!
//! # Limitation
//!
//! The Gaussian perturbation needs a prior with full-dimensional support; a Dirichlet prior
//! (the simplex) is rejected.

use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use dpinfer::abc::weights::{
    cholesky_in_place, effective_sample_size, mahalanobis_sq, normalize_log_weights,
    weighted_covariance, weighted_mean,
};
use dpinfer::math::logsumexp;
use dpinfer::simulators::{Prior, SimStream};
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::files::{Replace, write_atomic};
use crate::model::{Model, ModelPrior};
use crate::private::{Ledger, observed};
use crate::public::Public;
use crate::results::{Chart, Diagnostic, Outcome};
use crate::svg::Series;

/// One generation's population.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Population {
    /// Generation index.
    pub generation: u32,
    /// Tolerance ε_g (distance of the N-th nearest row).
    pub tolerance: f64,
    /// dim θ.
    pub dim: usize,
    /// Particles, row-major (N × dim).
    pub particles: Vec<f64>,
    /// Normalised importance weights.
    pub weights: Vec<f64>,
    /// Effective sample size of the weights.
    pub ess: f64,
    /// Proposals M of this generation.
    pub proposals: u64,
    /// Hash of the table this population came from.
    pub table_hash: u64,
}

impl Population {
    /// Reads a population file.
    ///
    /// # Errors
    /// I/O or malformed JSON.
    pub fn read(path: &Path) -> Result<Self> {
        let text = crate::files::read_input(path, "population", None)?;
        let p: Self = serde_json::from_slice(&text)
            .with_context(|| format!("population {}", path.display()))?;
        p.check()
            .with_context(|| format!("population {}", path.display()))?;
        Ok(p)
    }

    /// Internal consistency: shapes, finite particles, normalised non-negative weights whose
    /// ESS is the stored one, at least as many proposals as particles.
    ///
    /// # Errors
    /// The first inconsistency found.
    pub fn check(&self) -> Result<()> {
        let n = self.weights.len();
        ensure!(self.dim > 0 && n > 0, "empty population");
        ensure!(
            self.particles.len() == self.dim.saturating_mul(n),
            "{} particle values for {n} weights of dimension {}",
            self.particles.len(),
            self.dim
        );
        ensure!(
            self.particles.iter().all(|v| v.is_finite()),
            "a particle holds a non-finite value"
        );
        ensure!(
            self.weights.iter().all(|w| w.is_finite() && *w >= 0.0),
            "weights must be finite and non-negative"
        );
        let total: f64 = self.weights.iter().sum();
        ensure!((total - 1.0).abs() <= 1e-9, "weights sum to {total}, not 1");
        let ess = effective_sample_size(&self.weights)?;
        ensure!(
            (ess - self.ess).abs() <= 1e-9 * ess.max(1.0),
            "stored ESS {} ≠ {ess} recomputed from the weights",
            self.ess
        );
        ensure!(
            self.proposals >= n as u64 && self.tolerance >= 0.0,
            "{} proposals for {n} particles, tolerance {}",
            self.proposals,
            self.tolerance
        );
        Ok(())
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
        write_atomic(
            &dir.join(Self::file_name(self.generation)),
            serde_json::to_string_pretty(self)?.as_bytes(),
            Replace::Owned,
        )
    }
}

/// The perturbation kernel built from a population.
#[derive(Debug, Clone)]
pub struct Kernel {
    particles: Vec<f64>,
    log_w: Vec<f64>,
    cum_w: Vec<f64>,
    chol: Vec<f64>,
    dim: usize,
    /// Fingerprint of the population (mixed into the shard header's config hash).
    pub fingerprint: u64,
}

fn fnv(h: u64, bytes: &[u8]) -> u64 {
    let mut h = h;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Kernel {
    /// Gaussian kernel with covariance `2·Σ_w` around each particle (Beaumont et al. 2009).
    ///
    /// # Errors
    /// An empty or inconsistent population, or a degenerate covariance.
    pub fn new(p: &Population) -> Result<Self> {
        let d = p.dim;
        ensure!(d > 0 && !p.weights.is_empty(), "empty population");
        ensure!(
            p.particles.len() == d * p.weights.len(),
            "population has {} values for {} weights of dimension {d}",
            p.particles.len(),
            p.weights.len()
        );
        let mut mean = vec![0.0; d];
        weighted_mean(&p.particles, d, &p.weights, &mut mean)?;
        let mut cov = vec![0.0; d * d];
        weighted_covariance(&p.particles, d, &p.weights, &mean, &mut cov)?;
        // A (near-)degenerate population — e.g. copies of one particle — makes a kernel of
        // width ~1e-16: every proposal is its ancestor. Refused: each coordinate's sd must be
        // at least 1e-8 of its scale, and no coordinate (almost) a linear function of the
        // others (conditional variance ≥ 1e-10 of the marginal).
        let diag: Vec<f64> = (0..d).map(|i| cov[i * d + i]).collect();
        for (i, (&v, &m)) in diag.iter().zip(&mean).enumerate() {
            let scale = 1e-8 * m.abs().max(1.0);
            ensure!(
                v.is_finite() && v.sqrt() >= scale,
                "population of generation {} is degenerate: θ{} has weighted sd {:e} \
                 (its particles are (nearly) identical); the perturbation kernel would not move",
                p.generation,
                i + 1,
                v.max(0.0).sqrt()
            );
        }
        for c in &mut cov {
            *c *= 2.0;
        }
        cholesky_in_place(&mut cov, d).with_context(|| {
            format!(
                "population of generation {} has a degenerate covariance",
                p.generation
            )
        })?;
        for (i, &v) in diag.iter().enumerate() {
            let l = cov[i * d + i];
            ensure!(
                l * l >= 1e-10 * 2.0 * v,
                "population of generation {} has a degenerate covariance: θ{} is (almost) a \
                 linear function of the other coordinates",
                p.generation,
                i + 1
            );
        }
        let total: f64 = p.weights.iter().sum();
        let mut acc = 0.0;
        let cum_w = p
            .weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        let log_w = p.weights.iter().map(|w| (w / total).ln()).collect();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in p.particles.iter().chain(&p.weights) {
            h = fnv(h, &v.to_le_bytes());
        }
        h = fnv(h, &p.generation.to_le_bytes());
        // The whole population, so an edited tolerance or table hash changes the shards' config
        // hash as an edited particle does.
        h = fnv(h, &p.table_hash.to_le_bytes());
        h = fnv(h, &p.tolerance.to_le_bytes());
        h = fnv(h, &p.proposals.to_le_bytes());
        Ok(Self {
            particles: p.particles.clone(),
            log_w,
            cum_w,
            chol: cov,
            dim: d,
            fingerprint: h,
        })
    }

    /// Draws a proposal into `out`: ancestor by weight, plus `L z`.
    pub fn propose(&self, rng: &mut SimStream, out: &mut [f64]) {
        let u = dpinfer::simulators::dist::uniform01(rng);
        let k = self
            .cum_w
            .iter()
            .position(|&c| u < c)
            .unwrap_or(self.cum_w.len() - 1);
        let d = self.dim;
        let z: Vec<f64> = (0..d)
            .map(|_| dpinfer::simulators::dist::std_normal(rng))
            .collect();
        for (i, o) in out.iter_mut().enumerate().take(d) {
            let lz: f64 = (0..=i).map(|j| self.chol[i * d + j] * z[j]).sum();
            *o = self.particles[k * d + i] + lz;
        }
    }

    /// `ln Σ_k w_k exp(−½‖L⁻¹(θ − θ_k)‖²)` (the Gaussian's constant cancels in the weights).
    #[must_use]
    pub fn ln_mixture(&self, theta: &[f64]) -> f64 {
        let d = self.dim;
        let mut x = vec![0.0; d];
        let mut scratch = vec![0.0; d];
        let terms: Vec<f64> = self
            .particles
            .chunks_exact(d)
            .zip(&self.log_w)
            .map(|(p, lw)| {
                for i in 0..d {
                    x[i] = theta[i] - p[i];
                }
                lw - 0.5 * mahalanobis_sq(&self.chol, d, &x, &mut scratch)
            })
            .collect();
        logsumexp(&terms)
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
        bail!(
            "sharded SMC-ABC perturbs θ with a Gaussian kernel: the Dirichlet (simplex) prior of uniform-mixture is not supported"
        );
    }
    let replica = crate::release::mechanism(cfg, &model)?.map(|(_, r)| r);
    let mut public = Public::new(cfg, model)?;
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
                "--population is generation {}, generation {g} needs {}",
                p.generation,
                g - 1
            );
            ensure!(
                p.dim == public.theta_dim(),
                "population dimension {} ≠ θ dimension {}",
                p.dim,
                public.theta_dim()
            );
            let k = Kernel::new(p)?;
            public.config_hash ^= k.fingerprint;
            public.kernel = Some(k);
        }
    }
    Ok(public)
}

/// The central step of generation g: keep the N nearest rows, weight them.
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
    let d = public.theta_dim();
    let width = d + public.summary_dim();
    ensure!(
        rows.len().is_multiple_of(width) && !rows.is_empty(),
        "pairs table has the wrong row length"
    );
    let m = rows.len() / width;
    let n = cfg.sampler.particles.unwrap_or(500);
    ensure!(
        n > 0 && n <= m,
        "sampler.particles = {n} must be in 1..=pairs ({m})"
    );
    let o = observed(cfg, public, obs)?;
    let mut idx: Vec<(f64, usize)> = rows
        .chunks_exact(width)
        .enumerate()
        .map(|(i, r)| {
            let r = o.distance(&r[d..]);
            (if r.is_nan() { f64::INFINITY } else { r }, i)
        })
        .collect();
    idx.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let kept = &idx[..n];
    let tolerance = kept[n - 1].0;
    let particles: Vec<f64> = kept
        .iter()
        .flat_map(|&(_, i)| rows[i * width..i * width + d].to_vec())
        .collect();
    let prior = ModelPrior(&public.model);
    let log_w: Vec<f64> = match &public.kernel {
        None => vec![0.0; n],
        Some(k) => particles
            .chunks_exact(d)
            .map(|t| prior.ln_density(t) - k.ln_mixture(t))
            .collect(),
    };
    let mut weights = vec![0.0; n];
    normalize_log_weights(&log_w, &mut weights)?;
    let ess = effective_sample_size(&weights)?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in rows {
        h = fnv(h, &v.to_le_bytes());
    }
    Ok(Population {
        generation,
        tolerance,
        dim: d,
        particles,
        weights,
        ess,
        proposals: m as u64,
        table_hash: h,
    })
}

/// `dpinfer run` for `smc-abc` with `sampler.pairs`: every generation in-process, exactly as
/// the sharded workflow would compute it; the population files go into `dir`.
///
/// # Errors
/// As [`public_for`] and [`step`].
pub fn run(
    cfg: &Config,
    model: &Model,
    obs: &[f64],
    dir: &Path,
    threads: usize,
) -> Result<Outcome> {
    let generations = cfg.sampler.generations.unwrap_or(5).max(1);
    let final_tol = cfg.sampler.final_tolerance.unwrap_or(0.0);
    let mut pop: Option<Population> = None;
    let mut hist: Vec<Population> = Vec::new();
    for g in 0..generations as u32 {
        let public = public_for(cfg, model.clone(), g, pop.as_ref())?;
        let rows = public.rows(g, 0, public.total, threads, &|_| {})?;
        let p = step(cfg, &public, &rows, obs, g)?;
        p.write(dir)?;
        // Continue from the file, exactly as a sharded run does.
        let p = Population::read(&dir.join(Population::file_name(g)))?;
        crate::errln!(
            "generation {g}: tolerance {:.6}, ESS {:.1}",
            p.tolerance,
            p.ess
        );
        let done = p.tolerance <= final_tol;
        hist.push(p.clone());
        pop = Some(p);
        if done {
            break;
        }
    }
    let last = pop.context("no generation ran")?;
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

/// Draws row `j`'s θ from the prior (generation 0) or the kernel (redrawn while outside the
/// prior's support).
///
/// # Errors
/// A failing prior draw, or 10 000 kernel proposals outside the support.
pub(crate) fn draw_theta(public: &Public, rng: &mut SimStream, th: &mut [f64]) -> Result<()> {
    let prior = ModelPrior(&public.model);
    match &public.kernel {
        None => prior
            .sample(rng, th)
            .map_err(|e| anyhow::anyhow!("prior draw: {e}")),
        Some(k) => {
            for _ in 0..10_000 {
                k.propose(rng, th);
                if prior.in_support(th) {
                    return Ok(());
                }
            }
            bail!("10 000 consecutive kernel proposals fell outside the prior's support")
        }
    }
}
