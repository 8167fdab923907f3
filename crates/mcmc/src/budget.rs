//! Iteration budgets: how many iterations a private sampler may run for a target (ε, δ).
//!
//! Every function returns the **largest** iteration count whose privacy guarantee is at most
//! the requested (ε, δ). The numbers come from `dpinfer-accountants` (thesis Theorems 6–9
//! max-steps, WBK19 subsampled RDP with the sum through `j = α`, exact Gaussian PLD, RDP →
//! (ε, δ) conversions), which rounds every bound to the safe side; this module adds the
//! sampler-facing pieces (DP HMC with fresh start gradients, subsampled-penalty iterations,
//! ε spent so far).
//!
//! # Privacy
//!
//! Neighbouring relation: **substitute one row** (datasets of the same, public size `n`
//! differing in one row), as in the thesis (§2.1, Definition 2) for DP penalty, DP HMC and
//! the sampling-without-replacement amplification of WBK19 (DP Barker, subsampled penalty).
//!
//! # References
//!
//! Räisä (2021) thesis, Theorems 1, 4, 6, 7, 8, 9 and §5.2; Bun & Steinke (2016);
//! Sommer, Meiser & Mohammadi (2019) Lemmas 11–12; Wang, Balle & Kasiviswanathan (2019)
//! Theorem 9 (WBK19); Heikkilä et al. (2019) (HJDH19).

use dpinfer_accountants::calibrate::MaxStepsRequest;
use dpinfer_accountants::{AccountantError, ConversionRule, calibrate, convert, curves, pld};

use crate::McmcError;
use crate::error::{open_unit, positive};

/// Largest order tried by the RDP-based budgets.
pub const MAX_RDP_ORDER: u32 = dpinfer_accountants::MAX_INTEGER_ORDER;

fn check_eps_delta(epsilon: f64, delta: f64) -> Result<(), McmcError> {
    positive("epsilon", epsilon)?;
    open_unit("delta", delta)?;
    Ok(())
}

fn rows(n: usize) -> Result<u64, McmcError> {
    if n == 0 {
        return Err(McmcError::InvalidSize {
            name: "n",
            value: n,
        });
    }
    u64::try_from(n).map_err(|_| McmcError::InvalidSize {
        name: "n",
        value: n,
    })
}

/// zCDP budget ρ whose (ε, δ) conversion (thesis Theorem 1) meets the target:
/// `ρ = (√(ε − ln δ) − √(−ln δ))²`, rounded down (accountants `convert::rho_for_approx`).
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] unless `ε > 0` is finite and `0 < δ < 1`.
pub fn zcdp_rho(epsilon: f64, delta: f64) -> Result<f64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    Ok(convert::rho_for_approx(epsilon, delta)?)
}

/// ε of a ρ-zCDP mechanism at δ (thesis Theorem 1): `ρ + 2√(ρ ln(1/δ))`, nudged up by a
/// relative 1e-12.
fn zcdp_epsilon(rho: f64, delta: f64) -> Result<f64, McmcError> {
    if !(rho.is_finite() && rho >= 0.0) {
        return Err(McmcError::param("rho", rho));
    }
    open_unit("delta", delta)?;
    Ok((rho + 2.0 * libm::sqrt(rho * -libm::log(delta))) * (1.0 + 1e-12))
}

/// δ(ε) of a Gaussian privacy-loss distribution `N(m, 2m)` (SMM19 Lemma 12; thesis
/// Theorems 4 and 7), rounded up (accountants `pld::delta_for_epsilon`).
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] unless `ε ≥ 0` and `m ≥ 0` are finite.
pub fn gaussian_pld_delta(epsilon: f64, m: f64) -> Result<f64, McmcError> {
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(McmcError::param("epsilon", epsilon));
    }
    if !(m.is_finite() && m >= 0.0) {
        return Err(McmcError::param("m", m));
    }
    Ok(pld::delta_for_epsilon(m, epsilon)?)
}

/// Smallest ε with `δ(ε) ≤ delta` for the PLD `N(m, 2m)` (rounded up).
fn gaussian_pld_epsilon(m: f64, delta: f64) -> Result<f64, McmcError> {
    open_unit("delta", delta)?;
    if !(m.is_finite() && m >= 0.0) {
        return Err(McmcError::param("m", m));
    }
    Ok(pld::epsilon_for_delta(m, delta)?)
}

/// Largest `k ≤ 2^52` with `ok(k)`, for a predicate that is monotone (true then false):
/// [`dpinfer_math::largest_true`].
fn largest_k(ok: impl FnMut(u64) -> Result<bool, McmcError>) -> Result<u64, McmcError> {
    dpinfer_math::largest_true(1 << 52, ok)
}

/// Subsampled RDP of WBK19 Theorem 9 (sampling without replacement, ratio `q`) as written in
/// thesis Theorems 8–9, for integer order `alpha ≥ 2`, with the sum through `j = α`
/// inclusive (accountants `curves::wor_rdp`, which also takes the minimum with the
/// unsubsampled `ε'(α)`).
///
/// # Errors
///
/// [`McmcError::Accountant`] for `q ∉ (0, 1]`, `alpha < 2`, or a NaN / negative `ε'(j)`.
pub fn wbk19_subsampled_rdp(
    alpha: u32,
    q: f64,
    base: impl Fn(u32) -> f64,
) -> Result<f64, McmcError> {
    Ok(curves::wor_rdp(q, u64::from(alpha), |j| {
        let v = u32::try_from(j).map_or(f64::NAN, &base);
        if v.is_nan() || v < 0.0 {
            Err(AccountantError::InvalidParameter {
                name: "base rdp",
                value: v,
            })
        } else {
            Ok(v)
        }
    })?)
}

fn sampling_ratio(n: usize, batch: usize) -> Result<f64, McmcError> {
    rows(n)?;
    if batch == 0 || batch > n {
        return Err(McmcError::InvalidSize {
            name: "batch",
            value: batch,
        });
    }
    #[allow(clippy::cast_precision_loss)]
    let q = (batch as f64 / n as f64).next_up().min(1.0);
    Ok(q)
}

/// Per-iteration RDP of subsampled DP penalty (thesis Theorem 9): WBK19 with base
/// `ε'(α) = α/(2τ)` and `q = |B|/n`.
///
/// # Errors
///
/// Invalid τ, `alpha < 2`, `batch = 0` or `batch > n`.
pub fn subsampled_penalty_rdp(
    alpha: u32,
    tau: f64,
    n: usize,
    batch: usize,
) -> Result<f64, McmcError> {
    positive("tau", tau)?;
    let q = sampling_ratio(n, batch)?;
    wbk19_subsampled_rdp(alpha, q, |j| f64::from(j) / (2.0 * tau))
}

/// ε at δ after `k` compositions of a mechanism with per-step RDP `rdp(α)` on orders
/// `2..=max_order` (by default the best of Mironov's and Balle et al.'s conversions;
/// accountants `convert::rdp_to_approx_with`).
fn rdp_epsilon(
    k: u64,
    delta: f64,
    per_step: &[(f64, f64)],
    rule: ConversionRule,
) -> Result<f64, McmcError> {
    #[allow(clippy::cast_precision_loss)]
    let kf = k as f64;
    let mut orders = alloc_free::Buf::new();
    let mut values = alloc_free::Buf::new();
    for &(a, r) in per_step {
        orders.push(a);
        values.push(kf * r);
    }
    Ok(convert::rdp_to_approx_with(orders.as_slice(), values.as_slice(), delta, rule)?.epsilon)
}

/// Fixed-capacity buffers (no allocator needed) for the order grid.
mod alloc_free {
    pub(super) struct Buf {
        data: [f64; super::MAX_RDP_ORDER as usize],
        len: usize,
    }
    impl Buf {
        pub(super) fn new() -> Self {
            Self {
                data: [0.0; super::MAX_RDP_ORDER as usize],
                len: 0,
            }
        }
        pub(super) fn push(&mut self, x: f64) {
            if self.len < self.data.len() {
                self.data[self.len] = x;
                self.len += 1;
            }
        }
        pub(super) fn as_slice(&self) -> &[f64] {
            &self.data[..self.len]
        }
    }
}

/// Per-step RDP curve on orders `2..=top` (at most `MAX_RDP_ORDER − 1` orders).
fn curve(
    top: u32,
    rdp: impl Fn(u32) -> Result<f64, McmcError>,
) -> Result<([(f64, f64); MAX_RDP_ORDER as usize], usize), McmcError> {
    let mut out = [(0.0, 0.0); MAX_RDP_ORDER as usize];
    let mut len = 0;
    for a in 2..=top.min(MAX_RDP_ORDER) {
        out[len] = (f64::from(a), rdp(a)?);
        len += 1;
    }
    Ok((out, len))
}

/// Base RDP of one DP Barker test on a batch (thesis Theorem 8; HJDH19):
/// `ε'(α) = 5/(2|B|) + ln(2|B|/(|B| − 5α))/(2(α−1)) + 2α/(|B| − 5α)`, valid for `α < |B|/5`.
///
/// # Errors
///
/// `α < 2` or `5α ≥ |B|`.
pub fn barker_base_rdp(alpha: u32, batch: usize) -> Result<f64, McmcError> {
    Ok(calibrate::dp_barker_base_rdp(
        rows(batch)?,
        u64::from(alpha),
    )?)
}

/// Per-iteration RDP of DP Barker: WBK19 amplification of [`barker_base_rdp`] with
/// `q = |B|/n` (thesis Theorem 8).
///
/// # Errors
///
/// As [`barker_base_rdp`] plus invalid sizes.
pub fn barker_rdp(alpha: u32, n: usize, batch: usize) -> Result<f64, McmcError> {
    Ok(calibrate::dp_barker_rdp(
        rows(batch)?,
        rows(n)?,
        u64::from(alpha),
    )?)
}

fn barker_top(batch: usize) -> Result<u32, McmcError> {
    let top = u32::try_from(batch.saturating_sub(1) / 5)
        .unwrap_or(u32::MAX)
        .min(MAX_RDP_ORDER);
    if top < 2 {
        return Err(McmcError::InvalidSize {
            name: "batch",
            value: batch,
        });
    }
    Ok(top)
}

/// How DP HMC's gradient releases are charged (thesis §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GradientCharging {
    /// A fresh noisy gradient at the start of every trajectory: `k(L+1)` gradient releases.
    Fresh,
    /// Algorithm 3: the last noisy gradient of an accepted trajectory (or the previous start
    /// gradient after a reject) is reused: `kL + 1` releases per chain.
    Reuse,
}

/// Which bound converts a DP penalty / DP HMC budget into iterations (with the `serde`
/// feature: `"zcdp"` or `"pld"`, as [`Accounting::from_name`] reads them; any other name is
/// refused with a message naming both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Accounting {
    /// zCDP (thesis Theorem 6; Bun & Steinke 2016): closed form, looser.
    Zcdp,
    /// Exact Gaussian privacy-loss distribution (thesis Theorem 7; SMM19): tighter.
    Pld,
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Accounting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// Reads a name through [`Accounting::from_name`].
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = Accounting;

            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("\"pld\" or \"zcdp\"")
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Accounting, E> {
                Accounting::from_name(s).ok_or_else(|| {
                    E::custom(format_args!(
                        "accounting must be \"pld\" or \"zcdp\", got {s:?}"
                    ))
                })
            }
        }
        d.deserialize_str(Name)
    }
}

impl Accounting {
    /// `"zcdp"` or `"pld"` (`None` for anything else).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "zcdp" => Some(Self::Zcdp),
            "pld" => Some(Self::Pld),
            _ => None,
        }
    }

    /// The accountants' calibration method of the same name.
    #[must_use]
    pub fn method(self) -> calibrate::Method {
        match self {
            Self::Zcdp => calibrate::Method::Zcdp,
            Self::Pld => calibrate::Method::Pld,
        }
    }
}

/// ε spent after composing Gaussian releases of total `m = Σ Δ²/(2σ²)`, at `delta`: the
/// zCDP conversion (thesis Theorem 1) or the exact Gaussian PLD (SMM19 Lemma 12).
///
/// # Errors
///
/// Invalid δ or `m`.
pub fn gaussian_epsilon(accounting: Accounting, m: f64, delta: f64) -> Result<f64, McmcError> {
    match accounting {
        Accounting::Zcdp => zcdp_epsilon(m, delta),
        Accounting::Pld => gaussian_pld_epsilon(m, delta),
    }
}

/// Gradient releases of `chains` DP HMC chains that run `k` iterations **in total** with
/// `leapfrog` steps: `k(L+1)` (`Fresh`) or `kL + chains` (`Reuse`: each chain releases its own
/// start gradient, Algorithm 3's "+1").
#[must_use]
pub fn gradient_releases(k: u64, leapfrog: u64, charging: GradientCharging, chains: u64) -> u64 {
    match charging {
        GradientCharging::Fresh => k.saturating_mul(leapfrog + 1),
        GradientCharging::Reuse => k.saturating_mul(leapfrog).saturating_add(chains),
    }
}

/// Per-release PLD means / zCDP costs `(ρ_l, ρ_g) = (1/(2τ_l²n), 1/(2τ_g²n))`, rounded up.
fn hmc_units(tau_l: f64, tau_g: f64, n: usize) -> Result<(f64, f64), McmcError> {
    positive("tau_l", tau_l)?;
    positive("tau_g", tau_g)?;
    #[allow(clippy::cast_precision_loss)]
    let nf = rows(n)? as f64;
    let rl = (1.0 / (2.0 * tau_l * tau_l * nf)) * (1.0 + 1e-12);
    let rg = (1.0 / (2.0 * tau_g * tau_g * nf)) * (1.0 + 1e-12);
    positive("rho_l", rl)?;
    positive("rho_g", rg)?;
    Ok((rl, rg))
}

/// What one iteration of a private sampler releases, with the public parameters and the
/// accounting its budget needs: **one** description from which the iteration limit
/// ([`Mechanism::iterations`]), the ε spent ([`Mechanism::epsilon`]) and the multi-chain
/// limit ([`Mechanism::chains_iterations`]) all follow.
///
/// # Privacy
///
/// Substitute-one-row neighbours with public `n` for every variant (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mechanism {
    /// DP penalty (thesis Theorems 6–7): one Gaussian release of noise multiplier `τ n^α`
    /// per iteration; `k` iterations cost `m = k/(2τ²n^{2α})`.
    Penalty {
        /// Noise scale τ.
        tau: f64,
        /// Rows.
        n: usize,
        /// Exponent α of `n`.
        n_exponent: f64,
        /// zCDP or exact Gaussian PLD.
        accounting: Accounting,
    },
    /// DP HMC (thesis §5.2): per iteration one ratio release (`ρ_l = 1/(2τ_l²n)`) and `L + 1`
    /// (`Fresh`) or `L` (`Reuse`, plus one start gradient per chain) gradient releases
    /// (`ρ_g = 1/(2τ_g²n)`).
    Hmc {
        /// Noise scale of the ratio releases τ_l.
        tau_l: f64,
        /// Noise scale of the gradient releases τ_g.
        tau_g: f64,
        /// Rows.
        n: usize,
        /// Leapfrog steps per iteration L.
        leapfrog: u32,
        /// How gradient releases are charged.
        charging: GradientCharging,
        /// zCDP or exact Gaussian PLD.
        accounting: Accounting,
    },
    /// Subsampled DP penalty (thesis Theorem 9): per iteration one `(α, α/(2τ))`-RDP release
    /// on a batch drawn without replacement, amplified by WBK19 with `q = |B|/n`, over orders
    /// `2..=MAX_RDP_ORDER`.
    SubsampledPenalty {
        /// Noise variance multiplier τ.
        tau: f64,
        /// Rows.
        n: usize,
        /// Batch size |B|.
        batch: usize,
        /// RDP → (ε, δ) conversion.
        rule: ConversionRule,
    },
    /// DP Barker (thesis Theorem 8; HJDH19): per iteration one Barker test on a batch,
    /// WBK19-amplified, over orders `2 ≤ α < |B|/5` (at most [`MAX_RDP_ORDER`]).
    Barker {
        /// Rows.
        n: usize,
        /// Batch size |B|.
        batch: usize,
        /// RDP → (ε, δ) conversion.
        rule: ConversionRule,
    },
}

impl Mechanism {
    /// The largest iteration count whose guarantee is at most (ε, δ) (DP penalty: thesis
    /// Theorem 6 `⌊2τ²n^{2α}ρ⌋` or Theorem 7's largest `k` with `δ(ε; kμ) ≤ δ`; DP HMC:
    /// `⌊(ρ − ρ_g)/(ρ_l + Lρ_g)⌋` for `Reuse` under zCDP, else the largest `k` whose cost
    /// meets the target; subsampled penalty and DP Barker: the largest `k` whose composed RDP
    /// converts to at most ε at δ).
    ///
    /// # Errors
    ///
    /// Invalid ε, δ or mechanism parameters (`n = 0`, τ ≤ 0, batch outside `1..=n`, DP Barker
    /// `|B| ≤ 10`, `leapfrog = 0`, …).
    pub fn iterations(&self, epsilon: f64, delta: f64) -> Result<u64, McmcError> {
        check_eps_delta(epsilon, delta)?;
        match *self {
            Self::Penalty {
                tau,
                n,
                n_exponent,
                accounting,
            } => {
                positive("n_exponent", n_exponent)?;
                max_steps(
                    MaxStepsRequest::Penalty {
                        tau,
                        a: n_exponent,
                        method: accounting.method(),
                    },
                    epsilon,
                    delta,
                    n,
                    ConversionRule::default(),
                )
                .map_err(|e| match e {
                    // The request calls the exponent `a`; here it is `n_exponent`.
                    McmcError::Accountant(AccountantError::InvalidParameter {
                        name: "a",
                        value,
                    }) => McmcError::param("n_exponent", value),
                    e => e,
                })
            }
            Self::Hmc {
                tau_l,
                tau_g,
                n,
                leapfrog,
                charging,
                accounting,
            } => {
                check_leapfrog(leapfrog)?;
                match charging {
                    GradientCharging::Reuse => max_steps(
                        MaxStepsRequest::Hmc {
                            tau_l,
                            tau_g,
                            leapfrog: u64::from(leapfrog),
                            method: accounting.method(),
                        },
                        epsilon,
                        delta,
                        n,
                        ConversionRule::default(),
                    ),
                    GradientCharging::Fresh => self.largest_within(epsilon, delta, 1),
                }
            }
            Self::SubsampledPenalty {
                tau,
                n,
                batch,
                rule,
            } => {
                positive("tau", tau)?;
                sampling_ratio(n, batch)?;
                let (c, len) = curve(MAX_RDP_ORDER, |a| subsampled_penalty_rdp(a, tau, n, batch))?;
                largest_k(|k| Ok(rdp_epsilon(k, delta, &c[..len], rule)? <= epsilon))
            }
            Self::Barker { n, batch, rule } => {
                sampling_ratio(n, batch)?;
                barker_top(batch)?;
                max_steps(
                    MaxStepsRequest::Barker {
                        batch: rows(batch)?,
                        max_order: u64::from(MAX_RDP_ORDER),
                    },
                    epsilon,
                    delta,
                    n,
                    rule,
                )
            }
        }
    }

    /// Iterations **summed over** `chains` chains sharing one (ε, δ) budget. The chains
    /// compose; only DP HMC with [`GradientCharging::Reuse`] releases something once per
    /// chain (its start gradient, `kL + chains` gradients), so for every other mechanism this
    /// is [`Mechanism::iterations`]. For `chains = 1` it always equals
    /// [`Mechanism::iterations`].
    ///
    /// # Errors
    ///
    /// As [`Mechanism::iterations`]; [`McmcError::InvalidSize`] for `chains == 0`.
    pub fn chains_iterations(
        &self,
        epsilon: f64,
        delta: f64,
        chains: u64,
    ) -> Result<u64, McmcError> {
        check_eps_delta(epsilon, delta)?;
        if chains == 0 {
            return Err(McmcError::InvalidSize {
                name: "chains",
                value: 0,
            });
        }
        match *self {
            Self::Hmc {
                leapfrog,
                charging: GradientCharging::Reuse,
                ..
            } if chains > 1 => {
                check_leapfrog(leapfrog)?;
                self.largest_within(epsilon, delta, chains)
            }
            _ => self.iterations(epsilon, delta),
        }
    }

    /// Largest `K` whose Gaussian cost ([`Mechanism::gaussian_cost`] with `chains`) meets
    /// (ε, δ): `cost ≤ ρ(ε, δ)` (zCDP) or `δ(ε; cost) ≤ δ` (PLD); 0 if even `K = 0` does not.
    fn largest_within(&self, epsilon: f64, delta: f64, chains: u64) -> Result<u64, McmcError> {
        let accounting = self.accounting().ok_or(McmcError::AccountingFailed)?;
        let cost = |k| self.gaussian_cost(k, chains);
        cost(0)?;
        match accounting {
            Accounting::Zcdp => {
                let rho = zcdp_rho(epsilon, delta)?;
                if cost(0)? > rho {
                    return Ok(0);
                }
                largest_k(|k| Ok(cost(k)? <= rho))
            }
            Accounting::Pld => {
                if gaussian_pld_delta(epsilon, cost(0)?)? > delta {
                    return Ok(0);
                }
                largest_k(|k| Ok(gaussian_pld_delta(epsilon, cost(k)?)? <= delta))
            }
        }
    }

    /// The Gaussian accounting of DP penalty and DP HMC (`None` for the RDP mechanisms).
    #[must_use]
    pub fn accounting(&self) -> Option<Accounting> {
        match *self {
            Self::Penalty { accounting, .. } | Self::Hmc { accounting, .. } => Some(accounting),
            Self::SubsampledPenalty { .. } | Self::Barker { .. } => None,
        }
    }

    /// The RDP → (ε, δ) conversion of subsampled penalty and DP Barker (`None` for the
    /// Gaussian mechanisms).
    #[must_use]
    pub fn rule(&self) -> Option<ConversionRule> {
        match *self {
            Self::SubsampledPenalty { rule, .. } | Self::Barker { rule, .. } => Some(rule),
            Self::Penalty { .. } | Self::Hmc { .. } => None,
        }
    }

    /// Total PLD mean (= zCDP ρ) of `k` iterations in total over `chains` chains of a Gaussian
    /// mechanism: DP penalty `k/(2(τn^α)²)`; DP HMC `kρ_l + Gρ_g` with `G` from
    /// [`gradient_releases`], rounded up.
    ///
    /// # Errors
    ///
    /// Invalid parameters; [`McmcError::AccountingFailed`] for the RDP mechanisms.
    pub fn gaussian_cost(&self, k: u64, chains: u64) -> Result<f64, McmcError> {
        match *self {
            Self::Penalty {
                tau, n, n_exponent, ..
            } => {
                positive("tau", tau)?;
                let m = penalty_multiplier(tau, n, n_exponent)?;
                #[allow(clippy::cast_precision_loss)]
                Ok(k as f64 / (2.0 * m * m))
            }
            Self::Hmc {
                tau_l,
                tau_g,
                n,
                leapfrog,
                charging,
                ..
            } => {
                let (rl, rg) = hmc_units(tau_l, tau_g, n)?;
                let g = gradient_releases(k, u64::from(leapfrog), charging, chains);
                #[allow(clippy::cast_precision_loss)]
                let m = k as f64 * rl + g as f64 * rg;
                Ok(m * (1.0 + 1e-12))
            }
            Self::SubsampledPenalty { .. } | Self::Barker { .. } => {
                Err(McmcError::AccountingFailed)
            }
        }
    }

    /// ε at δ spent by `k` iterations in total over `chains` chains (Gaussian mechanisms:
    /// [`gaussian_epsilon`] of [`Mechanism::gaussian_cost`]; RDP mechanisms: `k` composed
    /// steps converted by the mechanism's rule).
    ///
    /// # Errors
    ///
    /// Invalid δ or parameters.
    pub fn epsilon(&self, k: u64, delta: f64, chains: u64) -> Result<f64, McmcError> {
        open_unit("delta", delta)?;
        match *self {
            Self::Penalty { accounting, .. } | Self::Hmc { accounting, .. } => {
                gaussian_epsilon(accounting, self.gaussian_cost(k, chains)?, delta)
            }
            Self::SubsampledPenalty {
                tau,
                n,
                batch,
                rule,
            } => {
                let (c, len) = curve(MAX_RDP_ORDER, |a| subsampled_penalty_rdp(a, tau, n, batch))?;
                rdp_epsilon(k, delta, &c[..len], rule)
            }
            Self::Barker { n, batch, rule } => {
                sampling_ratio(n, batch)?;
                let (c, len) = curve(barker_top(batch)?, |a| barker_rdp(a, n, batch))?;
                rdp_epsilon(k, delta, &c[..len], rule)
            }
        }
    }
}

/// DP penalty's noise multiplier `τ n^α`.
pub(crate) fn penalty_multiplier(tau: f64, n: usize, n_exponent: f64) -> Result<f64, McmcError> {
    #[allow(clippy::cast_precision_loss)]
    let m = tau * libm::pow(rows(n)? as f64, n_exponent);
    positive("noise multiplier", m)
}

/// The iteration budget of the accountants' [`MaxStepsRequest`] — the one place that says how
/// many iterations of DP penalty, DP HMC (reused gradients, one chain) and DP Barker fit an
/// (ε, δ) target; this module adds what the request does not describe (fresh gradients,
/// subsampled penalty, several chains, ε spent).
fn max_steps(
    request: MaxStepsRequest,
    epsilon: f64,
    delta: f64,
    n: usize,
    rule: ConversionRule,
) -> Result<u64, McmcError> {
    Ok(request.max_steps(epsilon, delta, rows(n)?, rule)?.steps)
}

fn check_leapfrog(leapfrog: u32) -> Result<(), McmcError> {
    if leapfrog == 0 {
        return Err(McmcError::InvalidSize {
            name: "leapfrog",
            value: 0,
        });
    }
    Ok(())
}

/// A private sampler's budget: the mechanism it runs, the (ε, δ) target and the iteration
/// limit that target allows (lowered by [`Budget::cap`] when several chains share it). The
/// four private samplers (DP penalty, subsampled DP penalty, DP Barker, DP HMC) embed this
/// one struct; their `max_iterations`, `cap_iterations`, `epsilon_spent` and the budget check
/// before every step all come from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    mechanism: Mechanism,
    epsilon: f64,
    delta: f64,
    max_iterations: u64,
}

impl Budget {
    /// The budget of `mechanism` for the target (ε, δ).
    ///
    /// # Errors
    ///
    /// As [`Mechanism::iterations`]; [`McmcError::BudgetExhausted`] if the target allows no
    /// iteration.
    ///
    /// With `alloc`, the count is then checked against the run's own [`Budget::claim`] and
    /// lowered until the claim's (ε, δ) is within the target: the calibration formulas and the
    /// accountant that composes the claim round differently (each an upper bound), and a
    /// count at the edge could otherwise yield a claim a few ulps over the target.
    pub fn new(mechanism: Mechanism, epsilon: f64, delta: f64) -> Result<Self, McmcError> {
        let k = mechanism.iterations(epsilon, delta)?;
        if k == 0 {
            return Err(McmcError::BudgetExhausted { allowed: 0 });
        }
        let budget = Self {
            mechanism,
            epsilon,
            delta,
            max_iterations: k,
        };
        #[cfg(feature = "alloc")]
        let budget = {
            let k = budget.within_claim(k, 1)?;
            if k == 0 {
                return Err(McmcError::BudgetExhausted { allowed: 0 });
            }
            Self {
                max_iterations: k,
                ..budget
            }
        };
        Ok(budget)
    }

    /// What one iteration releases.
    #[must_use]
    pub fn mechanism(&self) -> &Mechanism {
        &self.mechanism
    }

    /// The (ε, δ) target.
    #[must_use]
    pub fn target(&self) -> (f64, f64) {
        (self.epsilon, self.delta)
    }

    /// Iterations allowed (after any [`Budget::cap`]).
    #[must_use]
    pub fn max_iterations(&self) -> u64 {
        self.max_iterations
    }

    /// Lowers the limit to `cap` (never raises it).
    pub fn cap(&mut self, cap: u64) {
        self.max_iterations = self.max_iterations.min(cap);
    }

    /// Iterations allowed **summed over** `chains` chains with this budget, never more than
    /// [`Budget::max_iterations`] (see [`Mechanism::chains_iterations`]).
    ///
    /// # Errors
    ///
    /// [`McmcError::InvalidSize`] for `chains == 0`; accounting failures.
    pub fn chains_limit(&self, chains: u64) -> Result<u64, McmcError> {
        if chains == 0 {
            return Err(McmcError::InvalidSize {
                name: "chains",
                value: 0,
            });
        }
        if chains == 1 || !self.per_chain_releases() {
            return Ok(self.max_iterations);
        }
        let k = self
            .mechanism
            .chains_iterations(self.epsilon, self.delta, chains)?;
        let k = k.min(self.max_iterations);
        #[cfg(feature = "alloc")]
        let k = self.within_claim(k, chains)?;
        Ok(k)
    }

    /// Whether each chain releases something once on its own (DP HMC with reused gradients).
    fn per_chain_releases(&self) -> bool {
        matches!(
            self.mechanism,
            Mechanism::Hmc {
                charging: GradientCharging::Reuse,
                ..
            }
        )
    }

    /// (ε, δ) spent by `k` iterations in total over `chains` chains.
    ///
    /// # Errors
    ///
    /// Accounting failures.
    pub fn spent(&self, k: u64, chains: u64) -> Result<(f64, f64), McmcError> {
        Ok((self.mechanism.epsilon(k, self.delta, chains)?, self.delta))
    }

    /// [`McmcError::BudgetExhausted`] once `iteration` steps have used the limit.
    #[cfg(feature = "alloc")]
    pub(crate) fn check(&self, iteration: u64) -> Result<(), McmcError> {
        if iteration >= self.max_iterations {
            return Err(McmcError::BudgetExhausted {
                allowed: self.max_iterations,
            });
        }
        Ok(())
    }
}

impl Mechanism {
    /// Which accountant composes this mechanism's releases.
    #[must_use]
    pub fn accountant(&self) -> &'static str {
        match self.accounting() {
            Some(Accounting::Zcdp) => "zCDP (Bun & Steinke 2016)",
            Some(Accounting::Pld) => "exact Gaussian privacy-loss distribution (SMM19)",
            None => "RDP with subsampling amplification (WBK19, sum through j = α)",
        }
    }

    /// How the accountant's bound becomes (ε, δ).
    #[must_use]
    pub fn conversion(&self) -> &'static str {
        match (self.accounting(), self.rule()) {
            (Some(Accounting::Zcdp), _) => "zCDP → (ε, δ): ρ + 2√(ρ ln(1/δ)) (thesis Theorem 1)",
            (Some(Accounting::Pld), _) => "exact (ε, δ) of the Gaussian PLD (thesis Theorem 7)",
            (None, Some(ConversionRule::Classic)) => "RDP → (ε, δ): Mironov 2017 Prop. 3",
            (None, _) => "RDP → (ε, δ): best of Mironov 2017 Prop. 3 and Balle et al. 2020",
        }
    }
}

/// One line of prose generated from the value: the mechanism, its reference and parameters.
impl core::fmt::Display for Mechanism {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::Penalty {
                tau, n, n_exponent, ..
            } => write!(
                f,
                "DP penalty (Yildirim & Ermiş 2019; thesis Theorems 6-7): Gaussian noise on \
                 clipped log-ratio sums, multiplier τn^α with τ = {tau}, α = {n_exponent}, \
                 n = {n}"
            ),
            Self::Hmc {
                tau_l,
                tau_g,
                n,
                leapfrog,
                charging,
                ..
            } => write!(
                f,
                "DP HMC (thesis §5.2): Gaussian noise on clipped log-ratio sums (τ_l = {tau_l}) \
                 and gradient sums (τ_g = {tau_g}), {leapfrog} leapfrog steps, {} gradients, \
                 n = {n}",
                match charging {
                    GradientCharging::Fresh => "fresh",
                    GradientCharging::Reuse => "reused (Algorithm 3)",
                }
            ),
            Self::SubsampledPenalty { tau, n, batch, .. } => write!(
                f,
                "subsampled DP penalty (thesis Theorem 9): noise variance τc² with τ = {tau} on \
                 batches of {batch} of n = {n} rows drawn without replacement"
            ),
            Self::Barker { n, batch, .. } => write!(
                f,
                "DP Barker (Heikkilä et al. 2019; thesis Theorem 8): noise variance 2 on \
                 batches of {batch} of n = {n} rows drawn without replacement"
            ),
        }
    }
}

#[cfg(feature = "alloc")]
impl Budget {
    /// The largest count `≤ k` (iterations in total over `chains` chains) whose
    /// [`Budget::claim`] meets the target (ε, δ)
    /// ([`calibrate::largest_fitting`]: `k` itself when it does, the
    /// common case, at the cost of one claim). 0 if no positive count does.
    fn within_claim(&self, k: u64, chains: u64) -> Result<u64, McmcError> {
        let fits = |k: u64| -> Result<bool, McmcError> {
            Ok(self
                .claim(k, chains)?
                .is_none_or(|c| c.epsilon() <= self.epsilon && c.delta() <= self.delta))
        };
        calibrate::largest_fitting(k, fits)
    }

    /// The privacy claim of `k` iterations in total over `chains` chains: the released events
    /// with their counts, composed by the accountant this budget uses, under substitute-one-row
    /// neighbours ([`dpinfer_accountants::Neighbouring::ReplaceOne`]), reported at this
    /// budget's δ.
    ///
    /// * DP penalty: `k × Gaussian(σ = τn^α, Δ = 1)` (the release's noise sd over its
    ///   sensitivity), zCDP with the Bun–Steinke conversion (thesis Theorem 1, as the budget)
    ///   or the exact Gaussian PLD.
    /// * DP HMC: `k × Gaussian(σ = τ_l√n, Δ = 1)` ratio tests and
    ///   [`gradient_releases`] `× Gaussian(σ = τ_g√n, Δ = 1)` gradients.
    /// * Subsampled DP penalty: `k × SampledWithoutReplacement(|B| of n, Gaussian(σ = √τ,
    ///   Δ = 1))` by the RDP accountant on the integer orders `2..=256` (the budget's
    ///   orders; on the sparser default grid the claim could exceed the target) with this
    ///   budget's conversion rule.
    /// * DP Barker: `k × DpBarker(|B| of n)` (thesis Theorem 8) by the RDP accountant on the
    ///   integer orders `2..=256` (the budget's orders; Theorem 8 holds at integer orders
    ///   only) with this budget's conversion rule.
    ///
    /// The claim's accountant may round differently from [`Budget::spent`]; both are upper
    /// bounds of the same composition (compared in `tests/suite/run.rs`).
    ///
    /// # Errors
    ///
    /// Accounting failures.
    pub fn claim(
        &self,
        k: u64,
        chains: u64,
    ) -> Result<Option<dpinfer_accountants::Claim>, McmcError> {
        use alloc::boxed::Box;
        use alloc::vec;
        use dpinfer_accountants::{AccountantKind, Claim, EventBuf, Neighbouring};
        let gaussian = |sigma: f64| EventBuf::Gaussian {
            sigma,
            sensitivity: 1.0,
        };
        #[allow(clippy::cast_precision_loss)]
        let sqrt_n = |n: usize| rows(n).map(|n| libm::sqrt(n as f64));
        let kind = |a| match a {
            Accounting::Zcdp => AccountantKind::Zcdp,
            Accounting::Pld => AccountantKind::Pld,
        };
        let (events, accountant, rule) = match self.mechanism {
            Mechanism::Penalty {
                tau,
                n,
                n_exponent,
                accounting,
            } => {
                let m = penalty_multiplier(tau, n, n_exponent)?;
                (
                    vec![(gaussian(m), k)],
                    kind(accounting),
                    ConversionRule::Classic,
                )
            }
            Mechanism::Hmc {
                tau_l,
                tau_g,
                n,
                leapfrog,
                charging,
                accounting,
            } => {
                let g = gradient_releases(k, u64::from(leapfrog), charging, chains);
                let events = vec![
                    (gaussian(tau_l * sqrt_n(n)?), k),
                    (gaussian(tau_g * sqrt_n(n)?), g),
                ];
                (events, kind(accounting), ConversionRule::Classic)
            }
            Mechanism::SubsampledPenalty {
                tau,
                n,
                batch,
                rule,
            } => {
                let event = EventBuf::SampledWithoutReplacement {
                    batch: rows(batch)?,
                    population: rows(n)?,
                    event: Box::new(gaussian(libm::sqrt(tau))),
                };
                (vec![(event, k)], AccountantKind::RdpIntegers, rule)
            }
            Mechanism::Barker { n, batch, rule } => {
                sampling_ratio(n, batch)?;
                let event = EventBuf::DpBarker {
                    batch: rows(batch)?,
                    population: rows(n)?,
                };
                (vec![(event, k)], AccountantKind::RdpIntegers, rule)
            }
        };
        let relation = Neighbouring::ReplaceOne;
        Ok(Some(Claim::account(
            relation, accountant, rule, events, self.delta,
        )?))
    }
}
