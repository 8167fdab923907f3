//! Posterior summaries per parameter (the library's weighted mean, sd and quantiles) and
//! numbers formatted for people.

use dpinfer::abc::weights;
use dpinfer::accountants::RoundedUp;
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

/// Summarises columns of samples with optional normalised-or-not weights: the library's
/// weighted mean, plug-in sd and weighted quantiles (`dpinfer::abc::weights`; quantiles over
/// the finite values). NaN where the library refuses the column (no values, zero or invalid
/// weights).
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
            let mut mean = [f64::NAN];
            if weights::weighted_mean(c, 1, w, &mut mean).is_err() {
                mean = [f64::NAN];
            }
            let mut var = [f64::NAN];
            if weights::weighted_covariance(c, 1, w, &mean, &mut var).is_err() {
                var = [f64::NAN];
            }
            let (vals, ws): (Vec<f64>, Vec<f64>) = c
                .iter()
                .zip(w)
                .filter(|(x, _)| x.is_finite())
                .map(|(x, w)| (*x, *w))
                .unzip();
            let mut quantiles = [f64::NAN; 5];
            if weights::weighted_quantiles(&vals, &ws, &LEVELS, &mut quantiles).is_err() {
                quantiles = [f64::NAN; 5];
            }
            Marginal {
                name: names.get(j).cloned().unwrap_or_else(|| format!("theta{j}")),
                mean: mean[0],
                sd: var[0].max(0.0).sqrt(),
                quantiles,
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

/// A number for people: integers as integers, otherwise `sig` significant digits (plain
/// decimals for magnitudes in [1e-4, 1e6), scientific outside), trailing zeros dropped.
#[must_use]
pub fn fmt_sig(v: f64, sig: i32) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{v:.*e}", usize::try_from(sig - 1).unwrap_or(0));
    }
    let s = format!("{v:.*}", usize::try_from(sig - 1 - mag).unwrap_or(0));
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A privacy parameter for people, **rounded up** to 6 significant digits, so that the
/// printed ε or δ is never below the bound the accountant proved: the accountants'
/// [`RoundedUp::significant`] (the smallest such decimal that parses back to at least `v`).
#[must_use]
pub fn fmt_up(v: f64) -> String {
    RoundedUp::significant(v).to_string()
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

#[cfg(test)]
mod format_tests {
    use super::*;

    #[test]
    fn numbers_print_for_people() {
        assert_eq!(fmt_sig(4000.0, 6), "4000");
        assert_eq!(fmt_sig(0.13000000000000003, 6), "0.13");
        assert_eq!(fmt_sig(0.000403125, 6), "0.000403125");
        assert_eq!(fmt_sig(1.234567e-7, 3), "1.23e-7");
        assert_eq!(fmt_sig(2.5e12 + 0.5, 3), "2.50e12");
        assert_eq!(fmt_sig(f64::NAN, 3), "NaN");
    }

    #[test]
    fn privacy_parameters_round_up() {
        assert_eq!(fmt_up(1.0), "1");
        assert_eq!(fmt_up(0.999_999_49), "1");
        assert_eq!(fmt_up(1.000_000_1), "1.00001");
        assert_eq!(fmt_up(1e-5), "1e-5"); // before RoundedUp: "1.00001e-5", a digit too high
        assert_eq!(fmt_up(1e-6), "1e-6");
        assert_eq!(fmt_up(0.00025), "0.00025");
        assert_eq!(fmt_up(1.234_567_1e-9), "1.23457e-9");
        // Never below the value, over many magnitudes.
        for k in -300..300 {
            let v = 1.234_567_891_234 * 10f64.powi(k);
            let shown: f64 = fmt_up(v).parse().unwrap();
            assert!(shown >= v, "{v} shown as {shown}");
        }
    }
}
