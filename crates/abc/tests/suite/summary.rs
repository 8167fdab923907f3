//! The public random-feature setup (`dpinfer_abc::summary`).
#![cfg(feature = "alloc")]

use dpinfer_abc::summary::{Bandwidth, Embedded, MAX_SETUP_REDRAWS, RffSummary, SETUP_DOMAIN};
use dpinfer_abc::{AbcError, SetupFailure};
use dpinfer_distances::{RandomFourierFeatures, Rows};
use dpinfer_simulators::models::gaussian::GaussianMean;
use dpinfer_simulators::{FnSimulator, SimError, SimStream, Simulator, dist};

#[test]
fn frequencies_are_the_setup_streams_standard_normals() {
    let model = GaussianMean::new(50, 1.0, 0.0, 10.0).unwrap();
    let rff = RffSummary::setup(&model.prior(), &model, 11, 1, 9, Bandwidth::Given(2.0)).unwrap();
    // 9 features round down to 8: 4 frequencies of one dimension.
    assert_eq!(rff.num_features(), 8);
    let mut rng = SimStream::with_domain(11, SETUP_DOMAIN, 1);
    let want: Vec<f64> = (0..4).map(|_| dist::std_normal(&mut rng)).collect();
    assert_eq!(rff.frequencies(), &want[..]);
    assert!(rff.bandwidth().to_bits() == 2.0_f64.to_bits());
}

/// For rows i.i.d. N(μ, 1), |X − Y| is half-normal with scale √2: its median is
/// √2·Φ⁻¹(3/4) = 0.953 872. With 1000 rows (499 500 pairs) the sample median's standard
/// error is about 0.02 (U-statistic variance 4 Var h₁ / n over the density at the median,
/// ≈ 0.6), so a tolerance of 0.15 is > 7 standard errors at each of the 5 seeds: a false
/// failure has probability < 1e-11.
#[test]
fn median_heuristic_matches_the_half_normal_median() {
    let want = core::f64::consts::SQRT_2 * dpinfer_math::norm_quantile(0.75);
    assert!((want - 0.953_872).abs() < 1e-6);
    let model = GaussianMean::new(2000, 1.0, 0.0, 10.0).unwrap();
    for seed in 0..5 {
        let rff = RffSummary::setup(
            &model.prior(),
            &model,
            seed,
            1,
            10,
            Bandwidth::MedianHeuristic,
        )
        .unwrap();
        assert!((rff.bandwidth() - want).abs() < 0.15, "{}", rff.bandwidth());
    }
}

#[test]
fn embedded_output_is_the_mean_embedding_of_the_simulation() {
    let model = GaussianMean::new(300, 1.0, 0.0, 10.0).unwrap();
    let rff =
        RffSummary::setup(&model.prior(), &model, 3, 1, 20, Bandwidth::MedianHeuristic).unwrap();
    let features = rff.features().unwrap();
    let e = Embedded::new(&model, &features, 1).unwrap();
    assert_eq!(e.output_dim(), 20);
    assert_eq!(e.param_dim(), 1);
    let mut got = vec![0.0; 20];
    e.simulate(&[1.5], &mut SimStream::new(5, 9), &mut got)
        .unwrap();
    let mut sim = vec![0.0; 300];
    model
        .simulate(&[1.5], &mut SimStream::new(5, 9), &mut sim)
        .unwrap();
    let f = RandomFourierFeatures::new(rff.frequencies(), 1, rff.bandwidth()).unwrap();
    let mut want = vec![0.0; 20];
    f.mean_embedding(Rows::new(&sim, 1).unwrap(), &mut want)
        .unwrap();
    assert_eq!(got, want);
    let mut short = vec![0.0; 19];
    assert!(
        e.simulate(&[1.5], &mut SimStream::new(5, 9), &mut short)
            .is_err()
    );
}

#[test]
fn bad_inputs_are_typed_errors() {
    let model = GaussianMean::new(50, 1.0, 0.0, 10.0).unwrap();
    let p = model.prior();
    let setup = |rd, d, b| RffSummary::setup(&p, &model, 0, rd, d, b);
    assert!(matches!(
        setup(1, 1, Bandwidth::MedianHeuristic),
        Err(AbcError::InvalidCount {
            name: "features",
            ..
        })
    ));
    assert!(matches!(
        setup(0, 10, Bandwidth::MedianHeuristic),
        Err(AbcError::InvalidCount {
            name: "row_dim",
            ..
        })
    ));
    assert!(matches!(
        setup(3, 10, Bandwidth::MedianHeuristic),
        Err(AbcError::InvalidCount {
            name: "row_dim",
            ..
        })
    ));
    for b in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            setup(1, 10, Bandwidth::Given(b)),
            Err(AbcError::InvalidParameter { .. })
        ));
    }
    assert!(RffSummary::new(vec![], 1, 1.0).is_err());
    assert!(RffSummary::new(vec![1.0, 2.0, 3.0], 2, 1.0).is_err());
    assert!(RffSummary::new(vec![f64::NAN, 2.0], 1, 1.0).is_err());
    // All rows equal: the median distance is 0, a degenerate bandwidth.
    let constant = FnSimulator::new(
        1,
        10,
        |_th: &[f64], _r: &mut dyn rand_core::Rng, out: &mut [f64]| {
            out.fill(1.0);
            Ok(())
        },
    )
    .unwrap();
    assert!(matches!(
        RffSummary::setup(&p, &constant, 0, 1, 10, Bandwidth::MedianHeuristic),
        Err(AbcError::Setup(SetupFailure::Distance(_)))
    ));
    let fatal = FnSimulator::new(
        1,
        10,
        |_th: &[f64], _r: &mut dyn rand_core::Rng, _o: &mut [f64]| {
            Err(SimError::Model {
                code: 3,
                recoverable: false,
            })
        },
    )
    .unwrap();
    assert!(matches!(
        RffSummary::setup(&p, &fatal, 0, 1, 10, Bandwidth::MedianHeuristic),
        Err(AbcError::Setup(SetupFailure::Model(SimError::Model {
            code: 3,
            ..
        })))
    ));
    let never = FnSimulator::new(
        1,
        10,
        |_th: &[f64], _r: &mut dyn rand_core::Rng, _o: &mut [f64]| {
            Err(SimError::Model {
                code: 1,
                recoverable: true,
            })
        },
    )
    .unwrap();
    assert!(matches!(
        RffSummary::setup(&p, &never, 0, 1, 10, Bandwidth::MedianHeuristic),
        Err(AbcError::Setup(SetupFailure::Redraws {
            tries: MAX_SETUP_REDRAWS
        }))
    ));
    // A given bandwidth never simulates.
    assert!(RffSummary::setup(&p, &never, 0, 1, 10, Bandwidth::Given(1.0)).is_ok());
    let rff = RffSummary::setup(&p, &model, 0, 1, 10, Bandwidth::Given(1.0)).unwrap();
    let f = rff.features().unwrap();
    let two_dim = RandomFourierFeatures::new(&[0.1, 0.2], 2, 1.0).unwrap();
    assert!(Embedded::new(&model, &two_dim, 2).is_ok());
    assert!(Embedded::new(&model, &f, 2).is_err());
    assert!(Embedded::new(&model, &f, 0).is_err());
}

#[test]
fn setup_is_from_data_on_the_setup_streams_prior_predictive_set() {
    let model = GaussianMean::new(400, 1.0, 0.0, 10.0).unwrap();
    let prior = model.prior();
    let a = RffSummary::setup(&prior, &model, 21, 1, 30, Bandwidth::MedianHeuristic).unwrap();
    // The same prior-predictive set by hand: θ then the simulation, stream 0 of the setup domain.
    let mut rng = SimStream::with_domain(21, SETUP_DOMAIN, 0);
    let mut th = [0.0];
    dpinfer_simulators::Prior::sample(&prior, &mut rng, &mut th).unwrap();
    let mut sim = vec![0.0; 400];
    model.simulate(&th, &mut rng, &mut sim).unwrap();
    let b = RffSummary::from_data(21, 1, 30, &sim).unwrap();
    assert_eq!(a, b);
    let given = RffSummary::from_seed(21, 1, 30, a.bandwidth()).unwrap();
    assert_eq!(a, given);
    assert!(matches!(
        RffSummary::from_data(21, 2, 30, &sim[..399]),
        Err(AbcError::Setup(SetupFailure::Distance(_)))
    ));
    assert!(RffSummary::from_data(21, 1, 30, &sim[..1]).is_err());
    assert!(RffSummary::from_data(21, 0, 30, &sim).is_err());
    assert!(RffSummary::from_seed(21, 1, 1, 1.0).is_err());
}

/// `Embedded::rows` over a block simulator gives the table `Embedded::new` over the same
/// simulator gives, bit for bit (it embeds each simulated row, skips rejected ones).
#[test]
fn embedded_rows_equals_embedded_simulator_bit_for_bit() {
    use dpinfer_abc::pairs::{Proposal, PublicPairs};
    use dpinfer_simulators::Rowless;
    let model = GaussianMean::new(60, 1.0, 0.0, 2.0).unwrap();
    // rejects θ < −1 (recoverable), so some rows are redrawn
    let picky = FnSimulator::new(
        1,
        60,
        |th: &[f64], r: &mut dyn rand_core::Rng, o: &mut [f64]| {
            if th[0] < -1.0 {
                return Err(SimError::Model {
                    code: 1,
                    recoverable: true,
                });
            }
            model.simulate(th, r, o)
        },
    )
    .unwrap();
    let rff = RffSummary::from_seed(4, 1, 16, 1.0).unwrap();
    let features = rff.features().unwrap();
    let prior = model.prior();
    let by_sim = Embedded::new(&picky, &features, 1).unwrap();
    let by_rows = Embedded::rows(Rowless(&picky), &features, 1).unwrap();
    let a = PublicPairs::simulate(&Proposal::Prior(&prior), &Rowless(&by_sim), 8, 0..700).unwrap();
    let b = PublicPairs::simulate(&Proposal::Prior(&prior), &by_rows, 8, 0..700).unwrap();
    assert_eq!(a.output_dim(), 16);
    assert!(a.thetas().iter().all(|&t| t >= -1.0));
    let bits = |p: &PublicPairs| p.to_table().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert!(bits(&a) == bits(&b));
    assert!(Embedded::rows(Rowless(&picky), &features, 0).is_err());
    assert!(Embedded::rows(Rowless(&picky), &features, 7).is_err());
}

/// Pair generation reports the simulator's own error for a fatal failure (through
/// `Embedded` too), and `Redraws` after `MAX_REDRAWS` recoverable ones of one row.
#[test]
fn pair_generation_carries_the_simulators_error() {
    use dpinfer_abc::pairs::{MAX_REDRAWS, PublicPairs};
    let prior = dpinfer_simulators::prior::Uniform::new(0.0, 1.0).unwrap();
    // fatal at θ > 0.9: some row of 200 gets there
    let fatal = FnSimulator::new(
        1,
        4,
        |th: &[f64], _r: &mut dyn rand_core::Rng, o: &mut [f64]| {
            if th[0] > 0.9 {
                return Err(SimError::Model {
                    code: 7,
                    recoverable: false,
                });
            }
            o.fill(th[0]);
            Ok(())
        },
    )
    .unwrap();
    let want = AbcError::Model(SimError::Model {
        code: 7,
        recoverable: false,
    });
    assert_eq!(PublicPairs::generate(&prior, &fatal, 200, 1), Err(want));
    let rff = RffSummary::from_seed(4, 1, 8, 1.0).unwrap();
    let features = rff.features().unwrap();
    let embedded = Embedded::new(&fatal, &features, 1).unwrap();
    assert_eq!(PublicPairs::generate(&prior, &embedded, 200, 1), Err(want));
    assert!(
        want.to_string().contains("fatal model failure (code 7)"),
        "{want}"
    );
    let never = FnSimulator::new(
        1,
        4,
        |_th: &[f64], _r: &mut dyn rand_core::Rng, _o: &mut [f64]| {
            Err(SimError::Model {
                code: 1,
                recoverable: true,
            })
        },
    )
    .unwrap();
    assert_eq!(
        PublicPairs::generate(&prior, &never, 3, 1),
        Err(AbcError::Redraws { tries: MAX_REDRAWS })
    );
    assert_eq!(MAX_REDRAWS, 1000);
}

/// The summary's kernel version reaches its feature map: version 1 is the default (the
/// embeddings every earlier seeded run computed), version 2 embeds with its own `sin`/`cos`
/// (the distances crate's `with_kernel_version`, bit for bit), and neither changes the
/// frequencies or the bandwidth.
#[test]
fn kernel_version_reaches_the_feature_map() {
    use dpinfer_distances::KernelVersion;
    let model = GaussianMean::new(300, 1.0, 0.0, 10.0).unwrap();
    let v1 =
        RffSummary::setup(&model.prior(), &model, 5, 1, 40, Bandwidth::MedianHeuristic).unwrap();
    assert_eq!(v1.kernel_version(), KernelVersion::V1);
    let v2 = v1.clone().with_kernel_version(KernelVersion::V2);
    assert_eq!(v2.kernel_version(), KernelVersion::V2);
    assert_eq!(v1.frequencies(), v2.frequencies());
    assert_eq!(v1.bandwidth().to_bits(), v2.bandwidth().to_bits());
    assert_ne!(v1, v2);
    let (f1, f2) = (v1.features().unwrap(), v2.features().unwrap());
    assert_eq!(f1.kernel_version(), KernelVersion::V1);
    assert_eq!(f2.kernel_version(), KernelVersion::V2);
    let by_hand = RandomFourierFeatures::new(v1.frequencies(), 1, v1.bandwidth()).unwrap();
    let embed = |f: &RandomFourierFeatures<'_>, model: &GaussianMean| {
        let e = Embedded::new(model, f, 1).unwrap();
        let mut out = vec![0.0; e.output_dim()];
        e.simulate(&[0.3], &mut SimStream::new(9, 0), &mut out)
            .unwrap();
        out
    };
    let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    let (e1, e2) = (bits(embed(&f1, &model)), bits(embed(&f2, &model)));
    assert_eq!(e1, bits(embed(&by_hand, &model)));
    let hand2 = by_hand.with_kernel_version(KernelVersion::V2);
    assert_eq!(e2, bits(embed(&hand2, &model)));
    assert_ne!(
        e1, e2,
        "300 rows × 20 frequencies: the versions differ in some last bit"
    );
}
