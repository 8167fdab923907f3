//! Every example config in `examples/` at its SHIPPED settings (not shrunk: the run length,
//! the budget and the sampler settings are the file's; only the noise seed is pinned, test
//! only, so the run and its warnings are reproducible, and the output folder is moved): the
//! run's summary carries no warning unless the config's header comment marks it as expected
//! with a line `# expect-warning: TEXT` (TEXT a substring of the warning), and every marker
//! still matches a warning of the run, so a stale marker fails as well as an unmarked warning
//! (issue 32 item 3: the examples convince, or say in their header why they warn).

use crate::common;

use common::{dpinfer, example, fresh_dir, root, show, write_config};
use std::time::Instant;

/// The marker line of an expected warning in an example's header comment.
const MARKER: &str = "# expect-warning:";

/// The expected-warning markers of a config text: the text after [`MARKER`] on each line
/// that starts with it.
fn markers(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(MARKER))
        .map(|m| m.trim().to_owned())
        .collect()
}

/// What does not match: the warnings no marker is a substring of, and the markers that are a
/// substring of no warning.
fn unmatched(warnings: &[String], markers: &[String]) -> (Vec<String>, Vec<String>) {
    let unmarked = warnings
        .iter()
        .filter(|w| !markers.iter().any(|m| w.contains(m.as_str())))
        .cloned()
        .collect();
    let stale = markers
        .iter()
        .filter(|m| !warnings.iter().any(|w| w.contains(m.as_str())))
        .cloned()
        .collect();
    (unmarked, stale)
}

/// The example configs of `examples/` (not its subfolders), sorted.
pub(crate) fn example_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.ends_with(".toml").then_some(n)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn markers_are_read_from_comment_lines_only() {
    let text = "# title\n# expect-warning: fewer than 30\n#expect-warning: no space\n\
                [sampler]\nkind = \"svt-abc\" # expect-warning: trailing\n";
    assert_eq!(markers(text), ["fewer than 30"]);
}

#[test]
fn an_unmarked_warning_and_a_stale_marker_both_fail() {
    let w = vec![
        "the posterior rests on 10 (effective 10) draws, fewer than 30: …".to_owned(),
        "the chain has not converged for mu (split R̂ = 1.02 > 1.01)".to_owned(),
    ];
    // Both warnings marked: clean.
    let (u, s) = unmatched(&w, &["fewer than 30".into(), "not converged".into()]);
    assert!(u.is_empty() && s.is_empty(), "{u:?} {s:?}");
    // One warning unmarked.
    let (u, s) = unmatched(&w, &["fewer than 30".into()]);
    assert_eq!((u.len(), s.len()), (1, 0));
    assert!(u[0].contains("not converged"));
    // A marker that matches nothing (the example was fixed, the marker left behind).
    let (u, s) = unmatched(&w[..1], &["fewer than 30".into(), "not converged".into()]);
    assert_eq!((u.len(), s), (0, vec!["not converged".to_owned()]));
    // No warnings, no markers: clean.
    assert_eq!(unmatched(&[], &[]), (vec![], vec![]));
}

/// The leading comment block of a config text (its header), one string.
fn header(text: &str) -> String {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_example_header_states_its_measured_run_time() {
    // Issue 32 item 3: a user learns from the header how long the shipped run takes (release
    // build, wall and CPU) and under which load it was measured.
    let mut missing = Vec::new();
    for name in example_names() {
        let h = header(&std::fs::read_to_string(root().join("examples").join(&name)).unwrap())
            .replace("\n#", "");
        let ok = h.contains("Run time at these settings (release build")
            && h.contains(" s wall,")
            && h.contains(" s CPU,")
            && h.contains("load average");
        if !ok {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "headers without a measured run time: {missing:?}"
    );
}

#[test]
fn a_companion_config_warns_nothing_and_its_paper_config_names_it() {
    // `X-useful.toml` is the clean setting of a paper's config `X.toml` that warns: it may
    // carry no `expect-warning` marker (the shipped-settings test then demands a run without
    // any warning), `X.toml` must exist and say in its header which companion to use.
    let names = example_names();
    let companions: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with("-useful.toml"))
        .collect();
    assert!(!companions.is_empty(), "{names:?}");
    for c in companions {
        let text = std::fs::read_to_string(root().join("examples").join(c)).unwrap();
        assert!(markers(&text).is_empty(), "{c} marks an expected warning");
        let base = c.replace("-useful.toml", ".toml");
        assert!(names.contains(&base), "{c} has no paper config {base}");
        let btext = std::fs::read_to_string(root().join("examples").join(&base)).unwrap();
        assert!(
            header(&btext).contains(c.as_str()),
            "{base}'s header does not name its companion {c}"
        );
    }
}

/// The marker line of an example too long for CI (its header says why and how long it
/// takes): the shipped-settings check of CI leaves it to
/// [`long_examples_at_their_shipped_settings_warn_only_as_their_headers_say`], which
/// `cargo xtask reproduce examples-long` runs in a release build.
const LONG: &str = "# long-example:";

/// Whether a config text carries the [`LONG`] marker.
fn is_long(text: &str) -> bool {
    header(text).lines().any(|l| l.trim().starts_with(LONG))
}

/// Runs each example of `names` at its shipped settings and fails on an unmarked warning or a
/// stale marker.
fn check_shipped(names: &[String]) {
    let mut failures = Vec::new();
    let mut times = Vec::new();
    for name in names {
        let dir = fresh_dir("shipped");
        let out = dir.join("results");
        let text = example(name, &out);
        let cfg = write_config(&dir, name, &text);
        let t0 = Instant::now();
        let o = dpinfer(&["run", cfg.to_str().unwrap()], &dir);
        times.push(format!("{name} {:.1} s", t0.elapsed().as_secs_f64()));
        assert!(o.status.success(), "{name}: {}", show(&o));
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let warnings: Vec<String> = s["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_owned())
            .collect();
        let (unmarked, stale) = unmatched(&warnings, &markers(&text));
        for w in unmarked {
            failures.push(format!(
                "{name}: warning not marked in its header (fix the example, or explain it and \
                 add `{MARKER} …`): {w}"
            ));
        }
        for m in stale {
            failures.push(format!(
                "{name}: `{MARKER} {m}` matches no warning of the run: remove the marker"
            ));
        }
    }
    eprintln!("shipped example runs: {}", times.join(", "));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The examples with (`long`) or without the [`LONG`] marker.
fn examples_by_length(long: bool) -> Vec<String> {
    example_names()
        .into_iter()
        .filter(|n| {
            let text = std::fs::read_to_string(root().join("examples").join(n)).unwrap();
            is_long(&text) == long
        })
        .collect()
}

#[test]
fn every_example_at_its_shipped_settings_warns_only_as_its_header_says() {
    let names = examples_by_length(false);
    assert!(names.len() >= 8, "{names:?}");
    check_shipped(&names);
}

#[test]
#[ignore = "minutes in a test build: `cargo xtask reproduce examples-long` runs it in release"]
fn long_examples_at_their_shipped_settings_warn_only_as_their_headers_say() {
    check_shipped(&examples_by_length(true));
}

#[test]
fn long_examples_are_few_and_say_why() {
    // The marker is a way out of CI's check: only for an example whose header measures a run
    // time far above the others' (the README lists it), never to hide a warning.
    let long = examples_by_length(true);
    assert!(long.len() <= 2, "{long:?}");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for name in &long {
        let text = std::fs::read_to_string(root().join("examples").join(name)).unwrap();
        let why = header(&text)
            .lines()
            .find_map(|l| l.trim().strip_prefix(LONG))
            .unwrap()
            .trim()
            .to_owned();
        assert!(why.len() > 20, "{name}: say why it is long: {why:?}");
        let stem = name.trim_end_matches(".toml");
        assert!(
            readme.contains(&format!("`{stem}`")),
            "README.md does not name the long example {stem}"
        );
    }
    assert!(is_long("# a\n# long-example: 76 s of CPU\n[model]\n"));
    assert!(!is_long(
        "# a\n[model]\n# long-example: not in the header\n"
    ));
}

#[test]
fn the_readmes_list_exactly_the_examples_that_warn() {
    // README.md lists each warning example in a bullet "- `stem`: why" (or "- `a`, `b`: why") and
    // the CLI README has one table row "| `stem` |" per warning example: both stay true when an
    // example stops warning or starts to (its `expect-warning` markers decide).
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let cli = std::fs::read_to_string(root().join("crates/cli/README.md")).unwrap();
    // the CLI README's warning table: its header line and the table lines after it
    let table: Vec<&str> = cli
        .lines()
        .skip_while(|l| !l.starts_with("| example | warns |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() > 2, "the CLI README lost its warning table");
    let mut wrong = Vec::new();
    for name in example_names() {
        let text = std::fs::read_to_string(root().join("examples").join(&name)).unwrap();
        let stem = name.trim_end_matches(".toml");
        let warns = !markers(&text).is_empty();
        // a bullet names one or more examples before its colon: "- `a`, `b`: why"
        let bullet = readme.lines().any(|l| {
            l.strip_prefix("- `")
                .and_then(|l| l.split_once(':'))
                .is_some_and(|(names, _)| format!("`{names}").contains(&format!("`{stem}`")))
        });
        let row = table
            .iter()
            .any(|l| l.starts_with(&format!("| `{stem}` |")));
        if warns && !bullet {
            wrong.push(format!(
                "{name} warns but README.md has no bullet \"- `{stem}`\""
            ));
        }
        if warns != row {
            wrong.push(format!(
                "{name}: warns = {warns}, but the CLI README's warning table row \"| `{stem}` |\" \
                 is {}",
                if row { "present" } else { "missing" }
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
