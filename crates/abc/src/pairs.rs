//! The modeler's public parameter/pseudo-data pairs `{(θ_t, Y_t)}` of the two-party ABCDP
//! workflow (Park, Vinaroz & Jitkrittum 2021, §3): generated here from a prior and a simulator
//! with one reproducible [`SimStream`] per pair, or loaded from elsewhere (e.g. merged shards).
//!
//! Everything in a [`PublicPairs`] is public (an adversary may see it); the private step only
//! reads it.

use alloc::vec::Vec;

use dpinfer_simulators::{Prior, SimStream, Simulator};

use crate::error::AbcError;

/// Stream domain of [`PublicPairs::generate`].
pub const PAIRS_DOMAIN: u64 = 0x0050_4149_5253; // "PAIRS"

/// `T` public pairs `(θ_t, Y_t)`, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct PublicPairs {
    theta_dim: usize,
    output_dim: usize,
    thetas: Vec<f64>,
    outputs: Vec<f64>,
}

impl PublicPairs {
    /// Wraps loaded pairs.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidCount`] for a zero dimension, [`AbcError::Empty`] for no pairs,
    /// [`AbcError::LengthMismatch`] if the buffers disagree with the dimensions or each other,
    /// [`AbcError::NonFiniteValue`] for a non-finite θ.
    pub fn from_parts(
        theta_dim: usize,
        output_dim: usize,
        thetas: Vec<f64>,
        outputs: Vec<f64>,
    ) -> Result<Self, AbcError> {
        if theta_dim == 0 {
            return Err(AbcError::InvalidCount {
                name: "theta_dim",
                value: 0,
            });
        }
        if output_dim == 0 {
            return Err(AbcError::InvalidCount {
                name: "output_dim",
                value: 0,
            });
        }
        if thetas.is_empty() {
            return Err(AbcError::Empty { name: "thetas" });
        }
        if !thetas.len().is_multiple_of(theta_dim) {
            return Err(AbcError::LengthMismatch {
                name: "thetas",
                expected: thetas.len() / theta_dim * theta_dim,
                found: thetas.len(),
            });
        }
        let t = thetas.len() / theta_dim;
        if t.checked_mul(output_dim) != Some(outputs.len()) {
            return Err(AbcError::LengthMismatch {
                name: "outputs",
                expected: t.saturating_mul(output_dim),
                found: outputs.len(),
            });
        }
        if thetas.iter().any(|x| !x.is_finite()) {
            return Err(AbcError::NonFiniteValue { name: "thetas" });
        }
        Ok(Self {
            theta_dim,
            output_dim,
            thetas,
            outputs,
        })
    }

    /// Generates `t` pairs: pair `i` uses `SimStream::with_domain(seed, PAIRS_DOMAIN, i)` for
    /// both its prior draw and its simulation, so any subset of pairs can be regenerated (or
    /// computed on another machine) bit for bit. A recoverable simulator failure redraws θ
    /// from the same stream (up to 1000 times).
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidCount`] for `t == 0`, [`AbcError::LengthMismatch`] if prior and
    /// simulator disagree on dim θ, [`AbcError::Model`] for a fatal failure or 1000
    /// consecutive recoverable ones.
    pub fn generate<P: Prior, S: Simulator>(
        prior: &P,
        sim: &S,
        t: usize,
        seed: u64,
    ) -> Result<Self, AbcError> {
        if t == 0 {
            return Err(AbcError::InvalidCount {
                name: "t",
                value: 0,
            });
        }
        let d = prior.dim();
        if d == 0 || sim.param_dim() != d {
            return Err(AbcError::LengthMismatch {
                name: "simulator param_dim",
                expected: d,
                found: sim.param_dim(),
            });
        }
        let od = sim.output_dim();
        let mut thetas = alloc::vec![0.0; t * d];
        let mut outputs = alloc::vec![0.0; t * od];
        for (i, (th, out)) in thetas
            .chunks_exact_mut(d)
            .zip(outputs.chunks_exact_mut(od.max(1)))
            .enumerate()
        {
            let mut rng = SimStream::with_domain(seed, PAIRS_DOMAIN, i as u64);
            let mut ok = false;
            for _ in 0..1000 {
                prior.sample(&mut rng, th).map_err(|_| AbcError::Model)?;
                match sim.simulate(th, &mut rng, out) {
                    Ok(()) => {
                        ok = true;
                        break;
                    }
                    Err(e) if e.is_recoverable() => {}
                    Err(_) => return Err(AbcError::Model),
                }
            }
            if !ok {
                return Err(AbcError::Model);
            }
        }
        Self::from_parts(d, od, thetas, outputs)
    }

    /// Number of pairs `T`.
    #[must_use]
    pub fn len(&self) -> usize {
        self.thetas.len() / self.theta_dim
    }

    /// `true` if there are no pairs (never, by construction).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.thetas.is_empty()
    }

    /// Dimension of θ.
    #[must_use]
    pub fn theta_dim(&self) -> usize {
        self.theta_dim
    }

    /// Length of each pseudo-data/summary vector.
    #[must_use]
    pub fn output_dim(&self) -> usize {
        self.output_dim
    }

    /// θ_t (empty slice for `t` out of range).
    #[must_use]
    pub fn theta(&self, t: usize) -> &[f64] {
        row(&self.thetas, t, self.theta_dim)
    }

    /// Y_t (empty slice for `t` out of range).
    #[must_use]
    pub fn output(&self, t: usize) -> &[f64] {
        row(&self.outputs, t, self.output_dim)
    }

    /// All θs, row-major.
    #[must_use]
    pub fn thetas(&self) -> &[f64] {
        &self.thetas
    }

    /// All outputs, row-major.
    #[must_use]
    pub fn outputs(&self) -> &[f64] {
        &self.outputs
    }
}

/// Row `t` of a row-major buffer with rows of length `d` (empty if out of range; no overflow).
fn row(buf: &[f64], t: usize, d: usize) -> &[f64] {
    match (
        t.checked_mul(d),
        t.checked_add(1).and_then(|u| u.checked_mul(d)),
    ) {
        (Some(a), Some(b)) => buf.get(a..b).unwrap_or(&[]),
        _ => &[],
    }
}
