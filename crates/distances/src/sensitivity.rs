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
