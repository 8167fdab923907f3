//! Privacy notions as small validated value types (STYLE E8), the neighbouring relation,
//! and the report type every conversion returns.

use core::fmt;

use crate::error::{AccountantError, ParseNameError, non_negative, probability};

/// Relative safety margin applied to every reported ε, δ and ρ: the computed value is
/// multiplied by `1 + 2⁻⁴⁶` (≈ 1.4·10⁻¹⁴, i.e. 64 ulp) and then stepped up one more ulp
/// with [`f64::next_up`].
///
/// Every formula in this crate is evaluated with a handful of `libm` calls, each within a
/// few ulp; 64 ulp of relative margin dominates the accumulated rounding error of these
/// short chains, so the reported number is an upper bound of the exact real-arithmetic
/// value (the golden tests check this against 50-digit mpmath references).
pub const ROUNDING_MARGIN: f64 = 1.4210854715202004e-14; // 2^-46

/// Rounds a non-negative bound up by [`ROUNDING_MARGIN`] and one ulp, so that rounding
/// error can never make a reported ε, δ or ρ smaller than the exact value.
#[inline]
#[must_use]
pub fn round_up(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    (x + x.abs() * ROUNDING_MARGIN).next_up()
}

/// The smallest value [`round_up_positive`] reports for a positive quantity: twice the
/// smallest normal f64 (`4.5·10⁻³⁰⁸`).
pub const POSITIVE_FLOOR: f64 = 2.0 * f64::MIN_POSITIVE;

/// [`round_up`] for a quantity whose exact value is known to be positive (`exact_positive`:
/// a positive sensitivity, ε or ρ went into it): a result below [`POSITIVE_FLOOR`] is
/// reported as that floor.
///
/// Below the smallest normal f64 a product or quotient keeps only an absolute accuracy
/// (half the smallest subnormal per operation), so the relative [`ROUNDING_MARGIN`] no longer
/// covers it, and a positive ρ = Δ²/(2σ²), ε²/2 or amplified ε can underflow to exactly 0,
/// which every accountant reads as "no privacy loss": `σ = 10²⁰⁰` reported δ(0) = 0 where the
/// exact value is about `4·10⁻²⁰¹`. The formulas this is used for have at most two such
/// operations after their last normal intermediate, so the exact value is below the floor
/// whenever the computed one is.
#[inline]
#[must_use]
pub fn round_up_positive(x: f64, exact_positive: bool) -> f64 {
    if exact_positive && x < POSITIVE_FLOOR {
        return POSITIVE_FLOOR;
    }
    round_up(x)
}

/// The neighbouring relation a guarantee is stated for (thesis Definition 2).
///
/// * `AddRemove`: datasets differ by adding or removing one row (unbounded DP). Poisson
///   subsampling (Mironov–Talwar–Zhang 2019) is analysed under this relation.
/// * `ReplaceOne`: datasets have the same size and differ in one row (bounded DP,
///   "substitute" neighbours). Sampling without replacement (Wang–Balle–Kasiviswanathan
///   2019) is analysed under this relation.
///
/// Sensitivities given to events must be computed for the accountant's relation: a
/// replace-one sensitivity is in general up to twice the add/remove one.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Neighbouring {
    /// Add or remove one row.
    AddRemove,
    /// Replace one row (same dataset size).
    ReplaceOne,
}

impl Neighbouring {
    /// Both relations.
    pub const ALL: [Self; 2] = [Self::AddRemove, Self::ReplaceOne];

    /// The name used by `Display` and `FromStr`: `"add/remove"` or `"replace-one"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::AddRemove => "add/remove",
            Self::ReplaceOne => "replace-one",
        }
    }
}

impl fmt::Display for Neighbouring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses `"add/remove"` (also `"add-remove"`, `"add_remove"`) and `"replace-one"` (also
/// `"replace_one"`).
impl core::str::FromStr for Neighbouring {
    type Err = ParseNameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "add/remove" | "add-remove" | "add_remove" => Ok(Self::AddRemove),
            "replace-one" | "replace_one" => Ok(Self::ReplaceOne),
            _ => Err(ParseNameError {
                what: "neighbouring relation",
                expected: "add/remove, replace-one",
            }),
        }
    }
}

/// Which theorem turned the accountant's internal state into the reported (ε, δ).
#[derive(Copy, Clone, PartialEq, Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
#[non_exhaustive]
pub enum Conversion {
    /// Pure ε-DP, additive composition (δ = 0).
    Pure,
    /// Basic composition of approximate DP: ε and δ add (Dwork–Roth 2014 Thm 3.16).
    BasicComposition,
    /// Advanced composition (Dwork–Rothblum–Vadhan 2010; Dwork–Roth 2014 Thm 3.20).
    AdvancedComposition,
    /// Optimal homogeneous composition (Kairouz–Oh–Viswanath 2015, Thm 3.3).
    OptimalComposition,
    /// RDP → (ε, δ) by Mironov 2017 Prop. 3: ε = r(α) + ln(1/δ)/(α − 1).
    Mironov {
        /// The order that attained the minimum.
        order: f64,
    },
    /// RDP → (ε, δ) by Balle et al. 2020 Thm 21 / Canonne–Kamath–Steinke 2020 Prop. 12:
    /// ε = r(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1).
    BalleCks {
        /// The order that attained the minimum.
        order: f64,
    },
    /// zCDP → (ε, δ) by Bun–Steinke 2016 Prop. 1.3: ε = ρ + 2√(ρ ln(1/δ)).
    BunSteinke,
    /// zCDP → (ε, δ) by Canonne–Kamath–Steinke 2020 Prop. 12 optimised over α ∈ (1, ∞).
    CksZcdp {
        /// The order that attained the minimum.
        order: f64,
    },
    /// Exact Gaussian privacy-loss distribution (Sommer–Meiser–Mohammadi 2019, Lemma 12).
    GaussianPld,
    /// Numerical (discretised, FFT-composed) privacy-loss distribution, pessimistic
    /// connect-the-dots (Doroshenko et al. 2022); see `pld_numeric`.
    NumericalPld,
}

impl Conversion {
    /// The machine name (`"pure"`, `"basic_composition"`, `"mironov"`, `"balle_cks"`,
    /// `"bun_steinke"`, `"cks_zcdp"`, `"gaussian_pld"`, `"numerical_pld"`, …) — the serde tag.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Pure => "pure",
            Self::BasicComposition => "basic_composition",
            Self::AdvancedComposition => "advanced_composition",
            Self::OptimalComposition => "optimal_composition",
            Self::Mironov { .. } => "mironov",
            Self::BalleCks { .. } => "balle_cks",
            Self::BunSteinke => "bun_steinke",
            Self::CksZcdp { .. } => "cks_zcdp",
            Self::GaussianPld => "gaussian_pld",
            Self::NumericalPld => "numerical_pld",
        }
    }

    /// The Rényi order that attained the minimum, for the conversions that optimise one.
    #[must_use]
    pub fn order(&self) -> Option<f64> {
        match *self {
            Self::Mironov { order } | Self::BalleCks { order } | Self::CksZcdp { order } => {
                Some(order)
            }
            _ => None,
        }
    }
}

/// The theorem in prose, with its reference (and the order, if one was optimised).
impl fmt::Display for Conversion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Pure => f.write_str("pure ε-DP, additive composition"),
            Self::BasicComposition => f.write_str("basic composition, Dwork–Roth 2014 Thm 3.16"),
            Self::AdvancedComposition => {
                f.write_str("advanced composition, Dwork–Roth 2014 Thm 3.20")
            }
            Self::OptimalComposition => {
                f.write_str("optimal composition, Kairouz–Oh–Viswanath 2015 Thm 3.3")
            }
            Self::Mironov { order } => {
                write!(f, "RDP → (ε, δ) via Mironov 2017 Prop. 3 at α = {order}")
            }
            Self::BalleCks { order } => write!(
                f,
                "RDP → (ε, δ) via Balle et al. 2020 Thm 21 / Canonne–Kamath–Steinke 2020 \
                 Prop. 12 at α = {order}"
            ),
            Self::BunSteinke => f.write_str("zCDP → (ε, δ) via Bun–Steinke 2016 Prop. 1.3"),
            Self::CksZcdp { order } => write!(
                f,
                "zCDP → (ε, δ) via Canonne–Kamath–Steinke 2020 Prop. 12 at α = {order}"
            ),
            Self::GaussianPld => f.write_str(
                "exact Gaussian privacy-loss distribution, Sommer–Meiser–Mohammadi 2019 Lemma 12",
            ),
            Self::NumericalPld => f.write_str(
                "numerical privacy-loss distribution (pessimistic connect-the-dots, FFT \
                 composition; Doroshenko et al. 2022)",
            ),
        }
    }
}

/// Which conversion from RDP / zCDP to (ε, δ)-DP a report or calibration uses (the
/// *selection*; [`Conversion`] is the *label* of what was used).
///
/// * [`ConversionRule::Tightest`] (the default): RDP → the better of Mironov 2017 Prop. 3 and
///   Balle et al. 2020 Thm 21 / CKS20 Prop. 12 at every order; zCDP → the better of
///   Bun–Steinke 2016 Prop. 1.3 and CKS20 optimised over the order.
/// * [`ConversionRule::Classic`]: RDP → Mironov 2017 Prop. 3,
///   `ε = min_α r(α) + ln(1/δ)/(α − 1)`; zCDP → Bun–Steinke 2016 Prop. 1.3,
///   `ε = ρ + 2√(ρ ln(1/δ))` (thesis Theorem 1), to reproduce papers and peers that use them.
///
/// Both are valid upper bounds; `Classic` is never smaller than `Tightest`. Exact notions
/// (pure DP, the Gaussian PLD, approximate-DP composition) have nothing to choose and ignore it.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum ConversionRule {
    /// The tightest available conversion (the default).
    #[default]
    Tightest,
    /// Mironov 2017 Prop. 3 for RDP, Bun–Steinke 2016 Prop. 1.3 for zCDP.
    Classic,
}

impl ConversionRule {
    /// Both rules.
    pub const ALL: [Self; 2] = [Self::Tightest, Self::Classic];

    /// `"tightest"` or `"classic"` (`Display`, `FromStr`, serde).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Tightest => "tightest",
            Self::Classic => "classic",
        }
    }
}

display_and_parse_by_name!(ConversionRule, "conversion rule", "tightest, classic");

/// A reported (ε, δ) guarantee with the conversion that produced it.
///
/// `epsilon` and `delta` are upper bounds of the exact values (see [`round_up`]).
#[derive(Copy, Clone, PartialEq, Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Report {
    /// ε ≥ 0.
    pub epsilon: f64,
    /// δ ∈ [0, 1].
    pub delta: f64,
    /// Which theorem produced the numbers.
    pub conversion: Conversion,
}

/// Pure ε-differential privacy.
///
/// # Privacy
/// `ε`-DP under the relation of the accountant or mechanism that produced it.
///
/// ```
/// use dpinfer_accountants::PureDp;
/// let p = PureDp::new(0.5)?;
/// assert_eq!(p.epsilon(), 0.5);
/// assert!((p.to_zcdp().rho() - 0.125).abs() < 1e-13);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct PureDp {
    epsilon: f64,
}

impl PureDp {
    /// A pure-DP guarantee.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 ≤ ε < ∞`.
    pub fn new(epsilon: f64) -> Result<Self, AccountantError> {
        Ok(Self {
            epsilon: non_negative("epsilon", epsilon)?,
        })
    }
    /// ε.
    #[must_use]
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }
    /// ε-DP implies (ε²/2)-zCDP (Bun–Steinke 2016 Prop. 1.4), rounded up.
    #[must_use]
    pub fn to_zcdp(&self) -> Zcdp {
        Zcdp {
            rho: round_up(0.5 * self.epsilon * self.epsilon),
        }
    }
}

impl From<PureDp> for ApproxDp {
    fn from(p: PureDp) -> Self {
        Self {
            epsilon: p.epsilon,
            delta: 0.0,
        }
    }
}

/// Approximate (ε, δ)-differential privacy (thesis Definition 1).
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct ApproxDp {
    epsilon: f64,
    delta: f64,
}

impl ApproxDp {
    /// An (ε, δ) guarantee.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 ≤ ε < ∞` and `0 ≤ δ ≤ 1`.
    pub fn new(epsilon: f64, delta: f64) -> Result<Self, AccountantError> {
        let epsilon = non_negative("epsilon", epsilon)?;
        let delta = probability("delta", delta)?;
        Ok(Self { epsilon, delta })
    }
    /// ε.
    #[must_use]
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }
    /// δ.
    #[must_use]
    pub fn delta(&self) -> f64 {
        self.delta
    }
}

/// ρ-zero-concentrated differential privacy (Bun–Steinke 2016; thesis Theorem 1).
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct Zcdp {
    rho: f64,
}

impl Zcdp {
    /// A ρ-zCDP guarantee.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 ≤ ρ < ∞`.
    pub fn new(rho: f64) -> Result<Self, AccountantError> {
        Ok(Self {
            rho: non_negative("rho", rho)?,
        })
    }
    /// ρ.
    #[must_use]
    pub fn rho(&self) -> f64 {
        self.rho
    }
    /// The tightest of the Bun–Steinke and CKS conversions to (ε, δ)-DP, see
    /// [`crate::convert::zcdp_to_approx`].
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 < δ < 1`.
    pub fn to_approx_dp(&self, delta: f64) -> Result<Report, AccountantError> {
        crate::convert::zcdp_to_approx(self.rho, delta)
    }
}

/// The privacy-loss distribution `N(μ, 2μ)` of a (composition of) Gaussian mechanism(s)
/// (Sommer–Meiser–Mohammadi 2019, Lemma 11): one Gaussian with sensitivity Δ and noise σ has
/// `μ = Δ²/(2σ²)` and compositions add μ.
///
/// This is the same family as Dong–Roth–Su's μ_GDP-Gaussian DP with `μ_GDP = √(2μ)`.
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct GaussianPld {
    mu: f64,
}

impl GaussianPld {
    /// A Gaussian PLD with mean `μ ≥ 0`.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 ≤ μ < ∞`.
    pub fn new(mu: f64) -> Result<Self, AccountantError> {
        Ok(Self {
            mu: non_negative("mu", mu)?,
        })
    }
    /// The PLD of one Gaussian mechanism, `μ = Δ²/(2σ²)` (rounded up).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `σ > 0` and `Δ ≥ 0` are finite.
    pub fn from_gaussian(sigma: f64, sensitivity: f64) -> Result<Self, AccountantError> {
        let mu = crate::curves::gaussian_mu(sigma, sensitivity)?;
        Ok(Self { mu })
    }
    /// μ.
    #[must_use]
    pub fn mu(&self) -> f64 {
        self.mu
    }
    /// δ(ε) of this PLD (exact, rounded up); see [`crate::pld::delta_for_epsilon`].
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `ε ≥ 0` is finite.
    pub fn delta(&self, epsilon: f64) -> Result<f64, AccountantError> {
        crate::pld::delta_for_epsilon(self.mu, epsilon)
    }
    /// The smallest ε with δ(ε) ≤ `delta`; see [`crate::pld::epsilon_for_delta`].
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 < δ < 1`.
    pub fn epsilon(&self, delta: f64) -> Result<f64, AccountantError> {
        crate::pld::epsilon_for_delta(self.mu, delta)
    }
}

/// Validates an RDP order grid: non-empty, finite, strictly increasing, every order > 1.
pub(crate) fn check_grid(orders: &[f64]) -> Result<(), AccountantError> {
    if orders.is_empty() {
        return Err(AccountantError::InvalidGrid);
    }
    let mut prev = 1.0;
    for &a in orders {
        if !(a.is_finite() && a > prev) {
            return Err(AccountantError::InvalidGrid);
        }
        prev = a;
    }
    Ok(())
}

/// Validates an RDP curve ([`RdpCurve::new`], `RdpCurveVec::new`): a valid grid
/// ([`check_grid`]), one value per order, and every value ≥ 0 (negative RDP is never valid).
fn check_curve(orders: &[f64], values: &[f64]) -> Result<(), AccountantError> {
    check_grid(orders)?;
    if orders.len() != values.len() {
        return Err(AccountantError::InvalidGrid);
    }
    for &v in values {
        if v.is_nan() || v < 0.0 {
            return Err(AccountantError::InvalidParameter {
                name: "rdp",
                value: v,
            });
        }
    }
    Ok(())
}

/// An RDP curve on a fixed grid of `N` orders, without allocation: the mechanism is
/// `(α_i, r_i)`-RDP for every `i` (Mironov 2017, Definition 4; thesis Definition 4).
///
/// ```
/// use dpinfer_accountants::RdpCurve;
/// let c = RdpCurve::new([2.0, 4.0, 8.0], [0.5, 1.0, 2.0])?;
/// let r = c.to_approx_dp(1e-5)?;
/// assert!(r.epsilon > 2.0 && r.epsilon < 10.0);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct RdpCurve<const N: usize> {
    orders: [f64; N],
    values: [f64; N],
}

impl<const N: usize> RdpCurve<N> {
    /// A curve from orders (strictly increasing, all > 1) and RDP values (≥ 0, finite or +∞).
    ///
    /// # Errors
    /// [`AccountantError::InvalidGrid`] for a bad grid, [`AccountantError::InvalidParameter`]
    /// for a NaN or negative value (negative RDP is never valid).
    pub fn new(orders: [f64; N], values: [f64; N]) -> Result<Self, AccountantError> {
        check_curve(&orders, &values)?;
        Ok(Self { orders, values })
    }
    /// Internal constructor for values already known valid.
    pub(crate) fn from_parts(orders: [f64; N], values: [f64; N]) -> Self {
        Self { orders, values }
    }
    /// The orders.
    #[must_use]
    pub fn orders(&self) -> &[f64; N] {
        &self.orders
    }
    /// The RDP values, one per order.
    #[must_use]
    pub fn values(&self) -> &[f64; N] {
        &self.values
    }
    /// The best (ε, δ) over the grid and over both conversions
    /// ([`crate::convert::rdp_to_approx`]).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 < δ < 1`;
    /// [`AccountantError::NumericalFailure`] if every order gives ε = ∞.
    pub fn to_approx_dp(&self, delta: f64) -> Result<Report, AccountantError> {
        crate::convert::rdp_to_approx(&self.orders, &self.values, delta)
    }
}

#[cfg(feature = "alloc")]
pub use alloc_curve::RdpCurveVec;

#[cfg(feature = "alloc")]
mod alloc_curve {
    use alloc::vec::Vec;

    use super::{AccountantError, Report, check_curve};

    /// An RDP curve over an arbitrary, heap-allocated grid of orders (`alloc` feature).
    #[derive(Clone, PartialEq, Debug)]
    pub struct RdpCurveVec {
        orders: Vec<f64>,
        values: Vec<f64>,
    }

    impl RdpCurveVec {
        /// A curve from orders and values of equal length (same rules as
        /// [`super::RdpCurve::new`]).
        ///
        /// # Errors
        /// [`AccountantError::InvalidGrid`] for a bad grid or mismatched lengths,
        /// [`AccountantError::InvalidParameter`] for a NaN or negative value.
        pub fn new(orders: Vec<f64>, values: Vec<f64>) -> Result<Self, AccountantError> {
            check_curve(&orders, &values)?;
            Ok(Self { orders, values })
        }
        /// Internal constructor for values already known valid.
        pub(crate) fn from_parts(orders: Vec<f64>, values: Vec<f64>) -> Self {
            Self { orders, values }
        }
        /// The orders.
        #[must_use]
        pub fn orders(&self) -> &[f64] {
            &self.orders
        }
        /// The RDP values.
        #[must_use]
        pub fn values(&self) -> &[f64] {
            &self.values
        }
        /// See [`super::RdpCurve::to_approx_dp`].
        ///
        /// # Errors
        /// As [`super::RdpCurve::to_approx_dp`].
        pub fn to_approx_dp(&self, delta: f64) -> Result<Report, AccountantError> {
            crate::convert::rdp_to_approx(&self.orders, &self.values, delta)
        }
    }
}
