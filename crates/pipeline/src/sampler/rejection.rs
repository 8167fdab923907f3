//! `kind = "rejection"`: non-private rejection ABC, the `accept` pairs nearest the data
//! ([`dpinfer::abc::rejection::nearest`]).

use crate::error::{Result, bail};
use serde::{Deserialize, Serialize};

/// Keys of the private pairs samplers a rejection table may carry (ignored with a warning).
pub(super) const SIBLING_KEYS: &[&str] = &["epsilon_abc", "c", "resample", "clip"];

/// `[sampler] kind = "rejection"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rejection {
    /// Public (θ, simulation) pairs T.
    pub pairs: usize,
    /// Keep the `accept` nearest pairs (default: the library's
    /// [`default_k`](dpinfer::abc::rejection::default_k), 1 % of T); at most T.
    pub accept: Option<usize>,
}

impl Rejection {
    /// The number of rows kept from a table of `t` rows.
    ///
    /// # Errors
    /// `accept = 0`.
    pub fn k(&self, t: usize) -> Result<usize> {
        let k = self
            .accept
            .unwrap_or_else(|| dpinfer::abc::rejection::default_k(t))
            .min(t);
        if k == 0 {
            bail!(key = "sampler.accept"; "sampler.accept must be at least 1");
        }
        Ok(k)
    }
}
