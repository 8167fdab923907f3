//! Random-Fourier-feature MMD with a feature map of norm exactly 1.

use crate::fastsincos;
use crate::mmd::as_f64;
use crate::rows::{all_finite, sanitize};
use crate::sensitivity::{self, Sensitivity};
use crate::simd::{Job, dispatch};
use crate::version::{Transcendentals, V1, V2, kernel_version_api};
use crate::{AllowanceVersion, DistanceError, KernelVersion, Rows};

/// Random Fourier features for the Gaussian kernel `exp(−‖x − y‖²/(2l²))` (Rahimi & Recht
/// 2008; Park & Jitkrittum, Appendix C), in the cos/sin form: with `D/2` frequencies
/// `ω_j = z_j / l`, `z_j ~ N(0, I_d)` supplied by the caller,
///
/// `φ̂(x) = √(2/D) (cos ω_1ᵀx, sin ω_1ᵀx, …, cos ω_{D/2}ᵀx, sin ω_{D/2}ᵀx)`,
///
/// so `φ̂(x)ᵀφ̂(y) = (2/D) Σ_j cos(ω_jᵀ(x − y))` is an unbiased estimate of `k(x, y)` and
/// `‖φ̂(x)‖² = (2/D)(D/2) = 1` exactly (in real arithmetic), for every `x`. That unit norm is
/// what makes the sensitivity `2/N` ([`sensitivity::rff_mmd`]); the paper's
/// `√(2/D) cos(ωᵀx + b)` variant has `‖φ̂‖² ≤ 2` and would give `2√2/N`.
///
/// The frequencies are public randomness: this crate takes them from the caller (no RNG
/// dependency). A phase `ω_jᵀx` that is not finite (only possible for non-finite or huge
/// data) is mapped to 0, which keeps the pair `(cos, sin)` of norm 1.
///
/// The `sin`/`cos` are versioned ([`KernelVersion`], `with_kernel_version`):
///
/// ```
/// use dpinfer_distances::{KernelVersion, RandomFourierFeatures, Rows};
/// let z = [0.3, -1.2, 0.7];
/// let f = RandomFourierFeatures::new(&z, 1, 2.0)?.with_kernel_version(KernelVersion::V2);
/// assert_eq!(f.kernel_version().number(), 2);
/// let x = Rows::one_dim(&[0.4, -1.0])?;
/// let y = Rows::one_dim(&[0.1, 0.9])?;
/// let v1 = f.with_kernel_version(KernelVersion::V1).mmd2(x, y)?;
/// assert!((f.mmd2(x, y)? - v1).abs() < 1e-14);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
///
/// ```
/// use dpinfer_distances::RandomFourierFeatures;
/// let z = [0.3, -1.2, 0.7]; // three standard-normal draws: D = 6 features, d = 1
/// let f = RandomFourierFeatures::new(&z, 1, 2.0)?;
/// let mut phi = [0.0; 6];
/// f.feature_map(&[0.4], &mut phi)?;
/// let norm2: f64 = phi.iter().map(|v| v * v).sum();
/// assert!((norm2 - 1.0).abs() < 1e-15);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomFourierFeatures<'f> {
    z: &'f [f64],
    dim: usize,
    inv_l: f64,
    scale: f64,
    version: KernelVersion,
}

kernel_version_api!(RandomFourierFeatures<'_>, "feature map", "`sin`/`cos`");

impl<'f> RandomFourierFeatures<'f> {
    /// Features from `z` (row-major, `D/2` rows of `dim` standard-normal draws) and bandwidth
    /// `l`.
    ///
    /// # Errors
    /// [`DistanceError::ZeroDimension`]; [`DistanceError::InvalidFrequencies`] if `z` is
    /// empty, not whole rows, or holds a non-finite value; [`DistanceError::InvalidBandwidth`]
    /// unless `l` and `1/l` are finite and positive.
    pub fn new(z: &'f [f64], dim: usize, bandwidth: f64) -> Result<Self, DistanceError> {
        if dim == 0 {
            return Err(DistanceError::ZeroDimension);
        }
        if z.is_empty() || !z.len().is_multiple_of(dim) || !z.iter().all(|v| v.is_finite()) {
            return Err(DistanceError::InvalidFrequencies);
        }
        let inv_l = 1.0 / bandwidth;
        if !(bandwidth.is_finite() && bandwidth > 0.0 && inv_l.is_finite()) {
            return Err(DistanceError::InvalidBandwidth);
        }
        let d_feat = 2 * (z.len() / dim);
        let scale = libm::sqrt(2.0 / as_f64(d_feat));
        Ok(Self {
            z,
            dim,
            inv_l,
            scale,
            version: KernelVersion::V1,
        })
    }

    /// Row dimension `d`.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of frequencies `D/2`.
    #[must_use]
    pub fn num_frequencies(&self) -> usize {
        self.z.len() / self.dim
    }

    /// Number of features `D` (even).
    #[must_use]
    pub fn num_features(&self) -> usize {
        2 * self.num_frequencies()
    }

    #[inline(always)]
    fn phase(&self, zj: &[f64], x: &[f64]) -> f64 {
        let mut t = 0.0;
        for (a, b) in zj.iter().zip(x) {
            t += a * sanitize(*b);
        }
        let t = t * self.inv_l;
        if t.is_finite() { t } else { 0.0 }
    }

    /// Writes `φ̂(x)` into `out[..D]`.
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`] if `x.len() ≠ d`; [`DistanceError::BufferTooSmall`]
    /// if `out.len() < D`.
    pub fn feature_map(&self, x: &[f64], out: &mut [f64]) -> Result<(), DistanceError> {
        if x.len() != self.dim {
            return Err(DistanceError::DimensionMismatch {
                expected: self.dim,
                found: x.len(),
            });
        }
        let d = self.num_features();
        if out.len() < d {
            return Err(DistanceError::BufferTooSmall {
                needed: d,
                found: out.len(),
            });
        }
        for (zj, o) in self.z.chunks_exact(self.dim).zip(out.chunks_exact_mut(2)) {
            let t = self.phase(zj, x);
            let (s, c) = match self.version {
                KernelVersion::V1 => V1::sincos(t),
                // Version 3 changes only `exp`: its `sincos` is version 2's.
                KernelVersion::V2 | KernelVersion::V3 => V2::sincos(t),
            };
            o[0] = self.scale * c;
            o[1] = self.scale * s;
        }
        Ok(())
    }

    /// Sums of `(cos, sin)` of frequency `zj` over the rows of `x` (divided by nothing). Called
    /// inside the dispatched loops over frequencies (`MeanEmbedding`, `SqDistTo`, `Mmd2`).
    ///
    /// `bound` is [`finite_max_abs`] of a 1-D `x` (`None` otherwise): when `|w|·bound` is in
    /// the fast range, every phase `w·x_i` is (rounding is monotone), so the per-block range
    /// checks and the non-finite maps are skipped — the same operations on the same values.
    #[inline(always)]
    fn cos_sin_sums_here<T: Transcendentals>(
        &self,
        zj: &[f64],
        x: Rows<'_>,
        bound: Option<f64>,
    ) -> (f64, f64) {
        if self.dim == 1 {
            // Blocks of LANES phases: the branch-free sincos runs on a whole block (it
            // vectorises) unless a phase exceeds its range, then libm serves that block.
            const LANES: usize = 8;
            let w = zj[0] * self.inv_l;
            if let Some(m) = bound
                && libm::fabs(w) * m <= fastsincos::FAST_LIMIT
            {
                return sums_1d_in_range::<T>(w, x.as_slice());
            }
            let (mut cs, mut ss) = ([0.0; LANES], [0.0; LANES]);
            let mut it = x.as_slice().chunks_exact(LANES);
            for p in &mut it {
                let mut t = [0.0; LANES];
                let mut big = 0.0_f64;
                for (ti, &v) in t.iter_mut().zip(p) {
                    let u = w * sanitize(v);
                    *ti = if u.is_finite() { u } else { 0.0 };
                    // A select, not `f64::max` (whose NaN rule blocks vectorisation); `ti` is
                    // finite here, so the result is the same.
                    let a = ti.abs();
                    big = if a > big { a } else { big };
                }
                if big <= fastsincos::FAST_LIMIT {
                    for ((ti, c), s) in t.iter().zip(&mut cs).zip(&mut ss) {
                        let (sv, cv) = T::sincos_small(*ti);
                        *c += cv;
                        *s += sv;
                    }
                } else {
                    for ((ti, c), s) in t.iter().zip(&mut cs).zip(&mut ss) {
                        let (sv, cv) = libm::sincos(*ti);
                        *c += cv;
                        *s += sv;
                    }
                }
            }
            for (&v, (c, s)) in it.remainder().iter().zip(cs.iter_mut().zip(&mut ss)) {
                let u = w * sanitize(v);
                let (sv, cv) = T::sincos(if u.is_finite() { u } else { 0.0 });
                *c += cv;
                *s += sv;
            }
            (pairwise8(&cs), pairwise8(&ss))
        } else {
            match self.dim {
                2 => self.cos_sin_rows::<T, 2>(zj, x),
                3 => self.cos_sin_rows::<T, 3>(zj, x),
                4 => self.cos_sin_rows::<T, 4>(zj, x),
                5 => self.cos_sin_rows::<T, 5>(zj, x),
                6 => self.cos_sin_rows::<T, 6>(zj, x),
                7 => self.cos_sin_rows::<T, 7>(zj, x),
                8 => self.cos_sin_rows::<T, 8>(zj, x),
                _ => self.cos_sin_rows_scalar::<T>(zj, x.as_slice()),
            }
        }
    }

    /// `(Σ cos, Σ sin)` over rows, one row at a time, summed in row order: the reference
    /// order of the multi-dimensional paths.
    #[inline(always)]
    fn cos_sin_rows_scalar<T: Transcendentals>(&self, zj: &[f64], rows: &[f64]) -> (f64, f64) {
        let (mut c0, mut s0) = (0.0, 0.0);
        for row in rows.chunks_exact(self.dim) {
            let (s, c) = T::sincos(self.phase(zj, row));
            c0 += c;
            s0 += s;
        }
        (c0, s0)
    }

    /// [`Self::cos_sin_rows_scalar`] for a compile-time dimension `D` (2..=8), 8 rows at a
    /// time: the chunk's `8·D` products `z_k · x_k` as one contiguous vector, each row's
    /// phase summed in coordinate order from 0 (as [`Self::phase`]), the branch-free `sincos`
    /// on the 8 phases when all are in its range (per-row [`Transcendentals::sincos`] otherwise,
    /// which picks the same routine per phase), and the sums added in row order — the same
    /// bits as the scalar loop.
    #[inline(always)]
    fn cos_sin_rows<T: Transcendentals, const D: usize>(
        &self,
        zj: &[f64],
        x: Rows<'_>,
    ) -> (f64, f64) {
        const R: usize = 8;
        let mut z = [0.0f64; D];
        for (a, b) in z.iter_mut().zip(zj) {
            *a = *b;
        }
        let zpat = [z; R];
        let (mut c0, mut s0) = (0.0, 0.0);
        let mut chunks = x.as_slice().chunks_exact(R * D);
        for blk in &mut chunks {
            let mut p = [[0.0f64; D]; R];
            for ((o, a), b) in p
                .as_flattened_mut()
                .iter_mut()
                .zip(zpat.as_flattened())
                .zip(blk)
            {
                *o = a * sanitize(*b);
            }
            let mut t = [0.0f64; R];
            let mut big = 0.0_f64;
            for (ti, row) in t.iter_mut().zip(&p) {
                let mut u = 0.0;
                for v in row {
                    u += v;
                }
                let u = u * self.inv_l;
                *ti = if u.is_finite() { u } else { 0.0 };
                let a = ti.abs();
                big = if a > big { a } else { big };
            }
            if big <= fastsincos::FAST_LIMIT {
                let (mut sv, mut cv) = ([0.0f64; R], [0.0f64; R]);
                for ((ti, so), co) in t.iter().zip(&mut sv).zip(&mut cv) {
                    (*so, *co) = T::sincos_small(*ti);
                }
                for (so, co) in sv.iter().zip(&cv) {
                    c0 += co;
                    s0 += so;
                }
            } else {
                for ti in t {
                    let (so, co) = T::sincos(ti);
                    c0 += co;
                    s0 += so;
                }
            }
        }
        // The remainder rows continue the same row-order sums.
        for row in chunks.remainder().chunks_exact(D) {
            let (s, c) = T::sincos(self.phase(zj, row));
            c0 += c;
            s0 += s;
        }
        (c0, s0)
    }

    /// Writes the mean embedding `(1/n) Σ_i φ̂(x_i)` into `out[..D]`.
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`]; [`DistanceError::BufferTooSmall`].
    pub fn mean_embedding(&self, x: Rows<'_>, out: &mut [f64]) -> Result<(), DistanceError> {
        self.check_rows(x)?;
        let d = self.num_features();
        if out.len() < d {
            return Err(DistanceError::BufferTooSmall {
                needed: d,
                found: out.len(),
            });
        }
        dispatch(MeanEmbedding(self, x, out));
        Ok(())
    }

    fn check_rows(&self, x: Rows<'_>) -> Result<(), DistanceError> {
        if x.dim() == self.dim {
            Ok(())
        } else {
            Err(DistanceError::DimensionMismatch {
                expected: self.dim,
                found: x.dim(),
            })
        }
    }

    /// `Σ_j ‖e_j − μ̂_j(y)‖²` where `e` is a precomputed embedding of length `D`.
    fn sq_dist_to(&self, emb: &[f64], y: Rows<'_>) -> f64 {
        dispatch(SqDistTo(self, emb, y))
    }

    /// RFF estimate of the biased squared MMD, `‖μ̂(x) − μ̂(y)‖²`, without a buffer
    /// (Park & Jitkrittum, Appendix C).
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`].
    pub fn mmd2(&self, x: Rows<'_>, y: Rows<'_>) -> Result<f64, DistanceError> {
        self.check_rows(x)?;
        self.check_rows(y)?;
        Ok(dispatch(Mmd2(self, x, y)).clamp(0.0, 4.0))
    }
}

// The loops over frequencies, each run once per call at the dispatched `crate::simd` level
// (same bits on every level).

/// `out[2j..2j+2] = (scale / n) (Σ cos, Σ sin)` of frequency `j` over `x`.
struct MeanEmbedding<'s, 'f, 'x, 'o>(&'s RandomFourierFeatures<'f>, Rows<'x>, &'o mut [f64]);

impl Job for MeanEmbedding<'_, '_, '_, '_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        match self.0.version {
            KernelVersion::V1 => self.run_with::<V1>(),
            // Version 3's `sincos` is version 2's: the same loop, no third copy.
            KernelVersion::V2 | KernelVersion::V3 => self.run_with::<V2>(),
        }
    }
}

impl MeanEmbedding<'_, '_, '_, '_> {
    #[inline(always)]
    fn run_with<T: Transcendentals>(self) {
        let (f, x) = (self.0, self.1);
        let k = f.scale / as_f64(x.rows());
        let bx = finite_max_abs(x);
        for (zj, o) in f.z.chunks_exact(f.dim).zip(self.2.chunks_exact_mut(2)) {
            let (c, s) = f.cos_sin_sums_here::<T>(zj, x, bx);
            o[0] = k * c;
            o[1] = k * s;
        }
    }
}

/// `Σ_j ‖e_j − μ̂_j(y)‖²` for a precomputed embedding `e`.
struct SqDistTo<'s, 'f, 'e, 'y>(&'s RandomFourierFeatures<'f>, &'e [f64], Rows<'y>);

impl Job for SqDistTo<'_, '_, '_, '_> {
    type Output = f64;
    #[inline(always)]
    fn run(self) -> f64 {
        match self.0.version {
            KernelVersion::V1 => self.run_with::<V1>(),
            // Version 3's `sincos` is version 2's: the same loop, no third copy.
            KernelVersion::V2 | KernelVersion::V3 => self.run_with::<V2>(),
        }
    }
}

impl SqDistTo<'_, '_, '_, '_> {
    #[inline(always)]
    fn run_with<T: Transcendentals>(self) -> f64 {
        let (f, y) = (self.0, self.2);
        let k = f.scale / as_f64(y.rows());
        let by = finite_max_abs(y);
        let mut acc = 0.0;
        for (zj, e) in f.z.chunks_exact(f.dim).zip(self.1.chunks_exact(2)) {
            let (c, s) = f.cos_sin_sums_here::<T>(zj, y, by);
            let dc = e[0] - k * c;
            let ds = e[1] - k * s;
            acc += dc * dc + ds * ds;
        }
        acc
    }
}

/// `‖μ̂(x) − μ̂(y)‖²` (unclamped).
struct Mmd2<'s, 'f, 'x, 'y>(&'s RandomFourierFeatures<'f>, Rows<'x>, Rows<'y>);

impl Job for Mmd2<'_, '_, '_, '_> {
    type Output = f64;
    #[inline(always)]
    fn run(self) -> f64 {
        match self.0.version {
            KernelVersion::V1 => self.run_with::<V1>(),
            // Version 3's `sincos` is version 2's: the same loop, no third copy.
            KernelVersion::V2 | KernelVersion::V3 => self.run_with::<V2>(),
        }
    }
}

impl Mmd2<'_, '_, '_, '_> {
    #[inline(always)]
    fn run_with<T: Transcendentals>(self) -> f64 {
        let (f, x, y) = (self.0, self.1, self.2);
        let (kx, ky) = (f.scale / as_f64(x.rows()), f.scale / as_f64(y.rows()));
        let (bx, by) = (finite_max_abs(x), finite_max_abs(y));
        let mut acc = 0.0;
        for zj in f.z.chunks_exact(f.dim) {
            let (cx, sx) = f.cos_sin_sums_here::<T>(zj, x, bx);
            let (cy, sy) = f.cos_sin_sums_here::<T>(zj, y, by);
            let dc = kx * cx - ky * cy;
            let ds = kx * sx - ky * sy;
            acc += dc * dc + ds * ds;
        }
        acc
    }
}

/// The observed side for RFF MMD: the cached mean embedding `μ̂(Y*)` (length `D`), so each
/// comparison costs `O(m D d)` for the simulated set only.
///
/// `E` is the embedding storage: any `AsRef<[f64]>` (a caller array/slice for `no_std`
/// without `alloc`, via [`RffReference::new_in`]; a `Vec<f64>` via [`RffReference::new`]).
///
/// # Privacy
/// `ρ = ‖μ̂(Y*) − μ̂(Y_t)‖` has sensitivity `2/N` (plus a rounding allowance chosen by
/// [`AllowanceVersion`], [`RffReference::with_allowance_version`]) under
/// [`crate::Neighbouring::ReplaceOne`] on `Y*` and lies in `[0, 2]`.
///
/// ```
/// use dpinfer_distances::{RandomFourierFeatures, RffReference, Rows};
/// let z = [0.3, -1.2, 0.7, 1.9, -0.1];
/// let f = RandomFourierFeatures::new(&z, 1, 1.0)?;
/// let obs = [0.2, 0.4, -0.3];
/// let r = RffReference::new_in(f, Rows::one_dim(&obs)?, [0.0; 10])?;
/// let rho = r.mmd(Rows::one_dim(&[0.1, 0.5])?)?;
/// assert!((0.0..=2.0).contains(&rho));
/// assert!(r.sensitivity().value() >= 2.0 / 3.0);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RffReference<'f, E> {
    features: RandomFourierFeatures<'f>,
    emb: E,
    n: usize,
    allowance: AllowanceVersion,
}

impl<'f, E: AsRef<[f64]> + AsMut<[f64]>> RffReference<'f, E> {
    /// Computes `μ̂(Y*)` into the caller's storage `buf` (length at least `D`).
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`]; [`DistanceError::BufferTooSmall`].
    pub fn new_in(
        features: RandomFourierFeatures<'f>,
        obs: Rows<'_>,
        mut buf: E,
    ) -> Result<Self, DistanceError> {
        features.mean_embedding(obs, buf.as_mut())?;
        Ok(Self {
            features,
            emb: buf,
            n: obs.rows(),
            allowance: AllowanceVersion::V1,
        })
    }
}

#[cfg(feature = "alloc")]
impl<'f> RffReference<'f, alloc::vec::Vec<f64>> {
    /// Computes `μ̂(Y*)` into a new `Vec`.
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`].
    pub fn new(features: RandomFourierFeatures<'f>, obs: Rows<'_>) -> Result<Self, DistanceError> {
        Self::new_in(features, obs, alloc::vec![0.0; features.num_features()])
    }
}

impl<'f, E: AsRef<[f64]>> RffReference<'f, E> {
    /// The feature map the observed side was embedded with.
    #[must_use]
    pub fn features(&self) -> RandomFourierFeatures<'f> {
        self.features
    }

    /// The cached observed mean embedding (length `D`).
    #[must_use]
    pub fn embedding(&self) -> &[f64] {
        let d = self.features.num_features();
        let e = self.emb.as_ref();
        e.get(..d).unwrap_or(e)
    }

    /// Squared RFF MMD `‖μ̂(Y*) − μ̂(sim)‖²`, in `[0, 4]`.
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`].
    pub fn mmd2(&self, sim: Rows<'_>) -> Result<f64, DistanceError> {
        self.features.check_rows(sim)?;
        Ok(self
            .features
            .sq_dist_to(self.embedding(), sim)
            .clamp(0.0, 4.0))
    }

    /// RFF MMD `‖μ̂(Y*) − μ̂(sim)‖`, in `[0, 2]`.
    ///
    /// # Errors
    /// [`DistanceError::DimensionMismatch`].
    pub fn mmd(&self, sim: Rows<'_>) -> Result<f64, DistanceError> {
        Ok(libm::sqrt(self.mmd2(sim)?).clamp(0.0, 2.0))
    }

    /// The same reference with its sensitivity's rounding allowance of `version`
    /// ([`AllowanceVersion`]; the default is [`AllowanceVersion::V1`]). No distance changes.
    #[must_use]
    pub fn with_allowance_version(mut self, version: AllowanceVersion) -> Self {
        self.allowance = version;
        self
    }

    /// The [`AllowanceVersion`] of [`RffReference::sensitivity`].
    #[must_use]
    pub fn allowance_version(&self) -> AllowanceVersion {
        self.allowance
    }

    /// Sensitivity of [`RffReference::mmd`]: `2/N` plus the rounding allowance of
    /// [`RffReference::allowance_version`] for simulated sets of up to `N` rows — version 1
    /// [`sensitivity::rounding_slack`], version 2 [`sensitivity::rff_rounding_allowance`].
    ///
    /// # Privacy
    /// [`crate::Neighbouring::ReplaceOne`] on `Y*`.
    #[must_use]
    pub fn sensitivity(&self) -> Sensitivity {
        self.sensitivity_for(self.n)
    }

    /// As [`RffReference::sensitivity`] for simulated sets of up to `sim_rows` rows.
    #[must_use]
    pub fn sensitivity_for(&self, sim_rows: usize) -> Sensitivity {
        let f = self.features;
        let slack = match self.allowance {
            AllowanceVersion::V1 => {
                sensitivity::rounding_slack(1.0, self.n, sim_rows, f.num_features().max(f.dim()))
            }
            AllowanceVersion::V2 => sensitivity::rff_rounding_allowance(
                self.n,
                sim_rows.max(1),
                f.dim(),
                f.num_features(),
            ),
        };
        match (sensitivity::rff_mmd(self.n), slack) {
            (Ok(s), Ok(slack)) => s.plus(slack),
            _ => Sensitivity::new(f64::MAX, crate::Relations::ANY_PAIR),
        }
    }
}

/// `max |x_i|` of a 1-D set if every value is finite, else `None` (eight lanes, so it
/// vectorises). `None` for multi-dimensional rows.
#[inline(always)]
fn finite_max_abs(x: Rows<'_>) -> Option<f64> {
    if x.dim() != 1 || !all_finite(x.as_slice()) {
        return None;
    }
    let mut m = [0.0f64; 8];
    let mut it = x.as_slice().chunks_exact(8);
    for p in &mut it {
        for (mi, &v) in m.iter_mut().zip(p) {
            let a = libm::fabs(v);
            *mi = if a > *mi { a } else { *mi };
        }
    }
    for (&v, mi) in it.remainder().iter().zip(m.iter_mut()) {
        let a = libm::fabs(v);
        *mi = if a > *mi { a } else { *mi };
    }
    Some(m.iter().fold(0.0f64, |a, &b| if b > a { b } else { a }))
}

/// The 1-D `(Σ cos, Σ sin)` of `cos_sin_sums_here` when every phase `w·x_i` is finite and
/// within [`fastsincos::FAST_LIMIT`]: the same eight lanes (row `i` in lane `i mod 8`, added in
/// row order) and the same final pairwise sums, two blocks per iteration so that their
/// independent `sincos` evaluations overlap.
#[inline(always)]
fn sums_1d_in_range<T: Transcendentals>(w: f64, xs: &[f64]) -> (f64, f64) {
    const LANES: usize = 8;
    let (mut cs, mut ss) = ([0.0; LANES], [0.0; LANES]);
    let mut two = xs.chunks_exact(2 * LANES);
    for p in &mut two {
        let (mut sa, mut ca, mut sb, mut cb) =
            ([0.0; LANES], [0.0; LANES], [0.0; LANES], [0.0; LANES]);
        for i in 0..LANES {
            (sa[i], ca[i]) = T::sincos_small(w * p[i]);
            (sb[i], cb[i]) = T::sincos_small(w * p[LANES + i]);
        }
        for i in 0..LANES {
            cs[i] += ca[i];
            ss[i] += sa[i];
        }
        for i in 0..LANES {
            cs[i] += cb[i];
            ss[i] += sb[i];
        }
    }
    let mut one = two.remainder().chunks_exact(LANES);
    for p in &mut one {
        for ((&v, c), s) in p.iter().zip(&mut cs).zip(&mut ss) {
            let (sv, cv) = T::sincos_small(w * v);
            *c += cv;
            *s += sv;
        }
    }
    for ((&v, c), s) in one.remainder().iter().zip(&mut cs).zip(&mut ss) {
        let (sv, cv) = T::sincos_small(w * v);
        *c += cv;
        *s += sv;
    }
    (pairwise8(&cs), pairwise8(&ss))
}

/// `((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))`.
#[inline(always)]
fn pairwise8(a: &[f64; 8]) -> f64 {
    ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::cast_precision_loss)]
mod tests {
    use super::RandomFourierFeatures;
    use crate::version::{Transcendentals, V1, V2};
    use crate::{KernelVersion, Rows};

    /// xorshift values in (−4, 4), with a NaN, ±∞ and huge values sprinkled in.
    fn data(len: usize, seed: u64) -> [f64; 9 * 40] {
        let mut out = [0.0; 9 * 40];
        let mut x = seed | 1;
        for (i, o) in out.iter_mut().take(len).enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *o = match i % 97 {
                13 => f64::NAN,
                29 => f64::INFINITY,
                51 => -3e9,
                _ => 8.0 * ((x >> 11) as f64 / (1u64 << 53) as f64) - 4.0,
            };
        }
        out
    }

    /// The 1-D in-range path (no per-block checks, two blocks per iteration) gives the bits
    /// of the checked per-block loop, for every length mod 16, bandwidths that put some or
    /// all phases beyond the fast range, non-finite data, and on every dispatch level.
    #[test]
    fn one_dim_in_range_path_equals_the_checked_loop() {
        one_dim_in_range::<V1>(KernelVersion::V1);
        one_dim_in_range::<V2>(KernelVersion::V2);
    }

    fn one_dim_in_range<T: Transcendentals>(version: KernelVersion) {
        let z = data(40, 3).map(|v| if v.is_finite() { v } else { 1.5 });
        let clean = |seed| {
            data(9 * 40, seed).map(|v| {
                if v.is_finite() && v.abs() < 1e3 {
                    v
                } else {
                    0.25
                }
            })
        };
        let sets = [clean(5), clean(6), data(9 * 40, 8)];
        let mut checked = 0;
        for buf in &sets {
            for n in (1..=40).chain([63, 64, 65, 200, 359, 360]) {
                let x = Rows::one_dim(&buf[..n]).unwrap();
                let bound = super::finite_max_abs(x);
                assert_eq!(bound.is_some(), buf[..n].iter().all(|v| v.is_finite()));
                for bandwidth in [0.7, 1e-4, 1e-6] {
                    let f = RandomFourierFeatures::new(&z[..20], 1, bandwidth)
                        .unwrap()
                        .with_kernel_version(version);
                    for zj in z[..20].chunks_exact(1) {
                        let want = f.cos_sin_sums_here::<T>(zj, x, None);
                        let got = f.cos_sin_sums_here::<T>(zj, x, bound);
                        assert_eq!(
                            (got.0.to_bits(), got.1.to_bits()),
                            (want.0.to_bits(), want.1.to_bits()),
                            "n {n}, l {bandwidth}"
                        );
                        checked += 1;
                    }
                    #[cfg(feature = "std")]
                    for level in crate::simd::Level::available() {
                        let k = f.scale / n as f64;
                        let mut emb = [0.0; 40];
                        crate::simd::with_level(level, || f.mean_embedding(x, &mut emb))
                            .unwrap()
                            .unwrap();
                        for (zj, e) in z[..20].chunks_exact(1).zip(emb.chunks_exact(2)) {
                            let (c, s) = f.cos_sin_sums_here::<T>(zj, x, None);
                            assert_eq!(e[0].to_bits(), (k * c).to_bits(), "{level:?}");
                            assert_eq!(e[1].to_bits(), (k * s).to_bits(), "{level:?}");
                        }
                    }
                }
            }
        }
        assert!(checked > 1000);
    }

    /// The 8-row vectorised multi-dimensional sums give the same bits as the one-row-at-a-time
    /// loop (the code before vectorisation), for every dimension 2..=9, chunk remainders,
    /// chunks that need the libm fallback, and on every dispatch level of this CPU.
    #[test]
    fn multi_dim_sums_equal_the_row_by_row_loop() {
        multi_dim::<V1>(KernelVersion::V1);
        multi_dim::<V2>(KernelVersion::V2);
    }

    fn multi_dim<T: Transcendentals>(version: KernelVersion) {
        let z = data(9 * 3, 7).map(|v| if v.is_finite() { v } else { 0.5 });
        for dim in 2..=9 {
            for rows in [1, 7, 8, 9, 16, 39, 40] {
                let buf = data(dim * rows, 11 + dim as u64);
                let x = Rows::new(&buf[..dim * rows], dim).unwrap();
                for bandwidth in [0.7, 1e-6] {
                    let f = RandomFourierFeatures::new(&z[..3 * dim], dim, bandwidth)
                        .unwrap()
                        .with_kernel_version(version);
                    for zj in z[..3 * dim].chunks_exact(dim) {
                        let want = f.cos_sin_rows_scalar::<T>(zj, x.as_slice());
                        let got = f.cos_sin_sums_here::<T>(zj, x, None);
                        assert_eq!(
                            (got.0.to_bits(), got.1.to_bits()),
                            (want.0.to_bits(), want.1.to_bits()),
                            "dim {dim}, rows {rows}, l {bandwidth}"
                        );
                    }
                    // Through the dispatched loop over frequencies, on every level.
                    #[cfg(feature = "std")]
                    let k = f.scale / rows as f64;
                    #[cfg(feature = "std")]
                    for level in crate::simd::Level::available() {
                        let mut emb = [0.0; 6 * 2];
                        crate::simd::with_level(level, || f.mean_embedding(x, &mut emb))
                            .unwrap()
                            .unwrap();
                        for (zj, e) in z[..3 * dim].chunks_exact(dim).zip(emb.chunks_exact(2)) {
                            let (c, s) = f.cos_sin_rows_scalar::<T>(zj, x.as_slice());
                            assert_eq!(e[0].to_bits(), (k * c).to_bits(), "{level:?}");
                            assert_eq!(e[1].to_bits(), (k * s).to_bits(), "{level:?}");
                        }
                    }
                }
            }
        }
    }
}

/// [`crate::sensitivity::rff_rounding_allowance`] against double-double references.
#[cfg(all(test, feature = "alloc"))]
#[allow(clippy::unwrap_used, clippy::cast_precision_loss)]
mod allowance_tests {
    use alloc::vec::Vec;

    use super::{RandomFourierFeatures, RffReference};
    use crate::rows::sanitize;
    use crate::sensitivity::{rff_mmd, rff_rounding_allowance, rounding_slack};
    use crate::{AllowanceVersion, Rows};

    /// A double-double `hi + lo` (Dekker; `dpinfer_math::two_product` for the exact product).
    #[derive(Clone, Copy, Debug)]
    struct Dd(f64, f64);

    fn two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        let bb = s - a;
        Dd(s, (a - (s - bb)) + (b - bb))
    }

    fn fast(s: f64, e: f64) -> Dd {
        let h = s + e;
        Dd(h, e - (h - s))
    }

    impl Dd {
        fn add(self, y: Self) -> Self {
            let Dd(s, e) = two_sum(self.0, y.0);
            fast(s, e + self.1 + y.1)
        }
        fn neg(self) -> Self {
            Dd(-self.0, -self.1)
        }
        fn mul(self, y: Self) -> Self {
            let (p, e) = dpinfer_math::two_product(self.0, y.0);
            fast(p, e + self.0 * y.1 + self.1 * y.0)
        }
        fn div(self, y: Self) -> Self {
            let q1 = self.0 / y.0;
            let r = self.add(y.mul(Dd(q1, 0.0)).neg());
            let q2 = r.0 / y.0;
            let r = r.add(y.mul(Dd(q2, 0.0)).neg());
            let q3 = r.0 / y.0;
            fast(q1, q2).add(Dd(q3, 0.0))
        }
        fn sqrt(self) -> Self {
            if self.0 <= 0.0 {
                return Dd(0.0, 0.0);
            }
            let s = libm::sqrt(self.0);
            let r = self.add(Dd(s, 0.0).mul(Dd(s, 0.0)).neg());
            fast(s, r.0 / (2.0 * s))
        }
    }

    /// The exact mean embedding of the computed phases (step 0 of the derivation): `libm`'s
    /// `sincos` (within one ulp), sums, scale and mean in double-double.
    fn reference_embedding(f: &RandomFourierFeatures<'_>, x: Rows<'_>) -> Vec<Dd> {
        let d = f.dim;
        let scale = Dd(2.0, 0.0)
            .div(Dd(f.num_features() as f64, 0.0))
            .sqrt()
            .div(Dd(x.rows() as f64, 0.0));
        let mut out = Vec::new();
        for zj in f.z.chunks_exact(d) {
            let (mut c, mut s) = (Dd(0.0, 0.0), Dd(0.0, 0.0));
            let w = zj[0] * f.inv_l;
            for row in x.as_slice().chunks_exact(d) {
                // The phase exactly as the summing loops compute it.
                let t = if d == 1 {
                    let u = w * sanitize(row[0]);
                    if u.is_finite() { u } else { 0.0 }
                } else {
                    f.phase(zj, row)
                };
                let (sv, cv) = libm::sincos(t);
                c = c.add(Dd(cv, 0.0));
                s = s.add(Dd(sv, 0.0));
            }
            out.push(c.mul(scale));
            out.push(s.mul(scale));
        }
        out
    }

    /// Error the references themselves may have: `libm::sincos` within one ulp
    /// (`≤ 2.3e-16`) per value moves each side's embedding by `≤ √2 · 2.3e-16` in norm; the
    /// double-double arithmetic adds `O(n u²)`.
    const REFERENCE_ERROR: f64 = 1e-15;

    fn xorshift(state: &mut u64) -> f64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Approximately standard normal (sum of 12 uniforms − 6): the frequencies and data.
    fn normals(len: usize, seed: u64) -> Vec<f64> {
        let mut s = seed | 1;
        (0..len)
            .map(|_| (0..12).map(|_| xorshift(&mut s)).sum::<f64>() - 6.0)
            .collect()
    }

    /// Checks the three computed forms of `ρ` (the reference object, the buffer-free `mmd2`,
    /// and the Euclidean distance between two `mean_embedding`s summed in order, as the
    /// pipeline computes it) against the reference, and returns the largest error over the
    /// bound's half `η`.
    fn check(z: &[f64], d: usize, l: f64, x: &[f64], y: &[f64], what: &str) -> f64 {
        let f = RandomFourierFeatures::new(z, d, l).unwrap();
        let (xr, yr) = (Rows::new(x, d).unwrap(), Rows::new(y, d).unwrap());
        let (a, b) = (reference_embedding(&f, xr), reference_embedding(&f, yr));
        let mut sq = Dd(0.0, 0.0);
        for (p, q) in a.iter().zip(&b) {
            let diff = p.add(q.neg());
            sq = sq.add(diff.mul(diff));
        }
        let exact = sq.sqrt();
        let r = RffReference::new(f, xr)
            .unwrap()
            .with_allowance_version(AllowanceVersion::V2);
        let mut ex = alloc::vec![0.0; f.num_features()];
        let mut ey = alloc::vec![0.0; f.num_features()];
        f.mean_embedding(xr, &mut ex).unwrap();
        f.mean_embedding(yr, &mut ey).unwrap();
        let mut acc = 0.0;
        for (p, q) in ex.iter().zip(&ey) {
            let diff = p - q;
            acc += diff * diff;
        }
        let computed = [
            r.mmd(yr).unwrap(),
            libm::sqrt(f.mmd2(xr, yr).unwrap()),
            libm::sqrt(acc),
        ];
        let eta = rff_rounding_allowance(xr.rows(), yr.rows(), d, f.num_features()).unwrap() / 2.0;
        // The reference object reports the same allowance (`2η`) on top of `2/N`.
        let s = r.sensitivity_for(yr.rows()).value();
        let want = rff_mmd(xr.rows()).unwrap().value() + 2.0 * eta;
        assert!(
            s >= want && s <= want * (1.0 + 1e-15),
            "{what}: {s} vs {want}"
        );
        let mut worst = 0.0f64;
        for c in computed {
            let err = libm::fabs(exact.add(Dd(-c, 0.0)).0);
            assert!(
                err + REFERENCE_ERROR <= eta,
                "{what}: |ρ̃ − ρ| = {err:e} + {REFERENCE_ERROR:e} exceeds η = {eta:e}"
            );
            worst = worst.max(err / eta);
        }
        #[cfg(feature = "std")]
        std::eprintln!("{what}: worst |ρ̃ − ρ| / η = {worst:.3e} (η = {eta:.3e})");
        worst
    }

    /// Adversarial inputs: the observed error stays under `η` with room for the references'
    /// own error (`REFERENCE_ERROR = 1e-15`). Equal rows make every lane add the same value
    /// `n/8` times (the sums' rounding errors all of one sign); values at the clip (±MAX,
    /// ±∞, NaN) and beyond the fast range exercise the non-finite phase map and `libm`'s
    /// `sincos`; 3-D rows the one-accumulator sum (`h = n − 1`).
    #[test]
    fn the_allowance_bounds_the_error_on_adversarial_inputs() {
        // A million equal 1-D rows on each side, 10 frequencies; several bandwidths so the
        // equal cos/sin values differ.
        let z = normals(10, 1);
        let x = alloc::vec![0.7; 1_000_000];
        let y = alloc::vec![-0.3; 1_000_000];
        let mut worst_equal = 0.0f64;
        for l in [0.37, 3.1] {
            worst_equal = worst_equal.max(check(&z, 1, l, &x, &y, "1e6 equal rows"));
        }
        // Values at the clip and beyond the fast range, among normal data; 100 features.
        let z = normals(50, 2);
        let mut x = normals(200_000, 3);
        for (i, v) in x.iter_mut().enumerate() {
            *v = match i % 11 {
                0 => f64::MAX,
                1 => -f64::MAX,
                2 => f64::NAN,
                3 => f64::INFINITY,
                4 => 3e6,
                5 => -1.234_567e5,
                _ => *v,
            };
        }
        let y = normals(50_000, 4);
        check(&z, 1, 1.0, &x, &y, "clip values, 1-D");
        check(&z, 1, 1e-3, &x, &y, "clip values, phases beyond 8e5");
        // 3-D rows: 1 000 features; one frequency over 300 000 equal rows.
        let z3 = normals(3 * 500, 5);
        let x3 = normals(3 * 20_000, 6);
        let y3 = normals(3 * 5_000, 7);
        check(&z3, 3, 1.5, &x3, &y3, "3-D, 1000 features");
        let x3 = [0.4, -1.1, 2.5].repeat(300_000);
        let y3 = [1.0, 0.0, -0.5].repeat(300_000);
        let worst_seq = check(&z3[..3], 3, 1.0, &x3, &y3, "3-D, 3e5 equal rows");
        // Tiny sets: one row each, 2 features.
        check(&z[..1], 1, 1.0, &[0.5], &[-2.0], "one row each");
        // The bound is not vacuous where it matters: equal rows reach a visible fraction of
        // it (the sum of n equal values errs by ~ n u / 2 of their size at worst).
        assert!(
            worst_equal > 1e-3 && worst_seq > 1e-3,
            "{worst_equal} {worst_seq}"
        );
    }

    /// Version 1 is the earlier sensitivity bit for bit; version 2 is smaller, above `2/N`,
    /// and at `N = 500 000` within `1e-5` of it relatively.
    #[test]
    fn version_1_is_the_earlier_sensitivity_and_version_2_is_tighter() {
        let z = normals(50, 9);
        let f = RandomFourierFeatures::new(&z, 1, 1.0).unwrap();
        for n in [1usize, 7, 5_000, 500_000] {
            let x = alloc::vec![0.25; n];
            let r = RffReference::new(f, Rows::one_dim(&x).unwrap()).unwrap();
            assert_eq!(r.allowance_version(), AllowanceVersion::V1);
            let old = rff_mmd(n)
                .unwrap()
                .plus(rounding_slack(1.0, n, n, 100).unwrap());
            assert_eq!(r.sensitivity().value().to_bits(), old.value().to_bits());
            let r2 = r.with_allowance_version(AllowanceVersion::V2);
            let (v1, v2) = (old.value(), r2.sensitivity().value());
            let delta = 2.0 / n as f64;
            assert!(delta < v2 && v2 < v1, "n {n}: {v2} vs {v1}");
            if n == 500_000 {
                assert!(v2 < delta * (1.0 + 1e-5) && v1 > 8.0 * delta, "{v1} {v2}");
            }
        }
    }
}
