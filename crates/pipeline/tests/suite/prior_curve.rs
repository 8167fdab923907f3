//! Issue 32: the results folder's marginal plots draw the prior's exact density, read back
//! here from the SVG (the prior path's pixels mapped to data units through the axes' tick
//! labels). A Dirichlet(1) weight of the ABCDP toy starts at its full height 4 at the bound
//! 0 (a KDE of prior draws was biased there: 1.6 in the issue), and a declared uniform prior
//! is flat (a KDE was wavy); the legend says "prior density". The pair plot's diagonal draws
//! the same densities.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dpinfer_pipeline::{Config, Observer, Quiet, folder, run};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dpinfer-pipeline-prior-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `toml` and writes its results folder; returns the folder.
fn results(name: &str, toml: &str) -> PathBuf {
    let dir = scratch(name);
    let cfg = Config::parse(toml, Path::new(".")).unwrap();
    let quiet: Arc<dyn Observer> = Arc::new(Quiet);
    let finished = run::run_with(&cfg, &dir, 1, &quiet).unwrap();
    folder::write(
        &finished.outcome,
        &dir,
        folder::model_title(&cfg, &finished.outcome),
    )
    .unwrap();
    finished.close().unwrap();
    dir
}

/// The value of attribute `name` in the tag `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..].split('"').next()
}

/// A linear map pixel → value through the first and last of `(pixel, value)` ticks.
fn axis(ticks: &[(f64, f64)]) -> impl Fn(f64) -> f64 {
    assert!(ticks.len() >= 2, "{ticks:?}");
    let ((p0, v0), (p1, v1)) = (ticks[0], ticks[ticks.len() - 1]);
    move |p| v0 + (p - p0) * (v1 - v0) / (p1 - p0)
}

/// The marginal plot's prior curve in data units (each subpath's points) and the frame
/// bottom's pixel, read back from the SVG.
fn prior_points(svg: &str) -> Vec<Vec<(f64, f64)>> {
    let (mut xt, mut yt) = (Vec::new(), Vec::new());
    for part in svg.split("<text class=\"tick\"").skip(1) {
        let (tag, rest) = part.split_once('>').unwrap();
        let label: f64 = rest.split('<').next().unwrap().parse().unwrap();
        let x: f64 = attr(tag, "x").unwrap().parse().unwrap();
        let y: f64 = attr(tag, "y").unwrap().parse().unwrap();
        match attr(tag, "text-anchor") {
            Some("middle") => xt.push((x, label)),
            // A y tick's label sits 3.5 px below its tick.
            Some("end") => yt.push((y - 3.5, label)),
            other => panic!("tick anchored {other:?}"),
        }
    }
    let (fx, fy) = (axis(&xt), axis(&yt));
    let d = svg
        .split(r#"class="prior" d=""#)
        .nth(1)
        .and_then(|t| t.split('"').next())
        .unwrap();
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    for pt in d.split_whitespace() {
        if pt.starts_with('M') {
            pieces.push(Vec::new());
        }
        let (x, y) = pt.trim_start_matches(['M', 'L']).split_once(',').unwrap();
        let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
        pieces.last_mut().unwrap().push((fx(x), fy(y)));
    }
    pieces
}

/// The ABCDP toy (mixture of five uniforms, Dirichlet(1) prior): each weight's marginal is
/// Beta(1, 4), density 4(1 − w)³, and the plotted prior is that density at every point read
/// back; where the panel reaches the bound 0, the curve steps up there to 4.
#[test]
fn the_dirichlet_weights_prior_curve_is_its_exact_density() {
    let dir = results(
        "toy",
        r#"
        [model]
        name = "uniform-mixture"
        n = 500
        [distance]
        kind = "rff-mmd"
        features = 30
        [sampler]
        kind = "rejection"
        pairs = 400
        accept = 40
        [seeds]
        run = 2021
        "#,
    );
    let beta = |w: f64| {
        if (0.0..=1.0).contains(&w) {
            4.0 * (1.0 - w).powi(3)
        } else {
            0.0
        }
    };
    let mut steps = 0;
    for j in 1..=5 {
        let svg = std::fs::read_to_string(dir.join(format!("marginal-theta{j}.svg"))).unwrap();
        assert!(svg.contains(">prior density<"), "w{j}: {svg}");
        assert!(!svg.contains("KDE of draws"));
        let pieces = prior_points(&svg);
        assert_eq!(pieces.len(), 1, "w{j}");
        let mut p = pieces[0].as_slice();
        // Pixels are written to 0.01 px: about 0.002 in density on these axes.
        if (p[0].0 - p[1].0).abs() < 1e-3 {
            // The step at the bound: from 0 up to the density's full height at w = 0.
            assert!(
                p[0].0.abs() < 2e-3 && p[0].1.abs() < 5e-3,
                "w{j}: {:?}",
                &p[..2]
            );
            assert!((p[1].1 - 4.0).abs() < 1e-2, "w{j}: {:?}", &p[..2]);
            steps += 1;
            p = &p[2..];
        }
        for &(w, y) in p {
            assert!(
                (y - beta(w)).abs() < 2e-2,
                "w{j} at {w}: {y} vs {}",
                beta(w)
            );
        }
    }
    assert!(steps > 0, "no panel reaches the bound 0");
    // The pair plot's diagonal draws the same densities (one curve per weight), named in
    // its legend.
    let pairs = std::fs::read_to_string(dir.join("pairs.svg")).unwrap();
    assert_eq!(pairs.matches(r#"class="prior""#).count(), 5, "{pairs}");
    assert!(pairs.contains(">prior density<") && !pairs.contains("KDE of draws"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A declared uniform prior U(−3, 3) is drawn flat at 1/6 (one horizontal line), not as a
/// wavy estimate from draws.
#[test]
fn a_declared_uniform_prior_is_drawn_flat() {
    let dir = results(
        "uniform",
        r#"
        [model]
        name = "gaussian-mean"
        n = 200
        [[model.prior]]
        name = "mu"
        dist = "uniform"
        lo = -3.0
        hi = 3.0
        [distance]
        kind = "rff-mmd"
        features = 30
        [sampler]
        kind = "rejection"
        pairs = 400
        accept = 40
        [seeds]
        run = 3
        "#,
    );
    let svg = std::fs::read_to_string(dir.join("marginal-mu.svg")).unwrap();
    assert!(svg.contains(">prior density<"), "{svg}");
    let pieces = prior_points(&svg);
    assert_eq!(pieces.len(), 1);
    let inside: Vec<f64> = pieces[0]
        .iter()
        .filter(|(x, _)| (-3.0..=3.0).contains(x))
        .map(|p| p.1)
        .collect();
    assert!(inside.len() > 100);
    for y in &inside {
        assert!((y - 1.0 / 6.0).abs() < 5e-3, "{y}");
        assert!((y - inside[0]).abs() < 1e-9, "not flat: {inside:?}");
    }
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(report.contains(">prior density<"));
    let _ = std::fs::remove_dir_all(&dir);
}
