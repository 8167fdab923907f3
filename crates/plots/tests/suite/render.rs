//! Every kind of plot renders with a real SVG renderer (resvg) and puts its marks where the
//! picture says: the true value in red, bars and densities in blue, one colour per chain.
//! Labels render when the machine has fonts; no check here depends on text.

use dpinfer_plots::{Column, Marginal, PairPlot, Series, line_chart, trace_rank_plot};
use resvg::tiny_skia::Pixmap;

#[allow(clippy::unwrap_used)] // a test helper: a plot that does not render fails the test
fn render(svg: &str) -> Pixmap {
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &opt).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap
}

/// Pixels close to the colour `#rrggbb` (each channel within 40).
fn near(p: &Pixmap, rgb: (u8, u8, u8)) -> usize {
    p.pixels()
        .iter()
        .filter(|c| {
            c.alpha() > 200
                && c.red().abs_diff(rgb.0) < 40
                && c.green().abs_diff(rgb.1) < 40
                && c.blue().abs_diff(rgb.2) < 40
        })
        .count()
}

/// Pixels whose hue leans clearly towards red (`red`) or blue (`!red`), however pale (thin
/// lines blend with the white background).
fn leaning(p: &Pixmap, red: bool) -> usize {
    p.pixels()
        .iter()
        .filter(|c| {
            let (r, g, b) = (
                i32::from(c.red()),
                i32::from(c.green()),
                i32::from(c.blue()),
            );
            if red {
                r > b + 50 && r > g + 50
            } else {
                b > r + 50
            }
        })
        .count()
}

const RED: (u8, u8, u8) = (0xd6, 0x27, 0x28);
const BLUE: (u8, u8, u8) = (0x1f, 0x77, 0xb4);
const BAR: (u8, u8, u8) = (0x9e, 0xca, 0xe1);

#[test]
fn marginal_shows_bars_and_the_true_value() {
    let draws: Vec<f64> = (0..2000).map(|i| f64::from(i % 100) / 25.0).collect();
    let with = render(&Marginal::new("x", &draws).truth(2.0).svg().unwrap());
    let without = render(&Marginal::new("x", &draws).svg().unwrap());
    assert_eq!((with.width(), with.height()), (480, 340));
    // the bars fill a good part of the 380 × 250 frame
    assert!(near(&with, BAR) > 380 * 250 / 4, "{}", near(&with, BAR));
    // a dashed red line 250 px tall, 1.5 px wide: some hundred red pixels, none without it
    assert!(near(&with, RED) > 100, "{}", near(&with, RED));
    assert_eq!(near(&without, RED), 0);
}

#[test]
fn pair_plot_marks_the_truth_in_every_scatter() {
    let a: Vec<f64> = (0..500).map(|i| f64::from(i).sin()).collect();
    let b: Vec<f64> = (0..500).map(|i| f64::from(i).cos()).collect();
    let c: Vec<f64> = (0..500).map(|i| f64::from(i % 17)).collect();
    let cols = [
        Column::new("a", &a),
        Column::new("b", &b),
        Column::new("c", &c),
    ];
    let one_dot = {
        let two = [Column::new("a", &a), Column::new("b", &b)];
        let p = render(&PairPlot::new(&two).truth(&[0.0, 0.0]).svg().unwrap());
        let q = render(&PairPlot::new(&two).svg().unwrap());
        near(&p, RED) - near(&q, RED)
    };
    let p = render(&PairPlot::new(&cols).truth(&[0.0, 0.0, 8.0]).svg().unwrap());
    let q = render(&PairPlot::new(&cols).svg().unwrap());
    // three scatter panels against one: more red, and the points are drawn in blue
    assert!(one_dot > 20, "{one_dot}");
    assert!(near(&p, RED) - near(&q, RED) > 2 * one_dot);
    assert!(near(&q, BLUE) > 1000, "{}", near(&q, BLUE));
}

#[test]
fn line_chart_and_trace_plots_draw_each_series_in_its_colour() {
    let x: Vec<f64> = (0..200).map(f64::from).collect();
    let up: Vec<f64> = x.iter().map(|v| v / 10.0).collect();
    let down: Vec<f64> = x.iter().map(|v| 20.0 - v / 10.0).collect();
    let chart = render(
        &line_chart(
            "two lines",
            "i",
            "y",
            &[
                Series::new("up", x.clone(), up.clone()),
                Series::new("down", x.clone(), down),
            ],
            false,
        )
        .unwrap(),
    );
    assert!(near(&chart, BLUE) > 200 && near(&chart, RED) > 200);
    // two chains of one parameter: the first half in blue, the second in red
    let trace = render(&trace_rank_plot("trace", &[Series::new("mu", x, up)], 2).unwrap());
    let (blue, red) = (leaning(&trace, false), leaning(&trace, true));
    assert!(blue > 100 && red > 100, "{blue} {red}");
}
