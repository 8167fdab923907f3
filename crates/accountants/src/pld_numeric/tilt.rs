//! Exponentially tilted composition, for a δ below the FFT's absolute round-off (issue 30).
//!
//! The FFT composition's round-off and per-step allowances are **absolute**: about
//! `steps·10⁻¹⁴`, plus `steps·u` per low-frequency bin. After 10⁵ steps at q = 10⁻⁶ they are
//! ≈ 2·10⁻⁹, more than a requested δ = 10⁻¹⁰ (`DeltaTooSmall`). Tilting each step's masses by
//! `e^{λi}` (grid index `i`, `λ > 0`) and normalising,
//! `p̂_i = p_i e^{λi}/M`, composes to `ŷ_k = x_k e^{λk}/Π M^n` (the composed masses `x_k`
//! tilted): the composition of the tilted steps is carried out by the same FFT (with its
//! absolute error `E` on `ŷ`), and untilting multiplies the error at index `k` by
//! `F_k = Π M^n·e^{−λk}`, which decreases in `k`. δ(ε) only weighs indices above ε, so its
//! error is at most `F_{k₀}·E` — and with `λ` the Chernoff order for the requested δ,
//! `F_{k₀}` is of the order of δ itself: the allowance becomes **relative** to δ
//! (≈ 10⁻⁸·δ) instead of absolute.
//!
//! Soundness, in order:
//! * each step's discretised masses are within `r` **relative** of the exact pessimistic PLD's
//!   (the construction claim of `base::discretise`: cancellation-free integrals, `r` its
//!   per-step allowance, ≥ 10⁻¹⁴), and the tilt factors add `(|λd| + 5)·u` relative per mass
//!   (`d ≤ 0` the distance to the top index, an exact integer; the product, `exp`, the
//!   multiplication and the division). Masses are non-negative and composition multiplies
//!   them, so the exact composed masses are at most `Π (1 − r_g)^{−n_g}` times the
//!   composition of the computed ones: the factor `1 + rel` applied to δ's finite part;
//! * `M` is *defined* as `e^{λ·top}·S̃` with `S̃` the computed sum: whatever `S̃`'s rounding,
//!   the identity `x_k = ŷ_k·Π M^n·e^{−λk}` holds for the exact compositions; only the
//!   evaluation of the exponent `Σ n ln M − λk` is rounded (`exp_err`, bounded term by term);
//! * tilt factors below `e^{−690}` are flushed to 0; the flushed tilted mass (≤ `e^{−690}`
//!   per mass over `S̃`) is an ℓ₁ perturbation of the inputs, counted with the FFT error;
//! * the FFT composition of the tilted steps (inverse transform always) errs by at most `E`
//!   in any sum weighted by a unimodal sequence in `[0, 1)` (twice the weighted round-off
//!   bound of `compose`, which assumes non-decreasing weights); its window leaves
//!   at most `t` (the truncation) of tilted mass outside: the mass that wraps around only
//!   increases in-window masses, and the untilted mass above the window is at most
//!   `F_{k₀}·t`;
//! * the mass at `+∞` is not tilted: `1 − Π(1 − inf_g)^{n_g}` from per-step upper bounds
//!   (for a mirrored add direction from the remove PLD's atoms, `base::mirror_deficit_upper`,
//!   instead of the complement `1 − Σ`, which is exact only to a few ulp per step).
//!
//! Used only where the plain composition's allowances are a visible part of δ (see
//! `ComposedPld::epsilon`), and only for steps whose discretisation makes the relative claim
//! (Gaussian and Laplace, Poisson-subsampled or not); the smaller of the two answers is
//! reported (both are upper bounds).

use alloc::vec::Vec;

use dpinfer_math::NeumaierSum;

use super::base::Pmf;
use super::compose::{Composed, U, Workspace, chernoff_side, compose, index_variance, log_mgf};
use crate::{AccountantError, round_up};

/// Tilt exponents below this are flushed to 0 (no subnormal arithmetic; the mass is counted).
const FLUSH: f64 = -690.0;

/// One step of a tilted composition: its discretised PLD, count, relative per-mass error
/// bound and an upper bound of its mass at `+∞`.
#[derive(Clone, Debug)]
pub(crate) struct TiltPart {
    pub(crate) pmf: Pmf,
    pub(crate) count: u64,
    pub(crate) rel: f64,
    pub(crate) inf: f64,
    /// `inf` is not computed yet: the step is the mirror of the remove direction's step of
    /// the same index, and its mass at `+∞` is `base::mirror_deficit_upper` of that step
    /// (a pass over its grid that only a tilted composition needs; `ComposedPld::tilt_parts`).
    pub(crate) mirrored: bool,
}

/// A composition of tilted steps, untilted: finite masses at positive losses and the
/// allowances of its δ(ε) (see the module documentation).
#[derive(Clone, Debug)]
pub(crate) struct Tilted {
    /// Untilted composed masses at positive losses (allowance fields unused).
    comp: Composed,
    /// `Σ n_g ln M_g` (computed).
    lnm: f64,
    /// The tilt order, per grid index.
    lambda: f64,
    /// Bound on the absolute error of the computed `lnm`.
    lnm_err: f64,
    /// Relative error bound of each untilted mass (exponent evaluation).
    mass_rel: f64,
    /// ℓ₁ error of the tilted composition, plus its truncation and the flushed mass.
    err: f64,
    /// Exact ≤ `(1 + rel)`·computed (per-step relative errors).
    rel: f64,
    /// Mass at `+∞` (upper bound).
    inf: f64,
}

/// The Chernoff order (per grid index) that bounds the upper tail of the composition of
/// `parts` at probability `delta`: the tilt that makes `F_k` of the order of δ where the
/// composed tail is δ.
pub(crate) fn order_for_delta(parts: &[TiltPart], delta: f64) -> Option<f64> {
    let refs: Vec<(&Pmf, u64)> = parts.iter().map(|p| (&p.pmf, p.count)).collect();
    #[allow(clippy::cast_precision_loss)]
    let var: f64 = 1.0
        + parts
            .iter()
            .map(|p| p.count as f64 * index_variance(&p.pmf))
            .sum::<f64>();
    let ln_inv = -libm::log(delta);
    if !(ln_inv > 0.0 && ln_inv.is_finite()) {
        return None;
    }
    let centre = libm::sqrt(2.0 * ln_inv) / libm::sqrt(var);
    chernoff_side(&refs, centre, 1.0, ln_inv)
        .map(|(lam, _)| lam.min(MAX_ORDER))
        .filter(|l| *l > 0.0)
}

/// The order (per grid index) that minimises `F_k = Π M(λ)^n·e^{−λk}` at the index `k`
/// (the Chernoff bound of the composed tail at `k`; convex in `λ`): a walk by factors of 2
/// from `start`, then a golden section in `log λ`. Any `λ > 0` gives a valid composition;
/// this one makes the allowance smallest near `k`.
pub(crate) fn order_for_index(parts: &[TiltPart], k: f64, start: f64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    let g = |lam: f64| {
        let v = parts
            .iter()
            .map(|p| p.count as f64 * log_mgf(&p.pmf, lam))
            .sum::<f64>()
            - lam * k;
        if v.is_nan() { f64::INFINITY } else { v }
    };
    if !(start > 0.0 && start.is_finite() && k.is_finite()) {
        return None;
    }
    let start = start.min(MAX_ORDER);
    let (mut lam, mut val) = (start, g(start));
    for factor in [2.0, 0.5] {
        for _ in 0..60 {
            let next = (lam * factor).min(MAX_ORDER);
            let v = g(next);
            if v < val {
                lam = next;
                val = v;
            } else {
                break;
            }
        }
    }
    const INV_PHI: f64 = 0.618_033_988_749_894_9;
    let (mut a, mut b) = (
        libm::log(lam) - core::f64::consts::LN_2,
        libm::log(lam) + core::f64::consts::LN_2,
    );
    let mut c = b - INV_PHI * (b - a);
    let mut d = a + INV_PHI * (b - a);
    let (mut fc, mut fd) = (g(libm::exp(c)), g(libm::exp(d)));
    for _ in 0..30 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - INV_PHI * (b - a);
            fc = g(libm::exp(c));
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + INV_PHI * (b - a);
            fd = g(libm::exp(d));
        }
    }
    let best = if fc < val && fc <= fd {
        libm::exp(c)
    } else if fd < val {
        libm::exp(d)
    } else {
        lam
    };
    (best > 0.0 && best.is_finite()).then_some(best.min(MAX_ORDER))
}

/// Largest tilt order per grid index: beyond it the exponents' rounding (`u·λ·index·steps`)
/// would dominate, and `e^{−50}` per grid step already removes any mass above the
/// composition's support (a loss bounded above: its tail is empty).
const MAX_ORDER: f64 = 50.0;

impl Tilted {
    /// Composes `parts` tilted by `lambda > 0` (per grid index) on the grid `h`, with at
    /// most `truncation` of tilted mass outside the FFT window.
    ///
    /// # Errors
    /// [`AccountantError::NumericalFailure`] if a tilted step has no mass left or the
    /// composition fails (window too wide).
    pub(crate) fn new(
        parts: &[TiltPart],
        lambda: f64,
        h: f64,
        truncation: f64,
    ) -> Result<Self, AccountantError> {
        let fail = AccountantError::NumericalFailure { what: "pld tilt" };
        if !(lambda > 0.0 && lambda.is_finite()) || parts.is_empty() {
            return Err(fail);
        }
        let mut tilted: Vec<Pmf> = Vec::with_capacity(parts.len());
        let (mut lnm, mut lnm_err, mut flushed, mut rel_sum, mut ln_keep) =
            (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let mut max_total = 0.0f64;
        for part in parts {
            let p = &part.pmf;
            let len = i64::try_from(p.probs.len()).map_err(|_| fail)?;
            let top = p.offset + len - 1;
            let mut w = Vec::with_capacity(p.probs.len());
            let mut s = NeumaierSum::new();
            let (mut dropped, mut max_arg) = (0.0f64, 0.0f64);
            for (j, &m) in (0i64..).zip(&p.probs) {
                #[allow(clippy::cast_precision_loss)]
                let arg = lambda * ((p.offset + j - top) as f64);
                if arg < FLUSH {
                    dropped += m;
                    w.push(0.0);
                    continue;
                }
                max_arg = max_arg.max(-arg);
                let x = m * libm::exp(arg);
                s.add(x);
                w.push(x);
            }
            let sum = s.sum();
            if !(sum > 1e-280 && sum.is_finite()) {
                return Err(fail);
            }
            let mut total = 0.0;
            for x in &mut w {
                *x /= sum;
                total += *x;
            }
            max_total = max_total.max(total);
            #[allow(clippy::cast_precision_loss)]
            let n = part.count as f64;
            let r = part.rel + (max_arg + 5.0) * U;
            if r.is_nan() || r >= 1e-3 {
                return Err(fail);
            }
            rel_sum += n * r / (1.0 - r);
            #[allow(clippy::cast_precision_loss)]
            let lt = lambda * top as f64;
            let ls = libm::log(sum);
            let ln_m = lt + ls;
            // λ·top, ln S̃ (≤ 2 ulp) and their sum, then × n and the running sum.
            lnm_err += n * (libm::fabs(lt) + 2.0 * libm::fabs(ls) + libm::fabs(ln_m) + 1e-300) * U;
            lnm += n * ln_m;
            lnm_err += 2.0 * U * (libm::fabs(n * ln_m) + libm::fabs(lnm));
            flushed += n * dropped * libm::exp(FLUSH) / sum;
            ln_keep += n * libm::log1p(-part.inf);
            tilted.push(Pmf {
                offset: p.offset,
                probs: w,
                inf: 0.0,
                slack: 0.0,
            });
        }
        // The composed tilted totals (≤ Π total^n) scale the flushed mass's effect; the
        // tilted totals are 1 up to rounding, so a factor 2 covers them for any count.
        #[allow(clippy::cast_precision_loss)]
        let steps: f64 = parts.iter().map(|p| p.count as f64).sum();
        let growth = steps * libm::log(max_total.max(1.0));
        if growth.is_nan() || growth >= core::f64::consts::LN_2 {
            return Err(fail);
        }
        let refs: Vec<(&Pmf, u64)> = tilted
            .iter()
            .zip(parts)
            .map(|(t, p)| (t, p.count))
            .collect();
        let mut ws = Workspace::default();
        ws.force_inverse = true;
        let c = compose(&refs, h, truncation, &mut ws)?;
        // Untilt: x_k = ŷ_k·e^{lnm − λk}.
        let mut probs = Vec::with_capacity(c.probs.len());
        let mut max_idx = 0.0f64;
        for (k, &y) in (0i64..).zip(&c.probs) {
            #[allow(clippy::cast_precision_loss)]
            let idx = (c.offset + k) as f64;
            max_idx = max_idx.max(libm::fabs(idx));
            let arg = lnm - lambda * idx;
            probs.push(if y <= 0.0 {
                0.0
            } else if arg > 700.0 {
                f64::INFINITY
            } else {
                y * libm::exp(arg)
            });
        }
        // Exponent: lnm's error, λ·idx and the subtraction (u each, relative to the
        // operands), exp (2u) and the product (u).
        let arg_err = lnm_err + 2.0 * U * (libm::fabs(lnm) + 2.0 * lambda * max_idx) + 4.0 * U;
        let mass_rel = libm::expm1(arg_err) * (1.0 + 4.0 * U) + 4.0 * U;
        let inf = (0.0 - libm::expm1(ln_keep)) * (1.0 + 16.0 * U);
        let rel = libm::expm1(rel_sum * (1.0 + 4.0 * U)) * (1.0 + 4.0 * U);
        // The weighted round-off bound of `compose` holds for weights non-decreasing in
        // [0, 1); δ's weights here, `(1 − e^{ε−l_k})·F_k/F_{k₀}`, rise from 0 and then fall
        // (unimodal, in [0, 1)): total variation ≤ 2 instead of 1, so twice that bound
        // (Abel summation, see `compose`; the inverse transform's normwise part only needs
        // weights ≤ 1 and is doubled too). Clamping negative outputs at 0 and mass wrapping
        // around the window only increase the computed masses.
        let err = (2.0 * c.roundoff + c.truncation + 2.0 * flushed) * (1.0 + 4.0 * U);
        if !(err.is_finite() && rel.is_finite() && inf.is_finite() && mass_rel.is_finite()) {
            return Err(fail);
        }
        Ok(Self {
            comp: Composed {
                offset: c.offset,
                probs,
                inf: 0.0,
                truncation: 0.0,
                roundoff: 0.0,
                roundoff_lower: 0.0,
                spectral: None,
            },
            lnm,
            lambda,
            lnm_err,
            mass_rel,
            err,
            rel,
            inf,
        })
    }

    /// The mass at `+∞`.
    pub(crate) fn inf(&self) -> f64 {
        self.inf
    }

    /// δ(ε) split as (computed finite part, allowance): the upper bound is their sum plus
    /// [`Tilted::inf`], rounded up.
    fn parts(&self, h: f64, eps: f64) -> (f64, f64) {
        let (d, mass) = self.comp.finite_delta(h, eps);
        #[allow(clippy::cast_precision_loss)]
        let sum_err = 2.0 * self.comp.probs.len() as f64 * U * mass;
        // The first index above ε, less one for the rounding of the losses `i·h`: F there
        // bounds F at every index δ(ε) weighs.
        let idx0 = libm::floor(eps / h) - 1.0;
        let a0 = self.lnm - self.lambda * idx0;
        let a0 = a0
            + self.lnm_err
            + 2.0 * U * (libm::fabs(self.lnm) + libm::fabs(self.lambda * idx0))
            + 4.0 * U;
        let f0 = libm::exp(a0.min(709.0)) * (1.0 + 4.0 * U);
        let fin = (d + sum_err) * (1.0 + self.mass_rel);
        let total = (fin + f0 * self.err) * (1.0 + self.rel) * (1.0 + 4.0 * U);
        (d, total - d)
    }

    /// The order of this composition's tilt.
    pub(crate) fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The smallest ε at which the computed finite part of δ alone (no allowance, no
    /// mass at `+∞`) is at most `delta`: an estimate that places the next tilt, never a
    /// reported value.
    pub(crate) fn estimate(&self, h: f64, delta: f64) -> f64 {
        self.comp.epsilon_for(h, delta)
    }

    /// The upper bound of δ(ε) (rounded up, at most 1) and its allowance.
    pub(crate) fn delta_upper(&self, h: f64, eps: f64) -> (f64, f64) {
        let (d, allowance) = self.parts(h, eps);
        let v = round_up(d + allowance + self.inf);
        (if v.is_nan() { 1.0 } else { v.min(1.0) }, allowance)
    }

    /// The smallest ε (up to 10⁻¹² relative, bisection keeping a verified upper end) with
    /// `delta_upper(ε) ≤ delta`.
    ///
    /// # Errors
    /// [`AccountantError::DeltaTooSmall`] if the mass at `+∞` and the allowances exceed
    /// `delta` at every ε searched.
    pub(crate) fn epsilon(&self, h: f64, delta: f64) -> Result<f64, AccountantError> {
        let too_small = |spent: f64| AccountantError::DeltaTooSmall {
            requested: delta,
            spent,
        };
        if self.inf >= delta {
            return Err(too_small(self.inf));
        }
        let above = |e: f64| self.delta_upper(h, e).0 > delta;
        if !above(0.0) {
            return Ok(0.0);
        }
        let (mut lo, mut hi) = (0.0, self.comp.top_loss(h).max(h));
        let mut guard = 0;
        while above(hi) {
            lo = hi;
            hi = 2.0 * hi + h;
            guard += 1;
            if guard > 64 || !hi.is_finite() {
                return Err(too_small(self.delta_upper(h, hi).0));
            }
        }
        Ok(super::bisect(lo, hi, above).1)
    }
}
