//! Reading a request's fields (typed errors naming the field) and writing numbers.
//!
//! JSON has no NaN or ±∞, so both directions spell them as the strings `"NaN"`,
//! `"Infinity"` and `"-Infinity"` (what the JavaScript wrapper sends for such a number, so
//! the accountants' own checks reject it by name). Integers may also be decimal strings (a
//! JavaScript `BigInt`).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::str::FromStr;

use dpinfer_accountants::{EventBuf, EventSpec, Neighbouring, ParseEventError, ParseNameError};
use serde_json::{Map, Value};

use crate::Failure;

type Obj = Map<String, Value>;

/// A field that is present and not `null`.
pub(crate) fn field<'a>(obj: &'a Obj, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn missing(key: &str) -> Failure {
    Failure::request(format!("missing field `{key}`"))
}

fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// A required string.
pub(crate) fn string<'a>(obj: &'a Obj, key: &str) -> Result<&'a str, Failure> {
    match field(obj, key) {
        None => Err(missing(key)),
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(Failure::request(format!(
            "`{key}` must be a string, got {}",
            shown(v)
        ))),
    }
}

/// A real number: a JSON number, or `"NaN"` / `"Infinity"` / `"-Infinity"` (passed on for
/// the accountants to reject with their own typed error).
pub(crate) fn to_real(key: &str, v: &Value) -> Result<f64, Failure> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| {
            Failure::request(format!("`{key}` = {n} is not representable as a number"))
        }),
        Value::String(s) if s == "NaN" => Ok(f64::NAN),
        Value::String(s) if s == "Infinity" => Ok(f64::INFINITY),
        Value::String(s) if s == "-Infinity" => Ok(f64::NEG_INFINITY),
        other => Err(Failure::request(format!(
            "`{key}` must be a number, got {}",
            shown(other)
        ))),
    }
}

/// A required real number.
pub(crate) fn real(obj: &Obj, key: &str) -> Result<f64, Failure> {
    field(obj, key).map_or_else(|| Err(missing(key)), |v| to_real(key, v))
}

/// An optional real number.
pub(crate) fn opt_real(obj: &Obj, key: &str) -> Result<Option<f64>, Failure> {
    field(obj, key).map(|v| to_real(key, v)).transpose()
}

fn to_count(key: &str, v: &Value) -> Result<u64, Failure> {
    let parsed = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    parsed.ok_or_else(|| {
        Failure::request(format!(
            "`{key}` must be a non-negative integer below 2^64, got {}",
            shown(v)
        ))
    })
}

/// A required non-negative integer.
pub(crate) fn count(obj: &Obj, key: &str) -> Result<u64, Failure> {
    field(obj, key).map_or_else(|| Err(missing(key)), |v| to_count(key, v))
}

/// An optional non-negative integer.
pub(crate) fn opt_count(obj: &Obj, key: &str) -> Result<Option<u64>, Failure> {
    field(obj, key).map(|v| to_count(key, v)).transpose()
}

/// A name parsed by the accountants' `FromStr` (relation, accountant, rule, method), or
/// `default` when absent.
pub(crate) fn name<T: FromStr<Err = ParseNameError>>(
    obj: &Obj,
    key: &str,
    default: T,
) -> Result<T, Failure> {
    match field(obj, key) {
        None => Ok(default),
        Some(Value::String(s)) => s
            .parse::<T>()
            .map_err(|e| Failure::from(e).context(&format!("`{key}`"))),
        Some(v) => Err(Failure::request(format!(
            "`{key}` must be a string, got {}",
            shown(v)
        ))),
    }
}

/// A required name parsed by the accountants' `FromStr`.
pub(crate) fn required_name<T: FromStr<Err = ParseNameError>>(
    obj: &Obj,
    key: &str,
) -> Result<T, Failure> {
    let text = string(obj, key)?;
    text.parse::<T>()
        .map_err(|e| Failure::from(e).context(&format!("`{key}`")))
}

/// The neighbouring relation (`relation`, default add/remove).
pub(crate) fn relation(obj: &Obj) -> Result<Neighbouring, Failure> {
    name(obj, "relation", Neighbouring::AddRemove)
}

/// One event, validated for `relation`: a string in the event grammar (its `count=` is the
/// count), or the pair `[event, count]` of a claim's `events` (an event as the serde form
/// of `EventBuf`).
pub(crate) fn event(v: &Value, relation: Neighbouring) -> Result<(EventBuf, u64), Failure> {
    match v {
        Value::String(text) => {
            let spec: EventSpec = text.parse().map_err(|e| parse_failure(e, text))?;
            spec.validate(relation)
                .map_err(|e| Failure::from(e).context(&format!("event {text:?}")))?;
            Ok(spec.to_pair())
        }
        Value::Array(pair) if pair.len() == 2 => {
            let event: EventBuf = serde_json::from_value(pair[0].clone()).map_err(|e| {
                Failure::request(format!("event {} is not an event: {e}", shown(&pair[0])))
            })?;
            let n = to_count("count", &pair[1])?;
            event
                .with_event(|e| e.validate(relation))
                .map_err(|e| Failure::from(e).context(&format!("event {event}")))?;
            Ok((event, n))
        }
        other => Err(Failure::request(format!(
            "an event is a string in the event grammar or a pair [event, count], got {}",
            shown(other)
        ))),
    }
}

/// A grammar error, with the event's text in front unless the message already shows it.
pub(crate) fn parse_failure(e: ParseEventError, text: &str) -> Failure {
    let f = Failure::from(e);
    if f.message().contains(text) {
        f
    } else {
        f.context(&format!("event {text:?}"))
    }
}

/// The `events` array, each validated for `relation`.
pub(crate) fn events(obj: &Obj, relation: Neighbouring) -> Result<Vec<(EventBuf, u64)>, Failure> {
    match field(obj, "events") {
        None => Err(missing("events")),
        Some(Value::Array(items)) => items.iter().map(|v| event(v, relation)).collect(),
        Some(v) => Err(Failure::request(format!(
            "`events` must be an array, got {}",
            shown(v)
        ))),
    }
}

/// A number for a response: finite as is, ±∞ as `"Infinity"` / `"-Infinity"`; NaN is an
/// error (no response ever holds a NaN bound).
pub(crate) fn number(what: &str, x: f64) -> Result<Value, Failure> {
    if x.is_nan() {
        return Err(Failure::new(
            "NumericalFailure",
            format!("{what} evaluated to NaN; no bound is reported"),
        ));
    }
    Ok(if x == f64::INFINITY {
        Value::from("Infinity")
    } else if x == f64::NEG_INFINITY {
        Value::from("-Infinity")
    } else {
        Value::from(x)
    })
}
