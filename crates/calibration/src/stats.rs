//! Statistics of a set of replicate results: rank histograms, the ECDF-difference test with
//! simultaneous bands, Holm's rule, TARP expected coverage, central-interval coverage and
//! the verdict.

use alloc::vec;
use alloc::vec::Vec;

use crate::CalibrationError;
use crate::engine::below;
use dpinfer_math::{check, ln_binomial_int};
use dpinfer_simulators::SimStream;

/// Domain of the band simulation's streams (`"SBCBAND"`); job id = simulation index.
pub const BAND_DOMAIN: u64 = 0x5342_4342_414e_4400;

/// `(P(X ≤ c), P(X ≥ c))` for `c = 0..=n`, `X ~ Binomial(n, p)`, `0 < p < 1`, each summed from
/// its own tail (no cancellation), capped at 1.
#[must_use]
pub fn binomial_tails(n: u32, p: f64) -> (Vec<f64>, Vec<f64>) {
    let (lp, lq) = (libm::log(p), libm::log1p(-p));
    let nn = u64::from(n);
    let pmf: Vec<f64> = (0..=nn)
        .map(|c| {
            #[allow(clippy::cast_precision_loss)]
            let (cf, rf) = (c as f64, (nn - c) as f64);
            libm::exp(ln_binomial_int(nn, c) + cf * lp + rf * lq)
        })
        .collect();
    let mut cdf = vec![0.0; pmf.len()];
    let mut acc = 0.0;
    for (c, &m) in pmf.iter().enumerate() {
        acc += m;
        cdf[c] = acc.min(1.0);
    }
    let mut sf = vec![0.0; pmf.len()];
    acc = 0.0;
    for (c, &m) in pmf.iter().enumerate().rev() {
        acc += m;
        sf[c] = acc.min(1.0);
    }
    (cdf, sf)
}

/// A histogram of ranks in `0..=draws` into `bins` equal bins (`bins` must divide `draws + 1`,
/// so every bin holds the same number of rank values and is equally likely when calibrated).
///
/// # Errors
/// [`CalibrationError::InvalidSize`] for `bins` of 0 or not dividing `draws + 1`, or a rank
/// above `draws`.
pub fn rank_histogram(ranks: &[u32], draws: u32, bins: u32) -> Result<Vec<u64>, CalibrationError> {
    let values = u64::from(draws) + 1;
    if bins == 0 || values % u64::from(bins) != 0 {
        return Err(CalibrationError::InvalidSize {
            name: "bins",
            value: u64::from(bins),
        });
    }
    let width = values / u64::from(bins);
    let mut h = vec![0u64; bins as usize];
    for &r in ranks {
        if r > draws {
            return Err(CalibrationError::InvalidSize {
                name: "rank",
                value: u64::from(r),
            });
        }
        #[allow(clippy::cast_possible_truncation)]
        let b = (u64::from(r) / width) as usize;
        h[b] += 1;
    }
    Ok(h)
}

/// Holm's step-down adjustment of `p` (Holm 1979): the adjusted p-values, in the input's
/// order; reject hypothesis `i` at family-wise level α iff `adjusted[i] ≤ α`.
///
/// # Errors
/// [`CalibrationError::InvalidParameter`] for a p-value outside `[0, 1]` or NaN.
pub fn holm(p: &[f64]) -> Result<Vec<f64>, CalibrationError> {
    for &v in p {
        check::probability("p_value", v)?;
    }
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (step, &i) in order.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let factor = (m - step) as f64;
        running = running.max((factor * p[i]).min(1.0));
        out[i] = running;
    }
    Ok(out)
}

/// The dispersion statistic of ranks in `0..=draws`: the mean of `|u − ½|` with
/// `u = (rank + ½)/(draws + 1)`, minus its value under uniform ranks (≈ ¼). Positive: θ sits in
/// the posterior's tails too often (posterior too narrow, or biased: over-confident); negative:
/// θ sits in the middle too often (posterior too wide: over-dispersed).
#[must_use]
pub fn dispersion(ranks: &[u32], draws: u32) -> f64 {
    let n = f64::from(draws) + 1.0;
    let dev = |r: u32| libm::fabs((f64::from(r) + 0.5) / n - 0.5);
    let expected = (0..=draws).map(dev).sum::<f64>() / n;
    if ranks.is_empty() {
        return 0.0;
    }
    #[allow(clippy::cast_precision_loss)]
    let k = ranks.len() as f64;
    ranks.iter().map(|&r| dev(r)).sum::<f64>() / k - expected
}

/// Empirical coverage of central credible intervals at `level`: the fraction of replicates
/// whose posterior mass above θₖ lies in `[(1 − level)/2, (1 + level)/2]`.
///
/// # Errors
/// [`CalibrationError::InvalidParameter`] for a level outside `(0, 1)`.
pub fn central_coverage(mass_above: &[f64], level: f64) -> Result<f64, CalibrationError> {
    let level = check::open_unit("level", level)?;
    if mass_above.is_empty() {
        return Ok(0.0);
    }
    let (lo, hi) = ((1.0 - level) / 2.0, (1.0 + level) / 2.0);
    let inside = mass_above.iter().filter(|&&m| m >= lo && m <= hi).count();
    #[allow(clippy::cast_precision_loss)]
    let frac = inside as f64 / mass_above.len() as f64;
    Ok(frac)
}

/// TARP's expected-coverage curve (Lemos et al. 2023) from the TARP ranks in `0..=draws`:
/// points `(a, ECP(a))` for credibility `a = j/(draws + 1)`, `j = 0..=draws + 1`, where `ECP(a)`
/// is the fraction of replicates whose TARP rank is below `j` (θₖ inside the credible ball of
/// level `a` around the reference point). Calibrated: `ECP(a) = a`. Over-confident posteriors
/// flatten the curve (the TARP ranks pile up at 0 and L: above the diagonal at low
/// credibility, below it — under-coverage — at high credibility); over-dispersed ones steepen
/// it (ranks in the middle: below at low credibility, above at high).
///
/// # Errors
/// [`CalibrationError::InvalidSize`] for `draws = u32::MAX` or a rank above `draws`.
pub fn tarp_curve(tarp_ranks: &[u32], draws: u32) -> Result<Vec<(f64, f64)>, CalibrationError> {
    if draws == u32::MAX {
        return Err(CalibrationError::InvalidSize {
            name: "draws",
            value: u64::from(draws),
        });
    }
    let n = u64::from(draws) + 1;
    let mut counts = vec![0u64; draws as usize + 1];
    for &r in tarp_ranks {
        let c = counts
            .get_mut(r as usize)
            .ok_or(CalibrationError::InvalidSize {
                name: "rank",
                value: u64::from(r),
            })?;
        *c += 1;
    }
    #[allow(clippy::cast_precision_loss)]
    let k = tarp_ranks.len().max(1) as f64;
    let mut out = Vec::with_capacity(counts.len() + 1);
    let mut below = 0u64;
    out.push((0.0, 0.0));
    for (j, &c) in counts.iter().enumerate() {
        below += c;
        #[allow(clippy::cast_precision_loss)]
        out.push(((j as f64 + 1.0) / n as f64, below as f64 / k));
    }
    Ok(out)
}

/// The largest binomial table [`EcdfBand::new`] builds: `L·(K + 1)` cells (two `f64` tables of
/// at most 2²⁴ cells, 256 MiB together).
pub const MAX_BAND_CELLS: u64 = 1 << 24;

/// The simultaneous confidence band of the rank ECDF (Säilynoja, Bürkner & Vehtari 2022,
/// the simulation method) for `K` replicates of ranks in `0..=L`, and the test it defines.
///
/// The ECDF is evaluated at `zᵢ = i/(L + 1)`, `i = 1..=L`, where uniform ranks have
/// `P(rank < i) = zᵢ` exactly; its count `cᵢ = #{rank < i}` is `Binomial(K, zᵢ)` at each point.
/// The statistic is `γ = minᵢ 2·min(P(X ≤ cᵢ), P(X ≥ cᵢ))`, `X ~ Binomial(K, zᵢ)`: the smallest
/// two-sided pointwise tail probability. Its null distribution is simulated from `sims` sets
/// of `K` uniform ranks on seeded public streams (`BAND_DOMAIN`, job = simulation index); the
/// band at `level` uses the threshold `γ̂`, the `⌊(1 − level)·sims⌋`-th smallest simulated γ
/// (0-based), and holds at each point the counts whose two tails both reach `γ̂/2`. The ECDF
/// stays in the band iff `γ ≥ γ̂`. The test's p-value is the Monte Carlo
/// `(1 + #{simulated γ ≤ γ})/(sims + 1)`.
#[derive(Clone, Debug, PartialEq)]
pub struct EcdfBand {
    replicates: u32,
    draws: u32,
    level: f64,
    /// `cdf[i][c]`, `sf[i][c]` at point `zᵢ₊₁`.
    cdf: Vec<Vec<f64>>,
    sf: Vec<Vec<f64>>,
    sims: Vec<f64>,
    threshold: f64,
    lower: Vec<u32>,
    upper: Vec<u32>,
}

impl EcdfBand {
    /// The band for `replicates` = K ≥ 1 replicates, ranks in `0..=draws`, at `level` (e.g.
    /// 0.95), from `sims ≥ 1` simulations seeded by `seed`. Memory and time `O(L·K)` for the
    /// binomial tables plus `O(sims·(K + L))`.
    ///
    /// # Errors
    /// [`CalibrationError::InvalidSize`] for 0 replicates, draws or simulations, or
    /// `L·(K + 1)` above [`MAX_BAND_CELLS`] (`"draws"`: use fewer draws or thin more);
    /// [`CalibrationError::InvalidParameter`] for a level outside `(0, 1)`.
    pub fn new(
        replicates: u32,
        draws: u32,
        level: f64,
        sims: u32,
        seed: u64,
    ) -> Result<Self, CalibrationError> {
        let level = check::open_unit("band_level", level)?;
        for (name, v) in [
            ("replicates", replicates),
            ("draws", draws),
            ("band_sims", sims),
        ] {
            if v == 0 || v == u32::MAX {
                return Err(CalibrationError::InvalidSize {
                    name,
                    value: u64::from(v),
                });
            }
        }
        if u64::from(draws) * (u64::from(replicates) + 1) > MAX_BAND_CELLS {
            return Err(CalibrationError::InvalidSize {
                name: "draws",
                value: u64::from(draws),
            });
        }
        let n = f64::from(draws) + 1.0;
        let (mut cdf, mut sf) = (Vec::new(), Vec::new());
        for i in 1..=draws {
            let (c, s) = binomial_tails(replicates, f64::from(i) / n);
            cdf.push(c);
            sf.push(s);
        }
        let mut band = Self {
            replicates,
            draws,
            level,
            cdf,
            sf,
            sims: Vec::new(),
            threshold: 0.0,
            lower: Vec::new(),
            upper: Vec::new(),
        };
        let mut ranks = vec![0u32; replicates as usize];
        let mut sims_gamma = Vec::with_capacity(sims as usize);
        for m in 0..sims {
            let mut rng = SimStream::with_domain(seed, BAND_DOMAIN, u64::from(m));
            for r in &mut ranks {
                *r = uniform_rank(&mut rng, draws);
            }
            sims_gamma.push(band.gamma(&band.counts(&ranks)));
        }
        sims_gamma.sort_by(f64::total_cmp);
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let at = (libm::floor((1.0 - level) * f64::from(sims)) as usize).min(sims as usize - 1);
        band.threshold = sims_gamma[at];
        band.sims = sims_gamma;
        let half = band.threshold / 2.0;
        for (c, s) in band.cdf.iter().zip(&band.sf) {
            let lo = c.iter().position(|&v| v >= half).unwrap_or(c.len() - 1);
            let hi = s.iter().rposition(|&v| v >= half).unwrap_or(0);
            #[allow(clippy::cast_possible_truncation)]
            {
                band.lower.push(lo as u32);
                band.upper.push(hi as u32);
            }
        }
        Ok(band)
    }

    /// `cᵢ = #{rank < i}` for `i = 1..=L`.
    fn counts(&self, ranks: &[u32]) -> Vec<u32> {
        let mut hist = vec![0u32; self.draws as usize + 1];
        for &r in ranks {
            hist[r as usize] += 1;
        }
        let mut out = Vec::with_capacity(self.draws as usize);
        let mut acc = 0u32;
        for &h in &hist[..self.draws as usize] {
            acc += h;
            out.push(acc);
        }
        out
    }

    fn gamma(&self, counts: &[u32]) -> f64 {
        let mut g: f64 = 1.0;
        for ((c, s), &k) in self.cdf.iter().zip(&self.sf).zip(counts) {
            let k = k as usize;
            g = g.min(2.0 * c[k].min(s[k]));
        }
        g
    }

    /// The threshold `γ̂`.
    #[must_use]
    pub const fn threshold(&self) -> f64 {
        self.threshold
    }

    /// The band's nominal simultaneous level.
    #[must_use]
    pub const fn level(&self) -> f64 {
        self.level
    }

    /// The band as ECDF-difference limits: `(zᵢ, lowerᵢ/K − zᵢ, upperᵢ/K − zᵢ)`, `i = 1..=L`.
    #[must_use]
    pub fn limits(&self) -> Vec<(f64, f64, f64)> {
        let n = f64::from(self.draws) + 1.0;
        let k = f64::from(self.replicates);
        (1..=self.draws)
            .zip(self.lower.iter().zip(&self.upper))
            .map(|(i, (&lo, &hi))| {
                let z = f64::from(i) / n;
                (z, f64::from(lo) / k - z, f64::from(hi) / k - z)
            })
            .collect()
    }

    /// The band as counts: `(lowerᵢ, upperᵢ)`, `i = 1..=L` (the ECDF count `cᵢ` may take these
    /// values and everything between).
    #[must_use]
    pub fn count_limits(&self) -> Vec<(u32, u32)> {
        self.lower
            .iter()
            .copied()
            .zip(self.upper.iter().copied())
            .collect()
    }

    /// Tests `ranks` (K ranks in `0..=L`) for uniformity.
    ///
    /// # Errors
    /// [`CalibrationError::LengthMismatch`] unless there are K ranks;
    /// [`CalibrationError::InvalidSize`] for a rank above L.
    pub fn test(&self, ranks: &[u32]) -> Result<EcdfTest, CalibrationError> {
        if ranks.len() != self.replicates as usize {
            return Err(CalibrationError::LengthMismatch {
                name: "ranks",
                expected: self.replicates as usize,
                found: ranks.len(),
            });
        }
        if let Some(&r) = ranks.iter().find(|&&r| r > self.draws) {
            return Err(CalibrationError::InvalidSize {
                name: "rank",
                value: u64::from(r),
            });
        }
        let counts = self.counts(ranks);
        let gamma = self.gamma(&counts);
        let at_most = self.sims.partition_point(|&g| g <= gamma);
        #[allow(clippy::cast_precision_loss)]
        let p_value = (1.0 + at_most as f64) / (self.sims.len() as f64 + 1.0);
        let n = f64::from(self.draws) + 1.0;
        let k = f64::from(self.replicates);
        let ecdf_diff = counts
            .iter()
            .zip(1..=self.draws)
            .map(|(&c, i)| f64::from(c) / k - f64::from(i) / n)
            .collect();
        Ok(EcdfTest {
            gamma,
            p_value,
            inside_band: gamma >= self.threshold,
            ecdf_diff,
        })
    }
}

/// A uniform rank in `0..=draws`.
fn uniform_rank(rng: &mut SimStream, draws: u32) -> u32 {
    // below(L + 1) ≤ L < u32::MAX
    #[allow(clippy::cast_possible_truncation)]
    let r = below(rng, u64::from(draws) + 1) as u32;
    r
}

/// The result of [`EcdfBand::test`].
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EcdfTest {
    /// The statistic γ (smaller: less uniform).
    pub gamma: f64,
    /// Monte Carlo p-value of uniformity.
    pub p_value: f64,
    /// Whether the ECDF stays inside the simultaneous band.
    pub inside_band: bool,
    /// The ECDF difference `cᵢ/K − zᵢ` at `zᵢ = i/(L + 1)`, `i = 1..=L`.
    pub ecdf_diff: Vec<f64>,
}
