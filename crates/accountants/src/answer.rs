//! The smallest valid bound over several accountants, with each accountant's own answer:
//! what `dpinfer account epsilon|delta` prints, as one library call
//! ([`Query::best`], built on [`Query::ask_each`] and [`Query::tightest`]).
//!
//! ```
//! use dpinfer_accountants::{AccountantKind, ConversionRule, EventSpec, Neighbouring, Query};
//! let spec: EventSpec = "gaussian:sigma=1,poisson=0.01,count=10000".parse()?;
//! spec.validate(Neighbouring::AddRemove)?;
//! let answer = Query::EpsilonAt(1e-5)
//!     .best(&Query::KINDS, Neighbouring::AddRemove, ConversionRule::Tightest, &[spec.to_pair()])
//!     .map_err(|e| e.to_string())?;
//! assert_eq!(answer.accountant, AccountantKind::Pld); // the numerical PLD is tightest here
//! assert!(answer.report.epsilon < 6.72); // below the RDP bound 6.7194…
//! assert_eq!(answer.each.len(), 5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use alloc::vec::Vec;
use core::fmt;

use crate::{
    AccountantError, AccountantKind, ConversionRule, EventBuf, Neighbouring, Query, Report,
};

/// The answer of [`Query::best`]: the tightest bound and every accountant's answer.
#[derive(Clone, PartialEq, Debug)]
pub struct Answer {
    /// The accountant that gave the tightest (smallest) finite bound (the first on ties).
    pub accountant: AccountantKind,
    /// Its report.
    pub report: Report,
    /// Every accountant asked, in the order asked, with its report or why it cannot give one.
    pub each: Vec<(AccountantKind, Result<Report, AccountantError>)>,
}

/// No accountant asked could bound the composition: each one's reason, in the order asked
/// (an accountant that answered +∞ gave no reason and is not listed).
#[derive(Clone, PartialEq, Debug)]
pub struct NoBound {
    /// The accountants that failed and why.
    pub reasons: Vec<(AccountantKind, AccountantError)>,
}

impl fmt::Display for NoBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no accountant could bound this composition (")?;
        for (i, (k, e)) in self.reasons.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{k}: {e}")?;
        }
        f.write_str(")")
    }
}

impl core::error::Error for NoBound {}

impl Query {
    /// The accountants a front end asks when told "all", in the order it prints them: every
    /// kind that can express general events (not [`AccountantKind::RdpIntegers`], which is
    /// [`AccountantKind::Rdp`] on another grid).
    pub const KINDS: [AccountantKind; 5] = [
        AccountantKind::Pure,
        AccountantKind::Approx,
        AccountantKind::Zcdp,
        AccountantKind::Rdp,
        AccountantKind::Pld,
    ];

    /// Asks every kind in `kinds` ([`Query::ask_each`]) and keeps the tightest finite answer
    /// ([`Query::tightest`]). Each `Ok` answer is a valid upper bound under `relation`, so
    /// the smallest is too.
    ///
    /// Validate the events first ([`crate::Event::validate`], [`crate::EventSpec::validate`])
    /// to report a bad parameter once rather than once per accountant.
    ///
    /// # Errors
    /// [`NoBound`] with every accountant's reason if none gave a finite answer.
    pub fn best(
        self,
        kinds: &[AccountantKind],
        relation: Neighbouring,
        rule: ConversionRule,
        events: &[(EventBuf, u64)],
    ) -> Result<Answer, NoBound> {
        self.pick(self.ask_each(kinds, relation, rule, events))
    }

    /// The [`Answer`] of answers already collected (from [`Query::ask_each`], possibly with an
    /// accountant built otherwise, e.g. a [`crate::PldAccountant`] with its own
    /// discretisation, asked through [`Query::ask`]): the tightest ([`Query::tightest`]).
    ///
    /// # Errors
    /// [`NoBound`] with every accountant's reason if none gave a finite answer.
    pub fn pick(
        self,
        each: Vec<(AccountantKind, Result<Report, AccountantError>)>,
    ) -> Result<Answer, NoBound> {
        match self.tightest(&each) {
            Some((accountant, report)) => Ok(Answer {
                accountant,
                report,
                each,
            }),
            None => Err(NoBound {
                reasons: each
                    .into_iter()
                    .filter_map(|(k, r)| r.err().map(|e| (k, e)))
                    .collect(),
            }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn no_bound_lists_every_reason() {
        let g = EventBuf::Gaussian {
            sigma: 1.0,
            sensitivity: 1.0,
        };
        let err = Query::EpsilonAt(2.0)
            .best(
                &Query::KINDS,
                Neighbouring::AddRemove,
                ConversionRule::Tightest,
                &[(g.clone(), 1)],
            )
            .unwrap_err();
        assert_eq!(err.reasons.len(), 5);
        assert_eq!(
            err.to_string(),
            "no accountant could bound this composition (pure: event Gaussian cannot be \
             accounted by pure DP; approx: event Gaussian cannot be accounted by approximate DP; \
             zcdp: invalid parameter delta = 2.0; rdp: invalid parameter delta = 2.0; pld: invalid \
             parameter delta = 2.0)"
        );
        // One accountant asked: the answer is its own.
        let a = Query::DeltaAt(1.0)
            .best(
                &[AccountantKind::Zcdp],
                Neighbouring::AddRemove,
                ConversionRule::Tightest,
                &[(g, 3)],
            )
            .unwrap();
        assert_eq!(a.accountant, AccountantKind::Zcdp);
        assert_eq!(a.each.len(), 1);
        assert!(a.report.delta > 0.0 && a.report.delta < 1.0);
    }
}
