//! Hostile inputs to every public function: NaN, infinities, the largest and smallest
//! floats, empty and mismatched inputs, any text. Nothing panics; every `Ok` is a standalone
//! SVG document that a real SVG parser (usvg) accepts and whose coordinates are numbers.
//! The strategies make most inputs valid in shape (lengths agree, values finite) so that the
//! drawing code runs on the edge values (5e-324, ±1e300, 1e15 + 1, single values, zero
//! weights) for about half of the cases (measured: 120–160 of 256 marginals, 60–120 of 512
//! line charts, 40–60 pair plots, 20–40 trace plots per run).

use dpinfer_plots::{
    Chart, Column, Marginal, PairPlot, PlotError, Series, layout_problems, line_chart,
    rank_histograms, rank_plot, resample, trace_plot, trace_rank_plot,
};
use proptest::prelude::*;

/// Floats with the awkward values overrepresented.
fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(f64::MAX),
        Just(-f64::MAX),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(1e300),
        Just(-1e300),
        Just(1e301),
        Just(1e15),
        Just(1e15 + 1.0),
        -10.0..10.0f64,
        -10.0..10.0f64,
        -10.0..10.0f64,
        any::<f64>(),
    ]
}

/// Finite floats within ±`MAX_ABS`, the edges overrepresented.
fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(1e300),
        Just(-1e300),
        Just(1e15),
        Just(1e15 + 1.0),
        Just(-2e-6),
        -10.0..10.0f64,
        -10.0..10.0f64,
        -1e6..1e6f64,
        (-300..300i32, -1.0..1.0f64).prop_map(|(e, m)| m * 10f64.powi(e)),
    ]
}

/// Half of the time valid values (so that the drawing code runs), else anything.
fn floats(max: usize) -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        prop::collection::vec(finite(), 0..max),
        prop::collection::vec(float(), 0..max),
    ]
}

/// Weights for `n` draws: usually `n` valid ones (zeros included), sometimes anything.
fn weights(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        3 => prop::collection::vec(prop_oneof![Just(0.0), Just(5e-324), 0.0..5.0f64], n),
        1 => prop::collection::vec(
            prop_oneof![Just(0.0), Just(f64::NAN), Just(-1.0), Just(f64::MAX), 0.0..5.0f64],
            0..n + 2,
        ),
    ]
}

/// `n` values: usually valid, sometimes anything.
fn floats_n(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        3 => prop::collection::vec(finite(), n),
        1 => prop::collection::vec(float(), n),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        any::<String>(),
        "[a-z<&>\"\\x00-\\x1f]{0,12}"
    ]
}

fn series() -> impl Strategy<Value = Vec<Series>> {
    let one = prop_oneof![
        3 => (text(), 0..30usize)
            .prop_flat_map(|(l, n)| (Just(l), floats_n(n), floats_n(n)))
            .prop_map(|(l, x, y)| Series::new(l, x, y)),
        1 => (text(), floats(30), floats(30)).prop_map(|(l, x, y)| Series::new(l, x, y)),
    ];
    prop_oneof![
        3 => prop::collection::vec(one.clone(), 1..4),
        1 => prop::collection::vec(one, 0..4),
    ]
}

/// An `Ok` plot is a well-formed document with numeric coordinates; an `Err` says why.
fn check(result: Result<String, PlotError>) -> Result<(), TestCaseError> {
    match result {
        Ok(svg) => {
            prop_assert!(svg.starts_with("<?xml"));
            prop_assert!(svg.trim_end().ends_with("</svg>"));
            if let Err(e) = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default()) {
                return Err(TestCaseError::fail(format!("usvg refuses the plot: {e}")));
            }
            // Coordinates are never NaN or infinite (texts are checked separately).
            let markup: String = svg
                .split("<text")
                .map(|part| part.split_once("</text>").map_or(part, |(_, rest)| rest))
                .collect();
            prop_assert!(!markup.contains("NaN") && !markup.contains("inf"), "{svg}");
            let _ = layout_problems(&svg);
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn marginal(
        name in text(),
        title in text(),
        (samples, w) in (0..40usize).prop_flat_map(|n| (floats_n(n), prop::option::of(weights(n)))),
        truth in prop::option::of(prop_oneof![3 => finite(), 1 => float()]),
        prior in prop::option::of(prop_oneof![floats_n(20), floats(20)]),
    ) {
        let mut plot = Marginal::new(&name, &samples).title(title);
        if let Some(w) = &w {
            plot = plot.weights(w);
        }
        if let Some(t) = truth {
            plot = plot.truth(t);
        }
        if let Some(p) = &prior {
            plot = plot.prior(p);
        }
        check(plot.svg())?;
    }

    /// A prior density that is a step at `cut` to `height` (NaN, ±∞, negative, huge or
    /// tiny included), beside hostile draws: a typed error or a clean SVG, never a panic.
    #[test]
    fn marginal_with_a_density(
        samples in floats(40),
        truth in prop::option::of(float()),
        (cut, height, slope) in (float(), float(), float()),
    ) {
        let f = move |x: f64| if x < cut { 0.0 } else { height + slope * (x - cut) };
        let mut plot = Marginal::new("x", &samples).prior_density(&f).legend();
        if let Some(t) = truth {
            plot = plot.truth(t);
        }
        let _ = plot.prior_curve();
        check(plot.svg())?;
    }

    #[test]
    fn pair_plot(
        names in prop::collection::vec(text(), 0..5),
        (cols, w, truth) in (0..12usize, 0..5usize).prop_flat_map(|(n, d)| (
            prop_oneof![
                3 => prop::collection::vec(floats_n(n), d),
                1 => prop::collection::vec(floats(12), d),
            ],
            prop::option::of(weights(n)),
            prop::option::of(prop_oneof![3 => floats_n(d), 1 => floats(5)]),
        )),
    ) {
        let columns: Vec<Column<'_>> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| Column::new(names.get(i).map_or("", String::as_str), c))
            .collect();
        let mut plot = PairPlot::new(&columns);
        if let Some(w) = &w {
            plot = plot.weights(w);
        }
        if let Some(t) = &truth {
            plot = plot.truth(t);
        }
        check(plot.svg())?;
    }

    #[test]
    fn line_charts(title in text(), xl in text(), yl in text(), s in series(), log_y in any::<bool>()) {
        check(line_chart(&title, &xl, &yl, &s, log_y))?;
        let chart = Chart { stem: "c".into(), title, xlabel: xl, ylabel: yl, series: s, log_y };
        check(chart.svg())?;
    }

    #[test]
    fn trace_rank(title in text(), s in series(), chains in prop_oneof![4 => 1..8usize, 1 => 0..1usize, 1 => Just(65), 1 => Just(usize::MAX)]) {
        check(trace_rank_plot(&title, &s, chains))?;
        check(trace_plot(&title, &s, chains))?;
        check(rank_plot(&title, &s, chains))?;
    }

    #[test]
    fn rank_histograms_and_resample(
        draws in floats(60),
        chains in prop_oneof![0..8usize, Just(usize::MAX)],
        w in prop_oneof![weights(60), weights(10)],
    ) {
        if let Ok(r) = rank_histograms(&draws, chains) {
            prop_assert_eq!(r.counts.len(), chains);
            let finite = draws[..draws.len() / chains * chains].iter().filter(|v| v.is_finite()).count();
            let counted: f64 = r.counts.iter().flatten().sum();
            prop_assert!((counted - finite as f64).abs() < 0.5);
        }
        if let Ok(r) = resample(&draws, &w) {
            prop_assert_eq!(r.len(), draws.len().min(dpinfer_plots::MAX_RESAMPLED));
        }
    }

    #[test]
    fn layout_of_any_text(s in any::<String>(), tail in "(<text [a-z=\" 0-9.]{0,20}>[^<]{0,5}(</text>)?){0,4}") {
        let _ = layout_problems(&s);
        let _ = layout_problems(&format!("<svg width=\"10\" height=\"10\">{tail}{s}"));
    }
}

/// Valid inputs on ordinary scales give plots without layout problems.
#[test]
fn ordinary_inputs_have_no_layout_problems() {
    let a: Vec<f64> = (0..500).map(|i| f64::from(i).sin() * 3.0 + 1.0).collect();
    let b: Vec<f64> = (0..500).map(|i| f64::from(i * 3).cos() * 0.01).collect();
    let c: Vec<f64> = (0..500).map(|i| 1e4 + f64::from(i % 37)).collect();
    let cols = [
        Column::new("alpha", &a),
        Column::new("b", &b),
        Column::new("count", &c),
    ];
    let plots = [
        PairPlot::new(&cols).truth(&[1.0, 0.0, 1e4]).svg(),
        Marginal::new("alpha", &a).prior(&b).truth(1.0).svg(),
        line_chart(
            "schedule",
            "generation",
            "tolerance",
            &[Series::new(
                "tolerance",
                (1..=12).map(f64::from).collect(),
                (1..=12).map(|g| 2f64.powi(-g)).collect(),
            )],
            true,
        ),
    ];
    for p in plots {
        let svg = p.unwrap();
        assert_eq!(layout_problems(&svg), Vec::new());
    }
}
