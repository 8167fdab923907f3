#![cfg(feature = "alloc")] // uses the crate's alloc API
//! Closed forms, invariances, sensitivity bounds checked on (adversarial) neighbouring
//! pairs, RFF convergence to the exact MMD and U-statistic unbiasedness (seeded).
#![allow(clippy::unwrap_used, clippy::float_cmp, clippy::cast_precision_loss)]

use dpinfer_distances::{
    ClippedWeightedL2, Gaussian, Kernel, MmdReference, RandomFourierFeatures, RffReference, Rows,
    TUBERCULOSIS_CLIP, TUBERCULOSIS_WEIGHTS, median_heuristic, median_heuristic_pooled, mmd_biased,
    mmd2_biased, mmd2_linear, mmd2_unbiased, sensitivity,
};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

fn sn(rng: &mut Xoshiro256PlusPlus) -> f64 {
    Distribution::<f64>::sample(&StandardNormal, rng)
}

fn normals(rng: &mut Xoshiro256PlusPlus, n: usize, mean: f64, sd: f64) -> Vec<f64> {
    (0..n).map(|_| mean + sd * sn(rng)).collect::<Vec<f64>>()
}

#[test]
fn point_masses_closed_form() {
    // X = n copies of a, Y = m copies of b: MMD² = 2 − 2 k(a, b) for any n, m.
    let a = [0.5, -1.0, 2.0];
    let b = [1.5, 0.0, 1.0];
    let x: Vec<f64> = a.iter().copied().cycle().take(3 * 4).collect();
    let y: Vec<f64> = b.iter().copied().cycle().take(3 * 7).collect();
    let l = 1.7;
    let g = Gaussian::new(l).unwrap();
    let want = 2.0 - 2.0 * (-3.0f64 / (2.0 * l * l)).exp();
    let (xr, yr) = (Rows::new(&x, 3).unwrap(), Rows::new(&y, 3).unwrap());
    assert!((mmd2_biased(&g, xr, yr).unwrap() - want).abs() < 1e-14);
    let r = MmdReference::new(g, xr).unwrap();
    assert!((r.mmd(yr).unwrap() - want.sqrt()).abs() < 1e-14);
    // U-statistic of point masses: within-set terms are 1 as well.
    assert!((mmd2_unbiased(&g, xr, yr).unwrap() - want).abs() < 1e-14);
}

#[test]
fn identity_symmetry_permutation() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let g = Gaussian::new(0.8).unwrap();
    for d in [1usize, 2, 5] {
        let x = normals(&mut rng, 30 * d, 0.0, 1.0);
        let y = normals(&mut rng, 23 * d, 0.3, 1.1);
        let (xr, yr) = (Rows::new(&x, d).unwrap(), Rows::new(&y, d).unwrap());
        // MMD(D, D) = 0: MMD² is exactly representable 0 up to rounding (≤ 1e-15).
        assert!(mmd2_biased(&g, xr, xr).unwrap() < 1e-15);
        assert!(MmdReference::new(g, xr).unwrap().mmd2(xr).unwrap() < 1e-15);
        let a = mmd2_biased(&g, xr, yr).unwrap();
        let b = mmd2_biased(&g, yr, xr).unwrap();
        assert!((a - b).abs() < 1e-15);
        // Reverse the row order of y.
        let mut yp: Vec<f64> = Vec::new();
        for row in y.chunks_exact(d).rev() {
            yp.extend_from_slice(row);
        }
        let c = mmd2_biased(&g, xr, Rows::new(&yp, d).unwrap()).unwrap();
        assert!((a - c).abs() < 1e-15);
        let u1 = mmd2_unbiased(&g, xr, yr).unwrap();
        let u2 = mmd2_unbiased(&g, yr, xr).unwrap();
        assert!((u1 - u2).abs() < 1e-15);
    }
}

/// Max over `trials` random neighbouring pairs (replace one observed row) and one
/// constructed worst case of |ρ(D) − ρ(D′)|.
#[test]
fn mmd_sensitivity_holds_on_neighbours() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let g = Gaussian::new(1.0).unwrap();
    for &(n, m, d) in &[(10usize, 10usize, 1usize), (20, 35, 2), (15, 5, 3)] {
        let delta = sensitivity::mmd(1.0, n).unwrap().value();
        let delta2 = sensitivity::mmd2(1.0, n).unwrap().value();
        let delta_u = sensitivity::mmd2_unbiased(1.0, n).unwrap().value();
        let mut worst: f64 = 0.0;
        for t in 0..400 {
            let spread = [0.1, 1.0, 10.0][t % 3];
            let x = normals(&mut rng, n * d, 0.0, spread);
            let shift = rng.random::<f64>() * 2.0;
            let y = normals(&mut rng, m * d, shift, spread);
            let mut x2 = x.clone();
            let i = rng.random_range(0..n);
            for v in &mut x2[i * d..(i + 1) * d] {
                *v = sn(&mut rng) * 20.0 * spread;
            }
            let (xr, x2r, yr) = (
                Rows::new(&x, d).unwrap(),
                Rows::new(&x2, d).unwrap(),
                Rows::new(&y, d).unwrap(),
            );
            let (r1, r2) = (
                MmdReference::new(g, xr).unwrap(),
                MmdReference::new(g, x2r).unwrap(),
            );
            let diff = (r1.mmd(yr).unwrap() - r2.mmd(yr).unwrap()).abs();
            worst = worst.max(diff);
            assert!(diff <= delta, "MMD diff {diff} > {delta}");
            assert!(diff <= r1.sensitivity_for(m).value());
            let d2 = (r1.mmd2(yr).unwrap() - r2.mmd2(yr).unwrap()).abs();
            assert!(d2 <= delta2, "MMD² diff {d2} > {delta2}");
            let du =
                (mmd2_unbiased(&g, xr, yr).unwrap() - mmd2_unbiased(&g, x2r, yr).unwrap()).abs();
            assert!(du <= delta_u, "MMD²_u diff {du} > {delta_u}");
        }
        // Constructed near-worst case: everything at 0, one observed row moved far away.
        // |ρ(D) − ρ(D′)| = ‖φ(far) − φ(0)‖/N = √2/N for the Gaussian kernel (k ≥ 0), i.e.
        // 0.707 Δ: the bound is attained up to the factor √2 that Lemma 1 gives away.
        let x = vec![0.0; n * d];
        let mut x2 = x.clone();
        x2[0] = 1e6;
        let y = vec![0.0; m * d];
        let (xr, x2r, yr) = (
            Rows::new(&x, d).unwrap(),
            Rows::new(&x2, d).unwrap(),
            Rows::new(&y, d).unwrap(),
        );
        let diff = (mmd_biased(&g, xr, yr).unwrap() - mmd_biased(&g, x2r, yr).unwrap()).abs();
        assert!(diff <= delta && diff >= 0.7 * delta, "{diff} vs {delta}");
        assert!(worst <= delta);
    }
}

#[test]
fn linear_and_rff_sensitivity_hold() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let g = Gaussian::new(0.5).unwrap();
    let z = normals(&mut rng, 50, 0.0, 1.0);
    let f = RandomFourierFeatures::new(&z, 1, 0.5).unwrap();
    for n in [2usize, 7, 30] {
        let dl = sensitivity::mmd2_linear(1.0, n).unwrap().value();
        let dr = sensitivity::rff_mmd(n).unwrap().value();
        let mut worst_r: f64 = 0.0;
        for _ in 0..300 {
            let x = normals(&mut rng, n, 0.0, 1.0);
            let y = normals(&mut rng, n, 0.5, 1.0);
            let mut x2 = x.clone();
            x2[rng.random_range(0..n)] = sn(&mut rng) * 30.0;
            let (xr, x2r, yr) = (
                Rows::one_dim(&x).unwrap(),
                Rows::one_dim(&x2).unwrap(),
                Rows::one_dim(&y).unwrap(),
            );
            let dlin = (mmd2_linear(&g, xr, yr).unwrap() - mmd2_linear(&g, x2r, yr).unwrap()).abs();
            assert!(dlin <= dl, "{dlin} > {dl}");
            let r1 = RffReference::new(f, xr).unwrap();
            let r2 = RffReference::new(f, x2r).unwrap();
            let drff = (r1.mmd(yr).unwrap() - r2.mmd(yr).unwrap()).abs();
            worst_r = worst_r.max(drff);
            assert!(drff <= dr, "{drff} > {dr}");
            assert!(drff <= r1.sensitivity().value());
        }
        assert!(worst_r > 0.0);
    }
}

#[test]
fn rff_converges_to_exact_mmd() {
    // For fixed data, MMD²_rff = (2/D) Σ_j g(ω_j) with g ∈ [0, 4] i.i.d. and E g = MMD²_b
    // (exact, V-statistic). Hoeffding: P(|MMD²_rff − MMD²_b| ≥ t) ≤ 2 exp(−2 (D/2) t² / 16);
    // t = √(8 ln(2/α) / (D/2)) with α = 1e-6 per check (3 checks: false-failure ≤ 3e-6).
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
    let x = normals(&mut rng, 60, 0.0, 1.0);
    let y = normals(&mut rng, 50, 0.7, 1.3);
    let (xr, yr) = (Rows::one_dim(&x).unwrap(), Rows::one_dim(&y).unwrap());
    let l = 0.9;
    let exact = mmd2_biased(&Gaussian::new(l).unwrap(), xr, yr).unwrap();
    let mut errs = Vec::new();
    for half in [50usize, 800, 12_800] {
        let z = normals(&mut rng, half, 0.0, 1.0);
        let f = RandomFourierFeatures::new(&z, 1, l).unwrap();
        let approx = f.mmd2(xr, yr).unwrap();
        let t = (8.0 * (2.0f64 / 1e-6).ln() / half as f64).sqrt();
        let err = (approx - exact).abs();
        assert!(err < t, "D/2 = {half}: |{approx} − {exact}| ≥ {t}");
        errs.push(err);
    }
    // At D/2 = 12 800 the Hoeffding radius is 0.076; the realised error is far smaller
    // (standard deviation ≈ 2·sd(g)/√(D/2) ≈ 0.01 here).
    assert!(errs[2] < 0.02, "{errs:?}");
}

#[test]
fn unbiased_statistic_is_unbiased() {
    // P = N(0,1), Q = N(μ,1), Gaussian kernel l: E k(x,y) = l/√(l²+2) exp(−(a−b)²/(2(l²+2))),
    // so MMD²(P,Q) = 2 l/√(l²+2) (1 − exp(−μ²/(2(l²+2)))). Mean of R replicates vs truth:
    // |mean − truth| < 5.3 se (two-sided normal p ≈ 1.2e-7).
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let (l, mu): (f64, f64) = (1.0, 0.8);
    let s = l * l + 2.0;
    let truth = 2.0 * l / s.sqrt() * (1.0 - (-mu * mu / (2.0 * s)).exp());
    let g = Gaussian::new(l).unwrap();
    let reps = 3000;
    let (mut sum, mut sum2, mut sum_b) = (0.0, 0.0, 0.0);
    for _ in 0..reps {
        let x = normals(&mut rng, 12, 0.0, 1.0);
        let y = normals(&mut rng, 9, mu, 1.0);
        let (xr, yr) = (Rows::one_dim(&x).unwrap(), Rows::one_dim(&y).unwrap());
        let u = mmd2_unbiased(&g, xr, yr).unwrap();
        sum += u;
        sum2 += u * u;
        sum_b += mmd2_biased(&g, xr, yr).unwrap();
    }
    let r = f64::from(reps);
    let mean = sum / r;
    let se = ((sum2 / r - mean * mean) / (r - 1.0)).sqrt();
    assert!(
        (mean - truth).abs() < 5.3 * se,
        "mean {mean} truth {truth} se {se}"
    );
    // The biased estimator is visibly biased upward at these sizes (sanity: the test can fail).
    assert!(sum_b / r - truth > 10.0 * se);
}

#[test]
fn median_selection_matches_sort_and_pooled_variant() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
    for (n, d) in [(37usize, 1usize), (50, 3), (8, 2)] {
        let y = normals(&mut rng, n * d, 0.0, 2.0);
        let yr = Rows::new(&y, d).unwrap();
        let mut all = Vec::new();
        for i in 0..n {
            for j in (i + 1)..n {
                let s: f64 = (0..d).map(|k| (y[i * d + k] - y[j * d + k]).powi(2)).sum();
                all.push(s.sqrt());
            }
        }
        all.sort_by(f64::total_cmp);
        let p = all.len();
        let want = if p % 2 == 1 {
            all[p / 2]
        } else {
            (all[p / 2 - 1] + all[p / 2]) / 2.0
        };
        let mut buf = vec![0.0; p];
        let got = median_heuristic(yr, n, &mut buf).unwrap();
        assert!((got - want).abs() <= 1e-15 * want);
        // Pooled variant with x = y and all indices of x only equals the plain heuristic.
        let idx: Vec<usize> = (0..n).collect();
        let got2 = median_heuristic_pooled(yr, yr, &idx, &[], &mut buf).unwrap();
        assert!((got2 - want).abs() <= 1e-15 * want);
    }
    // Subsampling: 10 evenly spaced rows of 0..100 are 0, 10, …, 90; distances 10·k.
    let y: Vec<f64> = (0..100).map(f64::from).collect();
    let mut buf = vec![0.0; 45];
    let m = median_heuristic(Rows::one_dim(&y).unwrap(), 10, &mut buf).unwrap();
    // Multiset {10 k with multiplicity 10 − k}: 45 values, the 23rd smallest is 30.
    assert_eq!(m, 30.0);
}

#[test]
fn clipped_weighted_l2_sensitivity_and_nan_mapping() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let c = ClippedWeightedL2::new(&TUBERCULOSIS_WEIGHTS, TUBERCULOSIS_CLIP).unwrap();
    let n = 25;
    let dm = c.mean_sensitivity(n).unwrap().value();
    assert_eq!(dm, (200.0f64 / 25.0).next_up());
    let ds = c.sum_sensitivity().value();
    let mut worst_mean: f64 = 0.0;
    let mut worst_sum: f64 = 0.0;
    for t in 0..500 {
        let scale = [0.1, 1.0, 5.0, 50.0][t % 4];
        let obs = normals(&mut rng, n * 8, 0.0, scale);
        let sim = normals(&mut rng, 8, 0.0, scale);
        let mut obs2 = obs.clone();
        let i = rng.random_range(0..n);
        for (k, v) in obs2[i * 8..(i + 1) * 8].iter_mut().enumerate() {
            *v = match t % 5 {
                0 => f64::NAN,
                1 if k == 3 => f64::INFINITY,
                _ => sn(&mut rng) * scale * 10.0,
            };
        }
        let (o1, o2, s) = (
            Rows::new(&obs, 8).unwrap(),
            Rows::new(&obs2, 8).unwrap(),
            Rows::new(&sim, 8).unwrap(),
        );
        let (m1, m2) = (
            c.mean_distance(o1, s).unwrap(),
            c.mean_distance(o2, s).unwrap(),
        );
        assert!(m1.is_finite() && m2.is_finite() && (0.0..=200.0).contains(&m2));
        worst_mean = worst_mean.max((m1 - m2).abs());
        let (s1, s2) = (
            c.sum_distance(o1, s).unwrap(),
            c.sum_distance(o2, s).unwrap(),
        );
        worst_sum = worst_sum.max((s1 - s2).abs());
        // Add/remove: drop the last observed data set.
        let o3 = Rows::new(&obs[..(n - 1) * 8], 8).unwrap();
        assert!((c.mean_distance(o3, s).unwrap() - m1).abs() <= dm);
        assert!((c.sum_distance(o3, s).unwrap() - s1).abs() <= ds);
    }
    assert!(worst_mean <= dm && worst_sum <= ds);
    // The bound is attained: a data set at distance 0 replaced by a NaN one.
    let obs = vec![0.0; n * 8];
    let mut obs2 = obs.clone();
    obs2[0] = f64::NAN;
    let s = Rows::new(&obs[..8], 8).unwrap();
    let m1 = c.mean_distance(Rows::new(&obs, 8).unwrap(), s).unwrap();
    let m2 = c.mean_distance(Rows::new(&obs2, 8).unwrap(), s).unwrap();
    assert_eq!((m1, m2), (0.0, 8.0));
    assert!(worst_mean > 0.5 * dm);
}

#[test]
fn kernel_values_and_bounds() {
    let g = Gaussian::new(1.0).unwrap();
    assert_eq!(g.eval(&[f64::NAN], &[0.0]), 1.0); // NaN ↦ 0
    assert_eq!(g.eval(&[f64::INFINITY], &[0.0]), 0.0);
    assert_eq!(g.eval(&[f64::INFINITY], &[f64::INFINITY]), 1.0); // both ↦ MAX
    for x in [-3.0f64, -0.5, 0.0, 1e-8, 2.5, 30.0] {
        let want = (-x * x / 2.0).exp();
        assert!((g.eval(&[x], &[0.0]) - want).abs() <= 2e-15 * want.max(1e-300));
    }
}

#[test]
fn blocked_row_sums_match_naive_for_every_dim() {
    // The kernels' blocked/unrolled row sums (d = 1, 2..=8 specialised, > 8 generic) against a
    // plain loop over `eval`, with block remainders, non-finite values included.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    let g = Gaussian::new(1.3).unwrap();
    for d in 1..=11usize {
        let mut ys = normals(&mut rng, 77 * d, 0.0, 1.0);
        ys[5] = f64::NAN;
        ys[17] = f64::INFINITY;
        let x = normals(&mut rng, d, 0.2, 1.0);
        let naive: f64 = ys.chunks_exact(d).map(|y| g.eval(&x, y)).sum();
        let got = g.row_sum(&x, &ys);
        assert!((got - naive).abs() < 1e-13, "d = {d}: {got} vs {naive}");
        let want_l = dpinfer_distances::Laplace::new(0.9).unwrap();
        let nl: f64 = ys.chunks_exact(d).map(|y| want_l.eval(&x, y)).sum();
        assert!((want_l.row_sum(&x, &ys) - nl).abs() < 1e-13);
    }
}

/// Each bound records the relations its proof covers, in the workspace's one `Neighbouring`
/// type, and `value_for` refuses the others.
#[test]
fn sensitivities_record_their_relations() {
    use dpinfer_distances::{DistanceError, Neighbouring, Relations, sensitivity};
    let (ro, ar) = (Neighbouring::ReplaceOne, Neighbouring::AddRemove);
    let mmd = sensitivity::mmd(1.0, 100).unwrap();
    assert_eq!(mmd.relations(), Relations::REPLACE_ONE);
    assert_eq!(mmd.value_for(ro).unwrap(), mmd.value());
    assert_eq!(
        mmd.value_for(ar),
        Err(DistanceError::IncompatibleRelation { relation: ar })
    );
    for s in [
        sensitivity::mmd2(1.0, 10).unwrap(),
        sensitivity::mmd2_unbiased(1.0, 10).unwrap(),
        sensitivity::mmd_unbiased(1.0, 10).unwrap(),
        sensitivity::mmd2_linear(1.0, 10).unwrap(),
        sensitivity::rff_mmd(10).unwrap(),
    ] {
        assert!(s.holds_for(ro) && !s.holds_for(ar) && !s.relations().any_pair());
    }
    for s in [
        sensitivity::clipped_mean(5.0, 10).unwrap(),
        sensitivity::clipped_sum(5.0).unwrap(),
    ] {
        assert!(s.holds_for(ro) && s.holds_for(ar) && !s.relations().any_pair());
        assert_eq!(s.relations().to_string(), "replace-one and add/remove");
    }
    let c = sensitivity::clipped(5.0).unwrap();
    assert!(c.holds_for(ro) && c.holds_for(ar) && c.relations().any_pair());
    assert_eq!(c.value_for(ar), Ok(5.0));
    assert_eq!(c.relations().to_string(), "any pair");
    assert_eq!(
        DistanceError::IncompatibleRelation { relation: ar }.to_string(),
        "the sensitivity bound is not proved for the add/remove neighbouring relation"
    );
}
