//! Tuberculosis outbreak model: the two-population stochastic birth–death process of
//! Lintusaari, Blomstedt, Rose, Sivula, Gutmann, Kaski, Corander (2019), *Resolving outbreak
//! dynamics using approximate Bayesian computation for stochastic birth–death models*, Wellcome
//! Open Research 4:14 (§3), as used in ABCDP §6.3 (Park, Vinaroz, Jitkrittum 2021). Requires
//! `alloc` (the population is unbounded).
//!
//! **Process** (read from the reference implementation vendored with the ABCDP code,
//! `disease_simulator.py` / `operations.py`; no code copied). Active TB cases are compliant (c)
//! or non-compliant (nc) with therapy; every case belongs to a *cluster* (a pathogen strain).
//! Events and rates:
//! - new cluster (reactivation/immigration), rate β (burden); the new case is compliant with
//!   probability p_c = 0.95;
//! - transmission from a compliant case, rate a₀·n_c; from a non-compliant case, rate
//!   a₁·n_nc: the infecting case is chosen uniformly within its population (so its cluster with
//!   probability ∝ cluster size) and the new case joins that cluster, compliant w.p. p_c;
//! - "death" (end of the infectious period) of a compliant case, rate d₀·n_c, or non-compliant
//!   case, rate d₁·n_nc; after the warm-up it is **observed** with probability p_obs = 0.8.
//!
//! Parameters: θ = (R₁, t₁, R₂, β) (the order of the ABCDP scripts' output), with d₀ = 5.95,
//! a₀ = R₂ d₀, d₁ = t₁/|R₁ − 1|, a₁ = t₁ + d₁. Warm-up: starting empty, the process is run a
//! year at a time until both populations reach their analytic balance sizes (at most 150
//! years); the warm-up is then twice that many years but at least 15; observation lasts 2
//! years after it. Observed deaths of each cluster are recorded; the output is 8 summaries
//! (Lintusaari et al. Table 1, as computed by the ABCDP distance):
//!
//! | index | summary |
//! |---|---|
//! | 0 | number of observations |
//! | 1 | number of observed clusters |
//! | 2 | size of the largest observed cluster |
//! | 3 | mean gap between the 4 largest cluster sizes (sizes ≤ 80, zero-padded) = (s₁ − s₄)/3 |
//! | 4 | number of size-1 clusters / number of observations |
//! | 5 | number of size-2 clusters / number of observations |
//! | 6 | observation period of the largest cluster, in months (last − first non-empty month + 1) |
//! | 7 | number of months with an observation from the largest cluster |
//!
//! Where the reference is undefined we chose: with no observation at all, fractions and
//! months are 0 (the Python code divides by zero / raises); ties for the largest cluster go to
//! the earliest-created cluster (Python's choice depends on its slot recycling); months are
//! ⌊12·t⌋ of the exact time (Python casts times to float16 first).
//!
//! **Prior** ([`TbPrior`]): β ~ N(200, 30) with **variance** 30 (the scripts draw
//! 200 + √30·z), R₁ ~ U(1.01, 20), t₁ ~ U(0.01, 30), R₂ = U(0.01, 1)·(1 − 0.05 R₁)/0.95, and a
//! draw is **rejected** unless the analytic mean number of observed cases per year lies in
//! (0, 350) and a₁ < 40 (`mean_obs_bounds` and `a1_bound` of the ABCDP script) — a truncated
//! prior. The true parameters of the ABCDP experiment are θ = (5.88, 6.74, 0.09, 192)
//! (Lintusaari et al. Table 2).

use alloc::vec::Vec;

use crate::dist;
use crate::error::{SimError, check_len, finite, positive};
use crate::prior::{LN_SQRT_2PI, Prior};
use crate::simulator::Simulator;
use rand_core::Rng;

/// The true parameters of the ABCDP TB experiment, θ = (R₁, t₁, R₂, β).
pub const TRUE_THETA: [f64; 4] = [5.88, 6.74, 0.09, 192.0];

/// Number of summaries.
pub const N_SUMMARIES: usize = 8;

/// Model constants (public fields; [`TbSettings::default`] gives the reference values).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TbSettings {
    /// Probability a new case is compliant, p_c (0.95).
    pub p_compliance: f64,
    /// Probability a death after warm-up is observed, p_obs (0.8).
    pub p_observed: f64,
    /// Death rate of compliant cases d₀ (5.95 per year).
    pub death_compliant: f64,
    /// Observation period in years (2).
    pub t_obs_years: u32,
    /// Minimum warm-up in years (15).
    pub min_warmup_years: u32,
    /// Maximum warm-up in years (300; balance search runs at most half of it).
    pub max_warmup_years: u32,
    /// Cluster sizes above this bound are left out of the size histogram (80).
    pub cluster_size_bound: u32,
    /// Safety cap on the living population; exceeding it is a recoverable
    /// [`SimError::Degenerate`] (10⁶; not in the reference, which has no cap).
    pub max_population: usize,
}

impl Default for TbSettings {
    fn default() -> Self {
        Self {
            p_compliance: 0.95,
            p_observed: 0.8,
            death_compliant: 5.95,
            t_obs_years: 2,
            min_warmup_years: 15,
            max_warmup_years: 300,
            cluster_size_bound: 80,
            max_population: 1_000_000,
        }
    }
}

/// Event rates of the process.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TbRates {
    /// Burden β.
    pub burden: f64,
    /// Transmission rate of compliant cases a₀ = R₂ d₀.
    pub a0: f64,
    /// Death rate of compliant cases d₀.
    pub d0: f64,
    /// Transmission rate of non-compliant cases a₁ = t₁ + d₁.
    pub a1: f64,
    /// Death rate of non-compliant cases d₁ = t₁/|R₁ − 1|.
    pub d1: f64,
}

impl TbSettings {
    /// Rates from θ = (R₁, t₁, R₂, β).
    #[must_use]
    pub fn rates(&self, theta: &[f64; 4]) -> TbRates {
        let [r1, t1, r2, burden] = *theta;
        let d1 = t1 / (r1 - 1.0).abs();
        TbRates {
            burden,
            a0: r2 * self.death_compliant,
            d0: self.death_compliant,
            a1: t1 + d1,
            d1,
        }
    }

    /// Analytic balance sizes and mean observations per year (n_c, n_nc, m_obs), as in the
    /// reference's `analytical_means`.
    #[must_use]
    pub fn analytic_means(&self, r: &TbRates) -> (f64, f64, f64) {
        let pc = self.p_compliance;
        let pn = 1.0 - pc;
        let n_nc = r.burden * r.d0 * pn / (r.d0 * r.d1 - r.a0 * r.d1 * pc - r.a1 * r.d0 * pn);
        let n_c = (n_nc * (r.d1 - r.a1 * pn) - r.burden * pn) / (r.a0 * pn);
        let m_obs = (n_c * r.d0 + n_nc * r.d1) * self.p_observed;
        (n_c, n_nc, m_obs)
    }

    fn validate(&self) -> Result<(), SimError> {
        for (name, p) in [
            ("p_compliance", self.p_compliance),
            ("p_observed", self.p_observed),
        ] {
            if !(p > 0.0 && p < 1.0) {
                return Err(SimError::InvalidParameter { name, value: p });
            }
        }
        positive("death_compliant", self.death_compliant)?;
        if self.t_obs_years == 0 {
            return Err(SimError::InvalidSize {
                name: "t_obs_years",
                value: 0,
            });
        }
        if self.max_warmup_years < 2 {
            return Err(SimError::InvalidSize {
                name: "max_warmup_years",
                value: u64::from(self.max_warmup_years),
            });
        }
        if self.max_population == 0 {
            return Err(SimError::InvalidSize {
                name: "max_population",
                value: 0,
            });
        }
        Ok(())
    }
}

/// The TB simulator; θ = (R₁, t₁, R₂, β) → the 8 summaries. Allocates its population per call.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Tuberculosis {
    s: TbSettings,
}

/// Observed counts per cluster and the observed death events of one run.
type RunRecord = (Vec<u32>, Vec<(u32, f64)>);

/// Maximum number of events per run before giving up (recoverable).
const MAX_EVENTS: u64 = 200_000_000;

struct TbState<'r, R: ?Sized> {
    rng: &'r mut R,
    rates: TbRates,
    p_c: f64,
    p_obs: f64,
    time: f64,
    t_warmup: f64,
    t_end: f64,
    compliant: Vec<u32>,
    non_compliant: Vec<u32>,
    /// observed deaths per cluster id
    observed: Vec<u32>,
    /// (cluster id, time since warm-up) of each observed death
    obs_events: Vec<(u32, f64)>,
    events: u64,
    max_population: usize,
}

impl<R: Rng + ?Sized> TbState<'_, R> {
    /// Draws one event; `Ok(false)` when the next event would pass the end of observation.
    fn next_event(&mut self) -> Result<bool, SimError> {
        #[allow(clippy::cast_precision_loss)]
        let (nc, nn) = (self.compliant.len() as f64, self.non_compliant.len() as f64);
        let r = &self.rates;
        let w = [r.burden, r.a0 * nc, r.d0 * nc, r.a1 * nn, r.d1 * nn];
        let total = w[0] + w[1] + w[2] + w[3] + w[4];
        let dt = dist::exponential(self.rng) / total;
        if self.time + dt >= self.t_end {
            return Ok(false);
        }
        self.time += dt;
        self.events += 1;
        if self.events > MAX_EVENTS
            || self.compliant.len() + self.non_compliant.len() >= self.max_population
        {
            return Err(SimError::Degenerate {
                what: "TB population or event count exceeded its cap",
            });
        }
        let mut u = dist::uniform01(self.rng) * total;
        let mut e = 0;
        while e < 4 && u >= w[e] {
            u -= w[e];
            e += 1;
        }
        match e {
            0 => {
                let id = u32::try_from(self.observed.len()).map_err(|_| SimError::Degenerate {
                    what: "too many clusters",
                })?;
                self.observed.push(0);
                self.add_case(id);
            }
            1 => {
                let id = pick(&self.compliant, self.rng);
                self.add_case(id);
            }
            2 => self.death(true),
            3 => {
                let id = pick(&self.non_compliant, self.rng);
                self.add_case(id);
            }
            _ => self.death(false),
        }
        Ok(true)
    }

    fn add_case(&mut self, cluster: u32) {
        if dist::uniform01(self.rng) < self.p_c {
            self.compliant.push(cluster);
        } else {
            self.non_compliant.push(cluster);
        }
    }

    fn death(&mut self, compliant: bool) {
        let pop = if compliant {
            &mut self.compliant
        } else {
            &mut self.non_compliant
        };
        if pop.is_empty() {
            return; // zero rate; unreachable in exact arithmetic
        }
        let idx = index_below(pop.len(), self.rng);
        let cluster = pop.swap_remove(idx);
        if self.time >= self.t_warmup && dist::uniform01(self.rng) < self.p_obs {
            if let Some(c) = self.observed.get_mut(cluster as usize) {
                *c += 1;
            }
            self.obs_events.push((cluster, self.time - self.t_warmup));
        }
    }
}

/// Uniform index in `0..n` (n ≥ 1) by multiply-shift on 64 random bits (bias < n/2⁶⁴).
#[inline]
fn index_below<R: Rng + ?Sized>(n: usize, rng: &mut R) -> usize {
    let x = u128::from(rng.next_u64()) * (n as u128);
    #[allow(clippy::cast_possible_truncation)]
    let i = (x >> 64) as usize;
    i
}

/// Cluster of a uniformly chosen case (population non-empty whenever its rate is positive).
#[inline]
fn pick<R: Rng + ?Sized>(pop: &[u32], rng: &mut R) -> u32 {
    if pop.is_empty() {
        0
    } else {
        pop[index_below(pop.len(), rng)]
    }
}

impl Tuberculosis {
    /// Validates the settings.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for probabilities outside (0, 1) or a non-positive death
    /// rate; [`SimError::InvalidSize`] for a zero observation period, population cap, or a
    /// maximum warm-up below 2 years.
    pub fn new(s: TbSettings) -> Result<Self, SimError> {
        s.validate()?;
        Ok(Self { s })
    }

    /// The reference setting ([`TbSettings::default`]).
    #[must_use]
    pub fn reference() -> Self {
        Self {
            s: TbSettings::default(),
        }
    }

    /// The settings.
    #[must_use]
    pub const fn settings(&self) -> &TbSettings {
        &self.s
    }

    fn check_theta(theta: &[f64]) -> Result<[f64; 4], SimError> {
        check_len("theta", 4, theta.len())?;
        let t = [theta[0], theta[1], theta[2], theta[3]];
        // R1 > 1 (|R1 − 1| > 0), t1 > 0, R2 ≥ 0, burden > 0
        let ok = [
            t[0].is_finite() && t[0] > 1.0,
            t[1].is_finite() && t[1] > 0.0,
            t[2].is_finite() && t[2] >= 0.0,
            t[3].is_finite() && t[3] > 0.0,
        ];
        if let Some(i) = ok.iter().position(|b| !b) {
            return Err(SimError::OutsideSupport { index: i });
        }
        Ok(t)
    }

    /// Runs the process and returns the per-cluster observed counts and observed death events.
    fn run<R: Rng + ?Sized>(&self, theta: &[f64], rng: &mut R) -> Result<RunRecord, SimError> {
        let th = Self::check_theta(theta)?;
        let rates = self.s.rates(&th);
        let (m_c, m_nc, _) = self.s.analytic_means(&rates);
        let mut st = TbState {
            rng,
            rates,
            p_c: self.s.p_compliance,
            p_obs: self.s.p_observed,
            time: 0.0,
            t_warmup: f64::INFINITY,
            t_end: f64::INFINITY,
            compliant: Vec::new(),
            non_compliant: Vec::new(),
            observed: Vec::new(),
            obs_events: Vec::new(),
            events: 0,
            max_population: self.s.max_population,
        };
        // Warm-up: whole years until both populations reached their balance sizes.
        let mut years = 0u32;
        let (mut c_reached, mut nc_reached) = (false, false);
        while years < self.s.max_warmup_years / 2 && !(c_reached && nc_reached) {
            years += 1;
            while st.time < f64::from(years) {
                st.next_event()?;
            }
            #[allow(clippy::cast_precision_loss)]
            {
                c_reached |= st.compliant.len() as f64 >= m_c;
                nc_reached |= st.non_compliant.len() as f64 >= m_nc;
            }
        }
        st.t_warmup = f64::from((2 * years).max(self.s.min_warmup_years));
        st.t_end = st.t_warmup + f64::from(self.s.t_obs_years);
        while st.next_event()? {}
        Ok((st.observed, st.obs_events))
    }
}

/// Computes the 8 summaries from observed cluster sizes (`sizes`, one entry per cluster that
/// ever existed; zeros allowed) and the observed death events `(cluster index, time in years
/// since the start of observation)`, with observation period `t_obs_years` and histogram bound
/// `cluster_size_bound`. This is the function the simulator uses; it is public so observed
/// data (e.g. [`san_francisco_summaries`]) go through the same code.
///
/// # Errors
/// [`SimError::InvalidSize`] for `t_obs_years == 0`.
pub fn summaries(
    sizes: &[u32],
    events: &[(u32, f64)],
    t_obs_years: u32,
    cluster_size_bound: u32,
    out: &mut [f64; N_SUMMARIES],
) -> Result<(), SimError> {
    if t_obs_years == 0 {
        return Err(SimError::InvalidSize {
            name: "t_obs_years",
            value: 0,
        });
    }
    let n_obs: u64 = sizes.iter().map(|&s| u64::from(s)).sum();
    let n_clusters = sizes.iter().filter(|&&s| s > 0).count();
    // Largest cluster: first (earliest-created) index among the maxima.
    let mut largest = 0u32;
    let mut largest_id = None;
    for (i, &s) in sizes.iter().enumerate() {
        if s > largest {
            largest = s;
            largest_id = Some(i);
        }
    }
    // Four largest sizes among clusters with size ≤ bound, zero-padded.
    let mut top = [0u32; 4];
    for &s in sizes {
        if s == 0 || s > cluster_size_bound {
            continue;
        }
        let mut v = s;
        for t in &mut top {
            if v > *t {
                core::mem::swap(&mut v, t);
            }
        }
    }
    let n1 = sizes
        .iter()
        .filter(|&&s| s == 1 && 1 <= cluster_size_bound)
        .count();
    let n2 = sizes
        .iter()
        .filter(|&&s| s == 2 && 2 <= cluster_size_bound)
        .count();
    // Months with observations of the largest cluster.
    let months = (t_obs_years * 12) as usize;
    let mut first = usize::MAX;
    let mut last = 0usize;
    let mut with_obs = 0usize;
    if let Some(id) = largest_id {
        let mut hist = [0u32; 12 * 64];
        let months = months.min(hist.len());
        for &(c, t) in events {
            if c as usize == id {
                let m = libm::floor(t * 12.0);
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let m = if m <= 0.0 {
                    0
                } else {
                    (m as usize).min(months - 1)
                };
                hist[m] += 1;
            }
        }
        for (m, &h) in hist[..months].iter().enumerate() {
            if h > 0 {
                first = first.min(m);
                last = m;
                with_obs += 1;
            }
        }
    }
    #[allow(clippy::cast_precision_loss)]
    {
        let nf = n_obs as f64;
        out[0] = nf;
        out[1] = n_clusters as f64;
        out[2] = f64::from(largest);
        out[3] = f64::from(top[0] - top[3]) / 3.0;
        out[4] = if n_obs > 0 { n1 as f64 / nf } else { 0.0 };
        out[5] = if n_obs > 0 { n2 as f64 / nf } else { 0.0 };
        out[6] = if with_obs > 0 {
            (last - first + 1) as f64
        } else {
            0.0
        };
        out[7] = with_obs as f64;
    }
    Ok(())
}

/// The San Francisco Bay Area TB data (Small et al. 1994) used as observed data by Lintusaari
/// et al. and the ABCDP scripts, as summaries: 473 observations in 326 clusters (sizes 30, 23,
/// 15, 10, 8, 5×2, 4×4, 3×13, 2×20, 1×282), the largest cluster observed in months
/// 0,0,1,2,3,3,4,4,4,4,4,4,5,5,5,5,5,7,8,8,10,11,12,14,16,16,18,20,21,23.
#[must_use]
pub fn san_francisco_summaries() -> [f64; N_SUMMARIES] {
    const GROUPS: [(u32, usize); 10] = [
        (30, 1),
        (23, 1),
        (15, 1),
        (10, 1),
        (8, 1),
        (5, 2),
        (4, 4),
        (3, 13),
        (2, 20),
        (1, 282),
    ];
    const MONTHS: [u32; 30] = [
        0, 0, 1, 2, 3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 7, 8, 8, 10, 11, 12, 14, 16, 16, 18, 20,
        21, 23,
    ];
    let mut sizes = Vec::new();
    for (s, k) in GROUPS {
        sizes.extend(core::iter::repeat_n(s, k));
    }
    // mid-month times (years) so ⌊12 t⌋ recovers the month exactly
    let events: Vec<(u32, f64)> = MONTHS
        .iter()
        .map(|&m| (0u32, (f64::from(m) + 0.5) / 12.0))
        .collect();
    let mut out = [0.0; N_SUMMARIES];
    // Cannot fail: t_obs_years = 2 > 0.
    let _ = summaries(&sizes, &events, 2, 80, &mut out);
    out
}

/// The ABCDP / Lintusaari weighted L2 distance between simulated and observed summaries:
/// ‖(Δ₀, Δ₁, 2Δ₂, 10Δ₃, 100Δ₄/o₄, 100Δ₅/o₅, 10Δ₆, 10Δ₇)‖₂ with Δ_i = sim_i − obs_i (the
/// size-1/size-2 fractions compared by relative error).
///
/// # Errors
/// [`SimError::InvalidParameter`] unless the observed fractions o₄, o₅ are finite and > 0 and
/// every entry is finite.
pub fn distance(sim: &[f64; N_SUMMARIES], obs: &[f64; N_SUMMARIES]) -> Result<f64, SimError> {
    positive("obs[4]", obs[4])?;
    positive("obs[5]", obs[5])?;
    for i in 0..N_SUMMARIES {
        finite("sim", sim[i])?;
        finite("obs", obs[i])?;
    }
    let w = [
        1.0,
        1.0,
        2.0,
        10.0,
        100.0 / obs[4],
        100.0 / obs[5],
        10.0,
        10.0,
    ];
    let mut s = 0.0;
    for i in 0..N_SUMMARIES {
        let d = w[i] * (sim[i] - obs[i]);
        s += d * d;
    }
    Ok(libm::sqrt(s))
}

/// Sensitivity of [`mean_clipped_distance`] over `n` observed datasets clipped at `clip`:
/// `Δ = clip / n`.
///
/// # Privacy
///
/// Neighbouring relation: two *ordered* collections of `n` observed outbreak datasets that
/// differ in the dataset at one position `j` (replace-one; the pairing of observed dataset `j`
/// with pseudo-dataset `j` is public and must not depend on the data). Every term
/// `min(ρ(s(Y_j), s(Y*_j)), C)` lies in `[0, C]` and depends on `Y*_j` only, so replacing one
/// dataset moves the mean by at most `C/n`, for **every** pseudo-collection — the condition
/// of ABCDP Theorem 1. This also covers any change confined to one dataset, e.g. replacing,
/// adding or removing one genotyped case of one outbreak. The bound is tight (a term can move
/// from 0 to C). Per dataset no smaller bound exists: one case can switch which cluster is the
/// largest and move the month summaries by up to 24 (weight 10 each), and can change the
/// size-1 fraction's relative error without limit as o₄ → 0, so `C` is the per-term bound.
///
/// # Errors
///
/// [`SimError::InvalidSize`] for `n == 0`; [`SimError::InvalidParameter`] unless `clip` is
/// finite and > 0.
///
/// # References
///
/// Park, Vinaroz, Jitkrittum, *ABCDP*, Entropy 23 (2021) 961, §4 (clipping remark after
/// Theorem 1) and §6.3; the reference script `test_TB.py` of the ABCDP code uses the same
/// `C/n` (`Bm = ss_clipping_norm_bound / n`).
pub fn mean_clipped_distance_sensitivity(n: usize, clip: f64) -> Result<f64, SimError> {
    let clip = positive("clip", clip)?;
    if n == 0 {
        return Err(SimError::InvalidSize {
            name: "n",
            value: 0,
        });
    }
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    Ok(clip / nf)
}

/// Mean clipped distance of the ABCDP TB experiment (§6.3): with `n` observed datasets
/// (`obs`, `n` rows of [`N_SUMMARIES`] summaries, row-major) and `n` pseudo-datasets (`sim`,
/// same layout), returns `(1/n) Σ_j min(ρ(sim_j, obs_j), clip)` with ρ = [`distance`]. A term
/// whose distance is undefined (an observed size-1 or size-2 fraction of zero, or a
/// non-finite entry) counts as `clip`, so every term lies in `[0, clip]` whatever the data;
/// errors never depend on data values. Its sensitivity is
/// [`mean_clipped_distance_sensitivity`] `= clip/n`.
///
/// # Errors
///
/// [`SimError::InvalidParameter`] unless `clip` is finite and > 0; [`SimError::InvalidSize`]
/// if `obs` is empty or not a whole number of rows; [`SimError::DimensionMismatch`] if `sim`
/// and `obs` differ in length.
pub fn mean_clipped_distance(sim: &[f64], obs: &[f64], clip: f64) -> Result<f64, SimError> {
    let clip = positive("clip", clip)?;
    check_len("sim", obs.len(), sim.len())?;
    if obs.is_empty() || !obs.len().is_multiple_of(N_SUMMARIES) {
        return Err(SimError::InvalidSize {
            name: "obs.len()",
            value: u64::try_from(obs.len()).unwrap_or(u64::MAX),
        });
    }
    let n = obs.len() / N_SUMMARIES;
    let mut total = 0.0;
    for (s, o) in sim
        .chunks_exact(N_SUMMARIES)
        .zip(obs.chunks_exact(N_SUMMARIES))
    {
        let mut a = [0.0; N_SUMMARIES];
        let mut b = [0.0; N_SUMMARIES];
        a.copy_from_slice(s);
        b.copy_from_slice(o);
        let d = match distance(&a, &b) {
            Ok(d) if d.is_finite() => d.min(clip),
            _ => clip,
        };
        total += d;
    }
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    Ok((total / nf).clamp(0.0, clip))
}

impl Simulator for Tuberculosis {
    fn param_dim(&self) -> usize {
        4
    }
    fn output_dim(&self) -> usize {
        N_SUMMARIES
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        check_len("out", N_SUMMARIES, out.len())?;
        let (sizes, events) = self.run(theta, rng)?;
        let mut o = [0.0; N_SUMMARIES];
        summaries(
            &sizes,
            &events,
            self.s.t_obs_years,
            self.s.cluster_size_bound,
            &mut o,
        )?;
        out.copy_from_slice(&o);
        Ok(())
    }
}

/// The truncated joint prior of the ABCDP TB experiment (see the [module docs](self)); θ =
/// (R₁, t₁, R₂, β).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TbPrior {
    s: TbSettings,
    burden_mean: f64,
    burden_sd: f64,
    r1_max: f64,
    t1_max: f64,
    mean_obs_max: f64,
    a1_max: f64,
    max_attempts: u64,
}

impl TbPrior {
    /// The reference prior: β ~ N(200, 30) (variance), R₁ ~ U(1.01, 20), t₁ ~ U(0.01, 30),
    /// R₂ = U(0.01, 1)·(1 − 0.05 R₁)/0.95, truncated to 0 < m_obs < 350 and a₁ < 40.
    #[must_use]
    pub fn reference() -> Self {
        Self {
            s: TbSettings::default(),
            burden_mean: 200.0,
            burden_sd: libm::sqrt(30.0),
            r1_max: 20.0,
            t1_max: 30.0,
            mean_obs_max: 350.0,
            a1_max: 40.0,
            max_attempts: 1_000_000,
        }
    }

    fn r2_max(&self, r1: f64) -> f64 {
        let pc = self.s.p_compliance;
        (1.0 - r1 * (1.0 - pc)) / pc
    }

    fn accepted(&self, th: &[f64; 4]) -> bool {
        let r = self.s.rates(th);
        let (_, _, m_obs) = self.s.analytic_means(&r);
        m_obs > 0.0 && m_obs < self.mean_obs_max && r.a1 < self.a1_max
    }
}

impl Prior for TbPrior {
    fn dim(&self) -> usize {
        4
    }
    /// Draws β once, then (R₁, t₁, R₂) until the truncation holds (as the reference's
    /// `JointPrior.rvs` does for a given burden).
    ///
    /// # Errors
    /// [`SimError::TooManyAttempts`] after 10⁶ rejected draws (numerically empty region).
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", 4, out.len())?;
        let burden = self.burden_mean + self.burden_sd * dist::std_normal(rng);
        for _ in 0..self.max_attempts {
            let r1 = 1.01 + (self.r1_max - 1.01) * dist::uniform01(rng);
            let t1 = 0.01 + (self.t1_max - 0.01) * dist::uniform01(rng);
            let r2 = (0.01 + 0.99 * dist::uniform01(rng)) * self.r2_max(r1);
            let th = [r1, t1, r2, burden];
            if self.accepted(&th) {
                out.copy_from_slice(&th);
                return Ok(());
            }
        }
        Err(SimError::TooManyAttempts {
            attempts: self.max_attempts,
        })
    }
    /// Log density of the *untruncated* product law restricted to the truncation region:
    /// ln N(β; 200, 30) − ln(18.99) − ln(29.99) − ln(0.99 c(R₁)), c(R₁) = (1 − 0.05R₁)/0.95.
    /// The truncation's normalising constant Z(β) (the acceptance probability given β) is
    /// **not** included; it depends on β, so this is the true log density only up to
    /// −ln Z(β). ABC with this prior as proposal needs no density; use with care in importance
    /// weights.
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if !self.in_support(theta) {
            return f64::NEG_INFINITY;
        }
        let z = (theta[3] - self.burden_mean) / self.burden_sd;
        -0.5 * z * z
            - libm::log(self.burden_sd)
            - LN_SQRT_2PI
            - libm::log(self.r1_max - 1.01)
            - libm::log(self.t1_max - 0.01)
            - libm::log(0.99 * self.r2_max(theta[0]))
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        if theta.len() != 4 || !theta.iter().all(|x| x.is_finite()) {
            return false;
        }
        let th = [theta[0], theta[1], theta[2], theta[3]];
        let c = self.r2_max(th[0]);
        (1.01..=self.r1_max).contains(&th[0])
            && (0.01..=self.t1_max).contains(&th[1])
            && th[2] >= 0.01 * c
            && th[2] <= c
            && self.accepted(&th)
    }
    /// β (coordinate 3) is drawn once from N(200, 30) before the truncation acts on the
    /// others, so its marginal is that normal exactly; the truncated (R₁, t₁, R₂) have no
    /// closed-form marginal (`None`).
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        (j == 3).then(|| {
            if !x.is_finite() {
                return f64::NEG_INFINITY;
            }
            let z = (x - self.burden_mean) / self.burden_sd;
            -0.5 * z * z - libm::log(self.burden_sd) - LN_SQRT_2PI
        })
    }
}

impl TbPrior {
    /// Validates custom bounds on top of [`TbPrior::reference`].
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for non-finite values, `r1_max ≤ 1.01` or
    /// `r1_max ≥ 1/(1 − p_c)` (no stable population), `t1_max ≤ 0.01`, or non-positive bounds.
    pub fn with_bounds(
        mut self,
        burden_mean: f64,
        burden_var: f64,
        r1_max: f64,
        t1_max: f64,
        mean_obs_max: f64,
        a1_max: f64,
    ) -> Result<Self, SimError> {
        self.burden_mean = finite("burden_mean", burden_mean)?;
        self.burden_sd = libm::sqrt(positive("burden_var", burden_var)?);
        let r1 = finite("r1_max", r1_max)?;
        if r1 <= 1.01 || r1 * (1.0 - self.s.p_compliance) > 1.0 {
            return Err(SimError::InvalidParameter {
                name: "r1_max",
                value: r1,
            });
        }
        self.r1_max = r1;
        let t1 = finite("t1_max", t1_max)?;
        if t1 <= 0.01 {
            return Err(SimError::InvalidParameter {
                name: "t1_max",
                value: t1,
            });
        }
        self.t1_max = t1;
        self.mean_obs_max = positive("mean_obs_max", mean_obs_max)?;
        self.a1_max = positive("a1_max", a1_max)?;
        Ok(self)
    }
}
