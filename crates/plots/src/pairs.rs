//! Pair plots: every parameter's marginal on the diagonal and every pair's scatter below it.

use core::fmt::Write as _;

use crate::axes::{Frame, Scale, TickLabels, finite_range, header};
use crate::error::{self, PlotError};
use crate::marginal::{
    Density, PriorCurve, PriorSource, density_curve, histogram_into, legend_into, panel_grid,
};
use crate::stats::resample_indices;

/// At most this many parameters in one pair plot (beyond that the panels are too small to
/// read).
pub const MAX_PAIR_COLUMNS: usize = 32;

/// One parameter's draws, named.
#[derive(Debug, Clone, Copy)]
pub struct Column<'a> {
    /// The parameter's name (axis label).
    pub name: &'a str,
    /// Its draws, one per posterior sample.
    pub values: &'a [f64],
    density: Option<Density<'a>>,
}

impl<'a> Column<'a> {
    /// A named column.
    #[must_use]
    pub fn new(name: &'a str, values: &'a [f64]) -> Self {
        Self {
            name,
            values,
            density: None,
        }
    }

    /// The prior's exact marginal density of this parameter (a density, not its log: `0`
    /// outside the support, `+∞` allowed at a singular point, never NaN or negative), drawn
    /// on the pair plot's diagonal as [`Marginal::prior_density`](crate::Marginal::prior_density)
    /// draws it: a dashed grey curve with the support's edges as steps, cut at four times the
    /// posterior's height, and "prior density" in the legend.
    #[must_use]
    pub fn prior_density(mut self, density: &'a dyn Fn(f64) -> f64) -> Self {
        self.density = Some(Density(density));
        self
    }
}

/// A pair plot (corner plot) of `d` parameters, a square of `d × d` panels (180 px each up to
/// three parameters, 130 px beyond): panel `(i, i)` is parameter `i`'s density histogram with
/// its kernel density estimate, panel `(i, j)` below the diagonal the scatter of parameter `j`
/// (x) against parameter `i` (y), through every `max(1, ⌊n/1500⌋)`-th draw (1 500 to 3 000
/// points per panel when there are more), large and opaque for a few points, small and translucent for many. The true θ, when
/// given, is a red dot in each scatter and a dashed red line on the diagonal. Each axis spans
/// its column's range padded by 5 % on each side, so no point is clipped at a panel's edge;
/// a legend line under the panels names the histogram, the KDE and (when given) the prior
/// density ([`Column::prior_density`]) and the true value.
///
/// Weighted draws are resampled once for all parameters ([`resample`](crate::resample)'s
/// positions), so each drawn point is one posterior sample.
///
/// ```
/// use dpinfer_plots::{Column, PairPlot};
/// let a: Vec<f64> = (0..300).map(|i| f64::from(i).sin()).collect();
/// let b: Vec<f64> = (0..300).map(|i| f64::from(i).cos() * 10.0).collect();
/// let svg = PairPlot::new(&[Column::new("a", &a), Column::new("b", &b)])
///     .truth(&[0.0, 1.0])
///     .svg()?;
/// assert_eq!(svg.matches("class=\"truth\"").count(), 3);
/// # Ok::<(), dpinfer_plots::PlotError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PairPlot<'a> {
    columns: &'a [Column<'a>],
    weights: Option<&'a [f64]>,
    truth: Option<&'a [f64]>,
    title: String,
}

impl<'a> PairPlot<'a> {
    /// The pair plot of `columns` (all of one length), titled `posterior`.
    #[must_use]
    pub fn new(columns: &'a [Column<'a>]) -> Self {
        Self {
            columns,
            weights: None,
            truth: None,
            title: "posterior".into(),
        }
    }

    /// Weights of the samples (one per row, finite, non-negative, not all zero).
    #[must_use]
    pub fn weights(mut self, weights: &'a [f64]) -> Self {
        self.weights = Some(weights);
        self
    }

    /// The true θ, one value per column.
    #[must_use]
    pub fn truth(mut self, truth: &'a [f64]) -> Self {
        self.truth = Some(truth);
        self
    }

    /// The title above the plot.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// The plot as a standalone SVG document.
    ///
    /// # Errors
    /// [`PlotError::Empty`] without columns or draws, [`PlotError::TooMany`] for more than
    /// [`MAX_PAIR_COLUMNS`] columns, [`PlotError::LengthMismatch`] when the columns differ in
    /// length or the truth has not one value per column, [`PlotError::NonFinite`] or
    /// [`PlotError::TooLarge`] for a draw or true value, [`PlotError::InvalidDensity`] for a
    /// column's prior density that returns NaN or a negative value, and the weight errors of
    /// [`resample`](crate::resample).
    pub fn svg(&self) -> Result<String, PlotError> {
        let cols = self.columns;
        if cols.is_empty() {
            return Err(PlotError::Empty {
                what: "columns".into(),
            });
        }
        if cols.len() > MAX_PAIR_COLUMNS {
            return Err(PlotError::TooMany {
                what: "columns".into(),
                max: MAX_PAIR_COLUMNS,
                found: cols.len(),
            });
        }
        let n = cols[0].values.len();
        for (i, c) in cols.iter().enumerate() {
            let what = format!("column {i} ({})", c.name);
            error::same_length(&what, n, c.values.len())?;
            error::finite_values(&what, c.values)?;
        }
        if let Some(t) = self.truth {
            error::same_length("truth", cols.len(), t.len())?;
            error::finite_values("truth", t)?;
        }
        let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
        let resampled: Vec<Vec<f64>> = match self.weights {
            None => Vec::new(),
            Some(w) => {
                error::weights(n, w)?;
                let at = resample_indices(w);
                cols.iter()
                    .map(|c| at.iter().map(|&i| c.values[i]).collect())
                    .collect()
            }
        };
        let values: Vec<&[f64]> = if resampled.is_empty() {
            cols.iter().map(|c| c.values).collect()
        } else {
            resampled.iter().map(Vec::as_slice).collect()
        };
        // Each diagonal panel's prior curve over that panel's own grid (the histogram's
        // range: the column's draws and true value, padded as the panel is).
        let priors = cols
            .iter()
            .zip(&values)
            .enumerate()
            .map(|(i, (c, v))| {
                let Some(Density(f)) = c.density else {
                    return Ok(None);
                };
                let truth = self.truth.and_then(|t| t.get(i).copied());
                panel_grid(v, truth, PAD)
                    .map(|grid| density_curve(f, &grid))
                    .transpose()
            })
            .collect::<Result<Vec<Option<PriorCurve>>, PlotError>>()?;
        Ok(draw(&self.title, &names, &values, self.truth, &priors))
    }
}

/// The share of a column's range added on each side of its axis: 5 % of a 106 px panel is
/// more than the largest point's radius.
const PAD: f64 = 0.05;

/// Draws the pair plot of validated, equally long columns.
fn draw(
    title: &str,
    names: &[&str],
    cols: &[&[f64]],
    truth: Option<&[f64]>,
    priors: &[Option<PriorCurve>],
) -> String {
    let d = cols.len().max(1);
    let cell = if d <= 3 { 180.0 } else { 130.0 };
    #[allow(clippy::cast_precision_loss)]
    let size = 72.0 + cell * d as f64 + 20.0;
    // The last row's frames end 34 px above the bottom of their cells and their axis labels
    // 30 px below the frames: the legend line follows 20 px lower.
    #[allow(clippy::cast_precision_loss)]
    let height = 35.0 + cell * d as f64 + 24.0;
    let mut out = header(size, height, title);
    let prior = priors
        .iter()
        .any(Option::is_some)
        .then_some(PriorSource::Density);
    legend_into(&mut out, size, height - 8.0, prior, truth.is_some());
    let ranges: Vec<(f64, f64)> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            finite_range(
                c.iter()
                    .copied()
                    .chain(truth.and_then(|t| t.get(i).copied())),
            )
            .map_or((0.0, 1.0), |(lo, hi)| {
                // Padded as the diagonal's histogram is, so that columns share their x axis
                // and no point is clipped at a panel's edge.
                let pad = PAD * (hi - lo);
                (lo - pad, hi + pad)
            })
        })
        .collect();
    for i in 0..d.min(cols.len()) {
        for j in 0..=i {
            #[allow(clippy::cast_precision_loss)]
            let bx = (
                72.0 + cell * j as f64,
                35.0 + cell * i as f64,
                cell - 24.0,
                cell - 34.0,
            );
            let xl = if i + 1 == d {
                names.get(j).copied().unwrap_or("")
            } else {
                ""
            };
            if i == j {
                histogram_into(
                    &mut out,
                    bx,
                    cols[i],
                    truth.and_then(|t| t.get(i).copied()),
                    priors.get(i).and_then(Option::as_ref),
                    xl,
                    TickLabels {
                        x: i + 1 == d,
                        y: false,
                        y_right: true,
                        margin: 11.0,
                    },
                    PAD,
                );
                continue;
            }
            let f = Frame {
                x0: bx.0,
                y0: bx.1,
                w: bx.2,
                h: bx.3,
                xr: ranges[j],
                yr: ranges[i],
                xs: Scale::Linear,
                ys: Scale::Linear,
            };
            let step = (cols[i].len() / 1500).max(1);
            // Few points are drawn big and solid, many small and translucent.
            let (r, op) = match cols[i].len() {
                0..200 => (3.0, 0.8),
                200..2000 => (2.0, 0.5),
                _ => (1.3, 0.35),
            };
            for (x, y) in cols[j].iter().zip(cols[i]).step_by(step) {
                if x.is_finite() && y.is_finite() {
                    let _ = write!(
                        out,
                        r##"<circle class="pt" cx="{:.1}" cy="{:.1}" r="{r}" fill="#1f77b4" fill-opacity="{op}"/>"##,
                        f.px(*x),
                        f.py(*y)
                    );
                }
            }
            if let Some(t) = truth
                && let (Some(tx), Some(ty)) = (t.get(j), t.get(i))
            {
                let _ = write!(
                    out,
                    r##"<circle class="truth" cx="{:.1}" cy="{:.1}" r="4" fill="#d62728" stroke="white"/>"##,
                    f.px(*tx),
                    f.py(*ty)
                );
            }
            let yl = if j == 0 {
                names.get(i).copied().unwrap_or("")
            } else {
                ""
            };
            f.axes(
                &mut out,
                xl,
                yl,
                TickLabels {
                    x: i + 1 == d,
                    y: j == 0,
                    y_right: false,
                    margin: 11.0,
                },
            );
        }
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout_problems;

    #[test]
    fn pair_plots_keep_labels_apart() {
        // Four parameters of very different scales, a few samples: the report's "0.2510.04".
        let cols: Vec<Vec<f64>> = vec![
            (0..10).map(|i| 0.251 + 0.001 * f64::from(i)).collect(),
            (0..10).map(|i| 0.04 + 0.02 * f64::from(i)).collect(),
            (0..10).map(|i| 3640.0 + 364.0 * f64::from(i)).collect(),
            (0..10).map(|i| -2e-6 * f64::from(i)).collect(),
        ];
        let names = ["beta", "gamma", "N", "tiny"];
        let columns: Vec<Column<'_>> = names
            .iter()
            .zip(&cols)
            .map(|(n, c)| Column::new(n, c))
            .collect();
        let s = PairPlot::new(&columns)
            .title("pairs")
            .truth(&[0.255, 0.1, 5000.0, -1e-5])
            .svg()
            .unwrap();
        assert_eq!(layout_problems(&s), Vec::new());
        assert!(s.matches("class=\"tick\"").count() >= 8);
        // 6 scatter panels with a truth dot, 4 diagonal truth lines
        assert_eq!(s.matches("class=\"truth\"").count(), 10);
        assert_eq!(s.matches("class=\"pt\"").count(), 60);
    }

    /// Issue 32: scatter points at a column's extremes were clipped at the panel's edge
    /// (the axes spanned exactly the data), the picture had an empty strip under the panels,
    /// an axis could carry a single tick and no legend named the marks.
    #[test]
    fn points_stay_inside_panels_with_a_legend_and_two_ticks_per_axis() {
        let a: Vec<f64> = (0..150)
            .map(|i| f64::from(i % 10) * 0.001 + 0.251)
            .collect();
        let b: Vec<f64> = (0..150).map(|i| f64::from(i).sin()).collect();
        let cols = [Column::new("a", &a), Column::new("b", &b)];
        let s = PairPlot::new(&cols).truth(&[0.26, 1.0]).svg().unwrap();
        assert_eq!(layout_problems(&s), Vec::new());
        // 2 × 180 px panels: frames end at 35 + 360 − 34, labels 30 px below, then the legend
        assert!(s.contains(r#"height="419""#), "{}", &s[..300]);
        assert!(s.contains(">histogram<") && s.contains(">true value<"));
        // every labelled axis has at least two labels: group tick labels by their row (x
        // axes) or column (y axes)
        let mut rows: Vec<(String, usize)> = Vec::new();
        for t in s.split(r#"<text class="tick" "#).skip(1) {
            let t = &t[..t.find('>').unwrap_or(t.len())];
            let key = if t.contains(r#"text-anchor="middle""#) {
                format!("y{}", super::super::layout::tests_attr(t, "y"))
            } else {
                format!("x{}", super::super::layout::tests_attr(t, "x"))
            };
            match rows.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => rows.push((key, 1)),
            }
        }
        assert!(rows.iter().all(|&(_, n)| n >= 2), "{rows:?}");
    }

    /// Weighted columns are resampled at the same positions, so rows stay together.
    #[test]
    fn weights_keep_rows_together() {
        let a: Vec<f64> = (0..50).map(f64::from).collect();
        let b: Vec<f64> = (0..50).map(|i| -f64::from(i)).collect();
        let w: Vec<f64> = (0..50).map(|i| f64::from(i % 3)).collect();
        let cols = [Column::new("a", &a), Column::new("b", &b)];
        let weighted = PairPlot::new(&cols).weights(&w).svg().unwrap();
        let (ra, rb) = (
            crate::resample(&a, &w).unwrap(),
            crate::resample(&b, &w).unwrap(),
        );
        assert!(ra.iter().zip(&rb).all(|(x, y)| x + y == 0.0));
        let plain = PairPlot::new(&[Column::new("a", &ra), Column::new("b", &rb)])
            .svg()
            .unwrap();
        assert_eq!(weighted, plain);
    }

    /// The diagonal draws a column's prior density where one is given (issue 32's "draw the
    /// prior's density", which the marginal plots already did), the legend names it, and a
    /// plot without densities is byte for byte the one before the option existed (the golden
    /// `pairs.svg` checks that).
    #[test]
    fn the_diagonal_draws_a_given_prior_density() {
        let a: Vec<f64> = (0..200)
            .map(|i| -2.0 + 4.0 * f64::from(i) / 199.0)
            .collect();
        let b: Vec<f64> = (0..200).map(|i| f64::from(i).sin()).collect();
        let flat = |x: f64| {
            if (-3.0..=3.0).contains(&x) {
                1.0 / 6.0
            } else {
                0.0
            }
        };
        let cols = [
            Column::new("a", &a).prior_density(&flat),
            Column::new("b", &b),
        ];
        // Two small panels with every legend entry: the legend still fits.
        let s = PairPlot::new(&cols).truth(&[0.5, 0.1]).svg().unwrap();
        assert_eq!(s.matches(r#"class="prior""#).count(), 1);
        assert!(s.contains(">prior density<") && s.contains(">true value<"));
        assert_eq!(layout_problems(&s), Vec::new());
        // The curve is the density on the panel: flat, so every point has one y coordinate.
        let d = s.split(r#"class="prior" d=""#).nth(1).unwrap();
        let d = &d[..d.find('"').unwrap()];
        let ys: Vec<&str> = d
            .split_whitespace()
            .map(|pt| pt.trim_start_matches(['M', 'L']).split(',').nth(1).unwrap())
            .collect();
        assert!(ys.len() > 100 && ys.iter().all(|y| *y == ys[0]), "{d}");
        // Without a density: no curve, no legend entry, the same picture as before.
        let plain = PairPlot::new(&[Column::new("a", &a), Column::new("b", &b)])
            .svg()
            .unwrap();
        assert!(!plain.contains("class=\"prior\"") && !plain.contains("prior density"));
        // A density that is NaN or negative is a typed error, as for the marginal plot.
        let nan = |_: f64| f64::NAN;
        let bad = [
            Column::new("a", &a).prior_density(&nan),
            Column::new("b", &b),
        ];
        assert!(matches!(
            PairPlot::new(&bad).svg(),
            Err(PlotError::InvalidDensity { .. })
        ));
    }

    #[test]
    fn bad_columns_are_typed_errors() {
        let a = [1.0, 2.0, 3.0];
        let b = [1.0, 2.0];
        assert!(matches!(
            PairPlot::new(&[]).svg(),
            Err(PlotError::Empty { .. })
        ));
        assert_eq!(
            PairPlot::new(&[Column::new("a", &a), Column::new("b", &b)]).svg(),
            Err(PlotError::LengthMismatch {
                what: "column 1 (b)".into(),
                expected: 3,
                found: 2
            })
        );
        let cols = [Column::new("a", &a), Column::new("c", &a)];
        assert!(matches!(
            PairPlot::new(&cols).truth(&[1.0]).svg(),
            Err(PlotError::LengthMismatch { .. })
        ));
        assert!(matches!(
            PairPlot::new(&cols).truth(&[1.0, f64::NAN]).svg(),
            Err(PlotError::NonFinite { .. })
        ));
        let many = vec![Column::new("a", &a); MAX_PAIR_COLUMNS + 1];
        assert!(matches!(
            PairPlot::new(&many).svg(),
            Err(PlotError::TooMany { .. })
        ));
    }
}
