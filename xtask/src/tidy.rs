//! `cargo xtask tidy`: repository policy checks, also run as `#[test]`s by
//! `cargo test -p xtask` (rust-analyzer's `xtask/src/tidy.rs` is the model).
//!
//! Each check returns its violations as `path:line: message` strings.
//!
//! # The `std::` scanner and its limits
//! Library code may name `std` only inside items gated by `#[cfg(feature = "std")]` (or
//! `#[cfg(test)]`: unit tests link std). The scanner works on source text with comments,
//! strings and char literals blanked out:
//! - an outer attribute `#[cfg(…)]` gates the next item, statement, field or match arm: the
//!   text up to the first `;` or `,` at nesting depth 0, or through the matching `}` of the
//!   first `{` at depth 0 (so `mod x { … }`, `impl … { … }`, `fn … { … }` are gated whole);
//! - an inner `#![cfg(feature = "std")]` at the top level gates its whole file;
//! - `mod x;` inside a gated range gates the file `x.rs` / `x/mod.rs` and everything below it;
//!   files under `src/` reached by no `mod` line are scanned as ungated;
//! - a cfg gates when it needs `test` or a feature that enables `std` (`std` itself, or one
//!   like `parallel = ["std"]`, read from the crate's `[features]`), and has no `not(`;
//!   `all(…)` gates if one part does, a flat `any(…)` only if every alternative does.
//!
//! Not handled (reported as violations, i.e. on the safe side, or simply not seen):
//! `#[path = …]` module paths, `cfg_attr`, nested `any(all(…))`, macros that expand to
//! `std::` paths, a `use` of some other crate's re-export of std, and inner `#![cfg]` inside
//! an inline module.

use crate::meta::{self, Crate};
use crate::util::{Res, files_with_ext, rel, root, rust_files};
use std::path::{Path, PathBuf};

/// Runs every policy check; `Err` lists all violations.
pub(crate) fn run() -> Res {
    type Check = fn() -> Res<Vec<String>>;
    let checks: [(&str, Check); 8] = [
        ("lib.rs headers", check_lib_headers),
        (
            "Markdown links resolve inside the repository",
            check_markdown_links,
        ),
        ("library manifests", check_manifests),
        ("READMEs", check_readmes),
        ("std:: outside cfg(feature = \"std\")", check_std_paths),
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

/// Whether a cfg attribute body (whitespace removed) guarantees std is linked, given the
/// crate's features that enable `std` (`std` itself, and e.g. `parallel = ["std"]`).
fn gates_std(attr: &str, std_features: &[String]) -> bool {
    let Some(inner) = attr.strip_prefix("cfg(") else {
        return false;
    };
    let std_feature = |text: &str| {
        std_features
            .iter()
            .any(|f| text.contains(&format!("feature=\"{f}\"")))
    };
    if let Some(alternatives) = inner
        .strip_prefix("any(")
        .and_then(|r| r.strip_suffix("))"))
        && !alternatives.contains('(')
    {
        // any(a, b): gates only if every alternative does
        return alternatives
            .split(',')
            .all(|alt| alt == "test" || std_feature(alt));
    }
    if attr.contains("not(") || attr.contains("any(") {
        return false;
    }
    let mentions_test = ["(test)", "(test,", ",test)", ",test,"]
        .iter()
        .any(|t| attr.contains(t));
    std_feature(attr) || mentions_test
}

/// The crate's features that (transitively, through its own features) enable `std`, read
/// from the `[features]` table of its manifest; always contains `std`.
pub(crate) fn std_features(manifest: &str) -> Vec<String> {
    let mut table: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_features = false;
    let mut pending = String::new();
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.starts_with('[') && pending.is_empty() {
            in_features = line == "[features]";
            continue;
        }
        if !in_features {
            continue;
        }
        pending.push_str(line);
        if pending.contains('=') && pending.matches('[').count() == pending.matches(']').count() {
            if let Some((key, value)) = pending.split_once('=') {
                let deps = value
                    .trim()
                    .trim_matches(['[', ']'])
                    .split(',')
                    .map(|d| d.trim().trim_matches('"').to_owned())
                    .filter(|d| !d.is_empty())
                    .collect();
                table.push((key.trim().trim_matches('"').to_owned(), deps));
            }
            pending.clear();
        }
    }
    let mut out = vec!["std".to_owned()];
    loop {
        let before = out.len();
        for (key, deps) in &table {
            if !out.contains(key) && deps.iter().any(|d| out.contains(d)) {
                out.push(key.clone());
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Finds the index just past the bracket matching `s[open]` (`(`, `[` or `{`).
fn matching(s: &[char], open: usize) -> usize {
    let mut depth = 0i64;
    let mut j = open;
    while j < s.len() {
        match s[j] {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    s.len()
}

/// Keywords that start a declaration or statement, whose end is a `;` or a `{…}` block
/// (commas inside, e.g. in `Result<(), E>`, do not end it).
const DECLARATION_KEYWORDS: &[&str] = &[
    "fn",
    "impl",
    "mod",
    "struct",
    "enum",
    "union",
    "use",
    "extern",
    "const",
    "static",
    "type",
    "trait",
    "unsafe",
    "async",
    "let",
    "macro_rules",
    "for",
    "while",
    "loop",
    "if",
    "match",
    "return",
];

/// The end of the item starting at `start`.
///
/// Declarations (`fn`, `impl`, `use`, `let`, … optionally after `pub`/`pub(…)`) end past
/// the first `;` at depth 0 or past the `}` matching the first `{` at depth 0. Anything else
/// (a struct field, enum variant, match arm, expression) also ends at a `,` at depth 0, and
/// at a closing bracket that leaves depth 0; in a field (`name: Type`) `<…>` count as
/// brackets, so `a: Map<K, V>,` is one item.
fn item_end(s: &[char], start: usize) -> usize {
    let mut words = Vec::new();
    let mut k = start;
    while words.len() < 2 && k < s.len() {
        while k < s.len() && s[k].is_whitespace() {
            k += 1;
        }
        let w: String = s[k..].iter().take_while(|&&c| is_ident(c)).collect();
        if w.is_empty() {
            break;
        }
        k += w.len();
        if w == "pub" {
            if s.get(k) == Some(&'(') {
                k = matching(s, k);
            }
            continue;
        }
        words.push(w);
    }
    let declaration = words
        .first()
        .is_some_and(|w| DECLARATION_KEYWORDS.contains(&w.as_str()));
    let rest: String = s[k.min(s.len())..].iter().take(3).collect();
    let rest = rest.trim_start();
    let field =
        !declaration && words.len() == 1 && rest.starts_with(':') && !rest.starts_with("::");
    let mut depth = 0i64;
    let mut j = start;
    while j < s.len() {
        match s[j] {
            '{' if depth == 0 => return matching(s, j),
            '(' | '[' | '{' => depth += 1,
            '<' if field => depth += 1,
            '>' if field && j > 0 && s[j - 1] != '-' => depth -= 1,
            ')' | ']' | '}' => {
                if depth == 0 {
                    return j;
                }
                depth -= 1;
            }
            ';' if depth == 0 => return j + 1,
            ',' if depth == 0 && !declaration => return j + 1,
            _ => {}
        }
        j += 1;
    }
    s.len()
}

/// Ranges of stripped text gated by a std-or-test cfg, and whether the whole file is gated.
///
/// `raw` is the original text (attribute bodies are read from it, since stripping blanks
/// the `"std"` in `feature = "std"`); `s` is [`strip`]ped `raw`, char for char.
pub(crate) fn gated_ranges(
    raw: &[char],
    s: &[char],
    std_features: &[String],
) -> (Vec<(usize, usize)>, bool) {
    let mut ranges = Vec::new();
    let mut pending = false;
    let mut depth = 0i64;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' {
            let inner = s.get(i + 1) == Some(&'!');
            let open = if inner { i + 2 } else { i + 1 };
            if s.get(open) == Some(&'[') {
                let end = matching(s, open);
                let body: String = raw[open + 1..end.saturating_sub(1)]
                    .iter()
                    .filter(|c| !c.is_whitespace())
                    .collect();
                if gates_std(&body, std_features) {
                    if inner && depth == 0 {
                        return (vec![(0, s.len())], true);
                    } else if !inner {
                        pending = true;
                    }
                }
                i = end;
                continue;
            }
        }
        if pending {
            let end = item_end(s, i);
            ranges.push((i, end));
            pending = false;
            i = end;
            continue;
        }
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    (ranges, false)
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

/// Lines (1-based) naming `std` outside gated ranges: `std::…`, `::std`, `extern crate std`,
/// `use std` / `use std as …`.
pub(crate) fn ungated_std(s: &[char], ranges: &[(usize, usize)]) -> Vec<usize> {
    let mut lines = Vec::new();
    for at in find_ident(s, "std") {
        if ranges.iter().any(|&(a, b)| a <= at && at < b) {
            continue;
        }
        let after = next_token(s, at + 3);
        let before = prev_word(s, at);
        let path = after.starts_with("::") || before.ends_with("::");
        let krate = before == "crate" || before == "use";
        if path || krate {
            let line = line_of(s, at);
            if lines.last() != Some(&line) {
                lines.push(line);
            }
        }
    }
    lines
}

/// `mod name;` declarations: (name, offset).
fn mod_decls(s: &[char]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for at in find_ident(s, "mod") {
        let rest = next_token(s, at + 3);
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if !name.is_empty() && rest[name.len()..].trim_start().starts_with(';') {
            out.push((name, at));
        }
    }
    out
}

/// Scans a crate's `src/` following `mod` declarations from `lib.rs`; returns
/// `path:line` violations for ungated `std`.
pub(crate) fn scan_crate_std(src_dir: &Path) -> Res<Vec<String>> {
    let manifest = src_dir.parent().unwrap_or(src_dir).join("Cargo.toml");
    let std_features = std_features(&std::fs::read_to_string(&manifest).unwrap_or_default());
    let mut problems = Vec::new();
    let mut visited: Vec<PathBuf> = Vec::new();
    let mut queue = vec![(src_dir.join("lib.rs"), false)];
    while let Some((file, gated_by_parent)) = queue.pop() {
        if visited.contains(&file) || !file.is_file() {
            continue;
        }
        visited.push(file.clone());
        let text = read(&file)?;
        let s = strip(&text);
        let raw: Vec<char> = text.chars().collect();
        let (ranges, whole) = gated_ranges(&raw, &s, &std_features);
        let gated = gated_by_parent || whole;
        if !gated {
            for line in ungated_std(&s, &ranges) {
                problems.push(format!(
                    "{}:{line}: `std` outside #[cfg(feature = \"std\")]",
                    rel(&file)
                ));
            }
        }
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
        let parent = file.parent().unwrap_or(src_dir);
        let dir = match stem.as_deref() {
            Some("lib" | "mod" | "main") => parent.to_path_buf(),
            Some(stem) => parent.join(stem),
            None => parent.to_path_buf(),
        };
        for (name, at) in mod_decls(&s) {
            let child_gated = gated || ranges.iter().any(|&(a, b)| a <= at && at < b);
            let flat = dir.join(format!("{name}.rs"));
            let nested = dir.join(&name).join("mod.rs");
            queue.push((if flat.is_file() { flat } else { nested }, child_gated));
        }
    }
    for file in rust_files(src_dir) {
        if !visited.contains(&file) {
            let text = read(&file)?;
            let s = strip(&text);
            let raw: Vec<char> = text.chars().collect();
            let (ranges, whole) = gated_ranges(&raw, &s, &std_features);
            if !whole {
                for line in ungated_std(&s, &ranges) {
                    problems.push(format!(
                        "{}:{line}: `std` outside #[cfg(feature = \"std\")] (file not reached \
                         by a `mod` line, scanned as ungated)",
                        rel(&file)
                    ));
                }
            }
        }
    }
    Ok(problems)
}

/// Library crates must start with `#![no_std]` and take their docs from the README.
fn check_lib_headers() -> Res<Vec<String>> {
    let mut out = Vec::new();
    for Crate { name, dir } in meta::library_crates()? {
        let lib = dir.join("src/lib.rs");
        let Ok(text) = std::fs::read_to_string(&lib) else {
            out.push(format!("{}: missing (crate {name})", rel(&lib)));
            continue;
        };
        let code: String = strip(&text).into_iter().collect();
        let squashed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        if !squashed.starts_with("#![no_std]") {
            out.push(format!("{}:1: must start with #![no_std]", rel(&lib)));
        }
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

/// No `std` in library code outside `cfg(feature = "std")` (see the module docs).
fn check_std_paths() -> Res<Vec<String>> {
    let mut out = Vec::new();
    for Crate { dir, .. } in meta::library_crates()? {
        out.extend(scan_crate_std(&dir.join("src"))?);
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

    fn scan(src: &str) -> Vec<usize> {
        let s = strip(src);
        let raw: Vec<char> = src.chars().collect();
        let std_features = vec!["std".to_owned(), "parallel".to_owned()];
        let (ranges, whole) = gated_ranges(&raw, &s, &std_features);
        if whole {
            Vec::new()
        } else {
            ungated_std(&s, &ranges)
        }
    }

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
    fn tidy_no_std_outside_std_cfg() {
        assert_clean(&check_std_paths().unwrap());
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
    fn ungated_std_paths_are_found() {
        assert_eq!(scan("use std::vec::Vec;\n"), vec![1]);
        assert_eq!(
            scan("fn f() {\n    let v = ::std::vec::Vec::<u8>::new();\n}\n"),
            vec![2]
        );
        assert_eq!(scan("extern crate std;\n"), vec![1]);
        assert_eq!(
            scan("#[cfg(not(feature = \"std\"))]\nuse std::fmt;\n"),
            vec![2]
        );
        assert_eq!(
            scan("#[cfg(any(feature = \"std\", feature = \"x\"))]\nuse std::fmt;\n"),
            vec![2]
        );
        assert_eq!(
            scan("#[cfg(feature = \"alloc\")]\nuse std::fmt;\n"),
            vec![2]
        );
    }

    #[test]
    fn gated_std_is_allowed_and_gating_ends_with_the_item() {
        let src = "#[cfg(feature = \"std\")]\nextern crate std;\n\
                   #[cfg(feature = \"std\")]\n#[derive(Debug)]\nimpl std::error::Error for E {\n    fn f() { std::process::abort() }\n}\n\
                   fn g() -> std::string::String { todo() }\n";
        assert_eq!(scan(src), vec![8]);
        let stmt = "fn f() {\n    #[cfg(feature = \"std\")]\n    let x = std::env::args();\n    let y = std::env::args();\n}\n";
        assert_eq!(scan(stmt), vec![4]);
        let field = "struct S {\n    #[cfg(feature = \"std\")]\n    a: std::string::String,\n    b: std::string::String,\n}\n";
        assert_eq!(scan(field), vec![4]);
        let generic = "struct S {\n    #[cfg(feature = \"std\")]\n    pub a: Map<u8, std::string::String>,\n    b: std::string::String,\n}\n";
        assert_eq!(scan(generic), vec![4]);
        let sig = "impl S {\n    #[cfg(feature = \"std\")]\n    pub fn f(&self) -> Result<(), E> {\n        std::thread::yield_now();\n    }\n    fn g() { std::process::abort() }\n}\n";
        assert_eq!(scan(sig), vec![6]);
        let arms = "match x {\n    #[cfg(feature = \"std\")]\n    A => std::process::abort(),\n    B => std::process::abort(),\n}\n";
        assert_eq!(scan(arms), vec![4]);
        let tests = "#[cfg(test)]\nmod tests {\n    use std::vec::Vec;\n}\n";
        assert!(scan(tests).is_empty());
        let all = "#[cfg(all(feature = \"std\", target_os = \"linux\"))]\nuse std::fs;\n";
        assert!(scan(all).is_empty());
        assert!(scan("#![cfg(feature = \"std\")]\nuse std::fs;\n").is_empty());
        // a feature that enables std gates too; any() only when every branch does
        assert!(scan("#[cfg(feature = \"parallel\")]\nuse std::thread;\n").is_empty());
        assert!(scan("#[cfg(any(feature = \"parallel\", test))]\nuse std::thread;\n").is_empty());
        assert_eq!(
            scan("#[cfg(any(feature = \"parallel\", feature = \"alloc\"))]\nuse std::thread;\n"),
            vec![2]
        );
    }

    #[test]
    fn comments_strings_and_lookalikes_are_ignored() {
        let src = "//! use std::vec::Vec;\n/// std::fmt in docs\n/* std::x /* nested */ std::y */\n\
                   const S: &str = \"std::fmt\";\nconst R: &str = r#\"std::\"x\"#;\nconst C: char = '\"';\n\
                   #![no_std]\nuse core::fmt; fn nostd::x() {} let a = 'a'; let mystd = 1;\n";
        assert!(scan(src).is_empty(), "{:?}", scan(src));
        // a lifetime must not start a char literal that hides real code
        assert_eq!(scan("fn f<'a>(x: &'a u8) { std::mem::drop(x) }\n"), vec![1]);
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
    fn std_features_are_closed_under_implication() {
        let m = "[features]\ndefault = [\"std\"]\nalloc = []\nstd = [\"alloc\", \"dep/std\"]\n\
                 parallel = [\n    \"std\",\n]\nfast = [\"parallel\"]\nother = [\"alloc\"]\n[lints]\nx = [\"std\"]\n";
        assert_eq!(std_features(m), vec!["std", "default", "parallel", "fast"]);
    }

    #[test]
    fn members_are_read_from_the_root_manifest() {
        let m = "[workspace]\nmembers = [\n    \"crates/math\",\n    \"xtask\",\n]\nexclude = [\"a\"]\n";
        assert_eq!(workspace_members(m), vec!["crates/math", "xtask"]);
    }
}
