//! The Python reference worker (`examples/own-model/gaussian_worker.py`, numpy + pyarrow):
//! it reproduces the built-in gaussian-mean model (same privacy ledger, same posterior within
//! Monte Carlo error) and its tables do not depend on the number of workers.
//!
//! Python comes from `DPINFER_TEST_PYTHON`, else `target/python-venv/bin/python` (created by
//! `cargo xtask ci`). Without either the tests are skipped with a message — except under
//! `CI=true`, where they fail.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

mod common;
use common::{dpinfer, fresh_dir, root, show, write_config};

use std::path::{Path, PathBuf};

fn python() -> Option<PathBuf> {
    let ok = |p: &Path| {
        std::process::Command::new(p)
            .args(["-c", "import pyarrow, numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root().join("target"), |d| root().join(d));
    let candidate = std::env::var_os("DPINFER_TEST_PYTHON")
        .map_or_else(|| target.join("python-venv/bin/python"), PathBuf::from);
    if ok(&candidate) {
        return Some(candidate);
    }
    let msg = format!(
        "no python with pyarrow and numpy at {} (set DPINFER_TEST_PYTHON, or run `cargo xtask \
         ci`, which creates target/python-venv)",
        candidate.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("SKIPPED: {msg}");
    None
}

/// Copies an own-model example into `dir` with the given python, a fixed noise seed, `pairs`
/// pairs and `c` acceptances.
fn example(dir: &Path, name: &str, py: &Path, pairs: usize, c: usize) -> PathBuf {
    let src = root().join("examples/own-model");
    for f in ["gaussian_worker.py", "observed.csv"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(src.join(name))
        .unwrap()
        .replace("\"python3\"", &format!("{:?}", py.display().to_string()))
        .replace("noise = \"os\"", "noise = 42")
        .replace("pairs = 4000", &format!("pairs = {pairs}"))
        .replace("c = 50", &format!("c = {c}"));
    write_config(dir, name, &text)
}

fn samples(p: &Path) -> Vec<f64> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.parse().unwrap())
        .collect()
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (
        m,
        x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0),
    )
}

#[test]
fn python_worker_reproduces_the_builtin_gaussian_mean() {
    let Some(py) = python() else { return };
    let dir = fresh_dir("py-gauss");
    let ext = example(&dir, "gaussian-python.toml", &py, 1500, 40);
    let bui = example(&dir, "builtin-gaussian.toml", &py, 1500, 40);
    let o1 = dpinfer(&["run", ext.to_str().unwrap(), "--out", "ext"], &dir);
    assert!(o1.status.success(), "{}", show(&o1));
    let o2 = dpinfer(&["run", bui.to_str().unwrap(), "--out", "bui"], &dir);
    assert!(o2.status.success(), "{}", show(&o2));
    // The same privacy ledger: every line from `privacy:` to `facts:` (sensitivity, scale)
    // except the counts of examined pairs, which depend on the simulations.
    let ledger = |o: &std::process::Output| -> Vec<String> {
        let s = String::from_utf8_lossy(&o.stdout).into_owned();
        let from = s.find("privacy:").unwrap();
        s[from..]
            .lines()
            .take_while(|l| !l.starts_with("results in"))
            .map(|l| l.split(" accepted =").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(ledger(&o1), ledger(&o2));
    // Posterior means agree within Monte Carlo error: z-test at two-sided 1e-6 (|z| < 4.89);
    // the runs share their prior draws (same row streams), which only makes it conservative.
    let a = samples(&dir.join("ext/samples.csv"));
    let b = samples(&dir.join("bui/samples.csv"));
    let ((ma, va), (mb, vb)) = (mean_var(&a), mean_var(&b));
    let z = (ma - mb) / (va / a.len() as f64 + vb / b.len() as f64).sqrt();
    assert!(z.abs() < 4.89, "python {ma} vs built-in {mb}: z = {z}");
}

#[test]
fn python_tables_do_not_depend_on_the_worker_count() {
    let Some(py) = python() else { return };
    let dir = fresh_dir("py-bits");
    let cfg = example(&dir, "gaussian-python.toml", &py, 300, 5);
    let mut tables = Vec::new();
    for (threads, batch) in [("1", "256"), ("4", "9")] {
        let text = std::fs::read_to_string(&cfg)
            .unwrap()
            .replace("batch = 256", &format!("batch = {batch}"));
        let c = write_config(&dir, &format!("t{threads}.toml"), &text);
        let out = dir.join(format!("s{threads}"));
        let o = dpinfer(
            &[
                "simulate",
                c.to_str().unwrap(),
                "--shard",
                "0",
                "--shards",
                "1",
                "--out",
                out.to_str().unwrap(),
                "--threads",
                threads,
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", show(&o));
        let f = std::fs::read_dir(&out)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        tables.push(std::fs::read(f).unwrap());
    }
    assert!(
        tables[0] == tables[1],
        "1 worker and 4 workers wrote different tables"
    );
}
