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
