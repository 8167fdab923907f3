//! Small, dependency-free SVG plots: histograms with a KDE overlay, pair plots, MCMC trace
//! and rank plots, and line charts. Every plot is a self-contained SVG document (UTF-8, no external resources).

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
        // One value: a window of ±5 % around it (±0.5 around 0), so ticks stay readable.
        let pad = if lo == 0.0 { 0.5 } else { 0.05 * lo.abs() };
        return Some((lo - pad, hi + pad));
    }
    Some((lo, hi))
}

/// Approximate advance width of one character of a sans-serif label, in em (DejaVu Sans
/// digits are 0.636 em wide; the layout check in the tests uses the same figure).
pub const CHAR_EM: f64 = 0.64;

/// Which kind of tick labels an axis gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// 1-2-5 steps.
    Linear,
    /// 1-2-5 steps of at least 1 (counts, generations, iterations).
    Integer,
    /// The coordinates are log10 of the values: ticks at 10^k.
    Log10,
}

/// Longest tick label; a narrow window on a large value is labelled relative to an offset.
const MAX_TICK_CHARS: usize = 7;

/// Tick positions and labels for `[lo, hi]`: about `target` ticks at 1-2-5 steps (never
/// below 1 on an integer axis), or at powers of ten on a log axis. Labels are exact short
/// decimals (`0.25`, `3500`, `2e-5`), built from integers so that no rounding noise such as
/// `0.30000000000000004` can appear. When a label would be longer than
/// [`MAX_TICK_CHARS`] (a narrow window on a large value), the labels count from the first
/// tick and the second value is that offset, for the axis label.
fn ticks(lo: f64, hi: f64, target: usize, scale: Scale) -> (Vec<(f64, String)>, Option<String>) {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return (Vec::new(), None);
    }
    if scale == Scale::Log10 {
        #[allow(clippy::cast_possible_truncation)]
        let (k0, k1) = (lo.ceil() as i32, hi.floor() as i32);
        if k1 > k0 {
            let every = ((k1 - k0) / 6 + 1).max(1);
            let t = (k0..=k1)
                .filter(|k| (k - k0) % every == 0)
                .map(|k| (f64::from(k), decimal(1, k)))
                .collect();
            return (t, None);
        }
        // Less than a decade: 1-2-5 ticks on the values themselves, placed at their log10.
        let (t, offset) = ticks(10f64.powf(lo), 10f64.powf(hi), target, Scale::Linear);
        let t = t
            .into_iter()
            .filter(|(v, _)| *v > 0.0)
            .map(|(v, l)| (v.log10(), l))
            .collect();
        return (t, offset);
    }
    #[allow(clippy::cast_precision_loss)]
    let raw = (hi - lo) / target.max(1) as f64;
    #[allow(clippy::cast_possible_truncation)]
    let mut e = raw.log10().floor() as i32;
    let norm = raw / 10f64.powi(e);
    let mut m: i64 = if norm < 1.5 {
        1
    } else if norm < 3.0 {
        2
    } else if norm < 7.0 {
        5
    } else {
        10
    };
    if m == 10 {
        m = 1;
        e += 1;
    }
    if scale == Scale::Integer && e < 0 {
        m = 1;
        e = 0;
    }
    #[allow(clippy::cast_precision_loss)]
    let step = m as f64 * 10f64.powi(e);
    #[allow(clippy::cast_possible_truncation)]
    let (k0, k1) = (
        (lo / step - 1e-9).ceil() as i64,
        (hi / step + 1e-9).floor() as i64,
    );
    if k1 < k0 || k1 - k0 > 1000 {
        return (Vec::new(), None);
    }
    #[allow(clippy::cast_precision_loss)]
    let plain: Vec<(f64, String)> = (k0..=k1)
        .map(|k| (k as f64 * step, decimal(k * m, e)))
        .collect();
    if plain.iter().all(|(_, l)| l.len() <= MAX_TICK_CHARS) {
        return (plain, None);
    }
    #[allow(clippy::cast_precision_loss)]
    let relative = (k0..=k1)
        .map(|k| (k as f64 * step, decimal((k - k0) * m, e)))
        .collect();
    (relative, Some(decimal(k0 * m, e)))
}

/// The exact decimal `n · 10^e` as a short label: plain digits for magnitudes in
/// [1e-4, 1e6), otherwise scientific (`1.5e6`, `-2e-7`).
fn decimal(n: i64, e: i32) -> String {
    if n == 0 {
        return "0".to_owned();
    }
    let mut digits = n.unsigned_abs();
    let mut e = e;
    while digits.is_multiple_of(10) {
        digits /= 10;
        e += 1;
    }
    let ds = digits.to_string();
    #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
    let mag = ds.len() as i32 - 1 + e; // floor(log10 |value|)
    let body = if (-4..6).contains(&mag) {
        let frac = e.unsigned_abs() as usize;
        if e >= 0 {
            format!("{ds}{}", "0".repeat(frac))
        } else if ds.len() > frac {
            format!("{}.{}", &ds[..ds.len() - frac], &ds[ds.len() - frac..])
        } else {
            format!("0.{}{ds}", "0".repeat(frac - ds.len()))
        }
    } else if ds.len() == 1 {
        format!("{ds}e{mag}")
    } else {
        format!("{}.{}e{mag}", &ds[..1], &ds[1..])
    };
    if n < 0 { format!("-{body}") } else { body }
}

/// Width in pixels of a label of `text` at `size` px (the estimate the layout check uses).
fn text_width(text: &str, size: f64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let n = text.chars().count() as f64;
    n * CHAR_EM * size
}

/// Which tick labels an axis shows.
#[derive(Debug, Clone, Copy)]
struct TickLabels {
    /// Label the x ticks.
    x: bool,
    /// Label the y ticks on the left.
    y: bool,
    /// Label the y ticks on the right edge instead (diagonal panels of a pair plot).
    y_right: bool,
    /// Horizontal room outside the frame that an x label may use (px).
    margin: f64,
}

/// A plotting frame: maps data coordinates to pixels inside a box.
struct Frame {
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
    xr: (f64, f64),
    yr: (f64, f64),
    xs: Scale,
    ys: Scale,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        self.x0 + (x - self.xr.0) / (self.xr.1 - self.xr.0) * self.w
    }
    fn py(&self, y: f64) -> f64 {
        self.y0 + self.h - (y - self.yr.0) / (self.yr.1 - self.yr.0) * self.h
    }
    /// SVG path data through the points (x, y) of one curve.
    fn polyline(&self, xs: &[f64], ys: &[f64]) -> String {
        let mut path = String::new();
        for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
            let _ = write!(
                path,
                "{}{:.2},{:.2} ",
                if i == 0 { "M" } else { "L" },
                self.px(*x),
                self.py(*y)
            );
        }
        path
    }
    /// SVG path data through at most about `max_points` of the points (x, y), every
    /// `⌈n / max_points⌉`-th one, lifting the pen over non-finite values.
    fn broken_polyline(&self, xs: &[f64], ys: &[f64], max_points: usize) -> String {
        let mut path = String::new();
        let mut pen_up = true;
        let step = (xs.len() / max_points.max(1)).max(1);
        for (x, y) in xs.iter().zip(ys).step_by(step) {
            if !x.is_finite() || !y.is_finite() {
                pen_up = true;
                continue;
            }
            let _ = write!(
                path,
                "{}{:.2},{:.2} ",
                if pen_up { "M" } else { "L" },
                self.px(*x),
                self.py(*y)
            );
            pen_up = false;
        }
        path
    }
    fn axes(&self, out: &mut String, xlabel: &str, ylabel: &str, show: TickLabels) {
        const FONT: f64 = 10.0;
        let _ = write!(
            out,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#444" stroke-width="1"/>"##,
            self.x0, self.y0, self.w, self.h
        );
        // x ticks: a label is drawn only where it fits the room and clears its neighbour.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let xt = ((self.w / 70.0).round() as usize).clamp(2, 8);
        let mut last_right = f64::NEG_INFINITY;
        let (xticks, xoff) = ticks(self.xr.0, self.xr.1, xt, self.xs);
        for (v, label) in xticks {
            let px = self.px(v);
            let _ = write!(
                out,
                r##"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="#444"/>"##,
                self.y0 + self.h,
                self.y0 + self.h + 4.0
            );
            let half = text_width(&label, FONT) / 2.0;
            let fits = px - half >= self.x0 - show.margin
                && px + half <= self.x0 + self.w + show.margin
                && px - half >= last_right + 4.0;
            if show.x && fits {
                last_right = px + half;
                let _ = write!(
                    out,
                    r#"<text class="tick" x="{px:.1}" y="{:.1}" font-size="{FONT}" text-anchor="middle">{}</text>"#,
                    self.y0 + self.h + 15.0,
                    esc(&label)
                );
            }
        }
        // y ticks, thinned so that labels keep 12 px apart.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let yt = ((self.h / 45.0).round() as usize).clamp(2, 8);
        let mut widest: f64 = 0.0;
        let mut last_y = f64::INFINITY;
        let (yticks, yoff) = ticks(self.yr.0, self.yr.1, yt, self.ys);
        for (v, label) in yticks {
            let py = self.py(v);
            let (x1, x2, tx, anchor) = if show.y_right {
                (
                    self.x0 + self.w,
                    self.x0 + self.w + 4.0,
                    self.x0 + self.w + 6.0,
                    "start",
                )
            } else {
                (self.x0 - 4.0, self.x0, self.x0 - 6.0, "end")
            };
            let _ = write!(
                out,
                r##"<line x1="{x1:.1}" y1="{py:.1}" x2="{x2:.1}" y2="{py:.1}" stroke="#444"/>"##
            );
            if (show.y || show.y_right) && last_y - py >= 12.0 {
                last_y = py;
                widest = widest.max(text_width(&label, FONT));
                let _ = write!(
                    out,
                    r#"<text class="tick" x="{tx:.1}" y="{:.1}" font-size="{FONT}" text-anchor="{anchor}">{}</text>"#,
                    py + 3.5,
                    esc(&label)
                );
            }
        }
        let with_offset = |label: &str, off: Option<String>| match off {
            Some(o) if !label.is_empty() => format!("{label} (ticks + {o})"),
            _ => label.to_owned(),
        };
        let xlabel = with_offset(xlabel, xoff.filter(|_| show.x));
        let ylabel = with_offset(ylabel, yoff.filter(|_| show.y));
        if !xlabel.is_empty() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
                self.x0 + self.w / 2.0,
                self.y0 + self.h + 30.0,
                esc(&xlabel)
            );
        }
        if !ylabel.is_empty() {
            // Left of the widest tick label, so that the two never touch.
            let lx = self.x0 - 6.0 - widest - 9.0;
            let _ = write!(
                out,
                r#"<text x="{lx:.1}" y="{:.1}" font-size="11" text-anchor="middle" transform="rotate(-90 {lx:.1} {:.1})">{}</text>"#,
                self.y0 + self.h / 2.0,
                self.y0 + self.h / 2.0,
                esc(&ylabel)
            );
        }
    }
}

/// Whether every finite value is a whole number (iterations, generations, counts).
fn all_integers(vals: impl Iterator<Item = f64>) -> bool {
    let mut any = false;
    for v in vals.filter(|v| v.is_finite()) {
        if v.fract() != 0.0 {
            return false;
        }
        any = true;
    }
    any
}

/// Histogram bin count from the sample size: Freedman–Diaconis (`h = 2·IQR·n^{-1/3}`), or
/// Sturges (`⌈log₂ n⌉ + 1`) for fewer than 30 values or a zero IQR; at most 60.
fn bin_count(vals: &[f64], lo: f64, hi: f64) -> usize {
    let n = vals.len();
    if n < 2 {
        return 1;
    }
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let sturges = (nf.log2().ceil() as usize + 1).clamp(1, 60);
    if n < 30 {
        return sturges;
    }
    let mut v = vals.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let pos = p * (nf - 1.0);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let i = pos.floor() as usize;
        let j = (i + 1).min(n - 1);
        v[i] + (pos - pos.floor()) * (v[j] - v[i])
    };
    let iqr = q(0.75) - q(0.25);
    let h = 2.0 * iqr * nf.powf(-1.0 / 3.0);
    if h.is_nan() || h <= 0.0 || hi <= lo {
        return sturges;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let fd = ((hi - lo) / h).ceil().min(1e6) as usize;
    fd.clamp(5, 60)
}

/// The document head with a bold title, whose size shrinks (down to 8 px) so that a long title
/// fits the width.
fn header(w: f64, h: f64, title: &str) -> String {
    // Bold text is about 10 % wider than the layout's regular estimate.
    let size = ((w - 16.0) / (1.1 * text_width(title, 1.0).max(1.0))).clamp(8.0, 14.0);
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="{:.1}" y="20" font-size="{size:.1}" text-anchor="middle" font-weight="bold">{}</text>"#,
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
    truth: Option<f64>,
    prior: Option<&[f64]>,
    xlabel: &str,
    show: TickLabels,
) {
    let vals: Vec<f64> = vals.iter().copied().filter(|v| v.is_finite()).collect();
    let Some((mut lo, mut hi)) = finite_range(vals.iter().copied().chain(truth)) else {
        return;
    };
    let pad = 0.02 * (hi - lo);
    lo -= pad;
    hi += pad;
    let bins = bin_count(&vals, lo, hi);
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
    let prior_k = prior.map(|p| {
        let p: Vec<f64> = p.iter().copied().filter(|v| v.is_finite()).collect();
        kde(&p, &grid)
    });
    let ymax = dens
        .iter()
        .chain(k.iter())
        .chain(prior_k.iter().flatten())
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
        xs: Scale::Linear,
        ys: Scale::Linear,
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
    let _ = write!(
        out,
        r##"<path class="kde" d="{}" fill="none" stroke="#08519c" stroke-width="1.5"/>"##,
        f.polyline(&grid, &k)
    );
    if let Some(pk) = &prior_k {
        let _ = write!(
            out,
            r##"<path class="prior" d="{}" fill="none" stroke="#777" stroke-width="1.2" stroke-dasharray="5,3"/>"##,
            f.polyline(&grid, pk)
        );
    }
    if let Some(t) = truth.filter(|t| t.is_finite()) {
        let px = f.px(t);
        let _ = write!(
            out,
            r##"<line class="truth" x1="{px:.2}" y1="{:.2}" x2="{px:.2}" y2="{:.2}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="4,3"/>"##,
            f.y0,
            f.y0 + f.h
        );
    }
    f.axes(out, xlabel, if show.y { "density" } else { "" }, show);
}

/// Histogram (density scale) with a KDE curve, an optional dashed red line at the true value
/// and an optional dashed grey prior density (a KDE of `prior` draws over the same range).
#[must_use]
pub fn histogram(
    title: &str,
    xlabel: &str,
    vals: &[f64],
    truth: Option<f64>,
    prior: Option<&[f64]>,
) -> String {
    let mut out = header(480.0, 340.0, title);
    histogram_into(
        &mut out,
        (72.0, 35.0, 380.0, 250.0),
        vals,
        truth,
        prior,
        xlabel,
        TickLabels {
            x: true,
            y: true,
            y_right: false,
            margin: 20.0,
        },
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
    let size = 72.0 + cell * d as f64 + 20.0;
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
                72.0 + cell * j as f64,
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
                    truth.and_then(|t| t.get(i).copied()),
                    None,
                    xl,
                    TickLabels {
                        x: i + 1 == d,
                        y: false,
                        y_right: true,
                        margin: 11.0,
                    },
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
    f.axes(
        &mut out,
        xlabel,
        &yl,
        TickLabels {
            x: true,
            y: true,
            y_right: false,
            margin: 20.0,
        },
    );
    out.push_str("</svg>\n");
    out
}

/// Fractional ranks (1-based, ties get their average rank) of all finite values, in input
/// order; non-finite values get NaN.
fn average_ranks(vals: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..vals.len()).filter(|&i| vals[i].is_finite()).collect();
    idx.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]));
    let mut ranks = vec![f64::NAN; vals.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && vals[idx[j]].total_cmp(&vals[idx[i]]).is_eq() {
            j += 1;
        }
        // positions i..j (0-based) share the rank (i + 1 + j) / 2
        #[allow(clippy::cast_precision_loss)]
        let r = (i + 1 + j) as f64 / 2.0;
        for &k in &idx[i..j] {
            ranks[k] = r;
        }
        i = j;
    }
    ranks
}

/// Rank histograms of `vals` cut into `chains` consecutive parts of `⌊n/chains⌋` draws (a
/// remainder is dropped): the parts' draws are ranked together (average ranks for ties) and
/// each part's ranks are counted in the same bins — 20 as in Vehtari et al. (2021), fewer
/// when a part has under 100 draws (at least 5 per bin in expectation). Returns the counts
/// per part and bin, and the count every bin has in expectation under uniform ranks.
fn rank_histograms(vals: &[f64], chains: usize) -> (Vec<Vec<f64>>, f64) {
    let chains = chains.max(1);
    let per = vals.len() / chains;
    let used = per * chains;
    let ranks = average_ranks(&vals[..used]);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bins = (per / 5).clamp(1, 20);
    #[allow(clippy::cast_precision_loss)]
    let (total, nb) = (used.max(1) as f64, bins as f64);
    let mut counts = vec![vec![0.0f64; bins]; chains];
    for (c, part) in counts.iter_mut().enumerate() {
        for r in &ranks[c * per..(c + 1) * per] {
            if r.is_finite() {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let b = (((r - 0.5) / total * nb).floor() as usize).min(bins - 1);
                part[b] += 1.0;
            }
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let expected = per as f64 / nb;
    (counts, expected)
}

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
#[must_use]
pub fn trace_rank(title: &str, series: &[Series], chains: usize) -> String {
    const ROW: f64 = 150.0;
    let chains = chains.max(1);
    #[allow(clippy::cast_precision_loss)]
    let height = 50.0 + ROW * series.len().max(1) as f64 + 24.0;
    let mut out = header(680.0, height, title);
    let parts = match chains {
        1 => "one chain".to_owned(),
        2 => "colours: first and second half of the kept draws (split-R̂'s chains)".to_owned(),
        k => format!("colours: {k} consecutive parts of the kept draws (split-R̂'s chains)"),
    };
    let _ = write!(
        out,
        r#"<text x="340" y="{:.1}" font-size="10" text-anchor="middle">{}; dashed: uniform ranks</text>"#,
        height - 8.0,
        esc(&parts)
    );
    for (j, s) in series.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let y0 = 40.0 + ROW * j as f64;
        let n = s.y.len().min(s.x.len());
        let per = n / chains;
        let last = j + 1 == series.len();
        // Left: the trace.
        let xr = finite_range(s.x[..n].iter().copied()).unwrap_or((0.0, 1.0));
        let yr = finite_range(s.y[..n].iter().copied()).unwrap_or((0.0, 1.0));
        let f = Frame {
            x0: 72.0,
            y0,
            w: 360.0,
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
            TickLabels {
                x: true,
                y: true,
                y_right: false,
                margin: 20.0,
            },
        );
        // Right: the rank plot.
        let (counts, expected) = rank_histograms(&s.y[..n], chains);
        let total = (per * chains).max(1) as f64;
        let bins = counts.first().map_or(1, Vec::len);
        let top = counts
            .iter()
            .flatten()
            .copied()
            .fold(expected, f64::max)
            .max(1.0);
        let g = Frame {
            x0: 490.0,
            y0,
            w: 170.0,
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
            "count",
            TickLabels {
                x: true,
                y: true,
                y_right: false,
                margin: 10.0,
            },
        );
    }
    out.push_str("</svg>\n");
    out
}

/// A text label's estimated box in pixels: (x0, y0, x1, y1, content, is a tick label).
type TextBox = (f64, f64, f64, f64, String, bool);

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let end = tag[at..].find('"')?;
    Some(tag[at..at + end].to_owned())
}

fn num_attr(tag: &str, name: &str) -> Option<f64> {
    attr(tag, name)?.parse().ok()
}

/// The estimated boxes of every `<text>` element of a plot made by this module, using the
/// same character width as the layout ([`CHAR_EM`]), with rotated labels turned upright.
fn text_boxes(svg: &str) -> Vec<TextBox> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find("<text ") {
        rest = &rest[at..];
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..close];
        let Some(end) = rest.find("</text>") else {
            break;
        };
        let raw = &rest[close + 1..end];
        rest = &rest[end..];
        let content = raw
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"");
        let (Some(x), Some(y)) = (num_attr(tag, "x"), num_attr(tag, "y")) else {
            continue;
        };
        let size = num_attr(tag, "font-size").unwrap_or(12.0);
        let bold = tag.contains("font-weight=\"bold\"");
        let w = text_width(&content, size) * if bold { 1.1 } else { 1.0 };
        let anchor = attr(tag, "text-anchor").unwrap_or_else(|| "start".to_owned());
        let left = match anchor.as_str() {
            "middle" => -w / 2.0,
            "end" => -w,
            _ => 0.0,
        };
        // A quarter turn about (x, y) makes the text run upwards from its anchor.
        let (x0, y0, x1, y1) = if tag.contains("rotate(-90") {
            (x - 0.8 * size, y - left - w, x + 0.2 * size, y - left)
        } else {
            (x + left, y - 0.8 * size, x + left + w, y + 0.2 * size)
        };
        out.push((x0, y0, x1, y1, content, tag.contains("class=\"tick\"")));
    }
    out
}

/// Whether a tick label is a short decimal: at most 8 characters of the form `-12.5`,
/// `0.004` or `2.5e-7`.
fn short_decimal(s: &str) -> bool {
    let t = s.strip_prefix('-').unwrap_or(s);
    let (mant, exp) = match t.split_once('e') {
        Some((m, e)) => (m, Some(e.strip_prefix('-').unwrap_or(e))),
        None => (t, None),
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let mant_ok = match mant.split_once('.') {
        Some((i, f)) => digits(i) && digits(f) && !f.ends_with('0'),
        None => digits(mant),
    };
    s.len() <= 8 && mant_ok && exp.is_none_or(digits)
}

/// Layout problems of a plot made by this module: text boxes (estimated with the layout's
/// own character width) that overlap or leave the picture, and tick labels that are not
/// short decimals. Empty for a good plot; the end-to-end tests run it on every plot of every
/// example.
#[must_use]
pub fn layout_problems(svg: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let head = svg.find("<svg").map_or("", |at| {
        let rest = &svg[at..];
        &rest[..rest.find('>').unwrap_or(rest.len())]
    });
    let (w, h) = (
        num_attr(head, "width").unwrap_or(f64::INFINITY),
        num_attr(head, "height").unwrap_or(f64::INFINITY),
    );
    let boxes = text_boxes(svg);
    for (i, a) in boxes.iter().enumerate() {
        if a.0 < -0.5 || a.1 < -0.5 || a.2 > w + 0.5 || a.3 > h + 0.5 {
            problems.push(format!("text {:?} leaves the {w}×{h} picture", a.4));
        }
        if a.5 && !short_decimal(&a.4) {
            problems.push(format!("tick label {:?} is not a short decimal", a.4));
        }
        for b in &boxes[i + 1..] {
            let overlap_x = a.2.min(b.2) - a.0.max(b.0);
            let overlap_y = a.3.min(b.3) - a.1.max(b.1);
            if overlap_x > 0.5 && overlap_y > 0.5 && !a.4.is_empty() && !b.4.is_empty() {
                problems.push(format!("texts {:?} and {:?} overlap", a.4, b.4));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_wellformed_and_has_bars() {
        let v: Vec<f64> = (0..1000).map(|i| f64::from(i).sin()).collect();
        let s = histogram("t <&>", "x", &v, Some(0.2), Some(&[0.0, 0.5, -0.5, 0.9]));
        assert!(s.contains("class=\"prior\""));
        assert!(s.starts_with("<?xml") && s.trim_end().ends_with("</svg>"));
        // Freedman–Diaconis for n = 1000 values of sin: range ≈ 2.08, IQR ≈ 1.41, h ≈ 0.28.
        assert_eq!(s.matches("class=\"bar\"").count(), 8);
        assert!(layout_problems(&s).is_empty(), "{:?}", layout_problems(&s));
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

    #[test]
    fn decimals_are_exact_and_short() {
        for (n, e, want) in [
            (25, -2, "0.25"),
            (3500, 0, "3500"),
            (35, 2, "3500"),
            (2, -5, "2e-5"),
            (15, 5, "1.5e6"),
            (-1, -4, "-0.0001"),
            (0, 3, "0"),
            (-125, -1, "-12.5"),
            (1, 6, "1e6"),
            (74, 4, "740000"),
            (99999, 0, "99999"),
        ] {
            assert_eq!(decimal(n, e), want, "{n}e{e}");
        }
    }

    #[test]
    fn ticks_step_by_one_two_five() {
        // The cases from the report: ranges that used to tick at 82.251, 3640/5281/6922.
        let (t, _) = ticks(82.251, 96.4, 3, Scale::Linear);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["85", "90", "95"]);
        let (t, _) = ticks(3640.0, 6922.0, 4, Scale::Linear);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["4000", "5000", "6000"]);
        let (t, _) = ticks(0.1, 0.3, 4, Scale::Linear);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0.1", "0.15", "0.2", "0.25", "0.3"]);
        // Generations 1..8 on an integer axis never tick at 1.75.
        let (t, _) = ticks(1.0, 3.0, 8, Scale::Integer);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["1", "2", "3"]);
        // A log axis over five decades ticks at powers of ten.
        let (t, _) = ticks(-4.3, 0.75, 5, Scale::Log10);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0.0001", "0.001", "0.01", "0.1", "1"]);
        assert!(t.iter().all(|(v, _)| v.fract() == 0.0));
        // Less than a decade: 1-2-5 ticks on the values, placed at their log10.
        let (t, _) = ticks(2f64.log10(), 9f64.log10(), 4, Scale::Log10);
        assert_eq!(t.first().map(|p| p.1.as_str()), Some("2"));
        assert!(ticks(f64::NAN, 1.0, 4, Scale::Linear).0.is_empty());
        assert!(ticks(1.0, 1.0, 4, Scale::Linear).0.is_empty());
        // A narrow window on a large value counts from an offset.
        let (t, off) = ticks(807_067.627, 807_067.634, 4, Scale::Linear);
        assert_eq!(off.as_deref(), Some("807067.628"));
        assert_eq!(t[0].1, "0");
        assert!(t.iter().all(|(_, l)| l.len() <= MAX_TICK_CHARS));
    }

    #[test]
    fn bins_follow_the_sample_size() {
        let ten: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(bin_count(&ten, 0.0, 9.0), 5); // Sturges: ⌈log₂ 10⌉ + 1
        let flat = vec![1.0; 100];
        assert_eq!(bin_count(&flat, 0.99, 1.01), 8); // zero IQR: Sturges
        assert_eq!(bin_count(&[], 0.0, 1.0), 1);
    }

    #[test]
    fn pair_plots_keep_labels_apart() {
        // Four parameters of very different scales, a few samples: the report's "0.2510.04".
        let cols: Vec<Vec<f64>> = vec![
            (0..10).map(|i| 0.251 + 0.001 * f64::from(i)).collect(),
            (0..10).map(|i| 0.04 + 0.02 * f64::from(i)).collect(),
            (0..10).map(|i| 3640.0 + 364.0 * f64::from(i)).collect(),
            (0..10).map(|i| -2e-6 * f64::from(i)).collect(),
        ];
        let names: Vec<String> = ["beta", "gamma", "N", "tiny"].map(String::from).to_vec();
        let s = pair_plot("pairs", &names, &cols, Some(&[0.255, 0.1, 5000.0, -1e-5]));
        assert_eq!(layout_problems(&s), Vec::<String>::new());
        assert!(s.matches("class=\"tick\"").count() >= 8);
        let c = line_chart(
            "tolerance",
            "generation",
            "epsilon",
            &[Series {
                label: "tolerance".into(),
                x: (1..=8).map(f64::from).collect(),
                y: (1..=8).map(|i| 10f64.powi(-i)).collect(),
            }],
            true,
        );
        assert_eq!(layout_problems(&c), Vec::<String>::new());
        assert!(!c.contains(">1.75<") && c.contains(">1e-6<") && c.contains(">8<"));
    }

    #[test]
    #[allow(clippy::float_cmp)] // ranks and counts are exact small numbers
    fn ranks_average_ties() {
        let r = average_ranks(&[3.0, 1.0, 3.0, f64::NAN, 2.0, 3.0]);
        assert_eq!(&r[..3], &[4.0, 1.0, 4.0]); // 1, 2, 3, 3, 3: the 3s share (3 + 4 + 5) / 3
        assert!(r[3].is_nan());
        assert_eq!(&r[4..], &[2.0, 4.0]);
    }

    /// Rank histograms: two halves at different levels (a chain that has not mixed) put all
    /// of the first half's ranks in the bottom bins, halves of a well-mixed sequence stay near
    /// the uniform count; the plot has one trace and one rank outline per half and parameter
    /// and passes the layout check.
    #[test]
    #[allow(clippy::float_cmp)] // counts are exact small numbers
    fn trace_rank_plot_shows_mixing() {
        // a well-mixed sequence: a fixed pseudo-random permutation of 0..400; a drifting one
        let mixed: Vec<f64> = (0..400u32).map(|i| f64::from((i * 7919) % 400)).collect();
        let drift: Vec<f64> = (0..400u32)
            .map(|i| f64::from(i / 200) * 10.0 + f64::from(i % 7))
            .collect();
        let (c, e) = rank_histograms(&drift, 2);
        assert_eq!(e, 10.0);
        assert_eq!(c[0][..10].iter().sum::<f64>(), 200.0);
        assert!(c[0][10..].iter().all(|&k| k == 0.0) && c[1][..10].iter().all(|&k| k == 0.0));
        let (c, _) = rank_histograms(&mixed, 2);
        for part in &c {
            assert_eq!(part.iter().sum::<f64>(), 200.0);
            assert!(part.iter().all(|&k| (3.0..=17.0).contains(&k)), "{part:?}");
        }
        // few draws: fewer bins, at least 5 per bin in expectation; an odd draw is dropped
        let (c, e) = rank_histograms(
            &[
                1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 0.5, 0.0,
            ],
            2,
        );
        assert_eq!((c[0].len(), e), (1, 6.0));
        let it: Vec<f64> = (1000..1400).map(f64::from).collect();
        let series = vec![
            Series {
                label: "mu".into(),
                x: it.clone(),
                y: mixed,
            },
            Series {
                label: "sigma".into(),
                x: it,
                y: drift,
            },
        ];
        let s = trace_rank("rwmh trace and rank plots", &series, 2);
        assert_eq!(layout_problems(&s), Vec::<String>::new());
        assert_eq!(s.matches("class=\"trace\"").count(), 4);
        assert_eq!(s.matches("class=\"rank\"").count(), 4);
        assert_eq!(s.matches("class=\"uniform\"").count(), 2);
        assert!(s.contains(">rank (all draws)<") && s.contains(">iteration<"));
        assert!(trace_rank("empty", &[], 2).trim_end().ends_with("</svg>"));
    }

    #[test]
    fn layout_check_finds_overlaps_and_long_labels() {
        let bad = r#"<svg width="100" height="50"><text class="tick" x="10" y="20" font-size="10">0.251</text><text x="20" y="20" font-size="10">0.04</text><text class="tick" x="60" y="40" font-size="10">0.30000000000000004</text></svg>"#;
        let p = layout_problems(bad);
        assert!(p.iter().any(|m| m.contains("overlap")), "{p:?}");
        assert!(p.iter().any(|m| m.contains("short decimal")), "{p:?}");
        assert!(p.iter().any(|m| m.contains("leaves")), "{p:?}");
        assert!(short_decimal("2.5e-7") && short_decimal("-12.5") && !short_decimal("0.10"));
    }
}
