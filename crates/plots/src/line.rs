//! Line charts: several series over shared axes, with a legend.

use core::fmt::Write as _;

use crate::axes::{Frame, PALETTE, Scale, TickLabels, all_integers, esc, finite_range, header};
use crate::error::{self, PlotError};

/// A named series of y values over x values. Non-finite values are gaps in the line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// x coordinates.
    pub x: Vec<f64>,
    /// y coordinates (same length as `x`).
    pub y: Vec<f64>,
}

impl Series {
    /// A series named `label`.
    #[must_use]
    pub fn new(label: impl Into<String>, x: Vec<f64>, y: Vec<f64>) -> Self {
        Self {
            label: label.into(),
            x,
            y,
        }
    }
}

/// A line chart described as data: a short name (the CLI writes it to `<stem>.svg`), the
/// labels and the series; [`Chart::svg`] draws it with [`line_chart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Short name of the chart (file-name safe, e.g. `smc-tolerance`).
    pub stem: String,
    /// Title.
    pub title: String,
    /// x label.
    pub xlabel: String,
    /// y label.
    pub ylabel: String,
    /// Series.
    pub series: Vec<Series>,
    /// log10 y axis.
    pub log_y: bool,
}

impl Chart {
    /// The chart drawn by [`line_chart`].
    ///
    /// # Errors
    /// As [`line_chart`].
    pub fn svg(&self) -> Result<String, PlotError> {
        line_chart(
            &self.title,
            &self.xlabel,
            &self.ylabel,
            &self.series,
            self.log_y,
        )
    }
}

/// Checks series: at least one, `x` and `y` of equal length, finite values within
/// ±[`MAX_ABS`](crate::MAX_ABS) (non-finite values are gaps).
pub(crate) fn check_series(series: &[Series]) -> Result<(), PlotError> {
    if series.is_empty() {
        return Err(PlotError::Empty {
            what: "series".into(),
        });
    }
    for (i, s) in series.iter().enumerate() {
        let what = |axis: &str| format!("series {i} ({}) {axis}", s.label);
        error::same_length(&what("y"), s.x.len(), s.y.len())?;
        error::bounded(&what("x"), &s.x)?;
        error::bounded(&what("y"), &s.y)?;
    }
    Ok(())
}

/// Line chart (640 × 360 px) of several series sharing axes (tolerance, ESS and acceptance
/// schedules, cumulative ε), each in its own colour with a legend on the right. Every
/// series is drawn through every `max(1, ⌊n/4000⌋)`-th point (4 000 to 8 000 points when
/// there are more), lifting the pen over non-finite values. `log_y` plots log10 of the positive values (others are
/// gaps) with ticks at powers of ten; the y range is padded by 6 % on each side so that no
/// series runs along the frame; an axis whose finite values are all whole numbers
/// (generations, iterations, counts) never ticks between integers.
///
/// # Errors
/// [`PlotError::Empty`] without series, [`PlotError::LengthMismatch`] when a series' `x` and
/// `y` differ in length, [`PlotError::TooLarge`] for a finite value beyond
/// ±[`MAX_ABS`](crate::MAX_ABS). A series without points (or without finite ones) is
/// allowed: it is drawn as nothing, with its legend entry.
pub fn line_chart(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series],
    log_y: bool,
) -> Result<String, PlotError> {
    check_series(series)?;
    let mut out = header(640.0, 360.0, title);
    let tr = |v: f64| {
        if log_y {
            if v > 0.0 { v.log10() } else { f64::NAN }
        } else {
            v
        }
    };
    let xr = finite_range(series.iter().flat_map(|s| s.x.iter().copied())).unwrap_or((0.0, 1.0));
    // The y range is padded by 6 % on each side (of log10 values on a log axis), so that a
    // budget line at the largest value or a tolerance at the smallest is not drawn on the
    // frame, where it vanishes (issue 32).
    let yr = finite_range(series.iter().flat_map(|s| s.y.iter().map(|&v| tr(v)))).map_or(
        (0.0, 1.0),
        |(lo, hi)| {
            let pad = 0.06 * (hi - lo);
            (lo - pad, hi + pad)
        },
    );
    let ys = if log_y {
        Scale::Log10
    } else if all_integers(series.iter().flat_map(|s| s.y.iter().copied())) {
        Scale::Integer
    } else {
        Scale::Linear
    };
    let f = Frame {
        x0: 72.0,
        y0: 35.0,
        w: 420.0,
        h: 260.0,
        xr,
        yr,
        xs: if all_integers(series.iter().flat_map(|s| s.x.iter().copied())) {
            Scale::Integer
        } else {
            Scale::Linear
        },
        ys,
    };
    for (k, s) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let ys: Vec<f64> = s.y.iter().map(|&v| tr(v)).collect();
        let path = f.broken_polyline(&s.x, &ys, 4000);
        let _ = write!(
            out,
            r#"<path class="series" data-label="{}" d="{path}" fill="none" stroke="{color}" stroke-width="1.2"/>"#,
            esc(&s.label)
        );
        #[allow(clippy::cast_precision_loss)]
        let ly = 45.0 + 16.0 * k as f64;
        let _ = write!(
            out,
            r#"<line x1="505" y1="{ly:.1}" x2="525" y2="{ly:.1}" stroke="{color}" stroke-width="2"/><text x="530" y="{:.1}" font-size="11">{}</text>"#,
            ly + 4.0,
            esc(&s.label)
        );
    }
    let yl = if log_y {
        format!("{ylabel} (log scale)")
    } else {
        ylabel.to_string()
    };
    f.axes(&mut out, xlabel, &yl, TickLabels::FULL);
    out.push_str("</svg>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout_problems;

    #[test]
    fn line_chart_skips_nonfinite() {
        let s = line_chart(
            "x",
            "i",
            "y",
            &[Series::new(
                "a",
                vec![0.0, 1.0, 2.0],
                vec![1.0, f64::NAN, 3.0],
            )],
            true,
        )
        .unwrap();
        assert_eq!(s.matches("class=\"series\"").count(), 1);
        assert!(!s.contains("NaN"));
    }

    #[test]
    fn integer_and_log_axes_keep_short_labels() {
        let c = Chart {
            stem: "tolerance".into(),
            title: "tolerance".into(),
            xlabel: "generation".into(),
            ylabel: "epsilon".into(),
            series: vec![Series::new(
                "tolerance",
                (1..=8).map(f64::from).collect(),
                (1..=8).map(|i| 10f64.powi(-i)).collect(),
            )],
            log_y: true,
        };
        let s = c.svg().unwrap();
        assert_eq!(layout_problems(&s), Vec::new());
        assert!(!s.contains(">1.75<") && s.contains(">1e-6<") && s.contains(">8<"));
    }

    /// Issue 32: the ε budget line (the largest value) and the smallest tolerance were drawn
    /// on the frame's top and bottom edges, where they vanish; the padded y range keeps them
    /// inside, which the layout check now verifies.
    #[test]
    fn extreme_series_are_not_drawn_on_the_frame() {
        let it: Vec<f64> = (0..100).map(f64::from).collect();
        let spent: Vec<f64> = (0..100).map(|i| 0.01 * f64::from(i)).collect();
        for log_y in [false, true] {
            let s = line_chart(
                "ε spent",
                "iteration",
                "ε",
                &[
                    Series::new("ε spent", it.clone(), spent.clone()),
                    Series::new("budget", vec![0.0, 99.0], vec![1.0, 1.0]),
                ],
                log_y,
            )
            .unwrap();
            assert_eq!(layout_problems(&s), Vec::new(), "log_y = {log_y}");
        }
    }

    #[test]
    fn bad_series_are_typed_errors() {
        assert_eq!(
            line_chart("t", "x", "y", &[], false),
            Err(PlotError::Empty {
                what: "series".into()
            })
        );
        let ragged = Series::new("a", vec![1.0, 2.0], vec![1.0]);
        assert_eq!(
            line_chart("t", "x", "y", &[ragged], false),
            Err(PlotError::LengthMismatch {
                what: "series 0 (a) y".into(),
                expected: 2,
                found: 1
            })
        );
        let huge = Series::new("a", vec![1.0], vec![-f64::MAX]);
        assert!(matches!(
            line_chart("t", "x", "y", &[huge], false),
            Err(PlotError::TooLarge { .. })
        ));
        // a series without points is drawn as nothing
        let none = Series::new("a", vec![], vec![]);
        let s = line_chart("t", "x", "y", &[none], false).unwrap();
        assert!(s.trim_end().ends_with("</svg>"));
    }
}
