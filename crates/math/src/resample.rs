//! Systematic resampling, the one implementation behind the SMC-ABC populations
//! (`dpinfer-abc`, a random offset) and the weighted-sample plots (`dpinfer-plots`, the
//! deterministic offset ½).

use core::fmt;

/// Why [`systematic_resample`] refused its input.
#[derive(Copy, Clone, PartialEq, Debug)]
#[non_exhaustive]
pub enum ResampleError {
    /// No weights.
    EmptyWeights,
    /// No output slots.
    EmptyOutput,
    /// The offset `u` is not in `[0, 1)`.
    Offset(f64),
    /// The weight at this index is negative, NaN or infinite.
    InvalidWeight(usize),
    /// The weights sum to zero, or their sum overflows.
    Total(f64),
}

impl fmt::Display for ResampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyWeights => f.write_str("no weights to resample"),
            Self::EmptyOutput => f.write_str("no output slots to resample into"),
            Self::Offset(u) => write!(f, "resampling offset u = {u} must lie in [0, 1)"),
            Self::InvalidWeight(i) => write!(f, "weight {i} is negative or not finite"),
            Self::Total(t) => write!(f, "weights sum to {t}, not a positive finite number"),
        }
    }
}

impl core::error::Error for ResampleError {}

/// Systematic (low-variance) resampling (Kitagawa 1996; Douc, Cappé & Moulines 2005): with
/// one offset `u ∈ [0, 1)`, writes into `out` (`M` slots) for each point `(k + u)/M`,
/// `k = 0..M`, the index `i` of the cumulative-weight interval `[C_{i−1}, C_i)` it falls in
/// (`C_i = Σ_{j≤i} w_j / Σ w`, summed left to right; a point on a boundary belongs to the
/// next positive weight), never an index past the last positive weight. Each index `i`
/// appears `⌊M w_i⌋` or `⌈M w_i⌉` times (up to rounding of the sums).
///
/// # Errors
///
/// In this order: [`ResampleError::EmptyWeights`], [`ResampleError::EmptyOutput`],
/// [`ResampleError::Offset`] for `u ∉ [0, 1)`, [`ResampleError::InvalidWeight`] for the first
/// negative or non-finite weight, [`ResampleError::Total`] if the weights sum to 0 or
/// overflow. `out` is left as it was on error.
///
/// ```
/// use dpinfer_math::systematic_resample;
/// let mut out = [0; 4];
/// // points 1/8, 3/8, 5/8, 7/8 on the cumulative weights 1/4, 1/4, 1
/// systematic_resample(&[1.0, 0.0, 3.0], 0.5, &mut out)?;
/// assert_eq!(out, [0, 2, 2, 2]);
/// # Ok::<(), dpinfer_math::ResampleError>(())
/// ```
pub fn systematic_resample(w: &[f64], u: f64, out: &mut [usize]) -> Result<(), ResampleError> {
    if w.is_empty() {
        return Err(ResampleError::EmptyWeights);
    }
    if out.is_empty() {
        return Err(ResampleError::EmptyOutput);
    }
    if !(0.0..1.0).contains(&u) {
        return Err(ResampleError::Offset(u));
    }
    let mut total = 0.0;
    for (i, &x) in w.iter().enumerate() {
        if !(x.is_finite() && x >= 0.0) {
            return Err(ResampleError::InvalidWeight(i));
        }
        total += x;
    }
    if !(total > 0.0 && total.is_finite()) {
        return Err(ResampleError::Total(total));
    }
    #[allow(clippy::cast_precision_loss)]
    let m = out.len() as f64;
    let last = w.iter().rposition(|&x| x > 0.0).unwrap_or(0);
    let mut i = 0;
    let mut cum = w[0] / total;
    for (k, o) in out.iter_mut().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let point = (k as f64 + u) / m;
        while cum <= point && i < last {
            i += 1;
            cum += w[i] / total;
        }
        *o = i;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_errors() {
        // weights 1, 3 over two points 1/4, 3/4: 1/4 lies on the boundary C_0 = 1/4 and
        // belongs to the second interval.
        let mut out = [9; 2];
        systematic_resample(&[1.0, 3.0], 0.5, &mut out).unwrap();
        assert_eq!(out, [1, 1]);
        // trailing zero weights are never picked, even at u close to 1
        let mut out = [9; 3];
        systematic_resample(&[1.0, 1.0, 0.0, 0.0], 0.999_999, &mut out).unwrap();
        assert_eq!(out, [0, 1, 1]);
        let mut out = [7; 2];
        assert_eq!(
            systematic_resample(&[], 0.5, &mut out),
            Err(ResampleError::EmptyWeights)
        );
        assert_eq!(
            systematic_resample(&[1.0], 0.5, &mut []),
            Err(ResampleError::EmptyOutput)
        );
        assert_eq!(
            systematic_resample(&[1.0], 1.0, &mut out),
            Err(ResampleError::Offset(1.0))
        );
        assert_eq!(
            systematic_resample(&[1.0, f64::NAN], 0.0, &mut out),
            Err(ResampleError::InvalidWeight(1))
        );
        assert_eq!(
            systematic_resample(&[0.0, 0.0], 0.0, &mut out),
            Err(ResampleError::Total(0.0))
        );
        assert_eq!(
            systematic_resample(&[f64::MAX, f64::MAX], 0.0, &mut out),
            Err(ResampleError::Total(f64::INFINITY))
        );
        assert_eq!(out, [7, 7]);
    }
}
