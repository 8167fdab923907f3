//! `report.html`: the results folder as one page a person opens — the summary table, the
//! privacy guarantee in plain words, the warnings, the diagnostics and the plots (inlined SVG).
//! Self-contained: inline CSS, no script, no external resource; deterministic (no timestamp),
//! so both front ends write it byte for byte alike.

use std::fmt::Write as _;

use crate::results::Outcome;
use crate::summary::{self, Marginal, fmt_num, fmt_sig};

/// Rows of a diagnostics table shown in the report; the CSV beside it has them all.
const MAX_ROWS: usize = 20;

/// `s` as HTML text: markup characters escaped, characters XML forbids dropped.
fn esc(s: &str) -> String {
    let s: String = s
        .chars()
        .filter(|&c| {
            (c >= ' ' || matches!(c, '\t' | '\n')) && !matches!(c, '\u{FFFE}' | '\u{FFFF}')
        })
        .collect();
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;\
color:#222;line-height:1.4}h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;\
margin-top:1.6em}table{border-collapse:collapse;margin:.5em 0;max-width:100%}\
td,th{border:1px solid #ccc;padding:2px 8px;text-align:right;overflow-wrap:anywhere}\
th:first-child,td:first-child{text-align:left}.scroll{overflow-x:auto;max-width:100%}\
p,li,dd{overflow-wrap:anywhere}.warn{background:#fff4e5;border-left:4px solid #e67e22;\
padding:4px 8px;white-space:pre-wrap}dt{font-weight:bold;margin-top:.4em}dd{margin-left:1.5em}\
figure{margin:1em 0}svg{max-width:100%;height:auto}figcaption{color:#555;font-size:.9em}";

/// The page for `o`, `model` naming the model (as in the plot titles) and `plots` the plots
/// written, as (file name, SVG document).
pub(crate) fn html(o: &Outcome, model: &str, plots: &[(String, String)]) -> String {
    let d = o.names.len().max(1);
    let n = o.samples.len() / d;
    let title = format!("{model}: {} posterior", o.sampler);
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    let _ = writeln!(
        s,
        "<p>{n} {} samples from the {} sampler{}.</p>",
        if o.weights.is_some() {
            "weighted"
        } else {
            "posterior"
        },
        esc(&o.sampler),
        if o.reproduced {
            " (a stored release reproduced: no new noise drawn, no new privacy cost)"
        } else {
            ""
        }
    );
    s.push_str("<h2>Summary</h2>\n");
    if n == 0 {
        s.push_str("<p>No samples were released (nothing accepted).</p>\n");
    } else {
        summary_table(&mut s, &o.marginals());
    }
    s.push_str("<h2>Warnings</h2>\n");
    if o.warnings.is_empty() {
        s.push_str("<p>None.</p>\n");
    } else {
        s.push_str("<ul>\n");
        for w in &o.warnings {
            let _ = writeln!(s, "<li class=\"warn\">{}</li>", esc(w));
        }
        s.push_str("</ul>\n");
    }
    privacy(&mut s, o);
    diagnostics(&mut s, o);
    if !plots.is_empty() {
        s.push_str("<h2>Plots</h2>\n");
        for (name, svg) in plots {
            // The SVG documents lose their XML declaration to sit inside the page.
            let body = svg.find("<svg").map_or(svg.as_str(), |at| &svg[at..]);
            let _ = writeln!(
                s,
                "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
                body.trim_end(),
                esc(name)
            );
        }
    }
    s.push_str("</body>\n</html>\n");
    s
}

fn summary_table(s: &mut String, m: &[Marginal]) {
    s.push_str(
        "<div class=\"scroll\"><table>\n<tr><th>parameter</th><th>mean</th><th>sd</th>\
         <th>2.5 %</th><th>25 %</th><th>50 %</th><th>75 %</th><th>97.5 %</th><th>true</th></tr>\n",
    );
    for r in m {
        let _ = write!(s, "<tr><td>{}</td>", esc(&r.name));
        for v in [r.mean, r.sd].iter().chain(&r.quantiles) {
            let _ = write!(s, "<td>{}</td>", esc(&fmt_num(*v, 5)));
        }
        let _ = writeln!(
            s,
            "<td>{}</td></tr>",
            r.truth
                .map_or_else(|| "-".to_string(), |t| esc(&fmt_num(t, 5)))
        );
    }
    s.push_str("</table></div>\n");
}

/// The privacy section: the guarantee in one sentence, what ε and δ mean, and the ledger.
fn privacy(s: &mut String, o: &Outcome) {
    let l = &o.ledger;
    s.push_str("<h2>Privacy</h2>\n");
    if l.epsilon.is_finite() {
        let eps = summary::fmt_up(l.epsilon);
        let delta = summary::fmt_up(l.delta);
        let _ = writeln!(
            s,
            "<p><strong>The claim:</strong> this release is (ε = {eps}, δ = {delta})-differentially \
             private, neighbouring datasets being: {}.</p>",
            esc(&l.neighbouring)
        );
        let _ = writeln!(
            s,
            "<p><strong>What it means:</strong> for any one person, whether their record is in \
             the data or not changes the probability of any result of this run by at most a \
             factor e<sup>ε</sup> ≈ {}, except with probability at most δ = {delta}.</p>",
            esc(&fmt_sig(l.epsilon.exp(), 3))
        );
    } else {
        s.push_str(
            "<p><strong>The claim:</strong> none — this run is <strong>not differentially \
             private</strong> (ε = ∞): its results may reveal individual records.</p>\n",
        );
    }
    s.push_str("<dl>\n");
    for (k, v) in [
        ("accountant", &l.accountant),
        ("conversion", &l.conversion),
        ("neighbouring relation", &l.neighbouring),
        ("mechanism", &l.mechanism),
        ("noise", &l.noise),
    ] {
        let _ = writeln!(s, "<dt>{k}</dt><dd>{}</dd>", esc(v));
    }
    if let Some(c) = &l.claim {
        let _ = writeln!(
            s,
            "<dt>the library's claim</dt><dd>{}</dd>",
            esc(&super::claim_rounded_up(c))
        );
    }
    s.push_str("</dl>\n");
}

/// The sampler's facts and the diagnostics tables (the first [`MAX_ROWS`] rows of each).
fn diagnostics(s: &mut String, o: &Outcome) {
    if o.facts.is_empty() && o.diagnostics.is_empty() {
        return;
    }
    s.push_str("<h2>Diagnostics</h2>\n");
    if !o.facts.is_empty() {
        s.push_str("<div class=\"scroll\"><table>\n<tr><th>fact</th><th>value</th></tr>\n");
        for (k, v) in &o.facts {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(k),
                esc(&fmt_sig(*v, 6))
            );
        }
        s.push_str("</table></div>\n");
    }
    for t in &o.diagnostics {
        let _ = writeln!(
            s,
            "<h3>{}.csv</h3>\n<div class=\"scroll\"><table>\n<tr>{}</tr>",
            esc(&t.stem),
            t.columns
                .iter()
                .map(|c| format!("<th>{}</th>", esc(c)))
                .collect::<String>()
        );
        for r in t.rows.iter().take(MAX_ROWS) {
            let _ = writeln!(
                s,
                "<tr>{}</tr>",
                r.iter()
                    .map(|v| format!("<td>{}</td>", esc(&fmt_sig(*v, 6))))
                    .collect::<String>()
            );
        }
        s.push_str("</table></div>\n");
        if t.rows.len() > MAX_ROWS {
            let _ = writeln!(
                s,
                "<p>The first {MAX_ROWS} of {} rows; all are in {}.csv.</p>",
                t.rows.len(),
                esc(&t.stem)
            );
        }
    }
}
