//! The truncated Poisson-subsampled Gaussian (`dp_accounting`'s
//! `TruncatedSubsampledGaussianDpEvent`, arXiv 2508.15089): each of the `n` records is
//! sampled with probability `q`, a sample larger than `B` is cut down to a uniformly random
//! `B` of its records, and the Gaussian mechanism (noise σ, ℓ₂ sensitivity Δ) runs on it.
//!
//! Its PLD is the mixture (`dp_accounting`'s `from_truncated_subsampled_gaussian_mechanism`,
//! the analysis of that paper): with weight `1 − t` the Poisson-subsampled Gaussian pair
//! `(q, Δ/σ)` of [`super::base::discretise`], with weight `t` the **replace-one**
//! Poisson-subsampled pair of [`discretise_replace`] with means `∓2Δ` about the centre
//! (truncation turns an added record into a swapped one, sensitivity `2Δ`, analysed as
//! `dp_accounting` does under its replace convention; standardised shift `a = 2Δ/σ`) and
//! rate `q'`, where
//! `t = P(Bin(n − 1, q) ≥ B)` is the probability of truncation given that the record is
//! sampled and `q' = P(Bin(n, q) ≥ B + 1)·B/(t·n)` the probability that the record is in the
//! truncated batch given truncation. The mixture is formed on the discretised PLDs
//! ([`super::base::Pmf::mix`]); the binomial tails carry an error bound that is added to
//! the PLD's per-step allowance (for `t`) or rounds `q'` up (a larger rate dominates).

use alloc::vec::Vec;

use dpinfer_math::{NeumaierSum, ln_binomial_int, norm_cdf};

use super::base::{Pmf, expm1_fast, gl4_pieces, grid};
use crate::AccountantError;

/// `ln √(2π)`.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_7;

/// Largest dataset size (every count below 2⁵³ is an exact `f64`).
pub(crate) const MAX_POPULATION: u64 = 1 << 53;

/// Most binomial terms one tail sums (≈ 10 standard deviations of `Bin(2⁴⁴, ½)`).
const MAX_TERMS: u64 = 1 << 24;

/// `P(Bin(n, p) ≥ k)` and a bound on its absolute error, for `0 < p < 1`, `n ≤ 2⁵³`.
///
/// The terms are summed from `k` away from the mode (upper tail if `k` is above the mean,
/// else `1 −` the lower tail below `k`), each from `ln C(n, j) + j ln p + (n − j) ln(1 − p)`
/// ([`ln_binomial_int`], full relative accuracy), until the geometric bound on the rest
/// (ratios fall monotonically away from the mode) is below `10⁻²⁰` of the sum. Each term's
/// relative error is at most `8u·(|ln C| + |j ln p| + |(n − j) ln(1 − p)| + 1)` (the exponent's
/// absolute error), which with the compensated sum's and the cut rest's gives the bound.
///
/// # Errors
/// [`AccountantError::NumericalFailure`] beyond [`MAX_TERMS`] terms.
pub(crate) fn binomial_sf(n: u64, p: f64, k: u64) -> Result<(f64, f64), AccountantError> {
    if k == 0 {
        return Ok((1.0, 0.0));
    }
    if k > n {
        return Ok((0.0, 0.0));
    }
    #[allow(clippy::cast_precision_loss)]
    let (nf, kf) = (n as f64, k as f64);
    let (lp, lq) = (libm::log(p), libm::log1p(-p));
    let u = f64::EPSILON;
    let term = |j: u64| {
        #[allow(clippy::cast_precision_loss)]
        let (jf, rf) = (j as f64, (n - j) as f64);
        let c = ln_binomial_int(n, j);
        let (a, b) = (jf * lp, rf * lq);
        let t = libm::exp(c + a + b);
        let rel = 8.0 * u * (c.abs() + a.abs() + b.abs() + 1.0);
        (t, rel)
    };
    let mut sum = NeumaierSum::new();
    let mut worst_rel = 0.0_f64;
    let upper = kf > nf * p;
    let mut j = if upper { k } else { k - 1 };
    let mut count = 0_u64;
    loop {
        let (t, rel) = term(j);
        sum.add(t);
        worst_rel = worst_rel.max(rel);
        count += 1;
        if count > MAX_TERMS {
            return Err(AccountantError::NumericalFailure {
                what: "binomial tail too long",
            });
        }
        // The ratio of the next term to this one (moving away from the mode), ≤ 1 and
        // falling: the rest is at most t·r/(1 − r).
        #[allow(clippy::cast_precision_loss)]
        let (jf, done) = (j as f64, if upper { j == n } else { j == 0 });
        if done {
            break;
        }
        let r = if upper {
            (nf - jf) / (jf + 1.0) * p / (1.0 - p)
        } else {
            jf / (nf - jf + 1.0) * (1.0 - p) / p
        };
        if r < 1.0 && t * r / (1.0 - r) <= 1e-20 * sum.sum() {
            break;
        }
        j = if upper { j + 1 } else { j - 1 };
    }
    let s = sum.sum();
    // Relative: the terms' own errors, the compensated sum's, and the cut rest (≤ 10⁻²⁰·s).
    let err = s * (worst_rel * (1.0 + 1e-6) + 4.0 * u) + 1e-20 * s;
    if upper {
        Ok((s, err))
    } else {
        Ok(((1.0 - s).max(0.0), err + u))
    }
}

/// The mixture weights of one truncated step: `t` (truncation given the record is sampled)
/// with its absolute error bound, and `q'` (rounded up, ≤ 1).
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) struct Truncation {
    /// `t = P(Bin(n − 1, q) ≥ B) ∈ (0, 1]`.
    pub(crate) t: f64,
    /// A bound on `|t − t_computed|`.
    pub(crate) t_err: f64,
    /// `q' = P(Bin(n, q) ≥ B + 1)·B/(t·n)`, rounded up, in `(0, 1]`.
    pub(crate) q2: f64,
}

impl Truncation {
    /// The weights for `n` records, rate `q ∈ (0, 1]`, batch cap `B ≥ 1`; `None` when the
    /// batch can never be truncated (`t = 0`: the plain Poisson-subsampled Gaussian).
    ///
    /// # Errors
    /// [`AccountantError::NumericalFailure`] if a binomial tail is too long to sum.
    pub(crate) fn new(
        population: u64,
        q: f64,
        batch: u64,
    ) -> Result<Option<Self>, AccountantError> {
        if batch >= population {
            return Ok(None);
        }
        if q >= 1.0 {
            // Every record is sampled: the batch is always cut, and the record kept with
            // probability B/n.
            #[allow(clippy::cast_precision_loss)]
            let q2 = (batch as f64 / population as f64).next_up().min(1.0);
            return Ok(Some(Self {
                t: 1.0,
                t_err: 0.0,
                q2,
            }));
        }
        let (t, t_err) = binomial_sf(population - 1, q, batch)?;
        if t <= 0.0 {
            return Ok(None);
        }
        let (s, s_err) = binomial_sf(population, q, batch + 1)?;
        #[allow(clippy::cast_precision_loss)]
        let ratio = batch as f64 / population as f64;
        let q2 = (s + s_err) * ratio / (t - t_err).max(f64::MIN_POSITIVE);
        // Four roundings of the quotient, up.
        let q2 = (q2 * (1.0 + 8.0 * f64::EPSILON)).min(1.0);
        if !(q2 > 0.0 && t.is_finite() && t_err.is_finite()) {
            return Err(AccountantError::NumericalFailure {
                what: "truncated batch probabilities",
            });
        }
        Ok(Some(Self {
            t: t.min(1.0),
            t_err,
            q2,
        }))
    }
}

/// The replace-one Poisson-subsampled Gaussian pair in standardised units, rate `w`,
/// shift `a`: `P = (1 − w)N(0, 1) + wN(−a, 1)` against `Q = (1 − w)N(0, 1) + wN(a, 1)`
/// (`dp_accounting`'s `REPLACE` adjacency with sampling). Symmetric; loss
/// `L(z) = G(−z) − G(z)`, `G(z) = ln(1 − w + w·e^{az − a²/2})`, strictly decreasing.
#[derive(Copy, Clone, Debug)]
struct ReplacePair {
    a: f64,
    w: f64,
}

impl ReplacePair {
    /// `G(z)` and `G'(z)/a ∈ (0, 1)` (one `exp` and one `log1p`; `e^u − 1` by a series for
    /// `|u| < 1/32`, else from `e^u`, within 32 ulp relative).
    #[inline]
    fn g(&self, z: f64) -> (f64, f64) {
        let u = self.a * z - 0.5 * self.a * self.a;
        if self.w >= 1.0 {
            return (u, 1.0);
        }
        // ln(1 − w + w e^u) without overflow, and s = w e^u/(1 − w + w e^u).
        if u > 30.0 {
            let r = (1.0 - self.w) * libm::exp(-u) / self.w;
            (u + libm::log(self.w) + libm::log1p(r), 1.0 / (1.0 + r))
        } else {
            let (e, em1) = if u.abs() < 0.031_25 {
                let m = expm1_fast(u);
                (1.0 + m, m)
            } else {
                let e = libm::exp(u);
                (e, e - 1.0)
            };
            let x = self.w * em1;
            (libm::log1p(x), self.w * e / (1.0 + x))
        }
    }

    /// `L(z)`, `L'(z) < 0` and `G(z)` (for [`ReplacePair::ln_q`]).
    #[inline]
    fn loss_g(&self, z: f64) -> (f64, f64, f64) {
        let (gm, sm) = self.g(-z);
        let (gp, sp) = self.g(z);
        (gm - gp, -self.a * (sm + sp), gp)
    }

    /// `L(z)` and `L'(z) < 0`.
    fn loss(&self, z: f64) -> (f64, f64) {
        let (l, d, _) = self.loss_g(z);
        (l, d)
    }

    /// `ln q(z)`, the density of `Q`, from `G(z)`.
    #[inline]
    fn ln_q(z: f64, g: f64) -> f64 {
        -0.5 * z * z - LN_SQRT_2PI + g
    }

    /// `P(Z > z)`.
    fn p_gt(&self, z: f64) -> f64 {
        (1.0 - self.w) * norm_cdf(-z) + self.w * norm_cdf(-z - self.a)
    }

    /// `P(Z < z)`.
    fn p_lt(&self, z: f64) -> f64 {
        (1.0 - self.w) * norm_cdf(z) + self.w * norm_cdf(z + self.a)
    }

    /// The `z` with `L(z) = t`: Newton steps from `hint` while they converge (L is smooth and
    /// strictly decreasing), else from a bracket grown around it, Newton guarded by bisection
    /// (to a few ulp).
    fn inverse(&self, t: f64, hint: f64) -> f64 {
        if hint.is_finite() {
            let mut z = hint;
            for _ in 0..8 {
                let (l, d) = self.loss(z);
                let next = z - (l - t) / d;
                if !(next.is_finite() && d < 0.0) {
                    break;
                }
                if (next - z).abs() <= 4.0 * f64::EPSILON * (1.0 + z.abs()) {
                    return next;
                }
                z = next;
            }
        }
        let h0 = if hint.is_finite() { hint } else { 0.0 };
        let (mut lo, mut hi) = (h0 - 0.5, h0 + 0.5);
        // L decreasing: L(lo) ≥ t ≥ L(hi).
        while self.loss(lo).0 < t {
            lo -= 2.0 * (hi - lo);
        }
        while self.loss(hi).0 > t {
            hi += 2.0 * (hi - lo);
        }
        let mut z = 0.5 * (lo + hi);
        for _ in 0..200 {
            let (l, d) = self.loss(z);
            if l > t {
                lo = z;
            } else {
                hi = z;
            }
            let mut next = z - (l - t) / d;
            if !(next > lo && next < hi) || d >= 0.0 {
                next = 0.5 * (lo + hi);
            }
            if (next - z).abs() <= 4.0 * f64::EPSILON * (1.0 + z.abs())
                || hi - lo <= 4.0 * f64::EPSILON * (1.0 + z.abs())
            {
                return next;
            }
            z = next;
        }
        z
    }
}

/// The pessimistic connect-the-dots PLD (Doroshenko et al. 2022, Alg. 1, as
/// [`super::mixture::discretise`]) of the replace-one Poisson-subsampled Gaussian pair with
/// standardised shift `a > 0` and rate `w ∈ (0, 1]` on the grid `h·ℤ` (one direction: the
/// pair is symmetric). Grid points `ε_0 < … < ε_k` cover the loss over `z ∈ [−a − Z, a + Z]`,
/// `Φ(−Z) = tail`; `P`'s mass at losses ≤ `ε_0` goes to `ε_0`, above `ε_k` to `+∞`; each
/// interval `(ε_{j−1}, ε_j]` (a `z`-interval `[z_j, z_{j−1})`) gives `B_j/(1 − e^{−h})` to
/// `ε_j` and `A_j/(e^h − 1)` to `ε_{j−1}`, `B_j = ∫(e^L − e^{ε_{j−1}}) dQ ≥ 0`,
/// `A_j = ∫(e^{ε_j} − e^L) dQ ≥ 0` (composite Gauss–Legendre over `z`).
pub(crate) fn discretise_replace(
    a: f64,
    w: f64,
    h: f64,
    tail: f64,
) -> Result<Pmf, AccountantError> {
    let pair = ReplacePair { a, w };
    let big_z = -dpinfer_math::norm_quantile(tail);
    let (z_lo, z_hi) = (-a - big_z, a + big_z);
    let (l_min, l_max) = (pair.loss(z_hi).0, pair.loss(z_lo).0);
    let (i0, k, offset) = grid(l_min, l_max, h)?;
    #[allow(clippy::cast_precision_loss)]
    let eps_at = |j: usize| (i0 + j as f64) * h;
    let mut zs: Vec<f64> = Vec::with_capacity(k + 1);
    let mut z = pair.inverse(eps_at(0), z_hi);
    zs.push(z);
    for j in 1..=k {
        // First-order predictor from the previous root (L' < 0).
        let d = pair.loss(z).1;
        let guess = z + h / d;
        z = pair.inverse(eps_at(j), if guess.is_finite() { guess } else { z });
        zs.push(z);
    }
    let em1h = libm::expm1(h);
    let one_m = -libm::expm1(-h);
    let eh = libm::exp(h);
    let mut mu = alloc::vec![0.0; k + 1];
    for j in 1..=k {
        let (ea, eb) = (eps_at(j - 1), eps_at(j));
        let (za, zb) = (zs[j], zs[j - 1]);
        if za >= zb || za.is_nan() || zb.is_nan() {
            continue;
        }
        let (mut qb, mut qa) = (0.0, 0.0);
        let half_w = gl4_pieces(za, zb - za, |z, weight| {
            let (l, _, g) = pair.loss_g(z);
            // e^{ε_a}·q(z), and e^{ε_b}·q(z) = e^h·e^{ε_a}·q(z); L − ε_a, L − ε_b ∈ [−h, h]
            // inside the interval (series exp-minus-one).
            let base = weight * libm::exp(ReplacePair::ln_q(z, g) + ea);
            qb += base * expm1_fast(l - ea).max(0.0);
            qa += base * eh * (-expm1_fast(l - eb)).max(0.0);
        });
        mu[j] += half_w * qb / one_m;
        mu[j - 1] += half_w * qa / em1h;
    }
    mu[0] += pair.p_gt(zs[0]);
    let inf = pair.p_lt(zs[k]);
    Pmf::from_masses(offset, mu, inf)
}

/// The pessimistic PLD of one truncated step in `direction`: the mixture `(1 − t)·`(the
/// Poisson-subsampled Gaussian of PLD mean `mu` at rate `q`) `+ t·`(the replace-one pair of
/// shift `2√(2μ)` at rate `q'`), both on the grid `h·ℤ`; the error bound of `t` is added to
/// the allowance (changing a weight by `e` moves the PLD by at most `2e` in total variation).
/// The replace-one branch is symmetric: `swapped` caches it for the other direction.
///
/// # Errors
/// As [`super::base::discretise`] and [`Pmf::mix`].
pub(crate) fn discretise(
    mu: f64,
    q: f64,
    tr: Truncation,
    direction: super::Direction,
    h: f64,
    tail: f64,
    swapped: &mut Option<Pmf>,
) -> Result<Pmf, AccountantError> {
    let plain = super::base::discretise(super::Mechanism::Gaussian { mu }, q, direction, h, tail)?;
    if swapped.is_none() {
        *swapped = Some(discretise_replace(
            2.0 * libm::sqrt(2.0 * mu),
            tr.q2,
            h,
            tail,
        )?);
    }
    let Some(rep) = swapped.as_ref() else {
        return Err(AccountantError::NumericalFailure {
            what: "truncated pld branch",
        });
    };
    let mut out = Pmf::mix(&[(rep, tr.t), (&plain, 1.0 - tr.t)])?;
    out.slack += 2.0 * tr.t_err;
    Ok(out)
}
