//! The steps of a sharded run (`simulate_shard` on any number of machines → merge →
//! `private_step`) give exactly the release of one whole `run`, through the library alone; the
//! restart-safe ledger reproduces a release and refuses a changed input.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use dpinfer_ledger::files::Replace;
use dpinfer_ledger::shard;
use dpinfer_pipeline::Config;
use dpinfer_pipeline::run::{private_step, run, simulate_shard};

/// A fresh folder under the system temp dir, unique per test and process.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dpinfer-pipeline-steps-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn config(sampler: &str) -> Config {
    let text = format!(
        r#"
        [model]
        name = "gaussian-mean"
        n = 300

        [sampler]
        {sampler}

        [privacy]
        epsilon = 1.0
        delta = 1e-6

        [seeds]
        run = 2026
        noise = 5
        "#
    );
    Config::parse(&text, Path::new(".")).unwrap()
}

/// Shards `0..n` into `dir/shards`, merged into `dir/merged.dpshard`.
fn sharded_table(cfg: &Config, dir: &Path, n: u32) -> PathBuf {
    let shards = dir.join("shards");
    for i in 0..n {
        // any thread count gives the same rows
        let threads = 1 + i as usize % 2;
        let (path, start, end) = simulate_shard(cfg, (i, n), &shards, 0, None, threads).unwrap();
        assert!(path.starts_with(&shards) && start < end);
    }
    let (h, rows) = shard::merge_dir(&shards, 0).unwrap();
    let merged = dir.join("merged.dpshard");
    shard::write_atomic(&merged, &h, &rows, Replace::Owned).unwrap();
    merged
}

#[test]
fn sharded_steps_release_exactly_what_one_run_releases() {
    for (name, sampler) in [
        (
            "svt",
            "kind = \"svt-abc\"\npairs = 600\nepsilon_abc = 0.2\nc = 25",
        ),
        (
            "soft",
            "kind = \"soft-abc\"\npairs = 600\nepsilon_abc = 0.05",
        ),
        (
            "rejection",
            "kind = \"rejection\"\npairs = 600\naccept = 30",
        ),
    ] {
        let cfg = config(sampler);
        let dir = scratch(name);
        let whole = run(&cfg, &dir.join("whole"), 0).unwrap().close().unwrap();
        let merged = sharded_table(&cfg, &dir, 3);
        let steps = private_step(&cfg, &merged, &dir.join("steps"))
            .unwrap()
            .close()
            .unwrap();
        assert!(!whole.samples.is_empty(), "{name}: nothing released");
        assert_eq!(whole.samples, steps.samples, "{name}: samples differ");
        assert_eq!(whole.weights, steps.weights, "{name}: weights differ");
        assert_eq!(whole.ledger, steps.ledger, "{name}: claims differ");
        assert_eq!(whole.facts, steps.facts, "{name}: facts differ");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_release_is_reproduced_never_redrawn_and_a_changed_input_is_refused() {
    let cfg = config("kind = \"svt-abc\"\npairs = 400\nepsilon_abc = 0.2\nc = 10");
    let dir = scratch("ledger");
    let first = run(&cfg, &dir, 1).unwrap().close().unwrap();
    assert!(!first.reproduced);
    let again = run(&cfg, &dir, 2).unwrap().close().unwrap();
    assert!(
        again.reproduced,
        "the second run must reproduce the stored release"
    );
    assert_eq!(first.samples, again.samples);
    // Another budget on the same folder: drawing again would spend a second budget.
    let other = config("kind = \"svt-abc\"\npairs = 400\nepsilon_abc = 0.25\nc = 10");
    let e = run(&other, &dir, 1).map(|_| ()).unwrap_err();
    let msg = format!("{e:#}");
    assert!(msg.contains("refus"), "{msg}");
    std::fs::remove_dir_all(&dir).unwrap();
}
