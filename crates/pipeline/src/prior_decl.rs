//! `[[model.prior]]` tables (one per parameter, or a Dirichlet block) and their conversion
//! into the library's declared prior (`dpinfer::simulators::prior`: `Marginal` blocks of a
//! `DeclaredPrior`).

use crate::config::finite_pos_at;
use crate::error::{Result, bail, err};
use dpinfer::simulators::SimError;
use dpinfer::simulators::prior::{
    Beta, DeclaredPrior, Dirichlet, Exponential, Gamma, LogNormal, Marginal, Normal,
    TruncatedNormal, Uniform,
};
use serde::{Deserialize, Serialize};

/// One `[[model.prior]]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PriorDecl {
    /// Parameter name (a Dirichlet block of `k` names `name1 … namek`).
    pub name: String,
    /// `uniform`, `normal`, `truncated-normal`, `log-normal`, `gamma`, `beta`, `exponential`,
    /// `dirichlet`.
    pub dist: String,
    /// uniform / truncated-normal: lower end (truncated-normal: default −∞).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    /// uniform / truncated-normal: upper end (truncated-normal: default +∞).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    /// normal / truncated-normal: mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// normal / truncated-normal: standard deviation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd: Option<f64>,
    /// log-normal: mean of ln θ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mu: Option<f64>,
    /// log-normal: sd of ln θ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
    /// gamma: shape k.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<f64>,
    /// gamma / exponential: rate (give `rate` or `scale`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// gamma / exponential: scale = 1/rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// beta: first shape a; dirichlet: concentration α.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<f64>,
    /// beta: second shape b.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    /// dirichlet: number of components k ≥ 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
}

impl PriorDecl {
    fn need(&self, key: &str, v: Option<f64>) -> Result<f64> {
        v.ok_or_else(|| {
            err!(
                key = "model.prior";
                "model.prior {:?} ({}): `{key}` is required",
                self.name,
                self.dist
            )
        })
    }

    /// The keys this distribution accepts; any other key given is an error.
    fn check_keys(&self, allowed: &[&str]) -> Result<()> {
        let given = [
            ("lo", self.lo.is_some()),
            ("hi", self.hi.is_some()),
            ("mean", self.mean.is_some()),
            ("sd", self.sd.is_some()),
            ("mu", self.mu.is_some()),
            ("sigma", self.sigma.is_some()),
            ("shape", self.shape.is_some()),
            ("rate", self.rate.is_some()),
            ("scale", self.scale.is_some()),
            ("a", self.a.is_some()),
            ("b", self.b.is_some()),
            ("k", self.k.is_some()),
        ];
        for (key, set) in given {
            if set && !allowed.contains(&key) {
                bail!(
                    key = "model.prior";
                    "model.prior {:?}: `{key}` does not apply to dist = {:?} (keys: {})",
                    self.name,
                    self.dist,
                    allowed.join(", ")
                );
            }
        }
        Ok(())
    }

    /// A scale of the table (`sd`, `sigma`, `shape`, `rate`, `scale`, `a`, `b`): required,
    /// and checked by the config's one rule for scales ([`finite_pos_at`]: finite, normal,
    /// > 0), the rule `model.prior_sd` obeys.
    fn scale_key(&self, key: &str, v: Option<f64>) -> Result<f64> {
        let v = self.need(key, v)?;
        finite_pos_at(
            "model.prior",
            &format!("model.prior {:?} ({}): `{key}`", self.name, self.dist),
            v,
        )
    }

    fn rate(&self) -> Result<f64> {
        match (self.rate, self.scale) {
            (Some(r), None) => self.scale_key("rate", Some(r)),
            (None, Some(s)) => {
                let r = 1.0 / self.scale_key("scale", Some(s))?;
                finite_pos_at(
                    "model.prior",
                    &format!("model.prior {:?}: 1/`scale`", self.name),
                    r,
                )
            }
            _ => bail!(
                key = "model.prior";
                "model.prior {:?} ({}): give exactly one of `rate` and `scale`",
                self.name,
                self.dist
            ),
        }
    }

    /// The parameter names of this table: its name, or for a Dirichlet block of `k`
    /// components `name1 … namek`.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        match (self.dist.as_str(), self.k) {
            ("dirichlet", Some(k)) => (1..=k).map(|i| format!("{}{i}", self.name)).collect(),
            _ => vec![self.name.clone()],
        }
    }
}

/// The library block of one table: the keys that belong to its `dist`, validated by the
/// library's constructors.
impl TryFrom<&PriorDecl> for Marginal {
    type Error = crate::Error;
    fn try_from(d: &PriorDecl) -> Result<Self> {
        let e =
            |e: SimError| err!(key = "model.prior"; "model.prior {:?} ({}): {e}", d.name, d.dist);
        Ok(match d.dist.as_str() {
            "uniform" => {
                d.check_keys(&["lo", "hi"])?;
                let (lo, hi) = (d.need("lo", d.lo)?, d.need("hi", d.hi)?);
                if hi > lo {
                    // The width is the uniform's scale: the density is its reciprocal.
                    finite_pos_at(
                        "model.prior",
                        &format!(
                            "model.prior {:?} (uniform): the width `hi` - `lo` = {hi:?} - {lo:?}",
                            d.name
                        ),
                        hi - lo,
                    )?;
                }
                Self::Uniform(Uniform::new(lo, hi).map_err(e)?)
            }
            "normal" => {
                d.check_keys(&["mean", "sd"])?;
                Self::Normal(
                    Normal::new(d.need("mean", d.mean)?, d.scale_key("sd", d.sd)?).map_err(e)?,
                )
            }
            "truncated-normal" => {
                d.check_keys(&["mean", "sd", "lo", "hi"])?;
                Self::TruncatedNormal(
                    TruncatedNormal::new(
                        d.need("mean", d.mean)?,
                        d.scale_key("sd", d.sd)?,
                        d.lo.unwrap_or(f64::NEG_INFINITY),
                        d.hi.unwrap_or(f64::INFINITY),
                    )
                    .map_err(e)?,
                )
            }
            "log-normal" => {
                d.check_keys(&["mu", "sigma"])?;
                Self::LogNormal(
                    LogNormal::new(d.need("mu", d.mu)?, d.scale_key("sigma", d.sigma)?)
                        .map_err(e)?,
                )
            }
            "gamma" => {
                d.check_keys(&["shape", "rate", "scale"])?;
                Self::Gamma(Gamma::new(d.scale_key("shape", d.shape)?, d.rate()?).map_err(e)?)
            }
            "beta" => {
                d.check_keys(&["a", "b"])?;
                Self::Beta(Beta::new(d.scale_key("a", d.a)?, d.scale_key("b", d.b)?).map_err(e)?)
            }
            "exponential" => {
                d.check_keys(&["rate", "scale"])?;
                Self::Exponential(Exponential::new(d.rate()?).map_err(e)?)
            }
            "dirichlet" => {
                d.check_keys(&["k", "a"])?;
                let k = d.k.ok_or_else(|| {
                    err!(key = "model.prior"; "model.prior {:?} (dirichlet): `k` is required", d.name)
                })?;
                Self::Dirichlet(
                    Dirichlet::new(k, d.scale_key("a", Some(d.a.unwrap_or(1.0)))?).map_err(e)?,
                )
            }
            other => bail!(
                key = "model.prior";
                "model.prior {:?}: unknown dist {other:?} (expected uniform, normal, \
                 truncated-normal, log-normal, gamma, beta, exponential, dirichlet)",
                d.name
            ),
        })
    }
}

/// The product prior and parameter names of `[[model.prior]]` tables.
///
/// # Errors
/// No tables, invalid tables, repeated names.
pub fn build_prior(decls: &[PriorDecl]) -> Result<(DeclaredPrior, Vec<String>)> {
    if decls.is_empty() {
        // (keyless as it has always been: `config_key()` of this error is `None`)
        bail!("a command model needs its prior: one [[model.prior]] table per parameter");
    }
    let mut blocks = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for d in decls {
        if d.name.is_empty()
            || !d
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            bail!(
                key = "model.prior";
                "model.prior name {:?}: use letters, digits and _ only",
                d.name
            );
        }
        let (b, n) = (Marginal::try_from(d)?, d.names());
        for x in &n {
            if !seen.insert(x.clone()) || x == "row" || x == "seed" {
                bail!(key = "model.prior"; "model.prior name {x:?} is repeated or reserved");
            }
        }
        blocks.push(b);
        names.extend(n);
    }
    let p =
        DeclaredPrior::new(blocks).map_err(|e| err!(key = "model.prior"; "model.prior: {e}"))?;
    Ok((p, names))
}
