//! `report`: opens a results folder's `report.html` in a real browser (issue 32).
//!
//! Installs Debian's `chromium` when missing (as `nostd` installs its cross toolchains:
//! [`ensure_apt_packages`], honouring `XTASK_NO_INSTALL`), builds the CLI, runs a small
//! configuration (the ABCDP toy under soft ABCDP, [`EXAMPLE`]) into `target/report-check/run`,
//! and opens its `report.html` headless at 1200 px:
//!
//! 1. a screenshot (`target/report-check/report.png`, for a person to look at) with the
//!    browser's log on stderr: any console message of level error fails the task;
//! 2. a copy of the page with a checking script in front (the shipped page has none), read
//!    back with `--dump-dom` once loaded: the script records console errors and failed loads,
//!    and every HTML element whose content is wider than its box (`scrollWidth >
//!    clientWidth`: text that overflows or is cut), and the page being wider than the window.
//!    Either fails the task. Overlapping text inside the plots is the plots crate's layout
//!    check (`dpinfer_plots::layout_problems`), run by the CLI's tests on every example.
//!
//! Before the real page, the same check runs on a page built to fail (an overflowing line and
//! a console error), so a browser that reports nothing cannot pass the task by accident.

use std::path::{Path, PathBuf};

use crate::cross::ensure_apt_packages;
use crate::util::{Cmd, Res, on_path, root, target_dir};

/// The run the report is made from: the ABCDP toy (five parameters, so a pair plot, and a
/// true θ) under soft ABCDP (weighted samples, a privacy claim), small enough for about 2 s in
/// a debug build (the shipped `examples/soft-abc-gaussian.toml` takes 45 s there).
const EXAMPLE: &str = r#"# cargo xtask report: a small private run whose report.html is opened.
[model]
name = "uniform-mixture"
n = 500

[distance]
kind = "rff-mmd"
features = 50

[sampler]
kind = "soft-abc"
pairs = 1000
epsilon_abc = 0.05
clip = 0.3

[privacy]
epsilon = 2.0
delta = 1e-6

[seeds]
run = 11
"#;

/// The browser's window width (px), that of a laptop screen.
const WIDTH: u32 = 1200;

/// Injected at the top of the checked copy: collects console errors and failed loads, then
/// (after `load`) the elements whose content overflows their box, into `<pre id=...>`.
const CHECK_SCRIPT: &str = r#"<script>(function(){var errs=[];var ce=console.error;
console.error=function(){errs.push(Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};
window.addEventListener('error',function(e){var t=e.target||{};errs.push('error: '+(e.message||t.src||t.href||t.tagName||'?'));},true);
window.addEventListener('load',function(){var over=[];var all=document.body.getElementsByTagName('*');
for(var i=0;i<all.length;i++){var el=all[i];if(el.namespaceURI!=='http://www.w3.org/1999/xhtml')continue;
if(el.clientWidth>0&&el.scrollWidth>el.clientWidth+1){over.push(el.tagName.toLowerCase()+' ('+el.scrollWidth+' > '+el.clientWidth+' px): '+(el.textContent||'').replace(/\s+/g,' ').slice(0,80));}}
var w=document.documentElement.scrollWidth;if(w>window.innerWidth+1){over.push('the page is '+w+' px wide in a '+window.innerWidth+' px window');}
var p=document.createElement('pre');p.id='dpinfer-check';
p.textContent='errors '+errs.length+'\n'+errs.join('\n')+'\noverflow '+over.length+'\n'+over.join('\n')+'\nend';
document.body.appendChild(p);});})();</script>"#;

/// A page the check must fail: a line wider than its box and a console error.
const BAD_PAGE: &str = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>bad</title>\
</head><body><div style=\"width:100px;overflow:hidden;white-space:nowrap\">a line far too \
long for its hundred pixel box</div><script>console.error('planted error');</script></body></html>\n";

/// `cargo xtask report`.
pub(crate) fn report() -> Res {
    let browser = browser()?;
    let work = target_dir().join("report-check");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    // The check must see a planted fault before it is trusted with the real page.
    let (errors, overflow) = dom_check(&browser, BAD_PAGE, &work.join("bad-checked.html"))?;
    if errors.is_empty() || overflow.is_empty() {
        return Err(format!(
            "the browser check missed a planted fault (errors {errors:?}, overflow {overflow:?}): \
             {browser} does not run the checking script"
        ));
    }
    let exe = crate::tasks::workspace_cli()?;
    let out = work.join("run");
    let config = work.join("small.toml");
    write(&config, EXAMPLE)?;
    Cmd::new(&exe)
        .args([
            "run".as_ref(),
            config.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ])
        .run()?;
    let page = out.join("report.html");
    if !page.is_file() {
        return Err(format!("{} was not written", page.display()));
    }
    let shot = work.join("report.png");
    let (ok, _, stderr) = Cmd::new(&browser)
        .args(headless())
        .args([
            "--enable-logging=stderr".to_owned(),
            "--v=0".to_owned(),
            format!("--screenshot={}", shot.display()),
            format!("--window-size={WIDTH},3000"),
            url(&page),
        ])
        .output()?;
    if !ok || !shot.is_file() {
        return Err(format!(
            "{browser} could not take a screenshot of {}:\n{stderr}",
            page.display()
        ));
    }
    let console: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains(":ERROR:") || l.contains("Uncaught")))
        .collect();
    let html = std::fs::read_to_string(&page)
        .map_err(|e| format!("cannot read {}: {e}", page.display()))?;
    let (errors, overflow) = dom_check(&browser, &html, &work.join("report-checked.html"))?;
    if !console.is_empty() || !errors.is_empty() || !overflow.is_empty() {
        return Err(format!(
            "report.html in {browser}: console {console:?}; errors {errors:?}; overflowing \
             text {overflow:?} (screenshot: {})",
            shot.display()
        ));
    }
    eprintln!(
        "xtask: {} opens without console errors or overflowing text at {WIDTH} px (screenshot {})",
        page.display(),
        shot.display()
    );
    Ok(())
}

/// The browser: `chromium` on `PATH`, installed from Debian when missing.
fn browser() -> Res<String> {
    if !on_path("chromium") {
        ensure_apt_packages(&["chromium"], "chromium (opens report.html headless)")?;
    }
    Ok("chromium".to_owned())
}

/// The flags of every headless run; the profile lives under `target/` so no user profile is
/// read or written.
fn headless() -> Vec<String> {
    let profile = target_dir().join("report-check").join("profile");
    vec![
        "--headless".to_owned(),
        "--disable-gpu".to_owned(),
        "--no-sandbox".to_owned(),
        "--no-first-run".to_owned(),
        "--disable-extensions".to_owned(),
        format!("--user-data-dir={}", profile.display()),
    ]
}

fn url(page: &Path) -> String {
    let abs: PathBuf = if page.is_absolute() {
        page.to_path_buf()
    } else {
        root().join(page)
    };
    format!("file://{}", abs.display())
}

fn write(path: &Path, text: &str) -> Res {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes `html` with [`CHECK_SCRIPT`] in front to `at`, loads it with `--dump-dom` and
/// returns the console errors and the overflowing elements the script recorded.
fn dom_check(browser: &str, html: &str, at: &Path) -> Res<(Vec<String>, Vec<String>)> {
    write(
        at,
        &html.replacen("<head>", &format!("<head>{CHECK_SCRIPT}"), 1),
    )?;
    let (ok, dom, stderr) = Cmd::new(browser)
        .args(headless())
        .args([
            "--virtual-time-budget=5000".to_owned(),
            format!("--window-size={WIDTH},3000"),
            "--dump-dom".to_owned(),
            url(at),
        ])
        .output()?;
    let start = "<pre id=\"dpinfer-check\">";
    let found = dom
        .find(start)
        .and_then(|i| {
            let rest = &dom[i + start.len()..];
            rest.find("</pre>").map(|end| &rest[..end])
        })
        .filter(|_| ok);
    let Some(text) = found else {
        return Err(format!(
            "{browser} --dump-dom of {} gave no check result:\n{stderr}",
            at.display()
        ));
    };
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let mut errors = Vec::new();
    let mut overflow = Vec::new();
    let mut into: Option<&mut Vec<String>> = None;
    for line in text.lines() {
        if line.starts_with("errors ") {
            into = Some(&mut errors);
        } else if line.starts_with("overflow ") {
            into = Some(&mut overflow);
        } else if line == "end" {
            break;
        } else if let Some(v) = into.as_deref_mut().filter(|_| !line.trim().is_empty()) {
            v.push(line.to_owned());
        }
    }
    Ok((errors, overflow))
}
