// Writes the golden SVGs of `tests/suite/golden.rs` with the CLI's plotting code as it was before it
// moved into this crate (dpinfer commit 3f46256, `crates/cli/src/svg.rs`, and the
// `resample_for_plot` of `crates/cli/src/results.rs`, quoted below). Not compiled with the
// crate. To run it:
//
//   mkdir -p /tmp/oldsvg/src && cd /tmp/oldsvg
//   printf '[package]\nname = "oldsvg"\nversion = "0.1.0"\nedition = "2024"\n[workspace]\n' > Cargo.toml
//   git -C <repo> show 3f46256:crates/cli/src/svg.rs > src/svg.rs
//   cp <repo>/crates/plots/tests/golden/generate.rs src/main.rs
//   cargo run -- <repo>/crates/plots/tests/golden
//
// The inputs are the ones at the top of the test in `tests/suite/golden.rs`; keep the two in step.

mod svg;

use svg::{Series, histogram, line_chart, pair_plot, trace_rank};

/// `crates/cli/src/results.rs` at 3f46256.
fn resample_for_plot(vals: &[f64], w: Option<&[f64]>) -> Vec<f64> {
    let Some(w) = w else {
        return vals.to_vec();
    };
    let total: f64 = w.iter().filter(|x| x.is_finite()).sum();
    if total.is_nan() || total <= 0.0 || vals.is_empty() {
        return vals.to_vec();
    }
    let m = vals.len().min(5000);
    let mut out = Vec::with_capacity(m);
    let mut acc = 0.0;
    let mut i = 0;
    for k in 0..m {
        let u = (k as f64 + 0.5) / m as f64 * total;
        while i + 1 < vals.len() && acc + w[i] < u {
            acc += w[i];
            i += 1;
        }
        out.push(vals[i]);
    }
    out
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("output folder"));
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
    let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let write = |name: &str, svg: String| std::fs::write(dir.join(name), svg).unwrap();
    write(
        "marginal-weighted.svg",
        histogram(
            "posterior of a (smc-abc)",
            "a",
            &resample_for_plot(&a, Some(&w)),
            Some(1.0),
            Some(&prior),
        ),
    );
    write(
        "marginal-plain.svg",
        histogram("posterior of c", "c", &c, None, None),
    );
    let cols: Vec<Vec<f64>> = [&a, &b, &c]
        .iter()
        .map(|x| resample_for_plot(x, Some(&w)))
        .collect();
    write(
        "pairs.svg",
        pair_plot(
            "toy posterior, smc-abc (true θ in red)",
            &names,
            &cols,
            Some(&truth),
        ),
    );
    let gens: Vec<f64> = (1..=8).map(f64::from).collect();
    let tol: Vec<f64> = (1..=8).map(|g| 3.3 * 10f64.powi(-g)).collect();
    write(
        "line-log.svg",
        line_chart(
            "SMC-ABC tolerance per generation",
            "generation",
            "tolerance",
            &[Series {
                label: "tolerance".into(),
                x: gens,
                y: tol,
            }],
            true,
        ),
    );
    let it: Vec<f64> = (0..500).map(|i| f64::from(i) * 2.0).collect();
    let eps: Vec<f64> = (0..500).map(|i| 0.004 * f64::from(i).sqrt()).collect();
    write(
        "line-two.svg",
        line_chart(
            "ε spent (δ = 0.00001)",
            "iteration",
            "ε",
            &[
                Series {
                    label: "ε spent".into(),
                    x: it,
                    y: eps,
                },
                Series {
                    label: "budget".into(),
                    x: vec![0.0, 998.0],
                    y: vec![0.1, 0.1],
                },
            ],
            false,
        ),
    );
    let kept: Vec<f64> = (200..600).map(f64::from).collect();
    let mu: Vec<f64> = (0..400u32)
        .map(|i| f64::from((i * 7919) % 400) / 100.0)
        .collect();
    let sigma: Vec<f64> = (0..400u32)
        .map(|i| f64::from(i / 200) * 10.0 + f64::from(i % 7))
        .collect();
    write(
        "trace.svg",
        trace_rank(
            "dp-penalty trace (after burn-in) and rank plots",
            &[
                Series {
                    label: "mu".into(),
                    x: kept.clone(),
                    y: mu,
                },
                Series {
                    label: "sigma".into(),
                    x: kept,
                    y: sigma,
                },
            ],
            2,
        ),
    );
}
