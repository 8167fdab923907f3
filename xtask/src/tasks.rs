//! The tasks that drive the host cargo (STYLE.md §5.2).

use crate::meta::{self, Package};
use crate::util::{Cmd, Failures, Res, cargo, root, target_dir};

/// The nested workspaces (own `[workspace]`, own lockfile).
const NESTED: &[&str] = &[
    "tests/no-std-smoke/Cargo.toml",
    "tests/benches/Cargo.toml",
    "python/Cargo.toml",
    "js/wasm/Cargo.toml",
];

/// `cargo xtask fmt [--fix]`: rustfmt check (or rewrite) of the workspace and the nested
/// workspaces.
pub(crate) fn fmt(fix: bool) -> Res {
    // rustfmt takes about a second here; a pathological file must not stall CI forever.
    const LIMIT: std::time::Duration = std::time::Duration::from_secs(120);
    let check: &[&str] = if fix { &[] } else { &["--", "--check"] };
    Cmd::cargo(["fmt", "--all"])
        .args(check)
        .run_with_timeout(LIMIT)?;
    for manifest in NESTED {
        Cmd::cargo(["fmt", "--manifest-path", manifest])
            .args(check)
            .run_with_timeout(LIMIT)?;
    }
    Ok(())
}

/// The per-crate feature configurations, all without default features: none, `alloc`
/// (when the crate has it), and the largest no-std set (`alloc` plus every other feature
/// that does not enable `std`, e.g. the facade's crate switches) when that differs.
fn crate_configs(p: &Package) -> Vec<Vec<String>> {
    let mut configs = vec![Vec::new()];
    if p.features.contains_key("alloc") {
        configs.push(vec!["alloc".to_owned()]);
    }
    let no_std = p.no_std_features();
    if !configs.contains(&no_std) {
        configs.push(no_std);
    }
    configs
}

/// `cargo xtask lint`: clippy `-D warnings` on the whole workspace with all features and
/// all targets, then the library of each core crate in each no-std configuration (where
/// `std_instead_of_core` and `alloc_instead_of_core` bite).
pub(crate) fn lint() -> Res {
    let packages = meta::metadata()?;
    let mut failures = Failures::default();
    failures.check(
        Cmd::cargo([
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--locked",
        ])
        .args(["--", "-D", "warnings"])
        .run(),
    );
    for c in meta::selected_crates()? {
        let p = meta::find(&packages, &c.name)?;
        for features in crate_configs(p) {
            failures.check(
                Cmd::cargo(["clippy", "--locked", "-p", &c.name])
                    .args(meta::feature_args(&features))
                    .args(["--", "-D", "warnings"])
                    .run(),
            );
        }
    }
    failures.finish()
}

/// Whether `cargo nextest` is installed.
fn has_nextest() -> bool {
    Cmd::cargo(["nextest", "--version"])
        .output()
        .is_ok_and(|(ok, _, _)| ok)
}

/// Proptest seed for CI runs, so a property test cannot fail by luck of the draw between two
/// runs of the same tree (its 256 cases per property are still spread over all f64 classes).
/// Set `PROPTEST_RNG_SEED` yourself to explore other cases.
const PROPTEST_SEED: &str = "20261122";

/// The features of the workspace test build, shared by every step that reuses it (nextest,
/// the doctests, the `python` task's CLI): the CLI's optional Parquet reader is on, so its
/// tests run in the one build instead of a second build of everything `parquet` changes
/// (pipeline, CLI, ledger, workers and the image crates whose `flate2` features it unifies:
/// 139 s on an idle 2-core machine). The feature-off path (a `.parquet` file refused with
/// the rebuild command) is checked by the Python package's tests, whose wheel is built
/// without it.
pub(crate) const WORKSPACE_TEST_FEATURES: [&str; 2] = ["--features", "dpinfer-cli/parquet"];

/// The `dpinfer` CLI of the `test` task's build (test profile, the workspace's feature
/// resolution, [`WORKSPACE_TEST_FEATURES`]), built if needed: after `test` in `cargo xtask ci`
/// nothing is compiled. (`cargo build -p dpinfer-cli` compiled its 86 units a second time in
/// the dev profile; even with `--profile test`, `-p dpinfer-cli` alone resolves features
/// differently and rebuilds 16 of them.) Used by `pytest` and `report`.
///
/// # Errors
/// A failed build.
pub(crate) fn workspace_cli() -> Res<std::path::PathBuf> {
    Cmd::cargo(["test", "--workspace", "--locked", "--no-run"])
        .args(WORKSPACE_TEST_FEATURES)
        .run()?;
    Ok(target_dir()
        .join("debug")
        .join(format!("dpinfer{}", std::env::consts::EXE_SUFFIX)))
}

/// Profile overrides for the per-crate no-std test configurations: the test profile builds
/// `dpinfer-distances` at opt-level 3 because the CLI, pipeline and abc tests of the workspace
/// build spend most of their time in its kernels (root `Cargo.toml`); the no-std
/// configurations compile the crate again with other features (their own units, shared with
/// nothing) for tests that run in about a second, where opt-level 3 only costs compile time
/// (37 s of CPU per configuration, measured). Optimisation levels change no number.
const NO_STD_TEST_PROFILE: [&str; 2] = [
    "--config",
    "profile.test.package.dpinfer-distances.opt-level=1",
];

/// `cargo xtask test`: each core crate's tests without default features and with the largest
/// no-std feature set (except for a crate whose dev-dependencies turn its own `std` on: those
/// would be std runs again), then the workspace tests (nextest when installed, else `cargo
/// test`) and doctests in one build ([`WORKSPACE_TEST_FEATURES`]).
pub(crate) fn test() -> Res {
    let packages = meta::metadata()?;
    let mut failures = Failures::default();
    let seed = std::env::var("PROPTEST_RNG_SEED").unwrap_or_else(|_| PROPTEST_SEED.to_string());
    // The per-crate no-std configurations first: many small cargo calls that keep one core
    // busy at a time, which `ci` overlaps with its side lane; the workspace build after them
    // keeps both cores busy on its own. (Either order shares the same units.)
    // Each core crate in each no-std configuration: build, and run unless the build is the
    // same as one already run (a crate's dev-dependency on itself with default features,
    // e.g. dpinfer-accountants', turns `std` back on for its tests: every configuration then
    // compiles to the same binaries, and running them again repeats the same seeded check).
    let mut built: Vec<(Vec<String>, String)> = Vec::new();
    for c in meta::selected_crates()? {
        let p = meta::find(&packages, &c.name)?;
        if p.tests_enable_std {
            // Its dev-dependency on itself turns `std` (and so `alloc`) on in every
            // configuration: these would be std builds of the tests the workspace run runs,
            // recompiled with other dependency features (141 s of CPU for dpinfer-abc and
            // dpinfer-accountants). Its no-std library is still linted and cross-built.
            eprintln!(
                "xtask: {}'s dev-dependencies enable its `std` feature, so its tests cannot \
                 run without std: the workspace run covers them",
                c.name
            );
            continue;
        }
        for features in crate_configs(p) {
            let args = meta::feature_args(&features);
            let label = format!("-p {} {}", c.name, args.join(" "));
            let artifacts = Cmd::cargo([
                "test",
                "--locked",
                "--no-run",
                "--message-format=json",
                "-p",
                &c.name,
            ])
            .args(NO_STD_TEST_PROFILE)
            .args(&args)
            .run_stdout()
            .and_then(|json| artifact_files(&json));
            let artifacts = match artifacts {
                Ok(a) => a,
                Err(e) => {
                    failures.check(Err(e));
                    continue;
                }
            };
            if let Some((_, same)) = built
                .iter()
                .find(|(a, _)| !artifacts.is_empty() && *a == artifacts)
            {
                eprintln!(
                    "xtask: `{label}` built exactly the binaries of `{same}`, whose tests \
                     already ran: not run again"
                );
                continue;
            }
            built.push((artifacts, label));
            failures.check(
                Cmd::cargo(["test", "--locked", "-p", &c.name])
                    .args(NO_STD_TEST_PROFILE)
                    .args(&args)
                    .env("PROPTEST_RNG_SEED", &seed)
                    .run(),
            );
        }
    }
    if has_nextest() {
        failures.check(
            Cmd::cargo([
                "nextest",
                "run",
                "--workspace",
                "--locked",
                "--no-tests=warn",
            ])
            .args(WORKSPACE_TEST_FEATURES)
            .env("PROPTEST_RNG_SEED", &seed)
            .run(),
        );
        failures.check(
            Cmd::cargo(["test", "--workspace", "--locked", "--doc"])
                .args(WORKSPACE_TEST_FEATURES)
                .run(),
        );
    } else {
        eprintln!("xtask: cargo-nextest not installed, using cargo test");
        failures.check(
            Cmd::cargo(["test", "--workspace", "--locked"])
                .args(WORKSPACE_TEST_FEATURES)
                .env("PROPTEST_RNG_SEED", &seed)
                .run(),
        );
    }
    failures.finish()
}

/// Every file of every `compiler-artifact` message in cargo's `--message-format=json`
/// output, sorted. Cargo names its outputs with a hash of the package, target, features,
/// profile and dependencies, so two builds with the same list built the same things.
///
/// # Errors
/// A line that is not JSON.
pub(crate) fn artifact_files(json_lines: &str) -> Res<Vec<String>> {
    /// The fields of a `--message-format=json` line the xtask reads.
    #[derive(serde::Deserialize)]
    struct Message {
        reason: String,
        #[serde(default)]
        filenames: Vec<String>,
    }
    let mut files = Vec::new();
    for line in json_lines.lines().filter(|l| l.starts_with('{')) {
        let message: Message =
            serde_json::from_str(line).map_err(|e| format!("cargo message {line:?}: {e}"))?;
        if message.reason == "compiler-artifact" {
            files.extend(message.filenames);
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// `cargo xtask doc`: rustdoc with warnings denied (broken intra-doc links etc.).
pub(crate) fn doc() -> Res {
    Cmd::cargo([
        "doc",
        "--workspace",
        "--no-deps",
        "--all-features",
        "--locked",
    ])
    .env("RUSTDOCFLAGS", "-D warnings")
    .run()
}

/// `cargo xtask features`: `cargo check` of every core crate's library with no features,
/// each feature alone, and all features (cargo-hack's `--each-feature`, walked by hand;
/// `cargo check` without `--all-targets` never builds dev-dependencies).
pub(crate) fn features() -> Res {
    let packages = meta::metadata()?;
    let mut failures = Failures::default();
    for c in meta::selected_crates()? {
        let p = meta::find(&packages, &c.name)?;
        let mut sets: Vec<Vec<String>> = vec![Vec::new()];
        sets.extend(
            p.features
                .keys()
                .filter(|f| f.as_str() != "default")
                .map(|f| vec![f.clone()]),
        );
        for set in sets {
            failures.check(
                Cmd::cargo(["check", "--locked", "-p", &c.name])
                    .args(meta::feature_args(&set))
                    .run(),
            );
        }
        failures.check(Cmd::cargo(["check", "--locked", "-p", &c.name, "--all-features"]).run());
    }
    failures.finish()
}

/// Parses `major.minor[.patch]`.
pub(crate) fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let mut parts = v.trim().split('.').map(str::parse::<u64>);
    let major = parts.next()?.ok()?;
    let minor = parts.next().unwrap_or(Ok(0)).ok()?;
    let patch = parts.next().unwrap_or(Ok(0)).ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some((major, minor, patch))
}

/// The workspace `rust-version` from the root manifest's `[workspace.package]`.
fn workspace_msrv() -> Res<String> {
    let path = root().join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    meta::toml_string(&text, "[workspace.package]", "rust-version")
        .ok_or_else(|| "root Cargo.toml: no rust-version in [workspace.package]".to_owned())
}

/// MSRV violations among `packages` against `msrv` (pure, for testing).
pub(crate) fn msrv_problems(packages: &[Package], msrv: &str) -> Vec<String> {
    let Some(ours) = parse_version(msrv) else {
        return vec![format!("workspace rust-version {msrv:?} is not a version")];
    };
    let mut out = Vec::new();
    for p in packages {
        match (&p.rust_version, p.member) {
            (Some(v), true) if v != msrv => out.push(format!(
                "member {} has rust-version {v}, not the workspace's {msrv}",
                p.name
            )),
            (None, true) => out.push(format!(
                "member {} does not inherit rust-version ({})",
                p.name, p.manifest_path
            )),
            (Some(v), false) => match parse_version(v) {
                Some(theirs) if theirs <= ours => {}
                Some(_) => out.push(format!(
                    "dependency {} {} needs rust {v} > our MSRV {msrv}",
                    p.name, p.version
                )),
                None => out.push(format!(
                    "dependency {} has unparsable rust-version {v}",
                    p.name
                )),
            },
            _ => {}
        }
    }
    out
}

/// `cargo xtask msrv`: static MSRV check (no older toolchain can be had here). Every
/// workspace member inherits the workspace `rust-version`, it is 1.89 (ARCHITECTURE.md), and
/// every package in the lockfile's graph declares a `rust_version` ≤ ours. Clippy's
/// `incompatible_msrv` (part of `lint`) covers library APIs newer than the MSRV.
pub(crate) fn msrv() -> Res {
    const ARCHITECTURE_MSRV: &str = "1.89";
    let msrv = workspace_msrv()?;
    let mut problems = Vec::new();
    if msrv != ARCHITECTURE_MSRV {
        problems.push(format!(
            "workspace rust-version is {msrv}, ARCHITECTURE.md fixes {ARCHITECTURE_MSRV}"
        ));
    }
    let packages = meta::metadata()?;
    problems.extend(msrv_problems(&packages, &msrv));
    let deps = packages.iter().filter(|p| !p.member).count();
    if problems.is_empty() {
        eprintln!(
            "msrv: {} members inherit {msrv}; {deps} dependencies declare rust_version <= {msrv} or none",
            packages.len() - deps
        );
        Ok(())
    } else {
        Err(format!("msrv:\n  {}", problems.join("\n  ")))
    }
}

/// `cargo xtask bench-build`: compiles the criterion benches (own workspace and lockfile)
/// into `target/benches`, so everything CI builds is under `target/`. (Nothing else in CI
/// builds the bench profile, so there is nothing to share with the workspace's own units.)
pub(crate) fn bench_build() -> Res {
    let cmd = Cmd::cargo([
        "bench",
        "--no-run",
        "--locked",
        "--profile",
        "ci-bench",
        "--manifest-path",
        "tests/benches/Cargo.toml",
    ])
    .env("CARGO_TARGET_DIR", target_dir().join("benches"));
    let lock = root().join("tests/benches/Cargo.lock");
    if !lock.is_file() {
        return Err(format!(
            "{} is missing: generate it with `{} generate-lockfile --manifest-path \
             tests/benches/Cargo.toml` and commit it",
            lock.display(),
            cargo()
        ));
    }
    cmd.run()
        .map_err(|e| format!("{e}\n(if cargo said the lock file needs updating: regenerate tests/benches/Cargo.lock and commit it)"))
}

#[cfg(test)]
mod tests {
    use super::{artifact_files, msrv_problems, parse_version};
    use crate::meta::Package;

    fn pkg(name: &str, rv: Option<&str>, member: bool) -> Package {
        Package {
            name: name.into(),
            version: "1.0.0".into(),
            rust_version: rv.map(str::to_owned),
            features: Default::default(),
            member,
            manifest_path: format!("{name}/Cargo.toml"),
            tests_enable_std: false,
        }
    }

    #[test]
    fn artifact_files_come_from_compiler_artifact_messages_only() {
        let json = concat!(
            r#"{"reason":"compiler-artifact","filenames":["/t/debug/deps/libm-b.rlib","/t/debug/deps/libm-a.rmeta"],"executable":null,"fresh":true}"#,
            "\n",
            r#"{"reason":"build-script-executed","out_dir":"/t/debug/build/x"}"#,
            "\n",
            r#"{"reason":"compiler-artifact","filenames":["/t/debug/deps/suite-1f"],"executable":"/t/debug/deps/suite-1f","fresh":false}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
            "\n"
        );
        assert_eq!(
            artifact_files(json).unwrap(),
            [
                "/t/debug/deps/libm-a.rmeta",
                "/t/debug/deps/libm-b.rlib",
                "/t/debug/deps/suite-1f"
            ]
        );
        assert!(artifact_files("{not json").is_err());
    }

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(parse_version("1.89"), Some((1, 89, 0)));
        assert_eq!(parse_version("1.9.2"), Some((1, 9, 2)));
        assert!(parse_version("1.9").unwrap() < parse_version("1.89").unwrap());
        assert_eq!(parse_version("1.x"), None);
        assert_eq!(parse_version("1.2.3.4"), None);
    }

    #[test]
    fn msrv_flags_new_dependencies_and_non_inheriting_members() {
        let packages = [
            pkg("ok-member", Some("1.89"), true),
            pkg("old-dep", Some("1.63"), false),
            pkg("no-rv-dep", None, false),
            pkg("edge-dep", Some("1.89.0"), false),
            pkg("new-dep", Some("1.90"), false),
            pkg("bad-member", Some("1.85"), true),
            pkg("bare-member", None, true),
        ];
        let problems = msrv_problems(&packages, "1.89");
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(problems[0].contains("new-dep"));
        assert!(problems[1].contains("bad-member"));
        assert!(problems[2].contains("bare-member"));
    }
}
