//! `js`: the JavaScript/TypeScript package (`js/`, npm `@dpinfer/accountants`).
//!
//! Builds the package's wasm module (`js/wasm`, the export layer over
//! `crates/accountants-wasm`) for wasm32 with the cross toolchain of `nostd` (Debian's rustc,
//! `-Zbuild-std=core,alloc`, `target/cross`), copies it into `js/`, runs the package's tests
//! with `node --test` (no npm dependencies), type-checks `index.d.ts` with Debian's `tsc`
//! (package `node-typescript`, installed like `nodejs` when missing) and prints the module's
//! size, raw and gzipped.
//! No optimiser or binding generator is needed: the module is as cargo and `wasm-ld` leave it.

use crate::cross::{CROSS_DIR, Cross, ensure_apt_packages};
use crate::util::{Cmd, Res, files_with_ext, on_path, root, target_dir};

/// The module's crate, relative to the root (its own workspace and committed lockfile).
const MANIFEST: &str = "js/wasm/Cargo.toml";

/// What cargo names the module.
const BUILT: &str = "dpinfer_accountants_wasm_module.wasm";

/// The module's name inside the package (`index.js` loads it from next to itself).
const PACKAGED: &str = "js/dpinfer_accountants.wasm";

/// The type test of `index.d.ts` (compiled by `tsc`, never run).
const TYPE_TEST: &str = "js/test/types.ts";

/// The size budget of the gzipped module (issue 30: ≤ 300 KB).
const GZIP_BUDGET: u64 = 300 * 1024;

/// `cargo xtask js`.
pub(crate) fn js() -> Res {
    let cross = Cross::locate()?;
    if !on_path("node") {
        ensure_apt_packages(&["nodejs"], "node (runs the package's tests)")?;
    }
    let manifest = root().join(MANIFEST);
    let manifest = manifest.to_string_lossy();
    cross
        .cargo(
            "wasm32-unknown-unknown",
            &["--release", "--locked", "--manifest-path", &manifest],
        )
        .run()?;
    let built = target_dir()
        .join(CROSS_DIR)
        .join("wasm32-unknown-unknown/release")
        .join(BUILT);
    let packaged = root().join(PACKAGED);
    std::fs::copy(&built, &packaged).map_err(|e| {
        format!(
            "cannot copy {} to {}: {e}",
            built.display(),
            packaged.display()
        )
    })?;
    let tests = files_with_ext(&root().join("js/test"), ".test.mjs");
    if tests.is_empty() {
        return Err("no tests found in js/test (*.test.mjs)".to_owned());
    }
    Cmd::new("node").args(["--test"]).args(&tests).run()?;
    // index.d.ts against a typed use of the whole API (Debian's TypeScript: no npm).
    if !on_path("tsc") {
        ensure_apt_packages(&["node-typescript"], "tsc (type-checks js/index.d.ts)")?;
    }
    Cmd::new("tsc")
        .args([
            "--noEmit",
            "--strict",
            "--module",
            "es2022",
            "--moduleResolution",
            "node",
            "--target",
            "es2022",
            "--lib",
            "es2022,dom",
            TYPE_TEST,
        ])
        .run()?;
    let raw = std::fs::metadata(&packaged)
        .map_err(|e| format!("cannot stat {}: {e}", packaged.display()))?
        .len();
    // gzip -9 by node's zlib: node is here anyway, and the xtask has no dependencies.
    let gzipped = Cmd::new("node")
        .args([
            std::ffi::OsStr::new("-e"),
            std::ffi::OsStr::new(
                "const z=require('node:zlib'),f=require('node:fs');\
                 console.log(z.gzipSync(f.readFileSync(process.argv[1]),{level:9}).length)",
            ),
            packaged.as_os_str(),
        ])
        .run_stdout()?;
    let gzipped: u64 = gzipped
        .trim()
        .parse()
        .map_err(|e| format!("gzip size {gzipped:?} is not a number: {e}"))?;
    println!(
        "js: {PACKAGED}: {raw} bytes ({:.1} KiB), {gzipped} bytes gzipped -9 ({:.1} KiB; budget {} KiB)",
        kib(raw),
        kib(gzipped),
        GZIP_BUDGET / 1024
    );
    if gzipped > GZIP_BUDGET {
        return Err(format!(
            "the gzipped module is {gzipped} bytes, over the {GZIP_BUDGET}-byte budget"
        ));
    }
    Ok(())
}

/// Bytes in KiB for printing.
#[allow(clippy::cast_precision_loss)]
fn kib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0
}
