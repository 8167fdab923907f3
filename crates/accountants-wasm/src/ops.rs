//! The stateless operations: the event grammar, ε/δ queries, σ calibration, claims.

use alloc::format;
use alloc::string::{String, ToString};

use dpinfer_accountants::calibrate::{MaxStepsRequest, Method, PrivateMcmc, SigmaRequest};
use dpinfer_accountants::{
    AccountantError, AccountantKind, Claim, ConversionRule, EventSpec, Query, Report, Sampling,
};
use serde_json::{Map, Value};

use crate::Failure;
use crate::args::{self, number};

type Obj = Map<String, Value>;

/// Which quantity a query asks for.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Ask {
    /// ε at the request's `delta`.
    Epsilon,
    /// δ at the request's `epsilon`.
    Delta,
}

/// `{accountant, epsilon, delta, conversion, order}` (as `dpinfer account --json` prints).
pub(crate) fn report_json(kind: AccountantKind, r: &Report) -> Result<Value, Failure> {
    let mut m = Map::new();
    m.insert("accountant".into(), Value::from(kind.name()));
    m.insert("epsilon".into(), number("epsilon", r.epsilon)?);
    m.insert("delta".into(), number("delta", r.delta)?);
    m.insert("conversion".into(), Value::from(r.conversion.name()));
    let order = match r.conversion.order() {
        Some(a) => number("order", a)?,
        None => Value::Null,
    };
    m.insert("order".into(), order);
    Ok(Value::Object(m))
}

fn json_of<T: serde::Serialize>(what: &str, x: &T) -> Result<Value, Failure> {
    let v = serde_json::to_value(x)
        .map_err(|e| Failure::new("Internal", format!("{what} could not be encoded: {e}")))?;
    if has_null_number(&v) {
        // serde_json writes a non-finite f64 as `null`: refuse rather than hand out a
        // value whose number silently disappeared.
        return Err(Failure::new(
            "NumericalFailure",
            format!("{what} holds a non-finite number"),
        ));
    }
    Ok(v)
}

/// Whether a serialised value has a `null` anywhere (the serde forms of events, claims and
/// reports have no optional field, so a `null` can only be a non-finite number).
fn has_null_number(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null_number),
        Value::Object(m) => m.values().any(has_null_number),
        _ => false,
    }
}

/// `parse`: an event in the grammar → its canonical text, parts, prose and serde form;
/// validated when `relation` is given.
pub(crate) fn parse(req: &Obj) -> Result<Value, Failure> {
    let text = args::string(req, "event")?;
    let spec: EventSpec = text.parse().map_err(|e| args::parse_failure(e, text))?;
    if args::field(req, "relation").is_some() {
        let relation = args::relation(req)?;
        spec.validate(relation)
            .map_err(|e| Failure::from(e).context(&format!("event {text:?}")))?;
    }
    let event = spec.event();
    let mut sampling = Map::new();
    match spec.sampling() {
        Sampling::None => {
            sampling.insert("kind".into(), Value::from("none"));
        }
        Sampling::Poisson { q } => {
            sampling.insert("kind".into(), Value::from("poisson"));
            sampling.insert("q".into(), number("q", q)?);
        }
        Sampling::WithoutReplacement { batch, population } => {
            sampling.insert("kind".into(), Value::from("wor"));
            sampling.insert("batch".into(), Value::from(batch));
            sampling.insert("population".into(), Value::from(population));
        }
        Sampling::WithReplacement { batch, population } => {
            sampling.insert("kind".into(), Value::from("wr"));
            sampling.insert("batch".into(), Value::from(batch));
            sampling.insert("population".into(), Value::from(population));
        }
    }
    let mut m = Map::new();
    m.insert("spec".into(), Value::from(spec.to_string()));
    m.insert("kind".into(), Value::from(spec.base().name()));
    m.insert("count".into(), Value::from(spec.count()));
    m.insert("sampling".into(), Value::Object(sampling));
    m.insert("description".into(), Value::from(event.to_string()));
    m.insert("event".into(), json_of("event", &event)?);
    Ok(Value::Object(m))
}

/// `epsilon` / `delta`: compose `events` and ask one accountant (`accountant`), or every
/// accountant (`"all"`, the default) keeping the tightest answer.
pub(crate) fn query(req: &Obj, ask: Ask) -> Result<Value, Failure> {
    let relation = args::relation(req)?;
    let rule = args::name(req, "rule", ConversionRule::Tightest)?;
    let q = match ask {
        Ask::Epsilon => Query::EpsilonAt(args::real(req, "delta")?),
        Ask::Delta => Query::DeltaAt(args::real(req, "epsilon")?),
    };
    let events = args::events(req, relation)?;
    let which = match args::field(req, "accountant") {
        None => "all",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(Failure::request(format!(
                "`accountant` must be a string, got {v}"
            )));
        }
    };
    if which == "all" {
        let answer = q
            .best(&Query::KINDS, relation, rule, &events)
            .map_err(|nb| {
                // A bad δ (or ε) is the caller's one mistake, whichever accountant saw it first:
                // report it as itself, not as five accountants failing.
                nb.reasons
                    .iter()
                    .find(|(_, e)| matches!(e, AccountantError::InvalidParameter { .. }))
                    .map_or_else(|| Failure::from(nb.clone()), |(_, e)| Failure::from(*e))
            })?;
        let mut best = report_json(answer.accountant, &answer.report)?;
        let each = answer
            .each
            .iter()
            .map(|(k, r)| match r {
                Ok(r) => report_json(*k, r),
                Err(e) => {
                    let mut m = Map::new();
                    m.insert("accountant".into(), Value::from(k.name()));
                    m.insert("error".into(), Failure::from(*e).to_json());
                    Ok(Value::Object(m))
                }
            })
            .collect::<Result<Value, Failure>>()?;
        if let Value::Object(m) = &mut best {
            m.insert("each".into(), each);
        }
        return Ok(best);
    }
    let kind: AccountantKind = which
        .parse()
        .map_err(|e| Failure::from(e).context("`accountant` (or \"all\")"))?;
    let mut acc = kind.boxed(relation, rule)?;
    let r = q.ask(acc.as_mut(), &events)?;
    report_json(kind, &r)
}

/// `sigma`: the smallest Gaussian σ for `steps` releases within (`epsilon`, `delta`).
pub(crate) fn sigma(req: &Obj) -> Result<Value, Failure> {
    let base = SigmaRequest::new(
        args::real(req, "epsilon")?,
        args::real(req, "delta")?,
        args::count(req, "steps")?,
    );
    let method = match args::field(req, "method") {
        None => None,
        Some(_) => Some(args::name(req, "method", Method::Pld)?),
    };
    let r = SigmaRequest {
        sensitivity: args::opt_real(req, "sensitivity")?.unwrap_or(1.0),
        poisson: args::opt_real(req, "poisson")?,
        method,
        rule: args::name(req, "rule", ConversionRule::Tightest)?,
        ..base
    };
    let s = r.calibrate()?;
    let mut m = Map::new();
    m.insert("sigma".into(), number("sigma", s.sigma)?);
    m.insert("method".into(), Value::from(s.method.name()));
    m.insert(
        "poisson".into(),
        match s.poisson {
            Some(q) => number("poisson", q)?,
            None => Value::Null,
        },
    );
    m.insert("description".into(), Value::from(s.to_string()));
    Ok(Value::Object(m))
}

/// `max_steps`: the largest number of iterations of a private MCMC sampler on `n` rows
/// within (`epsilon`, `delta`) (as `dpinfer account max-steps`; replace-one neighbours).
pub(crate) fn max_steps(req: &Obj) -> Result<Value, Failure> {
    let sampler: PrivateMcmc = args::required_name(req, "sampler")?;
    let method = args::name(req, "method", MaxStepsRequest::DEFAULT_METHOD)?;
    let request = match sampler {
        PrivateMcmc::Penalty => MaxStepsRequest::Penalty {
            tau: args::real(req, "tau")?,
            a: args::opt_real(req, "a")?.unwrap_or(MaxStepsRequest::DEFAULT_A),
            method,
        },
        PrivateMcmc::Hmc => MaxStepsRequest::Hmc {
            tau_l: args::real(req, "tau")?,
            tau_g: args::real(req, "tau_g")?,
            leapfrog: args::opt_count(req, "leapfrog")?
                .unwrap_or(MaxStepsRequest::DEFAULT_LEAPFROG),
            method,
        },
        PrivateMcmc::Barker => MaxStepsRequest::Barker {
            batch: args::count(req, "batch")?,
            max_order: args::opt_count(req, "max_order")?
                .unwrap_or(MaxStepsRequest::DEFAULT_MAX_ORDER),
        },
    };
    let found = request.max_steps(
        args::real(req, "epsilon")?,
        args::real(req, "delta")?,
        args::count(req, "n")?,
        args::name(req, "rule", ConversionRule::Tightest)?,
    )?;
    let mut m = Map::new();
    m.insert("sampler".into(), Value::from(sampler.name()));
    m.insert("steps".into(), Value::from(found.steps));
    m.insert(
        "rdp_order".into(),
        found.rdp_order.map_or(Value::Null, Value::from),
    );
    Ok(Value::Object(m))
}

/// `{claim, description}` of a claim.
fn claim_json(c: &Claim) -> Result<Value, Failure> {
    let mut m = Map::new();
    m.insert("claim".into(), json_of("claim", c)?);
    m.insert("epsilon".into(), number("epsilon", c.epsilon())?);
    m.insert("delta".into(), number("delta", c.delta())?);
    m.insert("description".into(), Value::from(c.to_string()));
    Ok(Value::Object(m))
}

/// `claim`: compose `events` in a fresh `accountant` (default `pld`) and report ε at
/// `delta` as a [`Claim`] value.
pub(crate) fn claim(req: &Obj) -> Result<Value, Failure> {
    let relation = args::relation(req)?;
    let kind = args::name(req, "accountant", AccountantKind::Pld)?;
    let rule = args::name(req, "rule", ConversionRule::Tightest)?;
    let delta = args::real(req, "delta")?;
    let events = args::events(req, relation)?;
    let c = Claim::account(relation, kind, rule, events, delta)?;
    claim_json(&c)
}

/// `verify_claim`: a stored claim (its JSON text, or the object) recomputed by a fresh
/// accountant; `matches` when every field agrees bit for bit, `understated` when the stored
/// ε or δ is below the recomputed one.
pub(crate) fn verify_claim(req: &Obj) -> Result<Value, Failure> {
    let parsed: Result<Claim, serde_json::Error> = match args::field(req, "claim") {
        None => return Err(Failure::request("missing field `claim`")),
        Some(Value::String(text)) => serde_json::from_str(text),
        Some(v) => serde_json::from_value(v.clone()),
    };
    let stored = parsed.map_err(|e| Failure::request(format!("not a claim: {e}")))?;
    for (event, _) in &stored.events {
        event
            .with_event(|e| e.validate(stored.relation))
            .map_err(|e| Failure::from(e).context(&format!("claimed event {event}")))?;
    }
    let fresh = stored.recompute()?;
    let mut m = Map::new();
    m.insert("matches".into(), Value::Bool(fresh == stored));
    m.insert(
        "understated".into(),
        Value::Bool(stored.epsilon() < fresh.epsilon() || stored.delta() < fresh.delta()),
    );
    let mut claimed = Map::new();
    claimed.insert("epsilon".into(), number("epsilon", stored.epsilon())?);
    claimed.insert("delta".into(), number("delta", stored.delta())?);
    m.insert("claimed".into(), Value::Object(claimed));
    m.insert("recomputed".into(), claim_json(&fresh)?);
    m.insert(
        "accountant".into(),
        Value::from(fresh.accountant.name().to_string()),
    );
    Ok(Value::Object(m))
}
