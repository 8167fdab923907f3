//! What the xtask needs to know about the workspace: the library crates (from the file
//! system, so `tidy` works without cargo) and their features and rust versions (from
//! `cargo metadata`).

use crate::util::{Cmd, Res, root};
use serde::Deserialize;
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
    toml_string(manifest, "[package]", "name")
}

/// Reads `key = "…"` (quotes stripped) from the `table` header (`"[package]"`) of a manifest:
/// a line scan, enough for the workspace's own manifests.
pub(crate) fn toml_string(manifest: &str, table: &str, key: &str) -> Option<String> {
    let mut in_table = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_table = line == table;
        } else if in_table
            && let Some((k, value)) = line.split_once('=')
            && k.trim() == key
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
    parse_metadata(&stdout)
}

/// The part of `cargo metadata --format-version 1` the xtask reads.
#[derive(Deserialize)]
struct Metadata {
    packages: Vec<RawPackage>,
    workspace_members: Vec<String>,
}

/// One entry of `packages`.
#[derive(Deserialize)]
struct RawPackage {
    id: String,
    name: String,
    version: String,
    rust_version: Option<String>,
    #[serde(default)]
    features: BTreeMap<String, Vec<String>>,
    manifest_path: String,
    #[serde(default)]
    dependencies: Vec<Dependency>,
}

/// One entry of a package's `dependencies`.
#[derive(Deserialize)]
struct Dependency {
    name: String,
    /// `"dev"`, `"build"` or `null` (normal).
    kind: Option<String>,
    #[serde(default = "yes")]
    uses_default_features: bool,
    #[serde(default)]
    features: Vec<String>,
}

const fn yes() -> bool {
    true
}

/// [`Package`]s from `cargo metadata`'s JSON (pure, for testing).
fn parse_metadata(json: &str) -> Res<Vec<Package>> {
    let doc: Metadata =
        serde_json::from_str(json).map_err(|e| format!("cargo metadata output: {e}"))?;
    Ok(doc
        .packages
        .into_iter()
        .map(|p| {
            let tests_enable_std = p
                .dependencies
                .iter()
                .any(|d| dev_dependency_enables_std(d, &p.name, &p.features));
            Package {
                member: doc.workspace_members.contains(&p.id),
                name: p.name,
                version: p.version,
                rust_version: p.rust_version,
                features: p.features,
                manifest_path: p.manifest_path,
                tests_enable_std,
            }
        })
        .collect())
}

/// Whether the `cargo metadata` dependency entry `d` is a dev-dependency of package `name`
/// on itself that turns `std` on (default features kept while `default` implies `std`, or a
/// listed feature that implies it).
fn dev_dependency_enables_std(
    d: &Dependency,
    name: &str,
    features: &BTreeMap<String, Vec<String>>,
) -> bool {
    if d.name != name || d.kind.as_deref() != Some("dev") {
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
    (d.uses_default_features && probe.implies("default", "std"))
        || d.features
            .iter()
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
    use super::{Package, dev_dependency_enables_std, package_name, parse_metadata, toml_string};
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
        let dep = |text: &str| serde_json::from_str(text).unwrap();
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
    fn metadata_marks_members_and_reads_optional_fields() {
        let json = r#"{"packages":[
            {"id":"path+file:///w/a#0.1.0","name":"a","version":"0.1.0","rust_version":"1.85",
             "features":{"default":["std"],"std":[]},"manifest_path":"/w/a/Cargo.toml",
             "dependencies":[{"name":"a","kind":"dev","uses_default_features":true,"features":[]}]},
            {"id":"registry+x#libm@0.2.0","name":"libm","version":"0.2.0","rust_version":null,
             "features":{},"manifest_path":"/r/libm/Cargo.toml","dependencies":[]}],
            "workspace_members":["path+file:///w/a#0.1.0"],"resolve":null,"version":1}"#;
        let p = parse_metadata(json).unwrap();
        assert_eq!(p.len(), 2);
        assert!(p[0].member && p[0].tests_enable_std);
        assert_eq!(p[0].rust_version.as_deref(), Some("1.85"));
        assert!(!p[1].member && !p[1].tests_enable_std);
        assert_eq!(p[1].rust_version, None);
        assert!(parse_metadata("{\"packages\": 3}").is_err());
    }

    #[test]
    fn reads_the_package_name_only_from_the_package_table() {
        let m = "[workspace]\nname = \"no\"\n[package]\nversion = \"1\"\nname = \"yes\"\n";
        assert_eq!(package_name(m).as_deref(), Some("yes"));
        assert_eq!(package_name("[lib]\nname = \"x\"\n"), None);
        // The key must match whole (not `namespace`); the value's quotes are stripped.
        let w = "[package]\nnamespace = \"n\"\n[workspace.package]\nrust-version = \"1.85\"\n";
        assert_eq!(package_name(w), None);
        let msrv = toml_string(w, "[workspace.package]", "rust-version");
        assert_eq!(msrv.as_deref(), Some("1.85"));
    }
}
