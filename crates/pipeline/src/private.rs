//! The data owner's private pass over the public pairs: rejection (non-private reference),
//! SVT-ABC, soft-ABC and Gaussian rejection ABCDP, with a restart-safe ledger.
//!
//! # Restart safety
//!
//! Privacy noise is drawn at most once per (pairs, observed data, settings). Before the first
//! noise draw the step writes `private-step.json` with status `started` and the input's
//! fingerprint (fsynced); after the release it writes `release.json` and marks the ledger
//! `released` with the release's checksum. A second invocation on the same input
//! **reproduces the stored release** without drawing noise; one that finds a `started`
//! ledger (a crash after noise may have been drawn) or a ledger of a different input
//! **refuses** — drawing again would spend the budget twice.
//!
//! All of it runs under the results folder's exclusive OS lock ([`DirLock`]), so concurrent
//! invocations on one folder are serialised: one draws, the others then reproduce. Each
//! ledger write is durable (unique temporary file, fsync, rename, fsync of the folder) before
//! the next step. On reproduction the privacy claim is recomputed from the config and the
//! stored ledger must equal it; the CRC-32 protects against accidents, an optional
//! HMAC-SHA-256 ([`dpinfer_ledger::mac`]) against a party with write access but without the key.
//! The ledger itself (lock, once-only protocol, fingerprint) is `dpinfer-ledger`'s.

use crate::error::{Context, Result, bail};
use dpinfer::abc::discrepancy::{ClippedL2, Discrepancy, Euclidean};
use dpinfer::abc::pairs::PublicPairs;
use dpinfer::abc::rejection::nearest;
use dpinfer::distances::{
    AllowanceVersion, ClippedWeightedL2, KernelVersion, RffReference, Rows, Sensitivity,
};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::config::{Config, NoiseSeed};
use crate::declared::DeclaredSummary;
use crate::public::Public;
use crate::sampler::{Calibration, LibraryPass, SamplerConfig};
use dpinfer_ledger::files::DirLock;

pub use dpinfer_ledger::{Claimed, Ledger};

/// [`dpinfer_ledger::guarded`] for a release closure that returns this crate's [`Error`](crate::Error)
/// (given back as itself, not wrapped in the ledger's `Caller`).
///
/// # Errors
/// As the library's.
pub fn guarded<T, F>(lock: &DirLock, fp: &str, claim: &Ledger, release: F) -> Result<(T, bool)>
where
    T: Serialize + serde::de::DeserializeOwned + Claimed,
    F: FnOnce() -> Result<T>,
{
    dpinfer_ledger::guarded(lock, fp, claim, release).map_err(|e| match e {
        // The release's own error comes back as itself, its variant intact.
        dpinfer_ledger::Error::Caller {
            writing: None,
            source,
        } => match source.downcast::<crate::Error>() {
            Ok(e) => *e,
            Err(source) => dpinfer_ledger::Error::Caller {
                writing: None,
                source,
            }
            .into(),
        },
        e => e.into(),
    })
}

/// What a private pass releases: (weighted) θ samples and the ledger.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Release {
    /// Sampler kind.
    pub sampler: String,
    /// dim θ.
    pub dim: usize,
    /// Released θ, row-major.
    pub samples: Vec<f64>,
    /// Normalised weights (soft-ABC), else none.
    pub weights: Option<Vec<f64>>,
    /// Privacy ledger.
    pub ledger: Ledger,
    /// Sampler facts (noise scales, counts).
    pub facts: Vec<(String, f64)>,
}

/// Fingerprint of the private step's whole input (pairs, observed data, and the settings
/// that shape the release), [`dpinfer_ledger::fingerprint`].
///
/// # Errors
/// Settings that cannot be serialised (never silently left out).
pub(crate) fn fingerprint(cfg: &Config, pairs: &[f64], obs: &[f64]) -> Result<String> {
    let settings = (
        &cfg.sampler,
        &cfg.privacy,
        &cfg.distance,
        &cfg.model,
        cfg.seeds.noise,
    );
    Ok(dpinfer_ledger::fingerprint(pairs, obs, &settings)?.into())
}

/// Marks a DP MCMC run's once-only ledger `started` ([`dpinfer_ledger::once_start`]): a
/// chain's output cannot be reproduced without running it, so any rerun is refused.
///
/// # Errors
/// A folder that already holds a private release, I/O.
pub fn once_start(lock: &DirLock, fp: &str) -> Result<()> {
    Ok(dpinfer_ledger::once_start(lock, fp, "MCMC")?)
}

/// Marks a [`once_start`] release `released` ([`dpinfer_ledger::once_done`]).
///
/// # Errors
/// I/O.
pub fn once_done(lock: &DirLock, fp: &str) -> Result<()> {
    Ok(dpinfer_ledger::once_done(lock, fp)?)
}

/// Builds the noise generator: ChaCha20 seeded from the OS CSPRNG, or from a fixed seed.
///
/// # Errors
/// OS entropy failure.
pub fn noise_rng(seed: NoiseSeed) -> Result<chacha20::ChaCha20Rng> {
    match seed {
        NoiseSeed::Os => chacha20::ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng)
            .map_err(|e| crate::error::err!(Entropy, "OS entropy unavailable: {e}")),
        NoiseSeed::Fixed(s) => Ok(chacha20::ChaCha20Rng::seed_from_u64(s)),
    }
}

pub(crate) fn noise_label(seed: NoiseSeed) -> String {
    match seed {
        NoiseSeed::Os => "ChaCha20 seeded from the OS CSPRNG".into(),
        NoiseSeed::Fixed(s) => format!("ChaCha20 from FIXED seed {s} (reproducible, NOT private)"),
    }
}

/// The observed side of the distance and its sensitivity.
#[derive(Debug, Clone)]
pub struct Observed {
    /// Observed summary (RFF embedding, or the data itself for l2).
    pub summary: Vec<f64>,
    /// Δ of the (clipped) distance, with the neighbouring relations it holds for (the claim
    /// states [`Sensitivity::relation`]).
    pub sensitivity: Sensitivity,
    /// Upper bound of the distance (default clip).
    pub bound: f64,
    /// Weights of the l2 distance.
    pub weights: Option<Vec<f64>>,
    /// Which data sets the sensitivity compares (for the mechanism description).
    pub scope: &'static str,
    /// The random-feature map's kernel version (`None` for l2); a version other than 1 is
    /// named in the ledger's mechanism line.
    pub kernel_version: Option<KernelVersion>,
    /// The version of the rounding allowance in [`Observed::sensitivity`] (`None` for l2); a
    /// version other than 1 is named in the ledger's mechanism line.
    pub allowance_version: Option<AllowanceVersion>,
    /// Independent data sets in `summary` (`model.datasets`, l2 only): the distance is the
    /// mean of the per-data-set clipped distances, `weights` apply to each data set.
    pub datasets: usize,
}

impl Observed {
    /// ρ(summary, observed) as the library's batched discrepancy: Euclidean between RFF
    /// embeddings, or the clipped weighted L2 (the passes compute it a block of pairs at a
    /// time, on all cores).
    ///
    /// # Errors
    /// Weights or an observed summary the distance rejects (checked when this was built).
    pub fn discrepancy(&self) -> Result<ObservedDistance<'_>> {
        Ok(match &self.weights {
            None => ObservedDistance::Euclidean(Euclidean::new(&self.summary)?),
            Some(w) if self.datasets > 1 => {
                let l2 = ClippedWeightedL2::new(w, self.bound)?;
                let observed = Rows::new(&self.summary, w.len())?;
                // The library's checks of the pairing, once: n rows of the summary's width.
                l2.mean_distance(observed, observed)?;
                ObservedDistance::MeanClippedL2 { l2, observed }
            }
            Some(w) => ObservedDistance::ClippedL2(ClippedL2::new(
                ClippedWeightedL2::new(w, self.bound)?,
                &self.summary,
            )?),
        })
    }
}

/// The discrepancy of an [`Observed`] summary.
#[derive(Debug, Clone, Copy)]
pub enum ObservedDistance<'a> {
    /// Euclidean between RFF mean embeddings (the RFF MMD).
    Euclidean(Euclidean<'a>),
    /// Clipped weighted L2 between summaries.
    ClippedL2(ClippedL2<'a>),
    /// `(1/n) Σ_j min(d_w(s_j, s*_j), C)` over `n` data sets (`model.datasets`): simulated
    /// data set `j` against observed data set `j`
    /// ([`ClippedWeightedL2::mean_distance`], sensitivity C/n).
    MeanClippedL2 {
        /// The clipped distance of one data set.
        l2: ClippedWeightedL2<'a>,
        /// The `n` observed data sets, one per row.
        observed: Rows<'a>,
    },
}

impl Discrepancy for ObservedDistance<'_> {
    fn distance(&self, s: &[f64]) -> f64 {
        match self {
            Self::Euclidean(d) => d.distance(s),
            Self::ClippedL2(d) => d.distance(s),
            // A simulated output of another length reads as +∞, as in `ClippedL2`.
            Self::MeanClippedL2 { l2, observed } => Rows::new(s, observed.dim())
                .and_then(|sim| {
                    if sim.rows() == observed.rows() {
                        l2.mean_distance(*observed, sim)
                    } else {
                        Ok(f64::INFINITY)
                    }
                })
                .unwrap_or(f64::INFINITY),
        }
    }

    fn distances(&self, outputs: &[f64], width: usize, out: &mut [f64]) {
        match self {
            Self::Euclidean(d) => d.distances(outputs, width, out),
            Self::ClippedL2(d) => d.distances(outputs, width, out),
            Self::MeanClippedL2 { .. } => {
                use rayon::prelude::*;
                let rows = outputs
                    .len()
                    .checked_div(width)
                    .map_or(0, |r| r.min(out.len()));
                let (done, rest) = out.split_at_mut(rows);
                rest.fill(f64::INFINITY);
                done.par_iter_mut()
                    .zip(outputs.par_chunks_exact(width.max(1)))
                    .for_each(|(o, y)| *o = self.distance(y));
            }
        }
    }
}

/// The observed summary and the distance's sensitivity for this config.
///
/// # Errors
/// Observed data that do not fit the model or the distance settings.
pub fn observed(cfg: &Config, public: &Public, obs: &[f64]) -> Result<Observed> {
    match public.features()? {
        Some(f) => {
            let rd = public.model.row_dim();
            let allowance = match &cfg.distance {
                crate::config::DistanceConfig::RffMmd(d) => d.allowance_version()?,
                crate::config::DistanceConfig::L2(_) => AllowanceVersion::V1,
            };
            let r = RffReference::new(f, Rows::new(obs, rd)?)?.with_allowance_version(allowance);
            Ok(Observed {
                summary: r.embedding().to_vec(),
                sensitivity: r.sensitivity_for(public.pseudo_rows()),
                bound: 2.0,
                weights: None,
                scope: "RFF MMD, one observation of Y* replaced (Lemma 1)",
                kernel_version: Some(f.kernel_version()),
                allowance_version: Some(allowance),
                datasets: 1,
            })
        }
        None => {
            let dim = public.summary_dim();
            if obs.len() != dim {
                bail!(
                    Data,
                    "observed data have {} values, the model's summary has {dim}",
                    obs.len()
                );
            }
            // `model.datasets` = n: the summary is n data sets of `each` values, weighted alike.
            let n = public.model.datasets();
            let each = dim / n.max(1);
            let w = cfg
                .distance
                .weights()
                .map_or_else(|| vec![1.0; each], <[f64]>::to_vec);
            if w.len() != each {
                let per = if n > 1 { " per data set" } else { "" };
                bail!(
                    key = "distance.weights"; "distance.weights has {} entries, the summary has {each}{per}",
                    w.len()
                );
            }
            let clip = cfg.distance.clip().unwrap_or(f64::MAX);
            let d = ClippedWeightedL2::new(&w, clip)?;
            if n > 1 {
                // ABCDP §6.3: the mean of n per-data-set clipped distances; replacing one
                // whole observed data set moves one term within [0, C] (Theorem 1's Δ = C/n).
                return Ok(Observed {
                    summary: obs.to_vec(),
                    sensitivity: d.mean_sensitivity(n)?,
                    bound: clip,
                    weights: Some(w),
                    scope: "clipped L2 averaged over the model.datasets = n observed data sets, \
                            Δ = C/n, one whole data set replaced (ABCDP §6.3)",
                    kernel_version: None,
                    allowance_version: None,
                    datasets: n,
                });
            }
            // A declared summary (`[model.summary]`) may justify a smaller Δ than C; it carries
            // its relation and whether it is the user's word, and its label (proven, or
            // USER-DECLARED) goes into the ledger.
            let (sensitivity, scope) = match public.model.summary_sensitivity(&w, clip)? {
                Some(s) => (s, DeclaredSummary::ledger_label(&s)),
                // Δ = C bounds the clipped distance between any two data sets.
                None => (
                    d.sensitivity(),
                    "clipped L2, Δ = C for any pair of data sets",
                ),
            };
            Ok(Observed {
                summary: obs.to_vec(),
                sensitivity,
                bound: clip,
                weights: Some(w),
                scope,
                kernel_version: None,
                allowance_version: None,
                datasets: 1,
            })
        }
    }
}

/// Runs the private pass (or reproduces the stored release) into the locked folder.
///
/// Returns the release and whether it was reproduced from a previous invocation.
///
/// # Errors
/// Invalid settings, a refused restart, I/O.
pub fn private_step(
    cfg: &Config,
    public: &Public,
    pairs: &[f64],
    obs: &[f64],
    lock: &DirLock,
) -> Result<(Release, bool)> {
    let kind = cfg.kind();
    if !kind.uses_pairs() {
        bail!(
            "sampler {} has no pairs-based private step (use `dpinfer run`)",
            cfg.sampler.name()
        );
    }
    let fp = fingerprint(cfg, pairs, obs)?;
    let pp = PublicPairs::from_table(public.theta_dim(), public.summary_dim(), pairs)
        .with_context(|| {
            format!(
                "pairs table does not have rows of θ ({}) + summary ({}) values",
                public.theta_dim(),
                public.summary_dim()
            )
        })?;
    let o = observed(cfg, public, obs)?;
    let pass = Pass::new(cfg, &pp, o.discrepancy()?, &o)?;
    let claim = pass.ledger(cfg)?;
    guarded(lock, &fp, &claim, || {
        pass.release(cfg, &pp, &o, claim.clone())
    })
}

/// The pass of `cfg` over `pp` on the data `obs`, its noise from `cfg.seeds.noise`, without
/// the ledger and its folder: a calibration replicate's simulated release
/// ([`crate::calibrate`]: synthetic data, a public seed derived from the replicate's stream),
/// never a release of private data.
///
/// # Errors
/// As [`private_step`]'s checks.
pub(crate) fn simulated_release(
    cfg: &Config,
    public: &Public,
    pp: &PublicPairs,
    obs: &[f64],
) -> Result<Release> {
    if !matches!(cfg.seeds.noise, NoiseSeed::Fixed(_)) {
        bail!(
            Internal,
            "internal: a simulated release draws from a fixed public seed, never the OS"
        );
    }
    let o = observed(cfg, public, obs)?;
    let pass = Pass::new(cfg, pp, o.discrepancy()?, &o)?;
    let claim = pass.ledger(cfg)?;
    pass.release(cfg, pp, &o, claim)
}

impl Claimed for Release {
    fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

/// A pass over the pairs table, built and checked, its claim known, no noise drawn yet.
enum Pass<'a> {
    /// Nearest-k rejection (not private).
    Rejection {
        /// Rows kept.
        k: usize,
        /// The table.
        pairs: &'a PublicPairs,
        /// The distance.
        dist: ObservedDistance<'a>,
    },
    /// A private pass ([`PairsPass`]: SVT-ABC, soft-ABC, Gaussian rejection ABCDP, …), its
    /// mechanism's description for the ledger, and the ledger's neighbouring line when the
    /// sensitivity is the user's declaration (its `USER-DECLARED …` label).
    Private(Box<LibraryPass<'a>>, String, Option<&'static str>),
}

impl<'a> Pass<'a> {
    /// Turns the config into the library's settings and builds the pass over `pp` (every
    /// check of the real pass).
    fn new(
        cfg: &Config,
        pp: &'a PublicPairs,
        dist: ObservedDistance<'a>,
        o: &Observed,
    ) -> Result<Self> {
        let eps = cfg.privacy.epsilon;
        let cal = Calibration {
            epsilon: eps,
            delta: cfg.privacy.delta,
            sensitivity: o.sensitivity,
            clip: clip(cfg, o),
        };
        let pass = match (&cfg.sampler, cfg.sampler.pairs_pass()) {
            (SamplerConfig::Rejection(s), _) => Self::Rejection {
                k: s.k(pp.len())?,
                pairs: pp,
                dist,
            },
            (_, Some(p)) => {
                let mut mechanism = p.mechanism(o.scope);
                // Version 1 leaves the line as before, so stored claims still match.
                if let Some(v) = o.kernel_version.filter(|v| *v != KernelVersion::V1) {
                    mechanism.push_str(&format!(
                        "; random features of kernel version {}",
                        v.number()
                    ));
                }
                if let Some(v) = o.allowance_version.filter(|v| *v != AllowanceVersion::V1) {
                    mechanism.push_str(&format!(
                        "; rounding allowance version {} (Δ = 2/n + a bound linear in u·n)",
                        v.number()
                    ));
                }
                // A user-declared sensitivity's scope is its `USER-DECLARED …` label.
                let declared = o.sensitivity.is_user_declared().then_some(o.scope);
                Self::Private(p.build(pp, dist, cal)?, mechanism, declared)
            }
            (s, None) => bail!("sampler {} is not a pairs-based sampler", s.name()),
        };
        let claim = pass.ledger(cfg)?;
        if cfg.kind().is_private() && !within_budget(claim.epsilon, eps) {
            bail!(
                Internal,
                "internal: the pass would charge ε = {} > budget {eps}; nothing drawn",
                claim.epsilon
            );
        }
        Ok(pass)
    }

    /// The pass's complete privacy claim (known before any noise), from the library.
    fn ledger(&self, cfg: &Config) -> Result<Ledger> {
        Ok(match self {
            Self::Rejection { .. } => Ledger::not_private("rejection ABC: k nearest pairs"),
            Self::Private(pass, mechanism, declared) => {
                let mut ledger = Ledger::from_claim(
                    pass.claim()?,
                    mechanism.clone(),
                    noise_label(cfg.seeds.noise),
                );
                // A sensitivity dpinfer cannot check says so where the relation is read: the
                // `neighbouring` field (printed, in summary.json and the ledger), whose text
                // starts with "USER-DECLARED" and names the same relation as the claim.
                if let Some(label) = declared {
                    ledger.neighbouring = (*label).to_string();
                }
                ledger
            }
        })
    }

    /// Draws the noise (if any) and returns the release carrying `ledger`.
    fn release(
        self,
        cfg: &Config,
        pp: &PublicPairs,
        o: &Observed,
        ledger: Ledger,
    ) -> Result<Release> {
        let d = pp.theta_dim();
        let mut facts = vec![("pairs".to_string(), pp.len() as f64)];
        // A sensitivity is a privacy fact: a non-private pass has none to report (without a
        // clip its placeholder is f64::MAX, which says nothing true). An unclipped distance
        // (clip f64::MAX) has no clip to report either.
        if !matches!(self, Self::Rejection { .. }) {
            facts.push(("sensitivity".to_string(), o.sensitivity.value()));
        }
        let c = clip(cfg, o);
        if c < f64::MAX {
            facts.push(("clip".to_string(), c));
        }
        let (samples, weights) = match self {
            Self::Rejection { k, pairs, dist } => {
                let near = nearest(pairs, dist, k)?;
                facts.push(("tolerance".into(), near.tolerance));
                facts.push(("accepted".into(), k as f64));
                (near.thetas(pairs), None)
            }
            Self::Private(mut pass, _, _) => {
                pass.run(&mut noise_rng(cfg.seeds.noise)?)?;
                let out = pass.release()?;
                facts.extend(out.facts.into_iter().map(|(k, v)| (k.to_string(), v)));
                (out.samples, out.weights)
            }
        };
        Ok(Release {
            sampler: cfg.sampler.name().into(),
            dim: d,
            samples,
            weights,
            ledger,
            facts,
        })
    }
}

/// `true` if a claimed ε fits `budget` (NaN never does), exactly: the accountants round a
/// mechanism's cost up to the next `f64` and no further (`dpinfer_accountants::curves::
/// mul_div_up`, exact pure composition), so a pass calibrated to spend its whole budget is
/// claimed at most at the budget, and anything above it is refused before any noise is drawn.
#[must_use]
pub fn within_budget(epsilon: f64, budget: f64) -> bool {
    epsilon <= budget
}

/// The distance's clipping bound: `sampler.clip`, at most the distance's own bound.
fn clip(cfg: &Config, o: &Observed) -> f64 {
    cfg.sampler.clip().unwrap_or(o.bound).min(o.bound)
}

/// Largest dry-run table (values) [`check`] builds; bigger runs are checked after simulation
/// (still before any noise is drawn).
const CHECK_LIMIT: usize = 1 << 24;

/// Validates the private pass (observed data against the model, distance, sensitivity and
/// sampler calibration) before the public step spends any simulation: the pass is built over
/// a placeholder table of the same size (every constructor check), and dropped — no noise is
/// drawn. A set ledger key ([`dpinfer_ledger::mac::Key::from_env`]) must be usable too (the
/// ledger loads it again before it marks the release started).
///
/// # Errors
/// Whatever the real pass would reject; an unusable ledger key.
pub fn check(cfg: &Config, public: &Public, obs: &[f64]) -> Result<()> {
    dpinfer_ledger::mac::Key::from_env()?;
    let width = public.theta_dim() + public.summary_dim();
    let t = usize::try_from(public.total)?;
    let Some(len) = t.checked_mul(width) else {
        bail!(
            OutOfMemory,
            "{t} pairs of {width} values do not fit in memory"
        );
    };
    let o = observed(cfg, public, obs)?;
    if len > CHECK_LIMIT {
        return Ok(());
    }
    let pp = PublicPairs::from_table(public.theta_dim(), public.summary_dim(), &vec![0.0; len])?;
    Pass::new(cfg, &pp, o.discrepancy()?, &o).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rounding-allowance version that sized the sensitivity is named on the ledger's
    /// mechanism line when it is not 1 (version 1 leaves the line as before, so stored claims
    /// still match), next to a kernel version other than 1.
    #[test]
    fn the_ledger_names_an_allowance_version_other_than_1() {
        use dpinfer::distances::Relations;
        let pp =
            PublicPairs::from_parts(1, 1, (0..50).map(f64::from).collect(), vec![0.3; 50]).unwrap();
        let text = "[model]\nname = \"gaussian-mean\"\n[sampler]\nkind = \"gaussian-abc\"\n\
                    epsilon_abc = 0.1\nclip = 0.3\npairs = 50\n[privacy]\nepsilon = 1.0\n";
        let cfg = Config::parse(text, std::path::Path::new(".")).unwrap();
        let mechanism = |kernel, allowance| {
            let o = Observed {
                summary: vec![0.0],
                sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
                bound: 1.0,
                weights: None,
                scope: "test",
                kernel_version: Some(kernel),
                allowance_version: Some(allowance),
                datasets: 1,
            };
            let pass = Pass::new(&cfg, &pp, o.discrepancy().unwrap(), &o).unwrap();
            pass.ledger(&cfg).unwrap().mechanism
        };
        let v1 = mechanism(KernelVersion::V1, AllowanceVersion::V1);
        assert!(!v1.contains("version"), "{v1}");
        let v2 = mechanism(KernelVersion::V1, AllowanceVersion::V2);
        assert!(
            v2.starts_with(&v1) && v2.contains("rounding allowance version 2"),
            "{v2}"
        );
        let both = mechanism(KernelVersion::V2, AllowanceVersion::V2);
        assert!(
            both.contains("kernel version 2") && both.contains("rounding allowance version 2"),
            "{both}"
        );
    }

    /// A private pass claims under the relation its distance sensitivity holds for. Before
    /// issue 27 the soft-ABC pass was built under a hard-coded replace-one, so a summary
    /// sensitivity declared for add/remove only (`[model.summary] relation = "add-remove"`)
    /// went into the ledger as a replace-one claim; SVT and Gaussian read the relation from a
    /// comparison of the declared label.
    #[test]
    fn every_private_pass_claims_under_the_relation_its_sensitivity_holds_for() {
        use dpinfer::accountants::Neighbouring;
        use dpinfer::distances::Relations;
        let pp =
            PublicPairs::from_parts(1, 1, (0..50).map(f64::from).collect(), vec![0.3; 50]).unwrap();
        for kind in [
            "kind = \"soft-abc\"\nepsilon_abc = 0.1",
            "kind = \"svt-abc\"\nepsilon_abc = 0.1\nc = 3",
            "kind = \"gaussian-abc\"\nepsilon_abc = 0.1",
        ] {
            let text = format!(
                "[model]\nname = \"gaussian-mean\"\n[sampler]\n{kind}\npairs = 50\n\
                 [privacy]\nepsilon = 1.0\ndelta = 1e-6\n[distance]\nkind = \"l2\"\nclip = 1.0\n"
            );
            let cfg = Config::parse(&text, std::path::Path::new(".")).unwrap();
            for (relations, want) in [
                (Relations::ADD_REMOVE, Neighbouring::AddRemove),
                (Relations::REPLACE_ONE, Neighbouring::ReplaceOne),
                (Relations::ANY_PAIR, Neighbouring::ReplaceOne),
            ] {
                let o = Observed {
                    summary: vec![0.0],
                    sensitivity: Sensitivity::declared(0.01, relations).unwrap(),
                    bound: 1.0,
                    weights: Some(vec![1.0]),
                    scope: "test",
                    kernel_version: None,
                    allowance_version: None,
                    datasets: 1,
                };
                let pass = Pass::new(&cfg, &pp, o.discrepancy().unwrap(), &o).unwrap();
                let ledger = pass.ledger(&cfg).unwrap();
                assert_eq!(ledger.claim.unwrap().relation, want, "{kind} {relations}");
                assert_eq!(ledger.neighbouring, want.to_string(), "{kind}");
            }
        }
    }

    /// Whether the ledger's neighbouring line is a `USER-DECLARED …` label is read from the
    /// sensitivity ([`Sensitivity::is_user_declared`]), not from comparing the scope text with
    /// the labels: before, a proven sensitivity whose scope text equalled a user label was
    /// reported as user-declared, and a user-declared one under any other text was not.
    #[test]
    fn the_user_declared_label_follows_the_sensitivity_not_its_text() {
        use dpinfer::distances::Relations;
        let pp =
            PublicPairs::from_parts(1, 1, (0..50).map(f64::from).collect(), vec![0.3; 50]).unwrap();
        let text = "[model]\nname = \"gaussian-mean\"\n[sampler]\nkind = \"svt-abc\"\n\
                    epsilon_abc = 0.1\nc = 3\npairs = 50\n[privacy]\nepsilon = 1.0\n\
                    delta = 1e-6\n[distance]\nkind = \"l2\"\nclip = 1.0\n";
        let cfg = Config::parse(text, std::path::Path::new(".")).unwrap();
        let neighbouring = |sensitivity, scope| {
            let o = Observed {
                summary: vec![0.0],
                sensitivity,
                bound: 1.0,
                weights: Some(vec![1.0]),
                scope,
                kernel_version: None,
                allowance_version: None,
                datasets: 1,
            };
            let pass = Pass::new(&cfg, &pp, o.discrepancy().unwrap(), &o).unwrap();
            pass.ledger(&cfg).unwrap().neighbouring
        };
        let user = Sensitivity::user_declared(0.01, Relations::ADD_REMOVE).unwrap();
        let label = DeclaredSummary::ledger_label(&user);
        assert!(label.starts_with("USER-DECLARED add/remove"), "{label}");
        assert_eq!(neighbouring(user, label), label);
        let proven = Sensitivity::declared(0.01, Relations::ADD_REMOVE).unwrap();
        assert_eq!(neighbouring(proven, label), "add/remove");
    }

    /// The release closure's own error comes back as itself (its variant intact), not as the
    /// ledger's `Caller` wrapper; the ledger then stays `started` and a rerun refuses.
    #[test]
    fn a_failed_release_keeps_its_variant_and_the_rerun_is_refused() {
        let dir = std::env::temp_dir().join(format!("dpinfer-guarded-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let lock = DirLock::acquire(&dir).unwrap();
        let claim = Ledger::not_private("test");
        let r: Result<(Release, bool)> = guarded(&lock, "fp", &claim, || {
            Err(crate::error::err!(Data, "observed data have 3 values"))
        });
        assert!(
            matches!(r, Err(crate::Error::Data(ref m)) if m == "observed data have 3 values"),
            "{r:?}"
        );
        let r: Result<(Release, bool)> = guarded(&lock, "fp", &claim, || {
            Err(crate::error::err!(Internal, "unreachable"))
        });
        let e = r.unwrap_err();
        assert!(
            matches!(e.ledger(), Some(dpinfer_ledger::Error::Unfinished { .. })),
            "{e:?}"
        );
        assert!(e.is_refused_release());
        drop(lock);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
