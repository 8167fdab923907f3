//! `[[model.prior]]` tables (one per parameter, or a Dirichlet block) as the library's
//! declared prior (`dpinfer::simulators::prior`); this module only reads the tables.

use anyhow::{Context, Result, bail};
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
        v.with_context(|| {
            format!(
                "model.prior {:?} ({}): `{key}` is required",
                self.name, self.dist
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
                    "model.prior {:?}: `{key}` does not apply to dist = {:?} (keys: {})",
                    self.name,
                    self.dist,
                    allowed.join(", ")
                );
            }
        }
        Ok(())
    }

    fn rate(&self) -> Result<f64> {
        match (self.rate, self.scale) {
            (Some(r), None) => Ok(r),
            (None, Some(s)) if s.is_finite() && s > 0.0 => Ok(1.0 / s),
            (None, Some(s)) => bail!("model.prior {:?}: scale must be > 0, got {s}", self.name),
            _ => bail!(
                "model.prior {:?} ({}): give exactly one of `rate` and `scale`",
                self.name,
                self.dist
            ),
        }
    }

    /// The library block and its parameter names.
    ///
    /// # Errors
    /// Unknown distribution, missing or foreign keys, invalid values (named).
    pub fn build(&self) -> Result<(Marginal, Vec<String>)> {
        let e =
            |err: SimError| anyhow::anyhow!("model.prior {:?} ({}): {err}", self.name, self.dist);
        let one = vec![self.name.clone()];
        Ok(match self.dist.as_str() {
            "uniform" => {
                self.check_keys(&["lo", "hi"])?;
                let u = Uniform::new(self.need("lo", self.lo)?, self.need("hi", self.hi)?)
                    .map_err(e)?;
                (Marginal::Uniform(u), one)
            }
            "normal" => {
                self.check_keys(&["mean", "sd"])?;
                let n = Normal::new(self.need("mean", self.mean)?, self.need("sd", self.sd)?)
                    .map_err(e)?;
                (Marginal::Normal(n), one)
            }
            "truncated-normal" => {
                self.check_keys(&["mean", "sd", "lo", "hi"])?;
                let t = TruncatedNormal::new(
                    self.need("mean", self.mean)?,
                    self.need("sd", self.sd)?,
                    self.lo.unwrap_or(f64::NEG_INFINITY),
                    self.hi.unwrap_or(f64::INFINITY),
                )
                .map_err(e)?;
                (Marginal::TruncatedNormal(t), one)
            }
            "log-normal" => {
                self.check_keys(&["mu", "sigma"])?;
                let l = LogNormal::new(self.need("mu", self.mu)?, self.need("sigma", self.sigma)?)
                    .map_err(e)?;
                (Marginal::LogNormal(l), one)
            }
            "gamma" => {
                self.check_keys(&["shape", "rate", "scale"])?;
                let g = Gamma::new(self.need("shape", self.shape)?, self.rate()?).map_err(e)?;
                (Marginal::Gamma(g), one)
            }
            "beta" => {
                self.check_keys(&["a", "b"])?;
                let b = Beta::new(self.need("a", self.a)?, self.need("b", self.b)?).map_err(e)?;
                (Marginal::Beta(b), one)
            }
            "exponential" => {
                self.check_keys(&["rate", "scale"])?;
                let x = Exponential::new(self.rate()?).map_err(e)?;
                (Marginal::Exponential(x), one)
            }
            "dirichlet" => {
                self.check_keys(&["k", "a"])?;
                let k = self.k.with_context(|| {
                    format!("model.prior {:?} (dirichlet): `k` is required", self.name)
                })?;
                let d = Dirichlet::new(k, self.a.unwrap_or(1.0)).map_err(e)?;
                (
                    Marginal::Dirichlet(d),
                    (1..=k).map(|i| format!("{}{i}", self.name)).collect(),
                )
            }
            other => bail!(
                "model.prior {:?}: unknown dist {other:?} (expected uniform, normal, \
                 truncated-normal, log-normal, gamma, beta, exponential, dirichlet)",
                self.name
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
        bail!("a command model needs its prior: one [[model.prior]] table per parameter");
    }
    let mut blocks = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for d in decls {
        if d.name.is_empty()
            || !d
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            bail!(
                "model.prior name {:?}: use letters, digits and _ only",
                d.name
            );
        }
        let (b, n) = d.build()?;
        for x in &n {
            if names.contains(x) || x == "row" || x == "seed" {
                bail!("model.prior name {x:?} is repeated or reserved");
            }
        }
        blocks.push(b);
        names.extend(n);
    }
    let p = DeclaredPrior::new(blocks).map_err(|e| anyhow::anyhow!("model.prior: {e}"))?;
    Ok((p, names))
}
