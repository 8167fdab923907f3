//! Drawing primitives shared by every plot: the document head, escaping, data ranges, 1-2-5
//! ticks with exact decimal labels, and the frame that maps data to pixels and draws axes.

use core::fmt::Write as _;

pub(crate) const PALETTE: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
];

/// `s` as XML text: markup characters escaped, characters XML 1.0 forbids (C0 controls other
/// than tab, line feed and carriage return; U+FFFE, U+FFFF) dropped.
pub(crate) fn esc(s: &str) -> String {
    let s: String = s
        .chars()
        .filter(|&c| {
            (c >= ' ' || matches!(c, '\t' | '\n' | '\r')) && !matches!(c, '\u{FFFE}' | '\u{FFFF}')
        })
        .collect();
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The range of the finite values (`None` without any), widened around a single value.
pub(crate) fn finite_range(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
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
        // One value: a window of ±5 % around it (±0.5 around 0, and around values so close to
        // 0 that 5 % of them would underflow), so ticks stay readable.
        let pad = if lo.abs() < 1e-200 {
            0.5
        } else {
            0.05 * lo.abs()
        };
        return Some((lo - pad, hi + pad));
    }
    Some((lo, hi))
}

/// Approximate advance width of one character of a sans-serif label, in em (DejaVu Sans
/// digits are 0.636 em wide; the layout check in the tests uses the same figure).
pub const CHAR_EM: f64 = 0.64;

/// Which kind of tick labels an axis gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
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
pub(crate) fn ticks(
    lo: f64,
    hi: f64,
    target: usize,
    scale: Scale,
) -> (Vec<(f64, String)>, Option<String>) {
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
    // A 1-2-5 step for `target` ticks can leave a single tick inside a narrow range; ask for
    // more until there are two (an axis with one tick shows no scale).
    let first = linear_ticks(lo, hi, target, scale);
    if first.0.len() >= 2 {
        return first;
    }
    (target + 1..=target + 6)
        .map(|t| linear_ticks(lo, hi, t, scale))
        .find(|t| t.0.len() >= 2)
        .unwrap_or(first)
}

/// The 1-2-5 ticks of [`ticks`] on a linear or integer axis, for exactly `target`.
fn linear_ticks(
    lo: f64,
    hi: f64,
    target: usize,
    scale: Scale,
) -> (Vec<(f64, String)>, Option<String>) {
    #[allow(clippy::cast_precision_loss)]
    let raw = (hi - lo) / target.max(1) as f64;
    if !(raw.is_finite() && raw > 0.0) {
        return (Vec::new(), None);
    }
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
    // The range guard keeps every label's integer `k·m` (and `(k - k0)·m`) far from overflow.
    if k1 < k0
        || k1.saturating_sub(k0) > 1000
        || k0.saturating_abs().max(k1.saturating_abs()) > i64::MAX / 100
    {
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
pub(crate) fn decimal(n: i64, e: i32) -> String {
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
pub(crate) fn text_width(text: &str, size: f64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let n = text.chars().count() as f64;
    n * CHAR_EM * size
}

/// Which tick labels an axis shows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TickLabels {
    /// Label the x ticks.
    pub(crate) x: bool,
    /// Label the y ticks on the left.
    pub(crate) y: bool,
    /// Label the y ticks on the right edge instead (diagonal panels of a pair plot).
    pub(crate) y_right: bool,
    /// Horizontal room outside the frame that an x label may use (px).
    pub(crate) margin: f64,
}

impl TickLabels {
    /// Both axes labelled on the outside, with 20 px of room beside the frame: a plot of
    /// its own.
    pub(crate) const FULL: Self = Self {
        x: true,
        y: true,
        y_right: false,
        margin: 20.0,
    };
}

/// A plotting frame: maps data coordinates to pixels inside a box.
pub(crate) struct Frame {
    pub(crate) x0: f64,
    pub(crate) y0: f64,
    pub(crate) w: f64,
    pub(crate) h: f64,
    pub(crate) xr: (f64, f64),
    pub(crate) yr: (f64, f64),
    pub(crate) xs: Scale,
    pub(crate) ys: Scale,
}

impl Frame {
    pub(crate) fn px(&self, x: f64) -> f64 {
        self.x0 + (x - self.xr.0) / (self.xr.1 - self.xr.0) * self.w
    }
    pub(crate) fn py(&self, y: f64) -> f64 {
        self.y0 + self.h - (y - self.yr.0) / (self.yr.1 - self.yr.0) * self.h
    }
    /// SVG path data through the points (x, y) of one curve.
    pub(crate) fn polyline(&self, xs: &[f64], ys: &[f64]) -> String {
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
    pub(crate) fn broken_polyline(&self, xs: &[f64], ys: &[f64], max_points: usize) -> String {
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
    pub(crate) fn axes(&self, out: &mut String, xlabel: &str, ylabel: &str, show: TickLabels) {
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
pub(crate) fn all_integers(vals: impl Iterator<Item = f64>) -> bool {
    let mut any = false;
    for v in vals.filter(|v| v.is_finite()) {
        if v.fract() != 0.0 {
            return false;
        }
        any = true;
    }
    any
}

/// The document head with a bold title, whose size shrinks (down to 8 px) so that a long title
/// fits the width.
pub(crate) fn header(w: f64, h: f64, title: &str) -> String {
    // Bold text is about 10 % wider than the layout's regular estimate.
    let size = ((w - 16.0) / (1.1 * text_width(title, 1.0).max(1.0))).clamp(8.0, 14.0);
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="{:.1}" y="20" font-size="{size:.1}" text-anchor="middle" font-weight="bold">{}</text>"#,
        w / 2.0,
        esc(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Issue 32: a small panel asks for 2 ticks, and a 1-2-5 step of 0.005 on [0.251, 0.259]
    /// left one tick (0.255), an axis without a scale; asking for more gives 0.252 … 0.258.
    #[test]
    fn a_narrow_range_gets_at_least_two_ticks() {
        let (t, _) = ticks(0.251, 0.259, 2, Scale::Linear);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0.252", "0.254", "0.256", "0.258"]);
        // an integer axis that cannot hold two integers keeps its one tick
        assert_eq!(ticks(1.0, 1.5, 2, Scale::Integer).0.len(), 1);
    }

    /// Spans that overflow, or windows so narrow that the tick integers would overflow, give
    /// no ticks instead of a panic.
    #[test]
    fn extreme_ranges_give_no_ticks() {
        assert!(ticks(-f64::MAX, f64::MAX, 4, Scale::Linear).0.is_empty());
        assert!(ticks(1e300, 1e300 + 1e285, 4, Scale::Linear).0.len() <= 1001);
        assert!(ticks(0.0, f64::MIN_POSITIVE, 4, Scale::Linear).0.len() <= 1001);
        assert!(ticks(-1e18, -1e18 + 1.0, 8, Scale::Integer).0.is_empty());
    }

    #[test]
    fn text_is_escaped_and_forbidden_characters_dropped() {
        assert_eq!(
            esc("a<&>\"b\u{0}\u{1b}\tc\u{FFFF}"),
            "a&lt;&amp;&gt;&quot;b\tc"
        );
    }
}
