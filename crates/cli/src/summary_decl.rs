//! `[model.summary]`: declared summary statistics of an external simulator's outputs, with the
//! sensitivity the library proves for them (or the user's declared one, labelled as such).

use anyhow::{Context, Result, bail};
use dpinfer::simulators::summaries::{ClippedSummary, SummaryKind, SummarySensitivity};
use serde::{Deserialize, Serialize};

/// `[model.summary]` of a command model: the summary statistics the `l2` distance compares.
///
/// * `kind = "identity" | "mean" | "quantiles" | "lag-products"`: a library summary
///   ([`ClippedSummary`]) of the simulator's `outputs` scalar values and of the observed data
///   (the data file then holds the raw observations), every value clipped to the declared
///   `[lo, hi]`; its replace-one L2 sensitivity is **proven** by the library. A `sensitivity`
///   given as well is checked: one below the proven bound is refused.
/// * `kind = "simulator"`: the simulator's outputs are the summary already (the data file
///   holds the observed summary). Without `sensitivity` the distance's clip C is its
///   sensitivity (it holds for any pair of data sets); with `sensitivity` (the summary's L2
///   sensitivity) and `relation`, that **user-declared** value is used and labelled so in the
///   ledger — dpinfer cannot check it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SummaryDecl {
    /// `identity`, `mean`, `quantiles`, `lag-products` or `simulator`.
    pub kind: String,
    /// Library summaries: lower clipping bound of every observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    /// Library summaries: upper clipping bound of every observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    /// quantiles: levels in (0, 1], increasing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<Vec<f64>>,
    /// lag-products: lags, increasing (0 = mean square).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lags: Option<Vec<usize>>,
    /// L2 sensitivity of the summary vector (simulator: user-declared; library: checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<f64>,
    /// simulator with `sensitivity`: the neighbouring relation it holds under,
    /// `replace-one` or `add-remove`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
}

/// Ledger label of a proven library-summary sensitivity.
pub const PROVEN_RELATION: &str = "replace-one (one observation of Y* changed; Δ proven from \
     the declared summary and its clip [lo, hi], ×√max w, capped at C)";
/// Ledger label of a user-declared replace-one sensitivity.
pub const USER_REPLACE_ONE: &str = "USER-DECLARED replace-one (one observation of Y* \
     changed; the summary's Δ₂ in model.summary is the user's claim, not checked by dpinfer)";
/// Ledger label of a user-declared add/remove sensitivity.
pub const USER_ADD_REMOVE: &str = "USER-DECLARED add/remove (one observation of Y* added or \
     removed; the summary's Δ₂ in model.summary is the user's claim, not checked by dpinfer)";

/// A validated `[model.summary]` for a simulator with `raw_len` scalar outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredSummary {
    decl: SummaryDecl,
    raw_len: usize,
}

impl DeclaredSummary {
    /// Validates `decl` for `raw_len` outputs of dimension `row_dim` per observation.
    ///
    /// # Errors
    /// Unknown kind, missing or foreign keys, invalid clip, levels or lags, too few
    /// observations, a checked sensitivity below the proven one, an invalid declared one.
    pub fn build(decl: &SummaryDecl, raw_len: usize, row_dim: usize) -> Result<Self> {
        let d = Self {
            decl: decl.clone(),
            raw_len,
        };
        let k = decl.kind.as_str();
        let given = |key: &str, set: bool| -> Result<()> {
            if set {
                bail!("model.summary: `{key}` does not apply to kind = {k:?}");
            }
            Ok(())
        };
        if let Some(v) = decl.sensitivity
            && !(v.is_finite() && v > 0.0)
        {
            bail!("model.summary.sensitivity must be finite and > 0, got {v}");
        }
        match k {
            "simulator" => {
                given("lo", decl.lo.is_some())?;
                given("hi", decl.hi.is_some())?;
                given("levels", decl.levels.is_some())?;
                given("lags", decl.lags.is_some())?;
                match (&decl.sensitivity, decl.relation.as_deref()) {
                    (None, None) | (Some(_), Some("replace-one" | "add-remove")) => {}
                    (Some(_), None) => bail!(
                        "model.summary.sensitivity is user-declared: say under which \
                         neighbouring relation it holds, relation = \"replace-one\" or \
                         \"add-remove\""
                    ),
                    (None, Some(_)) => {
                        bail!("model.summary.relation belongs with a declared sensitivity")
                    }
                    (Some(_), Some(r)) => bail!(
                        "model.summary.relation = {r:?} (expected \"replace-one\" or \
                         \"add-remove\")"
                    ),
                }
            }
            "identity" | "mean" | "quantiles" | "lag-products" => {
                given("relation", decl.relation.is_some())?;
                given("levels", k != "quantiles" && decl.levels.is_some())?;
                given("lags", k != "lag-products" && decl.lags.is_some())?;
                if row_dim != 1 {
                    bail!(
                        "model.summary kind = {k:?} summarises scalar observations; the \
                         model's rows have dimension {row_dim}"
                    );
                }
                let s = d.library()?;
                let proven = s
                    .sensitivity(raw_len)
                    .map_err(|e| anyhow::anyhow!("model.summary ({k}, {raw_len} values): {e}"))?;
                if let Some(v) = decl.sensitivity
                    && v < proven.l2
                {
                    bail!(
                        "model.summary.sensitivity = {v} is below the proven replace-one L2 \
                         sensitivity {} of this summary over [{}, {}] with n = {raw_len}: it \
                         would under-report ε; leave it out to use the proven value",
                        proven.l2,
                        s_lo(decl),
                        s_hi(decl)
                    );
                }
            }
            other => bail!(
                "model.summary.kind {other:?}: expected identity, mean, quantiles, \
                 lag-products (library summaries with a proven sensitivity) or simulator"
            ),
        }
        Ok(d)
    }

    /// The library summary, `None` for `kind = "simulator"`.
    fn library(&self) -> Result<ClippedSummary<'_>> {
        let d = &self.decl;
        let lo =
            d.lo.context("model.summary: `lo` (clip of each observation) is required")?;
        let hi =
            d.hi.context("model.summary: `hi` (clip of each observation) is required")?;
        let kind = match d.kind.as_str() {
            "identity" => SummaryKind::Identity,
            "mean" => SummaryKind::Mean,
            "quantiles" => SummaryKind::Quantiles(
                d.levels
                    .as_deref()
                    .context("model.summary: `levels` is required for quantiles")?,
            ),
            "lag-products" => SummaryKind::LagProducts(
                d.lags
                    .as_deref()
                    .context("model.summary: `lags` is required for lag-products")?,
            ),
            other => bail!("model.summary kind {other:?} is not a library summary"),
        };
        ClippedSummary::new(kind, lo, hi)
            .map_err(|e| anyhow::anyhow!("model.summary ({}): {e}", d.kind))
    }

    fn is_library(&self) -> bool {
        self.decl.kind != "simulator"
    }

    /// Values per summary.
    #[must_use]
    pub fn output_len(&self) -> usize {
        if self.is_library() {
            self.library()
                .map_or(self.raw_len, |s| s.output_len(self.raw_len))
        } else {
            self.raw_len
        }
    }

    /// The summary of `raw` (the simulator's outputs, or the raw observed data): the library
    /// summary, or `raw` itself for `kind = "simulator"`.
    ///
    /// # Errors
    /// A length other than the simulator's output length; NaN values.
    pub fn compute(&self, raw: &[f64]) -> Result<Vec<f64>> {
        if raw.len() != self.raw_len {
            bail!(
                "{} values where the summary expects model.outputs = {}",
                raw.len(),
                self.raw_len
            );
        }
        if !self.is_library() {
            return Ok(raw.to_vec());
        }
        let s = self.library()?;
        let mut out = vec![0.0; s.output_len(raw.len())];
        let mut scratch = vec![0.0; raw.len()];
        s.compute(raw, &mut out, &mut scratch)
            .map_err(|e| anyhow::anyhow!("model.summary: {e}"))?;
        Ok(out)
    }

    /// Whether the data file holds raw observations (library summaries) rather than the
    /// observed summary itself.
    #[must_use]
    pub fn summarises_data(&self) -> bool {
        self.is_library()
    }

    /// Δ of the clipped weighted L2 distance to the observed summary and the ledger label of
    /// its neighbouring relation; `None` when the summary gives no bound beyond the clip C.
    ///
    /// # Errors
    /// Invalid weights or clip.
    pub fn distance_sensitivity(
        &self,
        weights: &[f64],
        clip: f64,
    ) -> Result<Option<(f64, &'static str)>> {
        let (l2, relation) = if self.is_library() {
            let proven = self
                .library()?
                .sensitivity(self.raw_len)
                .map_err(|e| anyhow::anyhow!("model.summary: {e}"))?;
            (
                self.decl.sensitivity.unwrap_or(proven.l2).max(proven.l2),
                PROVEN_RELATION,
            )
        } else {
            match (self.decl.sensitivity, self.decl.relation.as_deref()) {
                (Some(v), Some("replace-one")) => (v, USER_REPLACE_ONE),
                (Some(v), Some(_)) => (v, USER_ADD_REMOVE),
                _ => return Ok(None),
            }
        };
        // Only the L2 bound enters the distance's sensitivity.
        let s = SummarySensitivity {
            l1: f64::INFINITY,
            l2,
            relation: if relation == USER_ADD_REMOVE {
                "add-remove"
            } else {
                "replace-one"
            },
        };
        let d = s
            .clipped_weighted_l2(weights, clip)
            .map_err(|e| anyhow::anyhow!("distance: {e}"))?;
        Ok(Some((d, relation)))
    }
}

fn s_lo(d: &SummaryDecl) -> f64 {
    d.lo.unwrap_or(f64::NAN)
}
fn s_hi(d: &SummaryDecl) -> f64 {
    d.hi.unwrap_or(f64::NAN)
}
