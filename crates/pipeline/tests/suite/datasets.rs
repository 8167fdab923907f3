//! `[model] datasets = n` (ABCDP §6.3, Park, Vinaroz & Jitkrittum 2021): n independent data
//! sets per simulation and in the observed data, compared data set by data set with the `l2`
//! distance clipped at C and averaged, sensitivity C/n under replace-one of one whole data set
//! (Theorem 1 with `dpinfer_distances::sensitivity::clipped_mean`). The key is validated with
//! its name as data, one data set is today's run bit for bit, and the averaged design's ledger
//! and posterior are checked against the one-data-set design at the same ε.

use std::path::{Path, PathBuf};

use dpinfer::accountants::Neighbouring;
use dpinfer::distances::sensitivity::clipped_mean;
use dpinfer_pipeline::Config;
use dpinfer_pipeline::run::run;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dpinfer-pipeline-datasets-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// gaussian-mean with `n` observations per data set (prior N(0, 10²), μ* = 1), `model`
/// extra lines, the `l2` distance clipped at 5, SVT-ABC at ε = 1 (or `sampler`).
fn text(model: &str, distance: &str, sampler: &str) -> String {
    format!(
        "[model]\nname = \"gaussian-mean\"\n{model}\n[distance]\n{distance}\n[sampler]\n{sampler}\n\
         [privacy]\nepsilon = 1.0\n[seeds]\nrun = 2021\nnoise = 7\n"
    )
}

const L2: &str = "kind = \"l2\"\nclip = 5.0";
const SVT: &str = "kind = \"svt-abc\"\npairs = 2000\nepsilon_abc = 1.4\nc = 10";

#[test]
fn model_datasets_is_validated_and_its_errors_name_the_key() {
    let refused = |model: &str, distance: &str, sampler: &str| {
        let e = Config::parse(&text(model, distance, sampler), Path::new("."))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            e.config_key().as_deref(),
            Some("model.datasets"),
            "{model} {distance} {sampler}: {e:#}"
        );
        e.to_string()
    };
    let e = refused("datasets = 0", L2, SVT);
    assert!(e.contains("at least 1"), "{e}");
    let e = refused("datasets = 3", "kind = \"rff-mmd\"", SVT);
    assert!(e.contains("distance.kind = \"l2\""), "{e}");
    let e = refused(
        "datasets = 3",
        L2,
        "kind = \"rwmh\"\niterations = 100\nproposal_scale = 0.1",
    );
    assert!(e.contains("pairs table"), "{e}");
    let e = refused("datasets = 100000001", L2, SVT);
    assert!(e.contains("supported maximum"), "{e}");
    let command = "kind = \"command\"\ncommand = [\"/bin/true\"]\noutputs = 1\ndatasets = 2\n\
                   [[model.prior]]\nname = \"mu\"\ndist = \"uniform\"\nlo = 0.0\nhi = 1.0";
    let cmd = text(command, L2, SVT).replace("name = \"gaussian-mean\"", "name = \"mine\"");
    let e = Config::parse(&cmd, Path::new(".")).map(|_| ()).unwrap_err();
    assert_eq!(e.config_key().as_deref(), Some("model.datasets"), "{e:#}");
    assert!(e.to_string().contains("built-in models only"), "{e}");
    // One data set is every distance's and sampler's.
    for (distance, sampler) in [
        ("kind = \"rff-mmd\"", SVT),
        (
            L2,
            "kind = \"rwmh\"\niterations = 100\nproposal_scale = 0.1",
        ),
    ] {
        Config::parse(&text("datasets = 1", distance, sampler), Path::new(".")).unwrap();
    }
}

/// A data file holds the n data sets one after the other: n · (values per data set) values,
/// anything else is a data error.
#[test]
fn a_data_file_holds_every_data_set() {
    let dir = scratch("file");
    let cfg = |values: &str| {
        let file = dir.join("obs.csv");
        std::fs::write(&file, values).unwrap();
        let t = text("n = 2\ndatasets = 3", L2, SVT).replace(
            "[distance]",
            &format!("[data]\npath = {:?}\n[distance]", file.to_str().unwrap()),
        );
        Config::parse(&t, Path::new(".")).unwrap()
    };
    let (model, data) = dpinfer_pipeline::run::load(&cfg("1,2\n3,4\n5,6\n")).unwrap();
    assert_eq!((model.datasets(), data.len()), (3, 6));
    let e = dpinfer_pipeline::run::load(&cfg("1,2\n3,4\n"))
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(e, dpinfer_pipeline::Error::Data(_)), "{e:?}");
    assert!(e.to_string().contains("observes 6"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `datasets = 1` is the config without the key: the same table hash and release fingerprint
/// (left out of the serialised model), the same release bit for bit.
#[test]
fn one_data_set_is_todays_run_bit_for_bit() {
    let dir = scratch("one");
    let plain = Config::parse(&text("n = 20", L2, SVT), Path::new(".")).unwrap();
    let one = Config::parse(&text("n = 20\ndatasets = 1", L2, SVT), Path::new(".")).unwrap();
    let two = Config::parse(&text("n = 20\ndatasets = 2", L2, SVT), Path::new(".")).unwrap();
    assert_eq!(plain.public_hash(), one.public_hash());
    assert_ne!(plain.public_hash(), two.public_hash());
    let a = run(&plain, &dir.join("plain"), 1).unwrap().close().unwrap();
    let b = run(&one, &dir.join("one"), 1).unwrap().close().unwrap();
    assert!(!a.samples.is_empty());
    assert_eq!(a.samples, b.samples);
    assert_eq!(a.ledger, b.ledger);
    assert_eq!(a.facts, b.facts);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn fact(facts: &[(String, f64)], key: &str) -> f64 {
    facts.iter().find(|(k, _)| k == key).unwrap().1
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The averaged design at ε = 1 against one data set at the same ε: each data set is one
/// observation y_j ~ N(μ, 1) (one person's record), so with one data set the clipped
/// distance |y − y*| has Δ = C = 5 and SVT's noise (Laplace scale 2(c + 1)Δ/ε = 110) swamps
/// every distance, while the mean of 200 clipped distances has Δ = C/200 = 0.025 (scale
/// 0.55). The ledger states C/n under replace-one; the posterior mean at these pinned seeds
/// is within 1 of μ* = 1 and the one-data-set posterior mean is at least twice as far.
///
/// Tolerance: the averaged distance is about E|N(δ, 2)| ≥ 1.13 + δ²/3.6 for a θ at δ from
/// μ*, its sampling sd over 200 data sets ≈ 0.06; the threshold 1.4 admits |δ| up to ≈ 1
/// before noise, and the SVT noise (scale 0.55) moves the threshold by a few tenths — the
/// accepted θ lie within about ±1.5 of μ*, so their mean within 1. With one data set the 10
/// accepted θ are close to prior draws (sd 10): the mean of 10 has sd ≈ 3. The values at
/// these seeds are printed and checked; a change of either design's bits shows up here.
#[test]
fn averaged_design_has_sensitivity_c_over_n_and_a_posterior_nearer_the_truth() {
    let dir = scratch("design");
    let many = Config::parse(&text("n = 1\ndatasets = 200", L2, SVT), Path::new(".")).unwrap();
    let one = Config::parse(&text("n = 1", L2, SVT), Path::new(".")).unwrap();
    let m = run(&many, &dir.join("many"), 0).unwrap().close().unwrap();
    let o = run(&one, &dir.join("one"), 0).unwrap().close().unwrap();
    // The ledger: Δ = C/n (rounded up by at most one ulp), replace-one of one data set.
    let want = clipped_mean(5.0, 200).unwrap().value();
    assert_eq!(fact(&m.facts, "sensitivity"), want);
    assert!(
        want >= 5.0 / 200.0 && want <= (5.0_f64 / 200.0).next_up(),
        "{want}"
    );
    assert_eq!(fact(&o.facts, "sensitivity"), 5.0);
    let claim = m.ledger.claim.as_ref().unwrap();
    assert_eq!(claim.relation, Neighbouring::ReplaceOne);
    assert_eq!(m.ledger.neighbouring, Neighbouring::ReplaceOne.to_string());
    assert!(
        m.ledger
            .mechanism
            .contains("averaged over the model.datasets"),
        "{}",
        m.ledger.mechanism
    );
    assert!(m.ledger.epsilon <= 1.0 && o.ledger.epsilon <= 1.0);
    // The posterior.
    let (em, eo) = (
        (mean(&m.samples) - 1.0).abs(),
        (mean(&o.samples) - 1.0).abs(),
    );
    eprintln!(
        "|posterior mean − μ*|: {em:.3} with 200 data sets ({} draws), {eo:.3} with one ({} draws)",
        m.samples.len(),
        o.samples.len()
    );
    assert_eq!((m.samples.len(), o.samples.len()), (10, 10));
    assert!(em < 1.0, "{em}");
    assert!(eo > 2.0 * em, "{eo} vs {em}");
    std::fs::remove_dir_all(&dir).unwrap();
}
