//! Golden files: the plots this crate draws, byte for byte (`tests/golden/*.svg`). A weighted
//! marginal, a plain one, a weighted pair plot, a log-scale and a two-series line chart, and a
//! trace and rank plot; any change to a coordinate, a tick, a label or an attribute fails
//! here. The files were first written by the CLI's plotting code before it moved into this
//! crate (dpinfer commit 3f46256); they were rewritten by this test for issue 32 (robust KDE
//! bandwidth, reflected prior density, padded pair-plot and line-chart ranges, the pair
//! plot's legend and height). After an intended change of the pictures, rewrite them with
//! `DPINFER_BLESS_GOLDEN=1 cargo test -p dpinfer-plots --test suite golden::` and review the
//! diff.

use dpinfer_plots::{Chart, Column, Marginal, PairPlot, Series, layout_problems, trace_rank_plot};

#[test]
fn plots_match_the_clis_former_output() {
    let same = |name: &str, svg: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(name);
        if std::env::var_os("DPINFER_BLESS_GOLDEN").is_some() {
            std::fs::write(&path, svg).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        let want =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            svg == want,
            "{name} differs from the golden file (first difference at byte {})",
            svg.bytes()
                .zip(want.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(svg.len().min(want.len()))
        );
        assert_eq!(layout_problems(svg), Vec::new(), "{name}");
    };
    let n = 120;
    let a: Vec<f64> = (0..n)
        .map(|i| (f64::from(i) * 0.7).sin() * 2.0 + 1.0)
        .collect();
    let b: Vec<f64> = (0..n)
        .map(|i| (f64::from(i) * 1.3).cos() * 0.05 + 0.1)
        .collect();
    let c: Vec<f64> = (0..n)
        .map(|i| 3640.0 + f64::from((i * 37) % 101) * 33.0)
        .collect();
    let w: Vec<f64> = (0..n).map(|i| f64::from((i * 17) % 11)).collect();
    let prior: Vec<f64> = (0..400)
        .map(|i| (f64::from(i) * 0.31).sin() * 3.0)
        .collect();
    let truth = [1.0, 0.1, 5000.0];

    let m = Marginal::new("a", &a)
        .title("posterior of a (smc-abc)")
        .weights(&w)
        .truth(1.0)
        .prior(&prior);
    same("marginal-weighted.svg", &m.svg().unwrap());
    let m = Marginal::new("c", &c);
    same("marginal-plain.svg", &m.svg().unwrap());

    let cols = [
        Column::new("a", &a),
        Column::new("b", &b),
        Column::new("c", &c),
    ];
    let p = PairPlot::new(&cols)
        .title("toy posterior, smc-abc (true θ in red)")
        .weights(&w)
        .truth(&truth);
    same("pairs.svg", &p.svg().unwrap());

    let gens: Vec<f64> = (1..=8).map(f64::from).collect();
    let tol: Vec<f64> = (1..=8).map(|g| 3.3 * 10f64.powi(-g)).collect();
    let chart = Chart {
        stem: "smc-tolerance".into(),
        title: "SMC-ABC tolerance per generation".into(),
        xlabel: "generation".into(),
        ylabel: "tolerance".into(),
        series: vec![Series::new("tolerance", gens, tol)],
        log_y: true,
    };
    same("line-log.svg", &chart.svg().unwrap());
    let it: Vec<f64> = (0..500).map(|i| f64::from(i) * 2.0).collect();
    let eps: Vec<f64> = (0..500).map(|i| 0.004 * f64::from(i).sqrt()).collect();
    let chart = Chart {
        stem: "epsilon-spent".into(),
        title: "ε spent (δ = 0.00001)".into(),
        xlabel: "iteration".into(),
        ylabel: "ε".into(),
        series: vec![
            Series::new("ε spent", it, eps),
            Series::new("budget", vec![0.0, 998.0], vec![0.1, 0.1]),
        ],
        log_y: false,
    };
    same("line-two.svg", &chart.svg().unwrap());

    let kept: Vec<f64> = (200..600).map(f64::from).collect();
    let mu: Vec<f64> = (0..400u32)
        .map(|i| f64::from((i * 7919) % 400) / 100.0)
        .collect();
    let sigma: Vec<f64> = (0..400u32)
        .map(|i| f64::from(i / 200) * 10.0 + f64::from(i % 7))
        .collect();
    let series = [
        Series::new("mu", kept.clone(), mu),
        Series::new("sigma", kept, sigma),
    ];
    let t = trace_rank_plot(
        "dp-penalty trace (after burn-in) and rank plots",
        &series,
        2,
    );
    same("trace.svg", &t.unwrap());
}
