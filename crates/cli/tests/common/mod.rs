//! Helpers of the end-to-end tests: run the built `dpinfer` binary, shrink example configs.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::std_instead_of_core
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh, empty folder under cargo's per-test temporary folder.
pub(crate) fn fresh_dir(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `dpinfer args…` in `cwd`. Every run of the e2e suites goes through here (or
/// [`no_panic`]): the binary never panics, whatever the input.
pub(crate) fn dpinfer(args: &[&str], cwd: &Path) -> Output {
    dpinfer_env(args, cwd, &[])
}

/// [`dpinfer`] with the arguments written as one command line, split at spaces (for
/// arguments without spaces: subcommands, flags, numbers, event specs).
pub(crate) fn dpinfer_line(line: &str, cwd: &Path) -> Output {
    dpinfer(&line.split_whitespace().collect::<Vec<_>>(), cwd)
}

/// [`dpinfer`] with extra environment variables.
pub(crate) fn dpinfer_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dpinfer"));
    c.args(args).current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    no_panic(c.output().expect("spawn dpinfer"))
}

/// Fails on a panic of the binary: exit code 101, an abort, or "panicked" on stderr.
pub(crate) fn no_panic(o: Output) -> Output {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("panicked") && o.status.code() != Some(101) && o.status.code().is_some(),
        "the binary panicked or was killed: {}",
        show(&o)
    );
    o
}

/// Runs `dpinfer args` in `cwd` and asserts it was refused with exit code 2 (a usage, input
/// or consistency error); returns the output for further checks.
#[track_caller]
pub(crate) fn refused(args: &[&str], cwd: &Path) -> Output {
    assert_refused(dpinfer(args, cwd))
}

/// Asserts a run was refused with exit code 2; returns it for further checks.
#[track_caller]
pub(crate) fn assert_refused(o: Output) -> Output {
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    o
}

/// Runs `dpinfer simulate config --shard shard --shards shards --out out` and then `extra`
/// (`--threads`, `--generation`, `--population`, …) in `cwd`.
pub(crate) fn simulate(
    cwd: &Path,
    config: impl AsRef<Path>,
    (shard, shards): (impl std::fmt::Display, impl std::fmt::Display),
    out: impl AsRef<Path>,
    extra: &[&str],
) -> Output {
    let (shard, shards) = (shard.to_string(), shards.to_string());
    let mut args = vec![
        "simulate",
        config.as_ref().to_str().unwrap(),
        "--shard",
        &shard,
        "--shards",
        &shards,
        "--out",
        out.as_ref().to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    dpinfer(&args, cwd)
}

/// stdout and stderr of a run, for assertion messages.
pub(crate) fn show(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Sets `key = value` in `[table]` of a TOML text (adds the key, or the table, if missing).
pub(crate) fn set(text: &str, table: &str, key: &str, value: &str) -> String {
    let mut out = Vec::new();
    let mut in_table = false;
    let mut done = false;
    let mut saw_table = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            if in_table && !done {
                out.push(format!("{key} = {value}"));
                done = true;
            }
            in_table = t == format!("[{table}]");
            saw_table |= in_table;
        } else if in_table && !done {
            let k = t.split('=').next().unwrap_or("").trim();
            if k == key {
                out.push(format!("{key} = {value}"));
                done = true;
                continue;
            }
        }
        out.push(line.to_string());
    }
    if in_table && !done {
        out.push(format!("{key} = {value}"));
        done = true;
    }
    if !saw_table {
        out.push(format!("[{table}]"));
        out.push(format!("{key} = {value}"));
    } else {
        assert!(done);
    }
    out.join("\n") + "\n"
}

/// Reads an example config, pins the noise seed (test only: NOT private) and points the
/// output at `out`.
pub(crate) fn example(name: &str, out: &Path) -> String {
    let text = std::fs::read_to_string(root().join("examples").join(name)).unwrap();
    let text = set(&text, "seeds", "noise", "424242");
    set(
        &text,
        "output",
        "dir",
        &format!("{:?}", out.display().to_string()),
    )
}

/// Writes a config text into `dir/name` and returns its path.
pub(crate) fn write_config(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Renders an SVG file to PNG (resvg; labels with the system's DejaVu fonts when present) and
/// returns the pixmap.
pub(crate) fn render_png(svg: &Path, png: &Path) -> resvg::tiny_skia::Pixmap {
    let text = std::fs::read_to_string(svg).unwrap();
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    opt.fontdb_mut().set_sans_serif_family("DejaVu Sans");
    opt.font_family = "DejaVu Sans".into();
    let tree = resvg::usvg::Tree::from_str(&text, &opt).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    if let Some(d) = png.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    pixmap.save_png(png).unwrap();
    pixmap
}

/// A well-formed standalone SVG document.
pub(crate) fn assert_svg(path: &Path) -> String {
    let s = std::fs::read_to_string(path).unwrap();
    assert!(
        s.starts_with("<svg") || s.starts_with("<?xml"),
        "{}",
        path.display()
    );
    assert!(s.trim_end().ends_with("</svg>"), "{}", path.display());
    // A real SVG parser (usvg, the resvg front end) accepts it.
    if let Err(e) = resvg::usvg::Tree::from_str(&s, &resvg::usvg::Options::default()) {
        panic!("{} does not parse as SVG: {e}", path.display());
    }
    // Labels never overlap or leave the picture; tick labels are short decimals.
    let problems = dpinfer_plots::layout_problems(&s);
    assert!(problems.is_empty(), "{}: {problems:#?}", path.display());
    s
}

/// The regular files of a fresh results folder `dir`, its lock file aside, must number what
/// the run printed as `results in DIR (N files)` (issue 32: it printed the CLI's own files
/// only, 9 where the folder held 12).
pub(crate) fn assert_file_count(stdout: &str, dir: &Path) {
    let printed: usize = stdout
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("results in ")?;
            let (_, n) = rest.split_once(" (")?;
            n.split_once(" files)")?.0.parse().ok()
        })
        .unwrap_or_else(|| panic!("no `results in DIR (N files)` line: {stdout}"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            (e.file_type().ok()?.is_file() && name != ".dpinfer.lock").then_some(name)
        })
        .collect();
    names.sort();
    assert_eq!(
        printed,
        names.len(),
        "printed {printed} files, wrote {names:?}"
    );
}
