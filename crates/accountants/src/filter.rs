//! A budget filter: admits an event only if the composition stays within an (ε, δ) budget.

use crate::error::{non_negative, open_unit};
use crate::{Accountant, AccountantError, Event, Report};

/// Holds a total (ε, δ) budget and an accountant. [`BudgetFilter::try_compose`] either
/// records the event and returns the new spend, or refuses it with
/// [`AccountantError::BudgetExceeded`] and leaves the state **exactly** as it was (the
/// accountant is cloned, the event composed into the clone, the budget checked, and only
/// then the clone committed).
///
/// **Choice:** after a refusal the filter stays open — a later, smaller event may still be
/// admitted. This is safe because the decision depends only on public parameters (the
/// events' σ, ε, q …), never on data.
///
/// # Privacy
/// The guarantee is the accountant's, at the filter's δ, for the accountant's relation.
/// Filters with adaptively chosen parameters are valid for pure DP / basic composition,
/// zCDP and RDP (Feldman–Zrnic 2021; Lécuyer 2021 for a grid of orders) and Gaussian DP
/// (Smith–Thakurta 2022). For [`crate::ApproxAccountant`] only basic composition is used,
/// because the advanced/optimal bounds assume a count fixed in advance.
///
/// ```
/// use dpinfer_accountants::{AccountantError, BudgetFilter, Event, Neighbouring, PureAccountant};
/// let mut f = BudgetFilter::new(PureAccountant::new(Neighbouring::AddRemove), 1.0, 0.0)?;
/// let e = Event::PureEpsilon { epsilon: 0.4 };
/// f.try_compose(&e)?;
/// f.try_compose(&e)?;
/// assert!(matches!(f.try_compose(&e), Err(AccountantError::BudgetExceeded { .. })));
/// # Ok::<(), AccountantError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BudgetFilter<A> {
    accountant: A,
    epsilon: f64,
    delta: f64,
}

/// How a filter reads ε from an accountant (basic composition for [`crate::ApproxAccountant`]).
pub trait FilterEpsilon {
    /// ε at δ that is valid for a filter with adaptively chosen parameters.
    ///
    /// # Errors
    /// As [`Accountant::epsilon`].
    fn filter_epsilon(&self, delta: f64) -> Result<Report, AccountantError>;
}

macro_rules! filter_via_epsilon {
    ($($t:ty),*) => {$(
        impl FilterEpsilon for $t {
            fn filter_epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
                self.epsilon(delta)
            }
        }
    )*};
}
filter_via_epsilon!(
    crate::PureAccountant,
    crate::ZcdpAccountant,
    crate::PldAccountant
);
#[cfg(feature = "alloc")]
filter_via_epsilon!(crate::RdpAccountantVec);

impl<const N: usize> FilterEpsilon for crate::RdpAccountant<N> {
    fn filter_epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        self.epsilon(delta)
    }
}

impl FilterEpsilon for crate::ApproxAccountant {
    fn filter_epsilon(&self, delta: f64) -> Result<Report, AccountantError> {
        let b = self.basic();
        if b.delta > delta {
            return Err(AccountantError::DeltaTooSmall {
                requested: delta,
                spent: b.delta,
            });
        }
        Ok(Report { delta, ..b })
    }
}

impl<A: Accountant + FilterEpsilon + Clone> BudgetFilter<A> {
    /// A filter with budget (ε, δ) around `accountant` (which may already hold events).
    /// `δ = 0` is allowed only with an accountant that reports at δ = 0 (pure ε, or the
    /// approximate-DP accountant while its δ is 0); an RDP, zCDP or PLD accountant needs
    /// `δ > 0`, and asking for 0 is refused here rather than on every later admission.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `ε ≥ 0` finite and `0 ≤ δ < 1`, or for
    /// `δ = 0` with an accountant that cannot report at δ = 0.
    pub fn new(accountant: A, epsilon: f64, delta: f64) -> Result<Self, AccountantError> {
        let epsilon = non_negative("epsilon", epsilon)?;
        if delta == 0.0 {
            // The accountant's own answer at δ = 0 decides: an error now would be an error
            // on every admission. (A budget overrun is not an error here: the filter refuses
            // events, it does not refuse to exist.)
            match accountant.filter_epsilon(0.0) {
                Ok(_)
                | Err(
                    AccountantError::BudgetExceeded { .. } | AccountantError::DeltaTooSmall { .. },
                ) => {}
                Err(_) => {
                    return Err(AccountantError::InvalidParameter {
                        name: "delta",
                        value: 0.0,
                    });
                }
            }
        } else {
            open_unit("delta", delta)?;
        }
        Ok(Self {
            accountant,
            epsilon,
            delta,
        })
    }
    /// Atomically admits `count` repetitions of `event`, or refuses them.
    ///
    /// # Errors
    /// [`AccountantError::BudgetExceeded`] (nothing recorded), or any error of the
    /// accountant (nothing recorded).
    pub fn try_compose_n(
        &mut self,
        event: &Event<'_>,
        count: u64,
    ) -> Result<Report, AccountantError> {
        let mut next = self.accountant.clone();
        next.compose_n(event, count)?;
        let r = match next.filter_epsilon(self.delta) {
            Ok(r) => r,
            Err(AccountantError::DeltaTooSmall { .. }) => {
                return Err(AccountantError::BudgetExceeded {
                    epsilon: f64::INFINITY,
                    budget: self.epsilon,
                });
            }
            Err(e) => return Err(e),
        };
        if r.epsilon > self.epsilon {
            return Err(AccountantError::BudgetExceeded {
                epsilon: r.epsilon,
                budget: self.epsilon,
            });
        }
        self.accountant = next;
        Ok(r)
    }
    /// Atomically admits one `event`, or refuses it.
    ///
    /// # Errors
    /// As [`BudgetFilter::try_compose_n`].
    pub fn try_compose(&mut self, event: &Event<'_>) -> Result<Report, AccountantError> {
        self.try_compose_n(event, 1)
    }
    /// The spend so far at the filter's δ.
    ///
    /// # Errors
    /// As [`Accountant::epsilon`].
    pub fn spent(&self) -> Result<Report, AccountantError> {
        self.accountant.filter_epsilon(self.delta)
    }
    /// The budget `(ε, δ)`.
    #[must_use]
    pub fn budget(&self) -> (f64, f64) {
        (self.epsilon, self.delta)
    }
    /// The wrapped accountant.
    #[must_use]
    pub fn accountant(&self) -> &A {
        &self.accountant
    }
}
