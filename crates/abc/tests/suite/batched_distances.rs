//! The batched distances of the crate's discrepancies (`Discrepancy::distances`: rayon rows,
//! `mmd_many`) equal the one-row `distance` bit for bit on pools of 1, 2 and 7 threads, and
//! the private passes that read them a block ahead release exactly what the per-pair closure
//! gives.
#![cfg(feature = "std")]

use chacha20::ChaCha20Rng;
use dpinfer_abc::analysis::Resample;
use dpinfer_abc::discrepancy::{ClippedL2, Discrepancy, Euclidean, ExactMmd, RffMmd};
use dpinfer_abc::gaussian::{GaussianRejectionAbcdp, GaussianRejectionSettings};
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::rejection::nearest;
use dpinfer_abc::soft::{SoftAbcdp, SoftAbcdpSettings};
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings, SvtStep};
use dpinfer_distances::{
    ClippedWeightedL2, Gaussian, MmdReference, RandomFourierFeatures, RffReference, Rows,
};
use dpinfer_distances::{Relations, Sensitivity};
use rand_core::SeedableRng;

/// Deterministic values in about (−2, 3): a sine sweep per pair, shifted by the pair's θ.
fn table(t: usize, width: usize) -> (Vec<f64>, Vec<f64>) {
    let thetas: Vec<f64> = (0..t).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut outputs = Vec::with_capacity(t * width);
    for (i, th) in thetas.iter().enumerate() {
        for j in 0..width {
            outputs.push(th + ((i * 31 + j * 7) as f64 * 0.013).sin() + 0.3 * (j as f64).cos());
        }
    }
    (thetas, outputs)
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// `distances` of `d` on pools of 1, 2 and 7 threads equals the `distance` loop bit for bit,
/// including rows that read as `+∞` and the `+∞` fill past the whole rows.
fn check_batched<D: Discrepancy + Sync>(name: &str, d: &D, outputs: &[f64], width: usize) {
    let rows = outputs.len() / width;
    let want: Vec<f64> = outputs.chunks_exact(width).map(|y| d.distance(y)).collect();
    assert!(want.iter().any(|x| x.is_finite()), "{name}: a real test");
    for threads in [1usize, 2, 7] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut got = vec![0.0; rows + 3];
        pool.install(|| d.distances(outputs, width, &mut got));
        assert_eq!(bits(&got[..rows]), bits(&want), "{name}, {threads} threads");
        assert!(
            got[rows..].iter().all(|x| *x == f64::INFINITY),
            "{name}: fill"
        );
    }
    let mut none = [0.0; 2];
    d.distances(outputs, 0, &mut none);
    assert_eq!(none, [f64::INFINITY; 2], "{name}: width 0");
}

#[test]
fn batched_equals_one_row_for_every_discrepancy() {
    let (_, out40) = table(700, 40);
    let obs40: Vec<f64> = (0..40)
        .map(|j: i32| 0.2 + (f64::from(j) * 0.3).sin())
        .collect();
    check_batched("euclidean", &Euclidean::new(&obs40).unwrap(), &out40, 40);
    let w: Vec<f64> = (0..40).map(|j| f64::from(j % 5)).collect();
    let l2 = ClippedWeightedL2::new(&w, 6.0).unwrap();
    check_batched(
        "clipped l2",
        &ClippedL2::new(l2, &obs40).unwrap(),
        &out40,
        40,
    );
    // Set distances: each output is a set of 20 rows of 2 coordinates (and 40 1-D rows).
    let (_, sets) = table(90, 40);
    let obs: Vec<f64> = (0..60).map(|j: i32| (f64::from(j) * 0.71).cos()).collect();
    for dim in [1usize, 2] {
        let z: Vec<f64> = (0..25 * dim)
            .map(|j| (j as f64 * 1.3).sin() * 1.5)
            .collect();
        let f = RandomFourierFeatures::new(&z, dim, 0.8).unwrap();
        let rff =
            RffMmd::new(RffReference::new(f, Rows::new(&obs, dim).unwrap()).unwrap()).unwrap();
        check_batched(&format!("rff d={dim}"), &rff, &sets, 40);
        let exact = ExactMmd::new(
            MmdReference::new(Gaussian::new(0.9).unwrap(), Rows::new(&obs, dim).unwrap()).unwrap(),
        )
        .unwrap();
        check_batched(&format!("exact d={dim}"), &exact, &sets, 40);
    }
    // Outputs that are not whole rows of the reference read as +∞ (batched and one-row).
    let z = [0.3, -0.4, 0.9, 1.1];
    let f = RandomFourierFeatures::new(&z, 2, 1.0).unwrap();
    let rff = RffMmd::new(RffReference::new(f, Rows::new(&obs, 2).unwrap()).unwrap()).unwrap();
    let odd = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
    let mut d = [0.0; 2];
    rff.distances(&odd, 3, &mut d);
    assert_eq!(d, [f64::INFINITY; 2]);
    assert_eq!(rff.distance(&odd[..3]), f64::INFINITY);
    assert!(ClippedL2::new(l2, &obs40[..39]).is_err());
    assert!(ClippedL2::new(l2, &[f64::NAN; 40]).is_err());
}

/// The one-pass private samplers read the distances a block ahead through the batched call;
/// with the same noise they release exactly what the per-pair closure (the default,
/// one-row `distances`) releases — stepping one pair at a time or running to the end.
#[test]
fn private_passes_release_the_same_with_batched_distances() {
    let t = 5000;
    let (thetas, outputs) = table(t, 40);
    let pairs = PublicPairs::from_parts(1, 40, thetas, outputs).unwrap();
    let obs: Vec<f64> = (0..40)
        .map(|j: i32| 0.1 + (f64::from(j) * 0.013).sin())
        .collect();
    let e = Euclidean::new(&obs).unwrap();
    let closure = |y: &[f64]| e.distance(y);
    let mut rhos: Vec<f64> = (0..t).map(|i| e.distance(pairs.output(i))).collect();
    rhos.sort_by(f64::total_cmp);
    let eps_abc = rhos[t / 50]; // about 2 % of the pairs below the threshold

    for c in [3u64, 40, 1_000_000] {
        let s = SvtAbcSettings {
            epsilon_abc: eps_abc,
            epsilon_total: 2.0,
            c,
            sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
            clip: 4.0,
            resample: Resample::Never,
        };
        let mut a = SvtAbc::new(&pairs, e, s).unwrap();
        let mut b = SvtAbc::new(&pairs, closure, s).unwrap();
        a.run(&mut ChaCha20Rng::seed_from_u64(c)).unwrap();
        let mut rb = ChaCha20Rng::seed_from_u64(c);
        while b.step(&mut rb).unwrap() != SvtStep::Done {}
        assert_eq!(a.indicators(), b.indicators(), "svt c={c}");
        assert_eq!(a.accepted_indices(), b.accepted_indices());
        if c == 1_000_000 {
            assert_eq!(a.indicators().len(), t);
        }
    }

    let soft = SoftAbcdpSettings {
        epsilon_abc: eps_abc,
        epsilon_total: 5.0,
        delta_total: 1e-5,
        sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
        bound: 4.0,
        floor: 1e-12,
    };
    let mut a = SoftAbcdp::new(&pairs, e, soft).unwrap();
    let mut b = SoftAbcdp::new(&pairs, closure, soft).unwrap();
    a.run(&mut ChaCha20Rng::seed_from_u64(9)).unwrap();
    b.run(&mut ChaCha20Rng::seed_from_u64(9)).unwrap();
    assert_eq!(bits(a.noisy_distances()), bits(b.noisy_distances()));
    assert_eq!(a.noisy_distances().len(), t);

    let g = GaussianRejectionSettings {
        epsilon_abc: eps_abc,
        epsilon_total: 500.0,
        sensitivity: Sensitivity::declared(0.01, Relations::REPLACE_ONE).unwrap(),
        bound: 4.0,
    };
    let mut a = GaussianRejectionAbcdp::new(&pairs, e, g).unwrap();
    let mut b = GaussianRejectionAbcdp::new(&pairs, closure, g).unwrap();
    a.run(&mut ChaCha20Rng::seed_from_u64(10)).unwrap();
    b.run(&mut ChaCha20Rng::seed_from_u64(10)).unwrap();
    assert_eq!(a.indicators(), b.indicators());
    assert!(a.indicators().iter().any(|&x| x));

    let na = nearest(&pairs, e, 37).unwrap();
    let nb = nearest(&pairs, closure, 37).unwrap();
    assert_eq!(na.indices, nb.indices);
    assert_eq!(bits(&na.distances), bits(&nb.distances));
    assert_eq!(na.tolerance, rhos[36]);
}

/// SMC-ABC by particle streams asks for each round's distances in one batched call
/// (`RffMmd` → `mmd_many` with `parallel`); the run — particles, weights, distances,
/// tolerances, simulation counts — is bit for bit the one with the same distance as a
/// one-row closure, for blocks of 7, 64 and all particles (and, with `parallel`, on pools
/// of 1, 2 and 7 threads). A simulator that rejects θ < −0.8 makes later rounds gather a
/// subset of the block.
#[test]
fn smc_with_batched_distances_equals_the_one_row_distance() {
    use dpinfer_abc::smc::{SmcAbc, SmcSettings};
    use dpinfer_simulators::models::gaussian::GaussianMean;
    use dpinfer_simulators::{FnSimulator, SimError, Simulator};
    let model = GaussianMean::new(40, 1.0, 0.0, 1.0).unwrap();
    let sim = FnSimulator::new(
        1,
        40,
        |th: &[f64], r: &mut dyn rand_core::Rng, o: &mut [f64]| {
            if th[0] < -0.8 {
                return Err(SimError::Degenerate {
                    what: "θ < −0.8"
                });
            }
            model.simulate(th, r, o)
        },
    )
    .unwrap();
    let (_, obs) = table(1, 40);
    let z: Vec<f64> = (0..12).map(|i| (f64::from(i) * 0.71).sin() * 1.5).collect();
    let features = RandomFourierFeatures::new(&z, 1, 1.0).unwrap();
    let reference = RffReference::new(features, Rows::one_dim(&obs).unwrap()).unwrap();
    let rho = RffMmd::new(reference).unwrap();
    let one_row = |y: &[f64]| rho.distance(y);
    let settings = SmcSettings {
        max_generations: 4,
        simulation_budget: 1_000_000,
        ..crate::common::median_smc(150, 0.0)
    };
    type Run = (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>, u64);
    fn state<D: Discrepancy, S: dpinfer_simulators::BatchSimulator>(
        s: &SmcAbc<dpinfer_simulators::prior::Normal, S, D>,
    ) -> Run {
        (
            bits(s.particles()),
            bits(s.weights()),
            bits(s.distances()),
            s.history().iter().map(|h| h.tolerance.to_bits()).collect(),
            s.simulations(),
        )
    }
    let reference_run = {
        let mut s = SmcAbc::new(model.prior(), &sim, one_row, settings.clone()).unwrap();
        s.run_batched(5, 64).unwrap();
        state(&s)
    };
    assert_eq!(reference_run.3.len(), 4);
    for batch in [7, 64, 0] {
        let mut s = SmcAbc::new(model.prior(), &sim, rho.clone(), settings.clone()).unwrap();
        s.run_batched(5, batch).unwrap();
        assert!(state(&s) == reference_run, "batch {batch}");
    }
    #[cfg(feature = "parallel")]
    for threads in [1, 2, 7] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let got = pool.install(|| {
            let mut s = SmcAbc::new(model.prior(), &sim, rho.clone(), settings.clone()).unwrap();
            s.run_parallel(5).unwrap();
            state(&s)
        });
        assert!(got == reference_run, "{threads} threads");
    }
}
