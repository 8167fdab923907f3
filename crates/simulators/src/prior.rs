//! The [`Prior`] trait and allocation-free building blocks (normal, log-normal, uniform,
//! i.i.d. normal, symmetric Dirichlet, products; truncated normal, gamma, beta, exponential), and
//! with `alloc` the `DeclaredPrior` product a configuration file builds.

use crate::dist;
use crate::error::{SimError, check_len, finite, positive};
use rand_core::Rng;

/// ln √(2π).
pub(crate) const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_7;

/// A prior distribution over θ ∈ ℝ^dim.
///
/// Implementations validate their parameters in their constructors, so sampling cannot fail on
/// parameter grounds; the only errors are buffer-length mismatches (and, for truncated priors,
/// an exhausted rejection budget). Nothing allocates per call.
pub trait Prior {
    /// Dimension of θ.
    fn dim(&self) -> usize;

    /// Draws θ into `out` (length [`dim`](Prior::dim)) using public simulation randomness.
    ///
    /// # Errors
    /// [`SimError::DimensionMismatch`] if `out.len() != self.dim()`; truncated priors may
    /// return [`SimError::TooManyAttempts`].
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError>;

    /// Log density of θ w.r.t. Lebesgue measure (up to the constant stated by the type's docs);
    /// `−∞` outside the support, and `−∞` for a θ of the wrong length or with NaN entries.
    fn ln_density(&self, theta: &[f64]) -> f64;

    /// `true` when θ has the right length and lies in the support (where
    /// [`ln_density`](Prior::ln_density) is finite).
    fn in_support(&self, theta: &[f64]) -> bool;

    /// Log density of the marginal law of coordinate `j` of θ at `x` (normalised, w.r.t.
    /// Lebesgue measure on ℝ), when the prior knows it exactly: `Some(−∞)` outside the
    /// marginal's support and for a NaN `x`; `None` when `j ≥ dim()` or the prior has no
    /// closed form for this marginal (the default, so a user's prior without one still works:
    /// a caller then estimates the marginal from draws).
    ///
    /// Every prior of this crate implements it: a scalar prior's own density, a Dirichlet
    /// coordinate's Beta(α, (k − 1)α), a product's blocks, the banana's curved coordinate by
    /// adaptive quadrature; only the truncated tuberculosis prior, whose normaliser is not
    /// known, answers `None`.
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        let _ = (j, x);
        None
    }
}

/// `Prior` for a pointer to a prior `P` (`&P`, `Arc<P>`): every method forwards to the
/// pointee (a macro: one impl body for several pointer types).
macro_rules! forward_prior {
    ($(#[$attr:meta])* $ptr:ty) => {
        $(#[$attr])*
        impl<P: Prior + ?Sized> Prior for $ptr {
            fn dim(&self) -> usize {
                (**self).dim()
            }
            fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
                (**self).sample(rng, out)
            }
            fn ln_density(&self, theta: &[f64]) -> f64 {
                (**self).ln_density(theta)
            }
            fn in_support(&self, theta: &[f64]) -> bool {
                (**self).in_support(theta)
            }
            fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
                (**self).marginal_ln_density(j, x)
            }
        }
    };
}

forward_prior!(&P);
forward_prior!(
    /// A shared prior (`alloc`, on targets with pointer-sized atomics) is a prior.
    #[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
    alloc::sync::Arc<P>
);

/// One-dimensional normal prior N(mean, sd²). The density is normalised.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Normal {
    mean: f64,
    sd: f64,
}

impl Normal {
    /// N(mean, sd²).
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless `mean` is finite and `sd` finite and > 0.
    pub fn new(mean: f64, sd: f64) -> Result<Self, SimError> {
        Ok(Self {
            mean: finite("mean", mean)?,
            sd: positive("sd", sd)?,
        })
    }
    /// Mean.
    #[must_use]
    pub const fn mean(&self) -> f64 {
        self.mean
    }
    /// Standard deviation.
    #[must_use]
    pub const fn sd(&self) -> f64 {
        self.sd
    }
    /// Log density at a scalar.
    #[must_use]
    pub fn ln_pdf(&self, x: f64) -> f64 {
        if !x.is_finite() {
            return f64::NEG_INFINITY;
        }
        let z = (x - self.mean) / self.sd;
        -0.5 * z * z - libm::log(self.sd) - LN_SQRT_2PI
    }
    /// One draw.
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.mean + self.sd * dist::std_normal(rng)
    }
}

impl Prior for Normal {
    fn dim(&self) -> usize {
        1
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", 1, out.len())?;
        out[0] = self.draw(rng);
        Ok(())
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        match theta {
            [x] => self.ln_pdf(*x),
            _ => f64::NEG_INFINITY,
        }
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        matches!(theta, [x] if x.is_finite())
    }
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        (j == 0).then(|| self.ln_pdf(x))
    }
}

/// One-dimensional log-normal prior: ln θ ~ N(mu, sigma²). Density w.r.t. θ (includes the
/// Jacobian 1/θ), normalised; support θ > 0.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LogNormal {
    inner: Normal,
}

impl LogNormal {
    /// ln θ ~ N(mu, sigma²).
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless `mu` is finite and `sigma` finite and > 0.
    pub fn new(mu: f64, sigma: f64) -> Result<Self, SimError> {
        Ok(Self {
            inner: Normal::new(mu, sigma)?,
        })
    }
    /// The normal law of ln θ.
    #[must_use]
    pub const fn log_normal(&self) -> Normal {
        self.inner
    }
}

impl Prior for LogNormal {
    fn dim(&self) -> usize {
        1
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", 1, out.len())?;
        out[0] = libm::exp(self.inner.draw(rng));
        Ok(())
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        match theta {
            [x] if *x > 0.0 && x.is_finite() => {
                let l = libm::log(*x);
                self.inner.ln_pdf(l) - l
            }
            _ => f64::NEG_INFINITY,
        }
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        matches!(theta, [x] if *x > 0.0 && x.is_finite())
    }
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        (j == 0).then(|| self.ln_density(&[x]))
    }
}

/// One-dimensional uniform prior U(lo, hi), normalised; support `[lo, hi]`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Uniform {
    lo: f64,
    hi: f64,
}

impl Uniform {
    /// U(lo, hi).
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless both are finite and `lo < hi`.
    pub fn new(lo: f64, hi: f64) -> Result<Self, SimError> {
        let lo = finite("lo", lo)?;
        let hi = finite("hi", hi)?;
        if hi > lo && (hi - lo).is_finite() {
            Ok(Self { lo, hi })
        } else {
            Err(SimError::InvalidParameter {
                name: "hi",
                value: hi,
            })
        }
    }
    /// One draw.
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.lo + (self.hi - self.lo) * dist::uniform01(rng)
    }
    /// Lower bound.
    #[must_use]
    pub const fn lo(&self) -> f64 {
        self.lo
    }
    /// Upper bound.
    #[must_use]
    pub const fn hi(&self) -> f64 {
        self.hi
    }
}

impl Prior for Uniform {
    fn dim(&self) -> usize {
        1
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", 1, out.len())?;
        out[0] = self.draw(rng);
        Ok(())
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if self.in_support(theta) {
            -libm::log(self.hi - self.lo)
        } else {
            f64::NEG_INFINITY
        }
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        matches!(theta, [x] if *x >= self.lo && *x <= self.hi)
    }
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        (j == 0).then(|| self.ln_density(&[x]))
    }
}

/// Independent N(mean, sd²) in every one of `dim` coordinates, normalised.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct IidNormal {
    dim: usize,
    one: Normal,
}

impl IidNormal {
    /// `dim` i.i.d. N(mean, sd²) coordinates.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for `dim == 0`; [`SimError::InvalidParameter`] as in
    /// [`Normal::new`].
    pub fn new(dim: usize, mean: f64, sd: f64) -> Result<Self, SimError> {
        if dim == 0 {
            return Err(SimError::InvalidSize {
                name: "dim",
                value: 0,
            });
        }
        Ok(Self {
            dim,
            one: Normal::new(mean, sd)?,
        })
    }
    /// The N(mean, sd²) of every coordinate.
    #[must_use]
    pub const fn marginal(&self) -> Normal {
        self.one
    }
}

impl Prior for IidNormal {
    fn dim(&self) -> usize {
        self.dim
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", self.dim, out.len())?;
        for x in out.iter_mut() {
            *x = self.one.draw(rng);
        }
        Ok(())
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if theta.len() != self.dim {
            return f64::NEG_INFINITY;
        }
        theta.iter().map(|&x| self.one.ln_pdf(x)).sum()
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        theta.len() == self.dim && theta.iter().all(|x| x.is_finite())
    }
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        (j < self.dim).then(|| self.one.ln_pdf(x))
    }
}

/// Symmetric Dirichlet(α, …, α) over the probability simplex in ℝ^k, represented by all `k`
/// coordinates (they sum to 1). The density is w.r.t. Lebesgue measure on the first `k − 1`
/// coordinates, normalised; θ is in the support when every θ_i ≥ 0 (> 0 if α < 1) and
/// |Σθ_i − 1| ≤ 1e-9.
///
/// ABCDP's mixture-of-uniforms toy uses α = 1 with k = 5 (Park et al. 2021, §6.1).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Dirichlet {
    k: usize,
    alpha: f64,
    ln_norm: f64,
}

impl Dirichlet {
    /// Symmetric Dirichlet with `k ≥ 2` components and concentration `alpha ∈ [1e-3, 1e6]`.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for `k < 2`; [`SimError::InvalidParameter`] for `alpha`
    /// outside `[1e-3, 1e6]` (below, draws underflow to vertices of the simplex in `f64`).
    pub fn new(k: usize, alpha: f64) -> Result<Self, SimError> {
        if k < 2 {
            return Err(SimError::InvalidSize {
                name: "k",
                value: k as u64,
            });
        }
        if !(1e-3..=1e6).contains(&alpha) {
            return Err(SimError::InvalidParameter {
                name: "alpha",
                value: alpha,
            });
        }
        #[allow(clippy::cast_precision_loss)]
        let kf = k as f64;
        let ln_norm = dpinfer_math::ln_gamma(kf * alpha) - kf * dpinfer_math::ln_gamma(alpha);
        Ok(Self { k, alpha, ln_norm })
    }
    /// Number of components k.
    #[must_use]
    pub const fn k(&self) -> usize {
        self.k
    }
    /// Concentration α.
    #[must_use]
    pub const fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl Prior for Dirichlet {
    fn dim(&self) -> usize {
        self.k
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", self.k, out.len())?;
        if self.alpha < 1.0 {
            // log-space: ln G = ln G(α + 1) + ln(U)/α avoids underflow for small α.
            let mut mx = f64::NEG_INFINITY;
            for x in out.iter_mut() {
                *x = libm::log(dist::gamma(rng, self.alpha + 1.0))
                    + libm::log(dist::uniform_open01(rng)) / self.alpha;
                mx = mx.max(*x);
            }
            let mut s = 0.0;
            for x in out.iter_mut() {
                *x = libm::exp(*x - mx);
                s += *x;
            }
            for x in out.iter_mut() {
                *x /= s;
            }
            return Ok(());
        }
        loop {
            let mut s = 0.0;
            for x in out.iter_mut() {
                *x = dist::gamma(rng, self.alpha);
                s += *x;
            }
            if s > 0.0 {
                for x in out.iter_mut() {
                    *x /= s;
                }
                return Ok(());
            }
        }
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if !self.in_support(theta) {
            return f64::NEG_INFINITY;
        }
        let mut acc = self.ln_norm;
        if (self.alpha - 1.0).abs() > 0.0 {
            for &x in theta {
                acc += (self.alpha - 1.0) * libm::log(x);
            }
        }
        acc
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        if theta.len() != self.k {
            return false;
        }
        let strict = self.alpha < 1.0;
        let mut s = 0.0;
        for &x in theta {
            if !(0.0..=1.0).contains(&x) || (strict && x <= 0.0) {
                return false;
            }
            s += x;
        }
        (s - 1.0).abs() <= 1e-9
    }
    /// Coordinate `j` of a Dirichlet(α, …, α) over k components is Beta(α, (k − 1)α)
    /// (aggregation property), on the support the joint allows: `[0, 1]` for α ≥ 1 (at 0 the
    /// Dirichlet(1) marginal has its largest value, k − 1), `(0, 1)` for α < 1.
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        if j >= self.k {
            return None;
        }
        let strict = self.alpha < 1.0;
        if !(0.0..=1.0).contains(&x) || (strict && (x <= 0.0 || x >= 1.0)) {
            return Some(f64::NEG_INFINITY);
        }
        #[allow(clippy::cast_precision_loss)]
        let b = (self.k - 1) as f64 * self.alpha;
        let a = self.alpha;
        let mut acc =
            dpinfer_math::ln_gamma(a + b) - dpinfer_math::ln_gamma(a) - dpinfer_math::ln_gamma(b);
        // An exponent of exactly 0 contributes nothing, also at the bound (0 · ln 0 = 0 here).
        if (a - 1.0).abs() > 0.0 {
            acc += (a - 1.0) * libm::log(x);
        }
        if (b - 1.0).abs() > 0.0 {
            acc += (b - 1.0) * libm::log1p(-x);
        }
        Some(if acc.is_nan() { f64::NEG_INFINITY } else { acc })
    }
}

/// Product of two independent priors: θ = (θ_A, θ_B), density p_A(θ_A) p_B(θ_B). Nest it to
/// build larger products (`Product<Product<A, B>, C>`); no allocation.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Product<A, B> {
    /// First block.
    pub a: A,
    /// Second block.
    pub b: B,
}

impl<A: Prior, B: Prior> Product<A, B> {
    /// θ = (θ_A, θ_B).
    pub const fn new(a: A, b: B) -> Self {
        Self { a, b }
    }
}

impl<A: Prior, B: Prior> Prior for Product<A, B> {
    fn dim(&self) -> usize {
        self.a.dim() + self.b.dim()
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", self.dim(), out.len())?;
        let (x, y) = out.split_at_mut(self.a.dim());
        self.a.sample(rng, x)?;
        self.b.sample(rng, y)
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if theta.len() != self.dim() {
            return f64::NEG_INFINITY;
        }
        let (x, y) = theta.split_at(self.a.dim());
        let la = self.a.ln_density(x);
        if la == f64::NEG_INFINITY {
            return la;
        }
        la + self.b.ln_density(y)
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        theta.len() == self.dim() && {
            let (x, y) = theta.split_at(self.a.dim());
            self.a.in_support(x) && self.b.in_support(y)
        }
    }
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        let da = self.a.dim();
        if j < da {
            self.a.marginal_ln_density(j, x)
        } else {
            self.b.marginal_ln_density(j - da, x)
        }
    }
}

mod univariate;
pub use univariate::{Beta, Exponential, Gamma, TruncatedNormal};

#[cfg(feature = "alloc")]
mod declared;
#[cfg(feature = "alloc")]
pub use declared::{DeclaredPrior, Marginal};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimStream;

    /// The Dirichlet's draws as the log-space small-α recipe computes them from `rng`:
    /// ln G = ln G(α + 1) + ln(U)/α, normalised after subtracting the largest.
    fn log_space_draw(rng: &mut SimStream, alpha: f64, out: &mut [f64]) {
        for x in out.iter_mut() {
            *x = libm::log(dist::gamma(rng, alpha + 1.0))
                + libm::log(dist::uniform_open01(rng)) / alpha;
        }
        let mx = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        out.iter_mut().for_each(|x| *x = libm::exp(*x - mx));
        let s: f64 = out.iter().sum();
        out.iter_mut().for_each(|x| *x /= s);
    }

    /// For α < 1 `Dirichlet::sample` runs the log-space path (one copy of it: issue 27
    /// removed a second, unreachable one), bit for bit, including α = 10⁻³ where plain
    /// gamma draws underflow to 0; for α ≥ 1 it normalises plain gamma draws.
    #[test]
    fn small_alpha_runs_the_log_space_path_and_large_alpha_the_plain_one() {
        for (alpha, seed) in [(0.5, 1), (0.05, 2), (1e-3, 3)] {
            let d = Dirichlet::new(4, alpha).unwrap();
            let mut a = SimStream::new(seed, 7);
            let mut b = a.clone();
            let (mut got, mut want) = ([0.0; 4], [0.0; 4]);
            for _ in 0..50 {
                d.sample(&mut a, &mut got).unwrap();
                log_space_draw(&mut b, alpha, &mut want);
                assert_eq!(
                    got.map(f64::to_bits),
                    want.map(f64::to_bits),
                    "alpha {alpha}"
                );
                assert!(got.iter().all(|x| x.is_finite() && *x >= 0.0));
                assert!((got.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            }
        }
        let d = Dirichlet::new(3, 2.0).unwrap();
        let mut a = SimStream::new(4, 7);
        let mut b = a.clone();
        let mut got = [0.0; 3];
        d.sample(&mut a, &mut got).unwrap();
        let g = [0; 3].map(|_| dist::gamma(&mut b, 2.0));
        let s: f64 = g.iter().sum();
        assert_eq!(got.map(f64::to_bits), g.map(|x| (x / s).to_bits()));
    }
}
