//! Global sensitivities of the distances, each with its neighbouring relation.
//!
//! Every function returns an upper bound in exact arithmetic, computed in `f64` and then
//! nudged up one ulp (`next_up`) so rounding never under-reports. The reference objects
//! ([`crate::MmdReference`], [`crate::RffReference`]) add [`rounding_slack`] on top, which covers
//! the difference between the computed and the exact distance.

use crate::DistanceError;
use crate::mmd::as_f64;

pub use dpinfer_accountants::Neighbouring;

/// The set of neighbouring relations a sensitivity bound holds for: one or both of the
/// workspace's relations ([`Neighbouring`], the accountants' type), or any pair of data sets
/// (a bound on the output's range, which then holds under every relation).
///
/// ```
/// use dpinfer_distances::{Neighbouring, Relations};
/// assert!(Relations::ANY_PAIR.contains(Neighbouring::AddRemove));
/// assert!(!Relations::REPLACE_ONE.contains(Neighbouring::AddRemove));
/// assert_eq!(Relations::REPLACE_ONE_OR_ADD_REMOVE.to_string(), "replace-one and add/remove");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Relations {
    replace_one: bool,
    add_remove: bool,
    any_pair: bool,
}

impl Relations {
    /// `D` and `D′` have the same size `N` and differ in one record (row or data set), the
    /// relation of Lemma 1 (Park, Vinaroz & Jitkrittum 2021) and Lemma 3.1 (Park &
    /// Jitkrittum).
    pub const REPLACE_ONE: Self = Self {
        replace_one: true,
        add_remove: false,
        any_pair: false,
    };
    /// `D′` is `D` with one record added or removed.
    pub const ADD_REMOVE: Self = Self {
        replace_one: false,
        add_remove: true,
        any_pair: false,
    };
    /// Both [`Neighbouring::ReplaceOne`] and [`Neighbouring::AddRemove`].
    pub const REPLACE_ONE_OR_ADD_REMOVE: Self = Self {
        replace_one: true,
        add_remove: true,
        any_pair: false,
    };
    /// Any two data sets (a bound on the range of the output); implies both relations.
    pub const ANY_PAIR: Self = Self {
        replace_one: true,
        add_remove: true,
        any_pair: true,
    };

    /// Whether a bound with these relations holds under `relation`.
    #[must_use]
    pub fn contains(self, relation: Neighbouring) -> bool {
        match relation {
            Neighbouring::ReplaceOne => self.replace_one,
            Neighbouring::AddRemove => self.add_remove,
        }
    }

    /// Whether the bound holds for any two data sets (not only neighbours).
    #[must_use]
    pub fn any_pair(self) -> bool {
        self.any_pair
    }
}

impl core::fmt::Display for Relations {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match (self.any_pair, self.replace_one, self.add_remove) {
            (true, _, _) => "any pair",
            (false, true, true) => "replace-one and add/remove",
            (false, true, false) => "replace-one",
            (false, false, true) => "add/remove",
            (false, false, false) => "none",
        })
    }
}

/// A global sensitivity `Δ = sup |ρ(D) − ρ(D′)|` over neighbouring `D, D′` (and over every
/// simulated data set), together with the set of neighbouring relations it holds for.
///
/// Read it with [`Sensitivity::value_for`] under the relation of the accountant that will
/// account the release: that refuses a relation the bound was not proved for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sensitivity {
    value: f64,
    relations: Relations,
    user_declared: bool,
}

impl Sensitivity {
    pub(crate) fn new(value: f64, relations: Relations) -> Self {
        Self {
            value,
            relations,
            user_declared: false,
        }
    }
    /// A bound proved elsewhere or declared by a user (a model's summary, a distance of a
    /// caller's own): `value` holding for `relations`. The library cannot check it; it only
    /// carries the relation with the value, so a claim made with it names that relation.
    ///
    /// ```
    /// use dpinfer_distances::{Neighbouring, Relations, Sensitivity};
    /// let s = Sensitivity::declared(0.01, Relations::ADD_REMOVE)?;
    /// assert_eq!(s.relation(), Neighbouring::AddRemove);
    /// assert!(Sensitivity::declared(f64::NAN, Relations::ANY_PAIR).is_err());
    /// # Ok::<(), dpinfer_distances::DistanceError>(())
    /// ```
    ///
    /// # Errors
    /// [`DistanceError::InvalidSensitivity`] unless `value` is finite and positive.
    pub fn declared(value: f64, relations: Relations) -> Result<Self, DistanceError> {
        if value.is_finite() && value > 0.0 {
            Ok(Self::new(value, relations))
        } else {
            Err(DistanceError::InvalidSensitivity)
        }
    }
    /// A bound a **user** declares and nobody proved (a user's own summary statistic): as
    /// [`Sensitivity::declared`], and [`Sensitivity::is_user_declared`] says so, so that a
    /// front end labels every claim made with it as resting on the user's word.
    ///
    /// ```
    /// use dpinfer_distances::{Neighbouring, Relations, Sensitivity};
    /// let s = Sensitivity::user_declared(0.01, Relations::ADD_REMOVE)?;
    /// assert!(s.is_user_declared() && s.relation() == Neighbouring::AddRemove);
    /// assert!(!Sensitivity::declared(0.01, Relations::ADD_REMOVE)?.is_user_declared());
    /// # Ok::<(), dpinfer_distances::DistanceError>(())
    /// ```
    ///
    /// # Errors
    /// [`DistanceError::InvalidSensitivity`] unless `value` is finite and positive.
    pub fn user_declared(value: f64, relations: Relations) -> Result<Self, DistanceError> {
        Ok(Self {
            user_declared: true,
            ..Self::declared(value, relations)?
        })
    }
    /// Whether the bound is a user's declaration that the library could not check
    /// ([`Sensitivity::user_declared`]), rather than one proved by a library function.
    #[must_use]
    pub fn is_user_declared(&self) -> bool {
        self.user_declared
    }
    /// The relation a privacy claim made with this bound states: replace-one when the bound
    /// holds for it (the papers' relation, and the one a bound for any pair of data sets is
    /// reported under), else add/remove.
    #[must_use]
    pub fn relation(&self) -> Neighbouring {
        if self.holds_for(Neighbouring::ReplaceOne) {
            Neighbouring::ReplaceOne
        } else {
            Neighbouring::AddRemove
        }
    }
    /// The bound `Δ` (finite, positive).
    #[must_use]
    pub fn value(&self) -> f64 {
        self.value
    }
    /// The neighbouring relations the bound holds for.
    #[must_use]
    pub fn relations(&self) -> Relations {
        self.relations
    }
    /// Whether the bound holds under `relation`.
    #[must_use]
    pub fn holds_for(&self, relation: Neighbouring) -> bool {
        self.relations.contains(relation)
    }
    /// The bound `Δ` under `relation`.
    ///
    /// # Errors
    /// [`DistanceError::IncompatibleRelation`] if the bound was not proved for `relation`
    /// (e.g. an MMD sensitivity, proved for replace-one, asked for under add/remove).
    pub fn value_for(&self, relation: Neighbouring) -> Result<f64, DistanceError> {
        if self.holds_for(relation) {
            Ok(self.value)
        } else {
            Err(DistanceError::IncompatibleRelation { relation })
        }
    }
    pub(crate) fn plus(self, extra: f64) -> Self {
        Self {
            value: (self.value + extra).next_up(),
            ..self
        }
    }
}

fn check_b(b_k: f64) -> Result<(), DistanceError> {
    if b_k.is_finite() && b_k > 0.0 {
        Ok(())
    } else {
        Err(DistanceError::InvalidKernelBound)
    }
}

fn check_n(n: usize, min: usize) -> Result<(), DistanceError> {
    if n >= min {
        Ok(())
    } else {
        Err(DistanceError::InvalidSize)
    }
}

fn up(v: f64) -> f64 {
    v.next_up()
}

/// Rejects bounds that overflowed (e.g. `B_k` near `f64::MAX`).
fn finite(s: Sensitivity) -> Result<Sensitivity, DistanceError> {
    if s.value.is_finite() && s.value > 0.0 {
        Ok(s)
    } else {
        Err(DistanceError::InvalidKernelBound)
    }
}

/// Sensitivity of the biased MMD `ρ = √(MMD²_b)` with a kernel bounded by `B_k` and `N`
/// observed rows: `Δ_ρ = 2√B_k / N`.
///
/// # Privacy
/// Neighbouring: [`Neighbouring::ReplaceOne`] on the observed set (same size `N`), sup over
/// every simulated set. The proof (via the feature map and the reverse triangle inequality)
/// does not use the simulated set's size.
///
/// # References
/// Park, Vinaroz & Jitkrittum (2021), Lemma 1 and Appendix B; Park & Jitkrittum, Lemma 3.1.
///
/// # Errors
/// [`DistanceError::InvalidKernelBound`] unless `B_k` is finite and positive (and the bound
/// does not overflow); [`DistanceError::InvalidSize`] if `N = 0`.
///
/// ```
/// let s = dpinfer_distances::sensitivity::mmd(1.0, 5000)?;
/// assert!(s.value() >= 2.0 / 5000.0 && s.value() < 2.0 / 5000.0 * (1.0 + 1e-15));
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
pub fn mmd(b_k: f64, n: usize) -> Result<Sensitivity, DistanceError> {
    check_b(b_k)?;
    check_n(n, 1)?;
    finite(Sensitivity::new(
        up(up(2.0 * libm::sqrt(b_k)) / as_f64(n)),
        Relations::REPLACE_ONE,
    ))
}

/// `sup ρ ≤ 2√B_k` for `ρ = √(MMD²_b)` (Park, Vinaroz & Jitkrittum 2021, Lemma 1, second
/// claim; `B_ρ` of Park & Jitkrittum, Lemma 3.1).
///
/// # Errors
/// [`DistanceError::InvalidKernelBound`] unless `B_k` is finite and positive.
pub fn mmd_upper_bound(b_k: f64) -> Result<f64, DistanceError> {
    check_b(b_k)?;
    let v = up(2.0 * libm::sqrt(b_k));
    if v.is_finite() {
        Ok(v)
    } else {
        Err(DistanceError::InvalidKernelBound)
    }
}

/// Sensitivity of the biased **squared** MMD: `8 B_k / N`.
///
/// Not stated in the papers; derived here from Lemma 1: `|a² − b²| = |a − b|(a + b) ≤
/// (2√B_k/N)(4√B_k)`. (Directly: the `N`-th row enters `2N − 1` Gram terms of weight
/// `1/N²` and `m` cross terms of weight `2/(Nm)`, each changing by at most `2B_k`.)
///
/// # Privacy
/// [`Neighbouring::ReplaceOne`] on the observed set.
///
/// # Errors
/// As [`mmd`].
pub fn mmd2(b_k: f64, n: usize) -> Result<Sensitivity, DistanceError> {
    check_b(b_k)?;
    check_n(n, 1)?;
    finite(Sensitivity::new(
        up(up(8.0 * b_k) / as_f64(n)),
        Relations::REPLACE_ONE,
    ))
}

/// Sensitivity of the unbiased squared MMD `MMD²_u` (and of `max(0, MMD²_u)`, clamping being
/// 1-Lipschitz): `8 B_k / N`, `N ≥ 2`.
///
/// Derivation: the replaced row enters `2(N − 1)` ordered Gram pairs of weight
/// `1/(N(N−1))` and `m` cross terms of weight `2/(Nm)`; each kernel value changes by at most
/// `2B_k` (`|k| ≤ B_k`), giving `4B_k/N + 4B_k/N`.
///
/// # Privacy
/// [`Neighbouring::ReplaceOne`] on the observed set.
///
/// # Errors
/// As [`mmd`], and [`DistanceError::InvalidSize`] if `N < 2`.
pub fn mmd2_unbiased(b_k: f64, n: usize) -> Result<Sensitivity, DistanceError> {
    check_b(b_k)?;
    check_n(n, 2)?;
    finite(Sensitivity::new(
        up(up(8.0 * b_k) / as_f64(n)),
        Relations::REPLACE_ONE,
    ))
}

/// Sensitivity of `√(max(0, MMD²_u))`: `√(8 B_k / N)`, i.e. `O(1/√N)`, much larger than the
/// biased MMD's `O(1/N)`, because the square root is not Lipschitz at 0
/// (`|√a − √b| ≤ √|a − b|`). Prefer the biased MMD as a private distance.
///
/// # Privacy
/// [`Neighbouring::ReplaceOne`] on the observed set.
///
/// # Errors
/// As [`mmd2_unbiased`].
pub fn mmd_unbiased(b_k: f64, n: usize) -> Result<Sensitivity, DistanceError> {
    let s = mmd2_unbiased(b_k, n)?;
    finite(Sensitivity::new(
        up(libm::sqrt(s.value())),
        Relations::REPLACE_ONE,
    ))
}

/// Sensitivity of the linear-time statistic [`crate::mmd2_linear`] with `N` rows per set:
/// `4 B_k / ⌊N/2⌋`. A replaced observed row enters one `h` term through two kernel values,
/// each changing by at most `2B_k`.
///
/// # Privacy
/// [`Neighbouring::ReplaceOne`] on the observed set.
///
/// # Errors
/// As [`mmd`], and [`DistanceError::InvalidSize`] if `N < 2`.
pub fn mmd2_linear(b_k: f64, n: usize) -> Result<Sensitivity, DistanceError> {
    check_b(b_k)?;
    check_n(n, 2)?;
    finite(Sensitivity::new(
        up(up(4.0 * b_k) / as_f64(n / 2)),
        Relations::REPLACE_ONE,
    ))
}

/// Sensitivity of the random-Fourier-feature MMD with a unit-norm feature map
/// ([`crate::RandomFourierFeatures`]): `2 / N`. This is Lemma 1 applied to the kernel
/// `k̂(x, y) = φ̂(x)ᵀφ̂(y)`, for which `k̂(x, x) = ‖φ̂(x)‖² = 1 = B_k`.
///
/// # Privacy
/// [`Neighbouring::ReplaceOne`] on the observed set.
///
/// # References
/// Park, Vinaroz & Jitkrittum (2021), Lemma 1; Park & Jitkrittum, Appendix C and eqs. 20–21.
///
/// # Errors
/// [`DistanceError::InvalidSize`] if `N = 0`.
pub fn rff_mmd(n: usize) -> Result<Sensitivity, DistanceError> {
    check_n(n, 1)?;
    finite(Sensitivity::new(
        up(2.0 / as_f64(n)),
        Relations::REPLACE_ONE,
    ))
}

fn check_c(c: f64) -> Result<(), DistanceError> {
    if c.is_finite() && c > 0.0 {
        Ok(())
    } else {
        Err(DistanceError::InvalidClip)
    }
}

/// Sensitivity of a single clipped distance `min(ρ, C)` with `ρ ≥ 0`: `C` (the output lies in
/// `[0, C]`), the device of Park, Vinaroz & Jitkrittum (2021, §6, "we impose an artificial
/// boundedness by clipping the distance by C") and `B_ρ` of Park & Jitkrittum (§4).
///
/// # Privacy
/// [`Relations::ANY_PAIR`]: holds for any two observed data sets.
///
/// # Errors
/// [`DistanceError::InvalidClip`] unless `C` is finite and positive.
pub fn clipped(c: f64) -> Result<Sensitivity, DistanceError> {
    check_c(c)?;
    Ok(Sensitivity::new(c, Relations::ANY_PAIR))
}

/// Sensitivity of the mean of `n` per-data-set clipped distances, `(1/n) Σ_i min(ρ_i, C)`,
/// where record `i` of the private input only affects term `i`: `C / n`.
///
/// Replace-one changes one term by at most `C`. Add/remove with sizes `n` and `n + 1`:
/// `|S/n − (S + t)/(n + 1)| = |S − n t| / (n(n + 1)) ≤ C/(n + 1) ≤ C/n` (`n` = the smaller
/// size).
///
/// # Privacy
/// [`Relations::REPLACE_ONE_OR_ADD_REMOVE`] over the `n` observed data sets.
///
/// # Errors
/// [`DistanceError::InvalidClip`]; [`DistanceError::InvalidSize`] if `n = 0`.
pub fn clipped_mean(c: f64, n: usize) -> Result<Sensitivity, DistanceError> {
    check_c(c)?;
    check_n(n, 1)?;
    finite(Sensitivity::new(
        up(c / as_f64(n)),
        Relations::REPLACE_ONE_OR_ADD_REMOVE,
    ))
}

/// Sensitivity of a sum of per-data-set clipped distances `Σ_i min(ρ_i, C)`: `C` for
/// add/remove **and** for replace-one, because every term lies in `[0, C]` (a replaced term
/// moves within `[0, C]`). The `2C` replace-one bound quoted for sums of values in `[−C, C]`
/// does not apply to distances, which are non-negative.
///
/// # Privacy
/// [`Relations::REPLACE_ONE_OR_ADD_REMOVE`].
///
/// # Errors
/// [`DistanceError::InvalidClip`].
pub fn clipped_sum(c: f64) -> Result<Sensitivity, DistanceError> {
    check_c(c)?;
    Ok(Sensitivity::new(c, Relations::REPLACE_ONE_OR_ADD_REMOVE))
}

/// A bound on `|ρ̃ − ρ|`, the difference between the MMD this crate computes in `f64` and
/// the exact MMD of the same (sanitised) data, for sets of `n` and `m` rows of dimension `d`
/// and kernel bound `B_k`: `2√η` with
/// `η = 4 B_k u (max(n, m) + d + 64) + 4 B_k · 1e-15`, `u = 2⁻⁵³`.
///
/// `η` bounds the error of the computed squared MMD: each kernel value is off by at most
/// `B_k((d + 8)u + 1e-15)` (squared-distance rounding propagated through `exp`, which has
/// `|d/dt e^{−t}| t ≤ 1/e`, plus the fast `exp`'s stated `1e-15`), and each of the three
/// means by at most `B_k(⌈len/4⌉ + 8)u` (four-lane row sums, compensated outer sum). The
/// square root turns an error `η` in the square into at most `√η` (`|√a − √b| ≤ √|a − b|`),
/// and neighbouring pairs can err in opposite directions, hence `2√η`. For `n = m = 5000`,
/// `d = 1`, `B_k = 1` this is about `3e-6`, below 1% of `Δ = 4e-4`.
///
/// # Errors
/// As [`mmd`].
pub fn rounding_slack(b_k: f64, n: usize, m: usize, d: usize) -> Result<f64, DistanceError> {
    check_b(b_k)?;
    let u = f64::EPSILON / 2.0;
    let size = as_f64(n.max(m)) + as_f64(d) + 64.0;
    let eta = up(4.0 * b_k * u * size + 4.0 * b_k * 1e-15);
    let v = up(2.0 * up(libm::sqrt(eta)));
    if v.is_finite() {
        Ok(v)
    } else {
        Err(DistanceError::InvalidKernelBound)
    }
}

/// The absolute error allowed per computed `sin` or `cos` value of a random feature: both
/// [`crate::KernelVersion`]s' branch-free `sincos` are within `4e-16` (tested against a
/// 50-digit table, `src/fastsincos.rs`), and `libm::sincos` (phases beyond `8e5`) within one
/// ulp (`≤ 2.3e-16` for values in `[−1, 1]`).
const SINCOS_ERROR: f64 = 1e-15;

/// `γ_k = k u / (1 − k u)` (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
/// Lemma 3.1), computed upwards.
///
/// # Errors
/// [`DistanceError::InvalidSize`] if `k u ≥ 1/2` (no data set is that large).
fn gamma(k: usize) -> Result<f64, DistanceError> {
    let ku = up(as_f64(k) * (f64::EPSILON / 2.0));
    if ku < 0.5 {
        Ok(up(ku / (1.0 - ku).next_down()))
    } else {
        Err(DistanceError::InvalidSize)
    }
}

/// `E_side`: a bound on `‖ã − a‖`, the Euclidean error of a computed random-feature mean
/// embedding `ã` of `n` rows of dimension `d` against the exact mean of the features of the
/// computed phases (see [`rff_rounding_allowance`], steps 1–3).
fn rff_embedding_error(n: usize, d: usize) -> Result<f64, DistanceError> {
    // Additions a term passes through on its way into the sum (step 2).
    let h = if d == 1 {
        n.div_ceil(8) + 2
    } else {
        n.saturating_sub(1)
    };
    let (gh, g4) = (gamma(h)?, gamma(4)?);
    let e = up(core::f64::consts::SQRT_2 * SINCOS_ERROR);
    // √2 ε + (1 + √2 ε)(γ_h + γ_4 + γ_h γ_4)
    Ok(up(e + up(up(1.0 + e) * up(up(gh + g4) + up(gh * g4)))))
}

/// A bound `η` on `|ρ̃ − ρ|` for the random-feature MMD `ρ = ‖μ̂(Y*) − μ̂(Y)‖`
/// ([`crate::RffReference::mmd`], and the Euclidean distance between two
/// [`crate::RandomFourierFeatures::mean_embedding`]s summed in order), with `n` observed and at
/// most `m` simulated rows of dimension `d` and `D = features` features, returned as
/// `2η` — the allowance [`crate::RffReference::sensitivity`] adds to `Δ = 2/N` under
/// [`crate::AllowanceVersion::V2`]. Linear in `u·n` (`u = 2⁻⁵³`), `u·n/8` for 1-D rows: about
/// `2.8e-11` for `n = m = 500 000`, `d = 1`, `D = 100`, against `Δ = 4e-6`
/// (version 1's [`rounding_slack`] is `3.0e-5` there).
///
/// # Derivation
///
/// **0. What is compared.** Let `t̃(x)` be the phase the code computes for a row `x` and
/// frequency `j` (sanitised coordinates, products `z_jk x_k` summed in coordinate order from 0,
/// times the rounded `1/l`; `0` if not finite): a deterministic function of the row alone,
/// the same on every SIMD level and in every batch. Let `φ(x) = s (cos t̃_j(x), sin t̃_j(x))_j`
/// with the exact `s = √(2/D)` and exact `sin`, `cos`: `‖φ(x)‖ = 1` for every `x`, so Lemma 1
/// of Park, Vinaroz & Jitkrittum (2021) holds for `ρ = ‖(1/N)Σφ(y*_i) − (1/m)Σφ(y_i)‖` as for
/// any unit-norm feature map: `|ρ(D) − ρ(D′)| ≤ 2/N` for neighbouring `D, D′`. (Rounding of
/// the phase therefore costs nothing: it is part of the feature map.) The computed `ρ̃`
/// satisfies `|ρ̃(D) − ρ̃(D′)| ≤ 2/N + 2η` if `|ρ̃ − ρ| ≤ η` for every data set.
///
/// **1. Features.** Each computed `ĉ_i`, `ŝ_i` is within `ε = 1e-15` of `cos t̃`, `sin t̃`
/// (both kernel versions' `sincos` are within `4e-16`, `libm::sincos` beyond `|t| = 8e5`
/// within one ulp), so `‖(ĉ_i, ŝ_i)‖ ≤ 1 + √2 ε`, and over the `n` rows the feature errors
/// add at most `√2 ε` to each frequency's mean pair.
///
/// **2. Sums.** The code sums with no compensation: 1-D rows in eight lanes (row `i` into lane
/// `i mod 8` in row order, from `0`), the lanes then added pairwise
/// `((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7))`; rows of `d ≥ 2` in one sum in row order from `0`.
/// A term passes through at most `h` rounded additions — `h = ⌈n/8⌉ − 1 + 3` for `d = 1`,
/// `h = n − 1` otherwise — so the computed sum is `Σ ĉ_i (1 + θ_i)` with `|θ_i| ≤ γ_h`
/// (Higham 2002, Lemma 3.1 and §4.2) and the pair of sums of frequency `j` is off by at most
/// `γ_h Σ_i ‖(ĉ_i, ŝ_i)‖ ≤ γ_h n (1 + √2 ε)` (triangle inequality on the pairs).
///
/// **3. Scaling and the norm over frequencies.** A component is `fl(fl(s̃/n) · C̃)` with
/// `s̃ = fl(√fl(2/D))`: four roundings (`√(1+δ) ≤ 1+u`), a relative error `≤ γ_4` of a
/// pair of norm `≤ (s/n)·n(1 + √2ε)(1 + γ_h)`. Each frequency's pair is thus off by at most
/// `s[√2 ε + (1 + √2 ε)(γ_h + γ_4 + γ_h γ_4)]`, and over the `D/2` frequencies the Euclidean
/// error is that times `√(D/2)`, where `s √(D/2) = 1`:
/// `E(n) = √2 ε + (1 + √2 ε)(γ_h + γ_4 + γ_h γ_4)`, independent of `D`.
///
/// **4. Difference.** Each difference is rounded once: `d̃ = (ã − b̃)(1 + δ)`, so
/// `‖d̃ − (a − b)‖ ≤ E(n) + E(m) + u(2 + E(n) + E(m))` (`‖a − b‖ ≤ 2`).
///
/// **5. Norm.** The squares (one rounding each) are summed in order — per frequency
/// `c² + s²` then into one accumulator (`RffReference`), or one accumulator over the `D`
/// components (a Euclidean distance on embeddings) — all terms non-negative, so the computed
/// sum is `‖d̃‖²(1 + θ)` with `|θ| ≤ γ_{D+1}`; the correctly rounded square root adds one
/// rounding: `ρ̃ = ‖d̃‖(1 + θ′)`, `|θ′| ≤ γ_{D+2}` (`|√(1+θ) − 1| ≤ |θ|`). The clamps to
/// `[0, 4]` before and `[0, 2]` after the root project onto intervals holding the exact value
/// (`fl(√4) = 2`, the root is monotone), so they never move `ρ̃` away from `ρ`.
///
/// **Total.** By the reverse triangle inequality,
/// `η = (E(n) + E(m))(1 + u) + 2u + γ_{D+2}(1 + u)(2 + E(n) + E(m))`, and this function returns
/// `2η`, every operation rounded upwards.
///
/// The unit tests of `rff.rs` check it against double-double references (features of the same
/// computed phases by `libm`, sums and the norm in double-double) on adversarial data — a
/// million equal rows, values at the clip (`±f64::MAX`, NaN, phases beyond the fast range),
/// 2 and 1 000 features, 3-D rows.
///
/// Exact or compensated summation would make `h` a constant; the code does not use it here
/// (it would change every embedding's bits), and at `u·n/8` the allowance is already `10⁻⁵` of
/// `Δ` at `n = 500 000`.
///
/// # Errors
/// [`DistanceError::InvalidSize`] if `n`, `m` or `features` is 0 or a size is so large that
/// `γ` does not exist; [`DistanceError::ZeroDimension`] if `d = 0`.
///
/// ```
/// use dpinfer_distances::sensitivity::{rff_rounding_allowance, rounding_slack};
/// let a = rff_rounding_allowance(500_000, 500_000, 1, 100)?;
/// assert!(a > 2.0 * 2.0 * 62_502.0 * f64::EPSILON / 2.0 && a < 3e-11);
/// assert!(rounding_slack(1.0, 500_000, 500_000, 100)? > 1e6 * a);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
pub fn rff_rounding_allowance(
    n: usize,
    m: usize,
    d: usize,
    features: usize,
) -> Result<f64, DistanceError> {
    if d == 0 {
        return Err(DistanceError::ZeroDimension);
    }
    check_n(n, 1)?;
    check_n(m, 1)?;
    check_n(features, 1)?;
    let u = f64::EPSILON / 2.0;
    let e = up(rff_embedding_error(n, d)? + rff_embedding_error(m, d)?);
    let g = gamma(features.saturating_add(2))?;
    let eta =
        up(up(up(e * (1.0 + u).next_up()) + 2.0 * u)
            + up(up(g * (1.0 + u).next_up()) * up(2.0 + e)));
    let v = up(2.0 * eta);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(DistanceError::InvalidSize)
    }
}
