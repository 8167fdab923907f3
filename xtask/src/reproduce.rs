//! `cargo xtask reproduce <name>`: the long statistical reproductions, which CI does not run
//! (CI runs small, fast versions of the same checks). Each is an example program of the crate
//! it checks, built in the release profile; what it prints is the result (a table in the
//! crate's README records the last run, with the machine and the time it took).

use crate::util::{Cmd, Res};

/// A reproduction: name, what it checks, the `cargo run` arguments.
type Reproduction = (&'static str, &'static str, &'static [&'static str]);

/// Every reproduction (`neural` runs all `neural-*` ones). Arguments that start with `test`
/// run `cargo test --release` instead of `cargo run --release`.
pub(crate) const REPRODUCTIONS: &[Reproduction] = &[
    (
        "examples-long",
        "the examples marked `# long-example:` at their shipped settings: no warning their \
         header does not expect (crates/cli/tests/suite/examples.rs, the ignored test)",
        &[
            "test",
            "-p",
            "dpinfer-cli",
            "--test",
            "suite",
            "--",
            "--ignored",
            "--exact",
            "examples::long_examples_at_their_shipped_settings_warn_only_as_their_headers_say",
        ],
    ),
    (
        "neural-sbc",
        "simulation-based calibration of SPPE, K = 100 (crates/neural/examples/sbc_sppe.rs)",
        &["-p", "dpinfer-neural", "--example", "sbc_sppe"],
    ),
    (
        "neural-epoch",
        "seconds per training epoch on the SIR round-10 shape, the twin of \
         crates/neural/benches/sbi_epoch.py (crates/neural/examples/epoch_time.rs; \
         RAYON_NUM_THREADS sets the threads)",
        &["-p", "dpinfer-neural", "--example", "epoch_time"],
    ),
    (
        "neural-sir",
        "the SIR experiment of Xiong, Ju & Zhang App. E.1.1 by SPPE and SPLE against SMC-ABC \
         (crates/neural/examples/sir_sppe.rs; hours at the paper's settings)",
        &["-p", "dpinfer-neural", "--example", "sir_sppe"],
    ),
    (
        "neural-curve",
        "the MMD-against-simulations curves of Xiong, Ju & Zhang Fig. 1B (SPPE and SPLE per \
         round over 5 seeds, SMC-ABC per generation; against SMC-ABC and against an \
         importance-sampling reference of the exact posterior) in the shortened settings of the \
         README (crates/neural/examples/sir_sppe.rs; add --epsilon 1 or 0.1 for Fig. 8)",
        &[
            "-p",
            "dpinfer-neural",
            "--example",
            "sir_sppe",
            "--",
            "--maf",
            "--m",
            "2",
            "--rounds",
            "5",
            "--sims",
            "500",
            "--max-epochs",
            "20",
            "--abc-tolerance",
            "0.035",
            "--abc-curve",
            "--seeds",
            "1,2,3,4,5",
            "--exact-reference",
            "8000",
        ],
    ),
    (
        "neural-drift",
        "SPPE round after round (10 rounds of 500, seeds 1-3) on the log-normal model with a \
         closed-form posterior at the SIR experiment's prior, θ* and posterior widths: the \
         posterior mean's error in exact sds and the sd ratio per round \
         (crates/neural/examples/drift_sppe.rs; without --lognormal the Gaussian-linear model)",
        &[
            "-p",
            "dpinfer-neural",
            "--example",
            "drift_sppe",
            "--",
            "--lognormal",
        ],
    ),
    (
        "neural-e2e",
        "item 7's end-to-end comparison on the SIR: SPPE (10 rounds of 1000, M = 2, the default \
         MAF, at most 40 epochs) and SMC-ABC (down to tolerance 0.01, at most 1.5 million \
         simulations), each with wall and CPU time against the importance-sampling reference \
         of the exact posterior (crates/neural/examples/sir_sppe.rs; the README's numbers with \
         RAYON_NUM_THREADS=1)",
        &[
            "-p",
            "dpinfer-neural",
            "--example",
            "sir_sppe",
            "--",
            "--maf",
            "--m",
            "2",
            "--max-epochs",
            "40",
            "--exact-reference",
            "8000",
            "--abc-curve",
            "--abc-curve-tolerance",
            "0.01",
            "--abc-curve-budget",
            "1500000",
            "--no-sple",
        ],
    ),
    (
        "neural-regression",
        "the linear regression of Xiong, Ju & Zhang App. E.2 at ε = 10, 1, 0.1: SPPE, SPLE and \
         SMC-ABC credible intervals, in the shortened settings of the README \
         (crates/neural/examples/regression_sppe.rs; without the flags, the paper's defaults)",
        &[
            "-p",
            "dpinfer-neural",
            "--example",
            "regression_sppe",
            "--",
            "--maf",
            "--m",
            "2",
            "--rounds",
            "5",
            "--sims",
            "500",
            "--max-epochs",
            "30",
        ],
    ),
];

/// Runs the reproduction `name` (or every one whose name starts with `name-`).
///
/// # Errors
/// An unknown name, or a failed build or run.
pub(crate) fn run(name: &str) -> Res {
    let chosen: Vec<&Reproduction> = REPRODUCTIONS
        .iter()
        .filter(|(n, _, _)| *n == name || n.strip_prefix(name).is_some_and(|r| r.starts_with('-')))
        .collect();
    if chosen.is_empty() {
        return Err(format!("unknown reproduction `{name}`; {}", list()));
    }
    for (n, what, args) in chosen {
        eprintln!("==> reproduce {n}: {what}");
        let (verb, args) = match args.split_first() {
            Some((&"test", rest)) => ("test", rest),
            _ => ("run", *args),
        };
        Cmd::cargo([verb, "--release", "--locked"])
            .args(args.iter().copied())
            .run()?;
    }
    Ok(())
}

/// The names, for the usage text.
pub(crate) fn list() -> String {
    let names: Vec<&str> = REPRODUCTIONS.iter().map(|(n, _, _)| *n).collect();
    format!(
        "reproductions: {} (or a prefix: `neural`, `examples`)",
        names.join(", ")
    )
}
