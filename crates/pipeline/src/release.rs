//! Inference from a privatized statistic (Xiong, Ju & Zhang): the data owner releases the
//! observed statistic **once** through a DP mechanism, and SMC-ABC then targets
//! `π(θ | s_dp)` with the simulator "model + public replica of the mechanism"
//! (post-processing: the only privacy cost is the release).
//!
//! * `release = "binomial-curve"` (SIR, §4.1 and Appendix E.1): each of the L observed
//!   infection counts `I` becomes `Binomial(n, (I + m)/(K + 2m)) / n`, ε from
//!   [`BinomialCurve::epsilon_exact`] (≤ the paper's `nL/m`), replace-one on the population.
//! * `release = "laplace"` (linear regression, §4.2): the clamped statistic vector plus
//!   Laplace noise of scale `Δ₁/ε` on the mechanisms crate's grid, and output range
//!   `[release_lo, release_hi]`. For the linear-regression model Δ₁ defaults to the
//!   statistic's proven replace-one L1 sensitivity `(p² + 3p + 3)/n`
//!   ([`LinearRegression::l1_sensitivity`](dpinfer::simulators::models::linreg::LinearRegression::l1_sensitivity))
//!   and a smaller `release_sensitivity` is refused; other models need the caller's bound.
//!
//! The release is restart-safe exactly like the pairs-based private step
//! ([`crate::private::guarded`]).

use crate::error::{Result, bail, ensure};
use dpinfer::abc::smc::{BinomialReplicate, LaplaceReplicate, Replicate};
use dpinfer::accountants::{AccountantKind, Claim, ConversionRule, Event, EventBuf, Neighbouring};
use dpinfer::mechanisms::{BinomialCurve, Laplace};
use serde::{Deserialize, Serialize};

use crate::config::{Config, ReleaseConfig};
use crate::model::Model;
use std::path::Path;

use crate::private::{Claimed, Ledger, fingerprint, guarded, noise_label, noise_rng};
use dpinfer_ledger::files::DirLock;

impl Claimed for StatRelease {
    fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

/// The public replica of the release mechanism as stored in `release.json`; the library's
/// [`Replicate`] applies it to simulated statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Replica {
    /// `Binomial(n, (I + m)/(K + 2m)) / n` per time point.
    Binomial {
        /// Trials n.
        n: u64,
        /// Pseudo-count m.
        m: f64,
        /// Population K.
        k: f64,
    },
    /// `s + Laplace(b)` per coordinate.
    Laplace {
        /// Scale b.
        b: f64,
    },
}

impl Replica {
    /// The library's replica.
    ///
    /// # Errors
    /// Invalid parameters (a tampered release file).
    pub fn mechanism(&self) -> Result<Replicate> {
        Ok(match *self {
            Self::Binomial { n, m, k } => Replicate::Binomial(BinomialReplicate::new(n, m, k)?),
            Self::Laplace { b } => Replicate::Laplace(LaplaceReplicate::new(b)?),
        })
    }
}

/// The neighbouring line of a Laplace release whose sensitivity is the configured
/// `privacy.release_sensitivity` (no proven bound for the model's statistic).
pub const USER_DECLARED_RELEASE: &str = "USER-DECLARED replace-one (one record replaced; \
     privacy.release_sensitivity is the user's claim, not checked by dpinfer)";

/// The public replica of `privacy.release`, if it is set.
///
/// # Errors
/// As [`mechanism`].
pub fn replica(cfg: &Config, model: &Model) -> Result<Option<Replicate>> {
    mechanism(cfg, model)?
        .map(|(_, r)| r.mechanism())
        .transpose()
}

/// What the data owner releases.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatRelease {
    /// The privatized statistic.
    pub s_dp: Vec<f64>,
    /// The public replica SMC-ABC applies to simulations.
    pub replica: Replica,
    /// The privacy ledger.
    pub ledger: Ledger,
}

/// The mechanism of `privacy.release`, from the config alone (the replica is public).
///
/// # Errors
/// An unknown release kind, a model it does not fit, invalid mechanism parameters.
pub fn mechanism(cfg: &Config, model: &Model) -> Result<Option<(Mech, Replica)>> {
    let p = &cfg.privacy;
    let Some(release) = &p.release else {
        return Ok(None);
    };
    match release {
        ReleaseConfig::BinomialCurve(r) => {
            let Model::Sir(..) = model.base() else {
                bail!(
                    key = "privacy.release"; "privacy.release = \"binomial-curve\" needs the sir model (infection counts)"
                );
            };
            let k = cfg
                .model
                .population
                .unwrap_or(dpinfer::simulators::models::sir::SirSettings::paper().population);
            let (n, m) = (r.release_n, r.release_m);
            let mech = BinomialCurve::new(n, m, k)?;
            Ok(Some((
                Mech::Binomial(mech, n, m, k),
                Replica::Binomial {
                    n,
                    m: m as f64,
                    k: k as f64,
                },
            )))
        }
        ReleaseConfig::Laplace(r) => {
            let d = model.output_len();
            // The linear-regression statistic has a proven replace-one L1 sensitivity: it is
            // the default, and a configured value below it (which would under-report ε) is
            // refused. Other models' statistics need the caller's bound.
            let proven = match model.base() {
                Model::LinReg(m, _) => Some(
                    dpinfer::simulators::models::linreg::LinearRegression::<2>::l1_sensitivity(
                        m.settings().n,
                    )?,
                ),
                _ => None,
            };
            let sens = match (r.release_sensitivity, proven) {
                (Some(s), Some(min)) if s.is_nan() || s < min => bail!(
                    key = "privacy.release_sensitivity"; "privacy.release_sensitivity = {s} is below the regression statistic's \
                     replace-one L1 sensitivity (p² + 3p + 3)/n = {min} (Xiong et al. §4.2): \
                     it would under-report ε; leave it out to use {min}"
                ),
                (Some(s), _) => s,
                (None, Some(min)) => min,
                (None, None) => bail!(
                    key = "privacy.release"; "privacy.release = \"laplace\" needs privacy.release_sensitivity (the L1 sensitivity of the statistic)"
                ),
            };
            let (lo, hi) = (r.release_lo, r.release_hi);
            let mech = Laplace::vector_from_epsilon(d, p.epsilon, sens, lo, hi)?;
            let b = mech.scale();
            Ok(Some((
                Mech::Laplace(mech, sens, lo, hi),
                Replica::Laplace { b },
            )))
        }
    }
}

/// A configured release mechanism.
#[derive(Debug, Clone)]
pub enum Mech {
    /// Binomial curve with (n, m, K).
    Binomial(BinomialCurve, u64, u64, u64),
    /// Vector Laplace with (Δ₁, lo, hi).
    Laplace(Laplace, f64, f64, f64),
}

/// Releases the observed statistic once (or reproduces the stored release) into `dir`.
/// Every check runs before the folder is created; then its lock is taken, and returned so the
/// caller keeps it while writing the rest of the results.
///
/// # Errors
/// An unusable ledger key, models the mechanism does not fit, a cost above the budget, a
/// refused restart.
pub fn release(
    cfg: &Config,
    model: &Model,
    obs: &[f64],
    dir: &Path,
) -> Result<(StatRelease, bool, DirLock)> {
    // A set ledger key must be usable before the folder is created (the ledger loads it
    // again before it marks the release started).
    dpinfer_ledger::mac::Key::from_env()?;
    let p = &cfg.privacy;
    // The release depends on the data, the model and the privacy settings only: the sampler
    // settings may change between runs and reuse the same release (post-processing).
    let fp = {
        let mut c = cfg.clone();
        c.sampler = crate::config::SamplerConfig::release_key();
        c.distance = crate::config::DistanceConfig::default();
        fingerprint(&c, &[], obs)?
    };
    let budget = p.epsilon;
    let (mech, replica) = mechanism(cfg, model)?
        .ok_or_else(|| crate::error::err!(key = "privacy.release"; "privacy.release is not set"))?;
    match mech {
        Mech::Binomial(mech, n, mm, k) => {
            let l = obs.len() as u64;
            let counts = counts(obs, k)?;
            let ledger = Ledger::from_claim(
                claim(&Mech::Binomial(mech, n, mm, k), obs.len(), budget)?,
                format!(
                    "binomial infection-curve release (Xiong et al. Prop. 4, exact bound): \
                     Binomial(n = {n}, (I + m)/(K + 2m)), m = {mm}, K = {k}, L = {l} time \
                     points; one individual's infection status replaced"
                ),
                noise_label(cfg.seeds.noise),
            );
            let lock = DirLock::acquire(dir)?;
            guarded(&lock, &fp, &ledger.clone(), || {
                let mut noise = noise_rng(cfg.seeds.noise)?;
                let mut out = vec![0u64; counts.len()];
                mech.release_curve(&counts, &mut out, &mut noise)?;
                Ok(StatRelease {
                    s_dp: out.iter().map(|&c| c as f64 / n as f64).collect(),
                    replica,
                    ledger,
                })
            })
            .map(|(r, rep)| (r, rep, lock))
        }
        Mech::Laplace(mech, sens, lo, hi) => {
            let d = model.output_len();
            ensure!(
                obs.len() == d,
                Data,
                "the observed statistic has {} values, the model's {d}",
                obs.len()
            );
            let mut ledger = Ledger::from_claim(
                claim(&Mech::Laplace(mech, sens, lo, hi), d, budget)?,
                format!(
                    "vector Laplace, Δ₁ = {sens}, b = {}, range [{lo}, {hi}]; {}",
                    mech.scale(),
                    if matches!(model.base(), Model::LinReg(..)) {
                        "n public, Δ₁ ≥ the statistic's proven replace-one bound"
                    } else {
                        "Δ₁ is the configured replace-one sensitivity"
                    }
                ),
                noise_label(cfg.seeds.noise),
            );
            if !matches!(model.base(), Model::LinReg(..)) {
                // dpinfer proves no bound for this statistic: the relation line says so.
                ledger.neighbouring = USER_DECLARED_RELEASE.to_string();
            }
            let lock = DirLock::acquire(dir)?;
            guarded(&lock, &fp, &ledger.clone(), || {
                let mut noise = noise_rng(cfg.seeds.noise)?;
                let mut out = vec![0.0; d];
                mech.release_into(obs, &mut out, &mut noise)?;
                Ok(StatRelease {
                    s_dp: out,
                    replica,
                    ledger,
                })
            })
            .map(|(r, rep)| (r, rep, lock))
        }
    }
}

/// Infection counts from the observed curve: finite and non-negative (else a data error),
/// rounded, capped at the population `k`.
fn counts(obs: &[f64], k: u64) -> Result<Vec<u64>> {
    obs.iter()
        .map(|&x| {
            ensure!(
                x.is_finite() && x >= 0.0,
                Data,
                "infection counts must be non-negative, got {x}"
            );
            // Checked non-negative and finite above; capped at K.
            #[allow(clippy::cast_sign_loss)]
            let c = x.round().min(k as f64) as u64;
            Ok(c)
        })
        .collect()
}

/// The mechanism applied to a statistic with the noise of `noise`, as [`release`] applies it
/// (without ledger or folder): a calibration replicate's simulated release, its noise from a
/// public seed ([`crate::calibrate`]).
///
/// # Errors
/// A statistic the mechanism refuses (negative counts, the wrong length).
pub(crate) fn privatize<R: dpinfer::mechanisms::NoiseRng + ?Sized>(
    mech: &Mech,
    obs: &[f64],
    noise: &mut R,
) -> Result<Vec<f64>> {
    match mech {
        Mech::Binomial(mech, n, _, k) => {
            let counts = counts(obs, *k)?;
            let mut out = vec![0u64; counts.len()];
            mech.release_curve(&counts, &mut out, noise)?;
            Ok(out.iter().map(|&c| c as f64 / *n as f64).collect())
        }
        Mech::Laplace(mech, ..) => {
            let mut out = vec![0.0; obs.len()];
            mech.release_into(obs, &mut out, noise)?;
            Ok(out)
        }
    }
}

/// The claim of releasing a statistic of `len` values through `mech`, checked against
/// `budget` (what [`release`] records; a calibration run refuses what a run would).
///
/// # Errors
/// As [`pure_claim`].
pub(crate) fn claim(mech: &Mech, len: usize, budget: f64) -> Result<Claim> {
    match mech {
        Mech::Binomial(m, ..) => pure_claim(&m.event(len as u64), budget),
        Mech::Laplace(m, ..) => pure_claim(&m.event(), budget),
    }
}

/// The claim of one release with a pure-ε event (replace-one), checked against the budget.
///
/// # Errors
/// An event the accountant rejects, or a cost above `privacy.epsilon`.
fn pure_claim(event: &Event<'_>, budget: f64) -> Result<Claim> {
    let claim = Claim::account(
        Neighbouring::ReplaceOne,
        AccountantKind::Pure,
        ConversionRule::Tightest,
        vec![(EventBuf::from(event), 1)],
        0.0,
    )?;
    ensure!(
        crate::private::within_budget(claim.epsilon(), budget),
        "the release costs ε = {:.4} > privacy.epsilon = {budget}",
        claim.epsilon()
    );
    Ok(claim)
}
