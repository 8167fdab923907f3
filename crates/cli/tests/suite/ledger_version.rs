//! Ledger version 2 (XXH3-128 input fingerprints, `dpinfer-ledger`): a run writes it, a rerun
//! reproduces from it, and a folder whose ledger an earlier dpinfer wrote (version 1: no
//! `version` field, a 16-hex-digit FNV-1a fingerprint) is refused with one clear error line
//! naming the version, without drawing noise.

use crate::common;

use common::{dpinfer, example, fresh_dir, refused, set, show, write_config};

#[test]
fn a_version_1_ledger_is_refused_with_a_clear_message() {
    let dir = fresh_dir("ledger-version");
    let out = dir.join("R");
    let text = set(&example("abcdp-toy.toml", &out), "sampler", "pairs", "300");
    let c = write_config(&dir, "c.toml", &text);
    let c = c.to_str().unwrap();
    let o = dpinfer(&["run", c], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let path = out.join("private-step.json");
    let ledger: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(ledger["version"], 2, "{ledger}");
    let fp = ledger["fingerprint"].as_str().unwrap();
    assert!(fp.starts_with("xxh3-128:") && fp.len() == 9 + 32, "{fp}");
    let release = std::fs::read(out.join("release.json")).unwrap();
    let o = dpinfer(&["run", c], &dir);
    assert!(o.status.success(), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("reproduced"));

    // What dpinfer wrote before this version.
    let mut old = ledger.clone();
    old.as_object_mut().unwrap().remove("version");
    old["fingerprint"] = "0123456789abcdef".into();
    std::fs::write(&path, serde_json::to_vec_pretty(&old).unwrap()).unwrap();
    let o = refused(&["run", c], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: ") && last.contains("ledger version 1"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{err}"
    );
    // Nothing was drawn or rewritten.
    assert_eq!(std::fs::read(out.join("release.json")).unwrap(), release);
}
