//! Reading `[sampler]`, `[distance]`, `[privacy]` tables: every kind, unknown keys named with
//! their section, the conversions into the library's settings.

use dpinfer::abc::pmc::PmcSettings;
use dpinfer::abc::smc::SmcSettings;
use dpinfer::abc::svt::SvtAbcSettings;
use dpinfer::distances::{Relations, Sensitivity};

use dpinfer_pipeline::config::{DistanceConfig, PrivacyConfig, ReleaseConfig};
use dpinfer_pipeline::sampler::{
    Calibration, SamplerConfig, SamplerKind, SmcAbc, SvtAbc, SvtAbcOptions, With,
};

/// A minimal valid `[sampler]` table of every kind.
const TABLES: &[(&str, &str)] = &[
    ("rejection", "pairs = 100"),
    ("svt-abc", "pairs = 100\nepsilon_abc = 0.1\nc = 5"),
    ("soft-abc", "pairs = 100\nepsilon_abc = 0.1"),
    ("gaussian-abc", "pairs = 100\nepsilon_abc = 0.1"),
    ("smc-abc", "particles = 50"),
    ("rwmh", "iterations = 100"),
    ("dp-penalty", "iterations = 100\ntau = 0.5"),
    ("dp-barker", "iterations = 100\nbatch = 10"),
    ("dp-hmc", "iterations = 100\nstep_size = 0.1"),
];

#[derive(Debug, serde::Deserialize)]
struct Doc {
    sampler: SamplerConfig,
}

fn sampler(kind: &str, body: &str) -> Result<SamplerConfig, String> {
    let text = format!("[model]\n[sampler]\nkind = \"{kind}\"\n{body}\n");
    toml::from_str::<Doc>(&text)
        .map(|d| d.sampler)
        .map_err(|e| e.to_string().replace('\n', " "))
}

/// The private passes over the pairs table are the kinds registered `as pass`: each runs
/// through the `PairsPass` trait (pairs and clip read through it), and with rejection they
/// are the samplers that use a pairs table.
#[test]
fn the_pairs_passes_are_the_kinds_registered_as_passes() {
    let mut passes = Vec::new();
    for (kind, body) in TABLES {
        let s = sampler(kind, body).unwrap();
        let k = s.kind();
        assert_eq!(k.is_pass(), s.pairs_pass().is_some(), "{kind}");
        assert_eq!(
            k.uses_pairs(),
            k.is_pass() || *kind == "rejection",
            "{kind}"
        );
        if let Some(p) = s.pairs_pass() {
            assert_eq!(Some(p.pairs()), s.pairs(), "{kind}");
            assert_eq!(p.clip(), s.clip(), "{kind}");
            passes.push(*kind);
        }
    }
    assert_eq!(passes, ["svt-abc", "soft-abc", "gaussian-abc"]);
}

/// The MCMC samplers are the kinds registered `as mcmc`: each builds its library kernel
/// through the `McmcKernel` trait (private exactly when the kind is), with the chain keys of
/// its own table, and its counts are bounded through `SamplerConfig::limits`.
#[test]
fn the_mcmc_samplers_are_the_kinds_registered_as_mcmc() {
    use dpinfer::mcmc::run::Target;
    let target = Target {
        epsilon: 1.0,
        delta: 1e-5,
    };
    let mut chains = Vec::new();
    for (kind, body) in TABLES {
        let s = sampler(kind, body).unwrap();
        let k = s.kind();
        assert_eq!(k.is_mcmc(), s.mcmc().is_some(), "{kind}");
        if let Some((chain, kernel)) = s.mcmc() {
            let built = kernel.kernel(target).unwrap();
            assert_eq!(built.is_private(), k.is_private(), "{kind}");
            let limits = s.limits();
            assert_eq!(
                limits[0],
                ("sampler.iterations", chain.iterations, 1_000_000_000)
            );
            chains.push(*kind);
        }
    }
    assert_eq!(chains, ["rwmh", "dp-penalty", "dp-barker", "dp-hmc"]);
    let big = sampler("dp-barker", "batch = 1000000001").unwrap();
    assert!(
        big.limits()
            .contains(&("sampler.batch", Some(1_000_000_001), 1_000_000_000))
    );
    let big = sampler("dp-hmc", "leapfrog_steps = 100001").unwrap();
    assert!(
        big.limits()
            .contains(&("sampler.leapfrog_steps", Some(100_001), 100_000))
    );
}

/// The sequential samplers are the kinds registered `as sequential` (the ones that may take
/// a `privacy.release`), and the registration flags give the same kind lists as before the
/// families: `private` (a release from private data), `delta` (an (ε, δ) guarantee),
/// `release` (a privatized statistic required).
#[test]
fn the_sequential_samplers_and_the_flags_are_the_registered_ones() {
    let all: Vec<(&str, &str)> = TABLES
        .iter()
        .copied()
        .chain([("sppe", ""), ("sple", "")])
        .collect();
    let (mut seq, mut private, mut delta, mut release) = (vec![], vec![], vec![], vec![]);
    for (kind, body) in all {
        let s = sampler(kind, body).unwrap();
        let k = s.kind();
        assert_eq!(k.takes_release(), s.sequential().is_some(), "{kind}");
        assert!(s.check(1.0, 1e-6).is_ok(), "{kind}");
        for (on, list) in [
            (s.sequential().is_some(), &mut seq),
            (k.is_private(), &mut private),
            (k.needs_delta(), &mut delta),
            (k.needs_release(), &mut release),
        ] {
            if on {
                list.push(kind);
            }
        }
    }
    assert_eq!(seq, ["smc-abc", "sppe", "sple"]);
    let dp = [
        "svt-abc",
        "soft-abc",
        "gaussian-abc",
        "dp-penalty",
        "dp-barker",
        "dp-hmc",
    ];
    assert_eq!(private, dp);
    assert_eq!(delta, ["soft-abc", "dp-penalty", "dp-barker", "dp-hmc"]);
    assert_eq!(release, ["sppe", "sple"]);
    // A key of the other neural sampler is refused through the family's check, by name.
    let e = sampler("sppe", "chains = 2").unwrap().check(1.0, 0.0);
    assert_eq!(
        e.unwrap_err().config_key().as_deref(),
        Some("sampler.chains")
    );
}

#[test]
fn every_kind_reads_and_keeps_its_name() {
    for (kind, body) in TABLES {
        let s = sampler(kind, body).unwrap();
        assert_eq!(s.name(), *kind);
        assert!(s.check(1.0, 1e-6).is_ok(), "{kind}");
        // The serialized table names the kind as written.
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["kind"], *kind, "{json}");
    }
}

#[test]
fn a_misspelt_key_is_named_with_the_section_for_every_kind() {
    for (kind, body) in TABLES {
        for typo in ["typo_key", "iteration", "epsilon_ab"] {
            let e = sampler(kind, &format!("{body}\n{typo} = 1")).unwrap_err();
            assert!(
                e.contains(&format!("unknown field `{typo}`")) && e.contains("[sampler]"),
                "{kind}/{typo}: {e}"
            );
            assert!(e.contains(kind), "{kind}: {e}");
        }
    }
}

#[test]
fn kind_errors_are_clear() {
    let e = sampler("svt", "pairs = 1").unwrap_err();
    assert!(e.contains("unknown sampler.kind \"svt\""), "{e}");
    let e = toml::from_str::<Doc>("[sampler]\npairs = 1\n").unwrap_err();
    assert!(e.to_string().contains("[sampler] needs a kind"), "{e}");
    let e = toml::from_str::<Doc>("[sampler]\nkind = 3\n").unwrap_err();
    assert!(
        e.to_string().contains("sampler.kind must be a string"),
        "{e}"
    );
    let e = sampler("svt-abc", "pairs = 100\nepsilon_abc = 0.1").unwrap_err();
    assert!(
        e.contains("missing field `c`") && e.contains("[sampler]"),
        "{e}"
    );
}

#[test]
fn baselines_ignore_their_private_siblings_keys_with_a_warning() {
    let mut warn = Vec::new();
    let t: toml::Table =
        toml::from_str("kind = \"rejection\"\npairs = 10\nc = 3\nclip = 1.0").unwrap();
    let s = SamplerConfig::read(t, &mut warn).unwrap();
    assert_eq!(s.kind(), SamplerKind::Rejection);
    assert_eq!(warn.len(), 1);
    assert!(warn[0].contains("sampler.c, sampler.clip"), "{warn:?}");
    let mut warn = Vec::new();
    let t: toml::Table =
        toml::from_str("kind = \"rwmh\"\ntau = 0.5\nratio_clip = 5.0\nproposal_scale = 0.1")
            .unwrap();
    let s = SamplerConfig::read(t, &mut warn).unwrap();
    let SamplerConfig::Rwmh(m) = s else { panic!() };
    assert_eq!(m.kernel.proposal_scale, Some(0.1));
    assert!(
        warn[0].contains("sampler.ratio_clip, sampler.tau"),
        "{warn:?}"
    );
    // A private sampler takes no sibling's key.
    assert!(sampler("svt-abc", "pairs = 1\nepsilon_abc = 0.1\nc = 1\naccept = 3").is_err());
}

fn cal() -> Calibration {
    Calibration {
        epsilon: 1.0,
        delta: 1e-6,
        sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
        clip: 0.5,
    }
}

#[test]
fn svt_converts_into_the_library_settings_which_check_them() {
    let SamplerConfig::SvtAbc(s) = sampler(
        "svt-abc",
        "pairs = 100\nepsilon_abc = 0.1\nc = 5\nresample = true",
    )
    .unwrap() else {
        panic!()
    };
    let lib = SvtAbcSettings::try_from(With(&s, cal())).unwrap();
    assert_eq!(lib.c, 5);
    assert_eq!(lib.epsilon_abc, 0.1);
    assert_eq!(lib.clip, 0.5);
    assert_eq!(lib.resample, dpinfer::abc::analysis::Resample::AfterAccept);
    // The table is `pairs`, the library's `SvtAbcOptions`, `clip`.
    let with = |options: SvtAbcOptions| SvtAbc {
        options,
        ..s.clone()
    };
    let zero = with(SvtAbcOptions { c: 0, ..s.options });
    let e = SvtAbcSettings::try_from(With(&zero, cal())).unwrap_err();
    assert!(e.to_string().contains("sampler.c = 0"), "{e}");
    assert_eq!(e.config_key().as_deref(), Some("sampler.c"));
    let high = with(SvtAbcOptions {
        epsilon_abc: 0.5,
        ..s.options
    });
    let e = SvtAbcSettings::try_from(With(&high, cal())).unwrap_err();
    assert!(e.to_string().contains("every pair would pass"), "{e}");
    let neg = with(SvtAbcOptions {
        epsilon_abc: -0.1,
        ..s.options
    });
    let e = SvtAbcSettings::try_from(With(&neg, cal())).unwrap_err();
    assert!(e.to_string().contains("sampler.epsilon_abc"), "{e}");
}

#[test]
fn smc_defaults_are_the_librarys() {
    let s = SmcAbc::default();
    assert_eq!(SmcSettings::try_from(&s).unwrap(), SmcSettings::quick());
    assert_eq!(PmcSettings::try_from(&s).unwrap(), PmcSettings::default());
    let bad = SmcAbc {
        alpha: Some(1.5),
        ..SmcAbc::default()
    };
    let e = bad.check().unwrap_err().to_string();
    assert!(e.contains("sampler.alpha"), "{e}");
    let bad = SmcAbc {
        generations: Some(0),
        ..SmcAbc::default()
    };
    let e = bad.check().unwrap_err().to_string();
    assert!(e.contains("sampler.generations"), "{e}");
    let pmc = SmcAbc {
        pairs: Some(10),
        particles: Some(20),
        ..SmcAbc::default()
    };
    assert!(
        pmc.check()
            .unwrap_err()
            .to_string()
            .contains("sampler.particles")
    );
}

#[test]
fn mcmc_tables_keep_the_librarys_defaults() {
    use dpinfer::mcmc::run::{Kernel, Target};
    let target = Target {
        epsilon: 1.0,
        delta: 1e-5,
    };
    let SamplerConfig::DpPenalty(p) = sampler("dp-penalty", "").unwrap() else {
        panic!()
    };
    let k = p.kernel.kernel(target);
    assert_eq!(
        k,
        Kernel::DpPenalty(dpinfer::mcmc::run::DpPenalty::new(target))
    );
    assert_eq!(p.chain.settings(7).iterations, 5000);
    let SamplerConfig::DpHmc(h) = sampler("dp-hmc", "accounting = \"zcdp\"").unwrap() else {
        panic!()
    };
    let Kernel::DpHmc(k) = h.kernel.kernel(target) else {
        panic!()
    };
    assert_eq!(k.leapfrog_steps, 10);
    assert_eq!(k.accounting, dpinfer::mcmc::budget::Accounting::Zcdp);
    // The table is the library's `DpHmcOptions`: an unknown accounting is refused when the
    // table is read (it was refused by the check before), in the library's words.
    let bad = sampler("dp-hmc", "accounting = \"rdp\"").unwrap_err();
    assert!(
        bad.contains(
            "[sampler] (kind = \"dp-hmc\"): accounting must be \"pld\" or \"zcdp\", got \"rdp\""
        ),
        "{bad}"
    );
    let text = "[model]\nname = \"gaussian-mean\"\n[sampler]\nkind = \"dp-penalty\"\naccounting = \"rdp\"\n";
    let e = dpinfer_pipeline::Config::parse(text, std::path::Path::new(".")).unwrap_err();
    assert!(e.is_config(), "{e:?}");
    assert_eq!(
        e.config_key().as_deref(),
        Some("sampler.accounting"),
        "{e:#}"
    );
    let bad = sampler("rwmh", "iterations = 10\nburn_in = 10").unwrap();
    assert!(
        bad.check(1.0, 1e-6)
            .unwrap_err()
            .to_string()
            .contains("sampler.burn_in")
    );
}

#[derive(Debug, serde::Deserialize)]
struct Sections {
    #[serde(default)]
    distance: DistanceConfig,
    #[serde(default)]
    privacy: PrivacyConfig,
}

fn sections(text: &str) -> Result<Sections, String> {
    toml::from_str(text).map_err(|e| e.to_string().replace('\n', " "))
}

#[test]
fn distance_tables_by_kind() {
    assert_eq!(sections("").unwrap().distance, DistanceConfig::default());
    let d = sections("[distance]\nfeatures = 20").unwrap().distance;
    assert_eq!(d.kind(), "rff-mmd");
    let d = sections("[distance]\nkind = \"l2\"\nclip = 2.0\nweights = [1.0, 0.5]")
        .unwrap()
        .distance;
    assert_eq!(
        (d.kind(), d.clip(), d.weights()),
        ("l2", Some(2.0), Some(&[1.0, 0.5][..]))
    );
    let e = sections("[distance]\nkind = \"l2\"\nfeatures = 20").unwrap_err();
    assert!(
        e.contains("unknown field `features`") && e.contains("[distance]"),
        "{e}"
    );
    let e = sections("[distance]\nkind = \"rff-mmd\"\nclip = 1.0").unwrap_err();
    assert!(
        e.contains("unknown field `clip`") && e.contains("[distance]"),
        "{e}"
    );
    let e = sections("[distance]\nkind = \"l1\"").unwrap_err();
    assert!(e.contains("unknown distance.kind \"l1\""), "{e}");
}

/// `[distance]` serializes (into the shard fingerprint) as the earlier flat struct did.
#[test]
fn distance_hashes_as_the_flat_table_did() {
    let d = DistanceConfig::default();
    assert_eq!(
        serde_json::to_string(&d).unwrap(),
        r#"{"kind":"rff-mmd","features":100,"bandwidth":null,"weights":null,"clip":null}"#
    );
    let d = sections("[distance]\nkind = \"l2\"\nclip = 2.0")
        .unwrap()
        .distance;
    assert_eq!(
        serde_json::to_string(&d).unwrap(),
        r#"{"kind":"l2","features":100,"bandwidth":null,"weights":null,"clip":2.0}"#
    );
}

/// `kernel_version = 1` hashes as the flat table without the key (earlier fingerprints kept);
/// 2 adds it; other numbers, and the key on `l2`, are refused naming it.
#[test]
fn kernel_version_hashes_only_when_not_1() {
    let flat = |t: &str| serde_json::to_string(&sections(t).unwrap().distance).unwrap();
    let v1 = flat("[distance]\nkind = \"rff-mmd\"\nkernel_version = 1");
    assert_eq!(
        v1,
        serde_json::to_string(&DistanceConfig::default()).unwrap()
    );
    assert_eq!(
        flat("[distance]\nkernel_version = 2"),
        r#"{"kind":"rff-mmd","features":100,"bandwidth":null,"weights":null,"clip":null,"kernel_version":2}"#
    );
    for bad in ["0", "3"] {
        let d = sections(&format!("[distance]\nkernel_version = {bad}"))
            .unwrap()
            .distance;
        let DistanceConfig::RffMmd(d) = d else {
            panic!("rff-mmd expected")
        };
        let e = format!("{:#}", d.kernel_version().unwrap_err());
        assert!(e.contains("distance.kernel_version must be 1 or 2"), "{e}");
    }
    let e = sections("[distance]\nkind = \"l2\"\nkernel_version = 2").unwrap_err();
    assert!(format!("{e:#}").contains("kernel_version"), "{e:#}");
}

/// `allowance_version` (the RFF sensitivity's rounding allowance): 1 serializes as the
/// table without the key (earlier private-step inputs kept), 2 adds it to `[distance]` — the
/// private step's input — but never to the shard fingerprint (`Config::public_hash`: the
/// pairs table does not depend on it); other numbers, and the key on `l2`, are refused.
#[test]
fn allowance_version_enters_the_private_input_only_when_2_and_never_the_fingerprint() {
    let flat = |t: &str| serde_json::to_string(&sections(t).unwrap().distance).unwrap();
    assert_eq!(
        flat("[distance]\nallowance_version = 1"),
        serde_json::to_string(&DistanceConfig::default()).unwrap()
    );
    assert_eq!(
        flat("[distance]\nkernel_version = 2\nallowance_version = 2"),
        r#"{"kind":"rff-mmd","features":100,"bandwidth":null,"weights":null,"clip":null,"kernel_version":2,"allowance_version":2}"#
    );
    let base = "[model]\nname = \"gaussian-mean\"\nn = 100\n[sampler]\nkind = \"gaussian-abc\"\n\
                pairs = 50\nepsilon_abc = 0.1\nclip = 0.3\n[privacy]\nepsilon = 1.0\n[distance]\n";
    let cfg = |extra: &str| {
        dpinfer_pipeline::Config::parse(&format!("{base}{extra}"), std::path::Path::new("."))
            .unwrap()
    };
    let (none, one, two) = (
        cfg(""),
        cfg("allowance_version = 1"),
        cfg("allowance_version = 2"),
    );
    assert_eq!(none.public_hash(), one.public_hash());
    assert_eq!(none.public_hash(), two.public_hash());
    let DistanceConfig::RffMmd(d) = &two.distance else {
        panic!("rff-mmd expected")
    };
    assert_eq!(
        d.allowance_version().unwrap(),
        dpinfer::distances::AllowanceVersion::V2
    );
    for bad in ["0", "3"] {
        let e = dpinfer_pipeline::Config::parse(
            &format!("{base}allowance_version = {bad}"),
            std::path::Path::new("."),
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").contains("distance.allowance_version must be 1 or 2"),
            "{e:#}"
        );
    }
    let e = sections("[distance]\nkind = \"l2\"\nallowance_version = 2").unwrap_err();
    assert!(format!("{e:#}").contains("allowance_version"), "{e:#}");
}

#[test]
fn privacy_tables_by_release() {
    let p = sections("[privacy]\nepsilon = 1.0").unwrap().privacy;
    assert_eq!((p.epsilon, p.delta, p.release), (1.0, 0.0, None));
    assert!(sections("").unwrap().privacy.epsilon.is_nan());
    let p = sections("[privacy]\nepsilon = 1.0\nrelease = \"laplace\"\nrelease_hi = 2.0")
        .unwrap()
        .privacy;
    let Some(ReleaseConfig::Laplace(l)) = p.release else {
        panic!()
    };
    assert_eq!(
        (l.release_lo, l.release_hi, l.release_sensitivity),
        (-1.0, 2.0, None)
    );
    let p = sections("[privacy]\nrelease = \"binomial-curve\"")
        .unwrap()
        .privacy;
    let Some(ReleaseConfig::BinomialCurve(b)) = p.release else {
        panic!()
    };
    assert_eq!((b.release_n, b.release_m), (1000, 1000));
    let e = sections("[privacy]\nepsilon = 1.0\nrelease_n = 5").unwrap_err();
    assert!(e.contains("unknown field `release_n` in [privacy]"), "{e}");
    let e = sections("[privacy]\nrelease = \"laplace\"\nrelease_n = 5").unwrap_err();
    assert!(
        e.contains("unknown field `release_n`") && e.contains("[privacy]"),
        "{e}"
    );
    let e = sections("[privacy]\nepsilon = 1.0\ndelat = 0.1").unwrap_err();
    assert!(
        e.contains("unknown field `delat`") && e.contains("[privacy]"),
        "{e}"
    );
    let e = sections("[privacy]\nrelease = \"gaussian\"").unwrap_err();
    assert!(e.contains("unknown privacy.release"), "{e}");
}

/// The population file keeps its format: the library population's fields, then the table
/// hash, and it reads back equal.
#[test]
fn the_population_file_format_is_unchanged() {
    let w = [0.25, 0.75_f64];
    let ess = 1.0 / w.iter().map(|x| x * x).sum::<f64>();
    let p = dpinfer_pipeline::pmc::Population {
        population: dpinfer::abc::pmc::Population {
            generation: 1,
            tolerance: 0.5,
            dim: 1,
            particles: vec![0.1, -0.2],
            weights: w.to_vec(),
            ess,
            proposals: 10,
        },
        table_hash: 42,
    };
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(
        json,
        format!(
            r#"{{"generation":1,"tolerance":0.5,"dim":1,"particles":[0.1,-0.2],"weights":[0.25,0.75],"ess":{ess:?},"proposals":10,"table_hash":42}}"#
        )
    );
    let back: dpinfer_pipeline::pmc::Population = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p);
    p.check().unwrap();
}

/// The private passes' settings are checked by the library when the config is read, before
/// the data (with a nominal sensitivity), so `simulate` refuses them as `run` does.
#[test]
fn private_pass_settings_are_checked_when_read() {
    let refused = |kind: &str, body: &str, key: &str| {
        let e = sampler(kind, body).unwrap().check(1.0, 1e-6).unwrap_err();
        assert!(e.to_string().contains(key), "{kind} {body}: {e}");
    };
    refused(
        "svt-abc",
        "pairs = 10\nepsilon_abc = 0.1\nc = 0",
        "sampler.c",
    );
    refused(
        "svt-abc",
        "pairs = 10\nepsilon_abc = -0.1\nc = 2",
        "sampler.epsilon_abc",
    );
    refused(
        "soft-abc",
        "pairs = 10\nepsilon_abc = -0.1",
        "sampler.epsilon_abc",
    );
    refused(
        "soft-abc",
        "pairs = 10\nepsilon_abc = 0.1\nclip = -1.0",
        "sampler.clip",
    );
    refused(
        "svt-abc",
        "pairs = 10\nepsilon_abc = 0.1\nc = 1\nclip = nan",
        "sampler.clip",
    );
    refused(
        "svt-abc",
        "pairs = 10\nepsilon_abc = 0.5\nc = 1\nclip = 0.5",
        "every pair would pass",
    );
    refused(
        "gaussian-abc",
        "pairs = 10\nepsilon_abc = 0.5\nclip = 0.5",
        "sampler.epsilon_abc",
    );
    refused(
        "gaussian-abc",
        "pairs = 0\nepsilon_abc = 0.1",
        "sampler.pairs",
    );
    let soft = sampler("soft-abc", "pairs = 10\nepsilon_abc = 0.1").unwrap();
    let e = soft.check(1.0, 0.0).unwrap_err();
    assert!(e.to_string().contains("privacy.delta"), "{e}");
    for (kind, body) in TABLES {
        assert!(
            sampler(kind, body).unwrap().check(1.0, 1e-6).is_ok(),
            "{kind}"
        );
    }
}

#[test]
fn the_dp_barker_shear_is_read_into_the_sheared_walk() {
    use dpinfer::mcmc::Shear;
    use dpinfer::mcmc::run::{Kernel, Target, WalkKind};
    let target = Target {
        epsilon: 1.0,
        delta: 1e-5,
    };
    let SamplerConfig::DpBarker(b) = sampler("dp-barker", "shear = { a = 20.0, m = 0.5 }").unwrap()
    else {
        panic!()
    };
    let Kernel::DpBarker(k) = b.kernel.kernel(target) else {
        panic!()
    };
    assert_eq!(k.walk.kind, WalkKind::Sheared(Shear { a: 20.0, m: 0.5 }));
    // Unset: the plain Gaussian walk (the library's default).
    let SamplerConfig::DpBarker(b) = sampler("dp-barker", "").unwrap() else {
        panic!()
    };
    let Kernel::DpBarker(k) = b.kernel.kernel(target) else {
        panic!()
    };
    assert_eq!(k.walk.kind, WalkKind::Gaussian);
    for (body, says) in [
        ("shear = { a = 20.0 }", "missing field `m`"),
        (
            "shear = { a = 20.0, m = 0.0, b = 1.0 }",
            "unknown field `b`",
        ),
        ("shear = 20.0", "expected struct Shear"),
    ] {
        let e = sampler("dp-barker", body).unwrap_err();
        assert!(e.contains(says), "{body}: {e}");
    }
    // Only DP Barker takes it.
    let e = sampler("dp-penalty", "shear = { a = 20.0, m = 0.0 }").unwrap_err();
    assert!(e.contains("shear"), "{e}");
}
