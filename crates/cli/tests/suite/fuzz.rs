//! Fuzzing the binary end to end (proptest-driven, bounded: a fixed number of cases, tens of
//! seconds in the test profile). Hostile config files (values of every kind in every key —
//! subnormal, huge and 2³²-sized numbers included — truncations, byte noise), forged shard
//! headers (random header bytes, with and without a recomputed CRC) and forged Arrow data
//! files (lengths set to 2⁴⁰, negative or i64::MAX, byte noise). Every case asserts: no panic, exit code 0 or 2 (1 for an incomplete
//! `verify`), exactly one `error:` line — the last — on failure, and nothing outside the
//! command's `--out` changed.
#![cfg(unix)]

use crate::common;

use common::{dpinfer, example, fresh_dir, set, show, simulate};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Every file under `dir` except those under `skip`, with its bytes' CRC and length.
fn snapshot(dir: &Path, skip: &Path) -> BTreeMap<PathBuf, (u64, u32)> {
    let mut m = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.starts_with(skip) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else {
                let b = std::fs::read(&p).unwrap_or_default();
                m.insert(p, (meta.len(), crc32fast::hash(&b)));
            }
        }
    }
    m
}

/// The contract of every invocation.
fn contract(o: &Output, ok_codes: &[i32]) {
    let code = o.status.code().expect("killed by a signal");
    assert!(ok_codes.contains(&code), "exit code {code}: {}", show(o));
    let err = String::from_utf8_lossy(&o.stderr);
    let errors = err.lines().filter(|l| l.starts_with("error")).count();
    if code == 2 {
        assert_eq!(errors, 1, "{}", show(o));
        assert!(
            err.trim_end()
                .lines()
                .last()
                .unwrap_or("")
                .starts_with("error: "),
            "{}",
            show(o)
        );
    } else {
        assert_eq!(errors, 0, "{}", show(o));
    }
}

const KEYS: &[(&str, &str)] = &[
    ("model", "name"),
    ("model", "n"),
    ("model", "sigma"),
    ("model", "prior_sd"),
    ("model", "population"),
    ("data", "path"),
    ("data", "seed"),
    ("distance", "kind"),
    ("distance", "features"),
    ("distance", "bandwidth"),
    ("distance", "weights"),
    ("distance", "clip"),
    ("sampler", "kind"),
    ("sampler", "pairs"),
    ("sampler", "epsilon_abc"),
    ("sampler", "c"),
    ("sampler", "resample"),
    ("sampler", "clip"),
    ("sampler", "accept"),
    ("privacy", "epsilon"),
    ("privacy", "delta"),
    ("privacy", "release"),
    ("seeds", "run"),
    ("seeds", "noise"),
    ("output", "threads"),
    ("model", "prior_mean"),
    ("model", "timeout"),
    ("model", "retries"),
    ("distance", "kernel_version"),
    ("distance", "allowance_version"),
];

/// Values that are invalid, extreme or small (never a valid value that runs long).
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "0.5",
    "1e-320",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "5e-324",
    "1e-300",
    "1000000000",
    "4294967295",
    "18446744073709551615",
    "1000000000000",
    "9223372036854775807",
    "\"\"",
    "\"os\"",
    "\"x\"",
    "\"/dev/zero\"",
    "\"laplace\"",
    "\"binomial-curve\"",
    "\"rejection\"",
    "\"soft-abc\"",
    "\"gaussian-abc\"",
    "\"svt-abc\"",
    "\"dp-penalty\"",
    "[]",
    "[0.1, -2.0]",
    "[nan]",
    "true",
    "{ a = 1 }",
];

/// The base config: SVT-ABC on the toy, 60 pairs (a valid run takes well under a second).
fn base(out: &Path) -> String {
    let t = example("abcdp-toy.toml", out);
    let t = set(&t, "sampler", "pairs", "60");
    let t = set(&t, "model", "n", "200");
    set(&t, "distance", "features", "20")
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, usize),
    Truncate(usize),
    Byte(usize, u8),
    DropLine(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (0..KEYS.len(), 0..VALUES.len()).prop_map(|(k, v)| Mutation::Set(k, v)),
        1 => (0..2000_usize).prop_map(Mutation::Truncate),
        1 => (0..2000_usize, any::<u8>()).prop_map(|(i, b)| Mutation::Byte(i, b)),
        1 => (0..60_usize).prop_map(Mutation::DropLine),
    ]
}

fn apply(text: &str, m: &Mutation) -> Vec<u8> {
    match *m {
        Mutation::Set(k, v) => set(text, KEYS[k].0, KEYS[k].1, VALUES[v]).into_bytes(),
        Mutation::Truncate(i) => text.as_bytes()[..i.min(text.len())].to_vec(),
        // An earlier mutation may have emptied the text: nothing to change then.
        Mutation::Byte(..) | Mutation::DropLine(_) if text.is_empty() => text.as_bytes().to_vec(),
        Mutation::Byte(i, b) => {
            let mut t = text.as_bytes().to_vec();
            let n = t.len();
            t[i % n] = b;
            t
        }
        Mutation::DropLine(i) => {
            let lines: Vec<&str> = text.lines().collect();
            let k = i % lines.len();
            lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 240,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hostile_configs(muts in proptest::collection::vec(mutation(), 1..4)) {
        let dir = fresh_dir("fuzz-cfg");
        let out = dir.join("out");
        let mut text = base(&out).into_bytes();
        for m in &muts {
            text = apply(&String::from_utf8_lossy(&text), m);
        }
        std::fs::write(dir.join("c.toml"), &text).unwrap();
        std::fs::write(dir.join("bystander.txt"), "untouched").unwrap();
        let before = snapshot(&dir, &out);
        let o = dpinfer(&["run", "c.toml", "--out", "out"], &dir);
        contract(&o, &[0, 2]);
        prop_assert_eq!(&snapshot(&dir, &out), &before, "{:?}", muts);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A complete 3-shard folder of the base config, made once.
fn shard_folder() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = fresh_dir("fuzz-shards-base");
        std::fs::write(dir.join("c.toml"), base(&dir.join("out"))).unwrap();
        for i in 0..3 {
            let o = simulate(&dir, "c.toml", (i, 3), "shards", &[]);
            assert!(o.status.success(), "{}", show(&o));
        }
        dir
    })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 120,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn forged_shard_headers(
        which in 0..3_u32,
        edits in proptest::collection::vec((0..84_usize, any::<u8>()), 1..6),
        fix_crc in any::<bool>(),
    ) {
        let dir = fresh_dir("fuzz-shards");
        copy_dir(shard_folder(), &dir);
        let p = dir.join("shards").join(format!("gen000-shard{which:05}-of00003.dpshard"));
        let mut b = std::fs::read(&p).unwrap();
        for &(i, v) in &edits {
            b[i] = v;
        }
        if fix_crc {
            let n = b.len() - 4;
            let crc = crc32fast::hash(&b[..n]);
            b[n..].copy_from_slice(&crc.to_le_bytes());
        }
        std::fs::write(&p, &b).unwrap();
        let out = dir.join("out");
        let before = snapshot(&dir, &out);
        let o = dpinfer(&["verify", "shards"], &dir);
        contract(&o, &[0, 1, 2]);
        let o = dpinfer(&["merge", "shards", "--out", "out/m.dpshard"], &dir);
        contract(&o, &[0, 2]);
        let o = dpinfer(&["export", p.to_str().unwrap(), "--out", "out/x.arrow"], &dir);
        contract(&o, &[0, 2]);
        if dir.join("out/m.dpshard").exists() {
            let o = dpinfer(&["private-step", "c.toml", "--pairs", "out/m.dpshard", "--out", "out/r"], &dir);
            contract(&o, &[0, 2]);
        }
        prop_assert_eq!(&snapshot(&dir, &out), &before, "{:?}", edits);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The base config reading its observations from `obs.arrow` (200 values, one `Float64`
/// column, written by arrow's own writer).
fn arrow_base(dir: &Path) -> Vec<u8> {
    std::fs::write(
        dir.join("c.toml"),
        set(&base(&dir.join("out")), "data", "path", "\"obs.arrow\""),
    )
    .unwrap();
    let col = arrow_array::Float64Array::from_iter_values((0..200).map(|i| f64::from(i % 7) / 7.0));
    let batch = arrow_array::RecordBatch::try_from_iter([(
        "y",
        std::sync::Arc::new(col) as arrow_array::ArrayRef,
    )])
    .unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    w.into_inner().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 60,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Issue 26: forged Arrow data files — a buffer, array or body length set to a huge or
    /// negative value (arrow's own reader panics on some), plus byte noise — are read or
    /// refused with one line, never a panic, and change nothing outside `--out`.
    #[test]
    fn forged_arrow_data_files(
        forge in proptest::option::of((0..3_usize, prop_oneof![Just(1_i64 << 40), Just(-8_i64), Just(i64::MAX)])),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..5),
    ) {
        let dir = fresh_dir("fuzz-arrow");
        let mut b = arrow_base(&dir);
        if let Some((which, v)) = forge {
            // The flatbuffer words holding 1600 (the values buffer's length, the batch's
            // body length) or 200 (the row count, the array length): the n-th such word.
            let hits: Vec<usize> = (0..b.len() - 8)
                .step_by(4)
                .filter(|&i| {
                    let w = i64::from_le_bytes(b[i..i + 8].try_into().unwrap());
                    w == 1600 || w == 200
                })
                .collect();
            if !hits.is_empty() {
                let at = hits[which % hits.len()];
                b[at..at + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        for (i, v) in &edits {
            let k = i.index(b.len());
            b[k] = *v;
        }
        std::fs::write(dir.join("obs.arrow"), &b).unwrap();
        let out = dir.join("out");
        let before = snapshot(&dir, &out);
        let o = dpinfer(&["run", "c.toml", "--out", "out"], &dir);
        contract(&o, &[0, 2]);
        prop_assert_eq!(&snapshot(&dir, &out), &before, "{:?} {:?}", forge, edits);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The unforged base of `forged_arrow_data_files` runs: the fuzzer's cases reach the data
/// file's decoding, not an earlier refusal.
#[test]
fn the_arrow_fuzz_base_runs() {
    let dir = fresh_dir("fuzz-arrow-base");
    std::fs::write(dir.join("obs.arrow"), arrow_base(&dir)).unwrap();
    let o = dpinfer(&["run", "c.toml", "--out", "out"], &dir);
    contract(&o, &[0]);
    let _ = std::fs::remove_dir_all(&dir);
}
