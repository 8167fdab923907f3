//! A summary declared for a user's simulator ([`DeclaredSummary`]): either a library
//! [`ClippedSummary`] of the raw outputs, whose sensitivity the library **proves**, or the
//! simulator's own outputs taken as the summary, with an optional **user-declared** L2
//! sensitivity that is labelled as such (it cannot be checked). Error messages name the keys of a `summary` table
//! (`summary.sensitivity`), so a front end prefixes its own table path.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use dpinfer_distances::{Neighbouring, Relations, Sensitivity};

use super::{ClippedSummary, SummaryKind, SummarySensitivity};
use crate::error::SimError;

/// Ledger label of a proven library-summary sensitivity.
pub const PROVEN_RELATION: &str = "replace-one (one observation of Y* changed; Δ proven from \
     the declared summary and its clip [lo, hi], ×√max w, capped at C)";
/// Ledger label of a user-declared replace-one sensitivity.
pub const USER_REPLACE_ONE: &str = "USER-DECLARED replace-one (one observation of Y* \
     changed; the summary's Δ₂ in model.summary is the user's claim, not checked by dpinfer)";
/// Ledger label of a user-declared add/remove sensitivity.
pub const USER_ADD_REMOVE: &str = "USER-DECLARED add/remove (one observation of Y* added or \
     removed; the summary's Δ₂ in model.summary is the user's claim, not checked by dpinfer)";

/// An owned [`SummaryKind`] (levels and lags held by the summary).
#[derive(Clone, Debug, PartialEq)]
pub enum OwnedSummaryKind {
    /// The clipped values themselves.
    Identity,
    /// The mean of the clipped values.
    Mean,
    /// Empirical quantiles at these levels in (0, 1], strictly increasing.
    Quantiles(Vec<f64>),
    /// Uncentred lag products at these lags, strictly increasing (0 = mean square).
    LagProducts(Vec<usize>),
}

impl OwnedSummaryKind {
    /// The borrowed kind.
    #[must_use]
    pub fn as_kind(&self) -> SummaryKind<'_> {
        match self {
            Self::Identity => SummaryKind::Identity,
            Self::Mean => SummaryKind::Mean,
            Self::Quantiles(p) => SummaryKind::Quantiles(p),
            Self::LagProducts(h) => SummaryKind::LagProducts(h),
        }
    }

    /// `identity`, `mean`, `quantiles` or `lag-products`.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Identity => "identity",
            Self::Mean => "mean",
            Self::Quantiles(_) => "quantiles",
            Self::LagProducts(_) => "lag-products",
        }
    }
}

/// What a user declares about the summary statistics of a simulator with scalar outputs.
#[derive(Clone, Debug, PartialEq)]
pub enum SummarySpec {
    /// A library summary of the raw outputs (and of the raw observed data), every value
    /// clipped to `[lo, hi]`; its replace-one L2 sensitivity is proven. A `sensitivity` given
    /// as well is checked: one below the proven bound is refused (it would under-report ε),
    /// one above it is used (a conservative choice).
    Clipped {
        /// The statistic.
        kind: OwnedSummaryKind,
        /// Lower clipping bound of every observation.
        lo: f64,
        /// Upper clipping bound of every observation.
        hi: f64,
        /// Optional L2 sensitivity, checked against the proven one.
        sensitivity: Option<f64>,
    },
    /// The simulator's outputs are the summary already (the observed data are the observed
    /// summary). With `declared = Some((Δ₂, relation))` that **user-declared**, unchecked L2
    /// sensitivity is used and labelled so; without it only a distance's clip bounds the
    /// sensitivity.
    Simulator {
        /// The user's L2 sensitivity of the summary and the relation it holds under.
        declared: Option<(f64, Neighbouring)>,
    },
}

impl SummarySpec {
    /// `identity`, `mean`, `quantiles`, `lag-products` or `simulator`.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Clipped { kind, .. } => kind.name(),
            Self::Simulator { .. } => "simulator",
        }
    }
}

/// Why a [`DeclaredSummary`] was refused or failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SummaryError {
    /// A declared sensitivity that is not finite and > 0.
    InvalidSensitivity(f64),
    /// A library summary for observations of more than one value.
    NotScalar {
        /// The model's values per observation.
        row_dim: usize,
    },
    /// A declared sensitivity below the proven one (it would under-report ε).
    BelowProven {
        /// The declared L2 sensitivity.
        declared: f64,
        /// The proven replace-one L2 sensitivity.
        proven: f64,
        /// The clip's lower end.
        lo: f64,
        /// The clip's upper end.
        hi: f64,
        /// Observations per data set.
        n: usize,
    },
    /// Raw data of another length than the simulator's outputs.
    Length {
        /// Values given.
        got: usize,
        /// The simulator's raw outputs.
        expected: usize,
    },
    /// The library summary refused its settings or data (named by its kind).
    Summary {
        /// The summary's kind (`mean`, `quantiles`, …).
        kind: &'static str,
        /// The library's error.
        source: SimError,
    },
}

impl fmt::Display for SummaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidSensitivity(v) => {
                write!(f, "summary.sensitivity must be finite and > 0, got {v:?}")
            }
            Self::NotScalar { row_dim } => write!(
                f,
                "summary summarises scalar observations; the model's rows have dimension \
                 {row_dim}"
            ),
            Self::BelowProven {
                declared,
                proven,
                lo,
                hi,
                n,
            } => write!(
                f,
                "summary.sensitivity = {declared:?} is below the proven replace-one L2 \
                 sensitivity {proven:?} of this summary over [{lo:?}, {hi:?}] with n = {n}: it \
                 would under-report ε; leave it out to use the proven value"
            ),
            Self::Length { got, expected } => write!(
                f,
                "{got} values where the summary expects {expected} (the simulator's outputs)"
            ),
            Self::Summary { kind, source } => write!(f, "summary ({kind}): {source}"),
        }
    }
}

impl core::error::Error for SummaryError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Summary { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A validated [`SummarySpec`] for a simulator with `raw_len` scalar outputs: computes the
/// summary of every simulation and of the observed data, and the sensitivity of the clipped
/// weighted L2 distance to the observed summary, with the neighbouring relation it holds for
/// and a label for the ledger.
///
/// ```
/// use dpinfer_simulators::summaries::{
///     DeclaredSummary, OwnedSummaryKind, PROVEN_RELATION, SummarySpec,
/// };
/// // The mean of 50 observations clipped to [-3, 5]: Δ₂ = 8/50 proven.
/// let spec = SummarySpec::Clipped {
///     kind: OwnedSummaryKind::Mean,
///     lo: -3.0,
///     hi: 5.0,
///     sensitivity: None,
/// };
/// let s = DeclaredSummary::new(spec, 50, 1)?;
/// assert_eq!(s.output_len(), 1);
/// assert_eq!(s.compute(&[9.0; 50])?, vec![5.0]);
/// let delta = s.distance_sensitivity(&[1.0], 1.0)?.unwrap();
/// assert!((delta.value() - 0.16).abs() < 1e-15 && !delta.is_user_declared());
/// assert_eq!(DeclaredSummary::ledger_label(&delta), PROVEN_RELATION);
/// assert_eq!(delta.relation(), dpinfer_distances::Neighbouring::ReplaceOne);
/// # Ok::<(), dpinfer_simulators::summaries::SummaryError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DeclaredSummary {
    spec: SummarySpec,
    raw_len: usize,
}

impl DeclaredSummary {
    /// Validates `spec` for `raw_len` raw outputs, `row_dim` values per observation.
    ///
    /// # Errors
    /// [`SummaryError::InvalidSensitivity`] for a declared sensitivity that is not finite
    /// and positive; for a library summary [`SummaryError::NotScalar`] unless `row_dim == 1`,
    /// [`SummaryError::Summary`] for an invalid clip, levels or lags or too few observations,
    /// [`SummaryError::BelowProven`] for a declared sensitivity below the proven one.
    pub fn new(spec: SummarySpec, raw_len: usize, row_dim: usize) -> Result<Self, SummaryError> {
        let declared = match &spec {
            SummarySpec::Clipped { sensitivity, .. } => *sensitivity,
            SummarySpec::Simulator { declared } => declared.map(|d| d.0),
        };
        if let Some(v) = declared
            && !(v.is_finite() && v > 0.0)
        {
            return Err(SummaryError::InvalidSensitivity(v));
        }
        let d = Self { spec, raw_len };
        if let SummarySpec::Clipped {
            lo,
            hi,
            sensitivity,
            ..
        } = &d.spec
        {
            if row_dim != 1 {
                return Err(SummaryError::NotScalar { row_dim });
            }
            let proven = d.proven_l2()?;
            if let Some(v) = *sensitivity
                && v < proven
            {
                return Err(SummaryError::BelowProven {
                    declared: v,
                    proven,
                    lo: *lo,
                    hi: *hi,
                    n: raw_len,
                });
            }
        }
        Ok(d)
    }

    /// The declaration.
    #[must_use]
    pub const fn spec(&self) -> &SummarySpec {
        &self.spec
    }

    /// Raw outputs per simulation (and raw observed values, for a library summary).
    #[must_use]
    pub const fn raw_len(&self) -> usize {
        self.raw_len
    }

    fn library(&self) -> Result<Option<ClippedSummary<'_>>, SummaryError> {
        match &self.spec {
            SummarySpec::Clipped { kind, lo, hi, .. } => {
                ClippedSummary::new(kind.as_kind(), *lo, *hi)
                    .map(Some)
                    .map_err(|source| SummaryError::Summary {
                        kind: kind.name(),
                        source,
                    })
            }
            SummarySpec::Simulator { .. } => Ok(None),
        }
    }

    fn proven_l2(&self) -> Result<f64, SummaryError> {
        let Some(s) = self.library()? else {
            return Ok(f64::INFINITY);
        };
        s.sensitivity(self.raw_len)
            .map(|p| p.l2)
            .map_err(|source| SummaryError::Summary {
                kind: self.spec.name(),
                source,
            })
    }

    /// Values per summary.
    #[must_use]
    pub fn output_len(&self) -> usize {
        match self.library() {
            Ok(Some(s)) => s.output_len(self.raw_len),
            _ => self.raw_len,
        }
    }

    /// Whether the observed data are raw observations to summarise (library summaries)
    /// rather than the observed summary itself (`Simulator`).
    #[must_use]
    pub const fn summarises_data(&self) -> bool {
        matches!(self.spec, SummarySpec::Clipped { .. })
    }

    /// The summary of `raw` (the simulator's outputs, or the raw observed data): the library
    /// summary, or `raw` itself for [`SummarySpec::Simulator`].
    ///
    /// # Errors
    /// [`SummaryError::Length`] for a length other than `raw_len`;
    /// [`SummaryError::Summary`] for NaN values.
    pub fn compute(&self, raw: &[f64]) -> Result<Vec<f64>, SummaryError> {
        if raw.len() != self.raw_len {
            return Err(SummaryError::Length {
                got: raw.len(),
                expected: self.raw_len,
            });
        }
        let Some(s) = self.library()? else {
            return Ok(raw.to_vec());
        };
        let mut out = vec![0.0; s.output_len(raw.len())];
        let mut scratch = vec![0.0; raw.len()];
        s.compute(raw, &mut out, &mut scratch)
            .map_err(|source| SummaryError::Summary {
                kind: self.spec.name(),
                source,
            })?;
        Ok(out)
    }

    /// Δ of the clipped weighted L2 distance `min(C, d_w(s(x), s(y)))` to the observed
    /// summary ([`SummarySensitivity::clipped_weighted_l2`]) as a [`Sensitivity`] that carries
    /// its neighbouring relation (replace-one for a library summary, the declared one for a
    /// user's) and whether it rests on the user's word ([`Sensitivity::is_user_declared`]: a
    /// `Simulator` summary's declared Δ₂; a library summary's bound is the larger of the proven
    /// and a declared Δ₂, checked); [`DeclaredSummary::ledger_label`] says which in words.
    /// `None` when nothing beyond the clip C bounds it.
    ///
    /// # Errors
    /// [`SummaryError::Summary`] for no, negative or non-finite weights or a clip that is not
    /// finite and > 0.
    pub fn distance_sensitivity(
        &self,
        weights: &[f64],
        clip: f64,
    ) -> Result<Option<Sensitivity>, SummaryError> {
        let (l2, relation, user) = match &self.spec {
            SummarySpec::Clipped { sensitivity, .. } => {
                let proven = self.proven_l2()?;
                (
                    sensitivity.unwrap_or(proven).max(proven),
                    Neighbouring::ReplaceOne,
                    false,
                )
            }
            SummarySpec::Simulator {
                declared: Some((v, r)),
            } => (*v, *r, true),
            SummarySpec::Simulator { declared: None } => return Ok(None),
        };
        // Only the L2 bound enters the distance's sensitivity.
        let s = SummarySensitivity {
            l1: f64::INFINITY,
            l2,
            relation,
        };
        let d = s
            .clipped_weighted_l2(weights, clip)
            .map_err(|source| SummaryError::Summary {
                kind: "distance",
                source,
            })?;
        let relations = match relation {
            Neighbouring::ReplaceOne => Relations::REPLACE_ONE,
            Neighbouring::AddRemove => Relations::ADD_REMOVE,
        };
        let d = if user {
            Sensitivity::user_declared(d, relations)
        } else {
            Sensitivity::declared(d, relations)
        }
        .map_err(|_| SummaryError::InvalidSensitivity(d))?;
        Ok(Some(d))
    }

    /// The release ledger's words for the neighbouring relation of a distance sensitivity
    /// from [`DeclaredSummary::distance_sensitivity`], read from the value itself:
    /// [`USER_REPLACE_ONE`] / [`USER_ADD_REMOVE`] (by [`Sensitivity::relation`]) for a
    /// user-declared one, [`PROVEN_RELATION`] for a proven one.
    #[must_use]
    pub fn ledger_label(sensitivity: &Sensitivity) -> &'static str {
        match (sensitivity.is_user_declared(), sensitivity.relation()) {
            (false, _) => PROVEN_RELATION,
            (true, Neighbouring::ReplaceOne) => USER_REPLACE_ONE,
            (true, Neighbouring::AddRemove) => USER_ADD_REMOVE,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn clipped(kind: OwnedSummaryKind, sensitivity: Option<f64>) -> SummarySpec {
        SummarySpec::Clipped {
            kind,
            lo: -3.0,
            hi: 5.0,
            sensitivity,
        }
    }

    #[test]
    fn proven_sensitivity_of_a_mean_and_the_check_of_a_declared_one() {
        let s = DeclaredSummary::new(clipped(OwnedSummaryKind::Mean, None), 50, 1).unwrap();
        let d = s.distance_sensitivity(&[4.0], 10.0).unwrap().unwrap();
        // √4 · 8/50.
        assert!((d.value() - 0.32).abs() < 1e-15);
        assert!(!d.is_user_declared());
        assert_eq!(DeclaredSummary::ledger_label(&d), PROVEN_RELATION);
        assert_eq!(d.relations(), Relations::REPLACE_ONE);
        // Capped at the clip.
        assert_eq!(
            s.distance_sensitivity(&[4.0], 0.1)
                .unwrap()
                .unwrap()
                .value(),
            0.1
        );
        // Declared above the proven bound: used.
        let s = DeclaredSummary::new(clipped(OwnedSummaryKind::Mean, Some(0.5)), 50, 1).unwrap();
        assert_eq!(
            s.distance_sensitivity(&[1.0], 10.0)
                .unwrap()
                .unwrap()
                .value(),
            0.5
        );
        // Declared below: refused, naming the proven value.
        let e = DeclaredSummary::new(clipped(OwnedSummaryKind::Mean, Some(0.1)), 50, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("below the proven replace-one L2 sensitivity 0.16"),
            "{e}"
        );
    }

    #[test]
    fn user_declared_sensitivities_carry_their_relation() {
        for (r, label) in [
            (Neighbouring::ReplaceOne, USER_REPLACE_ONE),
            (Neighbouring::AddRemove, USER_ADD_REMOVE),
        ] {
            let s = DeclaredSummary::new(
                SummarySpec::Simulator {
                    declared: Some((0.01, r)),
                },
                3,
                1,
            )
            .unwrap();
            assert!(!s.summarises_data());
            assert_eq!(s.compute(&[1.0, 2.0, 3.0]).unwrap(), vec![1.0, 2.0, 3.0]);
            let d = s.distance_sensitivity(&[1.0; 3], 1.0).unwrap().unwrap();
            assert!(d.is_user_declared());
            let l = DeclaredSummary::ledger_label(&d);
            assert_eq!((d.value(), d.relation(), l), (0.01, r, label));
            // The value holds for the declared relation only.
            assert!(!d.holds_for(match r {
                Neighbouring::ReplaceOne => Neighbouring::AddRemove,
                Neighbouring::AddRemove => Neighbouring::ReplaceOne,
            }));
        }
        let s = DeclaredSummary::new(SummarySpec::Simulator { declared: None }, 3, 2).unwrap();
        assert_eq!(s.distance_sensitivity(&[1.0; 3], 1.0).unwrap(), None);
    }

    #[test]
    fn invalid_declarations_are_refused() {
        for v in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(
                DeclaredSummary::new(
                    SummarySpec::Simulator {
                        declared: Some((v, Neighbouring::ReplaceOne))
                    },
                    3,
                    1
                )
                .unwrap_err()
                .to_string(),
                SummaryError::InvalidSensitivity(v).to_string()
            );
        }
        assert_eq!(
            DeclaredSummary::new(clipped(OwnedSummaryKind::Identity, None), 4, 2),
            Err(SummaryError::NotScalar { row_dim: 2 })
        );
        let bad_clip = SummarySpec::Clipped {
            kind: OwnedSummaryKind::Quantiles(vec![0.5]),
            lo: 1.0,
            hi: -1.0,
            sensitivity: None,
        };
        let e = DeclaredSummary::new(bad_clip, 4, 1)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("summary (quantiles)"), "{e}");
        // Lag 4 needs more than 4 observations.
        assert!(
            DeclaredSummary::new(clipped(OwnedSummaryKind::LagProducts(vec![4]), None), 4, 1)
                .is_err()
        );
        let s = DeclaredSummary::new(clipped(OwnedSummaryKind::Identity, None), 4, 1).unwrap();
        assert_eq!(
            s.compute(&[1.0; 3]),
            Err(SummaryError::Length {
                got: 3,
                expected: 4
            })
        );
        assert!(s.compute(&[1.0, f64::NAN, 0.0, 0.0]).is_err());
        assert!(s.distance_sensitivity(&[], 1.0).is_err());
        assert!(s.distance_sensitivity(&[1.0], f64::NAN).is_err());
    }

    #[test]
    fn library_summaries_match_clipped_summary() {
        let levels = vec![0.25, 0.5, 1.0];
        let s = DeclaredSummary::new(
            clipped(OwnedSummaryKind::Quantiles(levels.clone()), None),
            8,
            1,
        )
        .unwrap();
        let raw = [9.0, -7.0, 0.5, 1.5, 2.0, -1.0, 4.0, 3.0];
        let lib = ClippedSummary::new(SummaryKind::Quantiles(&levels), -3.0, 5.0).unwrap();
        let mut want = [0.0; 3];
        lib.compute(&raw, &mut want, &mut [0.0; 8]).unwrap();
        assert_eq!(s.compute(&raw).unwrap(), want.to_vec());
        assert_eq!(s.output_len(), 3);
        assert_eq!(want, [-1.0, 1.5, 5.0]);
    }
}
