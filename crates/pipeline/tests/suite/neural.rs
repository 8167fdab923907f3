//! `[sampler] kind = "sppe"` / `"sple"` through the library (issue 28 item 4): the release's
//! claim is the run's ledger, the estimator in the results folder loads back and samples the
//! run's draws bit for bit, and settings the library refuses are named by their config key.

use std::path::{Path, PathBuf};

use dpinfer::simulators::SimStream;
use dpinfer_neural::{ConditionalFlow, NeuralPosterior};
use dpinfer_pipeline::Config;
use dpinfer_pipeline::model::ModelPrior;

/// Runs `cfg` into `dir` on one thread, quietly, and closes the results folder.
fn run(cfg: &Config, dir: &Path) -> dpinfer_pipeline::Result<dpinfer_pipeline::Outcome> {
    let quiet = std::sync::Arc::new(dpinfer_pipeline::Quiet)
        as std::sync::Arc<dyn dpinfer_pipeline::Observer>;
    dpinfer_pipeline::run_with(cfg, dir, 1, &quiet)?.close()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dpinfer-pipeline-neural-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The linear regression released by its Laplace mechanism (proven sensitivity), tiny rounds.
fn config(sampler: &str) -> Result<Config, dpinfer_pipeline::Error> {
    let text = format!(
        r#"
        [model]
        name = "linear-regression"

        [sampler]
        {sampler}

        [privacy]
        epsilon = 10.0
        release = "laplace"
        release_lo = -1.0
        release_hi = 1.0

        [seeds]
        run = 2024
        noise = 5
        "#
    );
    Config::parse(&text, Path::new("."))
}

const TINY: &str = "rounds = 2\nsimulations = 64\nnoise_draws = 2\nlayers = 2\nhidden = 16\n\
                    max_epochs = 8\nsamples = 100";

#[test]
fn sppe_keeps_the_release_claim_and_its_estimator_samples_the_same_draws() {
    let cfg = config(&format!("kind = \"sppe\"\n{TINY}")).unwrap();
    let dir = scratch("sppe");
    let out = run(&cfg, &dir).unwrap();
    assert_eq!(out.sampler, "sppe");
    assert_eq!(out.samples.len(), 100 * out.names.len());
    // the ledger is the release's: a Laplace claim of at most privacy.epsilon, not "not private"
    assert!(
        out.ledger.epsilon > 0.0 && out.ledger.epsilon <= 10.0,
        "{:?}",
        out.ledger
    );
    assert!(out.ledger.mechanism.contains("Laplace"), "{:?}", out.ledger);
    // the per-round table
    let rounds = out.diagnostics.iter().find(|d| d.stem == "rounds").unwrap();
    assert_eq!(rounds.rows.len(), 2);
    assert_eq!(rounds.columns[0], "round");
    // the estimator loads back and, at the release's s_dp°, samples the run's draws
    let (model, obs) = dpinfer_pipeline::run::load(&cfg).unwrap();
    let (release, reproduced, lock) =
        dpinfer_pipeline::release::release(&cfg, &model, &obs, &dir).unwrap();
    assert!(reproduced);
    drop(lock);
    let flow = ConditionalFlow::load(&dir.join(dpinfer_pipeline::neural::ESTIMATOR_FILE)).unwrap();
    let post = NeuralPosterior::new(flow, &release.s_dp).unwrap();
    let mut rng = SimStream::with_domain(cfg.seeds.run, dpinfer_pipeline::neural::SAMPLE_DOMAIN, 0);
    let (again, _) = post
        .sample(&ModelPrior(&model), 100, 0.01, &mut rng)
        .unwrap();
    assert_eq!(again, out.samples);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sple_reports_split_rhat_and_ess_per_parameter() {
    let cfg = config(&format!("kind = \"sple\"\n{TINY}\nchains = 2\nwarmup = 40")).unwrap();
    let dir = scratch("sple");
    let out = run(&cfg, &dir).unwrap();
    for name in &out.names {
        assert!(
            out.facts
                .iter()
                .any(|(k, _)| k == &format!("split_rhat_{name}"))
        );
        assert!(
            out.facts
                .iter()
                .any(|(k, _)| k == &format!("ess_bulk_{name}"))
        );
    }
    assert!(dir.join(dpinfer_pipeline::neural::ESTIMATOR_FILE).is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn refusals_name_their_key() {
    let key = |sampler: &str| match config(sampler) {
        Ok(_) => panic!("accepted {sampler}"),
        Err(e) => format!("{:?} {e:#}", e.config_key()),
    };
    assert!(key("kind = \"sppe\"\nrounds = 0").contains("sampler.rounds"));
    assert!(key("kind = \"sppe\"\nnoise_draws = 0").contains("sampler.noise_draws"));
    assert!(key("kind = \"sppe\"\nsampling = \"sobol\"").contains("sampler.sampling"));
    assert!(key("kind = \"sppe\"\nchains = 2").contains("sampler.chains"));
    assert!(key("kind = \"sple\"\natoms = 5").contains("sampler.atoms"));
    assert!(key("kind = \"sppe\"\nflow = \"maf\"\nbins = 4").contains("sampler.bins"));
    assert!(key("kind = \"sppe\"\nspline = 3").contains("sampler.spline"));
    assert!(key("kind = \"sppe\"\nflow = \"maf\"\nspline = 2").contains("sampler.spline"));
    assert!(key("kind = \"sppe\"\nlearning_rate = -1.0").contains("sampler.learning_rate"));
    // without a release there is no s_dp° and no mechanism to simulate
    let text = "[model]\nname = \"linear-regression\"\n[sampler]\nkind = \"sppe\"\n";
    let e = Config::parse(text, Path::new(".")).unwrap_err();
    assert!(
        format!("{e:#}").contains("privacy.release is required for sppe"),
        "{e:#}"
    );
}

/// The estimator is written like every file of the results folder (`dpinfer_ledger`'s
/// atomic write): a link at its name is refused with a typed error and the file it points to
/// is untouched (with `std::fs::write`, as before, that file was truncated and overwritten and
/// the run succeeded).
#[cfg(unix)]
#[test]
fn the_estimator_never_writes_through_a_link_in_the_folder() {
    let cfg = config(&format!("kind = \"sppe\"\n{TINY}")).unwrap();
    let dir = scratch("link");
    std::fs::create_dir_all(&dir).unwrap();
    let outside = scratch("link-target");
    std::fs::write(&outside, b"not yours").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("estimator.safetensors")).unwrap();
    let err = run(&cfg, &dir).err().unwrap().to_string();
    assert!(err.contains("estimator.safetensors"), "{err}");
    assert_eq!(std::fs::read(&outside).unwrap(), b"not yours");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&outside);
}

/// `dpinfer calibrate` on a neural sampler is refused up front, naming the key (it used to
/// fall through to the MCMC path and fail in the first replicate with "not an MCMC sampler").
#[test]
fn calibrate_refuses_the_neural_samplers_by_key() {
    for kind in ["sppe", "sple"] {
        let cfg = config(&format!("kind = \"{kind}\"\n{TINY}")).unwrap();
        let e = dpinfer_pipeline::calibrate::Calibration::new(&cfg, 1, &dpinfer_pipeline::Quiet)
            .unwrap_err();
        assert!(e.is_config(), "{e:?}");
        assert_eq!(e.config_key().as_deref(), Some("sampler.kind"), "{e:?}");
        assert!(
            format!("{e:#}").contains(&format!("calibrate does not run {kind}")),
            "{e:#}"
        );
    }
}

/// `[sampler] spline = 2` trains SPPE's spline flow with the fused spline (version 2 of
/// `dpinfer_neural::SplineImpl`): the saved estimator records it, and a config without the key
/// keeps version 1 and serializes (so fingerprints) exactly as before the key existed.
#[test]
fn the_spline_key_selects_the_fused_spline_and_is_absent_from_old_configs() {
    use dpinfer_neural::{FlowSettings, SplineImpl};
    let spline_of = |dir: &Path| match ConditionalFlow::load(
        &dir.join(dpinfer_pipeline::neural::ESTIMATOR_FILE),
    )
    .unwrap()
    .settings()
    {
        FlowSettings::Nsf(n) => n.spline,
        other => panic!("{other:?}"),
    };
    for (extra, want) in [("", SplineImpl::Tensor), ("spline = 2", SplineImpl::Fused)] {
        let cfg = config(&format!("kind = \"sppe\"\n{TINY}\n{extra}")).unwrap();
        let json = serde_json::to_string(&cfg.sampler).unwrap();
        assert_eq!(json.contains("spline"), !extra.is_empty(), "{json}");
        let dir = scratch(if extra.is_empty() {
            "spline1"
        } else {
            "spline2"
        });
        run(&cfg, &dir).unwrap();
        assert_eq!(spline_of(&dir), want);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
