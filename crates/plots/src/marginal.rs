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
/// flatten it), optionally the prior (dashed grey) — its exact density
/// ([`Marginal::prior_density`]), or where the prior has no closed-form marginal an estimate
/// from prior draws ([`Marginal::prior`]) — and the true value (dashed red vertical line).
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
    density: Option<Density<'a>>,
    title: Option<String>,
    legend: bool,
}

/// A borrowed prior density function (its own type so that [`Marginal`] stays `Debug`).
#[derive(Clone, Copy)]
pub(crate) struct Density<'a>(pub(crate) &'a dyn Fn(f64) -> f64);

impl core::fmt::Debug for Density<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Density(..)")
    }
}

/// Where a marginal plot's prior curve comes from; the legend names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PriorSource {
    /// The prior's exact marginal density ([`Marginal::prior_density`]): "prior density".
    Density,
    /// A reflected kernel density estimate of prior draws ([`Marginal::prior`]), for a prior
    /// without a closed-form marginal: "prior (KDE of draws)".
    KdeOfDraws,
}

impl PriorSource {
    /// The legend's words.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Density => "prior density",
            Self::KdeOfDraws => "prior (KDE of draws)",
        }
    }
}

/// The prior curve of a [`Marginal`] in data units, as drawn: one polyline of
/// `(x, density)` points per piece of the support inside the panel. A density is evaluated
/// on the panel's grid of 121 points; where it turns from zero to positive (or back) between
/// two grid points, the support's edge is found by bisection to the last bit and the piece
/// begins (ends) with a vertical step `(e, 0)`–`(e, p(e))` there, so a uniform is a flat line
/// with steps at its bounds and a Dirichlet(1) coordinate reaches its full height at 0.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PriorCurve {
    /// Density or KDE of draws.
    pub source: PriorSource,
    /// The drawn pieces.
    pub pieces: Vec<Vec<(f64, f64)>>,
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
            density: None,
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

    /// The prior's exact marginal density of this parameter (a density, not its log: `0`
    /// outside the support, `+∞` allowed at a singular point, never NaN or negative), drawn
    /// as a dashed grey curve with its support's edges as vertical steps (see
    /// [`PriorCurve`]) and named "prior density" in the legend. It replaces the estimate
    /// from [`Marginal::prior`] draws when both are given. A density far above the
    /// posterior's (more than 4 times the tallest bar or KDE value) does not squash the
    /// posterior: the y axis stops there and the curve is cut at the top of the frame.
    #[must_use]
    pub fn prior_density(mut self, density: &'a dyn Fn(f64) -> f64) -> Self {
        self.density = Some(Density(density));
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
        let curve = self.curve(vals)?;
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
                curve.as_ref().map(|c| c.source),
                self.truth.is_some(),
            );
        }
        histogram_into(
            &mut out,
            (72.0, 35.0, 380.0, 250.0),
            vals,
            self.truth,
            curve.as_ref(),
            self.name,
            TickLabels::FULL,
            PAD,
        );
        out.push_str("</svg>\n");
        Ok(out)
    }

    /// The prior curve as [`Marginal::svg`] draws it (in data units), `None` without a
    /// prior: the exact density with its support's steps, or the KDE of prior draws.
    ///
    /// # Errors
    /// As [`Marginal::svg`], and [`PlotError::InvalidDensity`] for a density that returns
    /// NaN or a negative value.
    pub fn prior_curve(&self) -> Result<Option<PriorCurve>, PlotError> {
        error::finite_values("samples", self.samples)?;
        if let Some(t) = self.truth {
            error::finite_values("truth", &[t])?;
        }
        if let Some(p) = self.prior {
            error::finite_values("prior draws", p)?;
        }
        match self.weights {
            None => self.curve(self.samples),
            Some(w) => {
                error::weights(self.samples.len(), w)?;
                let vals: Vec<f64> = resample_indices(w)
                    .into_iter()
                    .map(|i| self.samples[i])
                    .collect();
                self.curve(&vals)
            }
        }
    }

    /// The prior curve over the panel of the (resampled, checked) draws `vals`.
    fn curve(&self, vals: &[f64]) -> Result<Option<PriorCurve>, PlotError> {
        let Some(grid) = panel_grid(vals, self.truth, PAD) else {
            return Ok(None);
        };
        if let Some(Density(f)) = self.density {
            return density_curve(f, &grid).map(Some);
        }
        Ok(self.prior.map(|p| {
            let p: Vec<f64> = p.iter().copied().filter(|v| v.is_finite()).collect();
            let ys = kde_within(&p, &grid, finite_range(p.iter().copied()));
            PriorCurve {
                source: PriorSource::KdeOfDraws,
                pieces: vec![grid.iter().copied().zip(ys).collect()],
            }
        }))
    }
}

/// The x padding of a marginal's panel, a fraction of the draws' span on each side.
const PAD: f64 = 0.02;

/// A density above this multiple of the posterior's tallest bar or KDE value is cut at the
/// top of the frame.
const PRIOR_CAP: f64 = 4.0;

/// The x range of a panel over the finite `vals` and `truth`, padded by `pad` of the span
/// on each side (`None` without a finite value).
fn panel_range(vals: &[f64], truth: Option<f64>, pad: f64) -> Option<(f64, f64)> {
    let (lo, hi) = finite_range(vals.iter().copied().chain(truth))?;
    let pad = pad * (hi - lo);
    Some((lo - pad, hi + pad))
}

/// The 121 points of a panel's x grid over `(lo, hi)`, where densities are evaluated.
fn grid_over((lo, hi): (f64, f64)) -> Vec<f64> {
    (0..=120)
        .map(|i| lo + (hi - lo) * f64::from(i) / 120.0)
        .collect()
}

/// [`grid_over`] the [`panel_range`].
pub(crate) fn panel_grid(vals: &[f64], truth: Option<f64>, pad: f64) -> Option<Vec<f64>> {
    panel_range(vals, truth, pad).map(grid_over)
}

/// The pieces of the density `f` over `grid`, with the edges of its support found by
/// bisection between grid points (see [`PriorCurve`]).
pub(crate) fn density_curve(f: &dyn Fn(f64) -> f64, grid: &[f64]) -> Result<PriorCurve, PlotError> {
    let eval = |x: f64, index: usize| {
        let v = f(x);
        if v.is_nan() || v < 0.0 {
            Err(PlotError::InvalidDensity { index })
        } else {
            Ok(v)
        }
    };
    let mut pieces = Vec::new();
    let mut piece: Vec<(f64, f64)> = Vec::new();
    let mut prev: Option<(f64, f64)> = None;
    for (i, &x) in grid.iter().enumerate() {
        let y = eval(x, i)?;
        if let Some((px, py)) = prev
            && (py > 0.0) != (y > 0.0)
        {
            // The support's edge lies in (px, x): bisect to adjacent floats (at most 200
            // halvings), keeping the positive side.
            let (mut zero, mut pos) = if py > 0.0 { (x, px) } else { (px, x) };
            for _ in 0..200 {
                let mid = 0.5 * (zero + pos);
                // Exact: the ends are adjacent floats, no midpoint lies between them.
                #[allow(clippy::float_cmp)]
                if mid == zero || mid == pos {
                    break;
                }
                if eval(mid, i)? > 0.0 {
                    pos = mid;
                } else {
                    zero = mid;
                }
            }
            let top = eval(pos, i)?;
            if py > 0.0 {
                piece.push((pos, top));
                piece.push((pos, 0.0));
                pieces.push(core::mem::take(&mut piece));
            } else {
                piece.push((pos, 0.0));
                piece.push((pos, top));
            }
        }
        if y > 0.0 {
            piece.push((x, y));
        }
        prev = Some((x, y));
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    Ok(PriorCurve {
        source: PriorSource::Density,
        pieces,
    })
}

/// The extra height of a [`Marginal`] with a legend.
const LEGEND_HEIGHT: f64 = 20.0;

/// One centred legend line at baseline `y`: a swatch and a name for the histogram, the KDE
/// and, when drawn, the prior and the true value, in the styles [`histogram_into`] uses.
pub(crate) fn legend_into(
    out: &mut String,
    width: f64,
    y: f64,
    prior: Option<PriorSource>,
    truth: bool,
) {
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
    if let Some(source) = prior {
        items.push((
            source.label(),
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
    let marks: f64 = items
        .iter()
        .map(|(label, ..)| SWATCH + GAP + text_width(label, SIZE))
        .sum::<f64>();
    #[allow(clippy::cast_precision_loss)]
    let gaps = (items.len() - 1) as f64;
    // The items' spacing narrows (to at least 4 px) where a full line would not fit
    // ("prior (KDE of draws)" beside the true value in a 480 px marginal).
    let space = if marks + SPACE * gaps <= width - 8.0 {
        SPACE
    } else {
        ((width - 8.0 - marks) / gaps).max(4.0)
    };
    let total = marks + space * gaps;
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
        x += text_width(label, SIZE) + space;
    }
}

/// Draws a density histogram of the finite `vals` with its KDE, an optional prior curve
/// (dashed grey, computed on [`panel_grid`]'s grid) and an optional true value (dashed red)
/// into the box `(x, y, width, height)`, the x range padded by `pad` of its span on each side.
#[allow(clippy::too_many_arguments)] // the marginal's and the pair plot's one drawing routine
pub(crate) fn histogram_into(
    out: &mut String,
    frame_box: (f64, f64, f64, f64),
    vals: &[f64],
    truth: Option<f64>,
    prior: Option<&PriorCurve>,
    xlabel: &str,
    show: TickLabels,
    pad: f64,
) {
    let vals: Vec<f64> = vals.iter().copied().filter(|v| v.is_finite()).collect();
    let Some((lo, hi)) = panel_range(&vals, truth, pad) else {
        return;
    };
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
    let grid = grid_over((lo, hi));
    let k = kde(&vals, &grid);
    let post_max = dens.iter().chain(k.iter()).fold(0.0_f64, |a, &b| a.max(b));
    // A KDE of prior draws is bounded and counts in full (as before exact densities were
    // drawn); an exact density may be unbounded at a point and counts up to PRIOR_CAP times
    // the posterior's height.
    let prior_max = prior.map_or(0.0, |c| {
        let m = c
            .pieces
            .iter()
            .flatten()
            .map(|p| p.1)
            .filter(|v| v.is_finite())
            .fold(0.0_f64, f64::max);
        match c.source {
            PriorSource::KdeOfDraws => m,
            PriorSource::Density => {
                let unbounded = c.pieces.iter().flatten().any(|p| p.1 == f64::INFINITY);
                if unbounded || m > PRIOR_CAP * post_max {
                    PRIOR_CAP * post_max
                } else {
                    m
                }
            }
        }
    });
    let ymax = post_max.max(prior_max).max(1e-300) * 1.08;
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
    if let Some(c) = prior.filter(|c| !c.pieces.is_empty()) {
        let mut d = String::new();
        for piece in &c.pieces {
            let xs: Vec<f64> = piece.iter().map(|p| p.0).collect();
            let ys: Vec<f64> = piece.iter().map(|p| p.1.min(ymax)).collect();
            d.push_str(&f.polyline(&xs, &ys));
        }
        let _ = write!(
            out,
            r##"<path class="prior" d="{d}" fill="none" stroke="#777" stroke-width="1.2" stroke-dasharray="5,3"/>"##
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
#[allow(clippy::float_cmp)] // exact values: the density is evaluated, not approximated
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
            ">prior (KDE of draws)<",
            ">true value<",
        ] {
            assert!(full.contains(name), "{name}: {full}");
        }
        assert!(full.contains(r#"height="360""#));
        assert_eq!(full.matches(r#"class="legend""#).count(), 4);
        assert_eq!(layout_problems(&full), Vec::new());
        let bare = Marginal::new("x", &v).legend().svg().unwrap();
        assert!(bare.contains(">KDE of the posterior<"));
        assert!(!bare.contains(">prior") && !bare.contains(">true value<"));
        assert_eq!(layout_problems(&bare), Vec::new());
        let plain = Marginal::new("x", &v).truth(0.2).svg().unwrap();
        assert!(!plain.contains("class=\"legend\"") && plain.contains(r#"height="340""#));
    }

    /// Beta(1, 4): the marginal of one weight of a Dirichlet(1) over five (the ABCDP toy).
    fn beta_1_4(x: f64) -> f64 {
        if (0.0..=1.0).contains(&x) {
            4.0 * (1.0 - x).powi(3)
        } else {
            0.0
        }
    }

    /// Issue 32: the prior curve was a KDE of prior draws, biased at a bound (a Dirichlet(1)
    /// marginal drawn at 1.6 where its density is 4). Given the prior's density, the curve is
    /// that density on the panel's grid, starting with a vertical step at the support's edge
    /// 0 to exactly 4, and the legend says "prior density".
    #[test]
    fn an_exact_prior_density_starts_at_its_full_height_at_the_bound() {
        let v: Vec<f64> = (0..400).map(|i| 0.3 * f64::from(i) / 400.0).collect();
        let f = beta_1_4;
        let plot = Marginal::new("w1", &v).prior_density(&f).legend();
        let c = plot.prior_curve().unwrap().unwrap();
        assert_eq!(c.source, PriorSource::Density);
        assert_eq!(c.pieces.len(), 1);
        let p = &c.pieces[0];
        let (e0, y0) = p[0];
        let (e1, y1) = p[1];
        assert!(e0 == e1 && e0.abs() < 1e-12 && y0 == 0.0, "{:?}", &p[..3]);
        assert_eq!(y1, 4.0);
        // Every other point is the density itself, at the panel's grid.
        for &(x, y) in &p[2..] {
            assert_eq!(y, beta_1_4(x));
        }
        let svg = plot.svg().unwrap();
        assert!(svg.contains(">prior density<") && !svg.contains("KDE of draws"));
        assert_eq!(layout_problems(&svg), Vec::new());
        // The density replaces draws given as well.
        let draws = [0.1, 0.2, 0.05];
        let both = Marginal::new("w1", &v).prior(&draws).prior_density(&f);
        assert_eq!(both.prior_curve().unwrap(), Some(c));
    }

    /// Issue 32: a declared uniform prior was drawn as a wavy KDE. Its density is flat inside
    /// the support, with a vertical step at each bound.
    #[test]
    fn a_uniform_prior_is_flat_with_steps_at_its_bounds() {
        let v: Vec<f64> = (0..300)
            .map(|i| -1.0 + 3.0 * f64::from(i) / 299.0)
            .collect();
        let f = |x: f64| {
            if (-1.0..=2.0).contains(&x) {
                1.0 / 3.0
            } else {
                0.0
            }
        };
        let plot = Marginal::new("u", &v).prior_density(&f).legend();
        let c = plot.prior_curve().unwrap().unwrap();
        let p = &c.pieces[0];
        assert_eq!(c.pieces.len(), 1);
        assert_eq!((p[0], p[1].0), ((-1.0, 0.0), -1.0));
        let n = p.len();
        assert_eq!((p[n - 1], p[n - 2].0), ((2.0, 0.0), 2.0));
        assert!(p[1..n - 1].iter().all(|&(_, y)| y == 1.0 / 3.0));
        // In the SVG: one subpath, its inner points on one horizontal line.
        let svg = plot.svg().unwrap();
        let d = svg
            .split(r#"class="prior" d=""#)
            .nth(1)
            .and_then(|t| t.split('"').next())
            .unwrap();
        let ys: Vec<&str> = d
            .split_whitespace()
            .map(|pt| pt.trim_start_matches(['M', 'L']).split(',').nth(1).unwrap())
            .collect();
        assert_eq!(d.matches('M').count(), 1);
        assert!(ys[1..ys.len() - 1].iter().all(|y| *y == ys[1]), "{d}");
        assert_eq!(ys[0], ys[ys.len() - 1]);
        assert_ne!(ys[0], ys[1]);
        assert_eq!(layout_problems(&svg), Vec::new());
    }

    /// A density that is infinite at a bound (Beta(½, ½)) does not squash the posterior: the
    /// y axis stops at 4 times the posterior's height and the curve is cut there; a density
    /// returning NaN or a negative value is a typed error, not a panic or a NaN in the SVG.
    #[test]
    fn unbounded_and_invalid_densities() {
        let v: Vec<f64> = (0..200).map(|i| 0.4 + 0.2 * f64::from(i) / 199.0).collect();
        let arcsine = |x: f64| {
            if (0.0..=1.0).contains(&x) {
                1.0 / (core::f64::consts::PI * (x * (1.0 - x)).sqrt())
            } else {
                0.0
            }
        };
        let wide: Vec<f64> = v.iter().map(|x| (x - 0.4) * 5.0).collect();
        let s = Marginal::new("p", &wide)
            .prior_density(&arcsine)
            .svg()
            .unwrap();
        assert!(!s.contains("NaN") && !s.contains("inf"), "{s}");
        assert_eq!(layout_problems(&s), Vec::new());
        let nan = |_: f64| f64::NAN;
        assert_eq!(
            Marginal::new("p", &v).prior_density(&nan).svg(),
            Err(PlotError::InvalidDensity { index: 0 })
        );
        let neg = |x: f64| if x > 0.5 { -1.0 } else { 1.0 };
        assert!(matches!(
            Marginal::new("p", &v).prior_density(&neg).prior_curve(),
            Err(PlotError::InvalidDensity { .. })
        ));
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
