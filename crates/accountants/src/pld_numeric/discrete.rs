//! The integer-valued noise the secure samplers of `dpinfer-mechanisms` draw: the discrete
//! Laplace and the discrete Gaussian on ℤ (Canonne, Kamath, Steinke, "The discrete Gaussian
//! for differential privacy", NeurIPS 2020, Algorithms 2–3), shifted by an **integer**
//! sensitivity `k ≥ 1` (grid units). Their privacy losses live on a lattice; every quantity
//! the connect-the-dots discretisation needs (`Q`-integrals over an interval, tails, the
//! hockey-stick divergence) is an exact finite sum over that lattice:
//!
//! * discrete Laplace (`Q(z) = tanh(1/2β)·e^{−|z|/β}`): loss `(|z| − |z−k|)/β`, atoms at
//!   `(2z − k)/β` for `z = 0..k` (the ends carry the half-lines `z ≤ 0`, `z ≥ k`); interval
//!   sums are **geometric series in closed form** (cost independent of `k` and `β`), written
//!   with `expm1`/`sinh` so that no difference of nearly equal terms is formed;
//! * discrete Gaussian (`Q(z) = e^{−z²/2σ²}/Θ(σ)`): loss `τ(z − k/2)`, `τ = k/σ²` (linear in
//!   `z`, so the loss law is the continuous `N(−μ, 2μ)` density sampled on the lattice
//!   `−μ + τℤ`, `μ = k²/2σ²`), with `Θ` by Poisson summation (Jacobi) or directly. On a
//!   coarse lattice the sums are **enumerated** atom by atom (each term ≥ 0, `expm1` forms;
//!   at most [`MAX_ATOMS`] ≈ `24.4σ + k` points). On the samplers' fine lattices (σ ≥ 2.5·10⁵
//!   grid units, `τ ≤ 2·10⁻⁶`; the mechanisms use σ ≈ 2²³–2²⁴) they are **Euler–Maclaurin**
//!   sums: Gauss–Legendre integrals in `z` between the end lattice points plus the end
//!   corrections up to the third derivative, whose remainder (all intervals of a step
//!   together) is below `10⁻²³` (see `DGauss::fine_possible`); both are tested against each
//!   other where both apply.
//!
//! Both pairs are symmetric (`−ℓ` under `P` has the law of `ℓ` under `Q`), as the
//! add-direction formulas of `base.rs` require.

use super::base::Integrals;

/// Largest number of lattice points of a discrete-Gaussian loss enumerated
/// (`2·⌈12.2σ⌉ + k + 2`).
pub(crate) const MAX_ATOMS: f64 = 33_554_432.0; // 2^25

/// Lattice points beyond `12.2σ` from the centre carry mass below `e^{−74}/Θ < 10⁻³²`
/// each and `< 10⁻³⁰` in total: they are left out of every sum (far below the per-step
/// construction allowance of 10⁻¹⁴ added to δ).
const CUT_SIGMAS: f64 = 12.2;

/// The `Q`-integrals of one atom `(l, w)` on `(x, y)` with `(x, e^x)`, `(y, e^y)`.
#[inline]
fn atom(out: &mut Integrals, l: f64, w: f64, (x, ex): (f64, f64), (y, ey): (f64, f64)) {
    out.m0 += w;
    out.m_lo += w * if x == f64::NEG_INFINITY {
        libm::exp(l)
    } else {
        ex * libm::expm1(l - x)
    };
    out.m_hi += w * ey * -libm::expm1(l - y);
}

/// Lattice index range of the loss interval `(x, y]` (`right_closed`) or `[x, y)` for the
/// index map `l ↦ z(l)` (increasing); `None` for `−∞`.
fn index_range(zx: f64, zy: f64, right_closed: bool) -> (Option<f64>, f64) {
    let a = if zx == f64::NEG_INFINITY {
        None
    } else if right_closed {
        Some(libm::floor(zx) + 1.0)
    } else {
        Some(libm::ceil(zx))
    };
    let b = if right_closed {
        libm::floor(zy)
    } else {
        libm::ceil(zy) - 1.0
    };
    (a, b)
}

// ----- discrete Laplace -----

/// Discrete Laplace of scale `β` shifted by `k` (pair `(DLap(k, β), DLap(0, β))`).
#[derive(Copy, Clone, Debug)]
pub(crate) struct DLap {
    beta: f64,
    k: f64,
    lam: f64,
    rho: f64,
}

impl DLap {
    pub(crate) fn new(beta: f64, k: u64) -> Self {
        #[allow(clippy::cast_precision_loss)]
        let k = k as f64; // ≤ 2^52: exact
        let lam = 1.0 / beta;
        Self {
            beta,
            k,
            lam,
            rho: libm::exp(-lam),
        }
    }
    /// `ε = k/β`, the largest loss.
    pub(crate) fn epsilon(&self) -> f64 {
        self.k * self.lam
    }
    /// `ρ^n = e^{−nλ}`.
    fn rho_pow(&self, n: f64) -> f64 {
        libm::exp(-n * self.lam)
    }
    fn loss(&self, z: f64) -> f64 {
        (2.0 * z - self.k) * self.lam
    }
    /// Index of the largest lattice point with loss ≤ t, clamped to `[−1, k]`.
    fn z_le(&self, t: f64) -> f64 {
        if t == f64::NEG_INFINITY {
            return -1.0;
        }
        if t == f64::INFINITY {
            return self.k;
        }
        libm::floor(0.5 * (self.beta * t + self.k)).clamp(-1.0, self.k)
    }
    pub(crate) fn q_le(&self, t: f64) -> f64 {
        let z = self.z_le(t);
        if z < 0.0 {
            0.0
        } else if z >= self.k {
            1.0
        } else {
            1.0 - self.rho_pow(z + 1.0) / (1.0 + self.rho)
        }
    }
    pub(crate) fn q_gt(&self, t: f64) -> f64 {
        let z = self.z_le(t);
        if z < 0.0 {
            1.0
        } else if z >= self.k {
            0.0
        } else {
            self.rho_pow(z + 1.0) / (1.0 + self.rho)
        }
    }
    pub(crate) fn p_le(&self, t: f64) -> f64 {
        let z = self.z_le(t);
        if z < 0.0 {
            0.0
        } else if z >= self.k {
            1.0
        } else {
            self.rho_pow(self.k - z) / (1.0 + self.rho)
        }
    }
    pub(crate) fn p_gt(&self, t: f64) -> f64 {
        let z = self.z_le(t);
        if z < 0.0 {
            1.0
        } else if z >= self.k {
            0.0
        } else {
            (self.rho - libm::expm1(-(self.k - z) * self.lam)) / (1.0 + self.rho)
        }
    }
    pub(crate) fn hockey(&self, t: f64) -> f64 {
        let e = self.epsilon();
        if t >= e {
            0.0
        } else if t < -e {
            -libm::expm1(t)
        } else {
            self.integrals((t, libm::exp(t)), (e, libm::exp(e)), true)
                .m_lo
                .max(0.0)
        }
    }

    /// `Q`-integrals over `(x, y]` / `[x, y)`: the two end atoms directly, the interior
    /// atoms `z = a..b` (`m = b − a + 1`) by the closed forms (with `c = tanh(λ/2)`,
    /// `d = l_a − x`, `d' = y − l_b`)
    /// `m0 = ρ^a(1 − ρ^m)/(1 + ρ)`,
    /// `D = c ρ^a Σ_{j<m} 2 sinh(jλ) = 2ρ^a sinh((m−1)λ/2) sinh(mλ/2)/cosh(λ/2)`,
    /// `T = c ρ^a Σ_{j<m} e^{jλ} = ρ^{a+1}(e^{mλ} − 1)/(1 + ρ)`,
    /// `m_lo = e^x (expm1(d)·T + D)`, `m_hi = e^y ρ^{m−1} (D − expm1(−d')·m0)`.
    pub(crate) fn integrals(
        &self,
        (x, ex): (f64, f64),
        (y, ey): (f64, f64),
        right_closed: bool,
    ) -> Integrals {
        let mut out = Integrals::default();
        if x.is_nan() || y.is_nan() || x >= y {
            return out;
        }
        let zx = if x == f64::NEG_INFINITY {
            f64::NEG_INFINITY
        } else {
            0.5 * (self.beta * x + self.k)
        };
        let zy = if y == f64::INFINITY {
            f64::INFINITY
        } else {
            0.5 * (self.beta * y + self.k)
        };
        let (a, b) = index_range(zx, zy, right_closed);
        let a = a.unwrap_or(0.0).max(0.0);
        let b = b.min(self.k);
        if a > b {
            return out;
        }
        let ends = ((x, ex), (y, ey));
        let e = self.epsilon();
        if a <= 0.0 {
            atom(&mut out, -e, 1.0 / (1.0 + self.rho), ends.0, ends.1);
        }
        if b >= self.k {
            atom(
                &mut out,
                e,
                self.rho_pow(self.k) / (1.0 + self.rho),
                ends.0,
                ends.1,
            );
        }
        let (ia, ib) = (a.max(1.0), b.min(self.k - 1.0));
        if ia > ib {
            return out;
        }
        let m = ib - ia + 1.0;
        let lam = self.lam;
        let opr = 1.0 + self.rho;
        let ra = self.rho_pow(ia);
        let m0 = ra * -libm::expm1(-m * lam) / opr;
        let d_sum = 2.0 * ra * libm::sinh(0.5 * (m - 1.0) * lam) * libm::sinh(0.5 * m * lam)
            / libm::cosh(0.5 * lam);
        let t_sum = self.rho_pow(ia + 1.0) * libm::expm1(m * lam) / opr;
        out.m0 += m0;
        if x == f64::NEG_INFINITY {
            // Σ P(z) = Σ c ρ^{k−z} = ρ^{k−b}(1 − ρ^m)/(1 + ρ).
            out.m_lo += self.rho_pow(self.k - ib) * -libm::expm1(-m * lam) / opr;
        } else {
            let d = (self.loss(ia) - x).max(0.0);
            out.m_lo += ex * (libm::expm1(d) * t_sum + d_sum);
        }
        let d2 = (y - self.loss(ib)).max(0.0);
        out.m_hi += ey * self.rho_pow(m - 1.0) * (d_sum - libm::expm1(-d2) * m0);
        out
    }
}

// ----- discrete Gaussian -----

/// `Θ(σ) = Σ_{z∈ℤ} e^{−z²/2σ²}`: by the Jacobi/Poisson identity
/// `Θ = √(2π)σ·(1 + 2Σ_{n≥1} e^{−2π²σ²n²})` for σ ≥ 1 (terms beyond n = 4 are below 10⁻⁶⁸),
/// directly (|z| ≤ 40σ + 2) below.
fn theta(sigma: f64) -> f64 {
    if sigma >= 1.0 {
        let s2 = 2.0 * core::f64::consts::PI * core::f64::consts::PI * sigma * sigma;
        let mut c = 0.0;
        for n in (1..=4).rev() {
            c += libm::exp(-s2 * f64::from(n * n));
        }
        libm::sqrt(2.0 * core::f64::consts::PI) * sigma * (1.0 + 2.0 * c)
    } else {
        let mut s = 0.0;
        let top = libm::ceil(40.0 * sigma) + 2.0;
        let mut z = top;
        while z >= 1.0 {
            s += libm::exp(-0.5 * z * z / (sigma * sigma));
            z -= 1.0;
        }
        1.0 + 2.0 * s
    }
}

/// Discrete Gaussian `N_ℤ(0, σ²)` shifted by `k` (pair `(N_ℤ(k, σ²), N_ℤ(0, σ²))`).
#[derive(Copy, Clone, Debug)]
pub(crate) struct DGauss {
    k: f64,
    /// `1/(2σ²)`.
    inv2s2: f64,
    /// `τ/2 = k/(2σ²)`: the loss of `z` is `(2z − k)·τ/2`.
    half_tau: f64,
    ln_theta: f64,
    /// Lattice points kept: `z ∈ [lo, hi]` (`Q` and `P` below `10⁻³²` outside).
    lo: f64,
    hi: f64,
    /// Fine lattice: sums by Euler–Maclaurin (see [`DGauss::fine_possible`]).
    fine: bool,
    /// `√(2π)σ/Θ(σ)` (the lattice sum's normalisation against the continuous density).
    c_theta: f64,
    /// `1/σ²`.
    v: f64,
}

impl DGauss {
    pub(crate) fn new(sigma: f64, k: u64) -> Self {
        #[allow(clippy::cast_precision_loss)]
        let k = k as f64;
        let inv2s2 = 0.5 / (sigma * sigma);
        let cut = libm::ceil(CUT_SIGMAS * sigma) + 1.0;
        let th = theta(sigma);
        Self {
            k,
            inv2s2,
            half_tau: k * inv2s2,
            ln_theta: libm::log(th),
            lo: -cut,
            hi: k + cut,
            fine: Self::fine_possible(sigma, k),
            c_theta: libm::sqrt(2.0 * core::f64::consts::PI) * sigma / th,
            v: 2.0 * inv2s2,
        }
    }
    /// Whether the lattice is fine enough for Euler–Maclaurin sums: with `v = 1/σ²`,
    /// `τ = k/σ²`, the remainders of all interval sums of one step total at most
    /// `(τ⁴ + 12τ²v + 24v²)/720` (each integrand is a Gaussian bump `G` with
    /// `∫|G⁗| ≤ E[w⁴ + 6w²v + 3v²]·∫G`, `w = G′/G`), which must stay below `10⁻²³` so that
    /// even after the connect-the-dots division by `1 − e^{−h}` (`h ≥ 10⁻⁷`) it is far below
    /// the per-step allowance of 10⁻¹⁴: σ ≥ 2.5·10⁵ and τ ≤ 2·10⁻⁶ (the samplers' σ ≈ 2²⁴).
    pub(crate) fn fine_possible(sigma: f64, k: f64) -> bool {
        let v = 1.0 / (sigma * sigma);
        let tau = k * v;
        sigma >= 2.5e5
            && tau <= 2e-6
            && (tau * tau * tau * tau + 12.0 * tau * tau * v + 24.0 * v * v) / 720.0 <= 1e-23
    }
    /// Number of lattice points enumerated (0 on a fine lattice, summed in closed form).
    pub(crate) fn atoms(sigma: f64, k: u64) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let k = k as f64;
        if Self::fine_possible(sigma, k) {
            return 0.0;
        }
        2.0 * (libm::ceil(CUT_SIGMAS * sigma) + 1.0) + k + 1.0
    }
    /// PLD mean `μ = k²/(2σ²)` of the continuous analogue.
    pub(crate) fn mu(&self) -> f64 {
        self.k * self.half_tau
    }
    /// Lattice spacing of the loss, `τ = k/σ²`.
    pub(crate) fn tau(&self) -> f64 {
        2.0 * self.half_tau
    }
    fn loss(&self, z: f64) -> f64 {
        (2.0 * z - self.k) * self.half_tau
    }
    fn index(&self, l: f64) -> f64 {
        if l.is_infinite() {
            return l;
        }
        0.5 * (l / self.half_tau + self.k)
    }
    /// `Q(z)`.
    fn q(&self, z: f64) -> f64 {
        libm::exp(-z * z * self.inv2s2 - self.ln_theta)
    }
    /// `Σ_{z=a}^{b} f(z)` over the kept lattice.
    fn sum(&self, a: f64, b: f64, mut f: impl FnMut(f64) -> f64) -> f64 {
        let (a, b) = (a.max(self.lo), b.min(self.hi));
        let mut s = dpinfer_math::NeumaierSum::new();
        let mut z = a;
        while z <= b {
            s.add(f(z));
            z += 1.0;
        }
        s.sum()
    }
    /// Index of the largest lattice point with loss ≤ t.
    fn z_le(&self, t: f64) -> f64 {
        libm::floor(self.index(t))
    }
    pub(crate) fn q_le(&self, t: f64) -> f64 {
        let z = self.z_le(t);
        if self.fine {
            return self.em_tail(z, Tail::QLe);
        }
        if z < 0.0 {
            self.sum(self.lo, z, |z| self.q(z))
        } else {
            1.0 - self.sum(z + 1.0, self.hi, |z| self.q(z))
        }
    }
    pub(crate) fn q_gt(&self, t: f64) -> f64 {
        let z = self.z_le(t);
        if self.fine {
            return self.em_tail(z, Tail::QGt);
        }
        if z < 0.0 {
            1.0 - self.sum(self.lo, z, |z| self.q(z))
        } else {
            self.sum(z + 1.0, self.hi, |z| self.q(z))
        }
    }
    /// `P(ℓ ≤ t)` with `P(z) = Q(z − k)`.
    pub(crate) fn p_le(&self, t: f64) -> f64 {
        let z = self.z_le(t);
        if self.fine {
            return self.em_tail(z, Tail::PLe);
        }
        if z < self.k {
            self.sum(self.lo, z, |z| self.q(z - self.k))
        } else {
            1.0 - self.sum(z + 1.0, self.hi, |z| self.q(z - self.k))
        }
    }
    pub(crate) fn p_gt(&self, t: f64) -> f64 {
        let z = self.z_le(t);
        if self.fine {
            return self.em_tail(z, Tail::PGt);
        }
        if z < self.k {
            1.0 - self.sum(self.lo, z, |z| self.q(z - self.k))
        } else {
            self.sum(z + 1.0, self.hi, |z| self.q(z - self.k))
        }
    }
    /// `Σ_{ℓ>t} Q(e^ℓ − e^t)`; below the centre by the complement
    /// `(1 − e^t) + Σ_{ℓ≤t} Q(e^t − e^ℓ)` (both parts ≥ 0).
    pub(crate) fn hockey(&self, t: f64) -> f64 {
        if t == f64::NEG_INFINITY {
            return 1.0;
        }
        if t == f64::INFINITY {
            return 0.0;
        }
        let z = self.z_le(t);
        if self.fine {
            return self.em_hockey(z + 1.0, t).max(0.0);
        }
        let et = libm::exp(t);
        let v = if t >= 0.0 {
            et * self.sum(z + 1.0, self.hi, |z| {
                self.q(z) * libm::expm1(self.loss(z) - t)
            })
        } else {
            -libm::expm1(t)
                + et * self.sum(self.lo, z, |z| self.q(z) * -libm::expm1(self.loss(z) - t))
        };
        v.max(0.0)
    }
    /// `Q`-integrals over `(x, y]` / `[x, y)` by enumeration.
    pub(crate) fn integrals(
        &self,
        (x, ex): (f64, f64),
        (y, ey): (f64, f64),
        right_closed: bool,
    ) -> Integrals {
        let mut out = Integrals::default();
        if x.is_nan() || y.is_nan() || x >= y {
            return out;
        }
        let (a, b) = index_range(self.index(x), self.index(y), right_closed);
        if self.fine {
            return self.em_integrals(a, b, (x, ex), (y, ey));
        }
        let a = a.unwrap_or(self.lo).max(self.lo);
        let b = b.min(self.hi);
        let mut z = a;
        while z <= b {
            atom(&mut out, self.loss(z), self.q(z), (x, ex), (y, ey));
            z += 1.0;
        }
        out.m_lo = out.m_lo.max(0.0);
        out.m_hi = out.m_hi.max(0.0);
        out
    }
}

/// Which tail sum [`DGauss::em_tail`] computes.
#[derive(Copy, Clone, Debug)]
enum Tail {
    QLe,
    QGt,
    PLe,
    PGt,
}

/// Values and derivatives `(g, g′, g‴)` of an integrand at a lattice point.
type Jet = (f64, f64, f64);

impl DGauss {
    /// The continuous analogue `N(−μ, 2μ)` of the loss (its density sampled on the lattice
    /// is the discrete loss law, up to the factor `c_Θ/√(2π)σ`).
    fn continuous(&self) -> super::Mechanism {
        super::Mechanism::Gaussian { mu: self.mu() }
    }
    /// `w₀ = (ln Q)′ = −z/σ²` and `w₁ = (ln Q e^ℓ)′ = τ − z/σ²` at `z`.
    fn slopes(&self, z: f64) -> (f64, f64) {
        let w0 = -z * self.v;
        (w0, w0 + self.tau())
    }
    /// `w³ − 3wv` (so that `G‴ = (w³ − 3wv)G` for a Gaussian bump with `G′ = wG`).
    fn cube(&self, w: f64) -> f64 {
        w * w * w - 3.0 * w * self.v
    }
    /// Euler–Maclaurin corrections `Σ_{z=a}^{b} g − ∫_a^b g` from the jets at the two ends
    /// (`None`: that end is at infinity, where every derivative vanishes).
    fn em_ends(a: Option<Jet>, b: Option<Jet>) -> f64 {
        let (ga, d1a, d3a) = a.unwrap_or((0.0, 0.0, 0.0));
        let (gb, d1b, d3b) = b.unwrap_or((0.0, 0.0, 0.0));
        0.5 * (ga + gb) + (d1b - d1a) / 12.0 - (d3b - d3a) / 720.0
    }
    /// Jet of `Q`.
    fn jet_q(&self, z: f64) -> Jet {
        let q = self.q(z);
        let (w0, _) = self.slopes(z);
        (q, w0 * q, self.cube(w0) * q)
    }
    /// Jet of `P = Q·e^ℓ`.
    fn jet_p(&self, z: f64) -> Jet {
        let p = self.q(z - self.k);
        let (_, w1) = self.slopes(z);
        (p, w1 * p, self.cube(w1) * p)
    }
    /// Jet of `Q·(e^ℓ − e^x)` (`e^x·Q·expm1(ℓ − x)`, no cancellation).
    fn jet_lo(&self, z: f64, (x, ex): (f64, f64)) -> Jet {
        let q = self.q(z);
        let e = libm::expm1(self.loss(z) - x);
        let (w0, w1) = self.slopes(z);
        let qe = q * ex;
        (
            qe * e,
            qe * (self.tau() + w1 * e),
            qe * (self.cube(w1) * (1.0 + e) - self.cube(w0)),
        )
    }
    /// Jet of `Q·(e^y − e^ℓ)`.
    fn jet_hi(&self, z: f64, (y, ey): (f64, f64)) -> Jet {
        let q = self.q(z);
        let e = libm::expm1(self.loss(z) - y);
        let (w0, w1) = self.slopes(z);
        let qe = q * ey;
        (
            -qe * e,
            -qe * (self.tau() + w1 * e),
            qe * (self.cube(w0) - self.cube(w1) * (1.0 + e)),
        )
    }

    /// Interval sums over the lattice points `z = a..=b` (`a = None`: from −∞) by
    /// Euler–Maclaurin: the continuous integrals of [`super::Mechanism::Gaussian`]'s
    /// quadrature between the end points' losses (scaled by `c_Θ`), plus the end corrections.
    fn em_integrals(
        &self,
        a: Option<f64>,
        b: f64,
        (x, ex): (f64, f64),
        (y, ey): (f64, f64),
    ) -> Integrals {
        let mut out = Integrals::default();
        if a.is_some_and(|a| a > b) {
            return out;
        }
        let cg = self.continuous();
        let lb = self.loss(b);
        let elb = libm::exp(lb);
        let c = self.c_theta;
        if let Some(a) = a {
            if a >= b {
                let mut one = Integrals::default();
                atom(&mut one, lb, self.q(b), (x, ex), (y, ey));
                return one;
            }
            // ∫_a^b in z (exact end points; the loss is only used inside expm1) by
            // composite Gauss–Legendre: pieces ≤ σ/8 (4 points), one 3-point rule if the
            // span is below σ/64.
            let sigma = libm::sqrt(1.0 / self.v);
            let d = b - a;
            let (mut i0, mut ilo, mut ihi) = (0.0, 0.0, 0.0);
            let mut node = |zn: f64, wt: f64| {
                let q = self.q(zn) * wt;
                let l = self.loss(zn);
                i0 += q;
                ilo += q * libm::expm1(l - x);
                ihi += q * -libm::expm1(l - y);
            };
            if d * 64.0 <= sigma {
                let c = 0.5 * (a + b);
                for &(t, wt) in &super::base::GL3 {
                    node(c + 0.5 * d * t, 0.5 * d * wt);
                }
            } else {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let pieces = (libm::ceil(d * 8.0 / sigma) as usize).clamp(1, 1 << 16);
                #[allow(clippy::cast_precision_loss)]
                let w = d / pieces as f64;
                for p in 0..pieces {
                    #[allow(clippy::cast_precision_loss)]
                    let c = a + (p as f64 + 0.5) * w;
                    for &(t, wt) in &super::base::GL4 {
                        node(c + 0.5 * w * t, 0.5 * w * wt);
                    }
                }
            }
            out.m0 = i0 + Self::em_ends(Some(self.jet_q(a)), Some(self.jet_q(b)));
            out.m_lo = ex * ilo
                + Self::em_ends(Some(self.jet_lo(a, (x, ex))), Some(self.jet_lo(b, (x, ex))));
            out.m_hi = ey * ihi
                + Self::em_ends(Some(self.jet_hi(a, (y, ey))), Some(self.jet_hi(b, (y, ey))));
        } else {
            // From −∞: Σ Q, Σ P = Σ Q e^ℓ, and Σ Q(e^y − e^ℓ) = (e^y − e^{l_b})ΣQ +
            // e^{l_b}·H_{e^{−l_b}}(P‖Q) (continuous part, by the pair's symmetry).
            let m0 = c * cg.q_le(lb);
            out.m0 = m0 + Self::em_ends(None, Some(self.jet_q(b)));
            out.m_lo = c * cg.p_le(lb) + Self::em_ends(None, Some(self.jet_p(b)));
            out.m_hi = c * elb * cg.hockey(-lb)
                + ey * -libm::expm1(lb - y) * m0
                + Self::em_ends(None, Some(self.jet_hi(b, (y, ey))));
        }
        out.m0 = out.m0.max(0.0);
        out.m_lo = out.m_lo.max(0.0);
        out.m_hi = out.m_hi.max(0.0);
        out
    }

    /// Tail sums of `Q` or `P` up to / beyond the lattice point `z` (largest with loss ≤ t).
    fn em_tail(&self, z: f64, which: Tail) -> f64 {
        if z.is_infinite() {
            let below = z < 0.0;
            return match which {
                Tail::QLe | Tail::PLe => f64::from(u8::from(!below)),
                Tail::QGt | Tail::PGt => f64::from(u8::from(below)),
            };
        }
        let cg = self.continuous();
        let c = self.c_theta;
        let lz = self.loss(z);
        let la = self.loss(z + 1.0);
        let v = match which {
            Tail::QLe => c * cg.q_le(lz) + Self::em_ends(None, Some(self.jet_q(z))),
            Tail::QGt => c * cg.q_gt(la) + Self::em_ends(Some(self.jet_q(z + 1.0)), None),
            Tail::PLe => c * cg.p_le(lz) + Self::em_ends(None, Some(self.jet_p(z))),
            Tail::PGt => c * cg.p_gt(la) + Self::em_ends(Some(self.jet_p(z + 1.0)), None),
        };
        v.clamp(0.0, 1.0)
    }

    /// `Σ_{z ≥ a} Q(e^ℓ − e^t)`: the continuous `H_{e^{l_a}} + (e^{l_a} − e^t)·Q(ℓ > l_a)`
    /// plus the lower-end correction.
    fn em_hockey(&self, a: f64, t: f64) -> f64 {
        let cg = self.continuous();
        let la = self.loss(a);
        let et = libm::exp(t);
        self.c_theta * (cg.hockey(la) + et * libm::expm1(la - t) * cg.q_gt(la))
            + Self::em_ends(Some(self.jet_lo(a, (t, et))), None)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp, clippy::cast_precision_loss)]
    use super::*;

    /// Closed-form discrete-Laplace interval sums against atom-by-atom sums, and the
    /// identity `m_lo + m_hi = (e^y − e^x)·m0`.
    #[test]
    fn discrete_laplace_closed_forms_match_enumeration() {
        for (beta, k) in [(3.7, 9u64), (0.8, 4), (50.0, 120)] {
            let d = DLap::new(beta, k);
            let lam = 1.0 / beta;
            let rho = libm::exp(-lam);
            let atoms: alloc::vec::Vec<(f64, f64)> = (0..=k)
                .map(|z| {
                    let z = z as f64;
                    let kf = k as f64;
                    let w = if z == 0.0 {
                        1.0 / (1.0 + rho)
                    } else if z == kf {
                        libm::exp(-kf * lam) / (1.0 + rho)
                    } else {
                        libm::tanh(0.5 * lam) * libm::exp(-z * lam)
                    };
                    ((2.0 * z - kf) * lam, w)
                })
                .collect();
            let e = d.epsilon();
            // Cuts off the lattice (an atom exactly on a cut may go to either side).
            let cuts = [
                -e - 1.0,
                -0.93 * e,
                -0.71 * e,
                -0.1031,
                0.0371,
                0.33 * e,
                0.91 * e,
                e + 0.5,
            ];
            for (i, &x) in cuts.iter().enumerate() {
                for &y in &cuts[i + 1..] {
                    for rc in [true, false] {
                        let got = d.integrals((x, libm::exp(x)), (y, libm::exp(y)), rc);
                        let mut want = Integrals::default();
                        for &(l, w) in &atoms {
                            let inside = if rc { x < l && l <= y } else { x <= l && l < y };
                            if inside {
                                atom(&mut want, l, w, (x, libm::exp(x)), (y, libm::exp(y)));
                            }
                        }
                        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs() + 1e-300;
                        assert!(close(got.m0, want.m0), "{beta} {k} ({x},{y}] m0");
                        assert!(close(got.m_lo, want.m_lo), "{beta} {k} ({x},{y}] lo");
                        assert!(close(got.m_hi, want.m_hi), "{beta} {k} ({x},{y}] hi");
                        let ident = (libm::exp(y) - libm::exp(x)) * got.m0;
                        assert!(close(got.m_lo + got.m_hi, ident));
                    }
                }
            }
            // Tails and the hockey-stick divergence against the atoms.
            for &t in &cuts {
                let q_gt: f64 = atoms.iter().filter(|a| a.0 > t).map(|a| a.1).sum();
                let p_le: f64 = atoms
                    .iter()
                    .filter(|a| a.0 <= t)
                    .map(|a| a.1 * libm::exp(a.0))
                    .sum();
                let h: f64 = atoms
                    .iter()
                    .filter(|a| a.0 > t)
                    .map(|a| a.1 * (libm::exp(a.0) - libm::exp(t)))
                    .sum();
                assert!((d.q_gt(t) - q_gt).abs() < 1e-14);
                assert!((d.q_le(t) - (1.0 - q_gt)).abs() < 1e-14);
                assert!((d.p_le(t) - p_le).abs() < 1e-14);
                assert!((d.p_gt(t) - (1.0 - p_le)).abs() < 1e-14);
                assert!((d.hockey(t) - h).abs() < 1e-13, "{t}: {} {h}", d.hockey(t));
            }
        }
    }

    #[test]
    fn theta_matches_direct_sum() {
        for s in [0.3, 0.99, 1.0, 2.5, 17.0] {
            let mut direct = 1.0;
            for z in 1..2000 {
                direct += 2.0 * libm::exp(-0.5 * f64::from(z) * f64::from(z) / (s * s));
            }
            assert!((theta(s) - direct).abs() <= 1e-14 * direct, "{s}");
        }
    }

    /// Euler–Maclaurin sums on a fine lattice against atom-by-atom enumeration.
    #[test]
    fn discrete_gaussian_euler_maclaurin_matches_enumeration() {
        for (sigma, k) in [(2.6e5, 120_000u64)] {
            let fine = DGauss::new(sigma, k);
            assert!(fine.fine);
            let exact = DGauss {
                fine: false,
                ..fine
            };
            let mu = fine.mu();
            let sd = libm::sqrt(2.0 * mu);
            // Relative 10⁻¹¹ (the loss of a lattice point is rounded once, which moves
            // `expm1(ℓ − x)` by ~10⁻¹¹ relative next to x) or 10⁻²⁰ absolute.
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-11 * b.abs() + 1e-20;
            for (x, y) in [
                (-mu - 0.3 * sd, -mu + 1.1e-4),
                (-0.01, 0.2),
                (mu, mu + 1.3e-4),
                (mu + 3.0 * sd, mu + 3.0 * sd + 1.7e-3),
                (mu + 5.0 * sd, mu + 5.0 * sd + 2.1e-4),
                (f64::NEG_INFINITY, -mu - 2.0 * sd),
                (f64::NEG_INFINITY, 0.37),
            ] {
                let ends = ((x, libm::exp(x)), (y, libm::exp(y)));
                let (f, e) = (
                    fine.integrals(ends.0, ends.1, true),
                    exact.integrals(ends.0, ends.1, true),
                );
                assert!(close(f.m0, e.m0), "({x}, {y}] m0 {} {}", f.m0, e.m0);
                assert!(close(f.m_lo, e.m_lo), "({x}, {y}] lo {} {}", f.m_lo, e.m_lo);
                assert!(close(f.m_hi, e.m_hi), "({x}, {y}] hi {} {}", f.m_hi, e.m_hi);
            }
            for t in [
                -mu - 5.0 * sd,
                -mu,
                0.0,
                0.5 * mu,
                mu + 2.0 * sd,
                mu + 7.0 * sd,
            ] {
                for (a, b) in [
                    (fine.q_le(t), exact.q_le(t)),
                    (fine.q_gt(t), exact.q_gt(t)),
                    (fine.p_le(t), exact.p_le(t)),
                    (fine.p_gt(t), exact.p_gt(t)),
                    (fine.hockey(t), exact.hockey(t)),
                ] {
                    assert!((a - b).abs() <= 1e-11 * b + 1e-16, "t {t}: {a} {b}");
                }
            }
        }
    }
}
