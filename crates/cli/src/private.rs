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
//! HMAC-SHA-256 ([`crate::mac`]) against a party with write access but without the key.

use std::path::Path;

use anyhow::{Context, Result, bail};
use dpinfer::abc::discrepancy::Discrepancy;
use dpinfer::abc::gaussian::GaussianRejectionAbcdp;
use dpinfer::abc::pairs::PublicPairs;
use dpinfer::abc::rejection::nearest;
use dpinfer::abc::soft::SoftAbcdp;
use dpinfer::abc::svt::SvtAbc;
use dpinfer::accountants::{Claim, Neighbouring};
use dpinfer::distances::{ClippedWeightedL2, RffReference, Rows};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::config::{Config, NoiseSeed, SamplerKind};
use crate::files::{DirLock, Replace, write_atomic};
use crate::public::Public;
use crate::sampler::{Calibration, Sampler, With};
use crate::shard::fnv1a;

/// The privacy ledger of a release.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ledger {
    /// ε charged (`"inf"` in JSON for a non-private run).
    #[serde(with = "inf_as_string")]
    pub epsilon: f64,
    /// δ charged.
    pub delta: f64,
    /// Which accountant / theorem produced (ε, δ).
    pub accountant: String,
    /// How the bound was converted to (ε, δ), if it was.
    pub conversion: String,
    /// Neighbouring relation of the guarantee.
    pub neighbouring: String,
    /// Mechanism and its calibration.
    pub mechanism: String,
    /// Where the noise came from.
    pub noise: String,
    /// The library's privacy claim (relation, events, accountant, conversion, report), from
    /// which ε, δ, `accountant`, `conversion` and `neighbouring` above are generated; absent
    /// for a run that is not private.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<Claim>,
}

/// JSON has no ∞: a non-finite ε is written as the string `"inf"`.
mod inf_as_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_str("inf")
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(v) => Ok(v),
            Raw::S(s) if s == "inf" => Ok(f64::INFINITY),
            Raw::S(s) => Err(serde::de::Error::custom(format!("bad epsilon {s:?}"))),
        }
    }
}

impl Ledger {
    /// The ledger of a run that touched private data without protecting it.
    #[must_use]
    pub fn not_private(what: &str) -> Self {
        Self {
            epsilon: f64::INFINITY,
            delta: 0.0,
            accountant: "none".into(),
            conversion: "none".into(),
            neighbouring: "-".into(),
            mechanism: format!("{what} (NOT differentially private)"),
            noise: "-".into(),
            claim: None,
        }
    }

    /// The ledger of a private pass: every privacy field is generated from `claim` (the
    /// prose by the claim's `Display`); `mechanism` and `noise` say how it was run.
    #[must_use]
    pub fn from_claim(claim: Claim, mechanism: String, noise: String) -> Self {
        Self {
            epsilon: claim.epsilon(),
            delta: claim.delta(),
            accountant: format!("{} accountant", claim.accountant.label()),
            conversion: claim.report.conversion.to_string(),
            neighbouring: claim.relation.to_string(),
            mechanism,
            noise,
            claim: Some(claim),
        }
    }
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

#[derive(Debug, Serialize, Deserialize)]
struct StepLedger {
    status: String,
    fingerprint: String,
    release_crc: Option<u32>,
    /// HMAC-SHA-256 of (fingerprint, release bytes) when a ledger key is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    release_mac: Option<String>,
}

const LEDGER_FILE: &str = "private-step.json";
const RELEASE_FILE: &str = "release.json";

/// Fingerprint of the private step's whole input (FNV-1a, [`crate::shard::fnv1a`]).
pub(crate) fn fingerprint(cfg: &Config, pairs: &[f64], obs: &[f64]) -> String {
    let mut h = fnv1a(None, &[]);
    for v in pairs.iter().chain(obs) {
        h = fnv1a(Some(h), &v.to_le_bytes());
    }
    let settings = serde_json::to_string(&(
        &cfg.sampler,
        &cfg.privacy,
        &cfg.distance,
        &cfg.model,
        cfg.seeds.noise,
    ))
    .unwrap_or_default();
    format!("{:016x}", fnv1a(Some(h), settings.as_bytes()))
}

/// Builds the noise generator: ChaCha20 seeded from the OS CSPRNG, or from a fixed seed.
///
/// # Errors
/// OS entropy failure.
pub fn noise_rng(seed: NoiseSeed) -> Result<chacha20::ChaCha20Rng> {
    match seed {
        NoiseSeed::Os => chacha20::ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng)
            .map_err(|e| anyhow::anyhow!("OS entropy unavailable: {e}")),
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
    /// Δ of the (clipped) distance.
    pub sensitivity: f64,
    /// Upper bound of the distance (default clip).
    pub bound: f64,
    /// Weights of the l2 distance.
    pub weights: Option<Vec<f64>>,
    /// Neighbouring relation of the sensitivity.
    pub relation: Neighbouring,
    /// Which data sets the sensitivity compares (for the mechanism description).
    pub scope: &'static str,
}

impl Observed {
    /// ρ(summary, observed): Euclidean between RFF embeddings, or the clipped weighted L2;
    /// a failure (lengths were checked when this was built) reads as +∞.
    #[must_use]
    pub fn distance(&self, s: &[f64]) -> f64 {
        match &self.weights {
            None => s
                .iter()
                .zip(&self.summary)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt(),
            Some(w) => ClippedWeightedL2::new(w, self.bound)
                .and_then(|d| d.distance(s, &self.summary))
                .unwrap_or(f64::INFINITY),
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
            let r = RffReference::new(f, Rows::new(obs, rd)?)?;
            let s = r.sensitivity_for(public.pseudo_rows());
            Ok(Observed {
                summary: r.embedding().to_vec(),
                sensitivity: s.value(),
                bound: 2.0,
                weights: None,
                relation: Neighbouring::ReplaceOne,
                scope: "RFF MMD, one observation of Y* replaced (Lemma 1)",
            })
        }
        None => {
            let dim = public.summary_dim();
            if obs.len() != dim {
                bail!(
                    "observed data have {} values, the model's summary has {dim}",
                    obs.len()
                );
            }
            let w = cfg
                .distance
                .weights()
                .map_or_else(|| vec![1.0; dim], <[f64]>::to_vec);
            if w.len() != dim {
                bail!(
                    "distance.weights has {} entries, the summary has {dim}",
                    w.len()
                );
            }
            let clip = cfg.distance.clip().unwrap_or(f64::MAX);
            let d = ClippedWeightedL2::new(&w, clip)?;
            // A declared summary (`[model.summary]`) may justify a smaller Δ than C; its label
            // (proven, or USER-DECLARED) names the relation and goes into the ledger.
            let (sensitivity, relation, scope) = match public.model.summary_sensitivity(&w, clip)? {
                Some((s, label)) => (
                    s,
                    if label == crate::declared::USER_ADD_REMOVE {
                        Neighbouring::AddRemove
                    } else {
                        Neighbouring::ReplaceOne
                    },
                    label,
                ),
                // Δ = C bounds the clipped distance between any two data sets, so in
                // particular under replace-one.
                None => (
                    d.sensitivity().value(),
                    Neighbouring::ReplaceOne,
                    "clipped L2, Δ = C for any pair of data sets",
                ),
            };
            Ok(Observed {
                summary: obs.to_vec(),
                sensitivity,
                bound: clip,
                weights: Some(w),
                relation,
                scope,
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
    let fp = fingerprint(cfg, pairs, obs);
    let pp = PublicPairs::from_table(public.theta_dim(), public.summary_dim(), pairs)
        .with_context(|| {
            format!(
                "pairs table does not have rows of θ ({}) + summary ({}) values",
                public.theta_dim(),
                public.summary_dim()
            )
        })?;
    let o = observed(cfg, public, obs)?;
    let pass = Pass::new(cfg, kind, &pp, |s: &[f64]| o.distance(s), &o)?;
    let claim = pass.ledger(cfg, &o)?;
    guarded(lock, fp, &claim, || {
        pass.release(cfg, &pp, &o, claim.clone())
    })
}

/// A stored release that carries its privacy claim.
pub trait Claimed {
    /// The ledger of the release.
    fn ledger(&self) -> &Ledger;
}

impl Claimed for Release {
    fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

/// Runs a private release at most once per input fingerprint in the locked folder (see the
/// module docs): reproduces a stored release, refuses after an unfinished one or for another
/// input, and otherwise marks the ledger `started` (durably) and calls `release`, which draws
/// the noise and must return a release carrying exactly `claim` — the complete privacy claim,
/// computed by the caller after all its checks and before any noise. Returns the release and
/// whether it was reproduced.
///
/// The whole check → mark → draw → durable write sequence runs under `lock`, the folder's
/// exclusive OS lock, so concurrent invocations on one folder draw at most once. On
/// reproduction a stored ledger that differs from `claim` (recomputed from the config) is
/// refused.
///
/// # Errors
/// A refused restart, I/O, or the release's own errors.
pub fn guarded<T, F>(lock: &DirLock, fp: String, claim: &Ledger, release: F) -> Result<(T, bool)>
where
    T: Serialize + serde::de::DeserializeOwned + Claimed,
    F: FnOnce() -> Result<T>,
{
    let out_dir = lock.dir();
    let ledger_path = out_dir.join(LEDGER_FILE);
    let release_path = out_dir.join(RELEASE_FILE);
    let exists = match std::fs::symlink_metadata(&ledger_path) {
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(e).with_context(|| format!("inspecting {}", ledger_path.display())),
    };
    if exists {
        let text = read_owned(&ledger_path)?;
        let l: StepLedger = serde_json::from_slice(&text)
            .with_context(|| format!("corrupt ledger {}", ledger_path.display()))?;
        if l.fingerprint != fp {
            bail!(
                "{} already holds a private release of a different input; refusing to \
                 overwrite it (choose another output folder)",
                out_dir.display()
            );
        }
        if l.status == "released" {
            let bytes = read_owned(&release_path)?;
            if Some(crc32fast::hash(&bytes)) != l.release_crc {
                bail!(
                    "{} does not match its ledger checksum; refusing to draw new noise \
                     (the budget for this input is spent)",
                    release_path.display()
                );
            }
            crate::mac::verify(l.release_mac.as_deref(), &fp, &bytes, &release_path)?;
            let r: T = serde_json::from_slice(&bytes)
                .with_context(|| format!("corrupt release {}", release_path.display()))?;
            // The stored claim must be exactly the one this config implies.
            if r.ledger() != claim {
                bail!(
                    "{}: the stored privacy ledger (ε = {}, δ = {}) does not match the one \
                     this config implies (ε = {}, δ = {}); refusing to reproduce a release \
                     whose ledger was altered or belongs to other settings",
                    release_path.display(),
                    r.ledger().epsilon,
                    r.ledger().delta,
                    claim.epsilon,
                    claim.delta
                );
            }
            return Ok((r, true));
        }
        bail!(
            "a private step on this input started in {} and did not finish: its noise may \
             already have been drawn, so drawing again could spend the budget twice. \
             Refusing. (Remove {} only if you accept charging the budget again.)",
            out_dir.display(),
            ledger_path.display()
        );
    }
    let started = StepLedger {
        status: "started".into(),
        fingerprint: fp.clone(),
        release_crc: None,
        release_mac: None,
    };
    write_atomic(
        &ledger_path,
        serde_json::to_string_pretty(&started)?.as_bytes(),
        Replace::Owned,
    )?;
    let out = release()?;
    if out.ledger() != claim {
        bail!(
            "internal: the release's ledger differs from the claim it stated before drawing; \
             nothing is recorded as released"
        );
    }
    let bytes = serde_json::to_vec_pretty(&out)?;
    write_atomic(&release_path, &bytes, Replace::Owned)?;
    let done = StepLedger {
        status: "released".into(),
        release_mac: crate::mac::sign(&fp, &bytes)?,
        fingerprint: fp,
        release_crc: Some(crc32fast::hash(&bytes)),
    };
    write_atomic(
        &ledger_path,
        serde_json::to_string_pretty(&done)?.as_bytes(),
        Replace::Owned,
    )?;
    Ok((out, false))
}

/// The restart ledger of a release that is **not stored for reproduction** (DP MCMC: the
/// chain's output is the release): the first invocation per folder marks it `started` (call
/// this right before the first noise draw, under the folder's lock) and [`once_done`] marks
/// it `released`; any later invocation — same input or not, finished or not — is refused,
/// since drawing again would spend the budget again.
///
/// # Errors
/// A folder that already holds a private release, I/O.
pub fn once_start(lock: &DirLock, fp: &str) -> Result<()> {
    let out_dir = lock.dir();
    let ledger_path = out_dir.join(LEDGER_FILE);
    match std::fs::symlink_metadata(&ledger_path) {
        Ok(_) => {
            let l: StepLedger = serde_json::from_slice(&read_owned(&ledger_path)?)
                .with_context(|| format!("corrupt ledger {}", ledger_path.display()))?;
            if l.fingerprint != fp {
                bail!(
                    "{} already holds a private release of a different input; refusing to \
                     overwrite it (choose another output folder)",
                    out_dir.display()
                );
            }
            bail!(
                "{} already holds a private MCMC release of this input (ledger {}): a DP MCMC \
                 run cannot be reproduced without running the chain, so running it again would \
                 spend the budget again. Refusing. (Choose another folder, or remove {} if you \
                 accept charging the budget again.)",
                out_dir.display(),
                l.status,
                ledger_path.display()
            );
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("inspecting {}", ledger_path.display())),
    }
    let started = StepLedger {
        status: "started".into(),
        fingerprint: fp.to_string(),
        release_crc: None,
        release_mac: None,
    };
    write_atomic(
        &ledger_path,
        serde_json::to_string_pretty(&started)?.as_bytes(),
        Replace::Owned,
    )
}

/// Marks a [`once_start`] release `released` (after its results are durable).
///
/// # Errors
/// I/O.
pub fn once_done(lock: &DirLock, fp: &str) -> Result<()> {
    let done = StepLedger {
        status: "released".into(),
        fingerprint: fp.to_string(),
        release_crc: None,
        release_mac: None,
    };
    write_atomic(
        &lock.dir().join(LEDGER_FILE),
        serde_json::to_string_pretty(&done)?.as_bytes(),
        Replace::Owned,
    )
}

/// Reads a ledger file this command owns (capped, not remembered as an input).
fn read_owned(path: &Path) -> Result<Vec<u8>> {
    crate::files::read_bounded(
        path,
        "ledger file",
        Some(crate::files::MAX_CONFIG_BYTES << 6),
    )
}

/// A private pass, built and checked, its claim known, no noise drawn yet.
enum Pass<'a, D> {
    /// Nearest-k rejection (not private).
    Rejection {
        /// Rows kept.
        k: usize,
        /// The table.
        pairs: &'a PublicPairs,
        /// The distance.
        dist: D,
    },
    /// SVT-ABC.
    Svt(SvtAbc<'a, D>),
    /// Soft-ABC with DP.
    Soft(SoftAbcdp<'a, D>),
    /// Gaussian rejection ABCDP.
    Gaussian(GaussianRejectionAbcdp<'a, D>),
}

impl<'a, D: Discrepancy> Pass<'a, D> {
    /// Turns the config into the library's settings and builds the sampler over `pp` (every
    /// check of the real pass).
    fn new(
        cfg: &Config,
        kind: SamplerKind,
        pp: &'a PublicPairs,
        dist: D,
        o: &Observed,
    ) -> Result<Self> {
        let eps = cfg.privacy.epsilon;
        let cal = Calibration {
            epsilon: eps,
            delta: cfg.privacy.delta,
            sensitivity: o.sensitivity,
            clip: clip(cfg, o),
        };
        let pass = match &cfg.sampler {
            Sampler::Rejection(s) => Self::Rejection {
                k: s.k(pp.len())?,
                pairs: pp,
                dist,
            },
            Sampler::SvtAbc(s) => Self::Svt(SvtAbc::new(pp, dist, With(s, cal).try_into()?)?),
            Sampler::SoftAbc(s) => Self::Soft(SoftAbcdp::new(
                pp,
                dist,
                With(s, cal).try_into()?,
                Neighbouring::ReplaceOne,
            )?),
            Sampler::GaussianAbc(s) => Self::Gaussian(GaussianRejectionAbcdp::new(
                pp,
                dist,
                With(s, cal).try_into()?,
            )?),
            s => bail!("sampler {} is not a pairs-based sampler", s.name()),
        };
        let claim = pass.ledger(cfg, o)?;
        if kind.is_private() && !within_budget(claim.epsilon, eps) {
            bail!(
                "internal: the pass would charge ε = {} > budget {eps}; nothing drawn",
                claim.epsilon
            );
        }
        Ok(pass)
    }

    /// The pass's complete privacy claim (known before any noise), from the library.
    fn ledger(&self, cfg: &Config, o: &Observed) -> Result<Ledger> {
        let noise = noise_label(cfg.seeds.noise);
        let svt = match &cfg.sampler {
            Sampler::SvtAbc(s) => Some(s),
            _ => None,
        };
        Ok(match self {
            Self::Rejection { .. } => Ledger::not_private("rejection ABC: k nearest pairs"),
            Self::Svt(pass) => Ledger::from_claim(
                pass.claim(o.relation)?,
                format!(
                    "SVT-ABC (ABCDP Theorem 1), discrete Laplace on a grid, c = {}, RESAMPLE = {}; {}",
                    svt.map_or(0, |s| s.c),
                    svt.is_some_and(|s| s.resample),
                    o.scope
                ),
                noise,
            ),
            Self::Soft(pass) => Ledger::from_claim(
                pass.claim()?,
                format!(
                    "soft-ABC: Gaussian noisy scaled distances, kernel exp(−ρ/ε_abc) (Park & \
                     Jitkrittum Thms 3.2–3.3); {}",
                    o.scope
                ),
                noise,
            ),
            Self::Gaussian(pass) => Ledger::from_claim(
                pass.claim(o.relation)?,
                format!(
                    "Gaussian rejection ABCDP (Theorem 3.1 with grid correction, linear \
                     composition over T); {}",
                    o.scope
                ),
                noise,
            ),
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
        let mut facts = vec![
            ("pairs".to_string(), pp.len() as f64),
            ("sensitivity".to_string(), o.sensitivity),
            ("clip".to_string(), clip(cfg, o)),
        ];
        let mut weights = None;
        let samples = match self {
            Self::Rejection { k, pairs, dist } => {
                let near = nearest(pairs, dist, k)?;
                facts.push(("tolerance".into(), near.tolerance));
                facts.push(("accepted".into(), k as f64));
                near.thetas(pairs)
            }
            Self::Svt(mut pass) => {
                pass.run(&mut noise_rng(cfg.seeds.noise)?)?;
                let samples = pass.accepted_thetas();
                facts.push(("laplace_scale_b".into(), pass.noise_scale()));
                facts.push(("accepted".into(), (samples.len() / d) as f64));
                facts.push(("examined".into(), pass.indicators().len() as f64));
                samples
            }
            Self::Soft(mut pass) => {
                pass.run(&mut noise_rng(cfg.seeds.noise)?)?;
                let mut w = vec![0.0; pass.noisy_distances().len()];
                pass.weights(&mut w)?;
                let ess = 1.0 / w.iter().map(|x| x * x).sum::<f64>();
                facts.push(("gaussian_sigma".into(), pass.sigma()));
                facts.push(("ess".into(), ess));
                let samples = pp.thetas()[..w.len() * d].to_vec();
                weights = Some(w);
                samples
            }
            Self::Gaussian(mut pass) => {
                pass.run(&mut noise_rng(cfg.seeds.noise)?)?;
                let samples = pass.accepted_thetas();
                facts.push(("gaussian_sigma".into(), pass.sigma()));
                facts.push(("step_epsilon".into(), pass.step_epsilon()));
                facts.push(("accepted".into(), (samples.len() / d) as f64));
                samples
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

/// Relative slack of [`within_budget`]: floating-point rounding only.
pub const ROUNDING: f64 = 1e-12;

/// `true` if a claimed ε fits `budget` (NaN never does). The mechanisms calibrate in exact
/// grid arithmetic (their own ε is `≤ budget` exactly); a claim's accountant composes the
/// same events in floating point and rounds **up**, so a pass that spends its whole budget
/// claims a few ulps more (SVT at ε = 1: 1 + 4.3e-14). The claim — the conservative value —
/// is what the ledger reports, and it is accepted up to a relative [`ROUNDING`].
#[must_use]
pub fn within_budget(epsilon: f64, budget: f64) -> bool {
    epsilon <= budget * (1.0 + ROUNDING)
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
/// drawn.
///
/// # Errors
/// Whatever the real pass would reject.
pub fn check(cfg: &Config, public: &Public, obs: &[f64]) -> Result<()> {
    let kind = cfg.kind();
    let width = public.theta_dim() + public.summary_dim();
    let t = usize::try_from(public.total)?;
    let Some(len) = t.checked_mul(width) else {
        bail!("{t} pairs of {width} values do not fit in memory");
    };
    let o = observed(cfg, public, obs)?;
    if len > CHECK_LIMIT {
        return Ok(());
    }
    let pp = PublicPairs::from_table(public.theta_dim(), public.summary_dim(), &vec![0.0; len])?;
    Pass::new(cfg, kind, &pp, |s: &[f64]| o.distance(s), &o).map(|_| ())
}
