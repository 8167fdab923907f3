//! `cargo xtask tidy`: repository policy checks, also run as `#[test]`s by
//! `cargo test -p xtask` (rust-analyzer's `xtask/src/tidy.rs` is the model).
//!
//! Each check returns its violations as `path:line: message` strings.
//!
//! # Why there is no `std::` scanner
//! Library code may name `std` only where a feature that enables `std` is on. A build proves
//! that, given the header rule checked here: every library `lib.rs` starts with `#![no_std]`
//! and declares `extern crate std` only under `#[cfg(feature = "std")]`. Then `std` is not in
//! scope in any build without that feature, and `cargo xtask features` (each feature alone,
//! `--no-default-features`) and `cargo xtask nostd` (every non-std feature together, for
//! `thumbv7em-none-eabihf`, which has no `std` at all) fail to compile any ungated `std::`
//! path. The checks below are the ones no build makes.

use crate::meta::{self, Crate};
use crate::util::{Res, files_with_ext, rel, root, rust_files};
use std::path::{Path, PathBuf};

/// Runs every policy check; `Err` lists all violations.
pub(crate) fn run() -> Res {
    type Check = fn() -> Res<Vec<String>>;
    let checks: [(&str, Check); 7] = [
        ("lib.rs headers", check_lib_headers),
        (
            "Markdown links resolve inside the repository",
            check_markdown_links,
        ),
        ("library manifests", check_manifests),
        ("READMEs", check_readmes),
        ("todo!/unimplemented!/should_panic", check_forbidden),
        ("#[non_exhaustive] error enums", check_error_enums),
        (
            "workspace members inherit rust-version",
            check_member_rust_version,
        ),
    ];
    let mut failed = Vec::new();
    for (name, check) in checks {
        let problems = check()?;
        if problems.is_empty() {
            eprintln!("tidy: ok    {name}");
        } else {
            eprintln!("tidy: FAIL  {name}");
            for p in &problems {
                eprintln!("    {p}");
            }
            failed.push(format!("{name} ({} violations)", problems.len()));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("tidy failed: {}", failed.join("; ")))
    }
}

fn read(path: &Path) -> Res<String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", rel(path)))
}

/// Blanks comments, string/char literal contents (keeping the quotes) with spaces; newlines
/// are kept so offsets map to the same lines.
pub(crate) fn strip(src: &str) -> Vec<char> {
    let s: Vec<char> = src.chars().collect();
    let mut out = s.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(s.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = s[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(s.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            let mut j = i;
            while j < s.len() {
                if s[j] == '/' && s.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if s[j] == '*' && s.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !ident(s[i - 1]) || (s[i - 1] == 'b' && (i < 2 || !ident(s[i - 2]))))
        {
            // raw string r"…", r#"…"#, br"…"
            let hashes = s[i + 1..].iter().take_while(|&&c| c == '#').count();
            let open = i + 1 + hashes;
            if s.get(open) != Some(&'"') {
                i += 1;
                continue;
            }
            let mut j = open + 1;
            while j < s.len() {
                if s[j] == '"'
                    && s[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == '#')
                        .count()
                        == hashes
                {
                    break;
                }
                j += 1;
            }
            blank(&mut out, open + 1, j);
            i = j + 1 + hashes;
        } else if c == '"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != '"' {
                j += if s[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if c == '\'' {
            // char literal ('x', '\n', '\u{..}') or a lifetime/label ('a)
            if next == Some('\\') {
                let end = s[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map_or(s.len(), |p| i + 2 + p);
                blank(&mut out, i + 1, end);
                i = end + 1;
            } else if s.get(i + 2) == Some(&'\'') {
                blank(&mut out, i + 1, i + 2);
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Offsets of the identifier `word` in stripped text (whole identifiers only).
fn find_ident(s: &[char], word: &str) -> Vec<usize> {
    let w: Vec<char> = word.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + w.len() <= s.len() {
        if s[i..i + w.len()] == w[..]
            && (i == 0 || !is_ident(s[i - 1]))
            && s.get(i + w.len()).is_none_or(|&c| !is_ident(c))
        {
            out.push(i);
            i += w.len();
        } else {
            i += 1;
        }
    }
    out
}

fn next_token(s: &[char], from: usize) -> String {
    let rest: String = s[from..].iter().take(64).collect();
    rest.trim_start().to_owned()
}

fn prev_word(s: &[char], before: usize) -> String {
    let end = s[..before]
        .iter()
        .rposition(|c| !c.is_whitespace())
        .map_or(0, |p| p + 1);
    let start = s[..end]
        .iter()
        .rposition(|c| c.is_whitespace())
        .map_or(0, |p| p + 1);
    s[start..end].iter().collect()
}

fn line_of(s: &[char], offset: usize) -> usize {
    s[..offset.min(s.len())]
        .iter()
        .filter(|&&c| c == '\n')
        .count()
        + 1
}

/// Lines (1-based) of `extern crate std` in stripped text not directly preceded by
/// `#[cfg(feature = "std")]` (the rule that makes the no-std builds a proof; module docs).
/// `raw` is the source, `s` the same text stripped (offsets agree): the attribute's string
/// is read from `raw`.
pub(crate) fn ungated_extern_std(raw: &[char], s: &[char]) -> Vec<usize> {
    let mut out = Vec::new();
    for at in find_ident(s, "std") {
        let before: String = s[..at].iter().filter(|c| !c.is_whitespace()).collect();
        if !before.ends_with("externcrate") {
            continue;
        }
        let attr: String = raw[..at].iter().filter(|c| !c.is_whitespace()).collect();
        let attr = attr.trim_end_matches("externcrate");
        if !attr.ends_with("#[cfg(feature=\"std\")]") {
            out.push(line_of(s, at));
        }
    }
    out
}

/// Library crates must start with `#![no_std]`, gate `extern crate std` by the `std`
/// feature, and take their docs from the README.
fn check_lib_headers() -> Res<Vec<String>> {
    let mut out = Vec::new();
    for Crate { name, dir } in meta::library_crates()? {
        let lib = dir.join("src/lib.rs");
        let Ok(text) = std::fs::read_to_string(&lib) else {
            out.push(format!("{}: missing (crate {name})", rel(&lib)));
            continue;
        };
        let stripped = strip(&text);
        let code: String = stripped.iter().collect();
        let squashed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        if !squashed.starts_with("#![no_std]") {
            out.push(format!("{}:1: must start with #![no_std]", rel(&lib)));
        }
        out.extend(
            ungated_extern_std(&text.chars().collect::<Vec<_>>(), &stripped)
                .into_iter()
                .map(|line| {
                    format!(
                        "{}:{line}: `extern crate std` must be gated by #[cfg(feature = \"std\")]",
                        rel(&lib)
                    )
                }),
        );
        let raw: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if !raw.contains("#![doc=include_str!(\"../README.md\")]") {
            out.push(format!(
                "{}: missing #![doc = include_str!(\"../README.md\")]",
                rel(&lib)
            ));
        }
    }
    Ok(out)
}

/// Lints and rust-version from the workspace; internal dependencies via `workspace = true`.
fn check_manifests() -> Res<Vec<String>> {
    let mut out = Vec::new();
    for Crate { dir, .. } in meta::library_crates()? {
        let path = dir.join("Cargo.toml");
        out.extend(manifest_problems(&rel(&path), &read(&path)?));
    }
    Ok(out)
}

/// Policy problems in one manifest's text (a line-based reading of TOML: one key per line,
/// inline tables on one line). A crate's dev-dependency on itself (`path = "."`, to switch
/// on a test-only feature) is not an internal dependency and may use a path.
pub(crate) fn manifest_problems(name: &str, text: &str) -> Vec<String> {
    let own = meta::package_name(text).unwrap_or_default();
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lints_workspace = false;
    let mut rust_version = false;
    let mut dep_table: Option<(String, usize, bool)> = None;
    let close = |t: &mut Option<(String, usize, bool)>, out: &mut Vec<String>| {
        if let Some((dep, line, false)) = t.take() {
            out.push(format!("{name}:{line}: {dep} must use `workspace = true`"));
        }
    };
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let squashed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        if line.starts_with('[') {
            close(&mut dep_table, &mut out);
            section = squashed.trim_matches(['[', ']']).to_owned();
            if let Some((_, dep)) = section.rsplit_once("dependencies.")
                && dep.starts_with("dpinfer")
                && dep != own
            {
                dep_table = Some((dep.to_owned(), n + 1, false));
            }
            continue;
        }
        if section == "lints" && squashed == "workspace=true" {
            lints_workspace = true;
        }
        if section == "package"
            && (squashed == "rust-version.workspace=true"
                || squashed == "rust-version={workspace=true}")
        {
            rust_version = true;
        }
        if let Some((_, _, ok)) = dep_table.as_mut()
            && squashed == "workspace=true"
        {
            *ok = true;
        }
        if section.ends_with("dependencies") && squashed.starts_with("dpinfer") {
            let inherits =
                squashed.contains(".workspace=true") || squashed.contains("workspace=true");
            let dep = squashed.split(['=', '.']).next().unwrap_or("");
            if !inherits && dep != own {
                out.push(format!(
                    "{name}:{}: {dep} must use `workspace = true`",
                    n + 1
                ));
            }
        }
    }
    close(&mut dep_table, &mut out);
    if !lints_workspace {
        out.push(format!("{name}: needs `[lints] workspace = true`"));
    }
    if !rust_version {
        out.push(format!(
            "{name}: needs `rust-version.workspace = true` in [package]"
        ));
    }
    out
}

/// Every library crate has a README with a `## Features` section.
fn check_readmes() -> Res<Vec<String>> {
    let mut out = Vec::new();
    for Crate { dir, .. } in meta::library_crates()? {
        let readme = dir.join("README.md");
        match std::fs::read_to_string(&readme) {
            Ok(text) if text.lines().any(|l| l.trim_end() == "## Features") => {}
            Ok(_) => out.push(format!("{}: needs a `## Features` section", rel(&readme))),
            Err(_) => out.push(format!("{}: missing", rel(&readme))),
        }
    }
    Ok(out)
}

/// Relative Markdown link targets `[text](path)` in a text: (line, target), skipping web
/// links, mail links and pure `#anchors`; a `#anchor` suffix is dropped.
pub(crate) fn relative_links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let Some(end) = tail.find(')') else { break };
            let target = tail[..end].split_whitespace().next().unwrap_or("");
            let path = target.split('#').next().unwrap_or("");
            let web = ["http://", "https://", "mailto:"]
                .iter()
                .any(|p| target.starts_with(p));
            if !web && !path.is_empty() {
                out.push((i + 1, path.to_owned()));
            }
            rest = &tail[end..];
        }
    }
    out
}

/// Every relative link in the repository's Markdown files points at a file or folder that
/// exists, and none leaves the repository (the repository stands alone: nothing points at a
/// design folder beside it).
fn check_markdown_links() -> Res<Vec<String>> {
    let root = root();
    let mut out = Vec::new();
    let mut files = files_with_ext(&root, ".md");
    files.retain(|f| !rel(f).starts_with("target"));
    for file in files {
        let text = read(&file)?;
        let dir = file.parent().unwrap_or(&root);
        for (line, target) in relative_links(&text) {
            let path = dir.join(&target);
            let inside = path
                .canonicalize()
                .is_ok_and(|p| p.starts_with(root.canonicalize().unwrap_or_else(|_| root.clone())));
            if !path.exists() {
                out.push(format!("{}:{line}: link to missing `{target}`", rel(&file)));
            } else if !inside {
                out.push(format!(
                    "{}:{line}: link leaves the repository: `{target}`",
                    rel(&file)
                ));
            }
        }
    }
    Ok(out)
}

/// Files the forbidden-macro check covers: all Rust code in the repository.
fn all_rust_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    for dir in ["crates", "tests", "xtask"] {
        files.extend(rust_files(&root.join(dir)));
    }
    files
}

/// Finds `todo!(`, `unimplemented!(` and `#[should_panic` in stripped text: (line, what).
pub(crate) fn forbidden_in(s: &[char]) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (word, shown) in [("todo", "todo!"), ("unimplemented", "unimplemented!")] {
        for at in find_ident(s, word) {
            if next_token(s, at + word.len()).starts_with('!') {
                out.push((line_of(s, at), shown));
            }
        }
    }
    for at in find_ident(s, "should_panic") {
        let before: String = s[..at]
            .iter()
            .rev()
            .filter(|c| !c.is_whitespace())
            .take(2)
            .collect();
        if before == "[#" {
            out.push((line_of(s, at), "#[should_panic]"));
        }
    }
    out
}

/// No `todo!`, `unimplemented!` or `#[should_panic]` anywhere (tests assert on `Err`).
fn check_forbidden() -> Res<Vec<String>> {
    let mut out = Vec::new();
    for file in all_rust_files() {
        let s = strip(&read(&file)?);
        for (line, what) in forbidden_in(&s) {
            out.push(format!("{}:{line}: {what} is not allowed", rel(&file)));
        }
    }
    Ok(out)
}

/// Lines of `pub enum …Error` not preceded (in their attribute block) by `#[non_exhaustive]`.
pub(crate) fn exhaustive_error_enums(s: &[char]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for at in find_ident(s, "enum") {
        let name: String = next_token(s, at + 4)
            .chars()
            .take_while(|&c| is_ident(c))
            .collect();
        if !name.ends_with("Error") || prev_word(s, at) != "pub" {
            continue;
        }
        // the attribute block: back to the previous `;`, `}` or `{`
        let block_start = s[..at]
            .iter()
            .rposition(|&c| c == ';' || c == '}' || c == '{')
            .map_or(0, |p| p + 1);
        let attrs: String = s[block_start..at]
            .iter()
            .filter(|c| !c.is_whitespace())
            .collect();
        if !attrs.contains("#[non_exhaustive]") {
            out.push((line_of(s, at), name));
        }
    }
    out
}

/// Every public error enum in `crates/*/src` is `#[non_exhaustive]`.
fn check_error_enums() -> Res<Vec<String>> {
    let mut out = Vec::new();
    let crates = root().join("crates");
    for file in rust_files(&crates) {
        let in_src = file
            .strip_prefix(&crates)
            .ok()
            .and_then(|p| p.components().nth(1))
            .is_some_and(|c| c.as_os_str() == "src");
        if !in_src {
            continue;
        }
        let s = strip(&read(&file)?);
        for (line, name) in exhaustive_error_enums(&s) {
            out.push(format!(
                "{}:{line}: pub enum {name} needs #[non_exhaustive]",
                rel(&file)
            ));
        }
    }
    Ok(out)
}

/// Every workspace member's manifest says `rust-version.workspace = true` (also checked
/// against `cargo metadata` by `cargo xtask msrv`).
fn check_member_rust_version() -> Res<Vec<String>> {
    let root = root();
    let text = read(&root.join("Cargo.toml"))?;
    let mut out = Vec::new();
    for member in workspace_members(&text) {
        let path = root.join(&member).join("Cargo.toml");
        let manifest = read(&path)?;
        let ok = manifest.lines().any(|l| {
            let squashed: String = l.chars().filter(|c| !c.is_whitespace()).collect();
            squashed == "rust-version.workspace=true" || squashed == "rust-version={workspace=true}"
        });
        if !ok {
            out.push(format!(
                "{}: needs `rust-version.workspace = true`",
                rel(&path)
            ));
        }
    }
    Ok(out)
}

/// The `members = [ … ]` list of the root manifest (plain paths, no globs).
pub(crate) fn workspace_members(root_manifest: &str) -> Vec<String> {
    let Some(start) = root_manifest.find("members") else {
        return Vec::new();
    };
    let rest = &root_manifest[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    rest[open + 1..close]
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_clean(problems: &[String]) {
        assert!(
            problems.is_empty(),
            "policy violations:\n{}",
            problems.join("\n")
        );
    }

    // ---- the repository policy (these fail when the tree breaks a rule) ----

    #[test]
    fn tidy_library_lib_rs_headers() {
        assert_clean(&check_lib_headers().unwrap());
    }

    #[test]
    fn tidy_library_manifests() {
        assert_clean(&check_manifests().unwrap());
    }

    #[test]
    fn tidy_markdown_links_resolve() {
        assert_clean(&check_markdown_links().unwrap());
    }

    #[test]
    fn relative_links_are_found_and_web_links_skipped() {
        let text = "see [a](crates/a.md#x) and [b](https://x.invalid) [c](#top)\n```\n[d](no.md)\n```\n[e](../f.md \"t\")";
        let got = relative_links(text);
        assert_eq!(
            got,
            vec![(1, "crates/a.md".to_owned()), (5, "../f.md".to_owned())]
        );
    }

    #[test]
    fn tidy_readmes_have_features_sections() {
        assert_clean(&check_readmes().unwrap());
    }

    #[test]
    fn tidy_no_todo_unimplemented_should_panic() {
        assert_clean(&check_forbidden().unwrap());
    }

    #[test]
    fn tidy_error_enums_non_exhaustive() {
        assert_clean(&check_error_enums().unwrap());
    }

    #[test]
    fn tidy_members_inherit_rust_version() {
        assert_clean(&check_member_rust_version().unwrap());
    }

    // ---- the scanners themselves ----

    #[test]
    fn extern_crate_std_must_be_gated_by_the_std_feature() {
        let lines = |src: &str| ungated_extern_std(&src.chars().collect::<Vec<_>>(), &strip(src));
        assert_eq!(
            lines("#![no_std]\n#[cfg(feature = \"std\")]\nextern crate std;\n"),
            Vec::<usize>::new()
        );
        assert_eq!(lines("#![no_std]\nextern crate std;\n"), vec![2]);
        assert_eq!(
            lines("#[cfg(feature = \"alloc\")]\nextern crate std;\n"),
            vec![2]
        );
        assert_eq!(
            lines("#[cfg(feature = \"std\")]\nextern crate alloc;\nextern crate std;\n"),
            vec![3]
        );
        // comments and strings are blanked first
        assert_eq!(
            lines("// extern crate std;\nconst S: &str = \"extern crate std\";\n"),
            Vec::<usize>::new()
        );
    }

    #[test]
    fn forbidden_macros_and_should_panic_are_found() {
        let s = strip(
            "fn f() { todo!() }\n#[should_panic]\nfn g() { unimplemented! (); }\n// todo!()\nlet t = \"todo!()\"; fn todo() {}\n",
        );
        assert_eq!(
            forbidden_in(&s),
            vec![(1, "todo!"), (3, "unimplemented!"), (2, "#[should_panic]")]
        );
    }

    #[test]
    fn error_enums_need_non_exhaustive() {
        let s = strip(
            "/// Docs.\n#[derive(Debug)]\n#[non_exhaustive]\npub enum GoodError { A }\n\
             #[derive(Debug)]\npub enum BadError { A }\nenum PrivateError { A }\npub enum Kind { A }\n",
        );
        assert_eq!(exhaustive_error_enums(&s), vec![(6, "BadError".to_owned())]);
    }

    #[test]
    fn manifest_rules() {
        let good = "[package]\nname = \"dpinfer-x\"\nrust-version.workspace = true\n\
                    [dependencies]\ndpinfer-math = { workspace = true }\nlibm = { workspace = true }\n\
                    [dev-dependencies]\ndpinfer-accountants = { workspace = true, features = [\"std\"] }\n\
                    dpinfer-x = { path = \".\", features = [\"testkit\"] }\n\
                    [lints]\nworkspace = true\n";
        assert!(manifest_problems("m", good).is_empty());
        let bad = "[package]\nname = \"x\"\nrust-version = \"1.89\"\n\
                   [dependencies]\ndpinfer-math = { path = \"../math\" }\n\
                   [dependencies.dpinfer-abc]\npath = \"../abc\"\n";
        assert_eq!(
            manifest_problems("m", bad),
            vec![
                "m:5: dpinfer-math must use `workspace = true`",
                "m:6: dpinfer-abc must use `workspace = true`",
                "m: needs `[lints] workspace = true`",
                "m: needs `rust-version.workspace = true` in [package]",
            ]
        );
    }

    #[test]
    fn members_are_read_from_the_root_manifest() {
        let m = "[workspace]\nmembers = [\n    \"crates/math\",\n    \"xtask\",\n]\nexclude = [\"a\"]\n";
        assert_eq!(workspace_members(m), vec!["crates/math", "xtask"]);
    }
}
