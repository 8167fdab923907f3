#![cfg(feature = "alloc")] // the registry needs alloc
//! The model registry: every built-in model by name, its paper prior against its declared
//! table (equal densities, samples against the table's closed-form marginal CDFs), prior
//! densities that integrate to one, settings validation and the embedded data sets.
//! Seeded; false-alarm rates stated.

use crate::common;
use common::{Z2_1E6, ks_crit_1e6, ks_stat};

use dpinfer_math::norm_cdf;
use dpinfer_simulators::models::cubic::{CubicOutbreak, NETHERLANDS_CASES, SYNTHETIC_THETA};
use dpinfer_simulators::models::registry::{
    Model, ModelError, ModelName, ModelPrior, ModelSim, ModelSpec,
};
use dpinfer_simulators::prior::{DeclaredPrior, Marginal, Uniform};
use dpinfer_simulators::{Prior, SimStream, Simulator, StreamVersion};

fn build(name: ModelName) -> Model {
    build_spec(&ModelSpec::new(name))
}

fn build_spec(spec: &ModelSpec) -> Model {
    Model::builtin(spec).unwrap()
}

#[test]
fn names_round_trip_and_unknown_names_are_refused() {
    for m in ModelName::ALL {
        assert_eq!(m.as_str().parse::<ModelName>().unwrap(), m);
        assert_eq!(build(m).builtin_name(), Some(m));
        assert_eq!(build(m).name(), m.as_str());
    }
    let e = "SIR".parse::<ModelName>().unwrap_err();
    assert_eq!(e, ModelError::UnknownName("SIR".into()));
    assert!(
        e.to_string().contains("gaussian-mean, uniform-mixture"),
        "{e}"
    );
}

/// Every model: θ names match the prior's dimension, prior draws lie in the support with a
/// finite density, the true θ (where known) lies in the support, the embedded data set is
/// the simulator's output length and reproducible from its seed.
#[test]
fn every_model_is_consistent() {
    for name in ModelName::ALL {
        let m = build(name);
        let (p, s) = (ModelPrior(&m), ModelSim(&m));
        assert_eq!(m.names().len(), p.dim(), "{name}");
        assert_eq!(m.dim(), p.dim(), "{name}");
        assert_eq!(s.param_dim(), p.dim(), "{name}");
        let mut rng = SimStream::new(11, 0);
        let mut th = vec![0.0; p.dim()];
        for _ in 0..50 {
            p.sample(&mut rng, &mut th).unwrap();
            assert!(p.in_support(&th) && p.ln_density(&th).is_finite(), "{name}");
        }
        if let Some(t) = m.truth() {
            assert!(p.in_support(&t), "{name}: true θ {t:?}");
        }
        let d = m.default_data(5).unwrap();
        assert_eq!(d.len(), m.output_len(), "{name}");
        assert_eq!(d, m.default_data(5).unwrap(), "{name}");
        assert!(d.iter().all(|x| x.is_finite()), "{name}");
        assert_eq!(d.len() % m.row_dim(), 0, "{name}");
    }
    assert_eq!(
        build(ModelName::CubicOutbreak).default_data(1).unwrap(),
        NETHERLANDS_CASES.to_vec()
    );
    assert_eq!(build(ModelName::CubicOutbreak).truth(), None);
    // The seed changes a simulated data set.
    let g = build(ModelName::GaussianMean);
    assert_ne!(g.default_data(1).unwrap(), g.default_data(2).unwrap());
}

/// A built-in model's paper prior written as a declared prior (`paper_prior`) is the same
/// prior: equal log densities (to 1e-12) at 300 draws and at points off the support, the
/// same support, the same parameter order; the override keeps the simulator and data.
#[test]
fn paper_priors_equal_their_declared_tables() {
    for name in ModelName::ALL {
        let paper = build(name);
        let Some((prior, blocks)) = paper.paper_prior().unwrap() else {
            assert!(matches!(name, ModelName::Banana | ModelName::Tuberculosis));
            continue;
        };
        assert_eq!(blocks.len(), prior.blocks().len());
        let declared = paper.clone().with_prior(prior, &paper.names()).unwrap();
        assert!(matches!(declared, Model::WithPrior(_)), "{name}");
        assert_eq!(declared.name(), format!("{name} (declared prior)"));
        assert_eq!(declared.names(), paper.names(), "{name}");
        let (p, q) = (ModelPrior(&paper), ModelPrior(&declared));
        let mut rng = SimStream::with_domain(5, 0, 0);
        let mut th = vec![0.0; p.dim()];
        for i in 0..300_u32 {
            p.sample(&mut rng, &mut th).unwrap();
            let (a, b) = (p.ln_density(&th), q.ln_density(&th));
            assert!(
                (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                "{name} at {th:?}: {a} vs {b}"
            );
            assert!(q.in_support(&th), "{name}");
            let mut off = th.clone();
            let j = i as usize % off.len();
            off[j] = -0.5 - f64::from(i);
            assert_eq!(p.in_support(&off), q.in_support(&off), "{name} at {off:?}");
            let (a, b) = (p.ln_density(&off), q.ln_density(&off));
            let same = (a.is_infinite() && a.to_bits() == b.to_bits())
                || (a - b).abs() <= 1e-12 * a.abs().max(1.0);
            assert!(same, "{name}: {a} vs {b}");
        }
        assert_eq!(declared.output_len(), paper.output_len());
        assert_eq!(
            declared.default_data(3).unwrap(),
            paper.default_data(3).unwrap()
        );
        assert_eq!(declared.truth(), paper.truth());
        assert!(core::ptr::eq(declared.base(), declared.base().base()));
    }
}

/// Samples of each paper prior against the closed-form marginal CDF of its declared table
/// (normal: Φ((x − m)/s); log-normal: Φ((ln x − μ)/σ); Dirichlet(1) over k: Beta(1, k − 1),
/// F(x) = 1 − (1 − x)^(k−1)), 4000 draws per coordinate, one-sample KS at α = 1e-6 per
/// coordinate (15 coordinates: false-alarm rate ≤ 1.5e-5).
#[test]
fn paper_prior_samples_follow_their_declared_tables() {
    let n = 4000;
    for name in ModelName::ALL {
        let m = build(name);
        let Some((prior, _)) = m.paper_prior().unwrap() else {
            continue;
        };
        let p = ModelPrior(&m);
        let mut rng = SimStream::new(2024, name as u64);
        let mut th = vec![0.0; p.dim()];
        let mut cols = vec![Vec::with_capacity(n); p.dim()];
        for _ in 0..n {
            p.sample(&mut rng, &mut th).unwrap();
            for (c, &x) in cols.iter_mut().zip(&th) {
                c.push(x);
            }
        }
        let mut j = 0;
        for block in prior.blocks() {
            let cdf: Box<dyn Fn(f64) -> f64> = match *block {
                Marginal::Normal(d) => Box::new(move |x| norm_cdf((x - d.mean()) / d.sd())),
                Marginal::LogNormal(d) => {
                    let l = d.log_normal();
                    Box::new(move |x| norm_cdf((x.ln() - l.mean()) / l.sd()))
                }
                Marginal::Dirichlet(d) => {
                    assert_eq!(d.alpha(), 1.0);
                    let k = i32::try_from(d.k()).unwrap();
                    Box::new(move |x| 1.0 - (1.0 - x).powi(k - 1))
                }
                other => panic!("{name}: unexpected block {other:?}"),
            };
            for _ in 0..block.dim() {
                let d = ks_stat(&mut cols[j], &cdf);
                assert!(d < ks_crit_1e6(n), "{name} θ{j}: KS {d}");
                j += 1;
            }
        }
        assert_eq!(j, p.dim());
    }
}

/// The prior densities are normalised: gaussian-mean by the trapezoid rule on ±12 sd
/// (error < 1e-10), sir on a log-space grid (∫∫ p(e^u, e^v) e^{u+v} du dv, ±9 sd, error
/// < 1e-8), uniform-mixture's Dirichlet(1) has the constant density Γ(5) = 24 on the
/// 4-simplex of volume 1/24, and the i.i.d. normal priors (cubic-outbreak, 4-D;
/// linear-regression, 3-D) by importance sampling from N(0, 1.5²)^d: E_q[p/q] = 1 with
/// Var_q(p/q) = (1.5/√(2 − 1/1.5²))^d − 1 ≤ 1.093, so 200 000 draws give a standard error
/// ≤ 0.0024; the tolerance is the two-sided 1e-6 z-threshold times that.
#[test]
fn prior_densities_integrate_to_one() {
    // gaussian-mean: N(0, 10²).
    let g = build(ModelName::GaussianMean);
    let p = ModelPrior(&g);
    let (lo, hi, k) = (-120.0, 120.0, 24_000);
    let h = (hi - lo) / f64::from(k);
    let mut s = 0.0;
    for i in 0..=k {
        let w = if i == 0 || i == k { 0.5 } else { 1.0 };
        s += w * p.ln_density(&[lo + h * f64::from(i)]).exp();
    }
    assert!((s * h - 1.0).abs() < 1e-10, "gaussian-mean: {}", s * h);

    // sir: log-normal β and γ.
    let m = build(ModelName::Sir);
    let Model::Sir(_, prior) = &m else { panic!() };
    let (b, c) = (prior.a.log_normal(), prior.b.log_normal());
    let p = ModelPrior(&m);
    let k = 600;
    let (hu, hv) = (18.0 * b.sd() / f64::from(k), 18.0 * c.sd() / f64::from(k));
    let mut s = 0.0;
    for i in 0..=k {
        let u = b.mean() - 9.0 * b.sd() + hu * f64::from(i);
        let wu = if i == 0 || i == k { 0.5 } else { 1.0 };
        for j in 0..=k {
            let v = c.mean() - 9.0 * c.sd() + hv * f64::from(j);
            let wv = if j == 0 || j == k { 0.5 } else { 1.0 };
            s += wu * wv * (p.ln_density(&[u.exp(), v.exp()]) + u + v).exp();
        }
    }
    assert!((s * hu * hv - 1.0).abs() < 1e-8, "sir: {}", s * hu * hv);

    // uniform-mixture: constant density Γ(5) on the simplex.
    let m = build(ModelName::UniformMixture);
    let p = ModelPrior(&m);
    let mut rng = SimStream::new(3, 0);
    let mut th = [0.0; 5];
    for _ in 0..100 {
        p.sample(&mut rng, &mut th).unwrap();
        assert!((p.ln_density(&th) - 24.0_f64.ln()).abs() < 1e-12);
    }

    // i.i.d. normal priors by importance sampling.
    for name in [ModelName::CubicOutbreak, ModelName::LinearRegression] {
        let m = build(name);
        let p = ModelPrior(&m);
        let d = p.dim();
        let q = DeclaredPrior::new(vec![
            Marginal::Normal(
                dpinfer_simulators::prior::Normal::new(0.0, 1.5).unwrap()
            );
            d
        ])
        .unwrap();
        let draws = 200_000;
        let mut rng = SimStream::new(77, d as u64);
        let mut x = vec![0.0; d];
        let mut s = 0.0;
        for _ in 0..draws {
            q.sample(&mut rng, &mut x).unwrap();
            s += (p.ln_density(&x) - q.ln_density(&x)).exp();
        }
        let est = s / f64::from(draws);
        let ratio_second_moment =
            (1.5 / (2.0 - 1.0 / 2.25_f64).sqrt()).powi(i32::try_from(d).unwrap());
        let se = ((ratio_second_moment - 1.0) / f64::from(draws)).sqrt();
        assert!((est - 1.0).abs() < Z2_1E6 * se, "{name}: {est} (se {se})");
    }
}

#[test]
fn settings_are_validated() {
    let with = |name, f: &dyn Fn(&mut ModelSpec)| {
        let mut s = ModelSpec::new(name);
        f(&mut s);
        Model::<dpinfer_simulators::models::registry::NoUser>::builtin(&s)
    };
    // obs_times is sir's.
    let e = with(ModelName::GaussianMean, &|s| {
        s.obs_times = Some(vec![0.0, 1.0])
    })
    .unwrap_err();
    assert!(matches!(
        e,
        ModelError::NotApplicable {
            setting: "obs_times",
            ..
        }
    ));
    // Settings of another model are refused.
    let refused = |name, f: &dyn Fn(&mut ModelSpec)| {
        let e = with(name, f).unwrap_err();
        assert!(matches!(e, ModelError::NotApplicable { .. }), "{name}: {e}");
    };
    refused(ModelName::Sir, &|s| s.sigma = Some(1.0));
    refused(ModelName::Banana, &|s| s.prior_sd = Some(1.0));
    refused(ModelName::CubicOutbreak, &|s| s.prior_mean = Some(1.0));
    refused(ModelName::GaussianMean, &|s| s.tau = Some(0.5));
    refused(ModelName::LinearRegression, &|s| s.population = Some(100));
    assert!(with(ModelName::Sir, &|s| s.tau = Some(0.25)).is_ok());
    assert!(with(ModelName::GaussianMean, &|s| s.sigma = Some(2.0)).is_ok());
    // sir: n must match obs_times; times must increase.
    let e = with(ModelName::Sir, &|s| {
        s.obs_times = Some(vec![0.0, 10.0]);
        s.n = Some(3);
    });
    assert!(matches!(
        e.unwrap_err(),
        ModelError::Size {
            n: 3,
            expected: Some(2),
            ..
        }
    ));
    assert!(matches!(
        with(ModelName::Sir, &|s| s.obs_times = Some(vec![5.0, 1.0])).unwrap_err(),
        ModelError::Sim(_)
    ));
    let m = with(ModelName::Sir, &|s| {
        s.obs_times = Some(vec![0.0, 10.0, 25.0])
    })
    .unwrap();
    assert_eq!(m.output_len(), 3);
    // The cubic curve takes any n ≥ 2 (points over the paper's 18 days); the TB summaries
    // have a fixed size.
    assert!(with(ModelName::CubicOutbreak, &|s| s.n = Some(18)).is_ok());
    assert_eq!(
        with(ModelName::CubicOutbreak, &|s| s.n = Some(17))
            .unwrap()
            .output_len(),
        17
    );
    for n in [0, 1] {
        assert!(
            matches!(
                with(ModelName::CubicOutbreak, &|s| s.n = Some(n)).unwrap_err(),
                ModelError::Sim(dpinfer_simulators::SimError::InvalidSize { name: "n", .. })
            ),
            "{n}"
        );
    }
    assert!(matches!(
        with(ModelName::Tuberculosis, &|s| s.n = Some(5)).unwrap_err(),
        ModelError::Size { expected: None, .. }
    ));
    // Invalid values reach the model's constructor.
    assert!(with(ModelName::GaussianMean, &|s| s.sigma = Some(-1.0)).is_err());
    assert!(with(ModelName::GaussianMean, &|s| s.prior_sd = Some(f64::NAN)).is_err());
    assert!(with(ModelName::GaussianMean, &|s| s.n = Some(0)).is_err());
    assert!(with(ModelName::Sir, &|s| s.tau = Some(0.0)).is_err());
    assert!(with(ModelName::Sir, &|s| s.population = Some(1)).is_err());
    // The stream version changes the simulations, never their size.
    let v1 = build(ModelName::GaussianMean);
    let v2 = with(ModelName::GaussianMean, &|s| {
        s.stream_version = StreamVersion::V2
    })
    .unwrap();
    assert_eq!(v1.output_len(), v2.output_len());
    assert_ne!(v1.default_data(1).unwrap(), v2.default_data(1).unwrap());
}

#[test]
fn a_declared_prior_must_name_the_models_parameters() {
    let sir = build(ModelName::Sir);
    let u = |lo, hi| Marginal::Uniform(Uniform::new(lo, hi).unwrap());
    let two = DeclaredPrior::new(vec![u(0.1, 1.0), u(0.01, 0.3)]).unwrap();
    let names = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    let e = sir
        .clone()
        .with_prior(two.clone(), &names(&["gamma", "beta"]))
        .unwrap_err();
    assert!(e.to_string().contains("[\"beta\", \"gamma\"]"), "{e}");
    let one = DeclaredPrior::new(vec![u(0.1, 1.0)]).unwrap();
    assert!(sir.clone().with_prior(one, &names(&["beta"])).is_err());
    let m = sir.with_prior(two, &names(&["beta", "gamma"])).unwrap();
    let p = ModelPrior(&m);
    assert!(!p.in_support(&[1.5, 0.1]));
    // U(0.1, 1) × U(0.01, 0.3).
    let want = -(0.9_f64.ln()) - 0.29_f64.ln();
    assert!((p.ln_density(&[0.5, 0.1]) - want).abs() < 1e-12);
    // A second override replaces the first (it never nests).
    let three = DeclaredPrior::new(vec![u(0.2, 1.0), u(0.01, 0.3)]).unwrap();
    let m = m.with_prior(three, &names(&["beta", "gamma"])).unwrap();
    let Model::WithPrior(b) = &m else { panic!() };
    assert!(matches!(b.0, Model::Sir(..)));
    assert!(!ModelPrior(&m).in_support(&[0.15, 0.1]));
}

/// `model.datasets` (ABCDP §6.3's n independent data sets): a replicated model simulates n
/// data sets in a row from one stream, the first of them bit for bit the one-data-set
/// simulation; its embedded data are n data sets at the true θ, the first the model's own
/// embedded data set; prior, names and truth are the inner model's; n = 1 is the model itself
/// and n = 0 is refused.
#[test]
fn a_replicated_model_is_n_independent_data_sets_of_the_model() {
    use dpinfer_simulators::Replicates;
    for name in [
        ModelName::Tuberculosis,
        ModelName::Sir,
        ModelName::GaussianMean,
    ] {
        let one = build(name);
        let d = one.output_len();
        let n = 5;
        let many = build(name).replicated(n).unwrap();
        assert_eq!(many.datasets(), n, "{name}");
        assert_eq!(one.datasets(), 1, "{name}");
        assert_eq!(many.output_len(), n * d, "{name}");
        assert_eq!((many.names(), many.truth()), (one.names(), one.truth()));
        assert_eq!((many.name(), many.builtin_name()), (one.name(), Some(name)));
        assert!(
            !many.iid_rows(),
            "{name}: n data sets are not one sized data set"
        );
        let theta = one.truth().unwrap();
        let mut all = vec![0.0; n * d];
        ModelSim(&many)
            .simulate(&theta, &mut SimStream::new(11, 3), &mut all)
            .unwrap();
        // The same as the library's `Replicates` over the inner model, and data set 0 is the
        // one-data-set simulation from the same stream.
        let mut again = vec![0.0; n * d];
        Replicates::new(ModelSim(&one), n)
            .unwrap()
            .simulate(&theta, &mut SimStream::new(11, 3), &mut again)
            .unwrap();
        assert_eq!(all, again, "{name}");
        let mut first = vec![0.0; d];
        ModelSim(&one)
            .simulate(&theta, &mut SimStream::new(11, 3), &mut first)
            .unwrap();
        assert_eq!(all[..d], first[..], "{name}");
        assert!(
            all.chunks_exact(d).skip(1).all(|s| s != &first[..]),
            "{name}: the data sets are independent draws, not copies"
        );
        // Embedded data: n data sets, the first the model's own.
        let data = many.default_data(7).unwrap();
        assert_eq!(data.len(), n * d);
        assert_eq!(data[..d], one.default_data(7).unwrap()[..], "{name}");
        // The prior is the inner model's.
        let (mut a, mut b) = (vec![0.0; one.dim()], vec![0.0; one.dim()]);
        ModelPrior(&one)
            .sample(&mut SimStream::new(5, 0), &mut a)
            .unwrap();
        ModelPrior(&many)
            .sample(&mut SimStream::new(5, 0), &mut b)
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(
            ModelPrior(&many).ln_density(&a),
            ModelPrior(&one).ln_density(&a)
        );
    }
    // n = 1 is the model itself; nesting multiplies; 0 and overflow are refused.
    assert!(matches!(
        build(ModelName::Sir).replicated(1).unwrap(),
        Model::Sir(..)
    ));
    let m = build(ModelName::Sir)
        .replicated(3)
        .unwrap()
        .replicated(4)
        .unwrap();
    assert_eq!(m.datasets(), 12);
    for n in [0, usize::MAX] {
        assert!(
            matches!(
                build(ModelName::Sir).replicated(n),
                Err(ModelError::Sim(dpinfer_simulators::SimError::InvalidSize {
                    name: "datasets",
                    ..
                }))
            ),
            "{n}"
        );
    }
    // The real data set of cubic-outbreak has no true θ to simulate more at; a synthetic
    // series has one.
    let cubic = build(ModelName::CubicOutbreak).replicated(2).unwrap();
    assert_eq!(cubic.default_data(1), Err(ModelError::NoTruth));
    let mut spec = ModelSpec::new(ModelName::CubicOutbreak);
    spec.n = Some(35);
    let one = build_spec(&spec).default_data(1).unwrap();
    let two = build_spec(&spec)
        .replicated(2)
        .unwrap()
        .default_data(1)
        .unwrap();
    assert_eq!(two, [one.clone(), one].concat());
    // A declared prior goes inside the replicates.
    let sir = build(ModelName::Sir).replicated(2).unwrap();
    let (prior, names) = build(ModelName::Sir).paper_prior().unwrap().unwrap();
    let declared = sir.with_prior(prior, &names).unwrap();
    assert_eq!(declared.datasets(), 2);
    assert_eq!(declared.name(), "sir (declared prior)");
}

#[test]
fn a_cubic_outbreak_of_other_size_is_the_synthetic_curve_at_its_stated_theta() {
    // n = 35 points over the paper's 18 days: t = i/2 (17/34 = 0.5 exactly), so every second
    // point is the paper's 18-point curve at θ* (bit for bit), and the model's truth is θ*;
    // the data do not depend on the seed (the curve has no noise).
    let mut spec = ModelSpec::new(ModelName::CubicOutbreak);
    spec.n = Some(35);
    let m = build_spec(&spec);
    assert_eq!(m.truth(), Some(SYNTHETIC_THETA.to_vec()));
    let d = m.default_data(1).unwrap();
    assert_eq!(d, m.default_data(2).unwrap());
    let mut days = [0.0; 18];
    let mut rng = SimStream::new(0, 0);
    CubicOutbreak::paper()
        .simulate(&SYNTHETIC_THETA, &mut rng, &mut days)
        .unwrap();
    let even: Vec<f64> = d.iter().step_by(2).copied().collect();
    assert_eq!(even, days);
    // the half days by hand: 0.25 t³ + 1.5 t² at t = 0.5 and 16.5 (exact in binary)
    assert_eq!(d[1], 0.25 * 0.125 + 1.5 * 0.25);
    assert_eq!(d[33], 0.25 * 4492.125 + 1.5 * 272.25);
    // 18 points stay the real data and have no truth.
    spec.n = Some(18);
    let paper = build_spec(&spec);
    assert_eq!(paper.truth(), None);
    assert_eq!(paper.default_data(1).unwrap(), NETHERLANDS_CASES.to_vec());
}
