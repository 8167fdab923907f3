//! The mixture-of-Gaussians pair (`dp_accounting`'s `MixtureOfGaussiansDpEvent`;
//! Choquette-Choo, Ganesh, Steinke, Thakurta, "Privacy amplification for matrix mechanisms",
//! ICLR 2024, arXiv 2310.15526): `P = Σᵢ pᵢ N(cᵢ, σ²)` against `Q = N(0, σ²)`, cᵢ ≥ 0.
//!
//! In the standardised coordinate `z = x/σ` (`aᵢ = cᵢ/σ`) the privacy loss of the remove
//! pair `(P, Q)` is `ℓ(z) = ln Σᵢ pᵢ e^{aᵢz − aᵢ²/2}`, convex and strictly increasing (its
//! derivative is a posterior mean of the aᵢ, > 0 when some aᵢ > 0); the add pair `(Q, P)`
//! has loss `−ℓ(z)`. The pair is not symmetric (unlike [`super::base`]'s), so each direction
//! is discretised on its own, with the same pessimistic connect-the-dots masses
//! (Doroshenko et al. 2022, Alg. 1) as [`super::base::discretise`], from integrals over
//! `z` of non-negative integrands (composite Gauss–Legendre, no second differences).

use alloc::vec::Vec;

use dpinfer_math::norm_cdf;

use super::Direction;
use super::base::{Pmf, gl4_pieces, grid};
use crate::AccountantError;
use crate::event::{MAX_MIXTURE_ATOMS, check_mixture};

/// `ln √(2π)`.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_7;

/// A mixture's support in standardised units: `aᵢ = cᵢ/σ ≥ 0` (ascending) with weights
/// `pᵢ > 0` summing to 1, at most [`crate::MAX_MIXTURE_ATOMS`] of them, some `aᵢ > 0`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct MixtureAtoms {
    len: usize,
    a: [f64; MAX_MIXTURE_ATOMS],
    ln_p: [f64; MAX_MIXTURE_ATOMS],
}

impl MixtureAtoms {
    /// From sensitivities `c` and probabilities `p` with noise σ: zero-probability points
    /// are dropped, equal sensitivities merged, the weights normalised.
    ///
    /// # Errors
    /// As [`crate::Event::MixtureOfGaussians`]' validation
    /// ([`AccountantError::InvalidParameter`]).
    pub fn new(sigma: f64, c: &[f64], p: &[f64]) -> Result<Self, AccountantError> {
        check_mixture(sigma, c, p)?;
        let mut out = Self {
            len: 0,
            a: [0.0; MAX_MIXTURE_ATOMS],
            ln_p: [f64::NEG_INFINITY; MAX_MIXTURE_ATOMS],
        };
        let mut w = [0.0; MAX_MIXTURE_ATOMS];
        let mut total = 0.0;
        for (&ci, &pi) in c.iter().zip(p) {
            let ci = ci + 0.0; // −0 → +0, so that both merge
            if pi > 0.0 {
                total += pi;
                if let Some(i) = out.a[..out.len]
                    .iter()
                    .position(|&x| x.total_cmp(&ci).is_eq())
                {
                    w[i] += pi;
                } else {
                    out.a[out.len] = ci;
                    w[out.len] = pi;
                    out.len += 1;
                }
            }
        }
        // Ascending sensitivities (insertion sort; at most 16 points).
        for i in 1..out.len {
            let mut j = i;
            while j > 0 && out.a[j - 1] > out.a[j] {
                out.a.swap(j - 1, j);
                w.swap(j - 1, j);
                j -= 1;
            }
        }
        for ((a, lp), wi) in out.a.iter_mut().zip(&mut out.ln_p).zip(w).take(out.len) {
            *a /= sigma;
            *lp = libm::log(wi / total);
        }
        Ok(out)
    }

    fn atoms(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.a[..self.len]
            .iter()
            .copied()
            .zip(self.ln_p[..self.len].iter().copied())
    }

    /// The largest `aᵢ`.
    fn a_max(&self) -> f64 {
        self.a[self.len - 1]
    }

    /// `ln p₀` of the point `a = 0` (−∞ if there is none): the infimum of `ℓ`.
    fn ln_p0(&self) -> f64 {
        if self.a[0] == 0.0 {
            self.ln_p[0]
        } else {
            f64::NEG_INFINITY
        }
    }

    /// The loss range `(ℓ(−Z), ℓ(a_max + Z))`, `Φ(−Z) = tail`: outside it `P` and `Q` have
    /// mass ≤ `tail` each.
    pub(crate) fn loss_range(&self, tail: f64) -> (f64, f64) {
        let big_z = -dpinfer_math::norm_quantile(tail);
        (self.loss(-big_z).0, self.loss(self.a_max() + big_z).0)
    }

    /// `ℓ(z) = ln Σ pᵢ e^{aᵢz − aᵢ²/2}` and `ℓ'(z)` (the posterior mean of `a`).
    fn loss(&self, z: f64) -> (f64, f64) {
        let m = self
            .atoms()
            .map(|(a, lp)| lp + a * z - 0.5 * a * a)
            .fold(f64::NEG_INFINITY, f64::max);
        let (mut s, mut sa) = (0.0, 0.0);
        for (a, lp) in self.atoms() {
            let w = libm::exp(lp + a * z - 0.5 * a * a - m);
            s += w;
            sa += w * a;
        }
        (m + libm::log(s), sa / s)
    }

    /// `P(Z ≤ z) = Σ pᵢ Φ(z − aᵢ)`.
    pub(crate) fn p_le(&self, z: f64) -> f64 {
        self.atoms()
            .map(|(a, lp)| libm::exp(lp) * norm_cdf(z - a))
            .sum()
    }

    /// `P(Z > z) = Σ pᵢ Φ(aᵢ − z)`.
    pub(crate) fn p_gt(&self, z: f64) -> f64 {
        self.atoms()
            .map(|(a, lp)| libm::exp(lp) * norm_cdf(a - z))
            .sum()
    }

    /// [`MixtureAtoms::inverse`] started from `z0` (a neighbouring root): a Newton step from
    /// any point of a convex increasing `ℓ` lands right of the root, and the iterates then
    /// decrease to it; falls back to the bracketed search if that does not settle.
    pub(crate) fn inverse_from(&self, t: f64, z0: f64) -> f64 {
        if t <= self.ln_p0() {
            return f64::NEG_INFINITY;
        }
        if !z0.is_finite() {
            return self.inverse(t);
        }
        let mut z = z0;
        for _ in 0..64 {
            let (l, d) = self.loss(z);
            if !(d > 0.0 && l.is_finite()) {
                break;
            }
            let next = z - (l - t) / d;
            if !next.is_finite() {
                break;
            }
            if (next - z).abs() <= 4.0 * f64::EPSILON * (1.0 + z.abs()) {
                return next;
            }
            z = next;
        }
        self.inverse(t)
    }

    /// The `z` with `ℓ(z) = t` (`−∞` for `t ≤ inf ℓ`), by bracketed Newton steps (ℓ is
    /// convex and increasing), to a few ulp.
    pub(crate) fn inverse(&self, t: f64) -> f64 {
        if t <= self.ln_p0() {
            return f64::NEG_INFINITY;
        }
        let amax = self.a_max();
        // ℓ(z) ≥ ln p_max + a_max z − a_max²/2 gives an upper bracket; step down for a lower.
        let lp_max = self.ln_p[self.len - 1];
        let mut hi = (t - lp_max) / amax + 0.5 * amax;
        while self.loss(hi).0 < t {
            hi += 1.0 + hi.abs();
        }
        let mut lo = hi - 1.0;
        while self.loss(lo).0 > t {
            lo -= 2.0 * (hi - lo);
            if lo < -1e300 {
                return f64::NEG_INFINITY;
            }
        }
        // Newton from the right stays to the right of the root for a convex increasing ℓ;
        // bisection guards the rest.
        let mut z = hi;
        for _ in 0..200 {
            let (l, d) = self.loss(z);
            if l > t {
                hi = z;
            } else {
                lo = z;
            }
            let mut next = z - (l - t) / d;
            if !(next > lo && next < hi) || d <= 0.0 {
                next = 0.5 * (lo + hi);
            }
            // Converged to a few ulp (Newton may then alternate between neighbours).
            if (next - z).abs() <= 4.0 * f64::EPSILON * (1.0 + z.abs())
                || hi - lo <= 4.0 * f64::EPSILON * (1.0 + z.abs())
            {
                z = next;
                break;
            }
            z = next;
        }
        z
    }
}

/// `ln` of the density of `Q = N(0, 1)` at `z`.
fn ln_q(z: f64) -> f64 {
    -0.5 * z * z - LN_SQRT_2PI
}

/// The pessimistic connect-the-dots PLD of the mixture pair in `direction` on the grid
/// `h·ℤ`: remove `(P, Q)` with loss `ℓ(z)`, add `(Q, P)` with loss `−ℓ(z)`. Grid points
/// `ε_0 < … < ε_k` cover the loss over `z ∈ [−Z, a_max + Z]`, `Φ(−Z) = tail` (outside it both
/// laws have mass ≤ `tail`); the upper law's mass at losses ≤ `ε_0` is put at `ε_0`, its mass
/// above `ε_k` at `+∞` (both pessimistic), and each interval `(ε_{j−1}, ε_j]` contributes
/// `B_j/(1 − e^{−h})` to `ε_j` and `A_j/(e^h − 1)` to `ε_{j−1}`, with
/// `B_j = ∫ (e^L − e^{ε_{j−1}}) dV ≥ 0` and `A_j = ∫ (e^{ε_j} − e^L) dV ≥ 0` over the
/// interval (V the reference law), as in [`super::base::discretise`].
pub(crate) fn discretise(
    m: &MixtureAtoms,
    direction: Direction,
    h: f64,
    tail: f64,
) -> Result<Pmf, AccountantError> {
    let big_z = -dpinfer_math::norm_quantile(tail);
    let (z_lo, z_hi) = (-big_z, m.a_max() + big_z);
    let (l_lo, l_hi) = (m.loss(z_lo).0, m.loss(z_hi).0);
    let sign = match direction {
        Direction::Remove => 1.0,
        Direction::Add => -1.0,
    };
    let (l_min, l_max) = match direction {
        Direction::Remove => (l_lo, l_hi),
        Direction::Add => (-l_hi, -l_lo),
    };
    let (i0, k, offset) = grid(l_min, l_max, h)?;
    #[allow(clippy::cast_precision_loss)]
    let eps_at = |j: usize| (i0 + j as f64) * h;
    // z-threshold of grid point j: remove ℓ(z) = ε_j; add ℓ(z) = −ε_j (z decreases in j).
    let mut zs: Vec<f64> = Vec::with_capacity(k + 1);
    let mut z_prev = f64::NEG_INFINITY;
    for j in 0..=k {
        z_prev = m.inverse_from(sign * eps_at(j), z_prev);
        zs.push(z_prev);
    }
    // ln of the reference density at z: remove Q; add P = Q·e^{ℓ}.
    let ln_v = |z: f64, l: f64| match direction {
        Direction::Remove => ln_q(z),
        Direction::Add => ln_q(z) + l,
    };
    let em1h = libm::expm1(h);
    let one_m = -libm::expm1(-h);
    let mut mu = alloc::vec![0.0; k + 1];
    for j in 1..=k {
        let (ea, eb) = (eps_at(j - 1), eps_at(j));
        // The z-interval of losses in (ε_{j−1}, ε_j].
        let (za, zb) = match direction {
            Direction::Remove => (zs[j - 1], zs[j]),
            Direction::Add => (zs[j], zs[j - 1]),
        };
        if za >= zb || za.is_nan() || zb.is_nan() {
            continue;
        }
        let (mut b, mut a) = (0.0, 0.0);
        // Below z_cut (only reached when za = −∞): closed forms; the integrands are
        // non-negative there too, so a difference that rounds below 0 is clamped at 0
        // (|error| ≤ 10⁻¹⁶ of a mass ≤ Φ(z_cut), far below CONSTRUCTION_SLACK).
        let mut start = za;
        if za == f64::NEG_INFINITY {
            let z_cut = zb.min(z_lo - 1.0);
            let (u_m, v_m) = match direction {
                Direction::Remove => (m.p_le(z_cut), norm_cdf(z_cut)),
                Direction::Add => (norm_cdf(z_cut), m.p_le(z_cut)),
            };
            b += (u_m - libm::exp(ea) * v_m).max(0.0);
            a += (libm::exp(eb) * v_m - u_m).max(0.0);
            start = z_cut;
        }
        if start < zb {
            let (mut qb, mut qa) = (0.0, 0.0);
            let half_w = gl4_pieces(start, zb - start, |z, weight| {
                let l = m.loss(z).0;
                let lv = ln_v(z, l);
                let big_l = sign * l;
                // e^{ε_a}(e^{L − ε_a} − 1) and e^{ε_b}(1 − e^{L − ε_b}), both ≥ 0 inside.
                qb += weight * libm::exp(lv + ea) * libm::expm1(big_l - ea).max(0.0);
                qa += weight * libm::exp(lv + eb) * (-libm::expm1(big_l - eb)).max(0.0);
            });
            b += half_w * qb;
            a += half_w * qa;
        }
        mu[j] += b / one_m;
        mu[j - 1] += a / em1h;
    }
    let (below, above) = match direction {
        Direction::Remove => (
            if zs[0] == f64::NEG_INFINITY {
                0.0
            } else {
                m.p_le(zs[0])
            },
            m.p_gt(zs[k]),
        ),
        Direction::Add => (
            if zs[0] == f64::NEG_INFINITY {
                1.0
            } else {
                norm_cdf(-zs[0])
            },
            if zs[k] == f64::NEG_INFINITY {
                0.0
            } else {
                norm_cdf(zs[k])
            },
        ),
    };
    mu[0] += below;
    let inf = above;
    Pmf::from_masses(offset, mu, inf)
}
