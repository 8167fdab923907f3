//! External simulators (`[model] kind = "command"`) from the command line, with the compiled
//! reference worker `examples/worker_gaussian.rs` (no Python needed): shard tables independent
//! of worker count and batch size, a fault's message on stderr, config errors, declared
//! priors, data files and summaries. The pool itself (every fault, retries, the reject marker)
//! is tested in `dpinfer-workers`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp,
    clippy::std_instead_of_alloc
)]

mod common;
use common::{dpinfer, fresh_dir, show, write_config};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The compiled reference worker (built with the package's examples by `cargo test`).
fn worker() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let p = dir
        .join("examples")
        .join(format!("worker_gaussian{}", std::env::consts::EXE_SUFFIX));
    assert!(
        p.exists(),
        "{} is missing: run `cargo test -p dpinfer-cli` (which builds the examples) or \
         `cargo build -p dpinfer-cli --example worker_gaussian` first",
        p.display()
    );
    p
}

const OUTPUTS: usize = 50;

fn config(dir: &Path, extra_model: &str, sampler: &str) -> PathBuf {
    let data: String = (0..OUTPUTS)
        .map(|i| format!("{}\n", 1.0 + ((i * 37 % 17) as f64 - 8.0) / 8.0))
        .collect();
    std::fs::write(dir.join("obs.csv"), data).unwrap();
    let text = format!(
        r#"[model]
name = "my-gaussian"
kind = "command"
command = [{w:?}]
outputs = {OUTPUTS}
{extra_model}

[[model.prior]]
name = "mu"
dist = "uniform"
lo = -3.0
hi = 3.0

[data]
path = "obs.csv"

[distance]
kind = "rff-mmd"
features = 20

{sampler}

[privacy]
epsilon = 5.0

[seeds]
run = 11
noise = 42

[output]
dir = "results"
"#,
        w = worker().display().to_string()
    );
    write_config(dir, "ext.toml", &text)
}

const SVT: &str =
    "[sampler]\nkind = \"svt-abc\"\npairs = 120\nepsilon_abc = 0.2\nc = 5\nclip = 0.5";

fn run_env(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dpinfer"));
    c.args(args).current_dir(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn simulate(dir: &Path, cfg: &Path, out: &str, threads: &str, env: &[(&str, &str)]) -> Output {
    run_env(
        &[
            "simulate",
            cfg.to_str().unwrap(),
            "--shard",
            "0",
            "--shards",
            "1",
            "--out",
            out,
            "--threads",
            threads,
        ],
        dir,
        env,
    )
}

fn shard_bytes(dir: &Path, out: &str) -> Vec<u8> {
    let d = dir.join(out);
    let f = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().ends_with(".dpshard"))
        .unwrap();
    std::fs::read(f.path()).unwrap()
}

#[test]
fn one_and_four_workers_and_any_batch_size_give_the_same_table_bit_for_bit() {
    let dir = fresh_dir("ext-bits");
    let a = config(&dir, "batch = 64", SVT);
    let o = simulate(&dir, &a, "one", "1", &[]);
    assert!(o.status.success(), "{}", show(&o));
    let dir2 = fresh_dir("ext-bits");
    let b = config(&dir2, "batch = 7", SVT);
    let o = simulate(&dir2, &b, "four", "4", &[]);
    assert!(o.status.success(), "{}", show(&o));
    let one = shard_bytes(&dir, "one");
    assert!(
        one == shard_bytes(&dir2, "four"),
        "1 worker/batch 64 differs from 4 workers/batch 7"
    );

    // Shards of 3 (any order) merge to the same table, and `verify` accepts them.
    let sd = dir.join("s3");
    for i in [2, 0, 1] {
        let o = run_env(
            &[
                "simulate",
                a.to_str().unwrap(),
                "--shard",
                &i.to_string(),
                "--shards",
                "3",
                "--out",
                sd.to_str().unwrap(),
                "--threads",
                "2",
            ],
            &dir,
            &[],
        );
        assert!(o.status.success(), "{}", show(&o));
    }
    let o = dpinfer(&["verify", sd.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let m = dir.join("m3.dpshard");
    let o = dpinfer(
        &["merge", sd.to_str().unwrap(), "--out", m.to_str().unwrap()],
        &dir,
    );
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        std::fs::read(&m).unwrap() == one,
        "3 shards merge to a different table"
    );

    // The data owner's private step runs on the merged table and matches `run`.
    let o = dpinfer(
        &[
            "private-step",
            a.to_str().unwrap(),
            "--pairs",
            m.to_str().unwrap(),
            "--out",
            "priv",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", show(&o));
    let o = dpinfer(&["run", a.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", show(&o));
    assert!(std::fs::read(dir.join("results/pairs-gen000.dpshard")).unwrap() == one);
    assert_eq!(
        std::fs::read_to_string(dir.join("results/samples.csv")).unwrap(),
        std::fs::read_to_string(dir.join("priv/samples.csv")).unwrap()
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("privacy: ε = 5"), "{stdout}");
}

/// Runs `simulate` with a fault injected at row 37 and returns stderr.
fn fault(name: &str, extra_model: &str) -> String {
    let dir = fresh_dir(&format!("ext-{name}"));
    let cfg = config(&dir, extra_model, SVT);
    let spec = format!("{name}@37");
    let o = simulate(&dir, &cfg, "s", "2", &[("DPINFER_TEST_FAULT", &spec)]);
    assert!(!o.status.success(), "{name}: {}", show(&o));
    assert!(
        !dir.join("s").exists() || std::fs::read_dir(dir.join("s")).unwrap().next().is_none(),
        "{name}: a shard was written"
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The pool's faults are tested in `dpinfer-workers` (`tests/pool.rs`: crash, hang, garbage,
/// wrong ids, wrong length, NaN, a worker replaced after a crash, the reject marker); here one
/// fault checks that its message reaches the user and that no shard is written.
#[test]
fn a_crashing_worker_names_the_row_exit_status_and_stderr() {
    let e = fault("crash", "batch = 8\nretries = 1");
    assert!(e.contains("row 37"), "{e}");
    assert!(e.contains("exit status: 3") || e.contains("exited"), "{e}");
    assert!(
        e.contains("injecting fault \"crash\" at row 37"),
        "stderr tail missing: {e}"
    );
}

#[test]
fn bad_command_configs_fail_with_one_clear_line() {
    let dir = fresh_dir("ext-bad");
    let cfg = config(&dir, "", SVT);
    let text = std::fs::read_to_string(&cfg).unwrap();
    for (from, to, expect) in [
        ("outputs = 50\n", "", "model.outputs"),
        (
            "dist = \"uniform\"",
            "dist = \"cauchy\"",
            "unknown dist \"cauchy\"",
        ),
        (
            "lo = -3.0\n",
            "lo = -3.0\nsd = 1.0\n",
            "`sd` does not apply to dist = \"uniform\"",
        ),
        (
            "kind = \"command\"",
            "kind = \"shell\"",
            "unknown model.kind",
        ),
        ("hi = 3.0", "hi = -4.0", "model.prior \"mu\" (uniform)"),
    ] {
        assert!(text.contains(from), "{from}");
        let p = write_config(&dir, "bad.toml", &text.replacen(from, to, 1));
        let o = dpinfer(&["run", p.to_str().unwrap()], &dir);
        assert!(!o.status.success());
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(expect), "{expect}: {e}");
        assert!(!dir.join("results").exists());
    }
    let p = write_config(
        &dir,
        "missing.toml",
        &text.replace(&worker().display().to_string(), "/nonexistent/simulator"),
    );
    let o = dpinfer(&["run", p.to_str().unwrap()], &dir);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("cannot start the external simulator"), "{e}");
}

/// Writes `cols` as an Arrow IPC file.
fn write_arrow(path: &Path, cols: Vec<(&str, arrow_array::ArrayRef)>) {
    let batch = arrow_array::RecordBatch::try_from_iter(cols).unwrap();
    let f = std::fs::File::create(path).unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(f, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
}

#[test]
fn observed_data_from_an_arrow_file_equals_the_csv() {
    let dir = fresh_dir("ext-arrow");
    let cfg = config(&dir, "batch = 32", SVT);
    let csv: Vec<f64> = std::fs::read_to_string(dir.join("obs.csv"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    write_arrow(
        &dir.join("obs.arrow"),
        vec![(
            "y",
            std::sync::Arc::new(arrow_array::Float64Array::from(csv)) as _,
        )],
    );
    let o = dpinfer(&["run", cfg.to_str().unwrap(), "--out", "from-csv"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("obs.csv", "obs.arrow");
    let a = write_config(&dir, "arrow.toml", &text);
    let o = dpinfer(&["run", a.to_str().unwrap(), "--out", "from-arrow"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("from-csv/samples.csv")).unwrap(),
        std::fs::read_to_string(dir.join("from-arrow/samples.csv")).unwrap()
    );
    // A text column is refused, naming it.
    write_arrow(
        &dir.join("obs.arrow"),
        vec![(
            "label",
            std::sync::Arc::new(arrow_array::StringArray::from(vec!["a"; 50])) as _,
        )],
    );
    let o = dpinfer(&["run", a.to_str().unwrap(), "--out", "bad"], &dir);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("column \"label\" has type Utf8, expected numbers"),
        "{e}"
    );
}

/// Issue 16: a built-in model's prior is overridden by `[[model.prior]]` tables. With a narrow
/// uniform prior every posterior sample lies inside it (the paper prior N(0, 10²) puts most
/// of its mass outside), the run says so in its heading, and an override that does not name
/// the model's parameters is refused.
#[test]
fn a_builtin_models_prior_is_overridden_by_declared_tables() {
    let dir = fresh_dir("ext-override");
    let text = |prior: &str| {
        format!(
            "[model]\nname = \"gaussian-mean\"\nn = 50\n\n{prior}\n\n[distance]\nkind = \
             \"rff-mmd\"\nfeatures = 20\n\n{SVT}\n\n[privacy]\nepsilon = 5.0\n\n[seeds]\nrun = \
             3\nnoise = 42\n"
        )
    };
    let cfg = write_config(
        &dir,
        "override.toml",
        &text("[[model.prior]]\nname = \"mu\"\ndist = \"uniform\"\nlo = 0.8\nhi = 1.3"),
    );
    let o = dpinfer(&["run", cfg.to_str().unwrap(), "--out", "r"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("gaussian-mean (declared prior)"),
        "{stdout}"
    );
    let samples = std::fs::read_to_string(dir.join("r/samples.csv")).unwrap();
    let mu: Vec<f64> = samples
        .lines()
        .skip(1)
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(mu.len(), 5);
    assert!(mu.iter().all(|m| (0.8..=1.3).contains(m)), "{mu:?}");

    let bad = write_config(
        &dir,
        "bad.toml",
        &text("[[model.prior]]\nname = \"theta\"\ndist = \"normal\"\nmean = 0.0\nsd = 1.0"),
    );
    let o = dpinfer(&["run", bad.to_str().unwrap()], &dir);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("declares the parameters [\"theta\"]") && err.contains("[\"mu\"]"),
        "{err}"
    );
}

/// Issue 16: `[model.summary]` of a command model. A library summary (the mean of the 50
/// outputs clipped to [−3, 5]) has the proven replace-one L2 sensitivity 8/50 = 0.16, which
/// the ledger uses instead of the clip C = 1 and labels as proven; a `kind = "simulator"`
/// summary with a declared sensitivity is used and labelled USER-DECLARED with its relation;
/// a declared sensitivity below the proven one, a summary under the MMD distance and a
/// declared sensitivity without its relation are refused.
#[test]
fn declared_summaries_put_a_proven_or_a_labelled_sensitivity_in_the_ledger() {
    let dir = fresh_dir("ext-summary");
    let with = |summary: &str, distance: &str| -> PathBuf {
        let c = config(
            &dir,
            &format!("batch = 16\n\n[model.summary]\n{summary}"),
            SVT,
        );
        let text = std::fs::read_to_string(&c)
            .unwrap()
            .replace("kind = \"rff-mmd\"\nfeatures = 20", distance);
        write_config(&dir, "ext.toml", &text)
    };
    let l2 = "kind = \"l2\"\nclip = 1.0";
    let run = |c: &Path, out: &str| dpinfer(&["run", c.to_str().unwrap(), "--out", out], &dir);

    let o = run(&with("kind = \"mean\"\nlo = -3.0\nhi = 5.0", l2), "mean");
    assert!(o.status.success(), "{}", show(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("sensitivity = 0.16 "), "{s}");
    assert!(s.contains("neighbouring: replace-one\n"), "{s}");
    assert!(
        s.contains("; replace-one (one observation of Y* changed; Δ proven"),
        "{s}"
    );
    // The pairs table holds θ and the 1-value summary.
    let o = dpinfer(
        &[
            "export",
            dir.join("mean/pairs-gen000.dpshard").to_str().unwrap(),
            "--out",
            dir.join("mean.arrow").to_str().unwrap(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", show(&o));

    let o = run(
        &with(
            "kind = \"simulator\"\nsensitivity = 0.01\nrelation = \"add-remove\"",
            l2,
        ),
        "user",
    );
    assert!(o.status.success(), "{}", show(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("sensitivity = 0.01 "), "{s}");
    assert!(s.contains("neighbouring: add/remove\n"), "{s}");
    assert!(s.contains("; USER-DECLARED add/remove"), "{s}");

    // Without a summary table the clip is the sensitivity (any pair of data sets).
    let o = run(&with("kind = \"simulator\"", l2), "plain");
    assert!(o.status.success(), "{}", show(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("sensitivity = 1 "), "{s}");
    assert!(s.contains("Δ = C for any pair of data sets"), "{s}");

    for (summary, distance, want) in [
        (
            "kind = \"mean\"\nlo = -3.0\nhi = 5.0\nsensitivity = 0.1",
            l2,
            "below the proven replace-one L2 sensitivity 0.16",
        ),
        (
            "kind = \"mean\"\nlo = -3.0\nhi = 5.0",
            "kind = \"rff-mmd\"\nfeatures = 20",
            "model.summary needs distance.kind = \"l2\"",
        ),
        (
            "kind = \"simulator\"\nsensitivity = 0.01",
            l2,
            "say under which neighbouring relation it holds",
        ),
        (
            "kind = \"quantiles\"\nlo = 1.0\nhi = -1.0\nlevels = [0.5]",
            l2,
            "model.summary (quantiles)",
        ),
    ] {
        let o = run(&with(summary, distance), "bad");
        assert!(!o.status.success(), "{summary}: {}", show(&o));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want), "{summary}: {e}");
    }
}

/// Copies a committed Parquet fixture (written by pyarrow, `scripts/make_parquet_fixtures.py`)
/// next to a config and returns the config reading it.
fn parquet_config(dir: &Path, cfg: &Path, fixture: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(fixture);
    std::fs::copy(src, dir.join(fixture)).unwrap();
    let text = std::fs::read_to_string(cfg)
        .unwrap()
        .replace("obs.csv", fixture);
    write_config(dir, &format!("{fixture}.toml"), &text)
}

/// Issue 16, feature `parquet`: observed data from Parquet files written by pyarrow (float64
/// with snappy, float32 with zstd) give the same run, bit for bit, as the same values in CSV;
/// a file that is not Parquet is refused, naming it.
#[cfg(feature = "parquet")]
#[test]
fn observed_data_from_parquet_files_equals_the_csv() {
    let dir = fresh_dir("ext-parquet");
    let cfg = config(&dir, "batch = 32", SVT);
    let o = dpinfer(&["run", cfg.to_str().unwrap(), "--out", "from-csv"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let want = std::fs::read_to_string(dir.join("from-csv/samples.csv")).unwrap();
    for fixture in ["obs-snappy.parquet", "obs-zstd.parquet"] {
        let c = parquet_config(&dir, &cfg, fixture);
        let out = format!("from-{fixture}");
        let o = dpinfer(&["run", c.to_str().unwrap(), "--out", &out], &dir);
        assert!(o.status.success(), "{fixture}: {}", show(&o));
        assert_eq!(
            std::fs::read_to_string(dir.join(&out).join("samples.csv")).unwrap(),
            want,
            "{fixture}"
        );
    }
    std::fs::write(dir.join("obs-snappy.parquet"), b"y\n1.0\n").unwrap();
    let c = write_config(
        &dir,
        "bad.toml",
        &std::fs::read_to_string(&cfg)
            .unwrap()
            .replace("obs.csv", "obs-snappy.parquet"),
    );
    let o = dpinfer(&["run", c.to_str().unwrap(), "--out", "bad"], &dir);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("obs-snappy.parquet is not a Parquet file"),
        "{e}"
    );
}

/// Without the `parquet` feature a `.parquet` data file is refused with one line saying how
/// to get Parquet support.
#[cfg(not(feature = "parquet"))]
#[test]
fn a_parquet_data_file_without_the_feature_says_how_to_enable_it() {
    let dir = fresh_dir("ext-no-parquet");
    let cfg = config(&dir, "batch = 32", SVT);
    let c = parquet_config(&dir, &cfg, "obs-snappy.parquet");
    let o = dpinfer(&["run", c.to_str().unwrap()], &dir);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("built without Parquet support"), "{e}");
    assert!(e.contains("--features parquet"), "{e}");
}

/// A declared prior never weakens a release's privacy checks, which depend on the model's
/// statistic, not its prior: an overridden linear-regression still refuses a Laplace
/// sensitivity below its proven bound, and an overridden SIR still takes the binomial
/// infection-curve release (and runs).
#[test]
fn a_declared_prior_keeps_the_release_checks_of_the_builtin_model() {
    let dir = fresh_dir("ext-override-release");
    let normals: String = ["beta0", "beta1", "beta2"]
        .iter()
        .map(|n| {
            format!("[[model.prior]]\nname = \"{n}\"\ndist = \"normal\"\nmean = 0.0\nsd = 2.0\n")
        })
        .collect();
    let lr = write_config(
        &dir,
        "lr.toml",
        &format!(
            "[model]\nname = \"linear-regression\"\n{normals}\n[distance]\nkind = \"l2\"\n\n\
             [sampler]\nkind = \"smc-abc\"\npairs = 200\nparticles = 20\ngenerations = 2\n\n\
             [privacy]\nepsilon = 10.0\nrelease = \"laplace\"\nrelease_sensitivity = 1e-6\n\n\
             [seeds]\nrun = 1\nnoise = 42\n"
        ),
    );
    let o = dpinfer(&["run", lr.to_str().unwrap(), "--out", "lr"], &dir);
    assert!(!o.status.success(), "{}", show(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("below the regression statistic's"), "{e}");

    let sir = write_config(
        &dir,
        "sir.toml",
        "[model]\nname = \"sir\"\n[[model.prior]]\nname = \"beta\"\ndist = \"uniform\"\nlo = 0.2\n\
         hi = 1.0\n[[model.prior]]\nname = \"gamma\"\ndist = \"uniform\"\nlo = 0.01\nhi = 0.3\n\n\
         [distance]\nkind = \"l2\"\n\n[sampler]\nkind = \"smc-abc\"\nparticles = 30\nalpha = 0.5\n\
         generations = 2\nsimulations = 2000\n\n[privacy]\nepsilon = 10.0\nrelease = \
         \"binomial-curve\"\n\n[seeds]\nrun = 1\nnoise = 42\n",
    );
    let o = dpinfer(&["run", sir.to_str().unwrap(), "--out", "sir"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("sir (declared prior)"), "{s}");
    assert!(s.contains("binomial infection-curve release"), "{s}");
    let samples = std::fs::read_to_string(dir.join("sir/samples.csv")).unwrap();
    for l in samples.lines().skip(1) {
        let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
        assert!(
            (0.2..=1.0).contains(&v[0]) && (0.01..=0.3).contains(&v[1]),
            "{l}"
        );
    }
}
