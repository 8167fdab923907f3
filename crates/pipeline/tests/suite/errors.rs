//! The typed error: for each cause a caller acts on, a real failure of the pipeline gives the
//! variant (under any context layers, [`Error::root`]) and the message the CLI prints; and
//! the observer hears a run's notes, warnings and progress instead of stderr.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dpinfer_pipeline::{Config, Error, Observer, Quiet};

/// A fresh folder under the target directory.
fn fresh(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pipeline-errors-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small private SVT-ABC run with a fixed noise seed.
fn svt(noise: u64, extra: &str) -> String {
    format!(
        r#"
        [model]
        name = "gaussian-mean"
        n = 200

        [sampler]
        kind = "svt-abc"
        pairs = 400
        epsilon_abc = 0.2
        c = 20

        [privacy]
        epsilon = 1.0

        [seeds]
        run = 7
        noise = {noise}
        {extra}
        "#
    )
}

/// The chain as the CLI prints it: `anyhow`'s `{:#}` is each error of the `source()` chain,
/// `": "`-separated.
fn chain(e: &Error) -> String {
    let mut s = e.to_string();
    let mut c = core::error::Error::source(e);
    while let Some(x) = c {
        s.push_str(": ");
        s.push_str(&x.to_string());
        c = x.source();
    }
    s
}

#[test]
fn an_invalid_setting_is_a_config_error_naming_the_key() {
    let e = Config::parse(
        &svt(11, "[distance]\nkind = \"rff-mmd\"\nfeatures = 3"),
        Path::new("."),
    )
    .unwrap_err();
    match e.root() {
        Error::Config { key, message } => {
            assert!(message.contains("distance.features"), "{message}");
            assert_eq!(key.as_deref(), Some("distance.features"));
        }
        other => panic!("not a config error: {other:?}"),
    }
    assert!(e.is_config() && !e.is_refused_release());
    // `{:#}` is the whole chain; the chain a printer builds from `source()` is the same.
    assert_eq!(format!("{e:#}"), chain(&e));
}

#[test]
fn an_unknown_key_is_a_toml_config_error_naming_key_and_section() {
    let text = svt(11, "").replace("c = 20", "c = 20\nepsilon_ab = 0.1");
    let e = Config::parse(&text, Path::new(".")).unwrap_err();
    assert!(matches!(e.root(), Error::Toml(_)), "{e:?}");
    assert!(e.is_config());
    assert_eq!(e.config_key().as_deref(), Some("epsilon_ab"));
    let m = format!("{e:#}");
    assert!(
        m.contains("unknown field `epsilon_ab`") && m.contains("[sampler]"),
        "{m}"
    );
}

#[test]
fn a_config_file_error_says_which_file_under_a_context_layer() {
    let dir = fresh("config-file");
    let path = dir.join("run.toml");
    std::fs::write(
        &path,
        "[model]\nname = \"gaussian-mean\"\n[privacy]\ndelta = 2.0\n[sampler]\nkind = \"rejection\"\npairs = 10",
    )
    .unwrap();
    let e = Config::load(&path).unwrap_err();
    let Error::Context { context, source } = &e else {
        panic!("no context layer: {e:?}");
    };
    assert_eq!(*context, format!("invalid config {}", path.display()));
    assert!(matches!(**source, Error::Config { .. }), "{e:#}");
    assert_eq!(e.config_key().as_deref(), Some("privacy.delta"));
    assert_eq!(
        format!("{e:#}"),
        format!(
            "invalid config {}: privacy.delta must be in [0, 1), got 2.0",
            path.display()
        )
    );
    // A missing config file is the ledger crate's file error (it reads every input).
    let e = Config::load(&dir.join("missing.toml")).unwrap_err();
    assert!(matches!(e.root(), Error::Ledger(_)), "{e:?}");
}

#[test]
fn unreadable_data_are_a_data_error_naming_file_and_line() {
    let dir = fresh("data");
    std::fs::write(dir.join("obs.csv"), "1.0\n2.0\nabc\n").unwrap();
    let text = svt(11, "[data]\npath = \"obs.csv\"");
    let cfg = Config::parse(&text, &dir).unwrap();
    let e = dpinfer_pipeline::run::run_with(&cfg, &dir.join("out"), 1, &quiet()).unwrap_err();
    assert!(matches!(e.root(), Error::Data(_)), "{e:?}");
    let m = format!("{e:#}");
    assert!(m.contains("obs.csv line 3: \"abc\" is not a number"), "{m}");
    // Nothing was written: the data are read before any simulation.
    assert!(!dir.join("out").exists());
}

#[test]
fn a_missing_arrow_file_is_an_io_error_with_its_path() {
    let dir = fresh("io");
    let text = svt(11, "[data]\npath = \"missing.arrow\"");
    let cfg = Config::parse(&text, &dir).unwrap();
    let e = dpinfer_pipeline::run::load(&cfg).unwrap_err();
    // An Arrow data file is read like every input (issue 26: the input cap, no devices):
    // through `dpinfer_ledger::files::read_input`, whose I/O errors are `Error::Ledger`.
    match e.root() {
        Error::Ledger(dpinfer_ledger::Error::Io { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("not an I/O error: {other:?}"),
    }
    assert!(format!("{e:#}").starts_with(&format!(
        "cannot read data file {}: ",
        dir.join("missing.arrow").display()
    )));
}

#[test]
fn a_refused_rerun_is_the_ledger_variant() {
    let dir = fresh("refused");
    let out = dir.join("out");
    let first = Config::parse(&svt(11, ""), &dir).unwrap();
    let o = dpinfer_pipeline::run::run_with(&first, &out, 1, &quiet())
        .unwrap()
        .close()
        .unwrap();
    assert!(!o.reproduced);
    // The same input reproduces the release; another noise seed is another input: refused.
    let again = dpinfer_pipeline::run::run_with(&first, &out, 1, &quiet())
        .unwrap()
        .close()
        .unwrap();
    assert!(again.reproduced);
    let other = Config::parse(&svt(12, ""), &dir).unwrap();
    let e = dpinfer_pipeline::run::run_with(&other, &out, 1, &quiet()).unwrap_err();
    assert!(
        matches!(e.ledger(), Some(dpinfer_ledger::Error::DifferentInput(_))),
        "{e:?}"
    );
    assert!(e.is_refused_release() && !e.is_config());
    assert!(format!("{e:#}").contains("refusing to overwrite it"));
}

#[test]
fn a_private_chain_rerun_is_refused_as_already_released() {
    let dir = fresh("once");
    let out = dir.join("out");
    let text = r#"
        [model]
        name = "gaussian-mean"
        n = 500
        [sampler]
        kind = "dp-penalty"
        iterations = 200
        burn_in = 50
        proposal_scale = 0.05
        tau = 0.5
        [privacy]
        epsilon = 4.0
        delta = 1e-5
        [seeds]
        run = 3
        noise = 5
    "#;
    let cfg = Config::parse(text, &dir).unwrap();
    dpinfer_pipeline::run::run_with(&cfg, &out, 1, &quiet())
        .unwrap()
        .close()
        .unwrap();
    let e = dpinfer_pipeline::run::run_with(&cfg, &out, 1, &quiet()).unwrap_err();
    assert!(
        matches!(
            e.ledger(),
            Some(dpinfer_ledger::Error::AlreadyReleased { .. })
        ),
        "{e:?}"
    );
    assert!(e.is_refused_release());
}

#[test]
fn a_simulator_program_that_cannot_start_is_the_worker_variant() {
    let dir = fresh("worker");
    let text = r#"
        [model]
        name = "mine"
        kind = "command"
        command = ["/nonexistent/dpinfer-no-such-simulator"]
        outputs = 5
        [[model.prior]]
        name = "mu"
        dist = "uniform"
        lo = -1.0
        hi = 1.0
        [distance]
        kind = "l2"
        [sampler]
        kind = "rejection"
        pairs = 20
        accept = 5
        [seeds]
        run = 1
    "#;
    let cfg = Config::parse(text, &dir).unwrap();
    let model = <dpinfer_pipeline::model::Model as dpinfer_pipeline::model::BuildModel>::build(
        &cfg.model, None,
    )
    .unwrap();
    let public = dpinfer_pipeline::public::Public::new(&cfg, model).unwrap();
    let e = public.rows(0, public.total, 1, &|_| {}).unwrap_err();
    assert!(
        matches!(
            e.root(),
            Error::Worker(dpinfer_workers::WorkerError::Spawn { .. })
        ),
        "{e:?}"
    );
}

/// An observer that records everything it hears.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Observer for Log {
    fn note(&self, line: &str) {
        self.0.lock().unwrap().push(line.into());
    }
    fn start(&self, what: &str, total: u64) {
        self.0.lock().unwrap().push(format!("start {what} {total}"));
    }
    fn advance(&self, units: u64) {
        self.0.lock().unwrap().push(format!("advance {units}"));
    }
    fn finish(&self) {
        self.0.lock().unwrap().push("finish".into());
    }
}

fn quiet() -> Arc<dyn Observer> {
    Arc::new(Quiet)
}

#[test]
fn the_observer_hears_notes_and_progress_and_changes_no_number() {
    let dir = fresh("observer");
    let cfg = Config::parse(&svt(11, ""), &dir).unwrap();
    let log = Arc::new(Log::default());
    let heard: Arc<dyn Observer> = log.clone();
    let a = dpinfer_pipeline::run::run_with(&cfg, &dir.join("a"), 2, &heard)
        .unwrap()
        .close()
        .unwrap();
    let lines = log.0.lock().unwrap().clone();
    assert_eq!(
        lines.first().map(String::as_str),
        Some("start simulating pairs 400")
    );
    let done: u64 = lines
        .iter()
        .filter_map(|l| l.strip_prefix("advance ")?.parse::<u64>().ok())
        .sum();
    assert_eq!(done, 400, "{lines:?}");
    let fin = lines.iter().position(|l| l == "finish").unwrap();
    assert!(
        lines[fin + 1].starts_with("public step: 400 pairs in "),
        "{lines:?}"
    );
    // Quiet or not, the numbers are the same.
    let b = dpinfer_pipeline::run::run_with(&cfg, &dir.join("b"), 1, &quiet())
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(a.samples, b.samples);
    assert_eq!(a.ledger, b.ledger);
}

#[test]
fn config_warnings_go_to_the_observer() {
    let text = "[model]\nname = \"gaussian-mean\"\nn = 50\n[sampler]\nkind = \"rejection\"\n\
                pairs = 100\nepsilon_abc = 0.1\n";
    let log = Log::default();
    let cfg = Config::parse_with(text, Path::new("."), &log).unwrap();
    let quiet = Config::parse_with(text, Path::new("."), &Quiet).unwrap();
    assert_eq!(cfg.sampler, quiet.sampler);
    let lines = log.0.lock().unwrap().clone();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("warning: ") && lines[0].contains("epsilon_abc"),
        "{lines:?}"
    );
}

/// A private chain the budget cuts short runs fewer iterations than asked and keeps at most
/// half of them as burn-in (`dpinfer_mcmc::run`'s plan); the outcome says so and names the
/// keys instead of lowering the configured burn-in silently. A chain asked for what the budget
/// allows has no such warning.
#[test]
fn a_chain_cut_short_by_its_budget_says_its_burn_in_was_lowered() {
    let dir = fresh("burn-in");
    let text = |iterations: u64| {
        format!(
            r#"
        [model]
        name = "gaussian-mean"
        n = 500
        [sampler]
        kind = "dp-penalty"
        iterations = {iterations}
        burn_in = 5000
        proposal_scale = 0.05
        tau = 0.5
        [privacy]
        epsilon = 1.0
        delta = 1e-5
        [seeds]
        run = 3
        noise = 5
    "#
        )
    };
    let cfg = Config::parse(&text(100_000), &dir).unwrap();
    let o = dpinfer_pipeline::run::run_with(&cfg, &dir.join("cut"), 1, &quiet())
        .unwrap()
        .close()
        .unwrap();
    let w: Vec<&String> = o
        .warnings
        .iter()
        .filter(|w| w.contains("burn-in was lowered"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", o.warnings);
    assert!(
        w[0].contains("of the 100000 iterations asked for")
            && w[0].contains("lowered from 5000 to")
            && w[0].contains("[sampler] iterations"),
        "{}",
        w[0]
    );
    // The cap the warning names runs without it.
    let cap: u64 = w[0]
        .split("allows ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(cap > 2 && cap < 100_000, "{cap}");
    let cfg = Config::parse(&text(cap).replace("burn_in = 5000", "burn_in = 1"), &dir).unwrap();
    let o = dpinfer_pipeline::run::run_with(&cfg, &dir.join("fits"), 1, &quiet())
        .unwrap()
        .close()
        .unwrap();
    assert!(
        !o.warnings.iter().any(|w| w.contains("burn-in was lowered")),
        "{:?}",
        o.warnings
    );
}

/// The error of building the model of a command-model (or built-in) config whose `[model]`
/// table is `model` (the config parser's checks first, then the model's own).
fn model_error(model: &str) -> Error {
    let text = format!(
        "[model]\n{model}\n[distance]\nkind = \"l2\"\n[sampler]\nkind = \"rejection\"\n\
         pairs = 20\naccept = 5\n[seeds]\nrun = 1\n"
    );
    let cfg = match Config::parse(&text, Path::new(".")) {
        Ok(cfg) => cfg,
        Err(e) => return e,
    };
    match <dpinfer_pipeline::model::Model as dpinfer_pipeline::model::BuildModel>::build(
        &cfg.model, None,
    ) {
        Ok(_) => panic!("the model was built: {model}"),
        Err(e) => e,
    }
}

#[test]
fn a_cubic_outbreak_of_other_size_loads_the_synthetic_series_and_one_point_is_refused() {
    // `[model] n` of cubic-outbreak spreads n points over the paper's 18 days; without a data
    // file the observed data are the curve at the stated public θ*, the model's truth.
    use dpinfer::simulators::models::cubic::SYNTHETIC_THETA;
    let text = |n: usize| {
        format!(
            "[model]\nname = \"cubic-outbreak\"\nn = {n}\n[sampler]\nkind = \"rejection\"\n\
             pairs = 20\naccept = 5\n[seeds]\nrun = 1\n"
        )
    };
    let cfg = Config::parse(&text(35), Path::new(".")).unwrap();
    let (model, data) = dpinfer_pipeline::run::load(&cfg).unwrap();
    assert_eq!(data.len(), 35);
    assert_eq!(model.truth(), Some(SYNTHETIC_THETA.to_vec()));
    // day 17, the last point: 0.25·17³ + 1.5·17² by hand
    assert_eq!(data[34], 1661.75);
    let e = model_error("name = \"cubic-outbreak\"\nn = 1");
    assert!(e.to_string().contains("invalid size `n` = 1"), "{e}");
}

#[test]
fn model_declaration_errors_carry_their_key_as_data() {
    const CMD: &str = "name = \"mine\"\nkind = \"command\"\ncommand = [\"/bin/true\"]\noutputs = 5";
    const MU: &str = "[[model.prior]]\nname = \"mu\"\ndist = \"uniform\"\nlo = -1.0\nhi = 1.0";
    let lags = format!(
        "{CMD}\n{MU}\n[model.summary]\nkind = \"lag-products\"\nlags = [5]\nlo = 0.0\nhi = 1.0"
    );
    // (the `[model]` table, the key the error is about, its message byte for byte)
    let cases: [(String, Option<&str>, &str); 9] = [
        (
            format!(
                "{CMD}\n[[model.prior]]\nname = \"mu\"\ndist = \"normal\"\nmean = 0.0\nsd = 0.0"
            ),
            Some("model.prior"),
            "model.prior \"mu\" (normal): `sd` must be a finite, normal (not subnormal) number > 0, got 0.0",
        ),
        (
            format!("{CMD}\n[[model.prior]]\nname = \"mu\"\ndist = \"uniform\"\nlo = 0.0"),
            Some("model.prior"),
            "model.prior \"mu\" (uniform): `hi` is required",
        ),
        (
            lags,
            Some("model.summary.lags"),
            "model.summary.lags: lag 5 is not below the 5 observations of a simulation \
             (model.outputs = 5); every lag must be at most 4",
        ),
        (
            format!("{CMD}\n{MU}\n[model.summary]\nkind = \"mean\"\nlo = 0.0"),
            Some("model.summary"),
            "model.summary: `hi` (clip of each observation) is required",
        ),
        (
            format!("{CMD}\nsigma = 1.0\n{MU}"),
            Some("model.sigma"),
            "model.sigma belongs to a built-in model, not to kind = \"command\"",
        ),
        (
            "name = \"gaussian-mean\"\noutputs = 5".into(),
            Some("model.outputs"),
            "model.outputs belongs to kind = \"command\"",
        ),
        (
            "name = \"mine\"\nkind = \"command\"\ncommand = [\"/bin/true\"]".into(),
            Some("model.outputs"),
            "model.outputs (values per simulation) is required for kind = \"command\"",
        ),
        (
            "name = \"nope\"".into(),
            Some("model.name"),
            "unknown model.name \"nope\" (expected gaussian-mean, uniform-mixture, \
             cubic-outbreak, sir, linear-regression, tuberculosis, banana)",
        ),
        // About the declaration as a whole: no one key, as before.
        (
            CMD.into(),
            None,
            "a command model needs its prior: one [[model.prior]] table per parameter",
        ),
    ];
    for (model, key, message) in cases {
        let e = model_error(&model);
        match e.root() {
            Error::Config { key: k, message: m } => {
                assert_eq!(m, message, "{model}");
                assert_eq!(k.as_deref(), key, "{model}");
            }
            other => panic!("not a config error: {other:?}\n{model}"),
        }
        assert_eq!(e.config_key().as_deref(), key, "{model}");
    }
    // A library refusal of the declared summary keeps its text; the key is its setting.
    let e = model_error(&format!(
        "{CMD}\n{MU}\n[model.summary]\nkind = \"mean\"\nlo = 0.0\nhi = 1.0\nsensitivity = 1e-9"
    ));
    assert_eq!(
        e.config_key().as_deref(),
        Some("model.summary.sensitivity"),
        "{e:#}"
    );
    assert!(
        e.to_string()
            .starts_with("model.summary.sensitivity = 1e-9 is below"),
        "{e:#}"
    );
}

/// `privacy.epsilon = nan` (TOML allows it) is an invalid value, said as for `inf` or `0`;
/// only a missing key is "required" (issue 27: NaN was the serde default of a missing key,
/// so an explicit NaN was reported as missing).
#[test]
fn an_explicit_nan_epsilon_is_invalid_not_missing() {
    let msg = |epsilon: &str| {
        let text = svt(11, "").replace("epsilon = 1.0", epsilon);
        let e = Config::parse(&text, Path::new(".")).unwrap_err();
        assert_eq!(e.config_key().as_deref(), Some("privacy.epsilon"), "{e:#}");
        match e.root() {
            Error::Config { message, .. } => message.clone(),
            other => panic!("not a config error: {other:?}"),
        }
    };
    assert_eq!(
        msg("epsilon = nan"),
        "privacy.epsilon must be a finite, normal (not subnormal) number > 0, got NaN"
    );
    assert_eq!(
        msg("epsilon = inf"),
        "privacy.epsilon must be a finite, normal (not subnormal) number > 0, got inf"
    );
    assert_eq!(
        msg(""),
        "privacy.epsilon is required for the private sampler svt-abc"
    );
}

/// A budget the sparse vector cannot calibrate (ε = 1e308: the Laplace scale `(c+1)Δ/ε` is
/// below the mechanism's grid range) is a config error about `privacy.epsilon` with the
/// value and the mechanism's reason (issue 27: it was "the privacy mechanism rejected its
/// parameters", with no key, value or reason).
#[test]
fn an_uncalibratable_budget_names_privacy_epsilon_and_the_reason() {
    let dir = fresh("huge-epsilon");
    let cfg = Config::parse(
        &svt(11, "").replace("epsilon = 1.0", "epsilon = 1e308"),
        &dir,
    )
    .unwrap();
    let e = match dpinfer_pipeline::run::run_with(&cfg, &dir.join("out"), 1, &quiet()) {
        Ok(_) => panic!("ε = 1e308 ran"),
        Err(e) => e,
    };
    assert_eq!(e.config_key().as_deref(), Some("privacy.epsilon"), "{e:#}");
    match e.root() {
        Error::Config { message, .. } => assert_eq!(
            message,
            "privacy.epsilon = 1e308: the privacy mechanism rejected the noise parameters it \
             gives: parameter `scale` is outside the supported range"
        ),
        other => panic!("not a config error: {other:?}"),
    }
}

/// A DP Barker run of `model` (n rows) with the `[sampler]` line `shear`.
fn sheared_barker(model: &str, n: usize, shear: &str) -> Error {
    let dir = fresh(&format!("shear-{model}"));
    let text = format!(
        "[model]\nname = \"{model}\"\nn = {n}\n[sampler]\nkind = \"dp-barker\"\n\
         iterations = 200\nburn_in = 50\nbatch = 100\n{shear}\n[privacy]\nepsilon = 4.0\n\
         delta = 1e-5\n[seeds]\nrun = 3\nnoise = 5\n"
    );
    match Config::parse(&text, &dir) {
        Err(e) => e,
        Ok(cfg) => dpinfer_pipeline::run::run_with(&cfg, &dir.join("out"), 1, &quiet())
            .map(|_| ())
            .unwrap_err(),
    }
}

#[test]
fn a_shear_the_model_cannot_take_is_a_config_error_naming_sampler_shear() {
    // One parameter: the shear moves θ₂ with θ₁.
    let e = sheared_barker("gaussian-mean", 500, "shear = { a = 20.0, m = 0.0 }");
    match e.root() {
        Error::Config { key, message } => {
            assert_eq!(key.as_deref(), Some("sampler.shear"), "{message}");
            assert!(message.contains("θ has 1"), "{message}");
        }
        other => panic!("not a config error: {other:?}"),
    }
    // A curvature that is not a number.
    let e = sheared_barker("banana", 2000, "shear = { a = nan, m = 0.0 }");
    match e.root() {
        Error::Config { key, message } => {
            assert_eq!(key.as_deref(), Some("sampler.shear"), "{message}");
            assert!(message.contains("NaN is invalid"), "{message}");
        }
        other => panic!("not a config error: {other:?}"),
    }
}
