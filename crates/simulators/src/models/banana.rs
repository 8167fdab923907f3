//! The banana model of Räisä (2021, MSc thesis *Differentially private Markov chain Monte
//! Carlo*), §2.3, Theorem 5 — a posterior with a known closed form for evaluating DP MCMC.
//!
//! θ ∈ ℝ^d (d ≥ 2) has prior Ban(0, σ₀² I, a, b, m), and each data row x_j ∈ ℝ^d has
//! x_{j1} ~ N(θ₁, σ₁²), x_{j2} ~ N(θ₂ + a(θ₁ − m)² + b, σ₂²), x_{ji} ~ N(θ_i, σ_i²) (i ≥ 3).
//! Theorem 5: the posterior tempered by T (likelihood raised to T) is Ban(μ, Σ, a, b, m) with
//! μ_i = T n τ_i x̄_i / (T n τ_i + τ₀), Σ = diag(1/(T n τ_i + τ₀)), τ_i = 1/σ_i². A draw is
//! g(z), z ~ N(μ, Σ), g(z) = (z₁, z₂ − a(z₁ − m)² − b, z₃, …).
//!
//! Thesis settings (§7.2): a = 20, b = m = 0, σ₁² = 20, σ₂² = 2.5, σ₃² = … = σ₁₀² = 1,
//! σ₀² = 1000, n = 100 000. The thesis' reference code generates data at θ = (0, 3, 0, …);
//! its 10-D problem uses n = 200 000 (per the issue). That code uses τ₂ = 0.04 (σ₂² = 25) and
//! writes the b term with the wrong sign (harmless with b = 0); we follow the thesis text.

use crate::dist;
use crate::error::{SimError, check_len, finite, positive};
use crate::likelihood::{
    BatchClipSum, ClipSum, RowGradient, RowLikelihood, accumulate_clipped_row, affine_clip_sum,
    batch_by_rows, check_range, chunked_clip_sum, clip,
};
use crate::prior::{LN_SQRT_2PI, Prior};
use crate::simulator::Simulator;
use crate::stream::StreamVersion;
use rand_core::Rng;

/// Settings of the banana model (public fields, validated by [`Banana::new`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct BananaSettings {
    /// Dimension d ≥ 2.
    pub dim: usize,
    /// Number of data rows n ≥ 1 (output size of the simulator).
    pub n: usize,
    /// Curvature a.
    pub a: f64,
    /// Shift b.
    pub b: f64,
    /// Centre m.
    pub m: f64,
    /// σ₁² (variance of x₁).
    pub sigma1_sq: f64,
    /// σ₂² (variance of x₂).
    pub sigma2_sq: f64,
    /// σ_i² for i ≥ 3.
    pub sigma_rest_sq: f64,
    /// Prior variance σ₀².
    pub sigma0_sq: f64,
}

impl BananaSettings {
    /// The thesis' 2-D setting (§7.2): a = 20, b = m = 0, σ₁² = 20, σ₂² = 2.5, σ₀² = 1000,
    /// n = 100 000.
    #[must_use]
    pub const fn thesis_2d() -> Self {
        Self {
            dim: 2,
            n: 100_000,
            a: 20.0,
            b: 0.0,
            m: 0.0,
            sigma1_sq: 20.0,
            sigma2_sq: 2.5,
            sigma_rest_sq: 1.0,
            sigma0_sq: 1000.0,
        }
    }
    /// The 10-D setting: as [`thesis_2d`](Self::thesis_2d) with σ₃² = … = σ₁₀² = 1 and
    /// n = 200 000 (as the reference code).
    #[must_use]
    pub const fn thesis_10d() -> Self {
        Self {
            dim: 10,
            n: 200_000,
            ..Self::thesis_2d()
        }
    }
}

impl Default for BananaSettings {
    fn default() -> Self {
        Self::thesis_2d()
    }
}

/// The true parameter the thesis' reference code generates data at: θ = (0, 3, 0, …, 0).
pub const THESIS_THETA_1: f64 = 0.0;
/// Second coordinate of the data-generating θ (others are 0).
pub const THESIS_THETA_2: f64 = 3.0;

/// The validated banana model.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Banana {
    s: BananaSettings,
    /// precisions τ₁, τ₂, τ_rest, τ₀
    tau: [f64; 4],
    version: StreamVersion,
}

impl Banana {
    /// Validates the settings.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for `dim < 2` or `n == 0`; [`SimError::InvalidParameter`] for
    /// non-finite a, b, m or non-finite / non-positive variances.
    pub fn new(s: BananaSettings) -> Result<Self, SimError> {
        if s.dim < 2 {
            return Err(SimError::InvalidSize {
                name: "dim",
                value: s.dim as u64,
            });
        }
        if s.n == 0 || s.n.checked_mul(s.dim).is_none() {
            return Err(SimError::InvalidSize {
                name: "n",
                value: s.n as u64,
            });
        }
        finite("a", s.a)?;
        finite("b", s.b)?;
        finite("m", s.m)?;
        let tau = [
            1.0 / positive("sigma1_sq", s.sigma1_sq)?,
            1.0 / positive("sigma2_sq", s.sigma2_sq)?,
            1.0 / positive("sigma_rest_sq", s.sigma_rest_sq)?,
            1.0 / positive("sigma0_sq", s.sigma0_sq)?,
        ];
        Ok(Self {
            s,
            tau,
            version: StreamVersion::V1,
        })
    }

    /// The settings.
    #[must_use]
    pub const fn settings(&self) -> &BananaSettings {
        &self.s
    }

    /// g⁻¹(θ)₂ = θ₂ + a(θ₁ − m)² + b: the mean of x₂.
    #[inline]
    fn u(&self, t1: f64, t2: f64) -> f64 {
        let d = t1 - self.s.m;
        t2 + self.s.a * d * d + self.s.b
    }

    /// Mean of each data coordinate at θ (writes `dim` values).
    fn means(&self, theta: &[f64], mu: &mut [f64]) {
        mu.copy_from_slice(theta);
        mu[1] = self.u(theta[0], theta[1]);
    }

    fn precision(&self, k: usize) -> f64 {
        match k {
            0 => self.tau[0],
            1 => self.tau[1],
            _ => self.tau[2],
        }
    }

    /// The prior Ban(0, σ₀² I, a, b, m).
    #[must_use]
    pub const fn prior(&self) -> BananaPrior {
        BananaPrior { model: *self }
    }

    /// Row likelihood over borrowed column-major data (`x[k·n + j]` is coordinate k of row j),
    /// `n = x.len() / dim` rows.
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] if `x.len()` is not a positive multiple of `dim`.
    pub fn data<'a>(&self, x: &'a [f64]) -> Result<BananaData<'a>, SimError> {
        let d = self.s.dim;
        if x.is_empty() || !x.len().is_multiple_of(d) {
            return Err(SimError::DimensionMismatch {
                what: "data",
                expected: d * (x.len() / d).max(1),
                got: x.len(),
            });
        }
        Ok(BananaData {
            model: *self,
            x,
            n: x.len() / d,
        })
    }

    /// The exact tempered posterior of Theorem 5 for `data` and temperature `t` ∈ (0, ∞)
    /// (T = 1: the ordinary posterior; T = n₀/n: the tempered posterior of DP-Barker).
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for a non-finite or non-positive `t`, or data whose
    /// column means are not finite.
    #[cfg(feature = "alloc")]
    pub fn posterior(&self, data: &BananaData<'_>, t: f64) -> Result<BananaPosterior, SimError> {
        let t = positive("T", t)?;
        let d = self.s.dim;
        #[allow(clippy::cast_precision_loss)]
        let nf = data.n as f64;
        let mut mu = alloc::vec![0.0; d];
        let mut sd = alloc::vec![0.0; d];
        for k in 0..d {
            let col = data.column(k);
            let mean = dpinfer_math::NeumaierSum::sum_iter(col.iter().copied()) / nf;
            let mean = finite("column mean", mean)?;
            let p = t * nf * self.precision(k) + self.tau[3];
            mu[k] = t * nf * self.precision(k) * mean / p;
            sd[k] = libm::sqrt(1.0 / p);
        }
        Ok(BananaPosterior {
            a: self.s.a,
            b: self.s.b,
            m: self.s.m,
            mu,
            sd,
        })
    }
}

stream_versioned! {
    /// The prior and the exact posterior sampler draw the same numbers in every version.
    impl[] Banana
}

impl Simulator for Banana {
    fn param_dim(&self) -> usize {
        self.s.dim
    }
    /// n·d values, column-major (`out[k·n + j]`).
    fn output_dim(&self) -> usize {
        self.s.n * self.s.dim
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        let d = self.s.dim;
        check_len("theta", d, theta.len())?;
        check_len("out", self.output_dim(), out.len())?;
        if let Some(i) = theta.iter().position(|x| !x.is_finite()) {
            return Err(SimError::OutsideSupport { index: i });
        }
        let n = self.s.n;
        for k in 0..d {
            let mean = if k == 1 {
                self.u(theta[0], theta[1])
            } else {
                theta[k]
            };
            let sd = libm::sqrt(1.0 / self.precision(k));
            let block = &mut out[k * n..(k + 1) * n];
            match self.version {
                StreamVersion::V1 => {
                    for x in block {
                        *x = mean + sd * dist::std_normal(rng);
                    }
                }
                StreamVersion::V2 => {
                    for x in block {
                        *x = mean + sd * dist::ziggurat_normal(rng);
                    }
                }
            }
        }
        if out.iter().any(|x| !x.is_finite()) {
            return Err(SimError::Degenerate {
                what: "banana data overflow",
            });
        }
        Ok(())
    }
}

/// The banana prior Ban(0, σ₀² I, a, b, m): z ~ N(0, σ₀² I), θ = g(z). Normalised density
/// (the Jacobian of g is 1).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct BananaPrior {
    model: Banana,
}

impl Prior for BananaPrior {
    fn dim(&self) -> usize {
        self.model.s.dim
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", self.dim(), out.len())?;
        let sd = libm::sqrt(self.model.s.sigma0_sq);
        for x in out.iter_mut() {
            *x = sd * dist::std_normal(rng);
        }
        let d1 = out[0] - self.model.s.m;
        out[1] -= self.model.s.a * d1 * d1 + self.model.s.b;
        Ok(())
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if !self.in_support(theta) {
            return f64::NEG_INFINITY;
        }
        let t0 = self.model.tau[3];
        let mut q = 0.0;
        for (k, &x) in theta.iter().enumerate() {
            let z = if k == 1 {
                self.model.u(theta[0], theta[1])
            } else {
                x
            };
            q += z * z;
        }
        #[allow(clippy::cast_precision_loss)]
        let df = theta.len() as f64;
        -0.5 * t0 * q + df * (0.5 * libm::log(t0) - LN_SQRT_2PI)
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        theta.len() == self.dim() && theta.iter().all(|x| x.is_finite())
    }
    /// θ₁ and θ_i (i ≥ 3) are N(0, σ₀²) exactly; the curved θ₂ = z₂ − a(z₁ − m)² − b has the
    /// density p(y) = ∫ φ_σ₀(u + m) φ_σ₀(y + a u² + b) du (u = z₁ − m), computed by adaptive
    /// Simpson quadrature in standard units with break points at the ridge's peaks (absolute
    /// error below 10⁻¹² of the standardised density; [`BananaPrior::curved_density`]).
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        if j >= self.dim() {
            return None;
        }
        if !x.is_finite() {
            return Some(f64::NEG_INFINITY);
        }
        let sd = libm::sqrt(self.model.s.sigma0_sq);
        if j != 1 {
            let z = x / sd;
            return Some(-0.5 * z * z - libm::log(sd) - LN_SQRT_2PI);
        }
        let p = self.curved_density(x);
        Some(if p > 0.0 {
            libm::log(p)
        } else {
            f64::NEG_INFINITY
        })
    }
}

impl BananaPrior {
    /// The marginal density of the curved coordinate θ₂ at a finite `y`:
    /// p(y) = (1/σ₀) ∫ φ(t + m′) φ(c′ + a′t²) dt with a′ = aσ₀, c′ = (y + b)/σ₀, m′ = m/σ₀
    /// (u = σ₀t), over t ∈ −m′ ± 12 (the first factor is below 10⁻³¹ beyond), split at the
    /// peaks t = ±√(−c′/a′) of the second factor and at ±10 of its widths 1/(2|a′t|) around
    /// them, each piece by adaptive Simpson (absolute tolerance 10⁻¹³ per piece, depth ≤ 50).
    #[must_use]
    pub fn curved_density(&self, y: f64) -> f64 {
        let s = &self.model.s;
        let sd = libm::sqrt(s.sigma0_sq);
        let (a, c, m) = (s.a * sd, (y + s.b) / sd, s.m / sd);
        if !(a.is_finite() && c.is_finite() && m.is_finite()) {
            return 0.0;
        }
        // 1/√(2π)
        let phi = |z: f64| 0.398_942_280_401_432_7 * libm::exp(-0.5 * z * z);
        let f = |t: f64| phi(t + m) * phi(c + a * t * t);
        let (lo, hi) = (-m - 12.0, -m + 12.0);
        let mut cuts = [lo; 8];
        let mut n = 1;
        let peak2 = if a == 0.0 { -1.0 } else { -c / a };
        if peak2 > 0.0 {
            let t = libm::sqrt(peak2);
            let w = 10.0 / (2.0 * (a * t).abs());
            for p in [-t - w, -t, -t + w, t - w, t, t + w] {
                if p > lo && p < hi {
                    cuts[n] = p;
                    n += 1;
                }
            }
        }
        cuts[n] = hi;
        n += 1;
        let cuts = &mut cuts[..n];
        cuts.sort_unstable_by(f64::total_cmp);
        let mut total = 0.0;
        for w in cuts.windows(2) {
            let (x0, x1) = (w[0], w[1]);
            if x1 > x0 {
                let xm = 0.5 * (x0 + x1);
                let (f0, fm, f1) = (f(x0), f(xm), f(x1));
                let whole = (x1 - x0) / 6.0 * (f0 + 4.0 * fm + f1);
                total += simpson(&f, (x0, xm, x1), (f0, fm, f1), whole, 1e-13, 50);
            }
        }
        total / sd
    }
}

/// Adaptive Simpson on `[x0, x1]` (midpoint `xm`, values `fs`, whole-interval estimate
/// `whole`), to absolute tolerance `eps`, at most `depth` more halvings (Lyness 1969: accept
/// when the halves' sum differs by at most 15·eps, adding the Richardson correction).
fn simpson(
    f: &impl Fn(f64) -> f64,
    (x0, xm, x1): (f64, f64, f64),
    (f0, fm, f1): (f64, f64, f64),
    whole: f64,
    eps: f64,
    depth: u32,
) -> f64 {
    let (lm, rm) = (0.5 * (x0 + xm), 0.5 * (xm + x1));
    let (flm, frm) = (f(lm), f(rm));
    let left = (xm - x0) / 6.0 * (f0 + 4.0 * flm + fm);
    let right = (x1 - xm) / 6.0 * (fm + 4.0 * frm + f1);
    let delta = left + right - whole;
    if depth == 0 || delta.abs() <= 15.0 * eps {
        return left + right + delta / 15.0;
    }
    simpson(f, (x0, lm, xm), (f0, flm, fm), left, eps / 2.0, depth - 1)
        + simpson(f, (xm, rm, x1), (fm, frm, f1), right, eps / 2.0, depth - 1)
}

/// Borrowed column-major banana data: the per-row likelihood of Theorem 5's model,
/// ℓ_j(θ) = Σ_k ln N(x_{jk}; g⁻¹(θ)_k, σ_k²) (untempered; samplers apply T themselves).
///
/// # Privacy
/// Holds private data; errors depend only on θ/buffer lengths and ranges, never on values.
#[derive(Copy, Clone, Debug)]
pub struct BananaData<'a> {
    model: Banana,
    x: &'a [f64],
    n: usize,
}

impl BananaData<'_> {
    /// r_j(θ, θ′) = c + Σ_k α_k x_{jk} with α_k = τ_k(μ′_k − μ_k), c = −Σ_k τ_k(μ′_k² − μ_k²)/2
    /// (μ = g⁻¹(θ)); requires `dim ≤ MAX_DIM` and checked θ lengths.
    fn affine_ratio(&self, theta: &[f64], theta_new: &[f64]) -> ([f64; MAX_DIM], f64) {
        let d = self.model.s.dim;
        let mut mu = [0.0; MAX_DIM];
        let mut mu2 = [0.0; MAX_DIM];
        self.model.means(theta, &mut mu[..d]);
        self.model.means(theta_new, &mut mu2[..d]);
        let mut alpha = [0.0; MAX_DIM];
        let mut c = 0.0;
        for k in 0..d {
            let tau = self.model.precision(k);
            alpha[k] = tau * (mu2[k] - mu[k]);
            c -= 0.5 * tau * (mu2[k] * mu2[k] - mu[k] * mu[k]);
        }
        (alpha, c)
    }

    /// Column k (all n rows).
    #[must_use]
    pub fn column(&self, k: usize) -> &[f64] {
        &self.x[k * self.n..(k + 1) * self.n]
    }
}

/// Upper bound on the dimension handled by the stack buffers of the fast paths.
const MAX_DIM: usize = 64;

impl RowLikelihood for BananaData<'_> {
    fn dim(&self) -> usize {
        self.model.s.dim
    }
    fn n_rows(&self) -> usize {
        self.n
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        let d = self.model.s.dim;
        crate::error::finite_theta_of(d, theta)?;
        check_range(first, out.len(), self.n)?;
        let mut c = 0.0;
        for k in 0..d {
            c += 0.5 * libm::log(self.model.precision(k)) - LN_SQRT_2PI;
        }
        out.fill(c);
        for k in 0..d {
            let mean = if k == 1 {
                self.model.u(theta[0], theta[1])
            } else {
                theta[k]
            };
            let h = 0.5 * self.model.precision(k);
            let col = &self.column(k)[first..first + out.len()];
            for (o, &x) in out.iter_mut().zip(col) {
                let r = x - mean;
                *o -= h * r * r;
            }
        }
        Ok(())
    }

    /// Fast path: each coordinate contributes τ_k(μ′_k − μ_k) x_k − τ_k(μ′_k² − μ_k²)/2, so
    /// r_j is affine in the row and [`affine_clip_sum`] evaluates it column by column.
    /// Requires `dim ≤ 64` (else the generic default is used).
    fn clipped_log_ratio_sum(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        first: usize,
        count: usize,
        b: f64,
    ) -> Result<ClipSum, SimError> {
        let d = self.model.s.dim;
        crate::error::finite_theta_pair(d, theta, theta_new)?;
        check_range(first, count, self.n)?;
        if d > MAX_DIM {
            return chunked_clip_sum(self, theta, theta_new, first..first + count, b);
        }
        let (alpha, c) = self.affine_ratio(theta, theta_new);
        let mut cols: [&[f64]; MAX_DIM] = [&[]; MAX_DIM];
        for (k, col) in cols.iter_mut().enumerate().take(d) {
            *col = &self.column(k)[first..first + count];
        }
        affine_clip_sum(&cols[..d], &alpha[..d], c, b)
    }

    /// Fast path for minibatches: α and c computed once, rows gathered; each value is formed
    /// as c + α₀x₀ + α₁x₁ + … in the order [`affine_clip_sum`] uses, so it equals the one-row
    /// pass bit for bit.
    fn clipped_log_ratio_rows(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        rows: &[usize],
        b: f64,
    ) -> Result<BatchClipSum, SimError> {
        let d = self.model.s.dim;
        crate::error::finite_theta_pair(d, theta, theta_new)?;
        let b = crate::error::clip_bound(b)?;
        if d > MAX_DIM {
            return batch_by_rows(rows, |j| {
                chunked_clip_sum(self, theta, theta_new, j..j + 1, b)
            });
        }
        let (alpha, c) = self.affine_ratio(theta, theta_new);
        let (mut s, mut s2, mut clipped) = (0.0, 0.0, 0usize);
        for &j in rows {
            check_range(j, 1, self.n)?;
            let mut v = c;
            for (k, &a) in alpha.iter().enumerate().take(d) {
                v += a * self.x[k * self.n + j];
            }
            let cv = clip(v, b);
            clipped += usize::from(v.abs() > b || v.is_nan());
            s += cv;
            s2 += cv * cv;
        }
        Ok(BatchClipSum {
            sum: s,
            sum_sq: s2,
            clipped,
        })
    }
}

impl RowGradient for BananaData<'_> {
    /// Fast path: each row's gradient is formed in registers and clipped in the same pass (no
    /// intermediate buffer); same semantics as the default (rows with a non-finite entry add
    /// nothing and count as clipped).
    fn clipped_grad_sum(
        &self,
        theta: &[f64],
        first: usize,
        count: usize,
        b: f64,
        out: &mut [f64],
    ) -> Result<usize, SimError> {
        let d = self.model.s.dim;
        crate::error::finite_theta_of(d, theta)?;
        check_len("out", d, out.len())?;
        check_range(first, count, self.n)?;
        let b = crate::error::clip_bound(b)?;
        if d > MAX_DIM {
            return Err(SimError::InvalidSize {
                name: "dim",
                value: d as u64,
            });
        }
        out.fill(0.0);
        let u = self.model.u(theta[0], theta[1]);
        let da = 2.0 * self.model.s.a * (theta[0] - self.model.s.m);
        let (t1, t2, tr) = (self.model.tau[0], self.model.tau[1], self.model.tau[2]);
        let x1 = &self.column(0)[first..first + count];
        let x2 = &self.column(1)[first..first + count];
        let mut g = [0.0; MAX_DIM];
        let mut clipped = 0;
        if d == 2 {
            // 2-D: scalar accumulators, one sqrt per row, rare non-finite rows to the helper.
            let (mut s0, mut s1) = (0.0, 0.0);
            let b2 = b * b;
            for (&a1, &a2) in x1.iter().zip(x2) {
                let r2 = t2 * (a2 - u);
                let g0 = t1 * (a1 - theta[0]) + da * r2;
                let n2 = g0 * g0 + r2 * r2;
                if !n2.is_finite() {
                    let mut pair = [0.0; 2];
                    clipped += usize::from(accumulate_clipped_row(&[g0, r2], b, &mut pair));
                    s0 += pair[0];
                    s1 += pair[1];
                    continue;
                }
                let over = n2 > b2;
                let sc = if over { b / libm::sqrt(n2) } else { 1.0 };
                clipped += usize::from(over);
                s0 += g0 * sc;
                s1 += r2 * sc;
            }
            out[0] = s0;
            out[1] = s1;
            return Ok(clipped);
        }
        for j in 0..count {
            let r2 = t2 * (x2[j] - u);
            g[0] = t1 * (x1[j] - theta[0]) + da * r2;
            g[1] = r2;
            for k in 2..d {
                g[k] = tr * (self.x[k * self.n + first + j] - theta[k]);
            }
            clipped += usize::from(accumulate_clipped_row(&g[..d], b, out));
        }
        Ok(clipped)
    }

    /// ∂ℓ/∂θ₁ = τ₁(x₁ − θ₁) + 2a(θ₁ − m) τ₂ (x₂ − u), ∂ℓ/∂θ₂ = τ₂(x₂ − u),
    /// ∂ℓ/∂θ_k = τ_k(x_k − θ_k), with u = θ₂ + a(θ₁ − m)² + b.
    fn row_grad(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        let d = self.model.s.dim;
        crate::error::finite_theta_of(d, theta)?;
        if !out.len().is_multiple_of(d) {
            return Err(SimError::DimensionMismatch {
                what: "out",
                expected: d * (out.len() / d),
                got: out.len(),
            });
        }
        let rows = out.len() / d;
        check_range(first, rows, self.n)?;
        let u = self.model.u(theta[0], theta[1]);
        let da = 2.0 * self.model.s.a * (theta[0] - self.model.s.m);
        let (t1, t2, tr) = (self.model.tau[0], self.model.tau[1], self.model.tau[2]);
        let x1 = &self.column(0)[first..first + rows];
        let x2 = &self.column(1)[first..first + rows];
        for (j, g) in out.chunks_exact_mut(d).enumerate() {
            let r2 = t2 * (x2[j] - u);
            g[0] = t1 * (x1[j] - theta[0]) + da * r2;
            g[1] = r2;
            for k in 2..d {
                g[k] = tr * (self.x[k * self.n + first + j] - theta[k]);
            }
        }
        Ok(())
    }
}

/// Exact tempered posterior Ban(μ, Σ, a, b, m) of Theorem 5 (from [`Banana::posterior`]).
#[cfg(feature = "alloc")]
#[derive(Clone, Debug, PartialEq)]
pub struct BananaPosterior {
    a: f64,
    b: f64,
    m: f64,
    mu: alloc::vec::Vec<f64>,
    sd: alloc::vec::Vec<f64>,
}

#[cfg(feature = "alloc")]
impl BananaPosterior {
    /// μ of Theorem 5.
    #[must_use]
    pub fn mu(&self) -> &[f64] {
        &self.mu
    }
    /// Square roots of the diagonal of Σ.
    #[must_use]
    pub fn sd(&self) -> &[f64] {
        &self.sd
    }
    /// One exact draw θ = g(z), z ~ N(μ, Σ), into `out`.
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] for a wrong `out` length.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", self.mu.len(), out.len())?;
        for ((o, &m), &s) in out.iter_mut().zip(&self.mu).zip(&self.sd) {
            *o = m + s * dist::std_normal(rng);
        }
        let d1 = out[0] - self.m;
        out[1] -= self.a * d1 * d1 + self.b;
        Ok(())
    }
    /// Analytic posterior mean and variance of θ₂ (the curved coordinate):
    /// E θ₂ = μ₂ − a((μ₁ − m)² + s₁²) − b, Var θ₂ = s₂² + a²(2 s₁⁴ + 4 s₁² (μ₁ − m)²).
    #[must_use]
    pub fn theta2_moments(&self) -> (f64, f64) {
        let (m1, s1, m2, s2) = (self.mu[0] - self.m, self.sd[0], self.mu[1], self.sd[1]);
        let s1s = s1 * s1;
        let mean = m2 - self.a * (m1 * m1 + s1s) - self.b;
        let var = s2 * s2 + self.a * self.a * (2.0 * s1s * s1s + 4.0 * s1s * m1 * m1);
        (mean, var)
    }
}
