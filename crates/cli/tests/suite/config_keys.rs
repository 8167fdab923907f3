//! End-to-end: a misspelt key in `[sampler]` (every sampler kind), `[distance]` or
//! `[privacy]` is one error line naming the key and the section, exit code 2, nothing
//! written; every example config still loads.

use crate::common;

use common::{dpinfer, example, fresh_dir, set, show, write_config};

/// Every example, with a sampler of each kind (rwmh from the DP penalty example).
fn configs(out: &std::path::Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = [
        "rejection-toy.toml",
        "abcdp-toy.toml",
        "soft-abc-gaussian.toml",
        "gaussian-abc.toml",
        "sir-smc.toml",
        "sir-smc-sharded.toml",
        "linear-regression-private.toml",
        "dp-penalty-gaussian.toml",
        "dp-barker-banana.toml",
        "dp-hmc-banana.toml",
    ]
    .iter()
    .map(|n| ((*n).to_string(), example(n, out)))
    .collect();
    let rwmh = set(
        &example("dp-penalty-gaussian.toml", out),
        "sampler",
        "kind",
        "\"rwmh\"",
    );
    v.push(("rwmh".into(), rwmh));
    v
}

fn refused(dir: &std::path::Path, text: &str, expect: &[&str]) {
    let cfg = write_config(dir, "bad.toml", text);
    let o = dpinfer(&["run", cfg.to_str().unwrap()], dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{expect:?}: {}", show(&o));
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    for e in expect {
        assert!(errors[0].contains(e), "expected {e:?} in {err}");
    }
    assert!(!dir.join("results").exists());
}

#[test]
fn a_misspelt_key_names_the_key_and_the_section() {
    let dir = fresh_dir("config-keys");
    let out = dir.join("results");
    for (_, text) in configs(&out) {
        let kinds = text
            .lines()
            .skip_while(|l| l.trim() != "[sampler]")
            .find_map(|l| l.trim().strip_prefix("kind = ").map(str::to_string))
            .unwrap();
        refused(
            &dir,
            &set(&text, "sampler", "epsilon_abcc", "0.1"),
            &[
                "unknown field `epsilon_abcc`",
                "[sampler]",
                &format!("kind = {kinds}"),
            ],
        );
        refused(
            &dir,
            &set(&text, "privacy", "epsilonn", "1.0"),
            &["unknown field `epsilonn`", "[privacy]"],
        );
        if text.contains("[distance]") {
            refused(
                &dir,
                &set(&text, "distance", "bandwith", "1.0"),
                &["unknown field `bandwith`", "[distance]"],
            );
        }
    }
}
