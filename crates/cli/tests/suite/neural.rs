//! `[sampler] kind = "sppe"` / `"sple"` (issue 28 item 4) with a `kind = "command"` worker:
//! the Python gaussian-mean worker (`examples/own-model/gaussian_worker.py`), its outputs
//! summarised by the library's clipped mean, the summary released once by a Laplace
//! mechanism with a user-declared sensitivity; SPPE / SPLE then run two tiny rounds on
//! simulations of that mechanism. The ledger holds the release's claim (labelled
//! user-declared) and no other cost; the results folder holds the per-round table and the
//! trained estimator.

use crate::common;
use crate::external_python::python;
use common::{dpinfer, fresh_dir, root, show, write_config};

fn config(py: &std::path::Path, kind: &str) -> String {
    format!(
        r#"[model]
name = "my-gaussian"
kind = "command"
command = [{py:?}, "gaussian_worker.py"]
outputs = 200
batch = 40

[model.summary]
kind = "mean"
lo = -3.0
hi = 5.0

[[model.prior]]
name = "mu"
dist = "normal"
mean = 0.0
sd = 3.0

[data]
path = "observed.csv"

[distance]
kind = "l2"

[sampler]
kind = "{kind}"
rounds = 2
simulations = 64
noise_draws = 2
layers = 2
hidden = 16
max_epochs = 10
samples = 200

[privacy]
epsilon = 5.0
release = "laplace"
release_sensitivity = 0.04
release_lo = -3.0
release_hi = 5.0

[seeds]
run = 5
noise = 42
"#,
        py = py.display().to_string()
    )
}

fn setup(name: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let py = python()?;
    let dir = fresh_dir(name);
    let src = root().join("examples/own-model");
    for f in ["gaussian_worker.py", "observed.csv"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    Some((dir, py))
}

#[test]
fn sppe_with_a_command_worker_keeps_the_release_claim_and_writes_rounds_and_estimator() {
    let Some((dir, py)) = setup("neural-sppe") else {
        return;
    };
    let cfg = write_config(&dir, "sppe.toml", &config(&py, "sppe"));
    let o = dpinfer(
        &["run", cfg.to_str().unwrap(), "--out", "r", "--threads", "2"],
        &dir,
    );
    assert!(o.status.success(), "{}", show(&o));
    let r = dir.join("r");
    // the per-round table: a header and one row per round
    let rounds = std::fs::read_to_string(r.join("rounds.csv")).unwrap();
    let lines: Vec<&str> = rounds.lines().collect();
    assert_eq!(lines.len(), 3, "{rounds}");
    assert!(lines[0].starts_with("round,simulations,"), "{rounds}");
    assert!(lines[2].starts_with("2.0,64.0,"), "{rounds}");
    assert!(r.join("estimator.safetensors").is_file());
    let samples = std::fs::read_to_string(r.join("samples.csv")).unwrap();
    assert_eq!(samples.lines().count(), 201);
    // the ledger: the Laplace release's claim, user-declared, ε = 5 at most, nothing else
    let summary = std::fs::read_to_string(r.join("summary.json")).unwrap();
    assert!(summary.contains("USER-DECLARED"), "{summary}");
    let json: serde_json::Value = serde_json::from_str(&summary).unwrap();
    let eps = json
        .pointer("/privacy/epsilon")
        .and_then(serde_json::Value::as_f64);
    assert!(eps.is_some_and(|e| e > 0.0 && e <= 5.0), "{summary}");
}

#[test]
fn sple_with_a_command_worker_reports_its_chains() {
    let Some((dir, py)) = setup("neural-sple") else {
        return;
    };
    let cfg = write_config(&dir, "sple.toml", &config(&py, "sple"));
    let o = dpinfer(&["run", cfg.to_str().unwrap(), "--out", "r"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let summary = std::fs::read_to_string(dir.join("r/summary.json")).unwrap();
    assert!(summary.contains("split_rhat_mu"), "{summary}");
    let rounds = std::fs::read_to_string(dir.join("r/rounds.csv")).unwrap();
    assert_eq!(rounds.lines().count(), 3, "{rounds}");
}

#[test]
fn the_neural_samplers_refuse_a_config_without_a_release() {
    let Some((dir, py)) = setup("neural-norelease") else {
        return;
    };
    let text = config(&py, "sppe");
    let cut = text.find("release = ").unwrap();
    let end = text.find("[seeds]").unwrap();
    let text = format!("{}{}", &text[..cut], &text[end..]);
    let cfg = write_config(&dir, "bad.toml", &text);
    let o = dpinfer(&["run", cfg.to_str().unwrap(), "--out", "r"], &dir);
    assert!(!o.status.success());
    assert!(
        show(&o).contains("privacy.release is required for sppe"),
        "{}",
        show(&o)
    );
}
