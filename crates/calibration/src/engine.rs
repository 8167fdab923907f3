//! The replicate loop of simulation-based calibration (Talts et al. 2018).

use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use dpinfer_math::check;
use dpinfer_simulators::SimStream;
use rand_core::Rng;

use crate::CalibrationError;
use crate::error::ReplicateError;

/// Base of the calibration run's stream domains (`"SBC"`); the six streams of a replicate are
/// `SBC_DOMAIN + 0..=5`, each on job id = the replicate's index.
pub const SBC_DOMAIN: u64 = 0x5342_4300_0000_0000;
/// Domain offset of the prior draw θₖ.
pub const PRIOR_STREAM: u64 = 0;
/// Domain offset of the confidential data xₖ.
pub const DATA_STREAM: u64 = 1;
/// Domain offset of the mechanism's noise (public and seeded: a replicate is not private data).
pub const NOISE_STREAM: u64 = 2;
/// Domain offset of the sampler.
pub const SAMPLER_STREAM: u64 = 3;
/// Domain offset of the random tie-breaking of ranks.
pub const TIES_STREAM: u64 = 4;
/// Domain offset of TARP's reference point (a second prior draw).
pub const REFERENCE_STREAM: u64 = 5;

/// The stream `which` (one of the `*_STREAM` offsets) of replicate `index` of the run `seed`:
/// `SimStream::with_domain(seed, SBC_DOMAIN + which, index)`.
#[must_use]
pub fn replicate_stream(seed: u64, which: u64, index: u64) -> SimStream {
    SimStream::with_domain(seed, SBC_DOMAIN + which, index)
}

/// What a calibration run needs from a model, its release and a sampler — the one trait a
/// front end implements (once, over whatever sampler a run is configured with), so the
/// replicate loop never matches on sampler kinds.
///
/// Every method gets its own public [`SimStream`]; none gets the privacy-noise generator
/// (`dpinfer_mechanisms::NoiseRng`, which `SimStream` deliberately is not). A synthetic
/// replicate is not private data, so its mechanism noise is drawn from the seeded public
/// `noise` stream: simulate the release's mechanism (e.g. with `dpinfer_mechanisms::idealized`)
/// on the simulated confidential data.
pub trait Problem {
    /// What the mechanism releases (the privatised statistic the sampler conditions on).
    type Release;
    /// The problem's own error.
    type Error;

    /// Dimension of θ.
    fn dim(&self) -> usize;

    /// Draws θ from the prior into `theta` (length [`dim`](Problem::dim)).
    ///
    /// # Errors
    /// The problem's error (e.g. a truncated prior that gave up).
    fn prior(&self, rng: &mut SimStream, theta: &mut [f64]) -> Result<(), Self::Error>;

    /// Simulates the confidential data at θ from `data` and applies the release's mechanism
    /// with public noise from `noise`.
    ///
    /// # Errors
    /// The problem's error.
    fn release(
        &self,
        theta: &[f64],
        data: &mut SimStream,
        noise: &mut SimStream,
    ) -> Result<Self::Release, Self::Error>;

    /// Runs the sampler on the release and appends `n` posterior draws to `out`, row-major
    /// (`n · dim` numbers, in the sampler's order; the engine thins them).
    ///
    /// # Errors
    /// The problem's error.
    fn posterior(
        &self,
        release: &Self::Release,
        rng: &mut SimStream,
        n: usize,
        out: &mut Vec<f64>,
    ) -> Result<(), Self::Error>;
}

impl<P: Problem + ?Sized> Problem for &P {
    type Release = P::Release;
    type Error = P::Error;
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn prior(&self, rng: &mut SimStream, theta: &mut [f64]) -> Result<(), Self::Error> {
        (**self).prior(rng, theta)
    }
    fn release(
        &self,
        theta: &[f64],
        data: &mut SimStream,
        noise: &mut SimStream,
    ) -> Result<Self::Release, Self::Error> {
        (**self).release(theta, data, noise)
    }
    fn posterior(
        &self,
        release: &Self::Release,
        rng: &mut SimStream,
        n: usize,
        out: &mut Vec<f64>,
    ) -> Result<(), Self::Error> {
        (**self).posterior(release, rng, n, out)
    }
}

/// The settings of a run: seed, `L` kept draws per replicate, thinning, TARP's distance scales.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Settings {
    seed: u64,
    draws: u32,
    thin: u32,
    tarp_scale: Option<Vec<f64>>,
}

impl Settings {
    /// Run seed `seed` (public), `draws` = L ≥ 1 kept posterior draws per replicate, of
    /// `draws · thin` asked from the sampler (every `thin`-th is kept, the last of each block).
    ///
    /// # Errors
    /// [`CalibrationError::InvalidSize`] for `draws` or `thin` of 0, or `draws · thin` beyond
    /// `u32::MAX`.
    pub fn new(seed: u64, draws: u32, thin: u32) -> Result<Self, CalibrationError> {
        let settings = Self {
            seed,
            draws,
            thin,
            tarp_scale: None,
        };
        settings.check()?;
        Ok(settings)
    }

    /// The checks of [`Settings::new`] and [`Settings::with_tarp_scale`], again (settings may
    /// also arrive through serde).
    fn check(&self) -> Result<(), CalibrationError> {
        let (draws, thin) = (self.draws, self.thin);
        if draws == 0 || draws == u32::MAX {
            return Err(CalibrationError::InvalidSize {
                name: "draws",
                value: u64::from(draws),
            });
        }
        if thin == 0 || draws.checked_mul(thin).is_none() {
            return Err(CalibrationError::InvalidSize {
                name: "thin",
                value: u64::from(thin),
            });
        }
        for &s in self.tarp_scale.iter().flatten() {
            check::positive("tarp_scale", s)?;
        }
        Ok(())
    }

    /// Divides coordinate `j` by `scale[j]` in TARP's Euclidean distance (default: all 1; use
    /// the prior's standard deviations when the coordinates have different units).
    ///
    /// # Errors
    /// [`CalibrationError::InvalidParameter`] for a non-finite or non-positive scale.
    pub fn with_tarp_scale(mut self, scale: Vec<f64>) -> Result<Self, CalibrationError> {
        self.tarp_scale = Some(scale);
        self.check()?;
        Ok(self)
    }

    /// The run seed.
    #[must_use]
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// L, the kept draws per replicate (ranks lie in `0..=L`).
    #[must_use]
    pub const fn draws(&self) -> u32 {
        self.draws
    }

    /// The thinning factor.
    #[must_use]
    pub const fn thin(&self) -> u32 {
        self.thin
    }
}

/// The result of one replicate: a value that can be stored, sent between machines and merged
/// (a run is resumable by keeping the results already computed).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ReplicateResult {
    /// The replicate's index k (its streams' job id).
    pub index: u64,
    /// L, the number of kept draws.
    pub draws: u32,
    /// Per coordinate: the rank of θₖ among the L draws, in `0..=L` (ties broken at random).
    pub ranks: Vec<u32>,
    /// Per coordinate: the posterior mass above θₖ, `(#{draws > θ} + ½·#{draws = θ}) / L`.
    pub mass_above: Vec<f64>,
    /// TARP (Lemos et al. 2023): the rank, in `0..=L`, of θₖ's distance to a reference point
    /// (drawn from the prior) among the draws' distances to it; `rank / L` estimates the
    /// posterior mass of the ball around the reference point that reaches θₖ.
    pub tarp_rank: u32,
}

/// Uniform integer in `0..m` (`m ≥ 1`), exact (Lemire's multiply with rejection).
pub(crate) fn below(rng: &mut SimStream, m: u64) -> u64 {
    let threshold = m.wrapping_neg() % m;
    loop {
        let x = u128::from(rng.next_u64()) * u128::from(m);
        #[allow(clippy::cast_possible_truncation)]
        let low = x as u64;
        if low >= threshold {
            #[allow(clippy::cast_possible_truncation)]
            return (x >> 64) as u64;
        }
    }
}

/// The rank of `value` among `others` (count below, ties broken uniformly from `ties`), with
/// the counts below and equal.
fn rank_of(value: f64, others: impl Iterator<Item = f64>, ties: &mut SimStream) -> (u32, u32, u32) {
    let (mut less, mut equal) = (0u32, 0u32);
    for o in others {
        // exact equality is the point: a tie is the same number
        #[allow(clippy::float_cmp)]
        if o < value {
            less += 1;
        } else if o == value {
            equal += 1;
        }
    }
    // `equal + 1 ≤ L + 1 ≤ u32::MAX`, and the draw is at most `equal`
    #[allow(clippy::cast_possible_truncation)]
    let extra = below(ties, u64::from(equal) + 1) as u32;
    (less + extra, less, equal)
}

fn all_finite(x: &[f64]) -> bool {
    x.iter().all(|v| v.is_finite())
}

/// Runs replicate `index`: θₖ from the prior, the release, `L·thin` posterior draws thinned to
/// L, and the ranks, masses above θₖ and TARP rank. A pure function of
/// `(problem, settings, index)`: the same on any machine, thread or shard.
///
/// # Errors
/// [`ReplicateError::Problem`] if the problem fails; [`CalibrationError::LengthMismatch`] if the
/// sampler returns the wrong number of draws or the TARP scale has the wrong length;
/// [`CalibrationError::NonFinite`] for a non-finite θ, reference point or draw;
/// [`CalibrationError::InvalidSize`] for a problem of dimension 0, for `L·thin·dim` beyond
/// `usize`, or for settings that [`Settings::new`] would refuse (e.g. deserialised ones).
pub fn run_replicate<P: Problem + ?Sized>(
    problem: &P,
    settings: &Settings,
    index: u64,
) -> Result<ReplicateResult, ReplicateError<P::Error>> {
    settings.check()?;
    let dim = problem.dim();
    if dim == 0 {
        return Err(CalibrationError::InvalidSize {
            name: "dim",
            value: 0,
        }
        .into());
    }
    if let Some(s) = &settings.tarp_scale
        && s.len() != dim
    {
        return Err(CalibrationError::LengthMismatch {
            name: "tarp_scale",
            expected: dim,
            found: s.len(),
        }
        .into());
    }
    let seed = settings.seed;
    let fail = |error| ReplicateError::Problem { index, error };

    // θₖ and TARP's reference point: two independent prior draws, each checked
    let draw = |which, what| -> Result<Vec<f64>, ReplicateError<P::Error>> {
        let mut x = vec![0.0; dim];
        problem
            .prior(&mut replicate_stream(seed, which, index), &mut x)
            .map_err(fail)?;
        if all_finite(&x) {
            Ok(x)
        } else {
            Err(CalibrationError::NonFinite { index, what }.into())
        }
    };
    let theta = draw(PRIOR_STREAM, "theta")?;
    let reference = draw(REFERENCE_STREAM, "reference")?;
    let release = problem
        .release(
            &theta,
            &mut replicate_stream(seed, DATA_STREAM, index),
            &mut replicate_stream(seed, NOISE_STREAM, index),
        )
        .map_err(fail)?;

    let l = settings.draws as usize;
    let thin = settings.thin as usize;
    let n = l * thin;
    let values = n.checked_mul(dim).ok_or(CalibrationError::InvalidSize {
        name: "dim",
        value: u64::try_from(dim).unwrap_or(u64::MAX),
    })?;
    let mut raw = Vec::with_capacity(values);
    problem
        .posterior(
            &release,
            &mut replicate_stream(seed, SAMPLER_STREAM, index),
            n,
            &mut raw,
        )
        .map_err(fail)?;
    if raw.len() != values {
        return Err(CalibrationError::LengthMismatch {
            name: "posterior draws",
            expected: values,
            found: raw.len(),
        }
        .into());
    }
    if !all_finite(&raw) {
        return Err(CalibrationError::NonFinite {
            index,
            what: "draws",
        }
        .into());
    }
    // keep the last draw of each block of `thin`
    let kept: Vec<&[f64]> = raw.chunks_exact(dim).skip(thin - 1).step_by(thin).collect();

    let mut ties = replicate_stream(seed, TIES_STREAM, index);
    let mut ranks = Vec::with_capacity(dim);
    let mut mass_above = Vec::with_capacity(dim);
    #[allow(clippy::cast_precision_loss)]
    let lf = l as f64;
    for (j, &t) in theta.iter().enumerate() {
        let (rank, less, equal) = rank_of(t, kept.iter().map(|d| d[j]), &mut ties);
        let greater = settings.draws - less - equal;
        mass_above.push((f64::from(greater) + 0.5 * f64::from(equal)) / lf);
        ranks.push(rank);
    }
    let distance = |x: &[f64]| -> f64 {
        let mut s = 0.0;
        for (j, (&a, &b)) in x.iter().zip(&reference).enumerate() {
            let scale = settings.tarp_scale.as_ref().map_or(1.0, |v| v[j]);
            let d = (a - b) / scale;
            s += d * d;
        }
        libm::sqrt(s)
    };
    let (tarp_rank, _, _) = rank_of(
        distance(&theta),
        kept.iter().map(|d| distance(d)),
        &mut ties,
    );
    Ok(ReplicateResult {
        index,
        draws: settings.draws,
        ranks,
        mass_above,
        tarp_rank,
    })
}

/// Runs the replicates `range` in order (one shard of a run). Any split of `0..K` into ranges,
/// run anywhere and merged with [`merge`], gives exactly the results of one `run_range(0..K)`.
///
/// # Errors
/// The first replicate's error, as [`run_replicate`].
pub fn run_range<P: Problem + ?Sized>(
    problem: &P,
    settings: &Settings,
    range: Range<u64>,
) -> Result<Vec<ReplicateResult>, ReplicateError<P::Error>> {
    range.map(|k| run_replicate(problem, settings, k)).collect()
}

/// Merges shards of results (in any order, possibly overlapping, e.g. a retried shard) into
/// one list sorted by replicate index. Identical duplicates are kept once.
///
/// # Errors
/// [`CalibrationError::Conflict`] for two different results of one replicate;
/// [`CalibrationError::Mismatch`] for results with different dimensions or numbers of draws.
pub fn merge<I>(shards: I) -> Result<Vec<ReplicateResult>, CalibrationError>
where
    I: IntoIterator<Item = Vec<ReplicateResult>>,
{
    let mut all: Vec<ReplicateResult> = shards.into_iter().flatten().collect();
    if let Some(first) = all.first() {
        let (dim, draws) = (first.ranks.len(), first.draws);
        if all.iter().any(|r| r.draws != draws) {
            return Err(CalibrationError::Mismatch { what: "draws" });
        }
        if all
            .iter()
            .any(|r| r.ranks.len() != dim || r.mass_above.len() != dim)
        {
            return Err(CalibrationError::Mismatch { what: "dim" });
        }
    }
    all.sort_by_key(|r| r.index);
    let mut out: Vec<ReplicateResult> = Vec::with_capacity(all.len());
    for r in all {
        match out.last() {
            Some(last) if last.index == r.index => {
                if *last != r {
                    return Err(CalibrationError::Conflict { index: r.index });
                }
            }
            _ => out.push(r),
        }
    }
    Ok(out)
}
