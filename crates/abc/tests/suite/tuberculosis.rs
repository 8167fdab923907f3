//! TB pipeline of ABCDP §6.3: the mean clipped distance over `n` observed datasets has
//! replace-one sensitivity `C/n` (checked adversarially, and shown tight), SVT-ABC charges at
//! most ε_total with that bound, and at a huge budget the private pass reproduces rejection
//! ABC on real TB simulations.
#![cfg(feature = "alloc")]

use chacha20::ChaCha20Rng;
use dpinfer_abc::analysis::Resample;
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer_distances::{Relations, Sensitivity};
use dpinfer_simulators::models::tb::{
    N_SUMMARIES, TRUE_THETA, TbPrior, Tuberculosis, mean_clipped_distance,
    mean_clipped_distance_sensitivity,
};
use dpinfer_simulators::{Prior, SimStream, Simulator};
use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use rand_core::SeedableRng;

const CLIP: f64 = 200.0;
const D: usize = N_SUMMARIES;

/// A summary row: a real TB simulation (at θ* or a prior draw), or an adversarial row (zero
/// fractions, extreme or non-finite entries, all-zero).
fn row(kind: u32, rng: &mut Xoshiro256PlusPlus, sims: &[[f64; D]]) -> [f64; D] {
    match kind % 6 {
        0 | 1 => sims[rng.random_range(0..sims.len())],
        2 => {
            let mut r = sims[rng.random_range(0..sims.len())];
            r[4] = 0.0; // observed size-1 fraction zero: distance undefined
            r
        }
        3 => [0.0; D],
        4 => {
            let mut r = [0.0; D];
            for x in &mut r {
                *x = rng.random::<f64>() * 10f64.powi(rng.random_range(-3..12));
            }
            r
        }
        _ => {
            let mut r = sims[rng.random_range(0..sims.len())];
            let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 5e-324];
            r[rng.random_range(0..D)] = specials[rng.random_range(0..specials.len())];
            r
        }
    }
}

fn tb_rows(count: usize, seed: u64) -> Vec<[f64; D]> {
    let sim = Tuberculosis::reference();
    let prior = TbPrior::reference();
    let mut th = [0.0; 4];
    (0..count)
        .map(|i| {
            let mut r = SimStream::new(seed, i as u64);
            let mut out = [0.0; D];
            if i % 2 == 0 {
                sim.simulate(&TRUE_THETA, &mut r, &mut out).unwrap();
            } else {
                prior.sample(&mut r, &mut th).unwrap();
                while sim.simulate(&th, &mut r, &mut out).is_err() {}
            }
            out
        })
        .collect()
}

#[test]
fn replace_one_sensitivity_is_c_over_n_and_tight() {
    // 3000 random cases: random n, random pseudo-collection, random observed collection (real
    // TB rows mixed with adversarial ones), one observed row replaced by another arbitrary row.
    // The mean clipped distance must move by at most C/n (up to floating rounding, 1e-12
    // relative) — deterministic property, no false-failure probability.
    let sims = tb_rows(40, 7);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
    let mut worst = 0.0f64;
    for case in 0..3000 {
        let n = [1, 2, 3, 5, 10, 100][case % 6];
        let delta = mean_clipped_distance_sensitivity(n, CLIP).unwrap();
        assert_eq!(delta, CLIP / n as f64);
        let mut sim = Vec::with_capacity(n * D);
        let mut obs = Vec::with_capacity(n * D);
        for _ in 0..n {
            sim.extend(row(rng.random(), &mut rng, &sims));
            obs.extend(row(rng.random(), &mut rng, &sims));
        }
        let rho = mean_clipped_distance(&sim, &obs, CLIP).unwrap();
        assert!((0.0..=CLIP).contains(&rho));
        let j = rng.random_range(0..n);
        obs[j * D..(j + 1) * D].copy_from_slice(&row(rng.random(), &mut rng, &sims));
        let rho2 = mean_clipped_distance(&sim, &obs, CLIP).unwrap();
        let change = (rho - rho2).abs();
        assert!(
            change <= delta * (1.0 + 1e-12),
            "case {case}: n = {n}, change {change} > Δ = {delta}"
        );
        worst = worst.max(change / delta);
    }
    // The bound is attained: one observed dataset equal to its pseudo-dataset (term 0) is
    // replaced by a far one (term C), so no smaller Δ is valid.
    let n = 100;
    let mut sim = Vec::new();
    for i in 0..n {
        sim.extend(sims[i % sims.len()]);
    }
    let mut obs = sim.clone();
    let before = mean_clipped_distance(&sim, &obs, CLIP).unwrap();
    let mut far = sims[0];
    far[0] += 1e4;
    obs[..D].copy_from_slice(&far);
    let after = mean_clipped_distance(&sim, &obs, CLIP).unwrap();
    let delta = mean_clipped_distance_sensitivity(n, CLIP).unwrap();
    assert!(((after - before) - delta).abs() <= 1e-12 * CLIP);
    assert!(
        worst > 0.5,
        "random cases never came near the bound: {worst}"
    );
}

/// `t` public pairs (θ, `n` TB pseudo-datasets) and `n` observed datasets at θ*.
fn tb_problem(t: usize, n: usize, seed: u64) -> (PublicPairs, Vec<f64>) {
    let sim = Tuberculosis::reference();
    let prior = TbPrior::reference();
    let mut thetas = vec![0.0; t * 4];
    let mut outs = vec![0.0; t * n * D];
    for i in 0..t {
        let mut r = SimStream::with_domain(seed, 3, i as u64);
        let th = &mut thetas[i * 4..(i + 1) * 4];
        prior.sample(&mut r, th).unwrap();
        for o in outs[i * n * D..(i + 1) * n * D].chunks_exact_mut(D) {
            while sim.simulate(th, &mut r, o).is_err() {}
        }
    }
    let mut obs = vec![0.0; n * D];
    let mut r = SimStream::with_domain(seed, 2, 0);
    for o in obs.chunks_exact_mut(D) {
        sim.simulate(&TRUE_THETA, &mut r, o).unwrap();
    }
    (
        PublicPairs::from_parts(4, n * D, thetas, outs).unwrap(),
        obs,
    )
}

#[test]
fn huge_budget_reproduces_rejection_abc_on_tb() {
    // 80 pairs × n = 4 datasets of the real TB model. With ε_total = 1e6 and Δ = C/4 = 50 the
    // noise scale is b ≤ 2cΔ/ε = 1e-3. ε_abc is put in the middle of the widest gap between
    // consecutive sorted ρ_t near the median, and we check every ρ_t is at least 500 b away
    // from it, so each decision flips with probability G_b(500 b) < e^{-250}
    // (Proposition 1): the private accepted set must equal rejection ABC's first c, for both
    // RESAMPLE options.
    let n = 4;
    let (pairs, obs) = tb_problem(80, n, 5);
    let rho = |y: &[f64]| mean_clipped_distance(y, &obs, CLIP).unwrap();
    let rhos: Vec<f64> = (0..pairs.len()).map(|t| rho(pairs.output(t))).collect();
    // the median of ρ as threshold: about half the pairs accepted by rejection ABC
    let mut sorted = rhos.clone();
    sorted.sort_by(f64::total_cmp);
    let k = (30..50)
        .max_by(|&a, &b| (sorted[a + 1] - sorted[a]).total_cmp(&(sorted[b + 1] - sorted[b])))
        .unwrap();
    let eps_abc = 0.5 * (sorted[k] + sorted[k + 1]);
    let margin = rhos
        .iter()
        .map(|r| (r - eps_abc).abs())
        .fold(f64::INFINITY, f64::min);
    assert!(margin > 0.5, "margin {margin}");
    assert!(k + 1 >= 10, "fewer than c pairs accepted by rejection ABC");
    let c = 10;
    let exact: Vec<usize> = (0..pairs.len())
        .filter(|&t| rhos[t] <= eps_abc)
        .take(c)
        .collect();
    assert_eq!(exact.len(), c);
    for resample in [Resample::Never, Resample::AfterAccept] {
        let s = SvtAbcSettings {
            epsilon_abc: eps_abc,
            epsilon_total: 1e6,
            c: c as u64,
            sensitivity: Sensitivity::declared(
                mean_clipped_distance_sensitivity(n, CLIP).unwrap(),
                Relations::REPLACE_ONE,
            )
            .unwrap(),
            clip: CLIP,
            resample,
        };
        let mut pass = SvtAbc::new(&pairs, rho, s).unwrap();
        assert!(pass.noise_scale() <= 1e-3 * (1.0 + 1e-6));
        pass.run(&mut ChaCha20Rng::seed_from_u64(3)).unwrap();
        assert_eq!(pass.accepted_indices(), exact.as_slice(), "{resample:?}");
    }
}

#[test]
fn paper_budget_is_charged_with_c_over_n() {
    // ε_total = 1, c = 10, Δ = C/n: the pass never charges more than ε_total, and its noise
    // scale is Theorem 1's b = (c+1)Δ/ε (no RESAMPLE) or 2cΔ/ε (RESAMPLE), up to the
    // mechanism's grid rounding (which only increases b, 1e-6 relative). Exactly ε_total = 1,
    // including n = 1000 with RESAMPLE (which needed the mechanisms crate's fix of
    // `SparseVector::from_epsilon`).
    let pairs = PublicPairs::from_parts(4, 1, vec![1.0; 4], vec![0.0]).unwrap();
    for n in [100usize, 1000] {
        let delta = mean_clipped_distance_sensitivity(n, CLIP).unwrap();
        for (resample, factor) in [(Resample::Never, 11.0), (Resample::AfterAccept, 20.0)] {
            let s = SvtAbcSettings {
                epsilon_abc: 150.0,
                epsilon_total: 1.0,
                c: 10,
                sensitivity: Sensitivity::declared(delta, Relations::REPLACE_ONE).unwrap(),
                clip: CLIP,
                resample,
            };
            let pass = SvtAbc::new(&pairs, |y: &[f64]| y[0], s).unwrap();
            assert!(pass.epsilon() <= 1.0);
            let b = pass.noise_scale();
            assert!(
                b >= factor * delta && b <= factor * delta * (1.0 + 1e-6),
                "{b}"
            );
        }
    }
}
