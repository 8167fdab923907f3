//! Defaults and checks of the settings types (the `dpinfer` command reads its config into
//! these; the library owns the defaults and the validation), and the serde form of a PMC
//! population.

use dpinfer_abc::AbcError;
use dpinfer_abc::analysis::Resample;
use dpinfer_abc::gaussian::GaussianRejectionSettings;
use dpinfer_abc::pmc::{PmcSettings, Population};
use dpinfer_abc::rejection::default_k;
use dpinfer_abc::smc::{SmcSettings, Tolerance};
use dpinfer_abc::soft::SoftAbcdpSettings;
use dpinfer_abc::svt::SvtAbcSettings;
use dpinfer_distances::{Relations, Sensitivity};

#[test]
fn default_k_is_one_percent_and_at_least_one() {
    assert_eq!(default_k(0), 1);
    assert_eq!(default_k(1), 1);
    assert_eq!(default_k(199), 1);
    assert_eq!(default_k(200), 2);
    assert_eq!(default_k(4000), 40);
    for t in 1..1000 {
        assert!((1..=t).contains(&default_k(t)));
    }
}

#[test]
fn quick_smc_settings_are_valid_and_shorter_than_default() {
    let q = SmcSettings::quick();
    let d = SmcSettings::default();
    q.validate().unwrap();
    assert_eq!(
        (q.particles, q.max_generations, q.simulation_budget),
        (500, 10, 1_000_000)
    );
    assert_eq!(
        q.tolerance,
        Tolerance::Quantile {
            initial: f64::INFINITY,
            alpha: 0.5
        }
    );
    assert_eq!(
        (q.final_tolerance, q.ess_fraction, q.kernel_scale),
        (d.final_tolerance, d.ess_fraction, d.kernel_scale)
    );
    PmcSettings::default().validate().unwrap();
}

#[test]
fn svt_refuses_a_threshold_that_is_not_positive() {
    let ok = SvtAbcSettings {
        epsilon_abc: 0.05,
        epsilon_total: 1.0,
        c: 2,
        sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
        clip: 1.0,
        resample: Resample::Never,
    };
    ok.validate().unwrap();
    for bad in [0.0, -0.1, f64::NAN, f64::INFINITY] {
        let s = SvtAbcSettings {
            epsilon_abc: bad,
            ..ok
        };
        assert!(
            matches!(
                s.validate(),
                Err(AbcError::InvalidParameter {
                    name: "epsilon_abc",
                    ..
                })
            ),
            "{bad}"
        );
    }
}

/// The serde form is the field list in declaration order, every `f64` bit for bit.
#[test]
fn a_population_round_trips_through_json_bit_for_bit() {
    let w = [0.1, 0.2, 0.3, 0.4_f64];
    let ess = 1.0 / w.iter().map(|x| x * x).sum::<f64>();
    let p = Population {
        generation: 3,
        tolerance: 0.123_456_789_012_345_67,
        dim: 2,
        particles: vec![
            1e-300,
            -2.5,
            0.1 + 0.2,
            1.0 / 3.0,
            f64::MIN_POSITIVE,
            7.0,
            -0.0,
            1e300,
        ],
        weights: w.to_vec(),
        ess,
        proposals: 40,
    };
    p.validate().unwrap();
    let json = serde_json::to_string(&p).unwrap();
    let keys = [
        "{\"generation\":3,",
        "\"tolerance\":",
        "\"dim\":2,",
        "\"particles\":[1e-300,-2.5,",
        "\"weights\":[0.1,0.2,0.3,0.4],",
        "\"ess\":",
        "\"proposals\":40}",
    ];
    let at: Vec<usize> = keys.iter().map(|k| json.find(k).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]) && at[0] == 0, "{json}");
    assert!(json.ends_with(keys[6]), "{json}");
    let back: Population = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p);
    for (a, b) in back.particles.iter().zip(&p.particles) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
    assert_eq!(back.ess.to_bits(), p.ess.to_bits());
}

#[test]
fn soft_and_gaussian_settings_validate_every_field() {
    let soft = SoftAbcdpSettings {
        epsilon_abc: 0.1,
        epsilon_total: 1.0,
        delta_total: 1e-6,
        sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
        bound: 1.0,
        floor: SoftAbcdpSettings::FLOOR,
    };
    soft.validate().unwrap();
    let name = |r: Result<(), AbcError>| match r {
        Err(AbcError::InvalidParameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        name(
            SoftAbcdpSettings {
                epsilon_abc: 0.0,
                ..soft
            }
            .validate()
        ),
        "epsilon_abc"
    );
    assert_eq!(
        name(
            SoftAbcdpSettings {
                epsilon_total: f64::NAN,
                ..soft
            }
            .validate()
        ),
        "epsilon_total"
    );
    assert_eq!(
        name(
            SoftAbcdpSettings {
                delta_total: 1.0,
                ..soft
            }
            .validate()
        ),
        "delta_total"
    );
    // A sensitivity is finite and positive by construction (it carries its relations).
    for v in [-1.0, 0.0, f64::NAN, f64::INFINITY] {
        assert!(
            Sensitivity::declared(v, Relations::REPLACE_ONE).is_err(),
            "{v}"
        );
    }
    assert_eq!(
        name(
            SoftAbcdpSettings {
                bound: f64::INFINITY,
                ..soft
            }
            .validate()
        ),
        "bound"
    );
    assert_eq!(
        name(SoftAbcdpSettings { floor: 0.0, ..soft }.validate()),
        "floor"
    );
    let g = GaussianRejectionSettings {
        epsilon_abc: 0.1,
        epsilon_total: 1.0,
        sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
        bound: 1.0,
    };
    g.validate().unwrap();
    assert_eq!(
        name(
            GaussianRejectionSettings {
                epsilon_total: 0.0,
                ..g
            }
            .validate()
        ),
        "epsilon_total"
    );
    assert_eq!(
        name(
            GaussianRejectionSettings {
                epsilon_abc: 1.0,
                ..g
            }
            .validate()
        ),
        "epsilon_abc"
    );
    assert_eq!(
        name(GaussianRejectionSettings { bound: -1.0, ..g }.validate()),
        "bound"
    );
}
