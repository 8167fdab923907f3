//! `dpinfer calibrate`: simulation-based calibration of a config's sampler with its mechanism
//! in the loop — shards and resumed runs bit-identical to one uninterrupted run, a
//! calibrated sampler passes and an over-confident one is flagged, bad options refused.

use crate::common;

use common::{assert_svg, dpinfer, fresh_dir, show, write_config};
use std::path::Path;

/// SVT-ABC on the Gaussian mean: a shared table of 600 pairs, c = 25 accepted per replicate.
const SVT: &str = "[model]\nname = \"gaussian-mean\"\nn = 50\nprior_sd = 1.0\n\
[distance]\nkind = \"rff-mmd\"\nfeatures = 20\n\
[sampler]\nkind = \"svt-abc\"\npairs = 600\nepsilon_abc = 0.3\nc = 25\n\
[privacy]\nepsilon = 10.0\n[seeds]\nrun = 5\n";

/// Random-walk Metropolis on the conjugate Gaussian mean (an exact kernel): `scale` is the
/// proposal scale, `burn` the burn-in of `iterations`.
fn rwmh(scale: f64, iterations: u32, burn: u32) -> String {
    format!(
        "[model]\nname = \"gaussian-mean\"\nn = 100\nprior_sd = 1.0\n\
         [sampler]\nkind = \"rwmh\"\niterations = {iterations}\nburn_in = {burn}\n\
         proposal_scale = {scale}\n[seeds]\nrun = 3\n"
    )
}

fn calibrate(cfg: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "calibrate",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    dpinfer(&args, out.parent().unwrap())
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).expect("a results file")
}

fn jsonl(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    v.sort();
    v
}

/// Any split into shards, merged by copying the shard files into one folder, and a run
/// resumed from part of its results (its last line cut mid-write) give `summary.json`
/// byte for byte as one uninterrupted run, and finished replicates are not recomputed.
#[test]
fn shards_and_resumed_runs_summarise_bit_identical_to_one_run() {
    let dir = fresh_dir("calibrate-shards");
    let cfg = write_config(&dir, "svt.toml", SVT);
    let k = "24";
    let one = dir.join("one");
    let o = calibrate(&cfg, &one, &["--replicates", k, "--threads", "2"]);
    assert!(o.status.success(), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("calibration of svt-abc on gaussian-mean at ε = 10"),
        "{stdout}"
    );
    // one public pairs table for all 24 replicates, simulated once
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("public step: 600 pairs").count(), 1, "{err}");
    assert!(err.contains("shared pairs table:"), "{err}");
    let want = read(&one.join("summary.json"));
    for f in ["ranks-mu.svg", "ecdf-mu.svg", "tarp.svg"] {
        assert_svg(&one.join(f));
    }

    // three shards on "three machines", one thread each, then merged by copying
    let merged = dir.join("merged");
    for i in 0..3 {
        let shard = dir.join(format!("shard{i}"));
        let o = calibrate(
            &cfg,
            &shard,
            &[
                "--replicates",
                k,
                "--shard",
                &i.to_string(),
                "--shards",
                "3",
                "--threads",
                "1",
            ],
        );
        assert!(o.status.success(), "{}", show(&o));
        assert!(
            !shard.join("summary.json").exists(),
            "a shard does not summarise"
        );
        std::fs::create_dir_all(&merged).unwrap();
        for f in jsonl(&shard) {
            std::fs::copy(&f, merged.join(f.file_name().unwrap())).unwrap();
        }
        if i == 0 {
            std::fs::copy(
                shard.join("calibration.json"),
                merged.join("calibration.json"),
            )
            .unwrap();
        }
    }
    let o = calibrate(&cfg, &merged, &["--replicates", k]);
    assert!(o.status.success(), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("0 replicates computed, 24 found finished"),
        "{err}"
    );
    assert_eq!(read(&merged.join("summary.json")), want, "merged shards");

    // resumed: 7 finished lines and half of the 8th (a write cut short by a kill)
    let resumed = dir.join("resumed");
    std::fs::create_dir_all(&resumed).unwrap();
    let full = String::from_utf8(read(&one.join("replicates-00000-of-00001.jsonl"))).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    let mut partial = lines[..7].join("\n");
    partial.push('\n');
    partial.push_str(&lines[7][..lines[7].len() / 2]);
    std::fs::write(resumed.join("replicates-00000-of-00001.jsonl"), partial).unwrap();
    std::fs::copy(
        one.join("calibration.json"),
        resumed.join("calibration.json"),
    )
    .unwrap();
    let o = calibrate(&cfg, &resumed, &["--replicates", k, "--threads", "2"]);
    assert!(o.status.success(), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("17 replicates computed, 7 found finished"),
        "{err}"
    );
    assert_eq!(read(&resumed.join("summary.json")), want, "resumed run");
    // the cut line was dropped, every line of the file is whole
    let text = String::from_utf8(read(&resumed.join("replicates-00000-of-00001.jsonl"))).unwrap();
    assert_eq!(text.lines().count(), 24);
    assert!(text.ends_with('\n'));
}

/// A run killed midway keeps the replicates it finished; the rerun computes only the rest and
/// its summary equals an uninterrupted run's.
#[test]
fn a_killed_run_resumes_where_it_stopped() {
    let dir = fresh_dir("calibrate-kill");
    let cfg = write_config(&dir, "rwmh.toml", &rwmh(0.2, 1500, 300));
    let k = "40";
    let one = dir.join("one");
    let o = calibrate(&cfg, &one, &["--replicates", k, "--threads", "1"]);
    assert!(o.status.success(), "{}", show(&o));

    let killed = dir.join("killed");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dpinfer"))
        .args([
            "calibrate",
            cfg.to_str().unwrap(),
            "--out",
            killed.to_str().unwrap(),
            "--replicates",
            k,
            "--threads",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let file = killed.join("replicates-00000-of-00001.jsonl");
    let t0 = std::time::Instant::now();
    loop {
        let lines = std::fs::read_to_string(&file).map_or(0, |t| t.lines().count());
        if lines >= 3 || t0.elapsed().as_secs() > 60 {
            break;
        }
        std::thread::sleep(core::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    // whole lines only: a kill may land mid-write (the rerun drops such a tail)
    let kept = std::fs::read_to_string(&file)
        .unwrap()
        .matches('\n')
        .count();
    if status.success() {
        // finished before the kill landed (a very fast machine): nothing to resume
        assert_eq!(kept, 40);
    } else {
        assert!((3..40).contains(&kept), "{kept} lines after the kill");
    }
    let o = calibrate(&cfg, &killed, &["--replicates", k, "--threads", "2"]);
    assert!(o.status.success(), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let finished = std::fs::read_to_string(&file).unwrap().lines().count();
    assert_eq!(finished, 40);
    // the rerun computed exactly the replicates the kill left undone
    let want = format!("{} replicates computed, {kept} found finished", 40 - kept);
    assert!(err.contains(&want), "{want}: {err}");
    eprintln!("killed after {kept} of 40 replicates (exit {status})");
    assert_eq!(
        read(&killed.join("summary.json")),
        read(&one.join("summary.json"))
    );
}

/// Both directions of the check can fail: an exact kernel that mixes is calibrated (a false
/// failure needs the Holm-adjusted p ≤ 0.01: about 1 % of fresh seeds), and a chain stuck near
/// its starting point — a far too narrow posterior — is flagged over-confident, printed as a
/// WARNING, with exit code 1.
#[test]
fn an_exact_kernel_is_calibrated_and_a_stuck_chain_is_flagged_over_confident() {
    let dir = fresh_dir("calibrate-verdict");
    let good = write_config(&dir, "good.toml", &rwmh(0.2, 1500, 300));
    let out = dir.join("good");
    let o = calibrate(&good, &out, &["--replicates", "40", "--alpha", "0.01"]);
    assert!(o.status.success(), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("\ncalibrated (worst:"), "{stdout}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["summary"]["verdict"], "Calibrated");
    assert_eq!(s["epsilon"], serde_json::Value::Null);
    assert!(s["multiple_testing"].as_str().unwrap().starts_with("Holm"));

    // proposal steps of 0.001 for 60 iterations: the chain never leaves its start
    let stuck = write_config(&dir, "stuck.toml", &rwmh(0.001, 60, 10));
    let out = dir.join("stuck");
    let o = calibrate(&stuck, &out, &["--replicates", "40", "--alpha", "0.01"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("WARNING: over-confident"), "{stdout}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["summary"]["verdict"], "OverConfident");
    assert!(s["verdict_line"].as_str().unwrap().starts_with("WARNING:"));
}

/// Bad options, a folder of another config and a sampler releasing fewer draws than asked are
/// one clear error line (exit 2), never a panic.
#[test]
fn bad_options_and_foreign_folders_are_refused() {
    let dir = fresh_dir("calibrate-bad");
    let cfg = write_config(&dir, "svt.toml", SVT);
    let out = dir.join("out");
    for (args, expect) in [
        (vec!["--replicates", "0"], "--replicates must be in 10..="),
        (vec!["--replicates", "9"], "a summary needs at least 10"),
        (
            vec!["--replicates", "20", "--shard", "2", "--shards", "2"],
            "--shard must be in",
        ),
        (
            vec!["--replicates", "20", "--alpha", "1.5"],
            "--alpha must be in (0, 1)",
        ),
        (
            vec!["--replicates", "20", "--draws", "0"],
            "--draws and --thin must be ≥ 1",
        ),
        (
            vec!["--replicates", "20", "--draws", "30"],
            "the sampler released 25 draws",
        ),
    ] {
        let o = calibrate(&cfg, &out, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(expect), "{args:?}: {err}");
    }
    // a statistic release costing more than privacy.epsilon is refused, as `dpinfer run`
    // refuses it (a first version of `calibrate` ran it, calibrating a release that cannot be made)
    let sir = write_config(
        &dir,
        "sir.toml",
        "[model]\nname = \"sir\"\n[distance]\nkind = \"l2\"\n[sampler]\nkind = \"smc-abc\"\n\
         particles = 50\n[privacy]\nepsilon = 1.0\nrelease = \"binomial-curve\"\n\
         release_n = 1000\nrelease_m = 1000\n",
    );
    for cmd in [
        &["run", sir.to_str().unwrap()][..],
        &["calibrate", sir.to_str().unwrap(), "--replicates", "10"],
    ] {
        let o = dpinfer(cmd, &dir);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("the release costs ε = 9.99"), "{cmd:?}: {err}");
    }
    let o = calibrate(&cfg, &out, &["--replicates", "12"]);
    assert!(o.status.success(), "{}", show(&o));
    let other = write_config(&dir, "rwmh.toml", &rwmh(0.2, 300, 100));
    let o = calibrate(&other, &out, &["--replicates", "12"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds replicates of another configuration"),
        "{}",
        show(&o)
    );
    let o = calibrate(&cfg, &out, &["--replicates", "12", "--draws", "9"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("other settings"),
        "{}",
        show(&o)
    );
}
