//! Why a call failed: a `kind` a program can branch on and the Rust error's message.

use alloc::format;
use alloc::string::{String, ToString};
use core::fmt;

use dpinfer_accountants::{AccountantError, NoBound, ParseEventError, ParseNameError};
use serde_json::{Map, Value};

/// A failed call: `kind` is the Rust error's variant name for an [`AccountantError`]
/// (`"InvalidParameter"`, `"BudgetExceeded"`, `"DeltaTooSmall"`, …, so a variant added to
/// the accountants has a kind without a change here), `"ParseEvent"` (the event grammar;
/// `details.key` names the key), `"ParseName"` (an accountant, relation, rule or method
/// name), `"NoBound"` (no accountant could bound the composition; `details.reasons`),
/// `"UnknownFilter"`, or `"InvalidRequest"` (not JSON, a missing field, a wrong type).
/// `message` is the Rust error's `Display`.
#[derive(Clone, PartialEq, Debug)]
pub struct Failure {
    kind: String,
    message: String,
    details: Option<Value>,
}

impl Failure {
    pub(crate) fn new(kind: &str, message: String) -> Self {
        Self {
            kind: kind.to_string(),
            message,
            details: None,
        }
    }

    /// A malformed request (kind `"InvalidRequest"`).
    pub(crate) fn request(message: impl Into<String>) -> Self {
        Self::new("InvalidRequest", message.into())
    }

    /// The same failure with `context: ` before the message.
    pub(crate) fn context(mut self, context: &str) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The kind (see the type's docs).
    #[must_use]
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `{"kind": …, "message": …}` (and `"details"` where there are any).
    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), Value::from(self.kind.as_str()));
        m.insert("message".into(), Value::from(self.message.as_str()));
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        Value::Object(m)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl core::error::Error for Failure {}

/// The variant name at the start of a `Debug` rendering (`InvalidParameter { … }` →
/// `InvalidParameter`).
fn variant_name(debug: &str) -> String {
    debug
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

impl From<AccountantError> for Failure {
    fn from(e: AccountantError) -> Self {
        Self::new(&variant_name(&format!("{e:?}")), e.to_string())
    }
}

impl From<ParseEventError> for Failure {
    fn from(e: ParseEventError) -> Self {
        let key = e.key().map_or(Value::Null, Value::from);
        let mut d = Map::new();
        d.insert("key".into(), key);
        Self::new("ParseEvent", e.to_string()).with_details(Value::Object(d))
    }
}

impl From<ParseNameError> for Failure {
    fn from(e: ParseNameError) -> Self {
        Self::new("ParseName", e.to_string())
    }
}

impl From<NoBound> for Failure {
    fn from(e: NoBound) -> Self {
        let reasons = e
            .reasons
            .iter()
            .map(|(k, err)| {
                let mut m = Map::new();
                m.insert("accountant".into(), Value::from(k.name()));
                let f = Self::from(*err);
                m.insert("kind".into(), Value::from(f.kind));
                m.insert("message".into(), Value::from(f.message));
                Value::Object(m)
            })
            .collect();
        let mut d = Map::new();
        d.insert("reasons".into(), Value::Array(reasons));
        Self::new("NoBound", e.to_string()).with_details(Value::Object(d))
    }
}
