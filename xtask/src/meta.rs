//! What the xtask needs to know about the workspace: the library crates (from the file
//! system, so `tidy` works without cargo) and their features and rust versions (from
//! `cargo metadata`).

use crate::json::{self, Json};
use crate::util::{Cmd, Res, root};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The std-only packages under `crates/`; every other package there is a core library.
pub(crate) const STD_ONLY: &[&str] = &[
    "dpinfer-cli",
    "dpinfer-plots",
    "dpinfer-ledger",
    "dpinfer-workers",
    "dpinfer-pipeline",
    "dpinfer-neural",
];

/// A package under `crates/`.
#[derive(Debug, Clone)]
pub(crate) struct Crate {
    /// Package name (`dpinfer-math`).
    pub(crate) name: String,
    /// Its directory (`<root>/crates/math`).
    pub(crate) dir: PathBuf,
}

/// Reads `name = "…"` from the `[package]` table of a manifest.
pub(crate) fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package
            && let Some(rest) = line.strip_prefix("name")
            && let Some(value) = rest.trim_start().strip_prefix('=')
        {
            return Some(value.trim().trim_matches('"').to_owned());
        }
    }
    None
}

/// Every package under `crates/` except the std-only ones, sorted by directory.
pub(crate) fn library_crates() -> Res<Vec<Crate>> {
    let dir = root().join("crates");
    let entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let manifest = entry.path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let name = package_name(&text)
            .ok_or_else(|| format!("{}: no [package] name", manifest.display()))?;
        if !STD_ONLY.contains(&name.as_str()) {
            out.push(Crate {
                name,
                dir: entry.path(),
            });
        }
    }
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    if out.is_empty() {
        return Err("no library crates found under crates/".to_owned());
    }
    Ok(out)
}

/// The library crates the build tasks work on: all of them, or those named in the
/// comma-separated `XTASK_ONLY` (for local runs while another crate is mid-edit; `ci`
/// reports when the selection is narrowed). `tidy` always checks every crate.
pub(crate) fn selected_crates() -> Res<Vec<Crate>> {
    let all = library_crates()?;
    let Some(only) = std::env::var("XTASK_ONLY")
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        return Ok(all);
    };
    let names: Vec<&str> = only.split(',').map(str::trim).collect();
    for name in &names {
        if !all.iter().any(|c| c.name == *name) {
            return Err(format!(
                "XTASK_ONLY names {name}, which is not a library crate"
            ));
        }
    }
    eprintln!("xtask: XTASK_ONLY={only}: building only these library crates");
    Ok(all
        .into_iter()
        .filter(|c| names.contains(&c.name.as_str()))
        .collect())
}

/// One package from `cargo metadata`.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    /// Package name.
    pub(crate) name: String,
    /// Package version.
    pub(crate) version: String,
    /// `rust-version`, if declared.
    pub(crate) rust_version: Option<String>,
    /// `[features]`: feature → what it enables.
    pub(crate) features: BTreeMap<String, Vec<String>>,
    /// Whether it is a member of the root workspace.
    pub(crate) member: bool,
    /// Path of its `Cargo.toml`.
    pub(crate) manifest_path: String,
    /// Whether it has a dev-dependency on itself with default features on or `std` named:
    /// its tests are then built with `std`, whatever features the command line selects.
    pub(crate) tests_enable_std: bool,
}

/// Runs `cargo metadata --format-version 1 --locked` for the root workspace.
///
/// Fails with an explanation when `Cargo.lock` would have to change (the lockfile is
/// committed; a task must never rewrite it silently).
pub(crate) fn metadata() -> Res<Vec<Package>> {
    let cmd = Cmd::cargo(["metadata", "--format-version", "1", "--locked"]);
    let shown = cmd.shown().to_owned();
    let (ok, stdout, stderr) = cmd.output()?;
    if !ok {
        return Err(lock_message(&shown, &stderr));
    }
    let doc = json::parse(&stdout)?;
    let members: Vec<&str> = doc
        .get("workspace_members")
        .map(Json::items)
        .unwrap_or_default()
        .iter()
        .filter_map(Json::as_str)
        .collect();
    let mut out = Vec::new();
    for p in doc.get("packages").map(Json::items).unwrap_or_default() {
        let text = |key: &str| p.get(key).and_then(Json::as_str).map(str::to_owned);
        let id = text("id").unwrap_or_default();
        let features = p
            .get("features")
            .map(Json::fields)
            .unwrap_or_default()
            .iter()
            .map(|(k, v)| {
                let enables = v.items().iter().filter_map(Json::as_str).map(str::to_owned);
                (k.clone(), enables.collect())
            })
            .collect();
        let name = text("name").ok_or("cargo metadata: package without a name")?;
        let tests_enable_std = p
            .get("dependencies")
            .map(Json::items)
            .unwrap_or_default()
            .iter()
            .any(|d| dev_dependency_enables_std(d, &name, &features));
        out.push(Package {
            name,
            version: text("version").unwrap_or_default(),
            rust_version: text("rust_version"),
            features,
            member: members.contains(&id.as_str()),
            manifest_path: text("manifest_path").unwrap_or_default(),
            tests_enable_std,
        });
    }
    Ok(out)
}

/// Whether the `cargo metadata` dependency entry `d` is a dev-dependency of package `name`
/// on itself that turns `std` on (default features kept while `default` implies `std`, or a
/// listed feature that implies it).
fn dev_dependency_enables_std(
    d: &Json,
    name: &str,
    features: &BTreeMap<String, Vec<String>>,
) -> bool {
    let text = |key: &str| d.get(key).and_then(Json::as_str);
    if text("name") != Some(name) || text("kind") != Some("dev") {
        return false;
    }
    let probe = Package {
        name: name.to_owned(),
        version: String::new(),
        rust_version: None,
        features: features.clone(),
        member: true,
        manifest_path: String::new(),
        tests_enable_std: false,
    };
    let defaults = d.get("uses_default_features").and_then(Json::as_bool) != Some(false);
    let listed = d.get("features").map(Json::items).unwrap_or_default();
    (defaults && probe.implies("default", "std"))
        || listed
            .iter()
            .filter_map(Json::as_str)
            .any(|f| f == "std" || probe.implies(f, "std"))
}

/// Explains a failed `--locked` cargo call.
pub(crate) fn lock_message(shown: &str, stderr: &str) -> String {
    if stderr.contains("--locked") || stderr.contains("lock file") {
        format!(
            "`{shown}` failed: Cargo.lock is out of date with the manifests.\n{}\n\
             The lockfile is committed and CI never rewrites it. Update it deliberately \
             (`cargo update --workspace`, or `cargo generate-lockfile` for a nested \
             workspace), review the diff and commit it.",
            stderr.trim()
        )
    } else {
        format!("`{shown}` failed:\n{}", stderr.trim())
    }
}

impl Package {
    /// Whether `feature` (transitively) enables the crate's own `target` feature or any
    /// dependency's `…/target` feature.
    pub(crate) fn implies(&self, feature: &str, target: &str) -> bool {
        let mut seen: Vec<&str> = Vec::new();
        let mut stack = vec![feature];
        while let Some(f) = stack.pop() {
            if f == target {
                return true;
            }
            if seen.contains(&f) {
                continue;
            }
            seen.push(f);
            for enabled in self.features.get(f).map(Vec::as_slice).unwrap_or_default() {
                if enabled.rsplit('/').next() == Some(target) && enabled.contains('/') {
                    return true;
                }
                if !enabled.contains('/') && !enabled.starts_with("dep:") {
                    stack.push(enabled);
                }
            }
        }
        false
    }

    /// Features that need neither `alloc` nor `std` (e.g. the facade's crate switches).
    pub(crate) fn core_features(&self) -> Vec<String> {
        self.features
            .keys()
            .filter(|f| f.as_str() != "default")
            .filter(|f| !self.implies(f, "alloc") && !self.implies(f, "std"))
            .cloned()
            .collect()
    }

    /// The largest no-std feature set: every feature that does not enable `std`.
    pub(crate) fn no_std_features(&self) -> Vec<String> {
        self.features
            .keys()
            .filter(|f| f.as_str() != "default")
            .filter(|f| !self.implies(f, "std"))
            .cloned()
            .collect()
    }
}

/// Finds a package by name.
pub(crate) fn find<'a>(packages: &'a [Package], name: &str) -> Res<&'a Package> {
    packages
        .iter()
        .find(|p| p.name == name && p.member)
        .ok_or_else(|| format!("cargo metadata does not list workspace member {name}"))
}

/// Cargo arguments selecting `features` with default features off.
pub(crate) fn feature_args(features: &[String]) -> Vec<String> {
    let mut args = vec!["--no-default-features".to_owned()];
    if !features.is_empty() {
        args.push("--features".to_owned());
        args.push(features.join(","));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::{Package, dev_dependency_enables_std, package_name};
    use crate::json;
    use std::collections::BTreeMap;

    fn pkg(features: &[(&str, &[&str])]) -> Package {
        let features: BTreeMap<String, Vec<String>> = features
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.iter().map(|s| (*s).to_owned()).collect()))
            .collect();
        Package {
            name: "p".into(),
            version: "0.1.0".into(),
            rust_version: None,
            features,
            member: true,
            manifest_path: String::new(),
            tests_enable_std: false,
        }
    }

    #[test]
    fn feature_classes_follow_implications() {
        let p = pkg(&[
            ("default", &["std", "math"]),
            ("alloc", &["dep-a/alloc"]),
            ("std", &["alloc", "dep-a?/std"]),
            ("math", &["dep:dpinfer-math"]),
            ("fancy", &["alloc"]),
        ]);
        assert!(p.implies("std", "alloc"));
        assert!(p.implies("fancy", "alloc"));
        assert!(!p.implies("fancy", "std"));
        assert!(!p.implies("math", "alloc"));
        assert_eq!(p.core_features(), vec!["math"]);
        assert_eq!(p.no_std_features(), vec!["alloc", "fancy", "math"]);
    }

    #[test]
    fn a_dev_dependency_on_itself_with_std_is_found() {
        let features = pkg(&[("default", &["std"]), ("std", &["alloc"]), ("alloc", &[])]).features;
        let dep = |text: &str| json::parse(text).unwrap();
        let on = |text: &str| dev_dependency_enables_std(&dep(text), "p", &features);
        // default features kept (cargo's default for a path dependency)
        assert!(on(
            r#"{"name":"p","kind":"dev","uses_default_features":true,"features":["serde"]}"#
        ));
        // default features off, std named
        assert!(on(
            r#"{"name":"p","kind":"dev","uses_default_features":false,"features":["std"]}"#
        ));
        // default features off, only alloc: a real no-std test build
        assert!(!on(
            r#"{"name":"p","kind":"dev","uses_default_features":false,"features":["alloc"]}"#
        ));
        // a normal dependency, or another package
        assert!(!on(
            r#"{"name":"p","kind":null,"uses_default_features":true,"features":[]}"#
        ));
        assert!(!on(
            r#"{"name":"q","kind":"dev","uses_default_features":true,"features":[]}"#
        ));
    }

    #[test]
    fn reads_the_package_name_only_from_the_package_table() {
        let m = "[workspace]\nname = \"no\"\n[package]\nversion = \"1\"\nname = \"yes\"\n";
        assert_eq!(package_name(m).as_deref(), Some("yes"));
        assert_eq!(package_name("[lib]\nname = \"x\"\n"), None);
    }
}
