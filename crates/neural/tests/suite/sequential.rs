//! SPPE and SPLE on a Gaussian-mean model whose data mean is released with Gaussian noise
//! (exact posterior in closed form) or Laplace noise (exact posterior by quadrature); their
//! settings and errors. Seeded (`SequentialSettings::seed`); small flows and few rounds keep the
//! suite to seconds in the test profile.

#![allow(clippy::unwrap_used, clippy::cast_precision_loss, clippy::float_cmp)]

use dpinfer_mechanisms::idealized::{IdealizedGaussian, IdealizedLaplace};
use dpinfer_neural::{
    ChainSettings, ConditionalFlow, FlowSettings, MafSettings, McmcReport, NeuralError,
    NeuralPosterior, ProposalReport, RoundObserver, RoundReport, SequentialSettings, TrainSettings,
    sple, sple_observed, sppe, sppe_observed,
};
use dpinfer_simulators::dist::ziggurat_normal;
use dpinfer_simulators::prior::{Normal, Uniform};
use dpinfer_simulators::qmc::Sampling;
use dpinfer_simulators::{FnSimulator, SimError, SimStream, Simulator};

/// Rows per confidential data set: the statistic is their mean, `s ~ N(θ, 1/N_ROWS)`.
const N_ROWS: f64 = 10.0;
/// The observed release `s_dp°`.
const OBSERVED: f64 = 1.2;

/// The confidential-data simulator: the mean of `N_ROWS` draws of `N(θ, 1)` (simulated
/// directly as `θ + z/√N_ROWS`).
fn mean_of_normals() -> impl Simulator {
    FnSimulator::new(1, 1, |theta, rng, out| {
        out[0] = theta[0] + ziggurat_normal(rng) / N_ROWS.sqrt();
        Ok(())
    })
    .unwrap()
}

/// Mean and sd of a 1-D sample.
fn moments(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
    (m, v.sqrt())
}

/// Posterior mean and sd of θ ~ N(0, 1) given `s_dp° ~ N(θ, var)`.
fn conjugate(var: f64) -> (f64, f64) {
    let precision = 1.0 + 1.0 / var;
    (OBSERVED / var / precision, precision.recip().sqrt())
}

/// Exact posterior mean and sd of θ ~ N(0, 1) given `s_dp° = s + Lap(b)`, `s ~ N(θ, 1/N_ROWS)`:
/// the likelihood `∫ N(s; θ, 1/N_ROWS) Lap(s_dp° − s; b) ds` and the posterior moments by the
/// trapezoid rule on fine grids (error far below the tolerances).
fn laplace_posterior(b: f64) -> (f64, f64) {
    let sd_s = N_ROWS.recip().sqrt();
    let grid = |lo: f64, hi: f64, n: usize| -> Vec<f64> {
        (0..=n)
            .map(|i| lo + (hi - lo) * i as f64 / n as f64)
            .collect()
    };
    let s_grid = grid(-8.0, 10.0, 3000);
    let ds = s_grid[1] - s_grid[0];
    let lap: Vec<f64> = s_grid
        .iter()
        .map(|s| (-(OBSERVED - s).abs() / b).exp() / (2.0 * b))
        .collect();
    let (mut z, mut m1, mut m2) = (0.0, 0.0, 0.0);
    for th in grid(-5.0, 6.0, 1100) {
        let lik: f64 = s_grid
            .iter()
            .zip(&lap)
            .map(|(s, l)| (-0.5 * ((s - th) / sd_s).powi(2)).exp() * l)
            .sum::<f64>()
            * ds;
        let w = (-0.5 * th * th).exp() * lik;
        z += w;
        m1 += w * th;
        m2 += w * th * th;
    }
    let mean = m1 / z;
    (mean, (m2 / z - mean * mean).sqrt())
}

/// Small, fast settings: a 3-layer MAF of 20 units, rounds of 400 simulations with `M = 4`
/// noise draws each, at most 60 epochs per round.
pub(crate) fn small(seed: u64) -> SequentialSettings {
    SequentialSettings {
        rounds: 2,
        simulations: 400,
        noise_draws: 4,
        flow: FlowSettings::Maf(MafSettings {
            layers: 3,
            hidden: 20,
            hidden_layers: 2,
        }),
        train: TrainSettings {
            max_epochs: 60,
            patience: 8,
            learning_rate: 5e-3,
            ..TrainSettings::default()
        },
        chains: ChainSettings {
            chains: 4,
            warmup: 200,
            thin: 2,
        },
        posterior_draws: 2000,
        seed,
        ..SequentialSettings::default()
    }
}

/// SPPE after two rounds matches the exact private-data posterior of a Gaussian release
/// (closed form); the naive posterior that ignores the noise is measurably narrower.
///
/// Tolerances: mean within 0.15 and sd within 20 % of the exact posterior (sd 0.51). The Monte
/// Carlo error of 4000 draws is ≈ 0.008 in the mean and 1.1 % in the sd; the rest is the
/// flow's approximation error after 800 simulations, seeded (the seeded run's errors are
/// printed). The naive posterior's sd (0.30, `s_dp°` taken as the confidential mean) lies far
/// outside the sd band, so a sampler that ignored the mechanism would fail.
#[test]
fn sppe_matches_the_exact_posterior_of_a_gaussian_release() {
    let prior = Normal::new(0.0, 1.0).unwrap();
    let sigma = 0.5;
    let mech = IdealizedGaussian::new(sigma).unwrap();
    let settings = small(11);
    let out = sppe(&prior, &mean_of_normals(), &mech, &[OBSERVED], &settings).unwrap();
    assert_eq!(out.rounds.len(), 2);
    assert_eq!(out.rounds[0].proposal, ProposalReport::Prior);
    assert!(matches!(
        out.rounds[1].proposal,
        ProposalReport::Truncated { acceptance } if acceptance == 1.0
    ));
    for r in &out.rounds {
        assert!(r.fit.epochs >= 1 && r.fit.validation_loss.iter().all(|v| v.is_finite()));
    }
    assert_eq!(out.rounds[1].rows, 2 * 400 * 4);
    let mut rng = SimStream::new(5, 0);
    let (draws, acc) = out.posterior.sample(&prior, 4000, 0.01, &mut rng).unwrap();
    assert_eq!(acc, 1.0);
    let (m, s) = moments(&draws);
    let (em, es) = conjugate(1.0 / N_ROWS + sigma * sigma);
    let (_, naive_sd) = conjugate(1.0 / N_ROWS);
    eprintln!(
        "SPPE/Gaussian: mean {m:.4} (exact {em:.4}), sd {s:.4} (exact {es:.4}, naive {naive_sd:.4})"
    );
    assert!((m - em).abs() < 0.15, "mean {m} vs {em}");
    assert!((s / es - 1.0).abs() < 0.2, "sd {s} vs {es}");
    assert!(
        naive_sd < 0.65 * es,
        "the naive posterior must be measurably narrower"
    );
}

/// The two training options of SPPE's later rounds, each alone — sbi's combined loss (the
/// round-1 rows also by maximum likelihood) and a new flow every round (standardisation refitted
/// on all rounds) — also match the exact posterior of the Gaussian release, with the
/// tolerances of the test above (mean within 0.15, sd within 20 % of 0.51). Both are off by
/// default, so every seeded SPPE number stays as it was.
#[test]
fn sppe_options_match_the_exact_posterior_of_a_gaussian_release() {
    let d = SequentialSettings::default();
    assert!(!d.combined_loss && !d.retrain_from_scratch);
    let prior = Normal::new(0.0, 1.0).unwrap();
    let sigma = 0.5;
    let mech = IdealizedGaussian::new(sigma).unwrap();
    let (em, es) = conjugate(1.0 / N_ROWS + sigma * sigma);
    for (name, settings) in [
        (
            "combined loss",
            SequentialSettings {
                combined_loss: true,
                ..small(11)
            },
        ),
        (
            "retrained from scratch",
            SequentialSettings {
                retrain_from_scratch: true,
                ..small(11)
            },
        ),
    ] {
        let out = sppe(&prior, &mean_of_normals(), &mech, &[OBSERVED], &settings).unwrap();
        let mut rng = SimStream::new(5, 0);
        let (draws, _) = out.posterior.sample(&prior, 4000, 0.01, &mut rng).unwrap();
        let (m, s) = moments(&draws);
        eprintln!("SPPE/Gaussian, {name}: mean {m:.4} (exact {em:.4}), sd {s:.4} (exact {es:.4})");
        assert!((m - em).abs() < 0.15, "{name}: mean {m} vs {em}");
        assert!((s / es - 1.0).abs() < 0.2, "{name}: sd {s} vs {es}");
    }
}

/// SPLE after two rounds (MCMC proposals, plain Monte Carlo noise draws) matches the exact
/// private-data posterior of a Laplace release (quadrature); the MCMC diagnostics are reported.
/// Tolerances as for SPPE (exact sd 0.50 here, naive 0.30).
#[test]
fn sple_matches_the_exact_posterior_of_a_laplace_release() {
    let prior = Normal::new(0.0, 1.0).unwrap();
    let b = 0.4;
    let mech = IdealizedLaplace::new(b).unwrap();
    let settings = SequentialSettings {
        sampling: Sampling::MonteCarlo,
        ..small(12)
    };
    let out = sple(&prior, &mean_of_normals(), &mech, &[OBSERVED], &settings).unwrap();
    assert_eq!(out.rounds.len(), 2);
    let ProposalReport::Mcmc(r2) = &out.rounds[1].proposal else {
        panic!("round 2 must be drawn by MCMC")
    };
    let report = &out.posterior_mcmc;
    eprintln!("SPLE round-2 proposal: {r2:?}\nfinal: {report:?}");
    assert!(report.rhat[0] < 1.05 && report.ess_bulk[0] > 200.0);
    assert!(report.acceptance > 0.1 && report.acceptance < 0.9);
    assert_eq!(out.posterior.len(), 2000);
    let (m, s) = moments(&out.posterior);
    let (em, es) = laplace_posterior(b);
    let (_, naive_sd) = conjugate(1.0 / N_ROWS);
    eprintln!(
        "SPLE/Laplace: mean {m:.4} (exact {em:.4}), sd {s:.4} (exact {es:.4}, naive {naive_sd:.4})"
    );
    assert!((m - em).abs() < 0.15, "mean {m} vs {em}");
    assert!((s / es - 1.0).abs() < 0.2, "sd {s} vs {es}");
    assert!(
        naive_sd < 0.65 * es,
        "the naive posterior must be measurably narrower"
    );
}

/// The atomic loss corrects for the proposal: θ drawn from a proposal `N(0.8, 0.5²)` instead
/// of the prior `N(0, 1)`, `x ~ N(θ, 0.5²)`. At `x = 1` the posterior under the prior has sd
/// `1/√5 = 0.447`, the one under the proposal (what maximum likelihood learns) sd
/// `1/√8 = 0.354`. `fit_atomic` recovers the prior's (sd within 12 %, mean within 0.08),
/// `fit` the proposal's, so the test fails for a loss without the `π(θ)` correction.
#[test]
fn the_atomic_loss_corrects_for_the_proposal() {
    use dpinfer_neural::{RoundRows, TrainingSet};
    let mut rng = SimStream::new(21, 0);
    let pairs = 1500;
    let theta: Vec<f64> = (0..pairs)
        .map(|_| 0.8 + 0.5 * ziggurat_normal(&mut rng))
        .collect();
    let x: Vec<f64> = theta
        .iter()
        .map(|t| t + 0.5 * ziggurat_normal(&mut rng))
        .collect();
    let log_prior: Vec<f64> = theta.iter().map(|t| -0.5 * t * t).collect();
    let mut data = TrainingSet::new(1, 1, 0.05).unwrap();
    let rows = RoundRows {
        target: &theta,
        context: &x,
        weight: None,
        rows_per_pair: 1,
    };
    data.push_round(rows, &mut rng).unwrap();
    let flow_settings = FlowSettings::Maf(MafSettings {
        layers: 2,
        hidden: 20,
        hidden_layers: 1,
    });
    let train = TrainSettings {
        max_epochs: 50,
        patience: 8,
        learning_rate: 5e-3,
        ..TrainSettings::default()
    };
    let fitted = |atomic: bool| {
        let mut flow = ConditionalFlow::new(flow_settings, 1, 1, 3).unwrap();
        let mut rng = SimStream::new(22, 0);
        let report = if atomic {
            flow.fit_atomic(&data, &log_prior, 10, &train, &mut rng)
                .unwrap()
        } else {
            flow.fit(&data, &train, &mut rng).unwrap()
        };
        let mut draws = vec![0.0; 4000];
        flow.sample(&[1.0], &mut rng, &mut draws).unwrap();
        (moments(&draws), report.epochs)
    };
    let ((am, asd), ae) = fitted(true);
    let ((mm, msd), me) = fitted(false);
    eprintln!(
        "atomic: mean {am:.4} sd {asd:.4} ({ae} epochs); ML: mean {mm:.4} sd {msd:.4} ({me} epochs)"
    );
    let (pm, psd) = (0.8, 5f64.recip().sqrt());
    assert!((am - pm).abs() < 0.08, "atomic mean {am}");
    assert!((asd / psd - 1.0).abs() < 0.12, "atomic sd {asd} vs {psd}");
    // maximum likelihood learns the proposal posterior (sd 0.354), outside the band above
    assert!(msd < 0.88 * psd, "ML sd {msd}");
}

/// A prior with bounded support truncates SPPE's proposal (the round-2 acceptance is below 1 and
/// every θ is in the support); the same seed gives bit-identical estimates, a saved estimator
/// loads back with bit-identical draws, and another seed gives other numbers.
#[test]
fn bounded_priors_truncate_and_runs_are_reproducible() {
    let prior = Uniform::new(-0.5, 1.0).unwrap();
    let mech = IdealizedGaussian::new(0.5).unwrap();
    let tiny = |seed| SequentialSettings {
        rounds: 2,
        simulations: 120,
        train: TrainSettings {
            max_epochs: 4,
            learning_rate: 5e-3,
            ..TrainSettings::default()
        },
        ..small(seed)
    };
    let draw = |p: &NeuralPosterior| {
        let mut rng = SimStream::new(9, 9);
        p.sample(&prior, 500, 0.01, &mut rng).unwrap()
    };
    let a = sppe(&prior, &mean_of_normals(), &mech, &[OBSERVED], &tiny(4)).unwrap();
    let ProposalReport::Truncated { acceptance } = a.rounds[1].proposal else {
        panic!("round 2 is drawn from the truncated posterior")
    };
    assert!(
        acceptance < 1.0 && acceptance > 0.1,
        "acceptance {acceptance}"
    );
    let (da, acc) = draw(&a.posterior);
    assert!(acc < 1.0 && da.iter().all(|t| (-0.5..=1.0).contains(t)));
    let b = sppe(&prior, &mean_of_normals(), &mech, &[OBSERVED], &tiny(4)).unwrap();
    assert_eq!(a.rounds, b.rounds);
    assert_eq!(da, draw(&b.posterior).0);
    let c = sppe(&prior, &mean_of_normals(), &mech, &[OBSERVED], &tiny(5)).unwrap();
    assert_ne!(da, draw(&c.posterior).0);

    let dir = std::env::temp_dir().join(format!("dpinfer-neural-sppe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("posterior.safetensors");
    a.posterior.save(&path).unwrap();
    let loaded = ConditionalFlow::load(&path).unwrap();
    let back = NeuralPosterior::new(loaded, &[OBSERVED]).unwrap();
    assert_eq!(draw(&back), (da, acc));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// No panic and no NaN on bad input: every setting out of range, dimensions that disagree, a
/// bad observation, a simulator that fails or rejects everything, a mechanism that refuses
/// the statistic.
/// Records what a [`RoundObserver`] is shown: each round's report and posterior draws (SPPE:
/// 300 draws from a stream of the observer's own).
#[derive(Default)]
struct Recorder {
    rounds: Vec<RoundReport>,
    draws: Vec<Vec<f64>>,
}

impl RoundObserver for Recorder {
    fn sppe_round(&mut self, report: &RoundReport, posterior: &NeuralPosterior) {
        let prior = Normal::new(0.0, 1.0).unwrap();
        let mut rng = SimStream::new(77, report.round as u64);
        self.draws
            .push(posterior.sample(&prior, 300, 0.01, &mut rng).unwrap().0);
        self.rounds.push(report.clone());
    }
    fn sple_round(&mut self, report: &RoundReport, posterior: &[f64], _mcmc: &McmcReport) {
        self.draws.push(posterior.to_vec());
        self.rounds.push(report.clone());
    }
}

/// The round observers (the per-round curves of Fig. 1B / Fig. 8) see every round once, in
/// order, with the run's own reports, and change no number: `sppe_observed` / `sple_observed`
/// give the bits of `sppe` / `sple`; SPPE's last observed posterior is the returned one, and
/// SPLE's observed draws are the next round's proposal (`simulations` of them) and, after
/// the last round, the returned posterior.
#[test]
fn observers_see_every_round_and_change_no_number() {
    let prior = Normal::new(0.0, 1.0).unwrap();
    let mech = IdealizedGaussian::new(0.5).unwrap();
    let settings = SequentialSettings {
        rounds: 3,
        simulations: 100,
        train: TrainSettings {
            max_epochs: 3,
            learning_rate: 5e-3,
            ..TrainSettings::default()
        },
        chains: ChainSettings {
            chains: 2,
            warmup: 40,
            thin: 1,
        },
        posterior_draws: 150,
        ..small(8)
    };
    let sim = mean_of_normals();
    let plain = sppe(&prior, &sim, &mech, &[OBSERVED], &settings).unwrap();
    let mut seen = Recorder::default();
    let observed = sppe_observed(&prior, &sim, &mech, &[OBSERVED], &settings, &mut seen).unwrap();
    assert_eq!(plain.rounds, observed.rounds);
    assert_eq!(seen.rounds, plain.rounds);
    let draw = |p: &NeuralPosterior| {
        let mut rng = SimStream::new(77, 3);
        p.sample(&prior, 300, 0.01, &mut rng).unwrap().0
    };
    assert_eq!(draw(&plain.posterior), draw(&observed.posterior));
    assert_eq!(seen.draws.last(), Some(&draw(&plain.posterior)));

    let plain = sple(&prior, &sim, &mech, &[OBSERVED], &settings).unwrap();
    let mut seen = Recorder::default();
    let observed = sple_observed(&prior, &sim, &mech, &[OBSERVED], &settings, &mut seen).unwrap();
    assert_eq!(plain.rounds, observed.rounds);
    assert_eq!(plain.posterior, observed.posterior);
    assert_eq!(seen.rounds, plain.rounds);
    assert_eq!(seen.draws.len(), 3);
    assert_eq!(seen.draws[0].len(), 100);
    assert_eq!(seen.draws[2], plain.posterior);
    // round 2's proposal report is the chains that drew what the observer saw after round 1
    let ProposalReport::Mcmc(report) = &plain.rounds[1].proposal else {
        panic!("SPLE's round 2 is drawn by MCMC")
    };
    assert_eq!(report.chains, 2);
}

#[test]
fn invalid_settings_and_models_are_typed_errors() {
    let prior = Normal::new(0.0, 1.0).unwrap();
    let mech = IdealizedGaussian::new(0.5).unwrap();
    let ok = small(1);
    let run = |s: &SequentialSettings, obs: &[f64]| sppe(&prior, &mean_of_normals(), &mech, obs, s);
    let bad: Vec<(SequentialSettings, &str)> = vec![
        (SequentialSettings { rounds: 0, ..ok }, "rounds"),
        (SequentialSettings { rounds: 5000, ..ok }, "rounds"),
        (
            SequentialSettings {
                noise_draws: 0,
                ..ok
            },
            "noise_draws",
        ),
        (SequentialSettings { atoms: 1, ..ok }, "atoms"),
        (SequentialSettings { atoms: 0, ..ok }, "atoms"),
        (
            SequentialSettings {
                posterior_draws: 0,
                ..ok
            },
            "posterior_draws",
        ),
        (
            SequentialSettings {
                validation_fraction: f64::NAN,
                ..ok
            },
            "validation_fraction",
        ),
        (
            SequentialSettings {
                validation_fraction: 1.0,
                ..ok
            },
            "validation_fraction",
        ),
        (
            SequentialSettings {
                min_acceptance: 0.0,
                ..ok
            },
            "min_acceptance",
        ),
        (
            SequentialSettings {
                min_acceptance: f64::INFINITY,
                ..ok
            },
            "min_acceptance",
        ),
        (
            SequentialSettings {
                train: TrainSettings {
                    learning_rate: f64::NAN,
                    ..ok.train
                },
                ..ok
            },
            "learning_rate",
        ),
        (
            SequentialSettings {
                chains: ChainSettings {
                    chains: 0,
                    ..ok.chains
                },
                ..ok
            },
            "chains",
        ),
        (
            SequentialSettings {
                chains: ChainSettings {
                    warmup: 3,
                    ..ok.chains
                },
                ..ok
            },
            "warmup",
        ),
        (
            SequentialSettings {
                chains: ChainSettings {
                    thin: 0,
                    ..ok.chains
                },
                ..ok
            },
            "thin",
        ),
    ];
    for (s, name) in bad {
        let e = run(&s, &[OBSERVED]).unwrap_err();
        assert!(
            matches!(&e, NeuralError::Dimension { name: n, .. } | NeuralError::Setting { name: n, .. } if n.starts_with(name)),
            "{name}: {e:?}"
        );
        let e = sple(&prior, &mean_of_normals(), &mech, &[OBSERVED], &s).unwrap_err();
        assert!(matches!(
            e,
            NeuralError::Dimension { .. } | NeuralError::Setting { .. }
        ));
    }
    assert!(matches!(
        run(
            &SequentialSettings {
                simulations: 1,
                ..ok
            },
            &[OBSERVED]
        ),
        Err(NeuralError::TooFewPairs { .. })
    ));
    // observation: wrong length, NaN, ∞
    assert!(matches!(
        run(&ok, &[]),
        Err(NeuralError::Length {
            name: "observed",
            ..
        })
    ));
    assert!(matches!(
        run(&ok, &[1.0, 2.0]),
        Err(NeuralError::Length {
            name: "observed",
            ..
        })
    ));
    for v in [f64::NAN, f64::INFINITY] {
        assert!(matches!(run(&ok, &[v]), Err(NeuralError::NonFinite { .. })));
    }
    // a 2-D prior for a 1-D simulator
    let p2 = dpinfer_simulators::prior::IidNormal::new(2, 0.0, 1.0).unwrap();
    assert!(matches!(
        sppe(&p2, &mean_of_normals(), &mech, &[OBSERVED], &ok),
        Err(NeuralError::Length {
            name: "prior dimension",
            ..
        })
    ));
    // a simulator whose every row fails recoverably, and one that fails fatally
    let failing = |fatal: bool| {
        FnSimulator::new(1, 1, move |_, _, _| {
            Err(if fatal {
                SimError::Model {
                    code: 7,
                    recoverable: false,
                }
            } else {
                SimError::Degenerate { what: "test" }
            })
        })
        .unwrap()
    };
    for fatal in [false, true] {
        let e = sppe(&prior, &failing(fatal), &mech, &[OBSERVED], &ok).unwrap_err();
        assert!(
            matches!(e, NeuralError::Simulation { round: 1, .. }),
            "{e:?}"
        );
    }
    // a simulator whose statistic the mechanism refuses (NaN is rejected as a row; a vector
    // mechanism of another length refuses the statistic up front)
    let vec_mech = dpinfer_mechanisms::Laplace::vector(3, 1.0, 1.0, -10.0, 10.0).unwrap();
    assert!(matches!(
        sppe(&prior, &mean_of_normals(), &vec_mech, &[OBSERVED], &ok),
        Err(NeuralError::Mechanism { .. })
    ));
    // posterior sampling arguments
    let tiny = SequentialSettings {
        rounds: 1,
        simulations: 40,
        train: TrainSettings {
            max_epochs: 1,
            ..ok.train
        },
        ..ok
    };
    let out = run(&tiny, &[OBSERVED]).unwrap();
    let mut rng = SimStream::new(1, 1);
    assert!(out.posterior.sample(&prior, 0, 0.01, &mut rng).is_err());
    assert!(out.posterior.sample(&p2, 10, 0.01, &mut rng).is_err());
    assert!(
        out.posterior
            .sample(&prior, 10, f64::NAN, &mut rng)
            .is_err()
    );
    // a prior whose support the estimate misses: a typed truncation error, not a hang
    let far = Uniform::new(50.0, 51.0).unwrap();
    assert!(matches!(
        out.posterior.sample(&far, 10, 0.5, &mut rng),
        Err(NeuralError::Truncation { accepted: 0, .. })
    ));
    // requests too large to hold are refused before anything is allocated (2 rounds × 10⁷
    // simulations × 64 draws × 2 columns; 10⁷ draws × 32 coordinates)
    let huge = SequentialSettings {
        simulations: 10_000_000,
        noise_draws: 64,
        ..ok
    };
    assert!(matches!(
        run(&huge, &[OBSERVED]),
        Err(NeuralError::Dimension {
            value: 2_560_000_000,
            ..
        })
    ));
    let wide = NeuralPosterior::new(
        ConditionalFlow::new(FlowSettings::Maf(MafSettings::default()), 32, 1, 0).unwrap(),
        &[OBSERVED],
    )
    .unwrap();
    let p32 = dpinfer_simulators::prior::IidNormal::new(32, 0.0, 1.0).unwrap();
    assert!(matches!(
        wide.sample(&p32, 10_000_000, 0.01, &mut rng),
        Err(NeuralError::Dimension {
            value: 320_000_000,
            ..
        })
    ));
    assert!(
        NeuralPosterior::new(
            ConditionalFlow::new(FlowSettings::default(), 1, 2, 0).unwrap(),
            &[1.0]
        )
        .is_err()
    );
}
