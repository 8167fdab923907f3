//! `cargo xtask`: every check the project runs (STYLE.md §5.2).
//!
//! `cargo xtask ci` runs them all in order and ends with the line `N passed, M failed`; the
//! exit status is non-zero when any task fails. `cargo xtask help` lists the tasks.
//! Std only, no dependencies: it is rebuilt on every `cargo xtask` call.

// The xtask is a std program: the no-std path lints of the workspace do not apply.
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

mod cross;
mod js;
mod json;
mod meta;
mod python;
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
];

fn usage() {
    eprintln!("usage: cargo xtask <task>\n\ntasks:");
    for (name, what, _) in TASKS {
        eprintln!("  {name:<12} {what}");
    }
    eprintln!(
        "  {:<12} all of the above in order; ends with `N passed, M failed` \
         (`ci --fail-fast` stops at the first failure)",
        "ci"
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
    let mut results: Vec<(&str, Option<String>, usage::Used)> = Vec::new();
    // The Python environment (pyarrow + numpy among its packages) for the external-simulator
    // e2e tests in the `test` task; `python` uses the same one.
    let setup = meter.mark();
    if let Err(e) = python::venv() {
        eprintln!("xtask ci: cannot prepare target/python-venv: {e}");
    }
    let setup = meter.since(setup);
    for (name, _, run) in TASKS {
        eprintln!("\n==> xtask {name}");
        let t = meter.mark();
        let outcome = run().err();
        let failed = outcome.is_some();
        if let Some(e) = &outcome {
            eprintln!("xtask {name}: FAILED: {e}");
        }
        results.push((name, outcome, meter.since(t)));
        if failed && fail_fast {
            break;
        }
    }
    let total = meter.since(start);
    // The per-task table (issue 34): wall time, CPU time of the child processes (user +
    // sys), and the crates cargo compiled / only checked; `usage.rs` says how.
    println!("\nci results:");
    println!("       {:<12} {}", "task", usage::header());
    println!("       {:<12} {}", "(venv)", usage::columns(&setup));
    for (name, outcome, used) in &results {
        let columns = usage::columns(used);
        match outcome {
            None => println!("ok     {name:<12} {columns}"),
            Some(e) => {
                let first = e.lines().next().unwrap_or("");
                println!("FAILED {name:<12} {columns}  {first}");
            }
        }
    }
    for (name, _, _) in TASKS.iter().skip(results.len()) {
        println!("skip   {name:<12} (after a failure, --fail-fast)");
    }
    println!("       {:<12} {}", "total", usage::columns(&total));
    println!(
        "size of {}: {}",
        util::target_dir().display(),
        usage::size_report(&util::target_dir())
    );
    let failed = results.iter().filter(|(_, e, _)| e.is_some()).count()
        + TASKS.len().saturating_sub(results.len());
    let passed = TASKS.len() - failed;
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
        (Some("fmt"), Some("--fix")) => report("fmt", tasks::fmt(true)),
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
