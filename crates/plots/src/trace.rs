//! Trace and rank plots of MCMC draws.

use core::fmt::Write as _;

use crate::axes::{Frame, PALETTE, Scale, TickLabels, all_integers, esc, finite_range, header};
use crate::error::PlotError;
use crate::line::{Series, check_series};
use crate::stats::{check_chains, rank_counts};

/// Trace and rank plots of MCMC draws, one row per parameter (Vehtari, Gelman, Simpson,
/// Carpenter & Bürkner 2021, *Rank-normalization, folding, and localization: an improved R̂*,
/// §4 and Fig. 4–6).
///
/// `series[j]` holds parameter `j`'s draws in iteration order (`x` = iteration numbers);
/// they are cut into `chains` consecutive equal parts, the chains of split-R̂ (the CLI runs one
/// chain and uses its two halves). Left: the trace, each part in its own colour. Right: the
/// rank plot — all kept draws of the parameter are ranked together (ties share their average
/// rank), and each part's ranks are histogrammed into the same bins; the dashed line is the
/// count every bin has in expectation when the parts sample the same distribution. Parts
/// that have not mixed show histograms that rise or fall across the bins instead of
/// scattering around the line.
///
/// The picture is 680 px wide and 150 px high per parameter. Traces are drawn through every
/// `max(1, ⌊n/2000⌋)`-th draw of each part (2 000 to 4 000 points), lifting the pen over non-finite
/// draws, which are also left out of the ranks.
///
/// ```
/// use dpinfer_plots::{Series, trace_rank_plot};
/// let it: Vec<f64> = (0..400).map(f64::from).collect();
/// let draws: Vec<f64> = (0..400u32).map(|i| f64::from((i * 7919) % 400)).collect();
/// let svg = trace_rank_plot("trace and rank plots", &[Series::new("mu", it, draws)], 2)?;
/// assert_eq!(svg.matches("class=\"rank\"").count(), 2);
/// # Ok::<(), dpinfer_plots::PlotError>(())
/// ```
///
/// # Errors
/// [`PlotError::Empty`] without series, [`PlotError::InvalidChains`] for 0 or more than
/// [`MAX_CHAINS`](crate::MAX_CHAINS) chains, [`PlotError::LengthMismatch`] when a series'
/// `x` and `y` differ in length, [`PlotError::TooLarge`] for a finite value beyond
/// ±[`MAX_ABS`](crate::MAX_ABS). A series without draws is drawn as empty axes.
pub fn trace_rank_plot(title: &str, series: &[Series], chains: usize) -> Result<String, PlotError> {
    draw(title, series, chains, Panels::Both)
}

/// Trace plots alone (520 px wide, 150 px per parameter): the left half of
/// [`trace_rank_plot`] on a wider frame, with the same inputs.
///
/// # Errors
/// As [`trace_rank_plot`].
pub fn trace_plot(title: &str, series: &[Series], chains: usize) -> Result<String, PlotError> {
    draw(title, series, chains, Panels::Trace)
}

/// Rank plots alone (480 px wide, 150 px per parameter): the right half of
/// [`trace_rank_plot`] on a wider frame, with the same inputs (`x` only sets the draws'
/// order; the ranks need `y`).
///
/// # Errors
/// As [`trace_rank_plot`].
pub fn rank_plot(title: &str, series: &[Series], chains: usize) -> Result<String, PlotError> {
    draw(title, series, chains, Panels::Rank)
}

/// Which panels a row of [`draw`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Panels {
    Both,
    Trace,
    Rank,
}

/// One row per parameter: the trace, the rank plot or both (validated here).
fn draw(
    title: &str,
    series: &[Series],
    chains: usize,
    panels: Panels,
) -> Result<String, PlotError> {
    const ROW: f64 = 150.0;
    check_series(series)?;
    check_chains(chains)?;
    // The picture's width, the trace frame's width and the rank frame's left edge and width.
    let (width, trace_w, rank_x0, rank_w) = match panels {
        Panels::Both => (680.0, 360.0, 490.0, 170.0),
        Panels::Trace => (520.0, 420.0, 0.0, 0.0),
        Panels::Rank => (480.0, 0.0, 72.0, 380.0),
    };
    // The rank-only picture puts its legend on two lines.
    let footer = if panels == Panels::Rank { 38.0 } else { 24.0 };
    #[allow(clippy::cast_precision_loss)]
    let height = 50.0 + ROW * series.len().max(1) as f64 + footer;
    let mut out = header(width, height, title);
    let parts = match chains {
        1 => "one chain".to_owned(),
        2 => "colours: first and second half of the kept draws (split-R̂'s chains)".to_owned(),
        k => format!("colours: {k} consecutive parts of the kept draws (split-R̂'s chains)"),
    };
    let legend = |out: &mut String, y: f64, text: &str| {
        let _ = write!(
            out,
            r#"<text x="{}" y="{y:.1}" font-size="10" text-anchor="middle">{}</text>"#,
            width / 2.0,
            esc(text)
        );
    };
    match panels {
        Panels::Both => legend(
            &mut out,
            height - 8.0,
            &format!("{parts}; dashed: uniform ranks"),
        ),
        Panels::Trace => legend(&mut out, height - 8.0, &parts),
        Panels::Rank => {
            legend(&mut out, height - 22.0, &parts);
            legend(
                &mut out,
                height - 8.0,
                "dashed: the count of every bin under uniform ranks",
            );
        }
    }
    for (j, s) in series.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let y0 = 40.0 + ROW * j as f64;
        let n = s.y.len().min(s.x.len());
        let per = n / chains;
        let last = j + 1 == series.len();
        // Left (or alone): the trace.
        if panels != Panels::Rank {
            let xr = finite_range(s.x[..n].iter().copied()).unwrap_or((0.0, 1.0));
            let yr = finite_range(s.y[..n].iter().copied()).unwrap_or((0.0, 1.0));
            let f = Frame {
                x0: 72.0,
                y0,
                w: trace_w,
                h: ROW - 50.0,
                xr,
                yr,
                xs: if all_integers(s.x[..n].iter().copied()) {
                    Scale::Integer
                } else {
                    Scale::Linear
                },
                ys: Scale::Linear,
            };
            for c in 0..chains {
                let (lo, hi) = if per == 0 {
                    (0, if c == 0 { n } else { 0 })
                } else {
                    (c * per, if c + 1 == chains { n } else { (c + 1) * per })
                };
                if hi <= lo {
                    continue;
                }
                let path = f.broken_polyline(&s.x[lo..hi], &s.y[lo..hi], 2000);
                let _ = write!(
                    out,
                    r#"<path class="trace" data-chain="{c}" d="{path}" fill="none" stroke="{}" stroke-width="0.8"/>"#,
                    PALETTE[c % PALETTE.len()]
                );
            }
            f.axes(
                &mut out,
                if last { "iteration" } else { "" },
                &s.label,
                TickLabels::FULL,
            );
        }
        if panels == Panels::Trace {
            continue;
        }
        // Right (or alone): the rank plot; alone, its y axis names the parameter.
        let rank_label = if panels == Panels::Rank {
            format!("{} count", s.label)
        } else {
            "count".to_owned()
        };
        let (counts, expected) = rank_counts(&s.y[..n], chains);
        let total = (per * chains).max(1) as f64;
        let bins = counts.first().map_or(1, Vec::len);
        let top = counts
            .iter()
            .flatten()
            .copied()
            .fold(expected, f64::max)
            .max(1.0);
        let g = Frame {
            x0: rank_x0,
            y0,
            w: rank_w,
            h: ROW - 50.0,
            xr: (0.0, total),
            yr: (0.0, 1.1 * top),
            xs: Scale::Integer,
            ys: Scale::Integer,
        };
        for (c, part) in counts.iter().enumerate() {
            let mut path = String::new();
            for (b, &k) in part.iter().enumerate() {
                #[allow(clippy::cast_precision_loss)]
                let (a, e) = (
                    b as f64 / bins as f64 * total,
                    (b + 1) as f64 / bins as f64 * total,
                );
                let _ = write!(
                    path,
                    "{}{:.2},{:.2} L{:.2},{:.2} ",
                    if b == 0 { "M" } else { "L" },
                    g.px(a),
                    g.py(k),
                    g.px(e),
                    g.py(k)
                );
            }
            let _ = write!(
                out,
                r#"<path class="rank" data-chain="{c}" d="{path}" fill="none" stroke="{}" stroke-width="1.4"/>"#,
                PALETTE[c % PALETTE.len()]
            );
        }
        let _ = write!(
            out,
            r##"<line class="uniform" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#444" stroke-dasharray="4 3"/>"##,
            g.px(0.0),
            g.py(expected),
            g.px(total),
            g.py(expected)
        );
        g.axes(
            &mut out,
            if last { "rank (all draws)" } else { "" },
            &rank_label,
            TickLabels {
                x: true,
                y: true,
                y_right: false,
                margin: 10.0,
            },
        );
    }
    out.push_str("</svg>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout_problems;

    /// The plot has one trace and one rank outline per half and parameter and passes the
    /// layout check.
    #[test]
    fn trace_rank_plot_shows_mixing() {
        let mixed: Vec<f64> = (0..400u32).map(|i| f64::from((i * 7919) % 400)).collect();
        let drift: Vec<f64> = (0..400u32)
            .map(|i| f64::from(i / 200) * 10.0 + f64::from(i % 7))
            .collect();
        let it: Vec<f64> = (1000..1400).map(f64::from).collect();
        let series = vec![
            Series::new("mu", it.clone(), mixed),
            Series::new("sigma", it, drift),
        ];
        let s = trace_rank_plot("rwmh trace and rank plots", &series, 2).unwrap();
        assert_eq!(layout_problems(&s), Vec::new());
        assert_eq!(s.matches("class=\"trace\"").count(), 4);
        assert_eq!(s.matches("class=\"rank\"").count(), 4);
        assert_eq!(s.matches("class=\"uniform\"").count(), 2);
        assert!(s.contains(">rank (all draws)<") && s.contains(">iteration<"));
    }

    /// The single-panel variants hold only their own marks and lay out cleanly for one to
    /// many chains, including the two-line legend of the rank plot.
    #[test]
    fn trace_or_rank_alone() {
        let it: Vec<f64> = (0..4000).map(f64::from).collect();
        let y: Vec<f64> = (0..4000u32)
            .map(|i| f64::from((i * 7919) % 4000) * 1e-3 - 2.0)
            .collect();
        let series = vec![
            Series::new("theta_1", it.clone(), y.clone()),
            Series::new("log sigma", it, y.iter().map(|v| v * 250.0).collect()),
        ];
        for chains in [1, 2, 4, 64] {
            let t = trace_plot("trace", &series, chains).unwrap();
            let r = rank_plot("rank plots", &series, chains).unwrap();
            assert_eq!(layout_problems(&t), Vec::new(), "{chains}");
            assert_eq!(layout_problems(&r), Vec::new(), "{chains}");
            assert_eq!(t.matches("class=\"trace\"").count(), 2 * chains);
            assert_eq!(t.matches("class=\"rank\"").count(), 0);
            assert_eq!(r.matches("class=\"rank\"").count(), 2 * chains);
            assert_eq!(r.matches("class=\"trace\"").count(), 0);
            assert_eq!(r.matches("class=\"uniform\"").count(), 2);
            assert!(r.contains(">log sigma count<") && r.contains(">rank (all draws)<"));
            assert!(t.contains(">iteration<") && !t.contains("dashed"));
        }
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        assert!(matches!(
            trace_rank_plot("t", &[], 2),
            Err(PlotError::Empty { .. })
        ));
        let s = Series::new("a", vec![0.0, 1.0], vec![0.0, 1.0]);
        assert_eq!(
            trace_rank_plot("t", core::slice::from_ref(&s), 0),
            Err(PlotError::InvalidChains { chains: 0 })
        );
        assert_eq!(
            trace_rank_plot("t", core::slice::from_ref(&s), usize::MAX),
            Err(PlotError::InvalidChains { chains: usize::MAX })
        );
        // no draws, or more chains than draws: empty panels, still a document
        let none = Series::new("a", vec![], vec![]);
        let out = trace_rank_plot("t", &[none], 3).unwrap();
        assert!(out.trim_end().ends_with("</svg>"));
        assert!(trace_rank_plot("t", &[s], 5).is_ok());
    }
}
