//! Small, dependency-free SVG plots: histograms with a KDE overlay, pair plots, traces and
//! line charts. Every plot is a self-contained SVG document (UTF-8, no external resources).

use std::fmt::Write as _;

const PALETTE: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
];

/// A named series of y values over x values.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// x coordinates.
    pub x: Vec<f64>,
    /// y coordinates (same length as `x`).
    pub y: Vec<f64>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn finite_range(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in vals.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return None;
    }
    if hi - lo < 1e-12 * (1.0 + lo.abs()) {
        let pad = 0.5 * (1.0 + lo.abs()) * 1e-3;
        return Some((lo - pad, hi + pad));
    }
    Some((lo, hi))
}

/// A plotting frame: maps data coordinates to pixels inside a box.
struct Frame {
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
    xr: (f64, f64),
    yr: (f64, f64),
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        self.x0 + (x - self.xr.0) / (self.xr.1 - self.xr.0) * self.w
    }
    fn py(&self, y: f64) -> f64 {
        self.y0 + self.h - (y - self.yr.0) / (self.yr.1 - self.yr.0) * self.h
    }
    fn axes(&self, out: &mut String, xlabel: &str, ylabel: &str, yticks: bool) {
        let _ = write!(
            out,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#444" stroke-width="1"/>"##,
            self.x0, self.y0, self.w, self.h
        );
        for i in 0..=4 {
            let t = f64::from(i) / 4.0;
            let xv = self.xr.0 + t * (self.xr.1 - self.xr.0);
            let px = self.px(xv);
            let _ = write!(
                out,
                r##"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="#444"/><text x="{px:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"##,
                self.y0 + self.h,
                self.y0 + self.h + 4.0,
                self.y0 + self.h + 15.0,
                // Narrow panels label every other tick so the numbers do not collide.
                if self.w >= 250.0 || i % 2 == 0 {
                    fmt_tick(xv)
                } else {
                    String::new()
                }
            );
            if yticks {
                let yv = self.yr.0 + t * (self.yr.1 - self.yr.0);
                let py = self.py(yv);
                let _ = write!(
                    out,
                    r##"<line x1="{:.1}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#444"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
                    self.x0 - 4.0,
                    self.x0,
                    self.x0 - 6.0,
                    py + 3.0,
                    fmt_tick(yv)
                );
            }
        }
        if !xlabel.is_empty() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
                self.x0 + self.w / 2.0,
                self.y0 + self.h + 30.0,
                esc(xlabel)
            );
        }
        if !ylabel.is_empty() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" transform="rotate(-90 {:.1} {:.1})">{}</text>"#,
                self.x0 - 42.0,
                self.y0 + self.h / 2.0,
                self.x0 - 42.0,
                self.y0 + self.h / 2.0,
                esc(ylabel)
            );
        }
    }
}

fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{v:.2e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
        if s == "-0" { "0".into() } else { s }
    }
}

fn header(w: f64, h: f64, title: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="{:.1}" y="20" font-size="14" text-anchor="middle" font-weight="bold">{}</text>"#,
        w / 2.0,
        esc(title)
    )
}

/// Gaussian kernel density estimate on a grid, Silverman's bandwidth.
fn kde(vals: &[f64], grid: &[f64]) -> Vec<f64> {
    #[allow(clippy::cast_precision_loss)]
    let n = vals.len() as f64;
    if vals.len() < 2 {
        return vec![0.0; grid.len()];
    }
    let mean = vals.iter().sum::<f64>() / n;
    let var = vals.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    let sd = var.sqrt().max(1e-12);
    let bw = 1.06 * sd * n.powf(-0.2);
    let norm = 1.0 / (n * bw * (2.0 * std::f64::consts::PI).sqrt());
    grid.iter()
        .map(|&g| {
            vals.iter()
                .map(|&v| {
                    let z = (g - v) / bw;
                    (-0.5 * z * z).exp()
                })
                .sum::<f64>()
                * norm
        })
        .collect()
}

fn histogram_into(
    out: &mut String,
    frame_box: (f64, f64, f64, f64),
    vals: &[f64],
    bins: usize,
    truth: Option<f64>,
    labels: (&str, bool),
) {
    let vals: Vec<f64> = vals.iter().copied().filter(|v| v.is_finite()).collect();
    let Some((mut lo, mut hi)) = finite_range(vals.iter().copied().chain(truth)) else {
        return;
    };
    let pad = 0.02 * (hi - lo);
    lo -= pad;
    hi += pad;
    let bins = bins.max(1);
    #[allow(clippy::cast_precision_loss)]
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for &v in &vals {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let b = (((v - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    #[allow(clippy::cast_precision_loss)]
    let n = vals.len().max(1) as f64;
    #[allow(clippy::cast_precision_loss)]
    let dens: Vec<f64> = counts.iter().map(|&c| c as f64 / (n * width)).collect();
    #[allow(clippy::cast_precision_loss)]
    let grid: Vec<f64> = (0..=120)
        .map(|i| lo + (hi - lo) * f64::from(i) / 120.0)
        .collect();
    let k = kde(&vals, &grid);
    let ymax = dens
        .iter()
        .chain(k.iter())
        .fold(0.0_f64, |a, &b| a.max(b))
        .max(1e-300)
        * 1.08;
    let f = Frame {
        x0: frame_box.0,
        y0: frame_box.1,
        w: frame_box.2,
        h: frame_box.3,
        xr: (lo, hi),
        yr: (0.0, ymax),
    };
    for (i, d) in dens.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let x = lo + i as f64 * width;
        let (px0, px1) = (f.px(x), f.px(x + width));
        let py = f.py(*d);
        let _ = write!(
            out,
            r##"<rect class="bar" x="{px0:.2}" y="{py:.2}" width="{:.2}" height="{:.2}" fill="#9ecae1" stroke="#6baed6" stroke-width="0.5"/>"##,
            (px1 - px0).max(0.0),
            (f.y0 + f.h - py).max(0.0)
        );
    }
    let mut path = String::new();
    for (i, (g, d)) in grid.iter().zip(&k).enumerate() {
        let _ = write!(
            path,
            "{}{:.2},{:.2} ",
            if i == 0 { "M" } else { "L" },
            f.px(*g),
            f.py(*d)
        );
    }
    let _ = write!(
        out,
        r##"<path class="kde" d="{path}" fill="none" stroke="#08519c" stroke-width="1.5"/>"##
    );
    if let Some(t) = truth.filter(|t| t.is_finite()) {
        let px = f.px(t);
        let _ = write!(
            out,
            r##"<line class="truth" x1="{px:.2}" y1="{:.2}" x2="{px:.2}" y2="{:.2}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="4,3"/>"##,
            f.y0,
            f.y0 + f.h
        );
    }
    f.axes(
        out,
        labels.0,
        if labels.1 { "density" } else { "" },
        labels.1,
    );
}

/// Histogram (density scale) with a KDE curve and an optional dashed line at the true value.
#[must_use]
pub fn histogram(title: &str, xlabel: &str, vals: &[f64], truth: Option<f64>) -> String {
    let mut out = header(480.0, 340.0, title);
    histogram_into(
        &mut out,
        (60.0, 35.0, 390.0, 250.0),
        vals,
        40,
        truth,
        (xlabel, true),
    );
    out.push_str("</svg>\n");
    out
}

/// Pair plot: histograms on the diagonal, scatter plots below it, true θ marked in red.
#[must_use]
pub fn pair_plot(
    title: &str,
    names: &[String],
    cols: &[Vec<f64>],
    truth: Option<&[f64]>,
) -> String {
    let d = cols.len().max(1);
    let cell = if d <= 3 { 180.0 } else { 130.0 };
    #[allow(clippy::cast_precision_loss)]
    let size = 60.0 + cell * d as f64 + 20.0;
    let mut out = header(size, size + 20.0, title);
    let ranges: Vec<(f64, f64)> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            finite_range(
                c.iter()
                    .copied()
                    .chain(truth.and_then(|t| t.get(i).copied())),
            )
            .unwrap_or((0.0, 1.0))
        })
        .collect();
    for i in 0..d.min(cols.len()) {
        for j in 0..=i {
            #[allow(clippy::cast_precision_loss)]
            let bx = (
                60.0 + cell * j as f64,
                35.0 + cell * i as f64,
                cell - 24.0,
                cell - 34.0,
            );
            let xl = if i + 1 == d {
                names.get(j).map_or("", String::as_str)
            } else {
                ""
            };
            if i == j {
                histogram_into(
                    &mut out,
                    bx,
                    &cols[i],
                    25,
                    truth.and_then(|t| t.get(i).copied()),
                    (xl, false),
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
            };
            let step = (cols[i].len() / 1500).max(1);
            // Few points are drawn big and solid, many small and translucent.
            let (r, op) = match cols[i].len() {
                0..200 => (3.0, 0.8),
                200..2000 => (2.0, 0.5),
                _ => (1.3, 0.35),
            };
            for (x, y) in cols[j].iter().zip(&cols[i]).step_by(step) {
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
                names.get(i).map_or("", String::as_str)
            } else {
                ""
            };
            f.axes(&mut out, xl, yl, j == 0);
        }
    }
    out.push_str("</svg>\n");
    out
}

/// Line chart of several series sharing axes (traces, tolerance/ESS/acceptance schedules,
/// cumulative ε). `log_y` plots log10 of positive values.
#[must_use]
pub fn line_chart(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series],
    log_y: bool,
) -> String {
    let mut out = header(640.0, 360.0, title);
    let tr = |v: f64| {
        if log_y {
            if v > 0.0 { v.log10() } else { f64::NAN }
        } else {
            v
        }
    };
    let xr = finite_range(series.iter().flat_map(|s| s.x.iter().copied())).unwrap_or((0.0, 1.0));
    let yr =
        finite_range(series.iter().flat_map(|s| s.y.iter().map(|&v| tr(v)))).unwrap_or((0.0, 1.0));
    let f = Frame {
        x0: 70.0,
        y0: 35.0,
        w: 420.0,
        h: 260.0,
        xr,
        yr,
    };
    for (k, s) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let mut path = String::new();
        let mut pen_up = true;
        let step = (s.x.len() / 4000).max(1);
        for (x, y) in s.x.iter().zip(&s.y).step_by(step) {
            let y = tr(*y);
            if !x.is_finite() || !y.is_finite() {
                pen_up = true;
                continue;
            }
            let _ = write!(
                path,
                "{}{:.2},{:.2} ",
                if pen_up { "M" } else { "L" },
                f.px(*x),
                f.py(y)
            );
            pen_up = false;
        }
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
        format!("log10 {ylabel}")
    } else {
        ylabel.to_string()
    };
    f.axes(&mut out, xlabel, &yl, true);
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_wellformed_and_has_bars() {
        let v: Vec<f64> = (0..1000).map(|i| f64::from(i).sin()).collect();
        let s = histogram("t <&>", "x", &v, Some(0.2));
        assert!(s.starts_with("<?xml") && s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches("class=\"bar\"").count(), 40);
        assert!(s.contains("class=\"kde\"") && s.contains("class=\"truth\""));
        assert!(s.contains("t &lt;&amp;&gt;"));
    }

    #[test]
    fn line_chart_skips_nonfinite() {
        let s = line_chart(
            "x",
            "i",
            "y",
            &[Series {
                label: "a".into(),
                x: vec![0.0, 1.0, 2.0],
                y: vec![1.0, f64::NAN, 3.0],
            }],
            true,
        );
        assert_eq!(s.matches("class=\"series\"").count(), 1);
        assert!(!s.contains("NaN"));
    }
}
