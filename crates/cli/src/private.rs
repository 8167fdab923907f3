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
use dpinfer::abc::analysis::Resample;
use dpinfer::abc::gaussian::{GaussianRejectionAbcdp, GaussianRejectionSettings};
use dpinfer::abc::pairs::PublicPairs;
use dpinfer::abc::soft::{SoftAbcdp, SoftAbcdpSettings};
use dpinfer::abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer::accountants::Neighbouring;
use dpinfer::distances::{ClippedWeightedL2, RffReference, Rows};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::config::{Config, NoiseSeed, SamplerKind};
use crate::files::{DirLock, Replace, write_atomic};
use crate::public::Public;

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

fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= u64::from(*b);
        *h = h.wrapping_mul(0x0100_0000_01b3);
    }
}

/// Fingerprint of the private step's whole input.
pub(crate) fn fingerprint(cfg: &Config, pairs: &[f64], obs: &[f64]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in pairs.iter().chain(obs) {
        fnv(&mut h, &v.to_le_bytes());
    }
    let settings = serde_json::to_string(&(
        &cfg.sampler,
        &cfg.privacy,
        &cfg.distance,
        &cfg.model,
        cfg.seeds.noise,
    ))
    .unwrap_or_default();
    fnv(&mut h, settings.as_bytes());
    format!("{h:016x}")
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
    pub relation: &'static str,
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
                relation: "replace-one (one observation of Y* changed)",
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
                .weights
                .clone()
                .unwrap_or_else(|| vec![1.0; dim]);
            if w.len() != dim {
                bail!(
                    "distance.weights has {} entries, the summary has {dim}",
                    w.len()
                );
            }
            let clip = cfg.distance.clip.unwrap_or(f64::MAX);
            let d = ClippedWeightedL2::new(&w, clip)?;
            // A declared summary (`[model.summary]`) may justify a smaller Δ than C.
            let (sensitivity, relation) = public.model.summary_sensitivity(&w, clip)?.unwrap_or((
                d.sensitivity().value(),
                "any pair of data sets (Δ = C bounds the clipped distance)",
            ));
            Ok(Observed {
                summary: obs.to_vec(),
                sensitivity,
                bound: clip,
                weights: Some(w),
                relation,
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
    let kind = cfg.kind()?;
    if !kind.uses_pairs() {
        bail!(
            "sampler {} has no pairs-based private step (use `dpinfer run`)",
            cfg.sampler.kind
        );
    }
    let fp = fingerprint(cfg, pairs, obs);
    guarded(lock, fp, |mark_started| {
        run_pass(cfg, kind, public, pairs, obs, mark_started)
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
/// input, and otherwise calls `release` — which must call its argument with its complete
/// privacy claim (the ledger) after all its checks and before drawing any noise (that marks
/// the ledger `started`, durably). Returns the release and whether it was reproduced.
///
/// The whole check → mark → draw → durable write sequence runs under `lock`, the folder's
/// exclusive OS lock, so concurrent invocations on one folder draw at most once. On
/// reproduction the claim is recomputed from the config (by running `release` up to its
/// claim, without noise) and a stored ledger that disagrees is refused.
///
/// # Errors
/// A refused restart, I/O, or the release's own errors.
pub fn guarded<T, F>(lock: &DirLock, fp: String, release: F) -> Result<(T, bool)>
where
    T: Serialize + serde::de::DeserializeOwned + Claimed,
    F: FnOnce(&mut dyn FnMut(&Ledger) -> Result<()>) -> Result<T>,
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
            // Recompute the claim from the config: the stored one must be exactly it.
            let mut claim = None;
            match release(&mut |c: &Ledger| {
                claim = Some(c.clone());
                Err(anyhow::Error::new(ChecksPassed))
            }) {
                Err(e) if e.is::<ChecksPassed>() => {}
                Err(e) => return Err(e),
                Ok(_) => bail!("internal: the release drew without stating its claim"),
            }
            let claim = claim.context("internal: no claim recomputed")?;
            if *r.ledger() != claim {
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
    let mut claim: Option<Ledger> = None;
    let mut mark_started = |c: &Ledger| -> Result<()> {
        claim = Some(c.clone());
        write_atomic(
            &ledger_path,
            serde_json::to_string_pretty(&started)?.as_bytes(),
            Replace::Owned,
        )
    };
    let out = release(&mut mark_started)?;
    if Some(out.ledger()) != claim.as_ref() {
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

fn run_pass(
    cfg: &Config,
    kind: SamplerKind,
    public: &Public,
    pairs: &[f64],
    obs: &[f64],
    before_noise: &mut dyn FnMut(&Ledger) -> Result<()>,
) -> Result<Release> {
    let d = public.theta_dim();
    let sd = public.summary_dim();
    let width = d + sd;
    if !pairs.len().is_multiple_of(width) || pairs.is_empty() {
        bail!("pairs table does not have rows of θ ({d}) + summary ({sd}) values");
    }
    let t = pairs.len() / width;
    let mut thetas = Vec::with_capacity(t * d);
    let mut outs = Vec::with_capacity(t * sd);
    for row in pairs.chunks_exact(width) {
        thetas.extend_from_slice(&row[..d]);
        outs.extend_from_slice(&row[d..]);
    }
    let pp = PublicPairs::from_parts(d, sd, thetas, outs)?;
    let o = observed(cfg, public, obs)?;
    let obs_summary = o.summary.clone();
    let l2 = match &o.weights {
        Some(w) => Some(ClippedWeightedL2::new(w, o.bound)?),
        None => None,
    };
    // ρ(Y*, Y_t); a failure (impossible after the checks above) reads as +∞ (rejected).
    let dist = |s: &[f64]| -> f64 {
        match &l2 {
            None => s
                .iter()
                .zip(&obs_summary)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt(),
            Some(l2) => l2.distance(s, &obs_summary).unwrap_or(f64::INFINITY),
        }
    };
    let s = &cfg.sampler;
    let clip = s.clip.unwrap_or(o.bound).min(o.bound);
    let eps = cfg.privacy.epsilon;
    if let Some(e) = s.epsilon_abc
        && e >= clip
    {
        bail!(
            "sampler.epsilon_abc = {e} must be below the distance's clipping bound {clip}: \
             every pair would pass"
        );
    }
    let noise_src = noise_label(cfg.seeds.noise);
    let mut facts = vec![
        ("pairs".to_string(), t as f64),
        ("sensitivity".to_string(), o.sensitivity),
        ("clip".to_string(), clip),
    ];
    // The claim is complete before any noise: checked against the budget here, and recomputed
    // from the config alone when a stored release is reproduced.
    let mut before_noise = |claim: &Ledger| -> Result<()> {
        if kind.is_private() && (claim.epsilon.is_nan() || claim.epsilon > eps) {
            bail!(
                "internal: the pass would charge ε = {} > budget {eps}; nothing drawn",
                claim.epsilon
            );
        }
        before_noise(claim)
    };
    let release = match kind {
        SamplerKind::Rejection => {
            let k = s.accept.unwrap_or((t / 100).max(1)).min(t);
            if k == 0 {
                bail!("sampler.accept must be at least 1");
            }
            let ledger = Ledger::not_private("rejection ABC: k nearest pairs");
            before_noise(&ledger)?;
            let mut idx: Vec<(f64, usize)> = (0..t).map(|i| (dist(pp.output(i)), i)).collect();
            idx.sort_by(|a, b| a.0.total_cmp(&b.0));
            let samples = idx[..k]
                .iter()
                .flat_map(|&(_, i)| pp.theta(i).to_vec())
                .collect();
            facts.push(("tolerance".into(), idx[k - 1].0));
            facts.push(("accepted".into(), k as f64));
            Release {
                sampler: s.kind.clone(),
                dim: d,
                samples,
                weights: None,
                ledger,
                facts,
            }
        }
        SamplerKind::SvtAbc => {
            let settings = SvtAbcSettings {
                epsilon_abc: s.epsilon_abc.unwrap_or(0.0),
                epsilon_total: eps,
                c: s.c.unwrap_or(0),
                sensitivity: o.sensitivity,
                clip,
                resample: if s.resample.unwrap_or(false) {
                    Resample::AfterAccept
                } else {
                    Resample::Never
                },
            };
            let mut pass = SvtAbc::new(&pp, dist, settings)?;
            let ledger = Ledger {
                epsilon: pass.epsilon(),
                delta: 0.0,
                accountant: "sparse vector, ABCDP Theorem 1 (Park et al. 2021)".into(),
                conversion: "pure ε (none)".into(),
                neighbouring: o.relation.into(),
                mechanism: format!(
                    "SVT, discrete Laplace on a grid, c = {}, RESAMPLE = {}",
                    settings.c,
                    settings.resample == Resample::AfterAccept
                ),
                noise: noise_src,
            };
            before_noise(&ledger)?;
            let mut noise = noise_rng(cfg.seeds.noise)?;
            pass.run(&mut noise)?;
            let samples = pass.accepted_thetas();
            facts.push(("laplace_scale_b".into(), pass.noise_scale()));
            facts.push(("accepted".into(), (samples.len() / d) as f64));
            facts.push(("examined".into(), pass.indicators().len() as f64));
            Release {
                sampler: s.kind.clone(),
                dim: d,
                samples,
                weights: None,
                ledger,
                facts,
            }
        }
        SamplerKind::SoftAbc => {
            let settings = SoftAbcdpSettings {
                epsilon_abc: s.epsilon_abc.unwrap_or(0.0),
                epsilon_total: eps,
                delta_total: cfg.privacy.delta,
                sensitivity: o.sensitivity,
                bound: clip,
                floor: 0.0_f64.max(1e-12),
            };
            let mut pass = SoftAbcdp::new(&pp, dist, settings, Neighbouring::ReplaceOne)?;
            let ledger = Ledger {
                epsilon: pass.epsilon()?,
                delta: cfg.privacy.delta,
                accountant: "zCDP (T Gaussian releases, Park & Jitkrittum 2022 §2.3)".into(),
                conversion: "zCDP → (ε, δ)".into(),
                neighbouring: o.relation.into(),
                mechanism: "Gaussian noisy scaled distances, soft kernel exp(−ρ/ε_abc)".into(),
                noise: noise_src,
            };
            before_noise(&ledger)?;
            let mut noise = noise_rng(cfg.seeds.noise)?;
            pass.run(&mut noise)?;
            let mut w = vec![0.0; pass.noisy_distances().len()];
            pass.weights(&mut w)?;
            let ess = 1.0 / w.iter().map(|x| x * x).sum::<f64>();
            facts.push(("gaussian_sigma".into(), pass.sigma()));
            facts.push(("ess".into(), ess));
            Release {
                sampler: s.kind.clone(),
                dim: d,
                samples: pp.thetas()[..w.len() * d].to_vec(),
                weights: Some(w),
                ledger,
                facts,
            }
        }
        SamplerKind::GaussianAbc => {
            let settings = GaussianRejectionSettings {
                epsilon_abc: s.epsilon_abc.unwrap_or(0.0),
                epsilon_total: eps,
                sensitivity: o.sensitivity,
                bound: clip,
            };
            let mut pass = GaussianRejectionAbcdp::new(&pp, dist, settings)?;
            let ledger = Ledger {
                epsilon: pass.epsilon(),
                delta: 0.0,
                accountant: "pure ε per decision, Theorem 3.1 with grid correction, \
                             linear composition over T"
                    .into(),
                conversion: "pure ε (none)".into(),
                neighbouring: o.relation.into(),
                mechanism: "Gaussian rejection ABCDP".into(),
                noise: noise_src,
            };
            before_noise(&ledger)?;
            let mut noise = noise_rng(cfg.seeds.noise)?;
            pass.run(&mut noise)?;
            let samples = pass.accepted_thetas();
            facts.push(("gaussian_sigma".into(), pass.sigma()));
            facts.push(("step_epsilon".into(), pass.step_epsilon()));
            facts.push(("accepted".into(), (samples.len() / d) as f64));
            Release {
                sampler: s.kind.clone(),
                dim: d,
                samples,
                weights: None,
                ledger,
                facts,
            }
        }
        _ => bail!("sampler {} is not a pairs-based sampler", s.kind),
    };
    if kind.is_private() && (release.ledger.epsilon.is_nan() || release.ledger.epsilon > eps) {
        bail!(
            "internal: the pass charged ε = {} > budget {eps}; nothing released",
            release.ledger.epsilon
        );
    }
    Ok(release)
}

/// Raised by [`check`]'s dry run once every constructor accepted the settings, and inside
/// [`guarded`] to stop a release once its claim is known: no noise is drawn.
#[derive(Debug)]
struct ChecksPassed;

impl std::fmt::Display for ChecksPassed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("checks passed")
    }
}

impl std::error::Error for ChecksPassed {}

/// Largest dry-run table (values) [`check`] builds; bigger runs are checked after simulation
/// (still before any noise is drawn).
const CHECK_LIMIT: usize = 1 << 24;

/// Validates the private pass (observed data against the model, distance, sensitivity and
/// sampler calibration) before the public step spends any simulation: a dry run over a
/// placeholder table of the same size that stops before the first noise draw.
///
/// # Errors
/// Whatever the real pass would reject.
pub fn check(cfg: &Config, public: &Public, obs: &[f64]) -> Result<()> {
    let kind = cfg.kind()?;
    let width = public.theta_dim() + public.summary_dim();
    let t = usize::try_from(public.total)?;
    let Some(len) = t.checked_mul(width) else {
        bail!("{t} pairs of {width} values do not fit in memory");
    };
    if len > CHECK_LIMIT {
        return observed(cfg, public, obs).map(|_| ());
    }
    let dummy = vec![0.0; len];
    match run_pass(cfg, kind, public, &dummy, obs, &mut |_| {
        Err(anyhow::Error::new(ChecksPassed))
    }) {
        Err(e) if e.is::<ChecksPassed>() => Ok(()),
        Err(e) => Err(e),
        Ok(_) => Ok(()),
    }
}
