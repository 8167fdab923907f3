//! `cargo xtask`: every check the project runs (STYLE.md §5.2).
//!
//! `cargo xtask ci` runs them all, in two lanes side by side (`lanes.rs`), and ends with the
//! line `N passed, M failed`; the exit status is non-zero when any task fails. `cargo xtask help` lists the tasks.
//! Std only, no dependencies: it is rebuilt on every `cargo xtask` call.

// The xtask is a std program: the no-std path lints of the workspace do not apply.
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

mod browser;
mod cross;
mod js;
mod lanes;
mod meta;
mod python;
mod reproduce;
mod tasks;
mod tidy;
mod usage;
mod util;

use std::process::ExitCode;
use util::Res;

/// A task: name, what it does, how to run it.
type Task = (&'static str, &'static str, fn() -> Res);

/// The tasks `ci` runs, in order.
const TASKS: &[Task] = &[
    ("fmt", "rustfmt --check (`fmt --fix` rewrites)", || {
        tasks::fmt(false)
    }),
    (
        "lint",
        "clippy -D warnings: workspace, then each core crate without std",
        tasks::lint,
    ),
    (
        "test",
        "tests (nextest or cargo test), doctests, each core crate without std",
        tasks::test,
    ),
    ("doc", "rustdoc with -D warnings", tasks::doc),
    (
        "features",
        "cargo check of each core crate per feature",
        tasks::features,
    ),
    (
        "nostd",
        "cross builds for thumbv7em-none-eabihf and wasm32 (Debian rustc)",
        cross::nostd,
    ),
    (
        "wasm-smoke",
        "tests/no-std-smoke verify() under node",
        cross::wasm_smoke,
    ),
    (
        "js",
        "JS/TS package js/: wasm module, node --test, size",
        js::js,
    ),
    (
        "msrv",
        "rust-version 1.89 everywhere, dependencies <= 1.89",
        tasks::msrv,
    ),
    (
        "tidy",
        "policy checks (also `cargo test -p xtask`)",
        tidy::run,
    ),
    (
        "bench-build",
        "cargo bench --no-run for tests/benches",
        tasks::bench_build,
    ),
    (
        "python",
        "wheel (maturin, abi3) into a venv under target/, then pytest python/tests",
        python::python,
    ),
    (
        "python-wheel",
        "the first half of `python`: venv, clippy, wheel built and installed",
        || python::wheel().map(|_| ()),
    ),
    (
        "pytest",
        "the second half of `python`: pytest python/tests on the installed wheel",
        python::pytest,
    ),
    ("report", "report.html, headless chromium", browser::report),
];

/// `ci`'s main lane, in order: the tasks on the workspace's own build (`target/debug`),
/// ending with the Python tests, which need the `test` task's CLI and the side lane's wheel.
/// The stretches that keep one core busy at a time (`features`' many small checks, the
/// per-crate test configurations at the start of `test`) come early, while the side lane
/// runs beside them; the workspace test build, which keeps both cores busy, comes after.
const MAIN_LANE: &[&str] = &[
    "fmt", "features", "lint", "test", "report", "doc", "msrv", "tidy", "pytest",
];

/// `ci`'s side lane, in order: the tasks that build in target directories of their own
/// (`target/cross`, `target/benches`, `target/python`) and need nothing from the main lane.
/// A second xtask process runs them beside the main lane, so that the two cores stay busy
/// through the main lane's serial stretches (single-crate compile tails, link steps, the
/// slowest tests): see `lanes.rs` and docs/development.md.
const SIDE_LANE: &[&str] = &["nostd", "wasm-smoke", "js", "bench-build", "python-wheel"];

fn usage() {
    eprintln!("usage: cargo xtask <task>\n\ntasks:");
    for (name, what, _) in TASKS {
        eprintln!("  {name:<12} {what}");
    }
    eprintln!(
        "  {:<12} all of the above (`python` as `python-wheel` + `pytest`) in two lanes run \
         side by side; ends with `N passed, M failed` (`ci --fail-fast` stops at the first \
         failure)",
        "ci"
    );
    eprintln!(
        "  {:<12} a long statistical reproduction, not part of `ci`; {}",
        "reproduce X",
        reproduce::list()
    );
    eprintln!(
        "\nenvironment: XTASK_CROSS_CARGO, XTASK_CROSS_RUSTC (default /usr/bin/cargo, \
         /usr/bin/rustc), XTASK_NO_INSTALL=1 (never apt-get install), XTASK_ONLY=a,b (build tasks on \
         these library crates only)"
    );
}

fn ci(fail_fast: bool) -> ExitCode {
    let meter = usage::Meter::new();
    let start = meter.mark();
    if let Ok(only) = std::env::var("XTASK_ONLY")
        && !only.trim().is_empty()
    {
        eprintln!("xtask ci: WARNING: XTASK_ONLY={only} narrows lint/test/features/nostd");
    }
    // The side lane (venv first) beside the main lane; when it cannot start, its tasks run
    // here, the venv before the main lane and the rest after it.
    let mut side = match lanes::Side::start(fail_fast) {
        Ok(side) => Some(side),
        Err(e) => {
            eprintln!("xtask ci: {e}; running the side lane's tasks in this process");
            None
        }
    };
    let mut inline_rows = Vec::new();
    if side.is_none() {
        let t = meter.mark();
        let venv = python::venv();
        if let Err(e) = &venv {
            eprintln!("xtask ci: cannot prepare target/python-venv: {e}");
        }
        inline_rows.push(lanes::Row {
            name: "(venv)".to_owned(),
            error: venv.err(),
            used: meter.since(t),
        });
    }
    let mut main_rows: Vec<lanes::Row> = Vec::new();
    let mut side_rows: Option<Vec<lanes::Row>> = None;
    let mut stopped = false;
    for name in MAIN_LANE {
        if *name == "test"
            && let Some(side) = side.as_mut()
        {
            side.wait_for_venv();
        }
        if *name == "pytest" {
            // The side lane built and installed the wheel the Python tests import; it is
            // waited for here, outside any main-lane row's measurement.
            let rows = match side.take() {
                Some(side) => side.finish(),
                None => SIDE_LANE
                    .iter()
                    .map(|n| lanes::run_task(&meter, n))
                    .collect(),
            };
            side_rows = Some(rows);
        }
        let wheel_failed = side_rows.as_ref().is_some_and(|rows| {
            !rows
                .iter()
                .any(|r| r.name == "python-wheel" && r.error.is_none())
        });
        let row = if *name == "pytest" && wheel_failed {
            eprintln!(
                "\n==> xtask pytest\nxtask pytest: FAILED: no wheel (python-wheel did not pass)"
            );
            lanes::Row {
                name: (*name).to_owned(),
                error: Some("no wheel (python-wheel did not pass)".to_owned()),
                used: meter.since(meter.mark()),
            }
        } else {
            lanes::run_task(&meter, name)
        };
        let failed = row.error.is_some();
        main_rows.push(row);
        if failed && fail_fast {
            stopped = true;
            break;
        }
    }
    let side_rows = match (side_rows, side) {
        (Some(rows), _) => rows,
        (None, Some(mut side)) => {
            if stopped {
                side.kill();
            }
            side.finish()
        }
        (None, None) => Vec::new(),
    };
    let total = meter.since(start);
    // The per-task table (issue 34): wall time, CPU time of the child processes (user +
    // sys), and the crates cargo compiled / only checked; `usage.rs` says how. The side
    // lane's rows ran at the same time as the main lane's: wall times overlap, the total's
    // wall time is the whole run's.
    println!("\nci results (main and side lanes run side by side; wall times overlap):");
    println!("       {:<14} {}", "task", usage::header());
    let mut passed = 0;
    let mut failed = 0;
    let mut print = |lane: &str, row: &lanes::Row| {
        let label = format!("{}{lane}", row.name);
        let columns = usage::columns(&row.used);
        if row.name == "(venv)" {
            println!("       {label:<14} {columns}");
            return;
        }
        match &row.error {
            None => {
                passed += 1;
                println!("ok     {label:<14} {columns}");
            }
            Some(e) => {
                failed += 1;
                let first = e.lines().next().unwrap_or("");
                println!("FAILED {label:<14} {columns}  {first}");
            }
        }
    };
    for row in inline_rows.iter().chain(&side_rows) {
        print(" (s)", row);
    }
    for row in &main_rows {
        print("", row);
    }
    let ran: Vec<&str> = main_rows
        .iter()
        .chain(&side_rows)
        .map(|r| r.name.as_str())
        .collect();
    for name in MAIN_LANE.iter().chain(SIDE_LANE) {
        if !ran.contains(name) {
            failed += 1;
            println!("skip   {name:<14} (after a failure, --fail-fast)");
        }
    }
    println!("       {:<14} {}", "total", usage::columns(&total));
    println!("(s): the side lane, run beside the main lane by a second xtask process");
    println!(
        "size of {}: {}",
        util::target_dir().display(),
        usage::size_report(&util::target_dir())
    );
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    match (arg(0), arg(1)) {
        (Some("ci"), None) => ci(false),
        (Some("ci"), Some("--fail-fast")) => ci(true),
        (Some(lanes::SIDE_COMMAND), None) => lanes::side(false),
        (Some(lanes::SIDE_COMMAND), Some("--fail-fast")) => lanes::side(true),
        (Some("fmt"), Some("--fix")) => report("fmt", tasks::fmt(true)),
        (Some("reproduce"), Some(which)) => report("reproduce", reproduce::run(which)),
        (Some("reproduce"), None) => {
            eprintln!("usage: cargo xtask reproduce <name>; {}", reproduce::list());
            ExitCode::from(2)
        }
        (Some(name), None) => match TASKS.iter().find(|(n, _, _)| *n == name) {
            Some((_, _, run)) => report(name, run()),
            None if matches!(name, "help" | "-h" | "--help") => {
                usage();
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("xtask: unknown task `{name}`\n");
                usage();
                ExitCode::from(2)
            }
        },
        _ => {
            usage();
            ExitCode::from(2)
        }
    }
}

fn report(name: &str, result: Res) -> ExitCode {
    match result {
        Ok(()) => {
            eprintln!("xtask {name}: ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xtask {name}: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
