//! The training set of a sequential run: every round's weighted rows, each round's validation
//! pairs held out when the round is added, and the standardisation fitted on it.

use crate::error::{NeuralError, Result};
use crate::settings::{MAX_DIM, check_count};
use dpinfer_simulators::dist::uniform01;
use rand_core::Rng;

/// Fraction of each round's new pairs held out for validation (the paper's 5 %).
pub const DEFAULT_VALIDATION_FRACTION: f64 = 0.05;

/// Weighted rows `(target, context, weight)` from all rounds so far (the filtration
/// `D_r` of the paper's Algorithms 1–2).
///
/// A round is a list of simulated *pairs*, each given as `rows_per_pair` consecutive rows:
/// the paper's inner integral over the mechanism's noise (eq. 9–11) is `M` rows of weight
/// `1/M` for one simulated `x`. Validation pairs are drawn when the round is added, whole
/// pairs at a time, so the `M` rows of one `x` are never split between training and
/// validation.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingSet {
    target_dim: usize,
    context_dim: usize,
    validation_fraction: f64,
    pub(crate) target: Vec<f64>,
    pub(crate) context: Vec<f64>,
    pub(crate) weight: Vec<f64>,
    pub(crate) validation: Vec<bool>,
    /// The simulated pair (counted over all rounds) each row belongs to.
    pub(crate) pair: Vec<usize>,
    pairs: usize,
    rounds: usize,
}

/// One round's rows for [`TrainingSet::push_round`].
#[derive(Debug, Clone, Copy)]
pub struct RoundRows<'a> {
    /// `n × target_dim` values, row-major.
    pub target: &'a [f64],
    /// `n × context_dim` values, row-major.
    pub context: &'a [f64],
    /// `n` weights (finite, > 0), or `None` for all ones.
    pub weight: Option<&'a [f64]>,
    /// Rows per simulated pair (`M`); `n` must be a multiple of it.
    pub rows_per_pair: usize,
}

impl TrainingSet {
    /// An empty set for `target_dim`-dimensional targets given `context_dim`-dimensional
    /// contexts, holding out `validation_fraction` of each round's pairs (rounded up, at least
    /// one pair, at most all but one).
    ///
    /// # Errors
    /// [`NeuralError::Dimension`] for a zero or too large dimension; [`NeuralError::Setting`]
    /// for a fraction outside `(0, 1)`.
    pub fn new(target_dim: usize, context_dim: usize, validation_fraction: f64) -> Result<Self> {
        check_count("target_dim", target_dim, MAX_DIM)?;
        check_count("context_dim", context_dim, MAX_DIM)?;
        if !(validation_fraction > 0.0 && validation_fraction < 1.0) {
            return Err(NeuralError::Setting {
                name: "validation_fraction",
                value: validation_fraction,
                expected: "in (0, 1)",
            });
        }
        Ok(Self {
            target_dim,
            context_dim,
            validation_fraction,
            target: Vec::new(),
            context: Vec::new(),
            weight: Vec::new(),
            validation: Vec::new(),
            pair: Vec::new(),
            pairs: 0,
            rounds: 0,
        })
    }

    /// Adds one round's rows, holding out whole pairs for validation (drawn with `rng`, public
    /// simulation randomness). Nothing is added on error.
    ///
    /// # Errors
    /// [`NeuralError::Dimension`] if `rows_per_pair` is 0; [`NeuralError::Length`] if the
    /// buffers disagree or `n` is not a multiple of `rows_per_pair`;
    /// [`NeuralError::NonFinite`] for a NaN or infinite value; [`NeuralError::Weight`] for a
    /// weight that is not finite and positive; [`NeuralError::TooFewPairs`] for fewer than 2
    /// pairs.
    pub fn push_round<R: Rng + ?Sized>(&mut self, rows: RoundRows<'_>, rng: &mut R) -> Result<()> {
        check_count("rows_per_pair", rows.rows_per_pair, usize::MAX)?;
        let n = rows.target.len() / self.target_dim;
        if rows.target.len() != n * self.target_dim {
            return Err(NeuralError::Length {
                name: "target",
                expected: (n + 1) * self.target_dim,
                got: rows.target.len(),
            });
        }
        if rows.context.len() != n * self.context_dim {
            return Err(NeuralError::Length {
                name: "context",
                expected: n * self.context_dim,
                got: rows.context.len(),
            });
        }
        if let Some(w) = rows.weight
            && w.len() != n
        {
            return Err(NeuralError::Length {
                name: "weight",
                expected: n,
                got: w.len(),
            });
        }
        if !n.is_multiple_of(rows.rows_per_pair) {
            return Err(NeuralError::Length {
                name: "rows (a multiple of rows_per_pair)",
                expected: n.div_ceil(rows.rows_per_pair) * rows.rows_per_pair,
                got: n,
            });
        }
        check_rows("target", rows.target, self.target_dim)?;
        check_rows("context", rows.context, self.context_dim)?;
        if let Some(w) = rows.weight
            && let Some((row, &value)) = w
                .iter()
                .enumerate()
                .find(|(_, w)| !(w.is_finite() && **w > 0.0))
        {
            return Err(NeuralError::Weight { row, value });
        }
        let pairs = n / rows.rows_per_pair;
        if pairs < 2 {
            return Err(NeuralError::TooFewPairs { pairs, needed: 2 });
        }
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let held = ((self.validation_fraction * pairs as f64).ceil() as usize).clamp(1, pairs - 1);
        // The first `held` entries of a partial Fisher–Yates shuffle of the pair indices.
        let mut order: Vec<usize> = (0..pairs).collect();
        for i in 0..held {
            let j = i + index_below(rng, pairs - i);
            order.swap(i, j);
        }
        let mut is_val = vec![false; pairs];
        for &p in &order[..held] {
            is_val[p] = true;
        }
        self.target.extend_from_slice(rows.target);
        self.context.extend_from_slice(rows.context);
        match rows.weight {
            Some(w) => self.weight.extend_from_slice(w),
            None => self.weight.extend(core::iter::repeat_n(1.0, n)),
        }
        self.validation
            .extend((0..n).map(|row| is_val[row / rows.rows_per_pair]));
        let first = self.pairs;
        self.pair
            .extend((0..n).map(|row| first + row / rows.rows_per_pair));
        self.pairs += pairs;
        self.rounds += 1;
        Ok(())
    }

    /// Dimension of the target.
    #[must_use]
    pub fn target_dim(&self) -> usize {
        self.target_dim
    }

    /// Dimension of the context.
    #[must_use]
    pub fn context_dim(&self) -> usize {
        self.context_dim
    }

    /// Rounds added so far.
    #[must_use]
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// Simulated pairs added so far (each `rows_per_pair` rows).
    #[must_use]
    pub fn pairs(&self) -> usize {
        self.pairs
    }

    /// All rows (training and validation).
    #[must_use]
    pub fn len(&self) -> usize {
        self.weight.len()
    }

    /// `true` before the first round.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.weight.is_empty()
    }

    /// Rows held out for validation.
    #[must_use]
    pub fn validation_rows(&self) -> usize {
        self.validation.iter().filter(|v| **v).count()
    }
}

/// A uniform index in `0..n` (`n ≥ 1`) from public simulation randomness.
pub(crate) fn index_below<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let i = (uniform01(rng) * n as f64) as usize;
    i.min(n - 1)
}

pub(crate) fn check_rows(name: &'static str, values: &[f64], dim: usize) -> Result<()> {
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(NeuralError::NonFinite { name, row: i / dim });
    }
    Ok(())
}

/// Per-column affine standardisation `z = (v − mean) / sd`, fitted on weighted training rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Standardiser {
    pub(crate) mean: Vec<f64>,
    pub(crate) sd: Vec<f64>,
}

impl Standardiser {
    pub(crate) fn identity(dim: usize) -> Self {
        Self {
            mean: vec![0.0; dim],
            sd: vec![1.0; dim],
        }
    }

    /// Weighted mean and standard deviation of the rows with `keep[row]`; a column with zero
    /// (or non-finite) spread gets sd 1.
    pub(crate) fn fit(values: &[f64], dim: usize, weight: &[f64], keep: &[bool]) -> Self {
        let mut mean = vec![0.0; dim];
        let mut total = 0.0;
        for (row, (&w, &k)) in weight.iter().zip(keep).enumerate() {
            if k {
                total += w;
                for (m, v) in mean.iter_mut().zip(&values[row * dim..(row + 1) * dim]) {
                    *m += w * v;
                }
            }
        }
        for m in &mut mean {
            *m /= total;
        }
        let mut var = vec![0.0; dim];
        for (row, (&w, &k)) in weight.iter().zip(keep).enumerate() {
            if k {
                for ((s, v), m) in var
                    .iter_mut()
                    .zip(&values[row * dim..(row + 1) * dim])
                    .zip(&mean)
                {
                    *s += w * (v - m) * (v - m);
                }
            }
        }
        let sd = var
            .iter()
            .zip(&mean)
            .map(|(s, m)| {
                let sd = (s / total).sqrt();
                if sd.is_finite() && sd > 1e-12 * m.abs().max(1.0) {
                    sd
                } else {
                    1.0
                }
            })
            .collect();
        Self { mean, sd }
    }

    /// Standardised `f32` copy of `values` (`rows × dim`), row-major.
    #[allow(clippy::cast_possible_truncation)]
    pub(crate) fn apply(&self, values: &[f64]) -> Vec<f32> {
        let dim = self.mean.len();
        values
            .iter()
            .enumerate()
            .map(|(i, v)| ((v - self.mean[i % dim]) / self.sd[i % dim]) as f32)
            .collect()
    }

    /// `Σ log sd`: the log-Jacobian of the standardisation.
    pub(crate) fn log_jacobian(&self) -> f64 {
        self.sd.iter().map(|s| s.ln()).sum()
    }
}
