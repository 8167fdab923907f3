//! End-to-end tests of the warnings a run prints and stores in `summary.json`: a posterior on
//! few draws, an MCMC chain that has not converged, a posterior indistinguishable from the
//! prior, and the summary's named quantile levels.

use crate::common;

use common::{dpinfer, fresh_dir, show, write_config};

fn run(name: &str, cfg: &str) -> (serde_json::Value, String) {
    let dir = fresh_dir(name);
    let out = dir.join("results");
    let text = format!(
        "{cfg}\n[output]\ndir = \"{}\"\n",
        out.display().to_string().replace('\\', "/")
    );
    let path = write_config(&dir, "c.toml", &text);
    let o = dpinfer(&["run", path.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{name}: {}", show(&o));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    (s, String::from_utf8_lossy(&o.stdout).into_owned())
}

fn warnings(s: &serde_json::Value) -> Vec<String> {
    s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect()
}

const GAUSSIAN_SVT: &str = r#"
[model]
name = "gaussian-mean"
n = 500

[distance]
kind = "rff-mmd"
features = 50

[sampler]
kind = "svt-abc"
pairs = 400
c = 100
epsilon_abc = 0.05
clip = 1.0

[seeds]
run = 11
noise = 5
"#;

#[test]
fn a_posterior_swamped_by_noise_is_flagged_as_the_prior() {
    // ε = 0.001 over c = 100 answers: the threshold noise dwarfs every distance, so SVT
    // accepts pairs regardless of their distance and the released θs are prior draws.
    let (s, stdout) = run(
        "prior-like",
        &format!("{GAUSSIAN_SVT}\n[privacy]\nepsilon = 0.001\n"),
    );
    let w = warnings(&s);
    assert!(
        w.iter()
            .any(|m| m.contains("indistinguishable from the prior")),
        "{w:?}"
    );
    assert!(
        stdout.contains("warning: the posterior is indistinguishable"),
        "{stdout}"
    );
    let levels: Vec<f64> = s["quantile_levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(levels, [0.025, 0.25, 0.5, 0.75, 0.975]);
}

#[test]
fn an_informative_posterior_is_not_flagged_and_few_draws_are() {
    // Non-private nearest-40 rejection on 5 000 observations: a sharp posterior (the prior
    // sd is 1, the posterior sd about 0.05), but only 40 draws → one warning, about the count.
    let (s, _) = run(
        "sharp",
        r#"
[model]
name = "gaussian-mean"
n = 5000

[distance]
kind = "rff-mmd"
features = 50

[sampler]
kind = "rejection"
pairs = 2000
accept = 20

[seeds]
run = 3
"#,
    );
    let w = warnings(&s);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("rests on 20") && w[0].contains("fewer than 30"),
        "{w:?}"
    );
}

#[test]
fn a_short_chain_is_flagged_as_not_converged() {
    // 60 iterations of a random walk with a tiny step: bulk ESS far below 100.
    let (s, stdout) = run(
        "short-chain",
        r#"
[model]
name = "gaussian-mean"
n = 1000

[sampler]
kind = "rwmh"
iterations = 60
burn_in = 0
proposal_scale = 0.001

[seeds]
run = 4
"#,
    );
    let w = warnings(&s);
    assert!(
        w.iter()
            .any(|m| m.contains("has not converged") && m.contains("bulk ESS")),
        "{w:?}"
    );
    assert!(
        stdout.contains("warning: the chain has not converged"),
        "{stdout}"
    );
}

const GAUSSIAN_SMC: &str = r#"
[model]
name = "gaussian-mean"
n = 50

[distance]
kind = "l2"

[sampler]
kind = "smc-abc"
particles = 50
generations = 2

[seeds]
run = 5
"#;

/// Issue 32: every SMC-ABC run that ran its `generations` warned "the generation limit
/// (max_generations) was reached" — a key that does not exist, and no news without a final
/// tolerance (the default, 0, is never reached). It warns, in the config's keys, only when a
/// `final_tolerance` was asked for and not reached.
#[test]
fn smc_warns_of_its_generations_only_when_a_final_tolerance_was_missed() {
    let (s, stdout) = run("smc-generations", GAUSSIAN_SMC);
    // (other diagnostics of so small a run may warn; none of them is about the stop)
    let w = warnings(&s);
    assert!(
        !w.iter()
            .any(|m| m.contains("SMC-ABC") || m.contains("generation")),
        "{w:?}"
    );
    assert!(!stdout.contains("stopped early"), "{stdout}");
    let (s, stdout) = run(
        "smc-final-tolerance",
        &GAUSSIAN_SMC.replace("generations = 2", "generations = 2\nfinal_tolerance = 1e-9"),
    );
    let w: Vec<String> = warnings(&s)
        .into_iter()
        .filter(|m| m.contains("SMC-ABC"))
        .collect();
    assert!(
        w.len() == 1
            && w[0].contains("sampler.generations = 2")
            && w[0].contains("sampler.final_tolerance")
            && !w[0].contains("max_generations"),
        "{w:?}"
    );
    assert!(
        stdout.contains("warning: SMC-ABC stopped early"),
        "{stdout}"
    );
}
