//! `nostd` and `wasm-smoke`: cross builds with Debian's rustc (STYLE.md §5.2).
//!
//! The rustup toolchain here has only the host target. Debian's `rustc-web` / `cargo-web` /
//! `rust-web-src` packages install a second rustc with the standard library sources, which
//! with `RUSTC_BOOTSTRAP=1` and `-Zbuild-std=core,alloc` builds `thumbv7em-none-eabihf` and
//! `wasm32-unknown-unknown`. Under `cargo xtask` the rustup shims come first on `PATH`, so
//! that cargo is called by full path and `RUSTC` is set explicitly.

use crate::meta::{self, Package};
use crate::util::{Cmd, Failures, Res, on_path, root, target_dir};
use std::path::{Path, PathBuf};

/// Debian packages that provide the cross toolchain (`lld` provides `wasm-ld`).
const TOOLCHAIN_PACKAGES: &[&str] = &["rustc-web", "cargo-web", "rust-web-src", "lld"];

/// The cross targets.
pub(crate) const TARGETS: &[&str] = &["thumbv7em-none-eabihf", "wasm32-unknown-unknown"];

/// The cross builds' target directory under `target/`, one for both targets: cargo keeps
/// each target's artifacts in `<dir>/<triple>/`, and the host units both need (build
/// scripts, proc macros such as `serde_derive`) are compiled once.
pub(crate) const CROSS_DIR: &str = "cross";

/// The smoke crate's manifest, relative to the root.
const SMOKE_MANIFEST: &str = "tests/no-std-smoke/Cargo.toml";

/// Debian's cargo and rustc, located and checked.
#[derive(Debug)]
pub(crate) struct Cross {
    cargo: String,
    rustc: String,
    wasm_linker: String,
}

fn env_or(key: &str, default: &str) -> (String, bool) {
    match std::env::var(key) {
        Ok(v) if !v.is_empty() => (v, true),
        _ => (default.to_owned(), false),
    }
}

impl Cross {
    /// Finds the toolchain, installing it with apt when it is missing and we run as root
    /// (unless `XTASK_NO_INSTALL` is set); otherwise fails with the install command.
    pub(crate) fn locate() -> Res<Self> {
        let problems = Self::problems();
        if problems.is_empty() {
            return Self::build();
        }
        let shown = problems.join("\n  ");
        eprintln!("xtask: cross toolchain incomplete:\n  {shown}");
        ensure_apt_packages(TOOLCHAIN_PACKAGES, &format!("cross toolchain:\n  {shown}"))?;
        let after = Self::problems();
        if after.is_empty() {
            return Self::build();
        }
        Err(format!(
            "cross toolchain still incomplete after installing {}:\n  {}\n\
             (XTASK_CROSS_CARGO / XTASK_CROSS_RUSTC override the paths /usr/bin/cargo and \
             /usr/bin/rustc; unset them to use Debian's.)",
            TOOLCHAIN_PACKAGES.join(" "),
            after.join("\n  ")
        ))
    }

    fn build() -> Res<Self> {
        let (cargo, _) = env_or("XTASK_CROSS_CARGO", "/usr/bin/cargo");
        let (rustc, _) = env_or("XTASK_CROSS_RUSTC", "/usr/bin/rustc");
        let (wasm_linker, _) = env_or("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", "wasm-ld");
        Ok(Self {
            cargo,
            rustc,
            wasm_linker,
        })
    }

    /// What is missing, one line each (empty when the toolchain is usable).
    fn problems() -> Vec<String> {
        let mut out = Vec::new();
        let (cargo, cargo_set) = env_or("XTASK_CROSS_CARGO", "/usr/bin/cargo");
        let (rustc, rustc_set) = env_or("XTASK_CROSS_RUSTC", "/usr/bin/rustc");
        let origin = |set: bool, var: &str| {
            if set {
                format!(" (from {var})")
            } else {
                String::new()
            }
        };
        if !Path::new(&cargo).is_file() {
            out.push(format!(
                "cargo not found at {cargo}{}",
                origin(cargo_set, "XTASK_CROSS_CARGO")
            ));
        }
        if Path::new(&rustc).is_file() {
            match Cmd::new(&rustc).args(["--print", "sysroot"]).output() {
                Ok((true, sysroot, _)) => {
                    let core =
                        PathBuf::from(sysroot.trim()).join("lib/rustlib/src/rust/library/core");
                    if !core.is_dir() {
                        out.push(format!(
                            "standard library sources missing at {} (package rust-web-src)",
                            core.display()
                        ));
                    }
                }
                _ => out.push(format!("{rustc} --print sysroot failed")),
            }
        } else {
            out.push(format!(
                "rustc not found at {rustc}{}",
                origin(rustc_set, "XTASK_CROSS_RUSTC")
            ));
        }
        let (linker, _) = env_or("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", "wasm-ld");
        if !on_path(&linker) {
            out.push(format!("wasm linker `{linker}` not on PATH (package lld)"));
        }
        out
    }

    /// A cargo command for `target` with the cross environment set.
    pub(crate) fn cargo(&self, target: &str, args: &[&str]) -> Cmd {
        let target_dir = target_dir().join(CROSS_DIR);
        Cmd::new(&self.cargo)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("RUSTC", &self.rustc)
            .env(
                "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER",
                &self.wasm_linker,
            )
            .args(["build", "-Zbuild-std=core,alloc", "--target", target])
            .args([std::ffi::OsStr::new("--target-dir"), target_dir.as_os_str()])
            .args(args)
    }
}

/// Installs Debian `packages` when running as root with apt-get (after `apt-get update`);
/// otherwise (or with `XTASK_NO_INSTALL` set) fails with the exact command to run.
pub(crate) fn ensure_apt_packages(packages: &[&str], why: &str) -> Res {
    let command = format!(
        "apt-get update && apt-get install -y {}",
        packages.join(" ")
    );
    let is_root = Cmd::new("id")
        .args(["-u"])
        .output()
        .is_ok_and(|(ok, out, _)| ok && out.trim() == "0");
    let no_install = std::env::var_os("XTASK_NO_INSTALL").is_some_and(|v| !v.is_empty());
    if no_install || !is_root || !on_path("apt-get") {
        let reason = if no_install {
            "XTASK_NO_INSTALL is set"
        } else if is_root {
            "apt-get is not available"
        } else {
            "not running as root"
        };
        return Err(format!(
            "missing {why}\nNot installing automatically ({reason}). Install with:\n    \
             sudo sh -c '{command}'"
        ));
    }
    eprintln!("xtask: installing {} with apt-get", packages.join(" "));
    Cmd::new("apt-get")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .args(["update"])
        .run()?;
    Cmd::new("apt-get")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .args(["install", "-y"])
        .args(packages)
        .run()
}

/// Seeds `tests/no-std-smoke/Cargo.lock` from the root `Cargo.lock`, so the smoke crate
/// builds with exactly the dependency versions the workspace has committed, with no second
/// lockfile to keep in step (cargo keeps every locked version that still fits and drops the
/// rest). The copy is generated, ignored by git, and the smoke build runs without `--locked`.
fn seed_smoke_lockfile() -> Res {
    let from = root().join("Cargo.lock");
    let to = root().join("tests/no-std-smoke/Cargo.lock");
    std::fs::copy(&from, &to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// Cargo arguments building the smoke crate in release mode.
fn smoke_args() -> Vec<String> {
    let manifest = root().join(SMOKE_MANIFEST);
    vec![
        "--release".to_owned(),
        "--manifest-path".to_owned(),
        manifest.to_string_lossy().into_owned(),
    ]
}

/// `-p` arguments and `--features` lists for the cross builds.
fn selection(packages: &[Package]) -> Res<(Vec<String>, Vec<String>, Vec<String>)> {
    let mut select = Vec::new();
    let mut core = Vec::new();
    let mut no_std = Vec::new();
    for c in meta::selected_crates()? {
        let p = meta::find(packages, &c.name)?;
        select.push("-p".to_owned());
        select.push(c.name.clone());
        core.extend(p.core_features().iter().map(|f| format!("{}/{f}", c.name)));
        no_std.extend(
            p.no_std_features()
                .iter()
                .map(|f| format!("{}/{f}", c.name)),
        );
    }
    Ok((select, core, no_std))
}

/// `cargo xtask nostd`: every library crate for both targets, without default features and
/// with every non-std feature (`alloc` and the rest), plus the smoke crate (build-only).
pub(crate) fn nostd() -> Res {
    let cross = Cross::locate()?;
    let packages = meta::metadata()?;
    let (select, core, no_std) = selection(&packages)?;
    let mut failures = Failures::default();
    for &target in TARGETS {
        for features in [&core, &no_std] {
            let mut args: Vec<&str> = select.iter().map(String::as_str).collect();
            args.push("--locked");
            args.push("--no-default-features");
            let joined = features.join(",");
            if !features.is_empty() {
                args.push("--features");
                args.push(&joined);
            }
            failures.check(cross.cargo(target, &args).run());
        }
        let smoke = smoke_args();
        let smoke: Vec<&str> = smoke.iter().map(String::as_str).collect();
        failures.check(seed_smoke_lockfile().and_then(|()| cross.cargo(target, &smoke).run()));
    }
    failures.finish()
}

/// `cargo xtask wasm-smoke`: builds `tests/no-std-smoke` for wasm32 and runs its exported
/// `verify()` under node (`run.mjs`).
pub(crate) fn wasm_smoke() -> Res {
    let cross = Cross::locate()?;
    if !on_path("node") {
        ensure_apt_packages(&["nodejs"], "node (runs the wasm module)")?;
    }
    seed_smoke_lockfile()?;
    let smoke = smoke_args();
    let smoke: Vec<&str> = smoke.iter().map(String::as_str).collect();
    cross.cargo("wasm32-unknown-unknown", &smoke).run()?;
    let wasm = target_dir()
        .join(CROSS_DIR)
        .join("wasm32-unknown-unknown/release/dpinfer_no_std_smoke.wasm");
    if !wasm.is_file() {
        return Err(format!("expected module {} was not built", wasm.display()));
    }
    Cmd::new("node")
        .args([
            std::ffi::OsStr::new("tests/no-std-smoke/run.mjs"),
            wasm.as_os_str(),
        ])
        .run()
}
