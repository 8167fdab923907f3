//! Budget filters held by a [`crate::Session`]: one [`BudgetFilter`] per accountant kind.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use dpinfer_accountants::{
    AccountantKind, ApproxAccountant, BudgetFilter, ConversionRule, MAX_INTEGER_ORDER,
    PldAccountant, PureAccountant, RdpAccountant, RdpAccountantVec, Report, ZcdpAccountant,
};
use serde_json::{Map, Value};

use crate::Failure;
use crate::args::{self, number};
use crate::ops::report_json;

type Obj = Map<String, Value>;

/// A budget filter around one of the accountants (the filter needs a concrete, cloneable
/// accountant: it composes into a clone and commits only when the budget holds).
#[derive(Debug)]
pub(crate) struct AnyFilter {
    kind: AccountantKind,
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Pure(BudgetFilter<PureAccountant>),
    Approx(BudgetFilter<ApproxAccountant>),
    Rdp(Box<BudgetFilter<RdpAccountant<{ dpinfer_accountants::DEFAULT_ORDER_COUNT }>>>),
    Zcdp(BudgetFilter<ZcdpAccountant>),
    Pld(BudgetFilter<PldAccountant>),
    RdpIntegers(BudgetFilter<RdpAccountantVec>),
}

/// Runs `$body` with `$f` bound to the filter inside any variant.
macro_rules! each {
    ($inner:expr, $f:ident => $body:expr) => {
        match $inner {
            Inner::Pure($f) => $body,
            Inner::Approx($f) => $body,
            Inner::Rdp($f) => $body,
            Inner::Zcdp($f) => $body,
            Inner::Pld($f) => $body,
            Inner::RdpIntegers($f) => $body,
        }
    };
}

/// `filter_new`: a filter with budget (`epsilon`, `delta`) around a fresh `accountant`
/// (default `pld`) under `relation` with conversion `rule`.
pub(crate) fn new(req: &Obj) -> Result<AnyFilter, Failure> {
    let kind = args::name(req, "accountant", AccountantKind::Pld)?;
    let relation = args::relation(req)?;
    let rule = args::name(req, "rule", ConversionRule::Tightest)?;
    let epsilon = args::real(req, "epsilon")?;
    let delta = args::real(req, "delta")?;
    let inner = match kind {
        AccountantKind::Pure => Inner::Pure(BudgetFilter::new(
            PureAccountant::new(relation),
            epsilon,
            delta,
        )?),
        AccountantKind::Approx => Inner::Approx(BudgetFilter::new(
            ApproxAccountant::new(relation),
            epsilon,
            delta,
        )?),
        AccountantKind::Rdp => Inner::Rdp(Box::new(BudgetFilter::new(
            RdpAccountant::new(relation).with_conversion(rule),
            epsilon,
            delta,
        )?)),
        AccountantKind::Zcdp => Inner::Zcdp(BudgetFilter::new(
            ZcdpAccountant::new(relation).with_conversion(rule),
            epsilon,
            delta,
        )?),
        AccountantKind::Pld => Inner::Pld(BudgetFilter::new(
            PldAccountant::new(relation),
            epsilon,
            delta,
        )?),
        AccountantKind::RdpIntegers => {
            let orders: Vec<f64> = (2..=MAX_INTEGER_ORDER).map(f64::from).collect();
            Inner::RdpIntegers(BudgetFilter::new(
                RdpAccountantVec::new(relation, orders)?.with_conversion(rule),
                epsilon,
                delta,
            )?)
        }
        other => {
            return Err(Failure::new(
                "Unsupported",
                format!("no budget filter for the {other} accountant"),
            ));
        }
    };
    Ok(AnyFilter { kind, inner })
}

impl AnyFilter {
    fn relation(&self) -> dpinfer_accountants::Neighbouring {
        use dpinfer_accountants::Accountant;
        each!(&self.inner, f => f.accountant().relation())
    }

    fn budget(&self) -> (f64, f64) {
        each!(&self.inner, f => f.budget())
    }

    fn spent(&self) -> Result<Report, Failure> {
        Ok(each!(&self.inner, f => f.spent())?)
    }

    /// `filter_charge`: admits `event` (grammar text with its `count=`, or `[event, count]`)
    /// or refuses it (`BudgetExceeded`, nothing recorded).
    pub(crate) fn charge(&mut self, req: &Obj) -> Result<Value, Failure> {
        let v =
            args::field(req, "event").ok_or_else(|| Failure::request("missing field `event`"))?;
        let (event, n) = args::event(v, self.relation())?;
        let inner = &mut self.inner;
        event.with_event(|e| each!(inner, f => f.try_compose_n(e, n)))?;
        self.status()
    }

    /// `{accountant, relation, budget: {epsilon, delta}, spent: report, remaining: {epsilon}}`;
    /// the remaining ε is rounded down (never more than the budget allows).
    pub(crate) fn status(&self) -> Result<Value, Failure> {
        let (be, bd) = self.budget();
        let spent = self.spent()?;
        let mut left = (be - spent.epsilon).max(0.0);
        if left > 0.0 && left + spent.epsilon > be {
            left = left.next_down().max(0.0);
        }
        let mut budget = Map::new();
        budget.insert("epsilon".into(), number("epsilon", be)?);
        budget.insert("delta".into(), number("delta", bd)?);
        let mut remaining = Map::new();
        remaining.insert("epsilon".into(), number("remaining epsilon", left)?);
        let mut m = Map::new();
        m.insert("accountant".into(), Value::from(self.kind.name()));
        m.insert("relation".into(), Value::from(self.relation().name()));
        m.insert("budget".into(), Value::Object(budget));
        m.insert("spent".into(), report_json(self.kind, &spent)?);
        m.insert("remaining".into(), Value::Object(remaining));
        Ok(Value::Object(m))
    }
}

/// The status with the filter's `id` first.
pub(crate) fn with_id(id: u32, status: Value) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(id));
    if let Value::Object(rest) = status {
        m.extend(rest);
    }
    Value::Object(m)
}
