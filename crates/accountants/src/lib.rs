#![no_std]
#![doc = include_str!("../README.md")]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// `Display` (the type's `name()`) and `FromStr` (its inverse over `ALL`, else a
/// [`ParseNameError`] naming `$what` and the accepted `$expected`) for a name enum.
macro_rules! display_and_parse_by_name {
    ($ty:ty, $what:literal, $expected:literal) => {
        impl core::fmt::Display for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl core::str::FromStr for $ty {
            type Err = crate::ParseNameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .into_iter()
                    .find(|k| k.name() == s)
                    .ok_or(crate::ParseNameError {
                        what: $what,
                        expected: $expected,
                    })
            }
        }
    };
}

mod accountant;
mod accountants;
#[cfg(feature = "alloc")]
mod answer;
pub mod calibrate;
#[cfg(feature = "alloc")]
mod claim;
pub mod composition;
pub mod convert;
pub mod curves;
pub mod decimal;
mod error;
mod event;
mod filter;
mod notions;
pub mod pld;
#[cfg(feature = "alloc")]
pub mod pld_numeric;
#[cfg(feature = "alloc")]
pub mod spec;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use accountant::{Accountant, AccountantKind, MAX_INTEGER_ORDER};
#[cfg(feature = "alloc")]
pub use accountants::RdpAccountantVec;
pub use accountants::{
    ApproxAccountant, DEFAULT_ORDER_COUNT, DEFAULT_ORDERS, PldAccountant, PureAccountant,
    RdpAccountant, ZcdpAccountant,
};
#[cfg(feature = "alloc")]
pub use answer::{Answer, NoBound};
#[cfg(feature = "alloc")]
pub use claim::{Claim, EventBuf, Query};
pub use decimal::RoundedUp;
pub use error::{AccountantError, ParseNameError};
pub use event::{BinomialBound, Event, MAX_EVENT_DEPTH, MAX_MIXTURE_ATOMS};
pub use filter::{BudgetFilter, FilterEpsilon};
#[cfg(feature = "alloc")]
pub use notions::RdpCurveVec;
pub use notions::{
    ApproxDp, Conversion, ConversionRule, GaussianPld, Neighbouring, POSITIVE_FLOOR, PureDp,
    ROUNDING_MARGIN, RdpCurve, Report, Zcdp, round_up, round_up_positive,
};
#[cfg(feature = "alloc")]
pub use spec::{EventSpec, ParseEventError, Sampling, Select};
