#![no_std]
#![doc = include_str!("../README.md")]

extern crate alloc;

mod args;
mod failure;
mod filter;
mod ops;

use alloc::collections::BTreeMap;
use alloc::string::String;
use serde_json::{Map, Value};

pub use failure::Failure;

use filter::AnyFilter;

/// One caller's state: the budget filters it opened, by id. Everything else is stateless.
///
/// [`Session::call`] is the whole API: a request as JSON text in, a response as JSON text out
/// (see the crate docs for the operations). The wasm module holds one `Session`.
#[derive(Debug, Default)]
pub struct Session {
    filters: BTreeMap<u32, AnyFilter>,
    next_id: u32,
}

impl Session {
    /// A session with no filters open.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            filters: BTreeMap::new(),
            next_id: 0,
        }
    }

    /// Answers one request: `{"op": …, …}` → `{"ok": value}` or
    /// `{"error": {"kind": …, "message": …}}`. Never panics on any input; a number in a
    /// response is never NaN (a +∞ bound is the string `"Infinity"`).
    #[must_use]
    pub fn call(&mut self, request: &str) -> String {
        let answer = match serde_json::from_str::<Value>(request) {
            Ok(Value::Object(obj)) => self.handle(&obj),
            Ok(_) => Err(Failure::request("a request is a JSON object {\"op\": …}")),
            Err(e) => Err(Failure::request(alloc::format!(
                "request is not valid JSON: {e}"
            ))),
        };
        let mut out = Map::new();
        match answer {
            Ok(v) => out.insert("ok".into(), v),
            Err(f) => out.insert("error".into(), f.to_json()),
        };
        serde_json::to_string(&Value::Object(out)).unwrap_or_else(|_| {
            String::from(
                r#"{"error":{"kind":"Internal","message":"response could not be encoded"}}"#,
            )
        })
    }

    /// The response to a request that is not UTF-8 (for the wasm export layer, which
    /// receives bytes).
    #[must_use]
    pub fn invalid_utf8() -> String {
        String::from(r#"{"error":{"kind":"InvalidRequest","message":"request is not UTF-8"}}"#)
    }

    /// Number of open budget filters.
    #[must_use]
    pub fn open_filters(&self) -> usize {
        self.filters.len()
    }

    fn handle(&mut self, req: &Map<String, Value>) -> Result<Value, Failure> {
        let op = args::string(req, "op")?;
        match op {
            "version" => Ok(Value::from(env!("CARGO_PKG_VERSION"))),
            "syntax" => Ok(Value::from(dpinfer_accountants::spec::SYNTAX)),
            "parse" => ops::parse(req),
            "epsilon" => ops::query(req, ops::Ask::Epsilon),
            "delta" => ops::query(req, ops::Ask::Delta),
            "sigma" => ops::sigma(req),
            "max_steps" => ops::max_steps(req),
            "claim" => ops::claim(req),
            "verify_claim" => ops::verify_claim(req),
            "filter_new" => {
                let f = filter::new(req)?;
                let id = self
                    .next_id
                    .checked_add(1)
                    .ok_or_else(|| Failure::request("too many budget filters opened"))?;
                let status = f.status()?;
                self.next_id = id;
                self.filters.insert(id, f);
                Ok(filter::with_id(id, status))
            }
            "filter_charge" => {
                let id = filter_id(req)?;
                let f = self
                    .filters
                    .get_mut(&id)
                    .ok_or_else(|| unknown_filter(id))?;
                Ok(filter::with_id(id, f.charge(req)?))
            }
            "filter_status" => {
                let id = filter_id(req)?;
                let f = self.filters.get(&id).ok_or_else(|| unknown_filter(id))?;
                Ok(filter::with_id(id, f.status()?))
            }
            "filter_free" => {
                let id = filter_id(req)?;
                Ok(Value::Bool(self.filters.remove(&id).is_some()))
            }
            other => Err(Failure::request(alloc::format!(
                "unknown op {other:?} (version, syntax, parse, epsilon, delta, sigma, max_steps, \
                 claim, verify_claim, filter_new, filter_charge, filter_status, filter_free)"
            ))),
        }
    }
}

fn filter_id(req: &Map<String, Value>) -> Result<u32, Failure> {
    let id = args::count(req, "id")?;
    u32::try_from(id).map_err(|_| unknown_filter_u64(id))
}

fn unknown_filter(id: u32) -> Failure {
    unknown_filter_u64(u64::from(id))
}

fn unknown_filter_u64(id: u64) -> Failure {
    Failure::new(
        "UnknownFilter",
        alloc::format!("no open budget filter has id {id} (never opened, or freed)"),
    )
}
