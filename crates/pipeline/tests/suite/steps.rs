//! The steps of a sharded run (`simulate_shard` on any number of machines → merge →
//! `private_step`) give exactly the release of one whole `run`, through the library alone; the
//! restart-safe ledger reproduces a release and refuses a changed input.

use std::path::{Path, PathBuf};

use dpinfer_ledger::files::Replace;
use dpinfer_ledger::shard;
use dpinfer_pipeline::Config;
use dpinfer_pipeline::Observer;
use dpinfer_pipeline::run::{private_step, run, run_with, simulate_shard};
use std::sync::{Arc, Mutex};

/// An observer that records the progress bars started (the public step starts "simulating
/// pairs").
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl Observer for Seen {
    fn note(&self, _: &str) {}
    fn start(&self, what: &str, _: u64) {
        self.0.lock().unwrap().push(what.to_string());
    }
}

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
    let seen = Arc::new(Seen::default());
    let observer: Arc<dyn Observer> = seen.clone();
    let first = run_with(&cfg, &dir, 1, &observer).unwrap().close().unwrap();
    assert!(!first.reproduced);
    assert_eq!(seen.0.lock().unwrap().as_slice(), ["simulating pairs"]);
    seen.0.lock().unwrap().clear();
    // Issue 31, item 6: the rerun takes the folder's own table; nothing is simulated.
    let again = run_with(&cfg, &dir, 2, &observer).unwrap().close().unwrap();
    assert!(
        again.reproduced,
        "the second run must reproduce the stored release"
    );
    assert_eq!(first.samples, again.samples);
    // Another budget on the same folder: drawing again would spend a second budget.
    let other = config("kind = \"svt-abc\"\npairs = 400\nepsilon_abc = 0.25\nc = 10");
    let e = run_with(&other, &dir, 1, &observer)
        .map(|_| ())
        .unwrap_err();
    let msg = format!("{e:#}");
    assert!(msg.contains("refus"), "{msg}");
    assert_eq!(
        seen.0.lock().unwrap().as_slice(),
        &[] as &[String],
        "a rerun simulated the public step"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// [`config`] with the `l2` distance (the table's rows are θ and the 300 raw observations)
/// and `extra` lines in `[distance]`, `[seeds] run = seed`.
fn l2_config(sampler: &str, distance: &str, seed: u64, n: usize) -> Config {
    let text = format!(
        r#"
        [model]
        name = "gaussian-mean"
        n = {n}

        [distance]
        kind = "l2"
        {distance}

        [sampler]
        {sampler}

        [privacy]
        epsilon = 1.0
        delta = 1e-6

        [seeds]
        run = {seed}
        noise = 5
        "#
    );
    Config::parse(&text, Path::new(".")).unwrap()
}

const REJECTION: &str = "kind = \"rejection\"\npairs = 300\naccept = 20";
const SVT_L2: &str = "kind = \"svt-abc\"\npairs = 300\nepsilon_abc = 0.5\nc = 10";

/// Issue 31, item 6: the public table is fingerprinted by what determines it. A non-private
/// run's table (no clip) serves a private step with a clip, and one of another ε; the release
/// is exactly the one a whole private run draws. Before, the clip entered the table's hash
/// and `private_step` refused the table as "simulated for a different configuration".
#[test]
fn a_non_private_runs_table_serves_a_private_step_of_any_clip_and_budget() {
    let dir = scratch("reuse");
    let plain = l2_config(REJECTION, "", 2026, 300);
    run(&plain, &dir.join("plain"), 1).unwrap().close().unwrap();
    let table = dir.join("plain").join(dpinfer_pipeline::run::PAIRS_FILE);
    for (k, (distance, eps)) in [("clip = 40.0", 1.0), ("clip = 30.0", 2.0)]
        .into_iter()
        .enumerate()
    {
        let mut private = l2_config(SVT_L2, distance, 2026, 300);
        private.privacy.epsilon = eps;
        let steps = private_step(&private, &table, &dir.join(format!("step{k}")))
            .unwrap()
            .close()
            .unwrap();
        let whole = run(&private, &dir.join(format!("whole{k}")), 1)
            .unwrap()
            .close()
            .unwrap();
        assert!(!steps.samples.is_empty());
        assert_eq!(steps.samples, whole.samples, "{distance}");
        assert_eq!(steps.ledger, whole.ledger, "{distance}");
        // The whole run's own table is the non-private run's, byte for byte.
        assert_eq!(
            std::fs::read(
                dir.join(format!("whole{k}"))
                    .join(dpinfer_pipeline::run::PAIRS_FILE)
            )
            .unwrap(),
            std::fs::read(&table).unwrap()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 31, item 6: a table of another public step is refused with a data error that names
/// what differs (run seed, pair count, row widths, or the model's settings); nothing is
/// written.
#[test]
fn an_incompatible_table_is_refused_naming_what_differs() {
    let dir = scratch("incompatible");
    let plain = l2_config(REJECTION, "", 2026, 300);
    run(&plain, &dir.join("plain"), 1).unwrap().close().unwrap();
    let table = dir.join("plain").join(dpinfer_pipeline::run::PAIRS_FILE);
    let mut other_prior = l2_config(SVT_L2, "clip = 40.0", 2026, 300);
    other_prior.model.prior_mean = Some(1.0);
    for (cfg, what) in [
        (
            l2_config(SVT_L2, "clip = 40.0", 7, 300),
            "run seed 2026 (this config: 7)",
        ),
        (
            l2_config(&SVT_L2.replace("300", "200"), "clip = 40.0", 2026, 300),
            "300 pairs (this config: sampler.pairs = 200)",
        ),
        (
            l2_config(SVT_L2, "clip = 40.0", 2026, 250),
            "summary (300) values (this config: 1 + 250)",
        ),
        (
            other_prior,
            "the model, prior, summary or distance features",
        ),
    ] {
        let out = dir.join("refused");
        let e = private_step(&cfg, &table, &out).map(|_| ()).unwrap_err();
        assert!(matches!(e, dpinfer_pipeline::Error::Data(_)), "{e:?}");
        let msg = format!("{e:#}");
        assert!(
            msg.contains("another public step") && msg.contains(what),
            "{msg}"
        );
        assert!(
            !out.exists(),
            "{what}: a refused table wrote {}",
            out.display()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Tables written before issue 31 carry the hash of the whole `[model]` and `[distance]`
/// tables (the clip included): they are still accepted by the config that wrote them.
#[test]
fn a_table_with_the_earlier_hash_is_still_accepted() {
    let dir = scratch("legacy");
    let cfg = l2_config(SVT_L2, "clip = 40.0", 2026, 300);
    assert_ne!(cfg.public_hash(), cfg.legacy_public_hash());
    run(&cfg, &dir.join("whole"), 1).unwrap().close().unwrap();
    let (mut h, rows) =
        shard::read(&dir.join("whole").join(dpinfer_pipeline::run::PAIRS_FILE)).unwrap();
    assert_eq!(h.config_hash, cfg.public_hash());
    h.config_hash = cfg.legacy_public_hash();
    let old = dir.join("old.dpshard");
    shard::write_atomic(&old, &h, &rows, Replace::Owned).unwrap();
    let step = private_step(&cfg, &old, &dir.join("step")).unwrap().close();
    assert!(step.is_ok(), "{step:?}");
    // A configuration without the left-out keys hashes as before.
    let plain = l2_config(REJECTION, "", 2026, 300);
    assert_eq!(plain.public_hash(), plain.legacy_public_hash());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 31, item 6: on a privatized statistic the public replica's noise is in every row of
/// a sharded SMC-ABC table, so its parameters (from ε) enter the table's hash: a table of
/// another ε is refused (before, the hash left the replica out and the tables mixed). Without
/// a release the hash is the config's.
#[test]
fn the_release_replica_enters_a_privatized_smc_tables_hash() {
    use dpinfer_pipeline::run::pairs_public;
    let text = |eps: f64, release: &str| {
        format!(
            r#"
            [model]
            name = "linear-regression"

            [distance]
            kind = "l2"

            [sampler]
            kind = "smc-abc"
            pairs = 400
            particles = 40
            generations = 2

            [privacy]
            epsilon = {eps}
            {release}

            [seeds]
            run = 2024
            noise = 3
            "#
        )
    };
    let laplace = "release = \"laplace\"\nrelease_lo = -1.0\nrelease_hi = 1.0";
    let hash = |eps: f64, release: &str| {
        let cfg = Config::parse(&text(eps, release), Path::new(".")).unwrap();
        (
            pairs_public(&cfg, 0, None).unwrap().config_hash,
            cfg.public_hash(),
        )
    };
    let (a, plain_a) = hash(10.0, laplace);
    let (b, plain_b) = hash(5.0, laplace);
    assert_eq!(
        plain_a, plain_b,
        "ε alone is not in the config's public hash"
    );
    assert_ne!(a, b, "tables of two replicas share a hash");
    let (c, plain_c) = hash(10.0, "");
    assert_eq!(c, plain_c);
}
