//! External simulators (`[model] kind = "command"`) from the command line, with the compiled
//! reference worker `examples/reference_worker.rs` (no Python needed): shard tables independent
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
use common::{assert_file_count, dpinfer, fresh_dir, show, write_config};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The compiled reference worker (built with the package's examples by `cargo test`).
fn worker() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let p = dir
        .join("examples")
        .join(format!("reference_worker{}", std::env::consts::EXE_SUFFIX));
    assert!(
        p.exists(),
        "{} is missing: run `cargo test -p dpinfer-cli` (which builds the examples) or \
         `cargo build -p dpinfer-cli --example reference_worker` first",
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
    // Issue 31, item 5: the label is on the neighbouring line and in summary.json's ledger,
    // where a program reading the claim finds it (before: "neighbouring: add/remove", the
    // label only at the end of the mechanism text).
    assert!(
        s.contains("neighbouring: USER-DECLARED add/remove (one observation of Y*"),
        "{s}"
    );
    assert!(s.contains("; USER-DECLARED add/remove"), "{s}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("user/summary.json")).unwrap())
            .unwrap();
    let privacy = &json["privacy"];
    assert!(
        privacy["neighbouring"]
            .as_str()
            .unwrap()
            .starts_with("USER-DECLARED add/remove"),
        "{privacy}"
    );
    assert_eq!(privacy["claim"]["relation"], "add_remove", "{privacy}");

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

/// Issue 31, item 1: SMC-ABC with a command model sends whole rounds of proposals to the
/// worker pool — request batches of `[model] batch` rows on `--threads` workers — and its
/// result does not depend on either (one stream per particle). Before, it sent one θ per
/// request to one worker (every logged batch had 1 row, every one from worker 0).
#[test]
fn smc_abc_with_a_command_model_batches_over_the_workers() {
    let dir = fresh_dir("ext-smc-batched");
    const SMC: &str = "[sampler]\nkind = \"smc-abc\"\nparticles = 60\ngenerations = 3\nalpha = 0.5";
    let runs: Vec<(String, Vec<(usize, usize)>)> = [("batch = 16", "2"), ("batch = 7", "1")]
        .iter()
        .enumerate()
        .map(|(i, (batch, threads))| {
            let cfg = config(&dir, batch, SMC);
            let log = dir.join(format!("batches-{i}.txt"));
            let out = format!("smc-{i}");
            let o = run_env(
                &[
                    "run",
                    cfg.to_str().unwrap(),
                    "--out",
                    &out,
                    "--threads",
                    threads,
                ],
                &dir,
                &[("DPINFER_TEST_BATCH_LOG", log.to_str().unwrap())],
            );
            assert!(o.status.success(), "{}", show(&o));
            let batches = std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .map(|l| {
                    let (w, r) = l.split_once(' ').unwrap();
                    (w.parse().unwrap(), r.parse().unwrap())
                })
                .collect();
            let samples = std::fs::read_to_string(dir.join(out).join("samples.csv")).unwrap();
            (samples, batches)
        })
        .collect();
    let (two, one) = (&runs[0], &runs[1]);
    // after the random-feature setup's one data set, the first round of generation 0 is the
    // whole population: 60 rows in 4 batches of 15 (≤ 16, a multiple of 2 workers)
    assert!(
        two.1.iter().all(|&(w, r)| w < 2 && (1..=16).contains(&r)),
        "{:?}",
        two.1
    );
    assert_eq!(two.1[0].1, 1, "{:?}", two.1);
    assert_eq!(
        &two.1[1..5].iter().map(|b| b.1).collect::<Vec<_>>(),
        &[15; 4],
        "{:?}",
        two.1
    );
    assert!(
        two.1.iter().any(|b| b.0 == 0) && two.1.iter().any(|b| b.0 == 1),
        "{:?}",
        two.1
    );
    assert!(
        one.1.iter().all(|&(w, r)| w == 0 && (1..=7).contains(&r)),
        "{:?}",
        one.1
    );
    assert!(one.1.iter().filter(|b| b.1 > 1).count() > 10, "{:?}", one.1);
    // the same posterior bit for bit, whatever the workers and the batch size
    assert_eq!(two.0, one.0);
    assert!(two.0.lines().count() == 61, "{}", two.0);

    // On a Laplace-released statistic the public replica is applied to each batched row from
    // the row's own stream: again independent of workers and batch size.
    let released: Vec<String> = [("batch = 16", "2"), ("batch = 7", "1")]
        .iter()
        .enumerate()
        .map(|(i, (batch, threads))| {
            let cfg = config(&dir, batch, SMC);
            let text = std::fs::read_to_string(&cfg).unwrap().replace(
                "[privacy]\nepsilon = 5.0",
                "[privacy]\nepsilon = 5.0\nrelease = \"laplace\"\nrelease_sensitivity = 0.5\n\
                 release_lo = -10.0\nrelease_hi = 10.0",
            );
            std::fs::write(&cfg, text).unwrap();
            let out = format!("released-{i}");
            let o = run_env(
                &[
                    "run",
                    cfg.to_str().unwrap(),
                    "--out",
                    &out,
                    "--threads",
                    threads,
                ],
                &dir,
                &[],
            );
            assert!(o.status.success(), "{}", show(&o));
            let s = String::from_utf8_lossy(&o.stdout);
            assert!(s.contains("Laplace"), "{}", show(&o));
            // item 5: no bound is proven for a command model's statistic
            assert!(
                s.contains(
                    "neighbouring: USER-DECLARED replace-one (one record replaced; \
                     privacy.release_sensitivity"
                ),
                "{}",
                show(&o)
            );
            std::fs::read_to_string(dir.join(out).join("samples.csv")).unwrap()
        })
        .collect();
    assert_eq!(released[0], released[1]);
    assert_ne!(released[0], one.0);
}

/// Issue 32: the pair plot of a command model said "command posterior, … (true θ in red)":
/// the title names the model by its `[model] name`, and mentions red only when the model has
/// a true θ (a command model has none). The printed file count is the folder's.
#[test]
fn a_command_models_plots_name_it_and_promise_no_true_theta() {
    let dir = fresh_dir("ext-titles");
    let cfg = config(&dir, "", SVT);
    // A second parameter (the reference worker simulates from mu alone) for a pair plot.
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "[data]",
        "[[model.prior]]\nname = \"sigma\"\ndist = \"uniform\"\nlo = 0.5\nhi = 2.0\n\n[data]",
    );
    std::fs::write(&cfg, text).unwrap();
    let o = dpinfer(&["run", cfg.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let out = dir.join("results");
    let pairs = std::fs::read_to_string(out.join("pairs.svg")).unwrap();
    assert!(pairs.contains("my-gaussian posterior, svt-abc"), "{pairs}");
    assert!(
        !pairs.contains("in red") && !pairs.contains("command posterior"),
        "{pairs}"
    );
    assert_file_count(&String::from_utf8_lossy(&o.stdout), &out);
}

/// Exactly one `error:` line — the last — and no run of 20 digits (a number printed in full
/// decimal): the contract of a failed invocation (issue 26, item 9).
fn one_clear_error(o: &Output) -> String {
    let o = common::no_panic(o.clone());
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    let errors = e.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(errors, 1, "{e}");
    assert!(
        e.trim_end().lines().last().unwrap().starts_with("error: "),
        "{e}"
    );
    assert!(!e.contains("00000000000000000000"), "{e}");
    e
}

/// An Arrow IPC file of `values` (an int64 column with one null, so the values buffer sits
/// after a validity buffer), with the values buffer's declared length set to 2⁴⁰ when
/// `forge` is set: the forgery arrow's own reader panics on (issue 26, item 4).
fn int64_arrow(values: usize, forge: bool, stream: bool) -> Vec<u8> {
    let col: arrow_array::Int64Array = (0..values).map(|i| (i != 1).then_some(i as i64)).collect();
    let batch = arrow_array::RecordBatch::try_from_iter([(
        "y",
        std::sync::Arc::new(col) as arrow_array::ArrayRef,
    )])
    .unwrap();
    let mut b = if stream {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        w.into_inner().unwrap()
    } else {
        let mut w = arrow_ipc::writer::FileWriter::try_new(Vec::new(), &batch.schema()).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        w.into_inner().unwrap()
    };
    if forge {
        // The flatbuffer entry of the values buffer: an 8-aligned offset below 256, then
        // the length 8 · values.
        let want = i64::try_from(8 * values).unwrap();
        let at = (0..b.len() - 16)
            .step_by(4)
            .find(|&i| {
                let w = |j: usize| i64::from_le_bytes(b[j..j + 8].try_into().unwrap());
                w(i + 8) == want && (0..256).contains(&w(i)) && w(i) % 8 == 0
            })
            .expect("the values buffer entry");
        b[at + 8..at + 16].copy_from_slice(&(1_i64 << 40).to_le_bytes());
    }
    b
}

/// Issue 26, items 4 and 5: a `.arrow` data file with a forged buffer length, a `.arrow`
/// link to a device and a `.arrow` file above `DPINFER_MAX_INPUT_BYTES` are refused with one
/// clear line (before: a panic, exit 101; the device was read; the cap was ignored).
#[test]
fn hostile_arrow_data_files_are_refused_with_one_line() {
    let dir = fresh_dir("ext-arrow-hostile");
    let cfg = config(&dir, "", SVT);
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("obs.csv", "obs.arrow");
    let a = write_config(&dir, "arrow.toml", &text);
    let run = |env: &[(&str, &str)]| {
        let o = run_env(&["run", a.to_str().unwrap(), "--out", "out"], &dir, env);
        let e = one_clear_error(&o);
        assert!(!dir.join("out").exists(), "{e}");
        e
    };
    std::fs::write(dir.join("obs.arrow"), int64_arrow(50, true, false)).unwrap();
    let e = run(&[]);
    assert!(e.contains("outside its body"), "{e}");
    std::fs::write(dir.join("obs.arrow"), int64_arrow(50, false, false)).unwrap();
    let e = run(&[("DPINFER_MAX_INPUT_BYTES", "100")]);
    assert!(e.contains("DPINFER_MAX_INPUT_BYTES"), "{e}");
    std::fs::remove_file(dir.join("obs.arrow")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("obs.arrow")).unwrap();
    let e = run(&[]);
    assert!(e.contains("device"), "{e}");
}

/// Issue 26, item 4: a worker whose answer carries a forged buffer length is a worker fault
/// (retried, then named), not a panic of a pool thread with a backtrace.
#[test]
fn a_forged_worker_answer_is_a_worker_error_without_a_panic() {
    let dir = fresh_dir("ext-forged-answer");
    std::fs::write(dir.join("answer.arrows"), int64_arrow(50, true, true)).unwrap();
    let cfg = config(&dir, "retries = 1\ntimeout = 20.0", SVT);
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        &format!("command = [{:?}]", worker().display().to_string()),
        "command = [\"sh\", \"-c\", \"cat answer.arrows; sleep 30\"]",
    );
    let p = write_config(&dir, "forged.toml", &text);
    let t = std::time::Instant::now();
    let o = run_env(&["run", p.to_str().unwrap(), "--out", "out"], &dir, &[]);
    let e = one_clear_error(&o);
    assert!(e.contains("outside its body"), "{e}");
    assert!(!e.contains("panicked") && !e.contains("backtrace"), "{e}");
    assert!(t.elapsed() < core::time::Duration::from_secs(20), "{e}");
}

/// Issue 26, items 6 and 7: counts above their documented maximum and subnormal scales of a
/// declared prior are refused at config time, naming the key (and the bound).
#[test]
fn unbounded_counts_and_subnormal_prior_scales_are_refused_at_config_time() {
    let dir = fresh_dir("ext-bounds");
    let cfg = config(&dir, "", SVT);
    let text = std::fs::read_to_string(&cfg).unwrap();
    let uniform = "dist = \"uniform\"\nlo = -3.0\nhi = 3.0\n";
    let many: String = (0..2000)
        .map(|i| format!("[[model.prior]]\nname = \"p{i}\"\n{uniform}\n"))
        .collect();
    let builtin = |prior: &str| {
        format!(
            "[model]\nname = \"gaussian-mean\"\nn = 50\n\n{prior}\n\n[distance]\nkind = \
             \"rff-mmd\"\nfeatures = 20\n\n{SVT}\n\n[privacy]\nepsilon = 5.0\n\n[seeds]\nrun = \
             1\nnoise = 42\n"
        )
    };
    for (name, t, expect) in [
        (
            "dirichlet",
            text.replace(uniform, "dist = \"dirichlet\"\nk = 1000000000\n"),
            "model.prior k = 1000000000 is above the supported maximum of 1000",
        ),
        (
            "tables",
            text.replace("[[model.prior]]", &format!("{many}[[model.prior]]")),
            "is above the supported maximum of 1000",
        ),
        (
            "retries",
            text.replace("outputs = 50", "outputs = 50\nretries = 1000000000"),
            "model.retries = 1000000000 is above the supported maximum of 100",
        ),
        (
            "command sd",
            text.replace(uniform, "dist = \"normal\"\nmean = 0.0\nsd = 1e-320\n"),
            "`sd` must be a finite, normal (not subnormal) number > 0, got 1e-320",
        ),
        (
            "override sd",
            builtin("[[model.prior]]\nname = \"mu\"\ndist = \"normal\"\nmean = 0.0\nsd = 1e-320"),
            "`sd` must be a finite, normal (not subnormal) number > 0, got 1e-320",
        ),
        (
            "prior_sd",
            builtin("").replace("n = 50", "n = 50\nprior_sd = 1e-320"),
            "model.prior_sd must be a finite, normal (not subnormal) number > 0, got 1e-320",
        ),
        (
            "gamma scale",
            text.replace(uniform, "dist = \"gamma\"\nshape = 2.0\nscale = 1e-320\n"),
            "`scale` must be a finite, normal (not subnormal) number > 0, got 1e-320",
        ),
    ] {
        let p = write_config(&dir, "bad.toml", &t);
        let t0 = std::time::Instant::now();
        let o = run_env(&["run", p.to_str().unwrap(), "--out", "out"], &dir, &[]);
        let e = one_clear_error(&o);
        assert!(e.contains(expect), "{name}: {e}");
        assert!(t0.elapsed() < core::time::Duration::from_secs(10), "{name}");
        assert!(!dir.join("out").exists(), "{name}");
    }
}

/// Issue 26, item 9: extreme numbers in config keys and flags are printed in shortest
/// round-trip form (`1e308`, not 309 digits); a lag above the observations names `lags` and
/// its bound; a worker failure in the random-feature setup is one `error:` line.
#[test]
fn extreme_numbers_and_setup_failures_give_one_short_line() {
    let dir = fresh_dir("ext-messages");
    let cfg = config(&dir, "", SVT);
    let text = std::fs::read_to_string(&cfg).unwrap();
    let cases = [
        (
            text.replace("epsilon_abc = 0.2", "epsilon_abc = 1e308"),
            "sampler.epsilon_abc = 1e308",
        ),
        (
            text.replace("lo = -3.0\nhi = 3.0", "lo = -1e308\nhi = 1e308"),
            "1e308",
        ),
        (
            text.replace("outputs = 50", "outputs = 50\ntimeout = 1e308"),
            "model.timeout must be in (0, 86400] seconds, got 1e308",
        ),
        (
            text.replace(
                "dist = \"uniform\"\nlo = -3.0\nhi = 3.0",
                "dist = \"gamma\"\nshape = 1e-300\nrate = 1.0",
            ),
            "1e-300",
        ),
        (
            text.replace("[data]", "[model.summary]\nkind = \"lag-products\"\nlags = [1000000000]\nlo = -5.0\nhi = 5.0\n\n[data]")
                .replace("kind = \"rff-mmd\"\nfeatures = 20", "kind = \"l2\"\nclip = 1.0"),
            "model.summary.lags: lag 1000000000 is not below the 50 observations",
        ),
    ];
    for (t, expect) in cases {
        let p = write_config(&dir, "bad.toml", &t);
        let o = run_env(&["run", p.to_str().unwrap(), "--out", "out"], &dir, &[]);
        let e = one_clear_error(&o);
        assert!(e.contains(expect), "{expect}: {e}");
    }
    let o = run_env(
        &[
            "account",
            "max-steps",
            "--sampler",
            "penalty",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
            "--n",
            "100",
            "--tau",
            "1e-320",
        ],
        &dir,
        &[],
    );
    let e = one_clear_error(&o);
    assert!(e.contains("tau = 1e-320"), "{e}");
    // The worker fails on the random-feature setup's one simulation (row 0): one line, with
    // the worker's own text (it was a second `error:` line before).
    let o = run_env(
        &["run", cfg.to_str().unwrap(), "--out", "out"],
        &dir,
        &[("DPINFER_TEST_FAULT", "crash@0")],
    );
    let e = one_clear_error(&o);
    assert!(
        e.contains("error: public random-feature setup: external simulator"),
        "{e}"
    );
    assert!(e.contains("exit status: 3"), "{e}");
}

/// Issue 26, item 8: a worker that forks a child holding its pipes leaves nothing running
/// after the run (each worker is its own process group, stopped as a whole).
#[test]
fn a_workers_forked_child_does_not_outlive_the_run() {
    let dir = fresh_dir("ext-fork");
    let cfg = config(&dir, "", SVT);
    let w = worker().display().to_string();
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        &format!("command = [{w:?}]"),
        &format!("command = [\"sh\", \"-c\", \"sleep 1000 & echo $! >> children; exec {w}\"]"),
    );
    let p = write_config(&dir, "fork.toml", &text);
    let o = run_env(&["run", p.to_str().unwrap(), "--out", "out"], &dir, &[]);
    assert!(o.status.success(), "{}", show(&o));
    let pids = std::fs::read_to_string(dir.join("children")).unwrap();
    assert!(!pids.trim().is_empty());
    for pid in pids.split_whitespace() {
        assert!(!alive(pid), "the worker's child {pid} outlived the run");
    }
}

/// Whether process `pid` still runs (a zombie awaiting its reaper does not), within 2 s.
fn alive(pid: &str) -> bool {
    for _ in 0..200 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return false,
            Ok(s)
                if s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z')) =>
            {
                return false;
            }
            Ok(_) => std::thread::sleep(core::time::Duration::from_millis(10)),
        }
    }
    true
}

/// Issue 29: `dpinfer calibrate` on a command model — the replicates simulate through the
/// worker (the pairs table once, then one data set per replicate), the report names the
/// declared parameters (verdict line, `summary.json`, plot titles and files), and two shards
/// on one worker each merge into the summary of one run on two, byte for byte.
#[test]
fn a_command_model_is_calibrated_with_its_parameter_names() {
    let dir = fresh_dir("ext-calibrate");
    let svt = "[sampler]\nkind = \"svt-abc\"\npairs = 200\nepsilon_abc = 0.2\nc = 10\nclip = 0.5";
    let cfg = config(&dir, "", svt);
    // a second parameter the worker ignores: its posterior is its prior
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "[data]",
        "[[model.prior]]\nname = \"sigma\"\ndist = \"uniform\"\nlo = 0.5\nhi = 2.0\n\n[data]",
    );
    std::fs::write(&cfg, text).unwrap();
    let cal = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "calibrate",
            cfg.to_str().unwrap(),
            "--replicates",
            "40",
            "--draws",
            "4",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        dpinfer(&args, &dir)
    };
    let o = cal("one", &["--threads", "2"]);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", show(&o));
    let one = dir.join("one");
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(one.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["model"], "my-gaussian");
    assert_eq!(s["sampler"], "svt-abc");
    assert_eq!(s["epsilon"], 5.0);
    assert_eq!(s["parameters"], serde_json::json!(["mu", "sigma"]));
    assert_eq!(s["summary"]["replicates"], 40);
    // seeded: here the worst test is mu's (SVT-ABC's tolerance widens mu's posterior; sigma's
    // is its prior), printed by its name — before, as θ[0]
    let line = s["verdict_line"].as_str().unwrap();
    assert!(line.contains("(worst: mu, "), "{line}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(line) && !stdout.contains("θ["), "{stdout}");
    for name in ["mu", "sigma"] {
        let svg = std::fs::read_to_string(one.join(format!("ranks-{name}.svg"))).unwrap();
        assert!(
            svg.contains(&format!("SBC rank histogram of {name} ")),
            "{svg}"
        );
        let svg = std::fs::read_to_string(one.join(format!("ecdf-{name}.svg"))).unwrap();
        assert!(svg.contains(&format!("ECDF difference of {name}")), "{svg}");
    }

    for i in ["1", "0"] {
        let o = cal("two", &["--threads", "1", "--shard", i, "--shards", "2"]);
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", show(&o));
    }
    assert_eq!(
        std::fs::read(dir.join("two/summary.json")).unwrap(),
        std::fs::read(one.join("summary.json")).unwrap()
    );
}

/// Issue 31, item 6, through the command line with a command model whose every worker start
/// is counted (a wrapper appends a line to `starts`): a non-private run's table serves
/// `private-step` with a clip and a user-declared sensitivity (before: "simulated for a
/// different configuration"), without simulating; a rerun of a private `run` into its folder
/// reproduces the release, refuses an unfinished one and refuses another input — all three
/// without starting a worker (before: the whole public step ran again first).
#[test]
fn a_rerun_and_a_reused_table_start_no_simulation() {
    let dir = fresh_dir("ext-reuse");
    let w = worker().display().to_string();
    let base = std::fs::read_to_string(config(&dir, "", SVT))
        .unwrap()
        .replace(
            &format!("command = [{w:?}]"),
            &format!("command = [\"sh\", \"-c\", \"echo start >> starts; exec {w}\"]"),
        )
        .replace("kind = \"rff-mmd\"\nfeatures = 20", "kind = \"l2\"");
    let starts = || {
        std::fs::read_to_string(dir.join("starts"))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };
    let plain = write_config(
        &dir,
        "plain.toml",
        &base
            .replace(
                SVT,
                "[sampler]\nkind = \"rejection\"\npairs = 120\naccept = 10",
            )
            .replace(
                "[[model.prior]]",
                "[model.summary]\nkind = \"simulator\"\n\n[[model.prior]]",
            ),
    );
    let private_text = base
        .replace("kind = \"l2\"", "kind = \"l2\"\nclip = 1.0")
        .replace(
            "[[model.prior]]",
            "[model.summary]\nkind = \"simulator\"\nsensitivity = 0.01\nrelation = \"replace-one\"\n\n[[model.prior]]",
        )
        .replace("pairs = 120\nepsilon_abc = 0.2\nc = 5\nclip = 0.5", "pairs = 120\nepsilon_abc = 0.2\nc = 5");
    let private = write_config(&dir, "private.toml", &private_text);
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let o = dpinfer(&["run", &arg(&plain), "--out", "plain"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let after_plain = starts();
    assert!(after_plain > 0, "the public step starts workers");

    // The non-private run's table, for the private step with its clip and declared Δ.
    let table = dir.join("plain/pairs-gen000.dpshard");
    let o = dpinfer(
        &[
            "private-step",
            &arg(&private),
            "--pairs",
            &arg(&table),
            "--out",
            "step",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("USER-DECLARED replace-one"),
        "{}",
        show(&o)
    );
    assert_eq!(starts(), after_plain, "private-step simulated");

    // A whole private run simulates once; its release is the private step's.
    let o = dpinfer(&["run", &arg(&private), "--out", "whole"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let simulated = starts();
    assert!(simulated > after_plain);
    let release = std::fs::read(dir.join("whole/release.json")).unwrap();
    assert_eq!(
        release,
        std::fs::read(dir.join("step/release.json")).unwrap()
    );
    assert_eq!(
        std::fs::read(dir.join("whole/pairs-gen000.dpshard")).unwrap(),
        std::fs::read(&table).unwrap(),
        "the private run's table is the non-private run's"
    );

    // The rerun reproduces without a worker, and says so as before.
    let o = dpinfer(&["run", &arg(&private), "--out", "whole"], &dir);
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("stored release reproduced"),
        "{}",
        show(&o)
    );
    assert_eq!(
        std::fs::read(dir.join("whole/release.json")).unwrap(),
        release
    );
    assert_eq!(
        starts(),
        simulated,
        "the rerun simulated the public step again"
    );

    // Another input (another ε) into that folder: refused, nothing simulated.
    let other = write_config(
        &dir,
        "other.toml",
        &private_text.replace("epsilon = 5.0", "epsilon = 4.0"),
    );
    let o = dpinfer(&["run", &arg(&other), "--out", "whole"], &dir);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("different input"),
        "{}",
        show(&o)
    );
    assert_eq!(starts(), simulated, "a refused rerun simulated first");

    // An unfinished release (noise may have been drawn): refused, nothing simulated.
    let ledger = dir.join("whole/private-step.json");
    let l = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(&ledger, l.replace("\"released\"", "\"started\"")).unwrap();
    let o = dpinfer(&["run", &arg(&private), "--out", "whole"], &dir);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("did not finish"),
        "{}",
        show(&o)
    );
    assert_eq!(starts(), simulated, "a refused rerun simulated first");
}
