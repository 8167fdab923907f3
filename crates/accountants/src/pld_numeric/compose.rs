//! FFT composition of discretised PLDs with Chernoff-bounded windows, and δ(ε) / ε(δ) of the
//! result.

use alloc::vec::Vec;

use dpinfer_math::{Complex, fft_twiddles, irfft, rfft, rfft_padded};

use super::base::Pmf;
use crate::AccountantError;

/// Largest FFT window (2²² points, ≈ 160 MB of buffers). A wider composed loss is composed
/// on a coarser grid instead ([`WINDOW_TOO_WIDE`], see `ComposedPld::new`).
pub(crate) const MAX_FFT: usize = 1 << 22;

/// The failure `compose` reports when the window exceeds [`MAX_FFT`]: the caller coarsens
/// the grid and composes again.
pub(crate) const WINDOW_TOO_WIDE: &str = "pld composition window wider than 2^22 grid points";

/// Unit round-off of f64.
pub(crate) const U: f64 = f64::EPSILON / 2.0;

/// One composed direction: masses on losses `(offset + i)·h`, the mass at `+∞`, and the
/// allowances that are added to δ (upper bounds) or subtracted from it (lower bounds).
#[derive(Clone, Debug)]
pub(crate) struct Composed {
    pub(crate) offset: i64,
    pub(crate) probs: Vec<f64>,
    pub(crate) inf: f64,
    /// Window truncation mass (Chernoff bound of the mass outside the window).
    pub(crate) truncation: f64,
    /// FFT and discretisation round-off allowance of δ(ε) (any ε ≥ 0), for upper bounds.
    pub(crate) roundoff: f64,
    /// The (larger) allowance for lower bounds: the ℓ₁ bound of the output error (the
    /// inverse FFT's outputs are clamped at 0, which the weighted bound does not cover).
    pub(crate) roundoff_lower: f64,
    /// With many composed steps only a few spectrum bins are not negligible: δ(ε) is then
    /// evaluated from them directly (no inverse FFT, `probs` empty).
    pub(crate) spectral: Option<Spectral>,
}

/// The non-negligible bins of the composed spectrum, each with the phase of the window
/// start folded in, and the ε-independent factors of the closed-form evaluation.
#[derive(Clone, Debug)]
pub(crate) struct Spectral {
    /// Absolute index of window position 0.
    lo: i64,
    /// FFT length.
    n: usize,
    /// `(b, weight·P_b·e^{iω_b·start}/n, 1/(e^{iω_b} − 1), 1/(1 − e^{−h}e^{iω_b}))`,
    /// weight 2 for `0 < b < n/2`, else 1.
    bins: Vec<(usize, Complex, Complex, Complex)>,
}

/// `ln E[e^{λ·i}]` (index units, absolute index `offset + i`) of the finite part of `p`,
/// by a multiplicative recurrence from the end where `e^{λi}` is largest (no overflow),
/// inflated by `4·len·u` for the recurrence's rounding (an upper bound is what is needed).
pub(crate) fn log_mgf(p: &Pmf, lambda: f64) -> f64 {
    let n = p.probs.len();
    let r = libm::exp(-lambda.abs());
    // Lane k of a group holds its k-th mass in the order of decreasing weight (a short group,
    // the last one, fills the first lanes).
    let lanes = |it: &mut dyn Iterator<Item = &f64>| {
        let mut g = [0.0; 4];
        for (slot, x) in g.iter_mut().zip(it) {
            *slot = *x;
        }
        g
    };
    let s = if lambda > 0.0 {
        decaying_sum(p.probs.rchunks(4).map(|c| lanes(&mut c.iter().rev())), r)
    } else {
        decaying_sum(p.probs.chunks(4).map(|c| lanes(&mut c.iter())), r)
    };
    #[allow(clippy::cast_precision_loss)]
    let start = if lambda > 0.0 {
        (p.offset + n as i64 - 1) as f64
    } else {
        p.offset as f64
    };
    #[allow(clippy::cast_precision_loss)]
    let slack = 4.0 * n as f64 * U;
    lambda * start + libm::log(s) + slack
}

/// `Σ_k x_k r^k` over the masses in the order given (in groups of 4, the last possibly short),
/// in four lanes (weights `r^j·(r⁴)^m`; each within `(3m + 3)·u` relative, inside the caller's
/// `4·len·u`). Once the weights fall below 10⁻³⁰⁰ the rest (masses summing to ≤ 1 + 10⁻⁹, see
/// the discretisation's mass check) adds at most `2w`: it stops there (no subnormal products).
fn decaying_sum(groups: impl Iterator<Item = [f64; 4]>, r: f64) -> f64 {
    let r2 = r * r;
    let r4 = r2 * r2;
    let mut w = [1.0, r, r2, r2 * r];
    let mut s = [0.0; 4];
    for g in groups {
        for ((sk, wk), x) in s.iter_mut().zip(w.iter_mut()).zip(g) {
            *sk += x * *wk;
            *wk *= r4;
        }
        if w[0] < 1e-300 {
            return (s[0] + s[1]) + (s[2] + s[3]) + 2.0 * w[0];
        }
    }
    (s[0] + s[1]) + (s[2] + s[3])
}

/// The Chernoff bound `(Σ n_g ln E_g[e^{λi}] + ln(2/t))/λ` on one side (`sign·λ`, index
/// units) of the composition: an upper end (`sign = 1`) or a lower end (`sign = −1`) beyond
/// which at most `t/2` of mass lies, for any `λ > 0` (`None` if not finite).
fn chernoff_at(parts: &[(&Pmf, u64)], lam: f64, sign: f64, ln2t: f64) -> Option<f64> {
    let l = sign * lam;
    #[allow(clippy::cast_precision_loss)]
    let total: f64 = parts.iter().map(|&(p, n)| n as f64 * log_mgf(p, l)).sum();
    let b = (total + ln2t) / l;
    b.is_finite().then_some(b)
}

/// The best Chernoff end of one side: the 13 orders `λ = c·2^{k/2}`, `k = −6..=6`, around
/// the Gaussian optimum `c = z/sd`; when the best is the smallest (or largest) of them — a
/// heavy-tailed loss (small sampling rates with little noise: the optimum λ can be 10⁻³ of
/// `z/sd`) — the search continues by halving (doubling) `λ` while the bound improves, then
/// refines by golden section in `log λ`. The bound `(K(λ) + c)/λ` is quasi-convex in `λ`
/// (`λK′ − K` increases with `λ`, `K` the convex cumulant function), so the walk finds its
/// minimum's bracket; every `λ` evaluated gives a valid bound and the best one is kept.
///
/// Returns the order `λ` that attained the bound and the bound.
pub(crate) fn chernoff_side(
    parts: &[(&Pmf, u64)],
    centre: f64,
    sign: f64,
    ln2t: f64,
) -> Option<(f64, f64)> {
    // `f(λ)`: the distance of the end from −∞ (upper) or +∞ (lower), to be minimised.
    let f = |lam: f64| chernoff_at(parts, lam, sign, ln2t).map(|b| sign * b);
    let mut best: Option<(f64, f64)> = None;
    let mut best_k = 0;
    for k in -6..=6 {
        let lam = centre * libm::exp2(f64::from(k) / 2.0);
        if let Some(v) = f(lam)
            && best.is_none_or(|(_, b)| v < b)
        {
            best = Some((lam, v));
            best_k = k;
        }
    }
    let (mut lam, mut val) = best?;
    if best_k != -6 && best_k != 6 {
        return Some((lam, sign * val));
    }
    // Walk outwards by factors of 2 while the bound improves (at most 80 steps).
    let factor = if best_k == -6 { 0.5 } else { 2.0 };
    for _ in 0..80 {
        let next = lam * factor;
        match f(next) {
            Some(v) if v < val => {
                lam = next;
                val = v;
            }
            _ => break,
        }
    }
    // Golden section on log λ over [λ/2, 2λ] (the minimum's bracket).
    let (mut a, mut b) = (
        libm::log(lam) - core::f64::consts::LN_2,
        libm::log(lam) + core::f64::consts::LN_2,
    );
    const INV_PHI: f64 = 0.618_033_988_749_894_9;
    let mut c = b - INV_PHI * (b - a);
    let mut d = a + INV_PHI * (b - a);
    let mut fc = f(libm::exp(c)).unwrap_or(f64::INFINITY);
    let mut fd = f(libm::exp(d)).unwrap_or(f64::INFINITY);
    for _ in 0..12 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - INV_PHI * (b - a);
            fc = f(libm::exp(c)).unwrap_or(f64::INFINITY);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + INV_PHI * (b - a);
            fd = f(libm::exp(d)).unwrap_or(f64::INFINITY);
        }
    }
    let mut best = (lam, val);
    if fc < best.1 {
        best = (libm::exp(c), fc);
    }
    if fd < best.1 {
        best = (libm::exp(d), fd);
    }
    Some((best.0, sign * best.1))
}

/// The variance (index units) of the finite part of `p`, normalised (it centres the
/// Chernoff order search).
pub(crate) fn index_variance(p: &Pmf) -> f64 {
    let mass: f64 = p.probs.iter().sum();
    #[allow(clippy::cast_precision_loss)]
    let mean: f64 = p
        .probs
        .iter()
        .enumerate()
        .map(|(i, &x)| i as f64 * x)
        .sum::<f64>()
        / mass.max(f64::MIN_POSITIVE);
    #[allow(clippy::cast_precision_loss)]
    let v: f64 = p
        .probs
        .iter()
        .enumerate()
        .map(|(i, &x)| (i as f64 - mean) * (i as f64 - mean) * x)
        .sum::<f64>()
        / mass.max(f64::MIN_POSITIVE);
    v
}

/// `r^n` (real, `r ≥ 0`) by repeated squaring.
fn powr(r: f64, mut n: u64) -> f64 {
    let mut base = r;
    let mut acc = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            acc *= base;
        }
        n >>= 1;
        if n > 0 {
            base *= base;
        }
    }
    acc
}

/// `z^n` by repeated squaring (`O(log n)` complex products, no transcendental calls).
fn powi(z: Complex, mut n: u64) -> Complex {
    let mut base = z;
    let mut acc = Complex::new(1.0, 0.0);
    while n > 0 {
        if n & 1 == 1 {
            acc = acc * base;
        }
        n >>= 1;
        if n > 0 {
            base = base * base;
        }
    }
    acc
}

/// Composes `count` copies of each PLD in `parts` (heterogeneous adaptive composition) by one
/// real FFT per distinct part, per-bin powers by repeated squaring, and one inverse FFT.
///
/// The window `[lo, hi]` is chosen by Chernoff bounds over 13 orders on each side so that the
/// mass of the composition outside it is at most `truncation` (half per side); the FFT
/// length is the next power of two. Out-of-window mass wraps around (circular convolution);
/// it is covered by adding `truncation` to δ, and negative round-off values are clamped to
/// 0 (lower bounds subtract both allowances instead).
/// Scratch buffers reused across compositions of the same FFT length (twiddles, real
/// buffer, spectra, round-off bookkeeping): one allocation per query, not per direction.
#[derive(Debug, Default)]
pub(crate) struct Workspace {
    n: usize,
    tw: Vec<Complex>,
    acc: Vec<Complex>,
    spec: Vec<Complex>,
    /// Length-`n` real buffer: the wrapped PMF of a part longer than `n`, and the inverse
    /// transform's output (allocated only when one is needed).
    buf: Vec<f64>,
    /// A part's masses with its atoms zeroed (the input of [`rfft_padded`]).
    short: Vec<f64>,
    big_r: Vec<f64>,
    big_s: Vec<f64>,
    /// Always take the inverse FFT (tests compare both evaluations).
    pub(crate) force_inverse: bool,
}

impl Workspace {
    fn prepare(&mut self, n: usize, multi: bool) -> Result<(), AccountantError> {
        if self.n != n {
            self.tw = alloc::vec![Complex::default(); n / 2];
            fft_twiddles(&mut self.tw)
                .map_err(|_| AccountantError::NumericalFailure { what: "fft" })?;
            self.acc = alloc::vec![Complex::default(); n / 2 + 1];
            self.spec = Vec::new();
            self.buf = Vec::new();
            self.big_r = Vec::new();
            self.big_s = Vec::new();
            self.n = n;
        }
        // Per-bin bookkeeping across parts is only needed for heterogeneous compositions (a
        // single part is transformed straight into `acc`, overwriting it).
        if multi {
            self.acc.fill(Complex::new(1.0, 0.0));
            self.spec.resize(n / 2 + 1, Complex::default());
            self.big_r.clear();
            self.big_r.resize(n / 2 + 1, 1.0);
            self.big_s.clear();
            self.big_s.resize(n / 2 + 1, 0.0);
        }
        Ok(())
    }
}

pub(crate) fn compose(
    parts: &[(&Pmf, u64)],
    h: f64,
    truncation: f64,
    ws: &mut Workspace,
) -> Result<Composed, AccountantError> {
    // Infinite mass: 1 − Π(1 − inf_g)^{n_g}.
    let mut ln_keep = 0.0;
    let mut base_offset: i128 = 0;
    let mut max_index: i128 = 0;
    let mut var = 1.0;
    let mut max_count = 1u64;
    #[allow(clippy::cast_precision_loss)]
    for &(p, n) in parts {
        let nf = n as f64;
        ln_keep += nf * libm::log1p(-p.inf);
        base_offset += i128::from(p.offset) * i128::from(n);
        max_index += (i128::from(p.offset) + p.probs.len() as i128 - 1) * i128::from(n);
        var += nf * index_variance(p);
        max_count = max_count.max(n);
    }
    let inf = 0.0 - libm::expm1(ln_keep); // +0 (not −0) when nothing is infinite
    // One copy of one PLD: nothing to convolve (no FFT, no round-off, no truncation).
    if let [(p, 1)] = *parts {
        let n_i = i64::try_from(p.probs.len()).unwrap_or(i64::MAX);
        let keep_from = (1 - p.offset).clamp(0, n_i);
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        let probs = p.probs[keep_from as usize..].to_vec();
        return Ok(Composed {
            offset: p.offset + keep_from,
            probs,
            inf: p.inf,
            truncation: 0.0,
            roundoff: p.slack,
            roundoff_lower: p.slack,
            spectral: None,
        });
    }
    if base_offset.abs() > (1i128 << 62) || max_index.abs() > (1i128 << 62) {
        return Err(AccountantError::NumericalFailure {
            what: "pld composition range overflow",
        });
    }
    #[allow(clippy::cast_possible_truncation)]
    let (full_lo, full_hi) = (base_offset as i64, max_index as i64);
    // Chernoff window: for each side the best bound over 13 orders around the Gaussian
    // optimum `z/sd`, extended (see `chernoff_side`) when the best lies at an end of them.
    let ln2t = libm::log(2.0 / truncation);
    let z = libm::sqrt(2.0 * ln2t);
    let sd = libm::sqrt(var);
    #[allow(clippy::cast_precision_loss)]
    let (mut hi, mut lo) = (full_hi as f64, full_lo as f64);
    let centre = z / sd;
    if let Some((_, b)) = chernoff_side(parts, centre, 1.0, ln2t) {
        hi = hi.min(libm::ceil(b));
    }
    if let Some((_, b)) = chernoff_side(parts, centre, -1.0, ln2t) {
        lo = lo.max(libm::floor(b));
    }
    #[allow(clippy::cast_precision_loss)]
    let mut tail = 0.0;
    #[allow(clippy::cast_precision_loss)]
    {
        if hi < full_hi as f64 {
            tail += 0.5 * truncation;
        }
        if lo > full_lo as f64 {
            tail += 0.5 * truncation;
        }
    }
    if hi < lo {
        hi = lo;
    }
    #[allow(clippy::cast_possible_truncation)]
    let (lo, hi) = (lo as i64, hi as i64);
    let width = usize::try_from(hi - lo + 1).unwrap_or(usize::MAX);
    if width > MAX_FFT {
        return Err(AccountantError::NumericalFailure {
            what: WINDOW_TOO_WIDE,
        });
    }
    let n = width.max(2).next_power_of_two();
    let multi = parts.len() > 1;
    ws.prepare(n, multi)?;
    let Workspace {
        tw,
        acc,
        spec,
        buf,
        big_r,
        big_s,
        short,
        force_inverse,
        ..
    } = ws;
    // Per-bin round-off bookkeeping (see below): R_b ≥ |exact spectrum| of the composition
    // and S_b = Σ_g n_g ε_g / r_g.
    #[allow(clippy::cast_precision_loss)]
    let log_n = f64::from(n.trailing_zeros());
    // Round-off. Each bin's error is |ΔY_b| ≤ E_b = R_b·(S_b + 6·log₂c·u): with
    // |z̃^c − z^c| ≤ c·ε·r^{c−1} (|z̃|, |z| ≤ r) and the squarings' 6·log₂c·u·r^c.
    // δ(ε) is `Σ_k a_k y_k` over the window positions above ε with non-decreasing weights
    // `a_k = 1 − e^{ε−l_k} ∈ [0, 1)`, so a bin's error enters as `ΔY_b·T_b/N` with
    // `T_b = Σ_k a_k e^{iω_b k}`; by Abel summation `|T_b| ≤ 2·max_m |Σ_{k≥m} e^{iω_b k}|
    // ≤ 2/|sin(πb/N)| ≤ N/b` (and `≤ N`): the weighted bound is `Σ_b w_b·E_b·min(1, 1/b)`
    // (both halves of the spectrum, `w_b ≤ 2`) instead of the ℓ₁ bound `Σ_b w_b·E_b` of the
    // output, which stays the allowance of the lower bounds (`roundoff_lower`, with the
    // inverse transform's componentwise 8·(log₂N+1)·u·Σ|Y_b|).
    #[allow(clippy::cast_precision_loss)]
    let log_c = libm::log2(max_count as f64).max(1.0);
    let sq_err = 6.0 * log_c * U;
    let inv_err = 8.0 * (log_n + 1.0) * U;
    // Σ_b g_b·E_b, Σ_b (E_b + inverse error), Σ_b (R_b + E_b)².
    let (mut single_bound, mut single_l1, mut single_sq) = (0.0, 0.0, 0.0);
    for &(p, count) in parts {
        // A PMF whose mass sits mostly on a few atoms (small sampling rates: nearly every
        // step's loss rounds to the grid points next to 0) has those atoms added to each bin
        // exactly (table twiddles) instead of going through the FFT, whose error bound is
        // proportional to the mass it transforms.
        let atoms = Atoms::of(&p.probs);
        let mut l1 = 0.0;
        let mut l1_fft = 0.0;
        // A single part is transformed straight into the accumulator (one buffer less).
        let target: &mut [Complex] = if multi { spec } else { acc };
        let fft_failed = |_| AccountantError::NumericalFailure { what: "fft" };
        if p.probs.len() <= n {
            // No wrap-around: the masses (0 at the atoms) zero-padded to n, without an
            // n-point buffer (`0.0 + x`: the same bits as adding into a zeroed one).
            short.clear();
            for (i, &x) in p.probs.iter().enumerate() {
                l1 += x.abs();
                if atoms.contains(i) {
                    short.push(0.0);
                } else {
                    short.push(0.0 + x);
                    l1_fft += x.abs();
                }
            }
            rfft_padded(short, target, tw).map_err(fft_failed)?;
        } else {
            buf.clear();
            buf.resize(n, 0.0);
            for (i, &x) in p.probs.iter().enumerate() {
                l1 += x.abs();
                if !atoms.contains(i) {
                    buf[i & (n - 1)] += x;
                    l1_fft += x.abs();
                }
            }
            rfft(buf, target, tw).map_err(fft_failed)?;
        }
        atoms.add_to(target, n, tw);
        // Each computed bin is within ε_g = 8·log₂N·u·‖p‖₁ of the exact one (every output
        // is a sum of N terms through log₂N butterflies; Higham 2002, §24.1), ‖p‖₁ over the
        // transformed masses, plus the atoms' (2k + 6)·u·mass (see `Atoms::add_to`).
        let eps_g = 8.0 * (log_n + 1.0) * U * l1_fft + atoms.error();
        #[allow(clippy::cast_precision_loss)]
        let cf = count as f64;
        // The lowest bins carry almost all of the powered bound count·ε·r^{count−1}: where a
        // bin's weighted share (× min(1, 1/b), see below) exceeds 10⁻¹², recompute it by a
        // direct compensated DFT (each costs a pass over the PMF), whose error is
        // ≤ ε_d = 12u·‖p‖₁ (table twiddles ≤ 3u, products ≤ 1.5u, Neumaier sums ≤ 2u·|z| per
        // part, with margin) + 2·len·u·(mass outside the bulk, summed plainly) instead of ε_g.
        let (blo, bhi, outside) = bulk(&p.probs);
        #[allow(clippy::cast_precision_loss)]
        let eps_d = 12.0 * U * l1 + 2.0 * p.probs.len() as f64 * U * outside;
        let mut eps_low = [eps_g; DIRECT_BINS];
        if count > 1 && eps_d < eps_g {
            // Which bins (each decided on its FFT value alone), then recomputed four per pass.
            let mut chosen = [0usize; DIRECT_BINS];
            let mut len = 0;
            for (b, e) in eps_low.iter_mut().enumerate().take(target.len()) {
                let r = libm::sqrt(target[b].norm_sqr()) + eps_g;
                if cf * eps_g * powr(r, count - 1) * bin_weight(b) >= 1e-12 {
                    chosen[len] = b;
                    len += 1;
                    *e = eps_d;
                }
            }
            for group in chosen[..len].chunks(4) {
                // A short last group repeats its last bin (computed twice, stored once).
                let last = group[group.len() - 1];
                let bins: [usize; 4] =
                    core::array::from_fn(|j| group.get(j).copied().unwrap_or(last));
                let z = direct_bins(&p.probs, (blo, bhi), bins, n, tw);
                for (&b, &zb) in group.iter().zip(&z) {
                    target[b] = zb;
                }
            }
        }
        // Bins with |z|^count below e^{−345} ≈ 10⁻¹⁵⁰ are set to 0 (their bound kept: far below
        // any δ the allowances leave), so that no product in the bookkeeping below is
        // subnormal (each costs 10–100× a normal one: half the time of 10⁴ DP-SGD steps).
        let cutoff = libm::exp(-690.0 / cf);
        // Bins at or below the cutoff: |z| + ε_g ≤ r_cut, so their bound is r_cut^count.
        let r_cut = libm::sqrt(cutoff) + eps_g;
        let r_cut_pow = powr(r_cut, count);
        // Per bin: R = r^count ≥ |exact bin| (r = |z| + ε_g) and S = count·ε_g/r, so that
        // R·S = count·ε_g·r^{count−1} bounds |z̃^count − z^count|.
        let step = |a: &mut Complex, z: Complex, b: usize| -> (f64, f64) {
            let ns = z.norm_sqr();
            if ns <= cutoff {
                *a = Complex::default();
                return (r_cut_pow, cf * eps_g / r_cut);
            }
            let eps = eps_low.get(b).copied().unwrap_or(eps_g);
            let r = libm::sqrt(ns) + eps;
            if a.re != 0.0 || a.im != 0.0 {
                *a = *a * powi(z, count);
            }
            (powr(r, count), cf * eps / r)
        };
        if multi {
            for (b, (((a, &z), r_acc), s_acc)) in acc
                .iter_mut()
                .zip(spec.iter())
                .zip(big_r.iter_mut())
                .zip(big_s.iter_mut())
                .enumerate()
            {
                if *r_acc == 0.0 {
                    *a = Complex::default();
                    continue;
                }
                let (rp, st) = step(a, z, b);
                *r_acc *= rp;
                *s_acc += st;
            }
        } else {
            for (b, a) in acc.iter_mut().enumerate() {
                let z = *a;
                *a = Complex::new(1.0, 0.0);
                let (rp, st) = step(a, z, b);
                let e = rp * (st + sq_err);
                single_bound += e * bin_weight(b);
                single_l1 += e + rp * inv_err;
                single_sq += (rp + e) * (rp + e);
            }
        }
    }
    let (mut weighted, mut l1, mut sq) = (single_bound, single_l1, single_sq);
    for (b, (r, s)) in big_r.iter().zip(big_s.iter()).enumerate() {
        let e = r * (s + sq_err);
        weighted += e * bin_weight(b);
        l1 += e + r * inv_err;
        sq += (r + e) * (r + e);
    }
    let mut slack = 0.0;
    #[allow(clippy::cast_precision_loss)]
    for &(p, c) in parts {
        slack += c as f64 * p.slack;
    }
    let roundoff = 2.0 * weighted + slack;
    let roundoff_lower = 2.0 * l1 + slack;
    // The inverse FFT's own error, normwise (Higham 2002, Thm 24.2, with one more stage for
    // the real-to-complex split): ‖Δy‖₂ ≤ 8·(log₂N+2)·u·‖y‖₂, ‖y‖₂² = Σ_b w_b|Y_b|²/N ≤ 2·sq/N,
    // and the weights a_k < 1 have ‖a‖₂ ≤ √N: at most 8·(log₂N+2)·u·√(2·sq).
    let inverse_err = 8.0 * (log_n + 2.0) * U * libm::sqrt(2.0 * sq);
    // Absolute index a lives at position (a − base) mod n.
    let n_i = i64::try_from(n).unwrap_or(i64::MAX);
    let start = (lo - full_lo).rem_euclid(n_i);
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
    let start = start as usize;
    let sp = if *force_inverse {
        None
    } else {
        spectral(acc, n, start, lo, h)
    };
    if let Some((sp, dropped)) = sp {
        return Ok(Composed {
            offset: lo,
            probs: Vec::new(),
            inf,
            truncation: tail,
            roundoff: roundoff + dropped,
            roundoff_lower: roundoff_lower + dropped,
            spectral: Some(sp),
        });
    }
    buf.resize(n, 0.0);
    irfft(acc, buf, tw).map_err(|_| AccountantError::NumericalFailure { what: "fft" })?;
    // Keep only positive losses (absolute index ≥ 1): δ(ε) for ε ≥ 0 never looks below.
    let keep_from = (1 - lo).clamp(0, n_i);
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
    let keep_from = keep_from as usize;
    let mut probs = Vec::with_capacity(n - keep_from);
    for k in keep_from..n {
        let x = buf[(start + k) & (n - 1)];
        probs.push(x.max(0.0));
    }
    #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
    let offset = lo + keep_from as i64;
    Ok(Composed {
        offset,
        probs,
        inf,
        truncation: tail,
        roundoff: roundoff + inverse_err,
        roundoff_lower,
        spectral: None,
    })
}

/// `min(1, 1/b)`: the bound of `|T_b|/N` in the weighted round-off bound (see `compose`;
/// `sin(πb/N) ≥ 2b/N` for `b ≤ N/2`).
#[inline]
fn bin_weight(b: usize) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    if b <= 1 { 1.0 } else { 1.0 / b as f64 }
}

/// At most this many atoms are taken out of a PMF's FFT (see [`Atoms`]).
const MAX_ATOMS: usize = 8;

/// The largest masses of a PMF (at most [`MAX_ATOMS`], each ≥ 10⁻³), used only when together
/// they hold at least half of its mass.
struct Atoms {
    at: [(usize, f64); MAX_ATOMS],
    len: usize,
    mass: f64,
}

impl Atoms {
    fn of(probs: &[f64]) -> Self {
        let mut at = [(0usize, 0.0f64); MAX_ATOMS];
        let mut len = 0;
        for (i, &x) in probs.iter().enumerate() {
            if x < 1e-3 {
                continue;
            }
            if len < MAX_ATOMS {
                at[len] = (i, x);
                len += 1;
            } else if let Some(min) = (0..MAX_ATOMS).min_by(|&a, &b| at[a].1.total_cmp(&at[b].1))
                && at[min].1 < x
            {
                at[min] = (i, x);
            }
        }
        let mass: f64 = at[..len].iter().map(|a| a.1).sum();
        if mass < 0.5 {
            len = 0;
        }
        Self {
            at,
            len,
            mass: if len == 0 { 0.0 } else { mass },
        }
    }
    fn contains(&self, i: usize) -> bool {
        self.at[..self.len].iter().any(|a| a.0 == i)
    }
    /// Adds `Σ_a x_a·e^{−2πi·b·a/n}` to every bin `b` of `spec` (table twiddles, `tw` holding
    /// `k < n/2`, the rest negated; the position of index `a` is `a mod n`).
    fn add_to(&self, spec: &mut [Complex], n: usize, tw: &[Complex]) {
        if self.len == 0 {
            return;
        }
        let half = n / 2;
        for (b, z) in spec.iter_mut().enumerate() {
            let (mut re, mut im) = (z.re, z.im);
            for &(a, x) in &self.at[..self.len] {
                // (b·a) mod n without overflow (n ≤ 2²²; a < 2²⁴ + n).
                let k = usize::try_from((b as u64 * (a & (n - 1)) as u64) % n as u64).unwrap_or(0);
                let w = if k < half {
                    tw[k]
                } else {
                    let t = tw[k - half];
                    Complex::new(-t.re, -t.im)
                };
                re += x * w.re;
                im += x * w.im;
            }
            *z = Complex::new(re, im);
        }
    }
    /// Error of the atoms' part of a bin: each table twiddle within 3u, each product 1.5u,
    /// and each of the `k` additions u of a partial sum of modulus ≤ 1 + mass: (2k + 6)·u·(1 + mass) in all.
    fn error(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let k = self.len as f64;
        if self.len == 0 {
            0.0
        } else {
            (2.0 * k + 6.0) * U * (1.0 + self.mass)
        }
    }
}

/// Lowest bins eligible for a direct DFT (see `compose`).
const DIRECT_BINS: usize = 64;

/// Masses below this are summed without compensation in [`direct_bin`].
const SMALL_MASS: f64 = 1e-9;

/// The index range `[lo, hi)` of `probs` outside which every mass is below [`SMALL_MASS`],
/// and the total mass outside it.
fn bulk(probs: &[f64]) -> (usize, usize, f64) {
    let lo = probs
        .iter()
        .position(|x| x.abs() >= SMALL_MASS)
        .unwrap_or(0);
    let hi = probs
        .iter()
        .rposition(|x| x.abs() >= SMALL_MASS)
        .map_or(lo, |i| i + 1);
    let outside: f64 = probs[..lo]
        .iter()
        .chain(&probs[hi..])
        .map(|x| x.abs())
        .sum();
    (lo, hi, outside)
}

/// Bins `bins` of the length-`n` DFT of `probs` (placed at positions `i mod n`), by direct
/// sums with table twiddles `e^{−2πik/n}` (`tw` holds `k < n/2`; the rest are negated):
/// compensated (Neumaier) accumulation over the bulk `[lo, hi)`, plain accumulation of the
/// small masses outside it (error ≤ `len·u·outside`, added by the caller). The four bins
/// share one pass over `probs` (for the loads and the independent sums' parallelism); each
/// bin's operations are those of a pass of its own.
fn direct_bins(
    probs: &[f64],
    (lo, hi): (usize, usize),
    bins: [usize; 4],
    n: usize,
    tw: &[Complex],
) -> [Complex; 4] {
    let half = n / 2;
    let twiddle = |k: usize| {
        if k < half {
            tw[k]
        } else {
            let t = tw[k - half];
            Complex::new(-t.re, -t.im)
        }
    };
    let mut re = [dpinfer_math::NeumaierSum::new(); 4];
    let mut im = [dpinfer_math::NeumaierSum::new(); 4];
    let (mut pre, mut pim) = ([0.0; 4], [0.0; 4]);
    let mut k = [0usize; 4];
    let next = |k: &mut [usize; 4]| {
        for (kj, &b) in k.iter_mut().zip(&bins) {
            *kj += b;
            if *kj >= n {
                *kj -= n;
            }
        }
    };
    for &x in &probs[..lo] {
        for j in 0..4 {
            let w = twiddle(k[j]);
            pre[j] += x * w.re;
            pim[j] += x * w.im;
        }
        next(&mut k);
    }
    for &x in &probs[lo..hi] {
        for j in 0..4 {
            let w = twiddle(k[j]);
            re[j].add(x * w.re);
            im[j].add(x * w.im);
        }
        next(&mut k);
    }
    for &x in &probs[hi..] {
        for j in 0..4 {
            let w = twiddle(k[j]);
            pre[j] += x * w.re;
            pim[j] += x * w.im;
        }
        next(&mut k);
    }
    core::array::from_fn(|j| {
        re[j].add(pre[j]);
        im[j].add(pim[j]);
        Complex::new(re[j].sum(), im[j].sum())
    })
}

/// Bins whose bound `R_b` is below this are dropped (their `2R_b` added to the round-off).
const DROP: f64 = 1e-40;

/// `e^{iπk/n}` for an integer `k` reduced mod `2n` (one rounding of the angle).
fn phase_half(k: u128, n: usize) -> Complex {
    let m = 2 * n as u128;
    #[allow(clippy::cast_precision_loss)]
    let a = core::f64::consts::PI * ((k % m) as f64) / (n as f64);
    Complex::new(libm::cos(a), libm::sin(a))
}

/// The spectral form of the composition if at most `n/64` bins are not negligible (else
/// `None`: the inverse FFT is then cheaper), with the allowance for the dropped bins
/// (`Σ weight·|P_b|`, as `|T_b| ≤ n` below).
fn spectral(acc: &[Complex], n: usize, start: usize, lo: i64, h: f64) -> Option<(Spectral, f64)> {
    let half = n / 2;
    let mut bins = Vec::new();
    let mut dropped = 0.0;
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    let rho = libm::exp(-h);
    let one_m_rho = -libm::expm1(-h);
    for (b, &pb) in acc.iter().enumerate() {
        let w = if b == 0 || b == half { 1.0 } else { 2.0 };
        let ns = pb.norm_sqr();
        if ns <= DROP * DROP {
            if ns > 0.0 {
                dropped += w * libm::sqrt(ns) * (1.0 + 4.0 * U);
            }
            continue;
        }
        if (bins.len() + 1) * 64 > n {
            return None;
        }
        let v = pb * phase_half(2 * (b as u128) * (start as u128), n);
        let v = Complex::new(w * v.re / nf, w * v.im / nf);
        // e^{iω} − 1 = 2i·sin(ω/2)·e^{iω/2} and 1 − ρe^{iω} = (1 − ρ) + 2ρ sin²(ω/2)
        // − 2iρ sin(ω/2)cos(ω/2), without cancellation.
        let hp = phase_half(b as u128, n);
        let (c2, s2) = (hp.re, hp.im);
        let inv1 = if b == 0 {
            Complex::default()
        } else {
            recip(Complex::new(-2.0 * s2 * s2, 2.0 * s2 * c2))
        };
        let inv2 = recip(Complex::new(
            one_m_rho + 2.0 * rho * s2 * s2,
            -2.0 * rho * s2 * c2,
        ));
        bins.push((b, v, inv1, inv2));
    }
    Some((Spectral { lo, n, bins }, dropped))
}

/// `1/z`.
fn recip(z: Complex) -> Complex {
    let d = z.norm_sqr();
    Complex::new(z.re / d, -z.im / d)
}

impl Spectral {
    /// The finite part of δ(ε), `Σ_{k ≥ k₀} y_k (1 − e^{ε − (lo+k)h})` over the window
    /// positions above ε, as `Σ_b Re(v_b T_b)` with the closed forms
    /// `T_b = S1_b − w·S2_b`, `S1_b = Σ_{k≥k₀} e^{iω_b k} = (1 − e^{iθ})/(e^{iω} − 1)`,
    /// `S2_b = Σ_{k≥k₀} e^{iω_b k}ρ^{k−k₀} = (e^{iθ} − ρ^c)/(1 − ρe^{iω})` (`θ = ω k₀`,
    /// `c = n − k₀`, `ρ = e^{−h}`, `w = e^{ε − (lo+k₀)h}`), and a bound on its rounding error.
    fn finite_delta(&self, h: f64, eps: f64) -> (f64, f64) {
        #[allow(clippy::cast_precision_loss)]
        let (nf, lof) = (self.n as f64, self.lo as f64);
        let k0 = (libm::floor(eps / h) + 1.0 - lof).max(0.0);
        if k0 >= nf {
            return (0.0, 0.0);
        }
        let c = nf - k0;
        let w = libm::exp(eps - (lof + k0) * h);
        let one_m_rho_c = -libm::expm1(-c * h);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let k0u = k0 as u128;
        let mut sum = dpinfer_math::NeumaierSum::new();
        let mut err = 0.0;
        for &(b, v, inv1, inv2) in &self.bins {
            let hp = phase_half(b as u128 * k0u, self.n);
            let (ch, sh) = (hp.re, hp.im);
            // 1 − e^{iθ} = −2i·sin(θ/2)·e^{iθ/2}.
            let om = Complex::new(2.0 * sh * sh, -2.0 * sh * ch);
            let s1 = if b == 0 {
                Complex::new(c, 0.0)
            } else {
                om * inv1
            };
            let s2 = Complex::new(one_m_rho_c - om.re, -om.im) * inv2;
            let t = Complex::new(s1.re - w * s2.re, s1.im - w * s2.im);
            sum.add(v.re * t.re - v.im * t.im);
            err +=
                libm::sqrt(v.norm_sqr()) * (libm::sqrt(s1.norm_sqr()) + libm::sqrt(s2.norm_sqr()));
        }
        (sum.sum(), 64.0 * U * err)
    }
    /// The largest loss in the window.
    fn top_loss(&self, h: f64) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let top = (self.lo as f64 + self.n as f64 - 1.0) * h;
        top
    }
}

impl Composed {
    /// The loss of entry `i`.
    #[allow(clippy::cast_precision_loss)]
    fn loss(&self, i: usize, h: f64) -> f64 {
        (self.offset + i as i64) as f64 * h
    }

    /// Whether δ is evaluated from the spectrum (no `probs`).
    pub(crate) fn is_spectral(&self) -> bool {
        self.spectral.is_some()
    }

    /// The largest loss represented.
    pub(crate) fn top_loss(&self, h: f64) -> f64 {
        match &self.spectral {
            Some(sp) => sp.top_loss(h),
            #[allow(clippy::cast_precision_loss)]
            None => self.loss(self.probs.len().saturating_sub(1), h),
        }
    }

    /// The finite part of δ(ε) and a bound on its evaluation error.
    fn finite_with_error(&self, h: f64, eps: f64) -> (f64, f64) {
        if let Some(sp) = &self.spectral {
            return sp.finite_delta(h, eps);
        }
        let (d, mass) = self.finite_delta(h, eps);
        #[allow(clippy::cast_precision_loss)]
        let sum_err = 2.0 * self.probs.len() as f64 * U * mass;
        (d, sum_err)
    }

    /// `Σ_{l > ε} p_l (1 − e^{ε−l})` (the finite part of δ(ε)), and the total mass summed.
    pub(crate) fn finite_delta(&self, h: f64, eps: f64) -> (f64, f64) {
        let mut s = dpinfer_math::NeumaierSum::new();
        let mut mass = 0.0;
        for (i, &p) in self.probs.iter().enumerate().rev() {
            let l = self.loss(i, h);
            if l <= eps {
                break;
            }
            s.add(p * -libm::expm1(eps - l));
            mass += p.abs();
        }
        (s.sum(), mass)
    }

    /// Pessimistic δ(ε): finite part + ∞ mass + truncation + round-off (not rounded).
    pub(crate) fn delta_upper(&self, h: f64, eps: f64) -> f64 {
        let (d, sum_err) = self.finite_with_error(h, eps);
        (d + sum_err + self.inf + self.truncation + self.roundoff).min(1.0)
    }

    /// The computed δ(ε) less every allowance: a lower bound of this PLD's exact δ(ε).
    pub(crate) fn delta_lower(&self, h: f64, eps: f64) -> f64 {
        let (d, sum_err) = self.finite_with_error(h, eps);
        (d - sum_err + self.inf - self.truncation - self.roundoff_lower).max(0.0)
    }

    /// The smallest ε ≥ 0 with `finite(ε) ≤ target` (None if even the largest loss fails,
    /// which cannot happen for target ≥ 0). The scan runs down from the top keeping
    /// `U = Σ_{i≥j} p_i` and `R = Σ_{i≥j} p_i e^{l_j − l_i}`, so that on `[l_{j−1}, l_j)`
    /// `finite(ε) = U − e^{ε−l_j} R`, and solves the crossing in closed form.
    pub(crate) fn epsilon_for(&self, h: f64, target: f64) -> f64 {
        let eh = libm::exp(-h);
        let Some(mut j) = self.probs.len().checked_sub(1) else {
            return 0.0;
        };
        let mut lj = self.loss(j, h);
        if lj <= 0.0 {
            return 0.0;
        }
        let mut u = self.probs[j];
        let mut r = self.probs[j];
        loop {
            let next_l = if j > 0 {
                self.loss(j - 1, h)
            } else {
                f64::NEG_INFINITY
            };
            let lower = next_l.max(0.0);
            let at_lower = if next_l >= 0.0 {
                u - eh * r
            } else {
                u - libm::exp(lower - lj) * r
            };
            if at_lower > target {
                return self.solve_between(lower, lj, u, r, target);
            }
            if next_l <= 0.0 {
                return 0.0;
            }
            j -= 1;
            lj = next_l;
            u += self.probs[j];
            r = r * eh + self.probs[j];
        }
    }

    /// Solves `U − e^{ε − l_j} R = target` for ε in `[lower, l_j]`.
    #[allow(clippy::unused_self)]
    fn solve_between(&self, lower: f64, lj: f64, u: f64, r: f64, target: f64) -> f64 {
        if r <= 0.0 || u - target <= 0.0 {
            return lj.max(lower).max(0.0);
        }
        let at_lower = u - libm::exp(lower - lj) * r;
        if at_lower <= target {
            return lower.max(0.0);
        }
        let e = lj + libm::log((u - target) / r);
        e.clamp(lower, lj.max(lower)).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::Direction;
    use super::super::Mechanism;
    use super::super::base::discretise;
    use super::*;

    /// `log_mgf` is an upper bound of `ln Σ_j x_j e^{λ(offset + j)}` and within 10⁻¹² of it,
    /// for every length mod 4 (the last, short group of the four lanes) and both signs of λ.
    #[test]
    fn log_mgf_bounds_the_direct_sum() {
        for len in 1..=13usize {
            #[allow(clippy::cast_precision_loss)]
            let probs: Vec<f64> = (0..len).map(|j| 1.0 + (j * j % 7) as f64).collect();
            let total: f64 = probs.iter().sum();
            let probs: Vec<f64> = probs.iter().map(|x| x / total).collect();
            let p = Pmf {
                offset: -3,
                probs,
                inf: 0.0,
                slack: 0.0,
            };
            for lambda in [-2.0, -0.3, 0.01, 0.7, 3.0] {
                #[allow(clippy::cast_precision_loss)]
                let direct: f64 = p
                    .probs
                    .iter()
                    .enumerate()
                    .map(|(j, x)| x * libm::exp(lambda * (p.offset + j as i64) as f64))
                    .sum();
                let ours = log_mgf(&p, lambda);
                let exact = libm::log(direct);
                assert!(
                    ours >= exact - 1e-15 * exact.abs(),
                    "{len} {lambda}: {ours} < {exact}"
                );
                assert!(
                    ours <= exact + 1e-12 * (1.0 + exact.abs()),
                    "{len} {lambda}: {ours}"
                );
            }
        }
    }

    /// The spectral evaluation of δ(ε) agrees with the inverse FFT of the same spectrum.
    #[test]
    fn spectral_evaluation_matches_inverse_fft() {
        let h = 1e-4;
        for (mu, q, count) in [
            (0.413, 0.01, 10_000u64),
            (0.5, 0.05, 2_000),
            (2.0, 0.001, 50_000),
        ] {
            for d in [Direction::Remove, Direction::Add] {
                let p = discretise(Mechanism::Gaussian { mu }, q, d, h, 1e-16).unwrap();
                let mut ws = Workspace::default();
                let a = compose(&[(&p, count)], h, 1e-15, &mut ws).unwrap();
                assert!(a.is_spectral(), "{mu} {q} {count}");
                ws.force_inverse = true;
                let b = compose(&[(&p, count)], h, 1e-15, &mut ws).unwrap();
                assert!(!b.is_spectral());
                for eps in [0.0, 0.1, 0.5, 1.0, 2.0, 4.0, 6.0] {
                    let (x, ex) = a.finite_with_error(h, eps);
                    let (y, ey) = b.finite_with_error(h, eps);
                    let tol = ex + ey + a.roundoff + b.roundoff;
                    assert!(
                        (x - y).abs() <= tol,
                        "{mu} {q} {count} {d:?} {eps}: {x} {y}"
                    );
                    // The inverse-FFT path clamps round-off noise below 0 up to 0 (≈ 10⁻¹⁷ per bin,
                    // up to ≈ 4·10⁻¹² in all).
                    assert!((x - y).abs() <= 1e-10 * y.abs() + 1e-11, "{eps}: {x} {y}");
                }
            }
        }
    }
}
