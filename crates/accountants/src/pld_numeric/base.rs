//! Base dominating pairs `(P, Q)` (described through the law of the privacy loss
//! `ℓ = ln dP/dQ` under `Q`) and the pessimistic connect-the-dots discretisation of their
//! Poisson-subsampled versions (Doroshenko et al. 2022, Algorithm 1).
//!
//! Every pair here is *symmetric*: the law of `−ℓ` under `P` equals the law of `ℓ` under
//! `Q` (Gaussian, Laplace, randomized response), so `(Q, P)` has the same PLD as `(P, Q)`.

use alloc::vec::Vec;

use dpinfer_math::{norm_cdf, norm_cdf_sub_exp};

use super::discrete::{DGauss, DLap};
use super::{Direction, Mechanism};
use crate::AccountantError;

/// `1/√(2π)`.
const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// Largest number of grid intervals of one discretised PLD.
pub(crate) const MAX_GRID: usize = 1 << 24;

/// The failure [`grid`] reports beyond [`MAX_GRID`] cells (the caller coarsens the grid).
pub(crate) const GRID_TOO_WIDE: &str = "pld grid wider than 2^24 cells";

/// `e^t − 1`: a Taylor polynomial for `|t| < 1/32` (truncation below `10⁻²⁴` relative),
/// `libm::expm1` otherwise.
#[inline]
pub(crate) fn expm1_fast(t: f64) -> f64 {
    if t.abs() < 0.03125 {
        let mut p = 1.0 + t / 11.0;
        p = 1.0 + t / 10.0 * p;
        p = 1.0 + t / 9.0 * p;
        p = 1.0 + t / 8.0 * p;
        p = 1.0 + t / 7.0 * p;
        p = 1.0 + t / 6.0 * p;
        p = 1.0 + t / 5.0 * p;
        p = 1.0 + t / 4.0 * p;
        p = 1.0 + t / 3.0 * p;
        p = 1.0 + t / 2.0 * p;
        t * p
    } else {
        libm::expm1(t)
    }
}

/// Gauss–Legendre nodes/weights on [−1, 1]: 3 points.
pub(crate) const GL3: [(f64, f64); 3] = [
    (-0.774_596_669_241_483_4, 0.555_555_555_555_555_6),
    (0.0, 0.888_888_888_888_888_9),
    (0.774_596_669_241_483_4, 0.555_555_555_555_555_6),
];
/// Gauss–Legendre nodes/weights on [−1, 1]: 4 points.
pub(crate) const GL4: [(f64, f64); 4] = [
    (-0.861_136_311_594_052_6, 0.347_854_845_137_453_9),
    (-0.339_981_043_584_856_3, 0.652_145_154_862_546_1),
    (0.339_981_043_584_856_3, 0.652_145_154_862_546_1),
    (0.861_136_311_594_052_6, 0.347_854_845_137_453_9),
];

/// Composite 4-point Gauss–Legendre ([`GL4`]) over `[lo, lo + d]`: `ceil(16 d)` equal pieces
/// (clamped to `1..=2^16`), `f(z, weight)` called at each piece's nodes in order; returns the
/// half piece width, the factor that turns the weighted sum of `f`'s values into the integral.
pub(crate) fn gl4_pieces(lo: f64, d: f64, mut f: impl FnMut(f64, f64)) -> f64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let pieces = (libm::ceil(d * 16.0) as usize).clamp(1, 1 << 16);
    #[allow(clippy::cast_precision_loss)]
    let w = d / pieces as f64;
    for p in 0..pieces {
        #[allow(clippy::cast_precision_loss)]
        let c = lo + (p as f64 + 0.5) * w;
        for &(node, weight) in &GL4 {
            f(c + 0.5 * w * node, weight);
        }
    }
    0.5 * w
}

/// `Q`-integrals over one interval `(x, y)` of the loss: `m0 = Q(I)`,
/// `m_lo = ∫_I (e^ℓ − e^x) dQ`, `m_hi = ∫_I (e^y − e^ℓ) dQ` (all ≥ 0, each evaluated without
/// cancellation).
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Integrals {
    pub(crate) m0: f64,
    pub(crate) m_lo: f64,
    pub(crate) m_hi: f64,
}

impl Mechanism {
    /// `(t_min, t_max)`: outside this loss range both `P` and `Q` have mass ≤ `tail`
    /// (Gaussian: `Φ(−z) = tail`) or none (the others).
    pub(crate) fn range(self, tail: f64) -> (f64, f64) {
        match self {
            Self::Gaussian { mu } => {
                let s = libm::sqrt(2.0 * mu);
                let z = -dpinfer_math::norm_quantile(tail);
                (-mu - z * s, mu + z * s)
            }
            Self::Laplace { epsilon }
            | Self::RandomizedResponse { epsilon }
            | Self::KaryRandomizedResponse { epsilon, .. } => (-epsilon, epsilon),
            Self::DiscreteLaplace { scale, shift } => {
                let e = DLap::new(scale, shift).epsilon();
                (-e, e)
            }
            Self::DiscreteGaussian { sigma, shift } => {
                let d = DGauss::new(sigma, shift);
                let (mu, tau) = (d.mu(), d.tau());
                let s = libm::sqrt(2.0 * mu);
                let z = -dpinfer_math::norm_quantile(tail);
                (-mu - z * s - tau, mu + z * s + tau)
            }
            Self::MixtureOfGaussians(m) => m.loss_range(tail),
        }
    }

    /// Point masses of `Q` on the loss: `[(ℓ, Q{ℓ})]` (zero masses are skipped).
    fn atoms(self) -> [(f64, f64); 3] {
        match self {
            Self::Gaussian { .. }
            | Self::DiscreteLaplace { .. }
            | Self::DiscreteGaussian { .. }
            | Self::MixtureOfGaussians(_) => [(0.0, 0.0); 3],
            Self::Laplace { epsilon: e } => [(-e, 0.5), (e, 0.5 * libm::exp(-e)), (0.0, 0.0)],
            Self::RandomizedResponse { epsilon: e } => {
                // Q = (e^ε, 1)/(1 + e^ε) on ℓ = (−ε, +ε).
                let small = 1.0 / (1.0 + libm::exp(e));
                [(-e, 1.0 - small), (e, small), (0.0, 0.0)]
            }
            Self::KaryRandomizedResponse {
                epsilon: e,
                neutral: r,
            } => {
                let (lo, hi) = kary_masses(e, r);
                [(-e, lo), (e, hi), (0.0, r)]
            }
        }
    }

    /// `Q(ℓ ≤ t)`.
    pub(crate) fn q_le(self, t: f64) -> f64 {
        match self {
            Self::DiscreteLaplace { scale, shift } => DLap::new(scale, shift).q_le(t),
            Self::DiscreteGaussian { sigma, shift } => DGauss::new(sigma, shift).q_le(t),
            Self::Gaussian { mu } => norm_cdf((t + mu) / libm::sqrt(2.0 * mu)),
            Self::MixtureOfGaussians(m) => norm_cdf(m.inverse(t)),
            Self::Laplace { epsilon: e } => {
                on_span(t, e, 0.0, || 1.0 - 0.5 * libm::exp(-(t + e) / 2.0), 1.0)
            }
            Self::RandomizedResponse { epsilon: e } => {
                on_span(t, e, 0.0, || 1.0 / (1.0 + libm::exp(-e)), 1.0)
            }
            Self::KaryRandomizedResponse {
                epsilon: e,
                neutral: r,
            } => {
                let (lo, hi) = kary_masses(e, r);
                on_span(t, e, 0.0, || if t < 0.0 { lo } else { 1.0 - hi }, 1.0)
            }
        }
    }

    /// `Q(ℓ > t)`.
    pub(crate) fn q_gt(self, t: f64) -> f64 {
        match self {
            Self::DiscreteLaplace { scale, shift } => DLap::new(scale, shift).q_gt(t),
            Self::DiscreteGaussian { sigma, shift } => DGauss::new(sigma, shift).q_gt(t),
            Self::Gaussian { mu } => norm_cdf(-(t + mu) / libm::sqrt(2.0 * mu)),
            Self::MixtureOfGaussians(m) => norm_cdf(-m.inverse(t)),
            Self::Laplace { epsilon: e } => {
                on_span(t, e, 1.0, || 0.5 * libm::exp(-(t + e) / 2.0), 0.0)
            }
            Self::RandomizedResponse { epsilon: e } => {
                on_span(t, e, 1.0, || 1.0 / (1.0 + libm::exp(e)), 0.0)
            }
            Self::KaryRandomizedResponse {
                epsilon: e,
                neutral: r,
            } => {
                let (lo, hi) = kary_masses(e, r);
                on_span(t, e, 1.0, || if t < 0.0 { 1.0 - lo } else { hi }, 0.0)
            }
        }
    }

    /// `P(ℓ ≤ t)` (= `Q(ℓ ≥ −t)` by symmetry).
    pub(crate) fn p_le(self, t: f64) -> f64 {
        match self {
            Self::DiscreteLaplace { scale, shift } => DLap::new(scale, shift).p_le(t),
            Self::DiscreteGaussian { sigma, shift } => DGauss::new(sigma, shift).p_le(t),
            Self::Gaussian { mu } => norm_cdf((t - mu) / libm::sqrt(2.0 * mu)),
            Self::MixtureOfGaussians(m) => m.p_le(m.inverse(t)),
            Self::Laplace { epsilon: e } => {
                on_span(t, e, 0.0, || 0.5 * libm::exp(-(e - t) / 2.0), 1.0)
            }
            Self::RandomizedResponse { epsilon: e } => {
                on_span(t, e, 0.0, || 1.0 / (1.0 + libm::exp(e)), 1.0)
            }
            Self::KaryRandomizedResponse {
                epsilon: e,
                neutral: r,
            } => {
                // P(ℓ) = e^ℓ Q(ℓ): P(−ε) = Q(+ε), P(0) = r, P(+ε) = Q(−ε).
                let (lo, hi) = kary_masses(e, r);
                on_span(t, e, 0.0, || if t < 0.0 { hi } else { 1.0 - lo }, 1.0)
            }
        }
    }

    /// `P(ℓ > t)`.
    pub(crate) fn p_gt(self, t: f64) -> f64 {
        match self {
            Self::DiscreteLaplace { scale, shift } => DLap::new(scale, shift).p_gt(t),
            Self::DiscreteGaussian { sigma, shift } => DGauss::new(sigma, shift).p_gt(t),
            Self::Gaussian { mu } => norm_cdf((mu - t) / libm::sqrt(2.0 * mu)),
            Self::MixtureOfGaussians(m) => m.p_gt(m.inverse(t)),
            Self::Laplace { epsilon: e } => {
                on_span(t, e, 1.0, || 1.0 - 0.5 * libm::exp(-(e - t) / 2.0), 0.0)
            }
            Self::RandomizedResponse { epsilon: e } => {
                on_span(t, e, 1.0, || 1.0 / (1.0 + libm::exp(-e)), 0.0)
            }
            Self::KaryRandomizedResponse {
                epsilon: e,
                neutral: r,
            } => {
                let (lo, hi) = kary_masses(e, r);
                on_span(t, e, 1.0, || if t < 0.0 { 1.0 - hi } else { lo }, 0.0)
            }
        }
    }

    /// The hockey-stick divergence `H_{e^t}(P‖Q) = ∫_{ℓ>t} (e^ℓ − e^t) dQ` for any real `t`.
    pub(crate) fn hockey(self, t: f64) -> f64 {
        if t == f64::NEG_INFINITY {
            return 1.0;
        }
        if t == f64::INFINITY {
            return 0.0;
        }
        let v = match self {
            Self::DiscreteLaplace { scale, shift } => DLap::new(scale, shift).hockey(t),
            Self::DiscreteGaussian { sigma, shift } => DGauss::new(sigma, shift).hockey(t),
            Self::Gaussian { mu } => {
                let s = libm::sqrt(2.0 * mu);
                norm_cdf_sub_exp((mu - t) / s, -(t + mu) / s, t)
            }
            Self::MixtureOfGaussians(m) => {
                let z = m.inverse(t);
                m.p_gt(z) - libm::exp(t) * norm_cdf(-z)
            }
            Self::Laplace { epsilon: e } => {
                if t < -e {
                    -libm::expm1(t)
                } else if t < e {
                    -libm::expm1((t - e) / 2.0)
                } else {
                    0.0
                }
            }
            Self::RandomizedResponse { epsilon: e } => {
                if t < -e {
                    -libm::expm1(t)
                } else if t < e {
                    // (e^ε − e^t)/(1 + e^ε)
                    -libm::expm1(t - e) / (1.0 + libm::exp(-e))
                } else {
                    0.0
                }
            }
            Self::KaryRandomizedResponse {
                epsilon: e,
                neutral: r,
            } => {
                // Σ_{ℓ > t} (e^ℓ − e^t) Q(ℓ): the atom at +ε, and the one at 0 below it.
                let top = (1.0 - r) * -libm::expm1(t - e) / (1.0 + libm::exp(-e));
                if t < -e {
                    -libm::expm1(t)
                } else if t < 0.0 {
                    top + r * -libm::expm1(t)
                } else if t < e {
                    top
                } else {
                    0.0
                }
            }
        };
        v.max(0.0)
    }

    /// The Gaussian loss standard deviation `√(2μ)` (0 for the others), hoisted out of
    /// [`Mechanism::integrals_scaled`].
    pub(crate) fn scale(self) -> f64 {
        match self {
            Self::Gaussian { mu } => libm::sqrt(2.0 * mu),
            _ => 0.0,
        }
    }

    /// `Q`-integrals over `(x, y]` (`right_closed`) or `[x, y)`; `x` may be `−∞`. Each end
    /// comes with its exponential (`(x, e^x)`).
    /// `s = self.scale()` is precomputed by the caller.
    pub(crate) fn integrals_scaled(
        self,
        s: f64,
        (x, ex): (f64, f64),
        (y, ey): (f64, f64),
        right_closed: bool,
    ) -> Integrals {
        let mut out = Integrals::default();
        if x.is_nan() || y.is_nan() || x >= y {
            return out;
        }
        match self {
            Self::DiscreteLaplace { scale, shift } => {
                return DLap::new(scale, shift).integrals((x, ex), (y, ey), right_closed);
            }
            Self::DiscreteGaussian { sigma, shift } => {
                return DGauss::new(sigma, shift).integrals((x, ex), (y, ey), right_closed);
            }
            Self::Gaussian { mu } => {
                if x == f64::NEG_INFINITY {
                    // m_lo = P(ℓ ≤ y); m_hi = e^y Q(ℓ ≤ y) − P(ℓ ≤ y) = e^y H_{e^{−y}}(P‖Q).
                    out.m0 = self.q_le(y);
                    out.m_lo = self.p_le(y);
                    out.m_hi = ey * self.hockey(-y);
                    return out;
                }
                let d = y - x;
                // Composite Gauss–Legendre: pieces of width ≤ s/8 (4 points), or a single
                // 3-point rule when the interval is narrower than s/64.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let pieces = (libm::ceil(d * 8.0 / s) as usize).clamp(1, 1 << 16);
                #[allow(clippy::cast_precision_loss)]
                let w = d / pieces as f64;
                let (mut a0, mut alo, mut ahi) = (0.0, 0.0, 0.0);
                if d * 64.0 <= s {
                    // 3-point rule at c, c ± δ: φ(z_c ± δ/s) = φ(z_c)·e^{∓z_c δ/s}·e^{−(δ/s)²/2},
                    // two exponentials instead of three; (δ/s)²/2 ≤ 4·10⁻⁵ so its
                    // exponential is a 4-term series (error < 10⁻¹⁹).
                    let c = 0.5 * (x + y);
                    let delta = 0.5 * d * GL3[2].0;
                    let zc = (c + mu) / s;
                    let dz = delta / s;
                    let e_c = libm::exp(-0.5 * zc * zc);
                    let g = libm::exp(-zc * dz);
                    let t = 0.5 * dz * dz;
                    let k = 1.0 - t * (1.0 - t * (0.5 - t / 6.0));
                    let side = e_c * k * GL3[0].1;
                    for (l, dq) in [
                        (c - delta, side / g),
                        (c, e_c * GL3[1].1),
                        (c + delta, side * g),
                    ] {
                        a0 += dq;
                        alo += dq * expm1_fast(l - x);
                        ahi += dq * -expm1_fast(l - y);
                    }
                    let scale = 0.5 * d * INV_SQRT_2PI / s;
                    out.m0 = a0 * scale;
                    out.m_lo = alo * scale * ex;
                    out.m_hi = ahi * scale * ey;
                    return self.add_atoms(out, (x, ex), (y, ey), right_closed);
                }
                let rule: &[(f64, f64)] = &GL4;
                for k in 0..pieces {
                    #[allow(clippy::cast_precision_loss)]
                    let c = x + (k as f64 + 0.5) * w;
                    for &(node, weight) in rule {
                        let l = c + 0.5 * w * node;
                        let z = (l + mu) / s;
                        let dq = weight * libm::exp(-0.5 * z * z);
                        a0 += dq;
                        alo += dq * expm1_fast(l - x);
                        ahi += dq * -expm1_fast(l - y);
                    }
                }
                let scale = 0.5 * w * INV_SQRT_2PI / s;
                out.m0 = a0 * scale;
                out.m_lo = alo * scale * ex;
                out.m_hi = ahi * scale * ey;
            }
            Self::Laplace { epsilon: e } => {
                // Density ¼ e^{−(ℓ+ε)/2} on (−ε, ε).
                let cx = x.max(-e);
                let cy = y.min(e);
                if cx < cy {
                    let d = cy - cx;
                    let m0 = 0.5 * libm::exp(-(cx + e) / 2.0) * -libm::expm1(-d / 2.0);
                    let base = libm::exp((cx - e) / 2.0);
                    let sh = libm::sinh(d / 4.0);
                    let em = libm::expm1(d / 2.0);
                    // ∫(e^ℓ − e^{cx}) = 2e^{(cx−ε)/2} sinh²(d/4); ∫(e^{cy} − e^ℓ) = ½e^{(cx−ε)/2}(e^{d/2}−1)².
                    out.m0 = m0;
                    out.m_lo = 2.0 * base * sh * sh + (libm::exp(cx) - ex) * m0;
                    out.m_hi = 0.5 * base * em * em + (ey - libm::exp(cy)) * m0;
                }
            }
            // Mixtures are discretised by `super::mixture::discretise` (asymmetric pair), never
            // through these integrals; zeros here would fail the mass check, not pass silently.
            Self::RandomizedResponse { .. }
            | Self::KaryRandomizedResponse { .. }
            | Self::MixtureOfGaussians(_) => {}
        }
        self.add_atoms(out, (x, ex), (y, ey), right_closed)
    }

    /// Adds the point masses of `Q` inside the interval to the integrals.
    fn add_atoms(
        self,
        mut out: Integrals,
        (x, ex): (f64, f64),
        (y, ey): (f64, f64),
        right_closed: bool,
    ) -> Integrals {
        for (c, w) in self.atoms() {
            let inside = if right_closed {
                x < c && c <= y
            } else {
                x <= c && c < y
            };
            if w > 0.0 && inside {
                out.m0 += w;
                out.m_lo += w * if x == f64::NEG_INFINITY {
                    libm::exp(c)
                } else {
                    ex * libm::expm1(c - x)
                };
                out.m_hi += w * ey * -libm::expm1(c - y);
            }
        }
        out
    }
}

/// A distribution function of a loss whose law lies on `[−ε, ε]`, read at `t`: `below` for
/// `t < −ε`, `inside()` for `−ε ≤ t < ε`, `above` otherwise (`t ≥ ε`, and NaN). The one
/// three-way split of [`Mechanism::q_le`], `q_gt`, `p_le` and `p_gt` for the Laplace and
/// (k-ary) randomized-response losses.
#[inline]
fn on_span(t: f64, e: f64, below: f64, inside: impl FnOnce() -> f64, above: f64) -> f64 {
    if t < -e {
        below
    } else if t < e {
        inside()
    } else {
        above
    }
}

/// `(Q(−ε), Q(+ε))` of k-ary randomized response with neutral mass `r`:
/// `(1 − r)·(e^ε, 1)/(1 + e^ε)`.
fn kary_masses(e: f64, r: f64) -> (f64, f64) {
    let small = (1.0 - r) / (1.0 + libm::exp(e));
    (1.0 - r - small, small)
}

/// `f(ℓ) = ln(1 − q + q e^ℓ)`, the loss of the Poisson-subsampled pair
/// `(qP + (1−q)Q, Q)` as a function of the base loss (Zhu–Dong–Wang 2022, Prop. 30).
fn subsampled_loss(q: f64, l: f64) -> f64 {
    if q >= 1.0 {
        l
    } else if l == f64::NEG_INFINITY {
        libm::log1p(-q)
    } else if l > 30.0 {
        l + libm::log(q) + libm::log1p((1.0 - q) * libm::exp(-l) / q)
    } else {
        libm::log1p(q * libm::expm1(l))
    }
}

/// Inverse of [`subsampled_loss`]: the base loss `τ` with `f(τ) = ε` (`−∞` below the
/// range), with `e^τ = (e^ε − 1 + q)/q`.
fn base_threshold(q: f64, ln_q: f64, eps: f64) -> (f64, f64) {
    if q >= 1.0 {
        return (eps, libm::exp(eps));
    }
    if eps > 30.0 {
        let t = eps + libm::log1p((q - 1.0) * libm::exp(-eps)) - ln_q;
        return (t, libm::exp(t));
    }
    let a = libm::expm1(eps) + q;
    if a <= 0.0 {
        (f64::NEG_INFINITY, 0.0)
    } else {
        (libm::log(a) - ln_q, a / q)
    }
}

/// One discretised PLD: masses of the "upper" distribution on losses
/// `(offset + i)·h`, plus the mass at `+∞`.
#[derive(Clone, Debug)]
pub(crate) struct Pmf {
    pub(crate) offset: i64,
    pub(crate) probs: Vec<f64>,
    pub(crate) inf: f64,
    /// Round-off allowance added to δ per composed copy.
    pub(crate) slack: f64,
}

impl Pmf {
    /// A freshly discretised PLD from its grid masses and the mass at `+∞`, checked: the
    /// masses must be non-negative and sum (Neumaier) to 1 within 10⁻⁹; the round-off
    /// allowance is [`CONSTRUCTION_SLACK`] plus eight times the mass error.
    ///
    /// # Errors
    /// [`AccountantError::NumericalFailure`] if the discretisation lost mass.
    pub(crate) fn from_masses(
        offset: i64,
        probs: Vec<f64>,
        inf: f64,
    ) -> Result<Self, AccountantError> {
        let total: f64 = dpinfer_math::NeumaierSum::sum_iter(probs.iter().copied()) + inf;
        if !total.is_finite()
            || (total - 1.0).abs() > 1e-9
            || probs.iter().any(|m| m.is_nan() || *m < 0.0)
        {
            return Err(AccountantError::NumericalFailure {
                what: "pld discretisation lost mass",
            });
        }
        Ok(Self {
            offset,
            probs,
            inf,
            slack: CONSTRUCTION_SLACK + 8.0 * (total - 1.0).abs(),
        })
    }

    /// The mixture `Σᵢ wᵢ·PLDᵢ` of discretised PLDs on the same grid `h·ℤ` (weights `wᵢ ≥ 0`
    /// summing to 1): the PLD of the pair that first draws branch `i` with probability `wᵢ`,
    /// **reveals it**, and then runs pair `i` (`dp_accounting`'s `compute_mixture`). Its
    /// δ-curve is `Σᵢ wᵢ δᵢ(ε)`, so pessimistic inputs give a pessimistic mixture, which
    /// dominates the same mixture with the branch hidden (post-processing). Allowances mix
    /// with the weights, plus the round-off of the weighted sums (≤ 4u relative per mass).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for an empty list, a weight outside `[0, 1]`
    /// or weights not summing to 1 within 10⁻¹²; [`AccountantError::NumericalFailure`] if
    /// the grids' union is too wide.
    pub(crate) fn mix(parts: &[(&Self, f64)]) -> Result<Self, AccountantError> {
        let total: f64 = parts.iter().map(|(_, w)| *w).sum();
        if parts.is_empty() || (total - 1.0).abs() > 1e-12 {
            return Err(AccountantError::InvalidParameter {
                name: "weights",
                value: total,
            });
        }
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for &(p, w) in parts {
            if !(0.0..=1.0).contains(&w) {
                return Err(AccountantError::InvalidParameter {
                    name: "weights",
                    value: w,
                });
            }
            let len =
                i64::try_from(p.probs.len()).map_err(|_| AccountantError::NumericalFailure {
                    what: GRID_TOO_WIDE,
                })?;
            lo = lo.min(p.offset);
            hi = hi.max(p.offset + len);
        }
        let span = usize::try_from(hi - lo)
            .ok()
            .filter(|&n| n <= MAX_GRID + 1)
            .ok_or(AccountantError::NumericalFailure {
                what: GRID_TOO_WIDE,
            })?;
        let mut probs = alloc::vec![0.0; span];
        let (mut inf, mut slack) = (0.0, 8.0 * f64::EPSILON);
        for &(p, w) in parts {
            #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
            let start = (p.offset - lo) as usize;
            for (dst, &m) in probs[start..].iter_mut().zip(&p.probs) {
                *dst += w * m;
            }
            inf += w * p.inf;
            slack += w * p.slack;
        }
        Ok(Self {
            offset: lo,
            probs,
            inf,
            slack: slack * (1.0 + 4.0 * f64::EPSILON),
        })
    }
}

/// Base round-off allowance of one discretised PLD: the Gauss–Legendre rules (error
/// < 10⁻¹⁵ relative for the chosen widths) and closed forms are accurate to a few ulp per
/// atom. Each PLD's allowance is this plus 8× its measured total-mass deviation
/// `|Σμ + μ_∞ − 1|` (compensated sum), added to the δ of every composed copy.
pub(crate) const CONSTRUCTION_SLACK: f64 = 1e-14;

/// The pessimistic connect-the-dots PLD of `mechanism` Poisson-subsampled at rate `q`
/// (`q = 1`: no subsampling), in `direction`, on the grid `h·ℤ`.
///
/// For the grid `ε_0 < … < ε_k` (`ε_j = (i_0 + j)h`, covering the loss range) and the loss
/// intervals `I_j = (ε_{j−1}, ε_j]` with upper/lower masses `p_j, r_j`, the pessimistic
/// masses are (Doroshenko et al. 2022, Alg. 1, rewritten with the non-negative
/// `B_j = p_j − e^{ε_{j−1}} r_j` and `A_j = e^{ε_j} r_j − p_j` so that no second difference
/// of δ is formed): `μ_j = B_j/(1 − e^{−h}) + A_{j+1}/(e^h − 1)`, plus the mass below `ε_0`
/// at `ε_0`, `e^{ε_k}·W(L > ε_k)` at `ε_k` and `δ(ε_k)` at `+∞`. Its δ-curve interpolates
/// the exact one linearly in `e^ε` between grid points, hence dominates it (convexity).
pub(crate) fn discretise(
    mechanism: Mechanism,
    q: f64,
    direction: Direction,
    h: f64,
    tail: f64,
) -> Result<Pmf, AccountantError> {
    if let Mechanism::MixtureOfGaussians(m) = mechanism {
        if q < 1.0 {
            return Err(AccountantError::Unsupported {
                event: "MixtureOfGaussians",
                accountant: "numerical PLD (subsampled)",
            });
        }
        return super::mixture::discretise(&m, direction, h, tail);
    }
    let (t_min, t_max) = mechanism.range(tail);
    let (l_min, l_max) = match direction {
        Direction::Remove => (subsampled_loss(q, t_min), subsampled_loss(q, t_max)),
        Direction::Add => (-subsampled_loss(q, t_max), -subsampled_loss(q, t_min)),
    };
    let (i0, k, offset) = grid(l_min, l_max, h)?;
    #[allow(clippy::cast_precision_loss)]
    let eps_at = |j: usize| (i0 + j as f64) * h;
    let ln_q = libm::log(q);
    let threshold = |j: usize| match direction {
        Direction::Remove => base_threshold(q, ln_q, eps_at(j)),
        Direction::Add => base_threshold(q, ln_q, -eps_at(j)),
    };
    let em1h = libm::expm1(h);
    let one_m = -libm::expm1(-h);
    let scale = mechanism.scale();
    let mut mu = alloc::vec![0.0; k + 1];
    let mut prev = threshold(0);
    let mut a_prev = if direction == Direction::Add {
        libm::exp(eps_at(0))
    } else {
        0.0
    };
    for j in 1..=k {
        let cur = threshold(j);
        let (prev_t, t) = (prev.0, cur.0);
        let (b, a) = match direction {
            Direction::Remove => {
                let m = mechanism.integrals_scaled(scale, prev, cur, true);
                if prev_t == f64::NEG_INFINITY {
                    // The lower grid point lies below the support (e^{ε_{j−1}} < 1 − q):
                    // B = p − e^{ε_{j−1}} r = q·m_lo + (1 − q − e^{ε_{j−1}})·m0.
                    let gap = (-libm::expm1(eps_at(j - 1)) - q).max(0.0);
                    (q * m.m_lo + gap * m.m0, q * m.m_hi)
                } else {
                    (q * m.m_lo, q * m.m_hi)
                }
            }
            Direction::Add => {
                let m = mechanism.integrals_scaled(scale, cur, prev, false);
                let a_j = libm::exp(eps_at(j));
                let a = if t == f64::NEG_INFINITY {
                    // The upper grid point lies above the support (e^{−ε_j} < 1 − q):
                    // A = e^{ε_j} r − p = e^{ε_j} q m_lo + (e^{ε_j}(1 − q) − 1)·m0, the last
                    // factor as (e^{ε_j} − 1) − q·e^{ε_j} (no cancellation at small q).
                    a_j * q * m.m_lo + (libm::expm1(eps_at(j)) - q * a_j).max(0.0) * m.m0
                } else {
                    a_j * q * m.m_lo
                };
                let out = (a_prev * q * m.m_hi, a);
                a_prev = a_j;
                out
            }
        };
        mu[j] += b / one_m;
        mu[j - 1] += a / em1h;
        prev = cur;
    }
    let t0 = threshold(0).0;
    let tk = threshold(k).0;
    let ek = libm::exp(eps_at(k));
    let inf = match direction {
        Direction::Remove => {
            mu[0] += if t0 == f64::NEG_INFINITY {
                0.0
            } else {
                q * mechanism.p_le(t0) + (1.0 - q) * mechanism.q_le(t0)
            };
            mu[k] += ek * mechanism.q_gt(tk);
            q * mechanism.hockey(tk)
        }
        Direction::Add => {
            // Q(ℓ ≥ u) = P(ℓ ≤ −u); P(ℓ < u) = Q(ℓ > −u); Q(ℓ < u) = P(ℓ > −u).
            mu[0] += mechanism.p_le(-t0);
            let w_above = q * mechanism.q_gt(-tk) + (1.0 - q) * mechanism.p_gt(-tk);
            mu[k] += ek * w_above;
            if tk == f64::NEG_INFINITY {
                0.0
            } else {
                // 1 − (1 − q)e^{ε_k} = q·e^{ε_k} − (e^{ε_k} − 1), without cancellation.
                (q * ek - libm::expm1(eps_at(k))).max(0.0) * mechanism.hockey(-tk)
            }
        }
    };
    Pmf::from_masses(offset, mu, inf)
}

/// The add-direction PLD of a pair from its remove-direction one (`rem`, the pessimistic PLD
/// ω̃ of `(M, Q)`): the law of the swapped pair's loss is the mirror image reweighted,
/// `ω′(−ℓ) = e^{−ℓ}·ω̃(ℓ)`, with the deficit `1 − Σ e^{−ℓ}ω̃(ℓ) ≥ 0` at `+∞`. Its δ-curve is
/// `1 − e^ε + e^ε·δ̃_rem(−ε)`, the swap identity `H_{e^ε}(Q‖M) = 1 − e^ε + e^ε·H_{e^{−ε}}(M‖Q)`
/// applied to the pessimistic `δ̃_rem ≥ δ_rem`, so it dominates the exact add-direction curve
/// (one discretisation instead of two; the grid is the mirror of the remove grid, as the
/// direct add-direction discretisation's). `None` when a weight `e^{−ℓ}` exceeds 2 (large
/// sampling rates: the remove PMF's errors would be amplified); the caller discretises then.
pub(crate) fn mirror(rem: &Pmf, h: f64) -> Option<Pmf> {
    #[allow(clippy::cast_precision_loss)]
    if (rem.offset as f64) * h < -core::f64::consts::LN_2 {
        return None;
    }
    let k = rem.probs.len().checked_sub(1)?;
    let mut probs = alloc::vec![0.0; k + 1];
    let mut kept = dpinfer_math::NeumaierSum::new();
    for (i, &m) in rem.probs.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let w = m * libm::exp(-((rem.offset + i as i64) as f64) * h);
        probs[k - i] = w;
        kept.add(w);
    }
    let deficit = 1.0 - kept.sum();
    #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
    let offset = -(rem.offset + k as i64);
    // ω̃'s own errors multiplied by at most the largest weight e^{−offset·h} ≤ 2; each new
    // mass within 2u relative (exp, product) of e^{−ℓ}·m, 2u·Σ ≤ 4u in all, and the
    // compensated deficit within 2u; a deficit below 0 by round-off is counted too.
    #[allow(clippy::cast_precision_loss)]
    let w_max = libm::exp(-(rem.offset as f64) * h);
    let slack =
        w_max * rem.slack * (1.0 + 4.0 * f64::EPSILON) + 8.0 * f64::EPSILON + (-deficit).max(0.0);
    Some(Pmf {
        offset,
        probs,
        inf: deficit.max(0.0),
        slack,
    })
}

/// An upper bound of the mass at `+∞` of [`mirror`]`(rem, h)` that does not lose the
/// few ulp per step of its complement `1 − Σ e^{−ℓ}m`: the exact pessimistic PLD has total
/// mass 1, so the deficit is `Σ m·(1 − e^{−ℓ}) + rem.inf` (terms of size `|ℓ|·m`, no
/// cancellation against 1). Each term is within `rem.slack` relative (the construction's
/// per-mass bound) plus `(4 + |ℓ|)·u` (the loss `i·h`, `expm1`, the product), and the
/// compensated sum within `2u` of the sum of their moduli. For the tilted composition
/// (`tilt.rs`), where a per-step absolute error would be multiplied by 10⁵ steps.
pub(crate) fn mirror_deficit_upper(rem: &Pmf, h: f64) -> f64 {
    const U: f64 = f64::EPSILON / 2.0;
    let mut s = dpinfer_math::NeumaierSum::new();
    s.add(rem.inf);
    let (mut moduli, mut max_l) = (rem.inf, 0.0f64);
    for (i, &m) in (0i64..).zip(&rem.probs) {
        #[allow(clippy::cast_precision_loss)]
        let l = (rem.offset + i) as f64 * h;
        let t = m * -libm::expm1(-l);
        s.add(t);
        moduli += libm::fabs(t);
        max_l = max_l.max(libm::fabs(l));
    }
    let r = rem.slack / (1.0 - rem.slack) + (8.0 + max_l) * U;
    (s.sum().max(0.0) + r * moduli * (1.0 + 4.0 * U)) * (1.0 + 4.0 * U)
}

/// The symmetric PLD for sampling without replacement at ratio `γ < 1` (see
/// `Component::without_replacement`): the pessimistic connect-the-dots atoms of the remove
/// pair `(γP + (1−γ)Q, Q)` at the grid losses `l ≥ h` (they depend only on its privacy
/// profile on `[0, ∞)`), their mirror images `P(−l) = e^{−l}·P(l)` (symmetry), the mass
/// at `+∞`, and the rest at loss 0 (non-negative by convexity of the profile at 0).
pub(crate) fn discretise_wor(
    mechanism: Mechanism,
    gamma: f64,
    h: f64,
    tail: f64,
) -> Result<Pmf, AccountantError> {
    symmetrise(
        &discretise(mechanism, gamma, Direction::Remove, h, tail)?,
        h,
    )
}

/// The symmetric PLD whose privacy profile on `ε ≥ 0` is that of the remove-direction PLD
/// `rem` on the grid `h·ℤ` (see [`discretise_wor`]): its atoms at losses `l ≥ h`, their mirror images
/// `e^{−l}·P(l)` at `−l`, its mass at `+∞`, and the rest at loss 0 (non-negative by
/// convexity of the profile at 0). `rem`'s atoms at losses ≤ 0 do not enter.
///
/// # Errors
/// [`AccountantError::NumericalFailure`] if `rem`'s grid does not contain loss 0 or the
/// rest is negative beyond round-off.
pub(crate) fn symmetrise(rem: &Pmf, h: f64) -> Result<Pmf, AccountantError> {
    let top = rem.offset + i64::try_from(rem.probs.len()).unwrap_or(i64::MAX) - 1;
    if rem.offset > 0 || top < 0 {
        return Err(AccountantError::NumericalFailure {
            what: "without-replacement pld grid",
        });
    }
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
    let k = top as usize;
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
    let shift = (-rem.offset) as usize;
    let mut probs = alloc::vec![0.0; 2 * k + 1];
    let mut used = dpinfer_math::NeumaierSum::new();
    used.add(rem.inf);
    for i in 1..=k {
        let m = rem.probs[shift + i];
        #[allow(clippy::cast_precision_loss)]
        let mirror = m * libm::exp(-(i as f64) * h);
        probs[k + i] = m;
        probs[k - i] = mirror;
        used.add(m);
        used.add(mirror);
    }
    let zero = 1.0 - used.sum();
    if zero < -1e-12 {
        return Err(AccountantError::NumericalFailure {
            what: "without-replacement pld lost mass",
        });
    }
    probs[k] = zero.max(0.0);
    #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
    let offset = -(k as i64);
    Ok(Pmf {
        offset,
        probs,
        inf: rem.inf,
        slack: rem.slack,
    })
}

/// The value grid of a discretised loss on `[l_min, l_max]` with interval `h`: the first grid
/// index `i0 = ⌊l_min/h⌋` (as `f64` and as the PMF's offset) and the number of cells `k ≥ 1`
/// up to `⌈l_max/h⌉`. A grid longer than `MAX_GRID` cells or with non-finite ends is refused.
pub(crate) fn grid(l_min: f64, l_max: f64, h: f64) -> Result<(f64, usize, i64), AccountantError> {
    let i0 = libm::floor(l_min / h);
    let mut ik = libm::ceil(l_max / h);
    if ik <= i0 {
        ik = i0 + 1.0;
    }
    #[allow(clippy::cast_precision_loss)]
    if !(i0.is_finite() && ik.is_finite()) || ik - i0 > MAX_GRID as f64 || i0.abs() > 1e15 {
        return Err(AccountantError::NumericalFailure {
            what: GRID_TOO_WIDE,
        });
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let k = (ik - i0) as usize;
    #[allow(clippy::cast_possible_truncation)]
    let offset = i0 as i64;
    Ok((i0, k, offset))
}
