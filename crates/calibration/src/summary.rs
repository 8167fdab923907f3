//! One summary of a calibration run and its verdict.

use alloc::vec::Vec;
use core::fmt;

use dpinfer_math::check;

use crate::CalibrationError;
use crate::engine::ReplicateResult;
use crate::stats::{
    EcdfBand, EcdfTest, central_coverage, dispersion, holm, rank_histogram, tarp_curve,
};

/// The fewest replicates a summary accepts.
pub const MIN_REPLICATES: usize = 10;

/// The central-interval levels whose coverage a summary reports.
pub const COVERAGE_LEVELS: [f64; 4] = [0.5, 0.8, 0.9, 0.95];

/// How to summarise: the family-wise test level, the band's level and simulations, bins.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SummaryOptions {
    /// Family-wise level α of the uniformity tests after Holm's adjustment (default 0.05).
    pub alpha: f64,
    /// Simultaneous level of the plotted ECDF band (default 0.95).
    pub band_level: f64,
    /// Simulations of the band's null distribution, also the tests' Monte Carlo p-values
    /// (default 1000: p-values resolve down to 1/1001).
    pub band_sims: u32,
    /// Seed of the band simulations (public; default 0).
    pub band_seed: u64,
    /// Rank-histogram bins (a divisor of L + 1); `None`: the largest divisor of L + 1 that is
    /// at most 20 and at most K/5 (at least 1).
    pub bins: Option<u32>,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        Self {
            alpha: 0.05,
            band_level: 0.95,
            band_sims: 1000,
            band_seed: 0,
            bins: None,
        }
    }
}

/// A parameter's (or TARP's) state after the tests.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Status {
    /// Uniformity not rejected.
    Pass,
    /// Rejected with θ too often central: the posterior is too wide (conservative).
    OverDispersed,
    /// Rejected with θ too often in the tails: the posterior is too narrow or biased.
    OverConfident,
}

/// One uniformity test with its multiple-testing adjustment and direction.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Uniformity {
    /// The ECDF test (statistic, Monte Carlo p-value, band membership, ECDF difference).
    pub test: EcdfTest,
    /// Holm-adjusted p-value over all the run's tests.
    pub p_holm: f64,
    /// [`dispersion`](crate::dispersion) of the ranks (positive: tails, negative: centre).
    pub dispersion: f64,
    /// The outcome.
    pub status: Status,
}

/// One coordinate of θ.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ParameterSummary {
    /// Rank histogram (bins of equal probability under calibration).
    pub histogram: Vec<u64>,
    /// The uniformity test of the ranks.
    pub uniformity: Uniformity,
    /// `(level, empirical coverage)` of the central credible intervals at [`COVERAGE_LEVELS`].
    pub coverage: Vec<(f64, f64)>,
}

/// TARP's expected coverage.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TarpSummary {
    /// `(credibility, expected coverage)` ([`tarp_curve`](crate::tarp_curve)).
    pub curve: Vec<(f64, f64)>,
    /// The uniformity test of the TARP ranks (equivalent to testing the curve against the
    /// diagonal with the same simultaneous band).
    pub uniformity: Uniformity,
}

/// The verdict on a run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Verdict {
    /// No test rejected uniformity at the family-wise level.
    Calibrated,
    /// Some test rejected, none over-confident: credible intervals too wide (conservative).
    OverDispersed,
    /// Some test rejected with θ in the tails: credible intervals too narrow (or biased) —
    /// they cover less than they claim. The dangerous direction.
    OverConfident,
}

impl Verdict {
    /// `true` for [`Verdict::OverConfident`] (print it as a warning).
    #[must_use]
    pub const fn is_warning(self) -> bool {
        matches!(self, Self::OverConfident)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Calibrated => "calibrated",
            Self::OverDispersed => "over-dispersed (conservative)",
            Self::OverConfident => "over-confident",
        })
    }
}

/// Everything a calibration run reports.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Summary {
    /// K, the number of replicates.
    pub replicates: usize,
    /// L, draws per replicate.
    pub draws: u32,
    /// The options used.
    pub options: SummaryOptions,
    /// The simultaneous band as ECDF-difference limits `(z, lower, upper)`.
    pub band: Vec<(f64, f64, f64)>,
    /// Per coordinate of θ.
    pub parameters: Vec<ParameterSummary>,
    /// TARP.
    pub tarp: TarpSummary,
    /// The verdict.
    pub verdict: Verdict,
}

fn default_bins(draws: u32, replicates: usize) -> u32 {
    let cap = u32::try_from(replicates / 5)
        .unwrap_or(u32::MAX)
        .clamp(1, 20);
    let values = u64::from(draws) + 1;
    (1..=cap)
        .rev()
        .find(|&b| values % u64::from(b) == 0)
        .unwrap_or(1)
}

impl Summary {
    /// Summarises `results` (one per replicate, e.g. from [`merge`](crate::merge)).
    ///
    /// The rule: each coordinate's ranks and the TARP ranks get the ECDF test; the `d + 1`
    /// p-values are adjusted by Holm; a test rejects when its adjusted p-value is ≤ α. A
    /// rejected test is over-confident when its [`dispersion`](crate::dispersion) is positive,
    /// over-dispersed otherwise. The verdict is over-confident if any test is, else
    /// over-dispersed if any test rejected, else calibrated.
    ///
    /// # Errors
    /// [`CalibrationError::TooFewReplicates`] below [`MIN_REPLICATES`];
    /// [`CalibrationError::Mismatch`] for results of different shapes;
    /// [`CalibrationError::Conflict`] for a replicate given twice (merge shards with
    /// [`merge`](crate::merge) first);
    /// [`CalibrationError::InvalidParameter`] / [`CalibrationError::InvalidSize`] for bad
    /// options (α or the band level outside (0, 1), no simulations, bins not dividing L + 1),
    /// a rank above L, or `L·(K + 1)` above [`MAX_BAND_CELLS`](crate::MAX_BAND_CELLS).
    pub fn new(
        results: &[ReplicateResult],
        options: &SummaryOptions,
    ) -> Result<Self, CalibrationError> {
        if results.len() < MIN_REPLICATES {
            return Err(CalibrationError::TooFewReplicates {
                needed: MIN_REPLICATES,
                found: results.len(),
            });
        }
        let alpha = check::open_unit("alpha", options.alpha)?;
        let draws = results[0].draws;
        let dim = results[0].ranks.len();
        if results.iter().any(|r| r.draws != draws) {
            return Err(CalibrationError::Mismatch { what: "draws" });
        }
        if dim == 0
            || results
                .iter()
                .any(|r| r.ranks.len() != dim || r.mass_above.len() != dim)
        {
            return Err(CalibrationError::Mismatch { what: "dim" });
        }
        let mut indices: Vec<u64> = results.iter().map(|r| r.index).collect();
        indices.sort_unstable();
        if let Some(w) = indices.windows(2).find(|w| w[0] == w[1]) {
            return Err(CalibrationError::Conflict { index: w[0] });
        }
        let k = u32::try_from(results.len()).map_err(|_| CalibrationError::InvalidSize {
            name: "replicates",
            value: u64::try_from(results.len()).unwrap_or(u64::MAX),
        })?;
        let bins = options
            .bins
            .unwrap_or_else(|| default_bins(draws, results.len()));
        let band = EcdfBand::new(
            k,
            draws,
            options.band_level,
            options.band_sims,
            options.band_seed,
        )?;

        let mut tests = Vec::with_capacity(dim + 1);
        let mut disp = Vec::with_capacity(dim + 1);
        let mut histograms = Vec::with_capacity(dim);
        let mut coverage = Vec::with_capacity(dim);
        for j in 0..dim {
            let ranks: Vec<u32> = results.iter().map(|r| r.ranks[j]).collect();
            let mass: Vec<f64> = results.iter().map(|r| r.mass_above[j]).collect();
            histograms.push(rank_histogram(&ranks, draws, bins)?);
            let mut cov = Vec::with_capacity(COVERAGE_LEVELS.len());
            for level in COVERAGE_LEVELS {
                cov.push((level, central_coverage(&mass, level)?));
            }
            coverage.push(cov);
            disp.push(dispersion(&ranks, draws));
            tests.push(band.test(&ranks)?);
        }
        let tarp_ranks: Vec<u32> = results.iter().map(|r| r.tarp_rank).collect();
        disp.push(dispersion(&tarp_ranks, draws));
        tests.push(band.test(&tarp_ranks)?);

        let p: Vec<f64> = tests.iter().map(|t| t.p_value).collect();
        let adjusted = holm(&p)?;
        let mut uniformity: Vec<Uniformity> = tests
            .into_iter()
            .zip(adjusted)
            .zip(disp)
            .map(|((test, p_holm), dispersion)| {
                let status = if p_holm > alpha {
                    Status::Pass
                } else if dispersion > 0.0 {
                    Status::OverConfident
                } else {
                    Status::OverDispersed
                };
                Uniformity {
                    test,
                    p_holm,
                    dispersion,
                    status,
                }
            })
            .collect();
        let verdict = if uniformity.iter().any(|u| u.status == Status::OverConfident) {
            Verdict::OverConfident
        } else if uniformity.iter().any(|u| u.status == Status::OverDispersed) {
            Verdict::OverDispersed
        } else {
            Verdict::Calibrated
        };
        let tarp_uniformity = uniformity
            .pop()
            .ok_or(CalibrationError::Mismatch { what: "dim" })?;
        let parameters = histograms
            .into_iter()
            .zip(uniformity)
            .zip(coverage)
            .map(|((histogram, uniformity), coverage)| ParameterSummary {
                histogram,
                uniformity,
                coverage,
            })
            .collect();
        Ok(Self {
            replicates: results.len(),
            draws,
            options: options.clone(),
            band: band.limits(),
            parameters,
            tarp: TarpSummary {
                curve: tarp_curve(&tarp_ranks, draws)?,
                uniformity: tarp_uniformity,
            },
            verdict,
        })
    }

    /// The test with the smallest Holm-adjusted p-value: `Some(j)` for coordinate `j`, `None`
    /// for TARP.
    #[must_use]
    pub fn worst(&self) -> (Option<usize>, &Uniformity) {
        let mut best = (None, &self.tarp.uniformity);
        for (j, p) in self.parameters.iter().enumerate() {
            if p.uniformity.p_holm < best.1.p_holm {
                best = (Some(j), &p.uniformity);
            }
        }
        best
    }
}

impl Summary {
    /// The verdict line naming the parameters: `names[j]` for coordinate `j` (the model's
    /// declared names), `θ[j]` when `names` does not give one non-empty name per coordinate.
    /// `Display` is this with no names.
    #[must_use]
    pub fn named<'a, S: AsRef<str>>(&'a self, names: &'a [S]) -> Named<'a, S> {
        Named {
            summary: self,
            names,
        }
    }
}

/// The verdict line of a [`Summary`] with the parameters' names ([`Summary::named`]).
#[derive(Clone, Copy, Debug)]
pub struct Named<'a, S> {
    summary: &'a Summary,
    names: &'a [S],
}

impl<S: AsRef<str>> fmt::Display for Named<'_, S> {
    /// The one verdict line, e.g. `WARNING: over-confident (mu: Holm-adjusted p = 0.003,
    /// K = 100, L = 19)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.summary;
        let (which, u) = s.worst();
        if s.verdict.is_warning() {
            f.write_str("WARNING: ")?;
        }
        write!(f, "{}", s.verdict)?;
        if s.verdict.is_warning() {
            f.write_str(": credible intervals are too narrow and cover less than they claim")?;
        }
        f.write_str(" (worst: ")?;
        let named = self.names.len() == s.parameters.len()
            && self.names.iter().all(|n| !n.as_ref().is_empty());
        match which {
            Some(j) if named => f.write_str(self.names[j].as_ref())?,
            Some(j) => write!(f, "θ[{j}]")?,
            None => f.write_str("TARP")?,
        }
        write!(
            f,
            ", Holm-adjusted p = {:.3}; K = {}, L = {})",
            u.p_holm, s.replicates, s.draws
        )
    }
}

impl fmt::Display for Summary {
    /// The one verdict line with coordinates as `θ[j]`, e.g. `WARNING: over-confident (θ[0]:
    /// Holm-adjusted p = 0.003, K = 100, L = 19)`; [`Summary::named`] names them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.named::<&str>(&[]).fmt(f)
    }
}
