//! Scrambled Sobol points and the randomised quasi-Monte Carlo (RQMC) inner integral
//! (**public randomness only**).
//!
//! Xiong, Ju & Zhang (§3.4, eq. 11) estimate the inner integral of their losses,
//! `I(θ, x) = ∫_{(0,1)^r} g(τ(v, s(x)), θ) dv`, with `M` scrambled Sobol points `v_j` in place
//! of i.i.d. uniforms: for an integrand of bounded Hardy–Krause variation the RMSE falls like
//! `M^{-1+δ}` instead of `M^{-1/2}` (their eq. 12, Fig. 7). `τ` is the mechanism's noise as a map
//! from uniforms (`dpinfer_mechanisms::NoiseMap`), `g` any function of the release.
//!
//! - [`Sobol`]: the Sobol sequence in up to [`MAX_DIM`] = 32 dimensions with the direction
//!   numbers of Joe & Kuo (2008), `new-joe-kuo-6.21201` (dimension 1 is van der Corput's), in
//!   Gray-code order, at most 2³² points. [`Sobol::new`] is the plain sequence (its first point
//!   is 0: never feed it to an inverse CDF); [`Sobol::scrambled`] applies a random linear matrix
//!   scramble (Matoušek 1998: a random lower-triangular binary matrix with unit diagonal,
//!   one per coordinate, on 64 digits) and a random digital shift, drawn from a [`SimStream`].
//!   The scramble keeps the net property (each of the first `2^m` points lies in its own
//!   interval `[k/2^m, (k+1)/2^m)` in every coordinate), and the digital shift makes every point
//!   marginally uniform: its 64 digits are uniform, and its value is the midpoint
//!   `(j + ½)·2⁻⁵²` of the `j`-th of 2⁵² equal cells, so every coordinate lies in `(0, 1)`
//!   strictly (no exact 0 or 1: safe for inverse CDFs). It is *not* Owen's nested uniform
//!   scrambling, whose variance is the one analysed by Owen (1997); the linear scramble with a
//!   digital shift is the one SciPy's `qmc.Sobol` uses and gives unbiased estimates with the
//!   same convergence for smooth integrands (tested here: `tests/suite/qmc.rs` and the workspace
//!   test `rqmc`).
//! - [`InnerIntegral`]: eq. 11, `Î = (1/M) Σ_j g(τ(v_j))`, with RQMC (one fresh scramble per
//!   estimate) or plain Monte Carlo selectable ([`Sampling`]), generic over the two closures.
//!
//! # Privacy
//!
//! The scrambles and the Monte Carlo uniforms come from a [`SimStream`], whose seed is public:
//! these points simulate a mechanism on *simulated* data for inference, they never draw a real
//! release's privacy noise (that is the mechanism's `release`, from the secret noise RNG).
//!
//! # References
//!
//! - S. Joe, F. Y. Kuo (2008), *Constructing Sobol sequences with better two-dimensional
//!   projections*, SIAM J. Sci. Comput. 30, 2635–2654; direction numbers `new-joe-kuo-6.21201`
//!   (the table below holds its dimensions 2–32).
//! - P. Bratley, B. L. Fox (1988), *Algorithm 659*, ACM TOMS 14 (Gray-code generation).
//! - J. Matoušek (1998), *On the L2-discrepancy for anchored boxes*, J. Complexity 14 (linear
//!   matrix scrambling); A. B. Owen (1997), *Scrambled net variance for integrals of smooth
//!   functions*, Ann. Statist. 25.
//! - Xiong, Ju, Zhang, *Simulation-based inference for privacy-protected data*, §3.4.

use dpinfer_math::NeumaierSum;
use rand_core::Rng;

use crate::{SimError, SimStream};

/// The largest dimension [`Sobol`] supports (Joe–Kuo dimensions 1–32).
pub const MAX_DIM: usize = 32;

/// Index bits: at most `2^BITS` points per sequence.
const BITS: usize = 32;

/// `(s, a, m_1 … m_s)` of Joe & Kuo's `new-joe-kuo-6.21201`, dimensions 2–32 (`s` the degree
/// of the primitive polynomial, `a` its inner coefficients, `m_k` the initial direction
/// numbers; unused trailing `m` are 0).
const JOE_KUO: [(u32, u32, [u64; 7]); MAX_DIM - 1] = [
    (1, 0, [1, 0, 0, 0, 0, 0, 0]),
    (2, 1, [1, 3, 0, 0, 0, 0, 0]),
    (3, 1, [1, 3, 1, 0, 0, 0, 0]),
    (3, 2, [1, 1, 1, 0, 0, 0, 0]),
    (4, 1, [1, 1, 3, 3, 0, 0, 0]),
    (4, 4, [1, 3, 5, 13, 0, 0, 0]),
    (5, 2, [1, 1, 5, 5, 17, 0, 0]),
    (5, 4, [1, 1, 5, 5, 5, 0, 0]),
    (5, 7, [1, 1, 7, 11, 19, 0, 0]),
    (5, 11, [1, 1, 5, 1, 1, 0, 0]),
    (5, 13, [1, 1, 1, 3, 11, 0, 0]),
    (5, 14, [1, 3, 5, 5, 31, 0, 0]),
    (6, 1, [1, 3, 3, 9, 7, 49, 0]),
    (6, 13, [1, 1, 1, 15, 21, 21, 0]),
    (6, 16, [1, 3, 1, 13, 27, 49, 0]),
    (6, 19, [1, 1, 1, 15, 7, 5, 0]),
    (6, 22, [1, 3, 1, 15, 13, 25, 0]),
    (6, 25, [1, 1, 5, 5, 19, 61, 0]),
    (7, 1, [1, 3, 7, 11, 23, 15, 103]),
    (7, 4, [1, 3, 7, 13, 13, 15, 69]),
    (7, 7, [1, 1, 3, 13, 7, 35, 63]),
    (7, 8, [1, 3, 5, 9, 1, 25, 53]),
    (7, 14, [1, 3, 1, 13, 9, 35, 107]),
    (7, 19, [1, 3, 1, 5, 27, 61, 31]),
    (7, 21, [1, 1, 5, 11, 19, 41, 61]),
    (7, 28, [1, 3, 5, 3, 3, 13, 69]),
    (7, 31, [1, 1, 7, 13, 1, 19, 1]),
    (7, 32, [1, 3, 7, 5, 13, 19, 59]),
    (7, 37, [1, 1, 3, 9, 25, 29, 41]),
    (7, 41, [1, 3, 5, 13, 23, 1, 55]),
    (7, 42, [1, 3, 7, 3, 13, 59, 17]),
];

/// The direction numbers `V_k = m_k·2^{64−k}` (`k = 1…32`) of Joe–Kuo dimension `d` (0-based).
fn direction_numbers(d: usize) -> [u64; BITS] {
    let mut m = [0u64; BITS];
    if d == 0 {
        m = [1; BITS];
    } else {
        let (s, a, init) = JOE_KUO[d - 1];
        let s = s as usize;
        m[..s].copy_from_slice(&init[..s]);
        for k in s..BITS {
            // m_k = 2a_1 m_{k−1} ⊕ 4a_2 m_{k−2} ⊕ … ⊕ 2^{s−1}a_{s−1} m_{k−s+1} ⊕ 2^s m_{k−s} ⊕ m_{k−s}
            let mut v = m[k - s] ^ (m[k - s] << s);
            for i in 1..s {
                if (a >> (s - 1 - i)) & 1 == 1 {
                    v ^= m[k - i] << i;
                }
            }
            m[k] = v;
        }
    }
    let mut out = [0u64; BITS];
    for (k, (o, &mk)) in out.iter_mut().zip(&m).enumerate() {
        // m_k < 2^k, so the shift loses no bit.
        *o = mk << (63 - k);
    }
    out
}

/// `(j + ½)·2⁻⁵²` for the top 52 bits `j` of `x`: in `[2⁻⁵³, 1 − 2⁻⁵³]`, never 0 or 1.
#[inline]
fn midpoint(x: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let j = (x >> 12) as f64; // < 2^52: exact
    (j + 0.5) * (1.0 / 4_503_599_627_370_496.0) // 2^-52
}

/// A Sobol sequence (Joe–Kuo direction numbers, Gray-code order), plain or scrambled; see
/// the [module docs](self).
///
/// ```
/// use dpinfer_simulators::SimStream;
/// use dpinfer_simulators::qmc::Sobol;
/// // The plain sequence: the published first points.
/// let mut plain = Sobol::new(2)?;
/// let mut p = [0.0; 2];
/// for expected in [[0.0, 0.0], [0.5, 0.5], [0.75, 0.25], [0.25, 0.75]] {
///     plain.next_into(&mut p)?;
///     assert_eq!(p, expected);
/// }
/// // A scrambled sequence from a public stream: points in (0, 1), one per stratum.
/// let mut scrambled = Sobol::scrambled(2, &mut SimStream::with_domain(7, 1, 0))?;
/// let mut seen = [false; 4];
/// for _ in 0..4 {
///     scrambled.next_into(&mut p)?;
///     assert!(p.iter().all(|&x| x > 0.0 && x < 1.0));
///     seen[(p[0] * 4.0) as usize] = true;
/// }
/// assert!(seen.iter().all(|&s| s));
/// # Ok::<(), dpinfer_simulators::SimError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sobol {
    dim: usize,
    scrambled: bool,
    /// Direction numbers (scrambled for a scrambled sequence), per coordinate.
    v: [[u64; BITS]; MAX_DIM],
    /// The digital shift (0 for the plain sequence).
    shift: [u64; MAX_DIM],
    /// The current point's digits (the digital shift included).
    x: [u64; MAX_DIM],
    /// The index of the next point.
    next: u64,
}

impl Sobol {
    /// The plain (unscrambled) sequence in `dim` dimensions. Its points are the exact dyadic
    /// rationals `k/2³²` of the published tables; the first is 0, so use [`Sobol::scrambled`]
    /// for anything that inverts a CDF.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidSize`] (`"dim"`) unless `1 ≤ dim ≤ MAX_DIM`.
    pub fn new(dim: usize) -> Result<Self, SimError> {
        check_dim(dim)?;
        Ok(Self::plain(dim))
    }

    /// The plain sequence for a checked `dim`.
    fn plain(dim: usize) -> Self {
        let mut v = [[0u64; BITS]; MAX_DIM];
        for (d, vd) in v.iter_mut().enumerate().take(dim) {
            *vd = direction_numbers(d);
        }
        Self {
            dim,
            scrambled: false,
            v,
            shift: [0; MAX_DIM],
            x: [0; MAX_DIM],
            next: 0,
        }
    }

    /// The sequence in `dim` dimensions with a random linear matrix scramble and a random
    /// digital shift per coordinate (see the [module docs](self)), drawn from `stream`:
    /// for each coordinate in order, 63 words for the rows 2–64 of the lower-triangular
    /// matrix (row `i` keeps its `i − 1` bits above the diagonal), then one word for the shift.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidSize`] (`"dim"`) unless `1 ≤ dim ≤ MAX_DIM`.
    pub fn scrambled(dim: usize, stream: &mut SimStream) -> Result<Self, SimError> {
        check_dim(dim)?;
        Ok(Self::scramble(dim, stream))
    }

    /// The scrambled sequence for a checked `dim`.
    fn scramble(dim: usize, stream: &mut SimStream) -> Self {
        let mut seq = Self::plain(dim);
        seq.scrambled = true;
        for d in 0..dim {
            // rows[i]: the row for output digit i (0 = most significant), as a mask over the
            // input digits at bit positions 63 … 63 − i, diagonal bit set.
            let mut rows = [0u64; 64];
            rows[0] = 1 << 63;
            for (i, row) in rows.iter_mut().enumerate().skip(1) {
                let diagonal = 1u64 << (63 - i);
                let above = !((diagonal << 1).wrapping_sub(1)); // bits strictly above the diagonal
                *row = (stream.next_u64() & above) | diagonal;
            }
            for vk in &mut seq.v[d] {
                let mut y = 0u64;
                for (i, row) in rows.iter().enumerate() {
                    y |= u64::from((row & *vk).count_ones() & 1) << (63 - i);
                }
                *vk = y;
            }
            seq.shift[d] = stream.next_u64();
        }
        seq.x = seq.shift;
        seq
    }

    /// The dimension.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether the sequence is scrambled.
    #[must_use]
    pub fn is_scrambled(&self) -> bool {
        self.scrambled
    }

    /// The index of the point the next call returns (0 for a new sequence).
    #[must_use]
    pub fn position(&self) -> u64 {
        self.next
    }

    /// Positions the sequence so that the next call to [`Sobol::next_into`] returns the point
    /// of index `index` (`0 ≤ index ≤ 2³²`; `2³²` leaves it exhausted): point `i` is the XOR of
    /// the direction numbers at the set bits of the Gray code `i ⊕ (i >> 1)`, and the shift.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidSize`] (`"index"`) for `index > 2³²`.
    pub fn seek(&mut self, index: u64) -> Result<(), SimError> {
        if index > 1 << BITS {
            return Err(SimError::InvalidSize {
                name: "index",
                value: index,
            });
        }
        // The state holds the point before `index` (the shift alone for index 0).
        let before = index.saturating_sub(1);
        let gray = if index == 0 {
            0
        } else {
            before ^ (before >> 1)
        };
        for d in 0..self.dim {
            let mut x = self.shift[d];
            for (k, vk) in self.v[d].iter().enumerate() {
                if (gray >> k) & 1 == 1 {
                    x ^= vk;
                }
            }
            self.x[d] = x;
        }
        self.next = index;
        Ok(())
    }

    /// Writes the next point into `out` (length `dim`): for a scrambled sequence each
    /// coordinate is in `(0, 1)` (the midpoint `(j + ½)·2⁻⁵²` of its cell), for the plain one
    /// the exact `k/2³²` in `[0, 1)`.
    ///
    /// # Errors
    ///
    /// [`SimError::DimensionMismatch`] (`"point"`) unless `out.len() == dim`;
    /// [`SimError::Exhausted`] after 2³² points.
    pub fn next_into(&mut self, out: &mut [f64]) -> Result<(), SimError> {
        if out.len() != self.dim {
            return Err(SimError::DimensionMismatch {
                what: "point",
                expected: self.dim,
                got: out.len(),
            });
        }
        if self.next >> BITS != 0 {
            return Err(SimError::Exhausted);
        }
        self.advance(out);
        Ok(())
    }

    /// The next point into `out` (`out.len() == dim` and fewer than 2³² points drawn: checked
    /// by the callers).
    fn advance(&mut self, out: &mut [f64]) {
        if self.next > 0 {
            // Gray code: point i differs from point i − 1 by the direction number of the
            // lowest set bit of i.
            let c = self.next.trailing_zeros() as usize;
            for (x, v) in self.x.iter_mut().zip(&self.v).take(self.dim) {
                *x ^= v[c];
            }
        }
        self.next += 1;
        for (o, &x) in out.iter_mut().zip(&self.x) {
            *o = if self.scrambled {
                midpoint(x)
            } else {
                // only the top 32 bits are set: exact
                #[allow(clippy::cast_precision_loss)]
                let k = (x >> 32) as f64;
                k * (1.0 / 4_294_967_296.0)
            };
        }
    }
}

fn check_dim(dim: usize) -> Result<(), SimError> {
    if dim == 0 || dim > MAX_DIM {
        Err(SimError::InvalidSize {
            name: "dim",
            value: u64::try_from(dim).unwrap_or(u64::MAX),
        })
    } else {
        Ok(())
    }
}

/// How [`InnerIntegral`] places its `M` points.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Sampling {
    /// Randomised QMC: the first `M` points of a freshly scrambled Sobol sequence (use a
    /// power of two for `M`: the net property, and the rate, hold for `M = 2^m`).
    #[default]
    Rqmc,
    /// Plain Monte Carlo: `M` i.i.d. uniform points from the stream (same `(j + ½)·2⁻⁵²`
    /// midpoints).
    MonteCarlo,
}

/// The inner-integral estimator of Xiong, Ju & Zhang eq. 11,
/// `Î(θ, x) = (1/M) Σ_{j=1}^{M} g(τ(v_j; s(x)), θ)`, over `M` points `v_j ∈ (0, 1)^r` placed by
/// [`Sampling`]. Unbiased for both samplings (every point is marginally uniform).
///
/// It knows neither the mechanism nor `g`: `τ` and `g` are closures, so any
/// `dpinfer_mechanisms::NoiseMap` (or any other map of uniforms) and any `g` fit — which also
/// keeps `dpinfer-simulators` free of a dependency on `dpinfer-mechanisms`.
///
/// ```
/// use dpinfer_simulators::SimStream;
/// use dpinfer_simulators::qmc::{InnerIntegral, Sampling};
/// // E[Y²] for Y = s + U − ½ with U uniform: s² + 1/12 (τ a shift, g the square).
/// let s = 2.0;
/// let est = InnerIntegral::new(Sampling::Rqmc, 256, 1)?;
/// let mut stream = SimStream::with_domain(42, 9, 0);
/// let mut y = [0.0];
/// let i = est.estimate(
///     &mut stream,
///     &mut y,
///     |u, out| {
///         out[0] = s + u[0] - 0.5;
///         Ok::<(), core::convert::Infallible>(())
///     },
///     |y| y[0] * y[0],
/// )?;
/// assert!((i - (4.0 + 1.0 / 12.0)).abs() < 1e-4);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct InnerIntegral {
    sampling: Sampling,
    points: u64,
    dim: usize,
}

impl InnerIntegral {
    /// `points` (`M`) points in `dim` (`r`) dimensions.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidSize`] (`"points"`) unless `1 ≤ M ≤ 2³²`; (`"dim"`) unless
    /// `1 ≤ r ≤ MAX_DIM`.
    pub fn new(sampling: Sampling, points: usize, dim: usize) -> Result<Self, SimError> {
        let m = u64::try_from(points).unwrap_or(u64::MAX);
        if m == 0 || m > 1 << BITS {
            return Err(SimError::InvalidSize {
                name: "points",
                value: m,
            });
        }
        check_dim(dim)?;
        Ok(Self {
            sampling,
            points: m,
            dim,
        })
    }

    /// The sampling.
    #[must_use]
    pub fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// `M`.
    #[must_use]
    pub fn points(&self) -> u64 {
        self.points
    }

    /// `r`.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// One estimate: draws a fresh scramble (RQMC) or `M·r` uniforms (MC) from `stream`, and
    /// returns `(1/M) Σ_j g(y_j)` where `tau(v_j, y_j)` writes the release `y_j` into the
    /// caller's buffer `release` (e.g. `|v, y| mech.tau(v, s, y)` for a
    /// `dpinfer_mechanisms::NoiseMap`). The sum is compensated (Neumaier). A NaN from `g`
    /// propagates to the result.
    ///
    /// # Errors
    ///
    /// The first error `tau` returns (the estimate is abandoned).
    pub fn estimate<E>(
        &self,
        stream: &mut SimStream,
        release: &mut [f64],
        mut tau: impl FnMut(&[f64], &mut [f64]) -> Result<(), E>,
        mut g: impl FnMut(&[f64]) -> f64,
    ) -> Result<f64, E> {
        let mut v = [0.0; MAX_DIM];
        let v = &mut v[..self.dim];
        let mut sum = NeumaierSum::default();
        match self.sampling {
            Sampling::Rqmc => {
                // `new` checked 1 ≤ dim ≤ MAX_DIM and M ≤ 2^32 points.
                let mut seq = Sobol::scramble(self.dim, stream);
                for _ in 0..self.points {
                    seq.advance(v);
                    tau(v, release)?;
                    sum.add(g(release));
                }
            }
            Sampling::MonteCarlo => {
                for _ in 0..self.points {
                    for x in v.iter_mut() {
                        *x = midpoint(stream.next_u64());
                    }
                    tau(v, release)?;
                    sum.add(g(release));
                }
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let m = self.points as f64;
        Ok(sum.sum() / m)
    }
}
