//! The ABCDP summary of a simulated data set: the mean embedding in random Fourier features
//! of a Gaussian kernel (Park, Vinaroz & Jitkrittum 2020, §4 "ABCDP with MMD": the distance
//! is the MMD estimated by the distance between the two sets' mean embeddings), with a
//! **public** bandwidth and **public** frequencies.
//!
//! Both come from the run seed alone, through the setup stream domain [`SETUP_DOMAIN`]:
//! stream 0 simulates one prior-predictive data set for the median heuristic (when no
//! bandwidth is given), stream 1 draws the standard-normal frequencies. Nothing private is
//! touched, so every shard of a pair table, and the data owner's private pass, rebuild the
//! same map from the same seed.
//!
//! ```
//! use dpinfer_abc::summary::{Bandwidth, Embedded, RffSummary};
//! use dpinfer_simulators::models::gaussian::GaussianMean;
//! use dpinfer_simulators::{SimStream, Simulator};
//!
//! // 200 observations of N(μ, 1), prior μ ~ N(0, 10²).
//! let model = GaussianMean::new(200, 1.0, 0.0, 10.0)?;
//! // 100 features; bandwidth by the median heuristic on one prior-predictive data set.
//! let rff = RffSummary::setup(&model.prior(), &model, 7, 1, 100, Bandwidth::MedianHeuristic)?;
//! assert_eq!(rff.num_features(), 100);
//! let features = rff.features()?;
//! let embedded = Embedded::new(&model, &features, 1)?;
//! let mut out = vec![0.0; embedded.output_dim()];
//! embedded.simulate(&[0.5], &mut SimStream::new(7, 0), &mut out)?;
//! assert_eq!(out.len(), 100);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

use alloc::vec;
use alloc::vec::Vec;

use dpinfer_distances::{KernelVersion, RandomFourierFeatures, Rows, median_heuristic};
use dpinfer_simulators::{Prior, SimError, SimStream, Simulator, dist};
use rand_core::Rng;

use crate::AbcError;
pub use crate::error::SetupFailure;
use dpinfer_simulators::RowSimulator;

/// Stream domain of the public setup (bandwidth data set: stream 0; frequencies: stream 1).
pub const SETUP_DOMAIN: u64 = 0x5345_5455_0000_0000; // "SETU"

/// Rows of the prior-predictive data set the median heuristic uses (the first ones).
pub const MEDIAN_ROWS: usize = 1000;

/// Consecutive recoverable simulator failures tolerated while drawing the setup data set.
pub const MAX_SETUP_REDRAWS: usize = 1000;

/// How the kernel bandwidth is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bandwidth {
    /// A bandwidth chosen by the user (finite, > 0).
    Given(f64),
    /// The median of the pairwise distances between the first [`MEDIAN_ROWS`] rows of one
    /// prior-predictive data set (stream 0 of [`SETUP_DOMAIN`]; Gretton et al. 2012's
    /// heuristic, the choice of the ABCDP experiments).
    MedianHeuristic,
}

/// Public random-feature summary: standard-normal frequencies (`D/2 × row_dim`) and the
/// bandwidth; [`RffSummary::features`] is the feature map, its `sin`/`cos` of the summary's
/// [`KernelVersion`] ([`RffSummary::with_kernel_version`]; default [`KernelVersion::V1`], which
/// every earlier seeded embedding used).
#[derive(Clone, Debug, PartialEq)]
pub struct RffSummary {
    z: Vec<f64>,
    row_dim: usize,
    bandwidth: f64,
    version: KernelVersion,
}

impl RffSummary {
    /// A summary from given frequencies.
    ///
    /// # Errors
    /// [`AbcError::InvalidCount`] for `row_dim = 0` or frequencies that are empty or not a
    /// multiple of `row_dim`; [`AbcError::InvalidParameter`] for a bandwidth that is not finite
    /// and > 0; [`AbcError::NonFiniteValue`] for a NaN/∞ frequency.
    pub fn new(z: Vec<f64>, row_dim: usize, bandwidth: f64) -> Result<Self, AbcError> {
        if row_dim == 0 {
            return Err(AbcError::InvalidCount {
                name: "row_dim",
                value: 0,
            });
        }
        if z.is_empty() || !z.len().is_multiple_of(row_dim) {
            return Err(AbcError::InvalidCount {
                name: "frequencies",
                value: z.len(),
            });
        }
        if z.iter().any(|v| !v.is_finite()) {
            return Err(AbcError::NonFiniteValue {
                name: "frequencies",
            });
        }
        crate::error::positive("bandwidth", bandwidth)?;
        Ok(Self {
            z,
            row_dim,
            bandwidth,
            version: KernelVersion::V1,
        })
    }

    /// The same summary with the feature map's `sin`/`cos` of kernel version `version`
    /// ([`KernelVersion`]; the frequencies and bandwidth do not depend on it). A caller
    /// records [`KernelVersion::number`] beside the embeddings, as it records the seed.
    #[must_use]
    pub fn with_kernel_version(mut self, version: KernelVersion) -> Self {
        self.version = version;
        self
    }

    /// The kernel version of the feature map.
    #[must_use]
    pub fn kernel_version(&self) -> KernelVersion {
        self.version
    }

    /// The public setup of a run: the bandwidth (given, or the median heuristic on one
    /// prior-predictive data set of `simulator`, whose output is `row_dim`-dimensional rows,
    /// θ redrawn from the same stream after a recoverable failure), then `features / 2 ×
    /// row_dim` standard-normal frequencies. `features` is rounded down to an even number.
    ///
    /// # Errors
    /// [`AbcError::InvalidCount`] for `features < 2`, `row_dim = 0` or an output length that
    /// is not a multiple of `row_dim`; [`AbcError::InvalidParameter`] for a bad given bandwidth;
    /// [`AbcError::Setup`] for a fatal prior or simulator failure, [`MAX_SETUP_REDRAWS`]
    /// consecutive recoverable ones, or a degenerate median (fewer than 2 rows, all equal).
    pub fn setup<P, S>(
        prior: &P,
        simulator: &S,
        seed: u64,
        row_dim: usize,
        features: usize,
        bandwidth: Bandwidth,
    ) -> Result<Self, AbcError>
    where
        P: Prior + ?Sized,
        S: Simulator + ?Sized,
    {
        if features < 2 {
            return Err(AbcError::InvalidCount {
                name: "features",
                value: features,
            });
        }
        if row_dim == 0 || !simulator.output_dim().is_multiple_of(row_dim) {
            return Err(AbcError::InvalidCount {
                name: "row_dim",
                value: row_dim,
            });
        }
        match bandwidth {
            Bandwidth::Given(b) => Self::from_seed(seed, row_dim, features, b),
            Bandwidth::MedianHeuristic => {
                let mut rng = SimStream::with_domain(seed, SETUP_DOMAIN, 0);
                let sim = prior_predictive(prior, simulator, &mut rng)?;
                Self::from_data(seed, row_dim, features, &sim)
            }
        }
    }

    /// The summary with bandwidth by the median heuristic on the first [`MEDIAN_ROWS`] rows
    /// of `public_data` (`row_dim` values a row) and frequencies from the setup stream of
    /// `seed`. The data must be **public** (e.g. one prior-predictive simulation, as
    /// [`RffSummary::setup`] draws): the bandwidth is released with every summary, and the
    /// distance's sensitivity (Lemma 1) assumes a feature map that does not depend on the
    /// private observation.
    ///
    /// # Errors
    /// As [`RffSummary::setup`]; [`AbcError::Setup`] with [`SetupFailure::Distance`] for
    /// fewer than 2 rows, a length that is not a multiple of `row_dim`, or a degenerate median
    /// (all rows equal).
    pub fn from_data(
        seed: u64,
        row_dim: usize,
        features: usize,
        public_data: &[f64],
    ) -> Result<Self, AbcError> {
        if row_dim == 0 {
            return Err(AbcError::InvalidCount {
                name: "row_dim",
                value: 0,
            });
        }
        let rows = (public_data.len() / row_dim).min(MEDIAN_ROWS);
        let mut buf = vec![0.0; rows * rows.saturating_sub(1) / 2];
        let bandwidth = Rows::new(public_data, row_dim)
            .and_then(|_| Rows::new(&public_data[..rows * row_dim], row_dim))
            .and_then(|r| median_heuristic(r, rows, &mut buf))
            .map_err(|e| AbcError::Setup(SetupFailure::Distance(e)))?;
        Self::from_seed(seed, row_dim, features, bandwidth)
    }

    /// The summary with a given `bandwidth` and frequencies from the setup stream of `seed`
    /// (stream 1 of [`SETUP_DOMAIN`]: `features / 2 × row_dim` standard normals).
    ///
    /// # Errors
    /// [`AbcError::InvalidCount`] for `features < 2` or `row_dim = 0`;
    /// [`AbcError::InvalidParameter`] for a bandwidth that is not finite and > 0.
    pub fn from_seed(
        seed: u64,
        row_dim: usize,
        features: usize,
        bandwidth: f64,
    ) -> Result<Self, AbcError> {
        if features < 2 {
            return Err(AbcError::InvalidCount {
                name: "features",
                value: features,
            });
        }
        crate::error::positive("bandwidth", bandwidth)?;
        if row_dim == 0 {
            return Err(AbcError::InvalidCount {
                name: "row_dim",
                value: 0,
            });
        }
        let mut rng = SimStream::with_domain(seed, SETUP_DOMAIN, 1);
        let z = (0..features / 2 * row_dim)
            .map(|_| dist::std_normal(&mut rng))
            .collect();
        Self::new(z, row_dim, bandwidth)
    }

    /// The kernel bandwidth.
    #[must_use]
    pub fn bandwidth(&self) -> f64 {
        self.bandwidth
    }

    /// The standard-normal frequencies, `D/2 × row_dim`, row-major.
    #[must_use]
    pub fn frequencies(&self) -> &[f64] {
        &self.z
    }

    /// Dimension of a data row.
    #[must_use]
    pub fn row_dim(&self) -> usize {
        self.row_dim
    }

    /// `D`, the length of an embedding.
    #[must_use]
    pub fn num_features(&self) -> usize {
        2 * (self.z.len() / self.row_dim)
    }

    /// The feature map.
    ///
    /// # Errors
    /// None for a summary built by [`RffSummary::new`] or [`RffSummary::setup`] (the
    /// distances crate re-checks its inputs).
    pub fn features(&self) -> Result<RandomFourierFeatures<'_>, AbcError> {
        RandomFourierFeatures::new(&self.z, self.row_dim, self.bandwidth)
            .map(|f| f.with_kernel_version(self.version))
            .map_err(|e| AbcError::Setup(SetupFailure::Distance(e)))
    }
}

/// One prior-predictive data set: θ from the prior, then one simulation; θ is redrawn from
/// the same stream after a recoverable failure, at most [`MAX_SETUP_REDRAWS`] times.
fn prior_predictive<P, S>(
    prior: &P,
    simulator: &S,
    rng: &mut SimStream,
) -> Result<Vec<f64>, AbcError>
where
    P: Prior + ?Sized,
    S: Simulator + ?Sized,
{
    let mut th = vec![0.0; prior.dim()];
    let mut sim = vec![0.0; simulator.output_dim()];
    for _ in 0..MAX_SETUP_REDRAWS {
        prior
            .sample(rng, &mut th)
            .map_err(|e| AbcError::Setup(SetupFailure::Model(e)))?;
        match simulator.simulate(&th, rng, &mut sim) {
            Ok(()) => return Ok(sim),
            Err(e) if e.is_recoverable() => {}
            Err(e) => return Err(AbcError::Setup(SetupFailure::Model(e))),
        }
    }
    Err(AbcError::Setup(SetupFailure::Redraws {
        tries: MAX_SETUP_REDRAWS,
    }))
}

/// A simulator followed by the random-feature mean embedding: its output is the embedding
/// (length `D`) of the simulated data set's `row_dim`-dimensional rows. Recoverable failures
/// of the inner simulator pass through (the pair generator redraws θ); its fatal errors pass
/// through unchanged, and an output the feature map refuses is a fatal
/// [`SimError::DimensionMismatch`].
///
/// It wraps a [`Simulator`] ([`Embedded::new`]; then it is one) or a block simulator that is
/// told the rows' table indices ([`Embedded::rows`]; then it is a [`RowSimulator`], e.g. a
/// pool of external worker processes).
#[derive(Clone, Copy, Debug)]
pub struct Embedded<'a, S> {
    sim: S,
    features: &'a RandomFourierFeatures<'a>,
    row_dim: usize,
}

impl<'a, S> Embedded<'a, S> {
    /// Checks `row_dim` against the feature map and an inner output of `raw` values.
    fn checked(
        sim: S,
        raw: usize,
        features: &'a RandomFourierFeatures<'a>,
        row_dim: usize,
    ) -> Result<Self, AbcError> {
        if row_dim == 0 || row_dim != features.dim() || !raw.is_multiple_of(row_dim) || raw == 0 {
            return Err(AbcError::InvalidCount {
                name: "row_dim",
                value: row_dim,
            });
        }
        Ok(Self {
            sim,
            features,
            row_dim,
        })
    }

    /// Writes the embedding of one raw output `sim` into `out`.
    fn embed(&self, sim: &[f64], out: &mut [f64]) -> Result<(), SimError> {
        Rows::new(sim, self.row_dim)
            .and_then(|rows| self.features.mean_embedding(rows, out))
            .map_err(|_| SimError::DimensionMismatch {
                what: "simulator output",
                expected: self.features.num_features(),
                got: out.len(),
            })
    }

    /// Checks an output buffer of `got` values for `n` embeddings.
    fn check_out(&self, n: usize, got: usize) -> Result<(), SimError> {
        let expected = n.saturating_mul(self.features.num_features());
        if got == expected {
            Ok(())
        } else {
            Err(SimError::DimensionMismatch {
                what: "out",
                expected,
                got,
            })
        }
    }
}

impl<'a, S: Simulator> Embedded<'a, S> {
    /// Wraps `sim`, whose output is rows of `row_dim` values.
    ///
    /// # Errors
    /// [`AbcError::InvalidCount`] if `row_dim` is 0, differs from the feature map's, or does
    /// not divide the simulator's output length.
    pub fn new(
        sim: S,
        features: &'a RandomFourierFeatures<'a>,
        row_dim: usize,
    ) -> Result<Self, AbcError> {
        let raw = sim.output_dim();
        Self::checked(sim, raw, features, row_dim)
    }
}

impl<'a, S: RowSimulator> Embedded<'a, S> {
    /// Wraps the block simulator `sim`, whose output per row is a data set of rows of
    /// `row_dim` values (each block is simulated in one call, then embedded row by row).
    ///
    /// # Errors
    /// As [`Embedded::new`].
    pub fn rows(
        sim: S,
        features: &'a RandomFourierFeatures<'a>,
        row_dim: usize,
    ) -> Result<Self, AbcError> {
        let raw = sim.row_output_dim();
        Self::checked(sim, raw, features, row_dim)
    }
}

impl<S: Simulator> Simulator for Embedded<'_, S> {
    fn param_dim(&self) -> usize {
        self.sim.param_dim()
    }

    fn output_dim(&self) -> usize {
        self.features.num_features()
    }

    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        self.check_out(1, out.len())?;
        let mut sim = vec![0.0; self.sim.output_dim()];
        self.sim.simulate(theta, rng, &mut sim)?;
        self.embed(&sim, out)
    }
}

impl<S: RowSimulator> RowSimulator for Embedded<'_, S> {
    fn row_param_dim(&self) -> usize {
        self.sim.row_param_dim()
    }

    fn row_output_dim(&self) -> usize {
        self.features.num_features()
    }

    fn simulate_rows(
        &self,
        rows: &[u64],
        thetas: &[f64],
        streams: &mut [SimStream],
        out: &mut [f64],
        ok: &mut [bool],
    ) -> Result<(), SimError> {
        self.check_out(streams.len(), out.len())?;
        let raw_len = self.sim.row_output_dim();
        let mut raw = vec![0.0; streams.len().saturating_mul(raw_len)];
        self.sim
            .simulate_rows(rows, thetas, streams, &mut raw, ok)?;
        let k = self.features.num_features();
        for ((r, o), &good) in raw
            .chunks_exact(raw_len)
            .zip(out.chunks_exact_mut(k))
            .zip(ok.iter())
        {
            if good {
                self.embed(r, o)?;
            }
        }
        Ok(())
    }
}
