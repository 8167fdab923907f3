//! `[model.summary]`: the table of a command model's declared summary statistics and its
//! conversion into the library's [`SummarySpec`] / [`DeclaredSummary`]
//! (`dpinfer::simulators::summaries`), which proves the sensitivity of library summaries and
//! labels a user-declared one.

use crate::error::{Result, bail, err};
use dpinfer::distances::Neighbouring;
pub use dpinfer::simulators::summaries::{
    DeclaredSummary, PROVEN_RELATION, USER_ADD_REMOVE, USER_REPLACE_ONE,
};
use dpinfer::simulators::summaries::{OwnedSummaryKind, SummaryError, SummarySpec};
use serde::{Deserialize, Serialize};

/// `[model.summary]` of a command model: the summary statistics the `l2` distance compares.
///
/// * `kind = "identity" | "mean" | "quantiles" | "lag-products"`: a library summary
///   (`dpinfer::simulators::summaries::ClippedSummary`) of the simulator's `outputs` scalar values and of the observed data
///   (the data file then holds the raw observations), every value clipped to the declared
///   `[lo, hi]`; its replace-one L2 sensitivity is **proven** by the library. A `sensitivity`
///   given as well is checked: one below the proven bound is refused.
/// * `kind = "simulator"`: the simulator's outputs are the summary already (the data file
///   holds the observed summary; with `observed = "raw"` it holds the raw observations, and
///   the worker summarises them by the same code as its simulations). Without `sensitivity` the distance's clip C is its
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
    /// simulator: what the data file holds — `"summary"` (the default: the observed summary)
    /// or `"raw"` (the raw observations, which the worker summarises with the function it
    /// applies to its simulations: `dpinfer_workers::Pool::summarise`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
}

impl SummaryDecl {
    /// Whether the worker summarises the observed data (`kind = "simulator"`,
    /// `observed = "raw"`).
    #[must_use]
    pub fn worker_summarises_data(&self) -> bool {
        self.kind == "simulator" && self.observed.as_deref() == Some("raw")
    }
}

/// The library declaration of a `[model.summary]` table: checks which keys belong to the kind
/// and that a user-declared sensitivity names its relation.
impl TryFrom<&SummaryDecl> for SummarySpec {
    type Error = crate::Error;
    fn try_from(decl: &SummaryDecl) -> Result<Self> {
        let k = decl.kind.as_str();
        let given = |key: &str, set: bool| -> Result<()> {
            if set {
                bail!(key = "model.summary"; "model.summary: `{key}` does not apply to kind = {k:?}");
            }
            Ok(())
        };
        if k == "simulator" {
            given("lo", decl.lo.is_some())?;
            given("hi", decl.hi.is_some())?;
            given("levels", decl.levels.is_some())?;
            given("lags", decl.lags.is_some())?;
            match decl.observed.as_deref() {
                None | Some("raw" | "summary") => {}
                Some(o) => bail!(
                    key = "model.summary.observed";
                    "model.summary.observed = {o:?} (expected \"raw\": the worker summarises \
                     the data file, or \"summary\": the data file holds the summary)"
                ),
            }
            let declared = match (decl.sensitivity, decl.relation.as_deref()) {
                (None, None) => None,
                (Some(v), Some("replace-one")) => Some((v, Neighbouring::ReplaceOne)),
                (Some(v), Some("add-remove")) => Some((v, Neighbouring::AddRemove)),
                (Some(_), None) => bail!(
                    key = "model.summary.sensitivity";
                    "model.summary.sensitivity is user-declared: say under which neighbouring \
                     relation it holds, relation = \"replace-one\" or \"add-remove\""
                ),
                (None, Some(_)) => {
                    bail!(
                        key = "model.summary.relation";
                        "model.summary.relation belongs with a declared sensitivity"
                    )
                }
                (Some(_), Some(r)) => bail!(
                    key = "model.summary.relation";
                    "model.summary.relation = {r:?} (expected \"replace-one\" or \"add-remove\")"
                ),
            };
            return Ok(Self::Simulator { declared });
        }
        given("relation", decl.relation.is_some())?;
        // a library summary always summarises the raw data itself
        given("observed", decl.observed.is_some())?;
        given("levels", k != "quantiles" && decl.levels.is_some())?;
        given("lags", k != "lag-products" && decl.lags.is_some())?;
        let kind = match k {
            "identity" => OwnedSummaryKind::Identity,
            "mean" => OwnedSummaryKind::Mean,
            "quantiles" => OwnedSummaryKind::Quantiles(
                decl.levels.clone().ok_or_else(|| {
                    err!(key = "model.summary"; "model.summary: `levels` is required for quantiles")
                })?,
            ),
            "lag-products" => OwnedSummaryKind::LagProducts(
                decl.lags.clone().ok_or_else(|| {
                    err!(key = "model.summary"; "model.summary: `lags` is required for lag-products")
                })?,
            ),
            other => bail!(
                key = "model.summary.kind";
                "model.summary.kind {other:?}: expected identity, mean, quantiles, \
                 lag-products (library summaries with a proven sensitivity) or simulator"
            ),
        };
        Ok(Self::Clipped {
            kind,
            lo: decl.lo.ok_or_else(|| {
                err!(key = "model.summary"; "model.summary: `lo` (clip of each observation) is required")
            })?,
            hi: decl.hi.ok_or_else(|| {
                err!(key = "model.summary"; "model.summary: `hi` (clip of each observation) is required")
            })?,
            sensitivity: decl.sensitivity,
        })
    }
}

/// Validates `decl` for `raw_len` outputs of dimension `row_dim` per observation.
///
/// # Errors
/// Unknown kind, missing or foreign keys, invalid clip, levels or lags, too few
/// observations, a checked sensitivity below the proven one, an invalid declared one.
pub fn build(decl: &SummaryDecl, raw_len: usize, row_dim: usize) -> Result<DeclaredSummary> {
    let spec = SummarySpec::try_from(decl)?;
    // A lag products summary needs more observations than its largest lag: said here with
    // the key and its bound (the library can only name the observation count).
    if let Some(&h) = decl.lags.as_ref().and_then(|l| l.iter().max())
        && h >= raw_len
    {
        bail!(
            key = "model.summary.lags";
            "model.summary.lags: lag {h} is not below the {raw_len} observations of a \
             simulation (model.outputs = {raw_len}); every lag must be at most {}",
            raw_len.saturating_sub(1)
        );
    }
    DeclaredSummary::new(spec, raw_len, row_dim).map_err(|e| {
        // The key is the one the library's error is about: a declared sensitivity, or the
        // summary table as a whole (its kind and clip, the model's row dimension).
        let key = match e {
            SummaryError::InvalidSensitivity(_) | SummaryError::BelowProven { .. } => {
                "model.summary.sensitivity"
            }
            _ => "model.summary",
        };
        err!(key = key; "model.{e}")
    })
}

#[cfg(test)]
mod tests {
    use super::SummaryDecl;

    fn decl(text: &str) -> crate::Result<SummaryDecl> {
        let d: SummaryDecl = toml::from_str(text)?;
        super::build(&d, 10, 1)?;
        Ok(d)
    }

    /// Issue 31, item 3: `observed = "raw"` has the worker summarise the data file; it belongs
    /// to `kind = "simulator"` only (a library summary summarises the raw data itself).
    #[test]
    fn observed_raw_belongs_to_the_simulator_summary() {
        assert!(
            decl("kind = \"simulator\"\nobserved = \"raw\"")
                .unwrap()
                .worker_summarises_data()
        );
        assert!(
            !decl("kind = \"simulator\"\nobserved = \"summary\"")
                .unwrap()
                .worker_summarises_data()
        );
        assert!(
            !decl("kind = \"simulator\"")
                .unwrap()
                .worker_summarises_data()
        );
        let e = decl("kind = \"simulator\"\nobserved = \"cooked\"").unwrap_err();
        assert!(format!("{e:#}").contains("model.summary.observed"), "{e:#}");
        let e = decl("kind = \"mean\"\nlo = 0.0\nhi = 1.0\nobserved = \"raw\"").unwrap_err();
        assert!(
            format!("{e:#}").contains("`observed` does not apply"),
            "{e:#}"
        );
    }
}
