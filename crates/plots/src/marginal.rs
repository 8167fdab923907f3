//! One parameter's posterior: a density histogram, its kernel density estimate, the prior's
//! density and the true value.

use core::fmt::Write as _;

use crate::axes::{Frame, Scale, TickLabels, esc, finite_range, header, text_width};
use crate::error::{self, PlotError};
use crate::stats::{bin_count, kde, kde_within, resample_indices};

/// A marginal posterior plot of one parameter (480 × 340 px): a histogram of the draws on the
/// density scale (bins by Freedman–Diaconis, Sturges for fewer than 30 draws or a zero
/// interquartile range, at most 60), a Gaussian kernel density estimate with Silverman's
/// robust bandwidth `0.9·min(sd, IQR/1.34)·n^{-1/5}` (solid blue; a few far-away draws do not
/// flatten it), optionally the prior's density estimated from prior draws, reflected at the
/// smallest and largest prior draw so that a bounded prior is not halved at its bound
/// (dashed grey), and the true value (dashed red vertical line).
///
/// Weighted draws (importance or SMC weights) are first turned into at most 5 000 unweighted
/// ones by deterministic systematic resampling ([`resample`](crate::resample)).
///
/// With [`Marginal::legend`] the picture is 20 px taller and a legend under the axes names
/// what is drawn: the histogram, the KDE, the prior and the true value (the last two only
/// when given).
///
/// ```
/// let draws: Vec<f64> = (0..500).map(|i| f64::from(i % 50) / 10.0).collect();
/// let svg = dpinfer_plots::Marginal::new("mu", &draws).truth(2.5).svg()?;
/// assert!(svg.contains("class=\"truth\""));
/// assert!(dpinfer_plots::layout_problems(&svg).is_empty());
/// # Ok::<(), dpinfer_plots::PlotError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Marginal<'a> {
    name: &'a str,
    samples: &'a [f64],
    weights: Option<&'a [f64]>,
    truth: Option<f64>,
    prior: Option<&'a [f64]>,
    title: Option<String>,
    legend: bool,
}

impl<'a> Marginal<'a> {
    /// The marginal of parameter `name` from its posterior draws; the x axis is labelled `name`
    /// and the title reads `posterior of {name}` unless [`Marginal::title`] sets one.
    #[must_use]
    pub fn new(name: &'a str, samples: &'a [f64]) -> Self {
        Self {
            name,
            samples,
            weights: None,
            truth: None,
            prior: None,
            title: None,
            legend: false,
        }
    }

    /// Weights of the draws (one per draw, finite, non-negative, not all zero; need not be
    /// normalised).
    #[must_use]
    pub fn weights(mut self, weights: &'a [f64]) -> Self {
        self.weights = Some(weights);
        self
    }

    /// The true value, drawn as a dashed red line.
    #[must_use]
    pub fn truth(mut self, truth: f64) -> Self {
        self.truth = Some(truth);
        self
    }

    /// Draws of this parameter under the prior, drawn as a dashed grey density: a kernel
    /// density estimate reflected at the smallest and largest draw and zero beyond them, so
    /// that a prior on a bounded support (a uniform, a Dirichlet marginal) keeps its height
    /// at the bound.
    #[must_use]
    pub fn prior(mut self, draws: &'a [f64]) -> Self {
        self.prior = Some(draws);
        self
    }

    /// A legend under the axes naming the histogram, the KDE and (when drawn) the prior and
    /// the true value; the picture grows by 20 px. Off by default (the picture
    /// is then byte for byte the one without this option).
    #[must_use]
    pub fn legend(mut self) -> Self {
        self.legend = true;
        self
    }

    /// The title above the plot.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The plot as a standalone SVG document.
    ///
    /// # Errors
    /// [`PlotError::Empty`] without draws (or with an empty prior), [`PlotError::NonFinite`]
    /// or [`PlotError::TooLarge`] for a draw, prior draw or true value that is not finite or
    /// beyond ±[`MAX_ABS`](crate::MAX_ABS), and the weight errors of
    /// [`resample`](crate::resample).
    pub fn svg(&self) -> Result<String, PlotError> {
        error::finite_values("samples", self.samples)?;
        if let Some(t) = self.truth {
            error::finite_values("truth", &[t])?;
        }
        if let Some(p) = self.prior {
            error::finite_values("prior draws", p)?;
        }
        let resampled: Vec<f64>;
        let vals = match self.weights {
            None => self.samples,
            Some(w) => {
                error::weights(self.samples.len(), w)?;
                resampled = resample_indices(w)
                    .into_iter()
                    .map(|i| self.samples[i])
                    .collect();
                &resampled
            }
        };
        let title = match &self.title {
            Some(t) => t.clone(),
            None => format!("posterior of {}", self.name),
        };
        let height = if self.legend {
            340.0 + LEGEND_HEIGHT
        } else {
            340.0
        };
        let mut out = header(480.0, height, &title);
        if self.legend {
            legend_into(
                &mut out,
                480.0,
                height - 8.0,
                self.prior.is_some(),
                self.truth.is_some(),
            );
        }
        histogram_into(
            &mut out,
            (72.0, 35.0, 380.0, 250.0),
            vals,
            self.truth,
            self.prior,
            self.name,
            TickLabels::FULL,
            0.02,
        );
        out.push_str("</svg>\n");
        Ok(out)
    }
}

/// The extra height of a [`Marginal`] with a legend.
const LEGEND_HEIGHT: f64 = 20.0;

/// One centred legend line at baseline `y`: a swatch and a name for the histogram, the KDE
/// and, when drawn, the prior and the true value, in the styles [`histogram_into`] uses.
pub(crate) fn legend_into(out: &mut String, width: f64, y: f64, prior: bool, truth: bool) {
    const SIZE: f64 = 10.0;
    const SWATCH: f64 = 16.0;
    const GAP: f64 = 4.0;
    const SPACE: f64 = 14.0;
    let mut items = vec![
        (
            "histogram",
            r##"fill="#9ecae1" stroke="#6baed6" stroke-width="0.5""##,
            true,
        ),
        (
            "KDE of the posterior",
            r##"stroke="#08519c" stroke-width="1.5""##,
            false,
        ),
    ];
    if prior {
        items.push((
            "prior",
            r##"stroke="#777" stroke-width="1.2" stroke-dasharray="5,3""##,
            false,
        ));
    }
    if truth {
        items.push((
            "true value",
            r##"stroke="#d62728" stroke-width="1.5" stroke-dasharray="4,3""##,
            false,
        ));
    }
    #[allow(clippy::cast_precision_loss)]
    let total: f64 = items
        .iter()
        .map(|(label, ..)| SWATCH + GAP + text_width(label, SIZE))
        .sum::<f64>()
        + SPACE * (items.len() - 1) as f64;
    let mut x = ((width - total) / 2.0).max(4.0);
    for (label, style, bar) in items {
        let mid = y - 0.3 * SIZE;
        if bar {
            let _ = write!(
                out,
                r#"<rect class="legend" x="{:.2}" y="{:.2}" width="{SWATCH:.2}" height="8.00" {style}/>"#,
                x,
                mid - 4.0
            );
        } else {
            let _ = write!(
                out,
                r#"<line class="legend" x1="{x:.2}" y1="{mid:.2}" x2="{:.2}" y2="{mid:.2}" {style}/>"#,
                x + SWATCH
            );
        }
        x += SWATCH + GAP;
        let _ = write!(
            out,
            r#"<text x="{x:.2}" y="{y:.2}" font-size="{SIZE:.0}">{}</text>"#,
            esc(label)
        );
        x += text_width(label, SIZE) + SPACE;
    }
}

/// Draws a density histogram of the finite `vals` with its KDE, an optional prior KDE (dashed
/// grey, reflected at the prior draws' range) and an optional true value (dashed red) into
/// the box `(x, y, width, height)`, the x range padded by `pad` of its span on each side.
#[allow(clippy::too_many_arguments)] // the marginal's and the pair plot's one drawing routine
pub(crate) fn histogram_into(
    out: &mut String,
    frame_box: (f64, f64, f64, f64),
    vals: &[f64],
    truth: Option<f64>,
    prior: Option<&[f64]>,
    xlabel: &str,
    show: TickLabels,
    pad: f64,
) {
    let vals: Vec<f64> = vals.iter().copied().filter(|v| v.is_finite()).collect();
    let Some((mut lo, mut hi)) = finite_range(vals.iter().copied().chain(truth)) else {
        return;
    };
    let pad = pad * (hi - lo);
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
        kde_within(&p, &grid, finite_range(p.iter().copied()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout_problems;

    #[test]
    fn histogram_is_wellformed_and_has_bars() {
        let v: Vec<f64> = (0..1000).map(|i| f64::from(i).sin()).collect();
        let prior = [0.0, 0.5, -0.5, 0.9];
        let s = Marginal::new("x", &v)
            .title("t <&>")
            .truth(0.2)
            .prior(&prior)
            .svg()
            .unwrap();
        assert!(s.contains("class=\"prior\""));
        assert!(s.starts_with("<?xml") && s.trim_end().ends_with("</svg>"));
        // Freedman–Diaconis for n = 1000 values of sin: range ≈ 2.08, IQR ≈ 1.41, h ≈ 0.28.
        assert_eq!(s.matches("class=\"bar\"").count(), 8);
        assert!(layout_problems(&s).is_empty(), "{:?}", layout_problems(&s));
        assert!(s.contains("class=\"kde\"") && s.contains("class=\"truth\""));
        assert!(s.contains("t &lt;&amp;&gt;"));
        // the default title names the parameter
        let s = Marginal::new("mu", &v).svg().unwrap();
        assert!(s.contains(">posterior of mu<") && !s.contains("class=\"truth\""));
    }

    /// Issue 32: the marginal had no legend, so the KDE, the prior and the true value had to
    /// be guessed. With `legend()` each drawn element is named under the axes (and only the
    /// drawn ones), the layout check passes, and without it the picture is unchanged.
    #[test]
    fn the_legend_names_what_is_drawn_and_only_that() {
        let v: Vec<f64> = (0..300).map(|i| f64::from(i).sin()).collect();
        let prior = [0.0, 0.5, -0.5, 0.9];
        let full = Marginal::new("x", &v)
            .truth(0.2)
            .prior(&prior)
            .legend()
            .svg()
            .unwrap();
        for name in [
            ">histogram<",
            ">KDE of the posterior<",
            ">prior<",
            ">true value<",
        ] {
            assert!(full.contains(name), "{name}: {full}");
        }
        assert!(full.contains(r#"height="360""#));
        assert_eq!(full.matches(r#"class="legend""#).count(), 4);
        assert_eq!(layout_problems(&full), Vec::new());
        let bare = Marginal::new("x", &v).legend().svg().unwrap();
        assert!(bare.contains(">KDE of the posterior<"));
        assert!(!bare.contains(">prior<") && !bare.contains(">true value<"));
        assert_eq!(layout_problems(&bare), Vec::new());
        let plain = Marginal::new("x", &v).truth(0.2).svg().unwrap();
        assert!(!plain.contains("class=\"legend\"") && plain.contains(r#"height="340""#));
    }

    /// Weighted draws plot like their resampled copy; zero-weight draws never show.
    #[test]
    fn weights_resample_before_binning() {
        let v: Vec<f64> = (0..200).map(f64::from).collect();
        let w: Vec<f64> = (0..200).map(|i| if i < 100 { 1.0 } else { 0.0 }).collect();
        let weighted = Marginal::new("x", &v).weights(&w).svg().unwrap();
        let r = crate::resample(&v, &w).unwrap();
        assert!(r.iter().all(|&x| x < 100.0));
        assert_eq!(weighted, Marginal::new("x", &r).svg().unwrap());
    }

    /// One value, or values all equal, get a window around them; next to 0 (where 5 % of
    /// the value underflows) the window is ±0.5 (found by the hostile-input proptest).
    #[test]
    fn a_single_value_gets_a_window() {
        for v in [5e-324, 0.0, -2.5, 1e300, 1e-250] {
            let s = Marginal::new("x", &[v, v, v]).truth(v).svg().unwrap();
            assert!(!s.contains("NaN") && !s.contains("inf"), "{v}: {s}");
            assert_eq!(layout_problems(&s), Vec::new(), "{v}");
        }
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let v = [1.0, 2.0, 3.0];
        let empty = Marginal::new("x", &[]).svg();
        assert_eq!(
            empty,
            Err(PlotError::Empty {
                what: "samples".into()
            })
        );
        let nan = [1.0, f64::NAN];
        assert_eq!(
            Marginal::new("x", &nan).svg(),
            Err(PlotError::NonFinite {
                what: "samples".into(),
                index: 1
            })
        );
        assert!(matches!(
            Marginal::new("x", &v).truth(f64::INFINITY).svg(),
            Err(PlotError::NonFinite { .. })
        ));
        assert!(matches!(
            Marginal::new("x", &v).prior(&[]).svg(),
            Err(PlotError::Empty { .. })
        ));
        assert_eq!(
            Marginal::new("x", &v).weights(&[0.0; 3]).svg(),
            Err(PlotError::ZeroWeights)
        );
        assert!(matches!(
            Marginal::new("x", &[1e301]).svg(),
            Err(PlotError::TooLarge { .. })
        ));
    }
}
