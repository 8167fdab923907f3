//! The layout check: estimated text boxes of a plot, and what is wrong with them.

use crate::axes::text_width;

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

/// An attribute of a tag, for the other modules' tests (empty when missing).
#[cfg(test)]
pub(crate) fn tests_attr(tag: &str, name: &str) -> String {
    attr(&format!(" {tag}"), name).unwrap_or_default()
}

/// The estimated boxes of every `<text>` element of a plot made by this crate, using the
/// same character width as the layout ([`CHAR_EM`](crate::CHAR_EM)), with rotated labels turned upright.
fn text_boxes(svg: &str) -> Vec<TextBox> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find("<text ") {
        rest = &rest[at..];
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..close];
        let Some(len) = rest[close + 1..].find("</text>") else {
            break;
        };
        let end = close + 1 + len;
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

/// A layout problem of a plot, found by [`layout_problems`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Problem {
    /// A text's estimated box reaches outside the picture.
    LeavesPicture {
        /// The text.
        text: String,
        /// The picture's width (px; infinite when the document does not say).
        width: f64,
        /// The picture's height (px).
        height: f64,
    },
    /// A tick label is not a short decimal (more than 8 characters, a trailing zero after the
    /// point, or rounding noise such as `0.30000000000000004`).
    LongTickLabel {
        /// The label.
        label: String,
    },
    /// Two texts' estimated boxes overlap.
    Overlap {
        /// The first text (in document order).
        first: String,
        /// The second text.
        second: String,
    },
    /// A plotted point (a scatter dot or a true-value dot) is not wholly inside any panel's
    /// frame: it is clipped at the edge or drawn outside the axes.
    PointOutsidePanel {
        /// The point's centre (px).
        x: f64,
        /// The point's centre (px).
        y: f64,
    },
    /// A line chart's series runs along the top or bottom edge of its frame, where the frame
    /// hides it (a budget line at the largest value).
    SeriesOnFrame {
        /// The series' legend label.
        label: String,
    },
}

impl core::fmt::Display for Problem {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::LeavesPicture {
                text,
                width,
                height,
            } => write!(f, "text {text:?} leaves the {width}×{height} picture"),
            Self::LongTickLabel { label } => {
                write!(f, "tick label {label:?} is not a short decimal")
            }
            Self::Overlap { first, second } => {
                write!(f, "texts {first:?} and {second:?} overlap")
            }
            Self::PointOutsidePanel { x, y } => {
                write!(f, "the point at ({x}, {y}) is not inside a panel")
            }
            Self::SeriesOnFrame { label } => {
                write!(f, "series {label:?} runs along the frame")
            }
        }
    }
}

/// The start tags (up to `>`) of every `<{name} ` element.
fn tags<'s>(svg: &'s str, name: &str) -> Vec<&'s str> {
    let open = format!("<{name} ");
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find(&open) {
        rest = &rest[at..];
        let end = rest.find('>').unwrap_or(rest.len());
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
    out
}

/// The panels' frames `(x0, y0, x1, y1)`: the unfilled dark rectangles the axes draw.
fn frames(svg: &str) -> Vec<(f64, f64, f64, f64)> {
    tags(svg, "rect")
        .into_iter()
        .filter(|t| t.contains(r##"fill="none" stroke="#444""##))
        .filter_map(|t| {
            let (x, y) = (num_attr(t, "x")?, num_attr(t, "y")?);
            Some((x, y, x + num_attr(t, "width")?, y + num_attr(t, "height")?))
        })
        .collect()
}

/// Points outside every frame and series along a frame's top or bottom edge.
fn mark_problems(svg: &str, problems: &mut Vec<Problem>) {
    let frames = frames(svg);
    for t in tags(svg, "circle") {
        if !(t.contains(r#"class="pt""#) || t.contains(r#"class="truth""#)) {
            continue;
        }
        let (Some(x), Some(y)) = (num_attr(t, "cx"), num_attr(t, "cy")) else {
            continue;
        };
        let r = num_attr(t, "r").unwrap_or(0.0);
        let inside = frames.iter().any(|&(x0, y0, x1, y1)| {
            x - r >= x0 - 0.05 && x + r <= x1 + 0.05 && y - r >= y0 - 0.05 && y + r <= y1 + 0.05
        });
        if !inside {
            problems.push(Problem::PointOutsidePanel { x, y });
        }
    }
    for t in tags(svg, "path") {
        if !t.contains(r#"class="series""#) {
            continue;
        }
        let Some(d) = attr(t, "d") else { continue };
        let on_edge = d.split_whitespace().any(|v| {
            let Some((x, y)) = v
                .trim_start_matches(['M', 'L'])
                .split_once(',')
                .and_then(|(x, y)| Some((x.parse::<f64>().ok()?, y.parse::<f64>().ok()?)))
            else {
                return false;
            };
            frames.iter().any(|&(x0, y0, x1, y1)| {
                (x0..=x1).contains(&x) && ((y - y0).abs() < 1.0 || (y - y1).abs() < 1.0)
            })
        });
        if on_edge {
            problems.push(Problem::SeriesOnFrame {
                label: attr(t, "data-label").unwrap_or_default(),
            });
        }
    }
}

/// Layout problems of a plot made by this crate: text boxes (estimated with the layout's own
/// character width, [`CHAR_EM`](crate::CHAR_EM)) that overlap or leave the picture, and tick labels that are
/// not short decimals, scatter and true-value dots not wholly inside a panel's frame, and
/// line-chart series that run along a frame's top or bottom edge. Empty for a good plot; every plot function is tested with it, and the
/// CLI's end-to-end tests run it on every plot of every example. Any string is accepted (an
/// SVG from elsewhere is read on a best-effort basis; malformed markup finds no problem
/// rather than an error).
#[must_use]
pub fn layout_problems(svg: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let head = svg.find("<svg").map_or("", |at| {
        let rest = &svg[at..];
        &rest[..rest.find('>').unwrap_or(rest.len())]
    });
    let (w, h) = (
        num_attr(head, "width").unwrap_or(f64::INFINITY),
        num_attr(head, "height").unwrap_or(f64::INFINITY),
    );
    mark_problems(svg, &mut problems);
    let boxes = text_boxes(svg);
    for (i, a) in boxes.iter().enumerate() {
        if a.0 < -0.5 || a.1 < -0.5 || a.2 > w + 0.5 || a.3 > h + 0.5 {
            problems.push(Problem::LeavesPicture {
                text: a.4.clone(),
                width: w,
                height: h,
            });
        }
        if a.5 && !short_decimal(&a.4) {
            problems.push(Problem::LongTickLabel { label: a.4.clone() });
        }
        for b in &boxes[i + 1..] {
            let overlap_x = a.2.min(b.2) - a.0.max(b.0);
            let overlap_y = a.3.min(b.3) - a.1.max(b.1);
            if overlap_x > 0.5 && overlap_y > 0.5 && !a.4.is_empty() && !b.4.is_empty() {
                problems.push(Problem::Overlap {
                    first: a.4.clone(),
                    second: b.4.clone(),
                });
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_check_finds_overlaps_and_long_labels() {
        let bad = r#"<svg width="100" height="50"><text class="tick" x="10" y="20" font-size="10">0.251</text><text x="20" y="20" font-size="10">0.04</text><text class="tick" x="60" y="40" font-size="10">0.30000000000000004</text></svg>"#;
        let p = layout_problems(bad);
        assert!(
            p.iter().any(|m| matches!(m, Problem::Overlap { .. })),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.to_string().contains("is not a short decimal")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.to_string() == "text \"0.30000000000000004\" leaves the 100×50 picture"),
            "{p:?}"
        );
        assert!(short_decimal("2.5e-7") && short_decimal("-12.5") && !short_decimal("0.10"));
    }

    /// Issue 32: points clipped at a panel's edge and a budget line drawn on the frame were
    /// not found by the check; now they are, and a point inside or a series off the edges is
    /// not reported.
    #[test]
    fn layout_check_finds_clipped_points_and_series_on_the_frame() {
        let frame = r##"<svg width="200" height="200"><rect x="10.0" y="10.0" width="100.0" height="100.0" fill="none" stroke="#444" stroke-width="1"/>"##;
        let p = layout_problems(&format!(
            r#"{frame}<circle class="pt" cx="109.0" cy="50.0" r="2"/><circle class="pt" cx="50.0" cy="50.0" r="2"/></svg>"#
        ));
        assert_eq!(p, vec![Problem::PointOutsidePanel { x: 109.0, y: 50.0 }]);
        let p = layout_problems(&format!(
            r#"{frame}<path class="series" data-label="budget" d="M10.00,10.20 L110.00,10.20 "/><path class="series" data-label="spent" d="M10.00,100.00 L110.00,20.00 "/></svg>"#
        ));
        assert_eq!(
            p,
            vec![Problem::SeriesOnFrame {
                label: "budget".into()
            }]
        );
        assert_eq!(p[0].to_string(), "series \"budget\" runs along the frame");
    }

    #[test]
    fn malformed_markup_finds_nothing() {
        for s in [
            "",
            "<text </text>",
            "<text x=\"1\">",
            "<svg width=\"é\"><text x=\"é\" y=\"1\">a</text>",
            "<text ></text><text ",
        ] {
            assert_eq!(layout_problems(s), Vec::new(), "{s}");
        }
    }
}
