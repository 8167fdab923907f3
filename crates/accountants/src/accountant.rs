//! The high-level [`Accountant`] trait.

use crate::{AccountantError, Event, Neighbouring, Report};

/// A privacy accountant: a running composition of [`Event`]s under one neighbouring relation
/// that reports (ε, δ) guarantees.
///
/// Implementations: [`crate::PureAccountant`], [`crate::ApproxAccountant`],
/// [`crate::ZcdpAccountant`], [`crate::RdpAccountant`] (fixed grid, no alloc),
/// [`crate::RdpAccountantVec`] (`alloc`), [`crate::PldAccountant`].
///
/// # Contract
/// * `compose_n` is atomic: on `Err` the state is unchanged.
/// * `count` repetitions are composed in O(1) (or O(grid)), never by looping `count` times.
/// * `epsilon`/`delta` return upper bounds (rounded up, see [`crate::round_up`]) with the
///   conversion that produced them, or an error — never NaN, never an optimistic value.
///
/// # Privacy
/// All guarantees are for the relation returned by [`Accountant::relation`] and assume
/// adaptive composition (each event may depend on earlier outputs).
pub trait Accountant {
    /// The neighbouring relation this accountant's guarantees are stated for.
    fn relation(&self) -> Neighbouring;

    /// Composes `count` adaptive repetitions of `event` (`count = 0` is a no-op).
    ///
    /// # Errors
    /// Parameter errors from [`Event::validate`], [`AccountantError::Unsupported`] if this
    /// notion cannot express the event, [`AccountantError::NumericalFailure`] if a bound
    /// could not be evaluated reliably. The state is unchanged on error.
    fn compose_n(&mut self, event: &Event<'_>, count: u64) -> Result<(), AccountantError>;

    /// Composes one `event`.
    ///
    /// # Errors
    /// As [`Accountant::compose_n`].
    fn compose(&mut self, event: &Event<'_>) -> Result<(), AccountantError> {
        self.compose_n(event, 1)
    }

    /// The smallest ε this accountant can certify at `delta` (an upper bound of the true ε).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 < δ < 1` (pure accountants also accept
    /// `δ = 0`), [`AccountantError::DeltaTooSmall`] when approximate-DP events already spent
    /// more δ, [`AccountantError::NumericalFailure`] if no finite bound exists.
    fn epsilon(&self, delta: f64) -> Result<Report, AccountantError>;

    /// The smallest δ this accountant can certify at `epsilon` (an upper bound of the true δ).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 ≤ ε < ∞`.
    fn delta(&self, epsilon: f64) -> Result<Report, AccountantError>;
}

/// Which accountant produced a report: the five accountants of this crate (the RDP one on
/// [`crate::DEFAULT_ORDERS`], or on the integer orders `2..=256`), as a value (see
/// [`crate::Claim`]).
///
/// `Display` and `FromStr` use `"pure"`, `"approx"`, `"rdp"`, `"zcdp"`, `"pld"`,
/// `"rdp_integers"`.
///
/// ```
/// use dpinfer_accountants::AccountantKind;
/// let k: AccountantKind = "rdp".parse()?;
/// assert_eq!(k, AccountantKind::Rdp);
/// assert_eq!(k.to_string(), "rdp");
/// assert!("moments".parse::<AccountantKind>().is_err());
/// # Ok::<(), dpinfer_accountants::ParseNameError>(())
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
#[non_exhaustive]
pub enum AccountantKind {
    /// [`crate::PureAccountant`]: ε adds.
    Pure,
    /// [`crate::ApproxAccountant`]: basic, advanced and optimal composition of (ε, δ).
    Approx,
    /// [`crate::RdpAccountant`] on [`crate::DEFAULT_ORDERS`].
    Rdp,
    /// [`crate::ZcdpAccountant`].
    Zcdp,
    /// [`crate::PldAccountant`] (exact Gaussian PLD; numerical PLD for other events).
    Pld,
    /// An RDP accountant (`RdpAccountantVec`, feature `alloc`) on every integer order
    /// `2..=`[`MAX_INTEGER_ORDER`]: the grid of mechanisms whose RDP bound holds at integer
    /// orders only (WBK19 sampling without replacement, DP-Barker).
    RdpIntegers,
}

/// Largest order of [`AccountantKind::RdpIntegers`]'s grid `2, 3, …, 256`.
pub const MAX_INTEGER_ORDER: u32 = 256;

impl AccountantKind {
    /// Every kind, in the order pure, approx, rdp, zcdp, pld, rdp_integers.
    pub const ALL: [Self; 6] = [
        Self::Pure,
        Self::Approx,
        Self::Rdp,
        Self::Zcdp,
        Self::Pld,
        Self::RdpIntegers,
    ];

    /// The machine name (`"pure"`, `"approx"`, `"rdp"`, `"zcdp"`, `"pld"`, `"rdp_integers"`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Pure => "pure",
            Self::Approx => "approx",
            Self::Rdp => "rdp",
            Self::Zcdp => "zcdp",
            Self::Pld => "pld",
            Self::RdpIntegers => "rdp_integers",
        }
    }

    /// The name in prose (`"pure-DP"`, `"approximate-DP"`, `"RDP"`, `"zCDP"`, `"PLD"`,
    /// `"RDP (integer orders 2 to 256)"`).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Pure => "pure-DP",
            Self::Approx => "approximate-DP",
            Self::Rdp => "RDP",
            Self::Zcdp => "zCDP",
            Self::Pld => "PLD",
            Self::RdpIntegers => "RDP (integer orders 2 to 256)",
        }
    }

    /// A fresh accountant of this kind under `relation`; the RDP and zCDP accountants use
    /// conversion `rule` (the exact notions ignore it). The RDP accountant is on
    /// [`crate::DEFAULT_ORDERS`], `RdpIntegers` on every integer order 2 to
    /// [`crate::MAX_INTEGER_ORDER`]. [`crate::Claim::account`] composes in exactly this
    /// accountant, so a front end that asks several kinds one question (e.g. `dpinfer
    /// account`) gets the claim's numbers bit for bit.
    ///
    /// ```
    /// use dpinfer_accountants::{Accountant, AccountantKind, ConversionRule, Event, Neighbouring};
    /// let mut a = AccountantKind::Zcdp.boxed(Neighbouring::ReplaceOne, ConversionRule::Classic)?;
    /// a.compose_n(&Event::Zcdp { rho: 0.5 }, 2)?;
    /// assert_eq!(a.relation(), Neighbouring::ReplaceOne);
    /// // Bun–Steinke 2016 Prop. 1.3: ε = ρ + 2√(ρ ln(1/δ)) with ρ = 1.
    /// let want = 1.0 + 2.0 * (1e-5_f64.recip().ln()).sqrt();
    /// assert!((a.epsilon(1e-5)?.epsilon - want).abs() < 1e-12);
    /// # Ok::<(), dpinfer_accountants::AccountantError>(())
    /// ```
    ///
    /// # Errors
    /// Only if an accountant cannot be built on its orders (never for the fixed orders used
    /// here; the `Result` keeps that path typed instead of panicking).
    #[cfg(feature = "alloc")]
    pub fn boxed(
        self,
        relation: Neighbouring,
        rule: crate::ConversionRule,
    ) -> Result<alloc::boxed::Box<dyn Accountant + Send + Sync>, AccountantError> {
        use alloc::boxed::Box;
        Ok(match self {
            Self::Pure => Box::new(crate::PureAccountant::new(relation)),
            Self::Approx => Box::new(crate::ApproxAccountant::new(relation)),
            Self::Rdp => Box::new(crate::RdpAccountant::new(relation).with_conversion(rule)),
            Self::Zcdp => Box::new(crate::ZcdpAccountant::new(relation).with_conversion(rule)),
            Self::Pld => Box::new(crate::PldAccountant::new(relation)),
            Self::RdpIntegers => Box::new(
                crate::RdpAccountantVec::new(
                    relation,
                    (2..=MAX_INTEGER_ORDER).map(f64::from).collect(),
                )?
                .with_conversion(rule),
            ),
        })
    }
}

display_and_parse_by_name!(
    AccountantKind,
    "accountant",
    "pure, approx, rdp, zcdp, pld, rdp_integers"
);
