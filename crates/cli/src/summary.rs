//! Posterior summaries: weighted mean, standard deviation and quantiles per parameter.

use serde::Serialize;

/// Summary of one parameter's marginal posterior.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Marginal {
    /// Parameter name.
    pub name: String,
    /// Posterior mean.
    pub mean: f64,
    /// Posterior standard deviation.
    pub sd: f64,
    /// 2.5 %, 25 %, 50 %, 75 %, 97.5 % quantiles.
    pub quantiles: [f64; 5],
    /// The true value, when the run knows it.
    pub truth: Option<f64>,
}

/// Quantile levels reported in [`Marginal::quantiles`].
pub const LEVELS: [f64; 5] = [0.025, 0.25, 0.5, 0.75, 0.975];

/// Weighted quantile by the inverse of the weighted empirical CDF (lower value at ties).
fn weighted_quantiles(vals: &[f64], w: &[f64], levels: &[f64; 5]) -> [f64; 5] {
    let mut idx: Vec<usize> = (0..vals.len()).filter(|&i| vals[i].is_finite()).collect();
    idx.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]));
    let total: f64 = idx.iter().map(|&i| w[i]).sum();
    let mut out = [f64::NAN; 5];
    if idx.is_empty() || total.is_nan() || total <= 0.0 {
        return out;
    }
    for (k, &lvl) in levels.iter().enumerate() {
        let target = lvl * total;
        let mut acc = 0.0;
        let mut v = vals[idx[idx.len() - 1]];
        for &i in &idx {
            acc += w[i];
            if acc >= target {
                v = vals[i];
                break;
            }
        }
        out[k] = v;
    }
    out
}

/// Summarises columns of samples with optional normalised-or-not weights.
#[must_use]
pub fn summarise(
    names: &[String],
    cols: &[Vec<f64>],
    weights: Option<&[f64]>,
    truth: Option<&[f64]>,
) -> Vec<Marginal> {
    cols.iter()
        .enumerate()
        .map(|(j, c)| {
            let ones;
            let w = if let Some(w) = weights {
                w
            } else {
                ones = vec![1.0; c.len()];
                &ones
            };
            let sw: f64 = w.iter().sum();
            let mean = c.iter().zip(w).map(|(x, w)| x * w).sum::<f64>() / sw;
            let var = c
                .iter()
                .zip(w)
                .map(|(x, w)| w * (x - mean) * (x - mean))
                .sum::<f64>()
                / sw;
            Marginal {
                name: names.get(j).cloned().unwrap_or_else(|| format!("theta{j}")),
                mean,
                sd: var.max(0.0).sqrt(),
                quantiles: weighted_quantiles(c, w, &LEVELS),
                truth: truth.and_then(|t| t.get(j).copied()),
            }
        })
        .collect()
}

/// A number for people: `prec` decimals in `[1e-4, 1e15)` (and for 0), scientific notation
/// outside it — never a 300-digit decimal.
#[must_use]
pub fn fmt_num(v: f64, prec: usize) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&v.abs()) {
        format!("{v:.prec$}")
    } else {
        format!("{v:.prec$e}")
    }
}

/// Renders a summary as an aligned text table.
#[must_use]
pub fn table(m: &[Marginal]) -> String {
    let mut s = format!(
        "{:<12} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\n",
        "parameter", "mean", "sd", "2.5%", "50%", "97.5%", "true"
    );
    for r in m {
        s.push_str(&format!(
            "{:<12} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\n",
            r.name,
            fmt_num(r.mean, 5),
            fmt_num(r.sd, 5),
            fmt_num(r.quantiles[0], 5),
            fmt_num(r.quantiles[2], 5),
            fmt_num(r.quantiles[4], 5),
            r.truth.map_or_else(|| "-".to_string(), |t| fmt_num(t, 5))
        ));
    }
    s
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact order statistics
mod tests {
    use super::*;

    #[test]
    fn numbers_never_print_as_hundreds_of_digits() {
        assert_eq!(fmt_num(1e300, 6), "1.000000e300");
        assert_eq!(fmt_num(-2.5e-320, 2), "-2.50e-320");
        assert_eq!(fmt_num(0.5, 3), "0.500");
        assert_eq!(fmt_num(0.0, 2), "0.00");
        assert_eq!(fmt_num(f64::INFINITY, 2), "inf");
    }

    #[test]
    fn unweighted_moments_and_median() {
        let c = vec![(1..=101).map(f64::from).collect::<Vec<_>>()];
        let m = summarise(&["a".into()], &c, None, Some(&[50.0]));
        assert!((m[0].mean - 51.0).abs() < 1e-12);
        // population sd of 1..=101 = sqrt((101^2-1)/12)
        assert!((m[0].sd - ((101.0f64 * 101.0 - 1.0) / 12.0).sqrt()).abs() < 1e-9);
        assert_eq!(m[0].quantiles[2], 51.0);
        assert!(table(&m).contains("50.00000"));
    }

    #[test]
    fn weights_shift_mean() {
        let c = vec![vec![0.0, 1.0]];
        let m = summarise(&["a".into()], &c, Some(&[1.0, 3.0]), None);
        assert!((m[0].mean - 0.75).abs() < 1e-15);
        assert_eq!(m[0].quantiles[2], 1.0);
    }
}
