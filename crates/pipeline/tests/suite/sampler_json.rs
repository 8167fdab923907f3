//! The serialized `[sampler]` table enters the release fingerprint (`private::fingerprint`,
//! the shard and calibration fingerprints), so its JSON must not move when the Rust types
//! behind it do (issue 27: the library's settings read as the config). This pins the JSON of
//! a table per kind with every key set and with the fewest keys against
//! `tests/data/sampler_json.txt` (one `name<TAB>json` line each); the example configs' tables
//! are printed by the ignored `the_example_sampler_tables` (`--ignored --nocapture`) to diff
//! before and after a change (their text belongs to the examples, which may change).
//! A deliberate change of the JSON is a fingerprint change: it goes behind a version switch,
//! never into this file silently.

use std::path::{Path, PathBuf};

use dpinfer_pipeline::sampler::SamplerConfig;

/// Every key of every kind (the values are valid but need not be checked here), then the
/// fewest keys of each.
const TABLES: &[(&str, &str)] = &[
    ("rejection", "pairs = 100\naccept = 5"),
    (
        "svt-abc",
        "pairs = 100\nepsilon_abc = 0.1\nc = 5\nresample = true\nclip = 2.5",
    ),
    ("soft-abc", "pairs = 100\nepsilon_abc = 0.1\nclip = 2.5"),
    ("gaussian-abc", "pairs = 100\nepsilon_abc = 0.1\nclip = 2.5"),
    (
        "smc-abc",
        "pairs = 200\nparticles = 50\nfinal_tolerance = 0.1\ngenerations = 4\nalpha = 0.5\n\
         simulations = 10000\nkernel = \"olcm\"\nkernel_scale = 1.5\n\
         first_tolerance = \"prior-quantile\"",
    ),
    (
        "rwmh",
        "iterations = 100\nburn_in = 10\ninit = [0.5, 1.0]\nproposal_scale = 0.2\n\
         proposal_scales = [0.1, 0.3]\ntemperature = 0.5",
    ),
    (
        "dp-penalty",
        "iterations = 100\nburn_in = 10\ninit = [0.5]\nproposal_scale = 0.2\n\
         proposal_scales = [0.1]\ntemperature = 0.5\nratio_clip = 3.0\ntau = 0.4\n\
         accounting = \"zcdp\"",
    ),
    (
        "dp-barker",
        "iterations = 100\nburn_in = 10\ninit = [0.5]\nproposal_scale = 0.2\n\
         proposal_scales = [0.1]\ntemperature = 0.5\nbatch = 50\nshear = { a = 20.0, m = 0.5 }",
    ),
    (
        "dp-hmc",
        "iterations = 100\nburn_in = 10\ninit = [0.5]\nstep_size = 0.02\nleapfrog_steps = 7\n\
         inv_mass = [2.0]\ntemperature = 0.5\nratio_clip = 3.0\ngrad_clip = 4.0\ntau_l = 0.3\n\
         tau_g = 0.6\naccounting = \"pld\"",
    ),
    (
        "sppe",
        "rounds = 2\nsimulations = 64\nnoise_draws = 4\nsampling = \"mc\"\nflow = \"nsf\"\n\
         layers = 2\nhidden = 8\nbins = 4\nspline = 2\nbatch_size = 16\nlearning_rate = 0.001\n\
         patience = 3\nmax_epochs = 5\nsamples = 100\natoms = 5",
    ),
    (
        "sple",
        "rounds = 2\nsimulations = 64\nnoise_draws = 4\nsampling = \"rqmc\"\nflow = \"maf\"\n\
         layers = 2\nhidden = 8\nbatch_size = 16\nlearning_rate = 0.001\npatience = 3\n\
         max_epochs = 5\nsamples = 100\nchains = 2\nwarmup = 10\nthin = 2",
    ),
    ("rejection", "pairs = 100"),
    ("svt-abc", "pairs = 100\nepsilon_abc = 0.1\nc = 5"),
    ("soft-abc", "pairs = 100\nepsilon_abc = 0.1"),
    ("gaussian-abc", "pairs = 100\nepsilon_abc = 0.1"),
    ("smc-abc", ""),
    ("rwmh", ""),
    ("dp-penalty", ""),
    ("dp-barker", ""),
    ("dp-hmc", ""),
    ("sppe", ""),
    ("sple", ""),
];

/// The golden file.
fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sampler_json.txt")
}

/// `[sampler]` of a config text, as the pipeline reads it, serialized as the fingerprints
/// serialize it.
fn json(text: &str) -> Option<String> {
    let mut doc: toml::Table = toml::from_str(text).unwrap();
    let t = doc.remove("sampler")?;
    let s: SamplerConfig = t.try_into().unwrap();
    Some(serde_json::to_string(&s).unwrap())
}

/// The `.toml` files under `dir`, sorted, recursively.
fn tomls(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            tomls(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// The examples' `[sampler]` tables, serialized (`name<TAB>json`).
fn examples() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files = Vec::new();
    tomls(&root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        if let Some(j) = json(&text) {
            let name = f.strip_prefix(&root).unwrap().display().to_string();
            out.push(format!("examples/{name}\t{j}"));
        }
    }
    out
}

/// The [`TABLES`], serialized (`name<TAB>json`).
fn lines() -> Vec<String> {
    let mut out = Vec::new();
    for (i, (kind, body)) in TABLES.iter().enumerate() {
        let j = json(&format!("[sampler]\nkind = \"{kind}\"\n{body}\n")).unwrap();
        out.push(format!("table {i} {kind}\t{j}"));
    }
    out
}

#[test]
#[ignore = "prints the examples' tables, to diff before and after a change"]
fn the_example_sampler_tables() {
    let lines = examples();
    assert!(lines.len() >= 20, "{} example tables", lines.len());
    for l in lines {
        println!("{l}");
    }
}

#[test]
fn the_serialized_sampler_tables_are_the_pinned_ones() {
    let got = lines();
    // Writes the file only when asked (`DPINFER_BLESS=1`), for a new table: the diff of the
    // file shows that every earlier line stayed.
    if std::env::var_os("DPINFER_BLESS").is_some() {
        std::fs::create_dir_all(golden().parent().unwrap()).unwrap();
        std::fs::write(golden(), got.join("\n") + "\n").unwrap();
    }
    let want = std::fs::read_to_string(golden()).unwrap();
    let want: Vec<&str> = want.lines().collect();
    assert_eq!(got.len(), TABLES.len());
    // Every pinned line is still produced, byte for byte.
    for w in &want {
        assert!(got.iter().any(|g| g == w), "changed or gone: {w}");
    }
    assert_eq!(
        got.len(),
        want.len(),
        "a new table: bless it and review the diff"
    );
}
