//! `[distance] kernel_version`: the random features' `sin`/`cos` version
//! (`dpinfer_distances::KernelVersion`). Version 1 is the default (every earlier seeded run
//! unchanged), version 2 changes only the last bits of the embeddings (the pairs table's
//! summary columns, never its θ columns), the version is recorded (fact `kernel_version`,
//! and a version other than 1 in the ledger's mechanism line), it enters the shard
//! fingerprint and the private step's input only when not 1 (a folder released under one
//! version refuses the other), and an unknown number is a clear config error naming the key.

use std::path::{Path, PathBuf};

use crate::common;

use common::{dpinfer, example, fresh_dir, refused, set, show, write_config};
use dpinfer_ledger::shard;

/// The ABCDP toy, 300 pairs of 1 000 observations, fixed (non-private) noise seed.
fn config(dir: &Path, name: &str, out: &Path, version: Option<&str>) -> PathBuf {
    let mut text = example("abcdp-toy.toml", out);
    text = set(&text, "sampler", "pairs", "300");
    text = set(&text, "model", "n", "1000");
    text = set(&text, "seeds", "noise", "7");
    if let Some(v) = version {
        text = set(&text, "distance", "kernel_version", v);
    }
    write_config(dir, name, &text)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn version_2_changes_only_the_embeddings_last_bits_and_is_recorded() {
    let dir = fresh_dir("kv");
    let runs: Vec<(PathBuf, std::process::Output)> = [None, Some("1"), Some("2")]
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let out = dir.join(format!("R{i}"));
            let c = config(&dir, &format!("c{i}.toml"), &out, *v);
            let o = dpinfer(&["run", c.to_str().unwrap()], &dir);
            assert!(o.status.success(), "{}", show(&o));
            (out, o)
        })
        .collect();
    let file = |i: usize, f: &str| std::fs::read(runs[i].0.join(f)).unwrap();
    // An explicit 1 is the default, byte for byte: pairs, samples, release.
    for f in ["pairs-gen000.dpshard", "samples.csv", "release.json"] {
        assert!(file(0, f) == file(1, f), "{f}");
    }
    // Version 2: the same θ draws, embeddings within 1e-14 of version 1's, some bits differ.
    let (h1, p1) = shard::read(&runs[0].0.join("pairs-gen000.dpshard")).unwrap();
    let (h2, p2) = shard::read(&runs[2].0.join("pairs-gen000.dpshard")).unwrap();
    assert_ne!(
        h1.config_hash, h2.config_hash,
        "version 2 is another public step"
    );
    assert_eq!(
        (h1.theta_dim, h1.out_dim, p1.len()),
        (h2.theta_dim, h2.out_dim, p2.len())
    );
    let (td, w) = (h1.theta_dim as usize, h1.row_len());
    let mut differ = 0;
    for (r1, r2) in p1.chunks_exact(w).zip(p2.chunks_exact(w)) {
        assert!(
            r1[..td]
                .iter()
                .zip(&r2[..td])
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        for (a, b) in r1[td..].iter().zip(&r2[td..]) {
            assert!((a - b).abs() <= 1e-14, "{a} vs {b}");
            differ += usize::from(a.to_bits() != b.to_bits());
        }
    }
    assert!(differ > 0, "version 2 must change some embedding bits");
    // Recorded: the fact in summary.json (1 by default), the ledger names version 2.
    for (i, want) in [(0, 1.0), (1, 1.0), (2, 2.0)] {
        let s = json(&runs[i].0.join("summary.json"));
        assert_eq!(s["facts"]["kernel_version"].as_f64(), Some(want), "{s}");
        let mech = s["privacy"]["mechanism"].as_str().unwrap().to_string();
        assert_eq!(mech.contains("kernel version 2"), i == 2, "{mech}");
        let printed = String::from_utf8_lossy(&runs[i].1.stdout).into_owned();
        assert!(
            printed.contains(&format!("kernel_version = {want}")),
            "{printed}"
        );
    }
    assert!(
        !json(&runs[0].0.join("release.json"))["ledger"]["mechanism"]
            .as_str()
            .unwrap()
            .contains("kernel version")
    );

    // A rerun of version 2 into version 1's folder (and back) is another input: refused,
    // nothing drawn; the same version reproduces.
    for (i, v) in [(0, "2"), (2, "1")] {
        let c = config(&dir, &format!("x{i}.toml"), &runs[i].0, Some(v));
        let o = refused(&["run", c.to_str().unwrap()], &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("different input"), "{}", show(&o));
    }
    let c = config(&dir, "again.toml", &runs[2].0, Some("2"));
    let o = dpinfer(&["run", c.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("reproduced"));
}

#[test]
fn unknown_kernel_version_and_l2_are_clear_errors() {
    let dir = fresh_dir("kv-bad");
    let c = config(&dir, "c.toml", &dir.join("R"), Some("3"));
    let o = refused(&["run", c.to_str().unwrap()], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("distance.kernel_version must be 1 or 2"),
        "{}",
        show(&o)
    );
    assert!(!dir.join("R").exists());

    let text = format!(
        "[model]\nname = \"gaussian-mean\"\nn = 50\n[distance]\nkind = \"l2\"\nclip = 1.0\n\
         kernel_version = 2\n[sampler]\nkind = \"rejection\"\npairs = 50\n[output]\ndir = {:?}\n",
        dir.join("L").display().to_string()
    );
    let c = write_config(&dir, "l2.toml", &text);
    let o = dpinfer(&["run", c.to_str().unwrap()], &dir);
    assert!(!o.status.success(), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("kernel_version"),
        "{}",
        show(&o)
    );
    assert!(!dir.join("L").exists());
}

/// The shard fingerprint (`Config::public_hash`) is unchanged by an explicit
/// `kernel_version = 1` and changed by 2, so shards of the two versions never mix.
#[test]
fn kernel_version_enters_the_fingerprint_only_when_2() {
    use dpinfer_pipeline::config::Config;
    let dir = fresh_dir("kv-hash");
    let out = dir.join("results");
    let hash = |v, name| {
        Config::load(&config(&dir, name, &out, v))
            .unwrap()
            .public_hash()
    };
    let h0 = hash(None, "a.toml");
    assert_eq!(h0, hash(Some("1"), "b.toml"));
    assert_ne!(h0, hash(Some("2"), "c.toml"));
    let mut cfg = Config::load(&config(&dir, "d.toml", &out, None)).unwrap();
    cfg.distance.set_kernel_version(2).unwrap();
    assert_eq!(cfg.public_hash(), hash(Some("2"), "e.toml"));
    assert!(cfg.distance.set_kernel_version(0).is_err());
}
