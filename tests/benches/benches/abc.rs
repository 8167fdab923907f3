//! Benchmarks of dpinfer-abc: rejection ABC throughput and framework overhead on the
//! Gaussian-mean toy, one SMC-ABC run to tolerance 0.01, and the SVT-ABC private pass.
use std::hint::black_box;

use chacha20::ChaCha20Rng;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpinfer_abc::analysis::Resample;
use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::rejection::{RejectionAbc, RejectionSettings, Rule};
use dpinfer_abc::smc::{SmcAbc, SmcSettings, Tolerance};
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer_distances::{Relations, Sensitivity};
use dpinfer_simulators::prior::Normal;
use dpinfer_simulators::{SimError, Simulator};
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

/// Which standard-normal sampler the toy model draws with.
#[derive(Clone, Copy)]
enum Normals {
    /// `dpinfer_simulators::dist::std_normal` (stream version 1, polar method).
    Polar,
    /// `rand_distr::StandardNormal` (ziggurat; platform math under `std`).
    RandDistr,
    /// `StreamVersion::V2` (the libm ziggurat that draws what rand_distr's does).
    StreamV2,
}

/// The pyabc/ELFI comparison model: 100 draws y_i ~ N(θ, 1), summary = their mean.
#[derive(Clone, Copy)]
struct MeanOf100(Normals);

impl Simulator for MeanOf100 {
    fn param_dim(&self) -> usize {
        1
    }
    fn output_dim(&self) -> usize {
        1
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        th: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        use rand_distr::Distribution;
        let mut s = 0.0;
        for _ in 0..100 {
            s += match self.0 {
                Normals::Polar => dpinfer_simulators::dist::std_normal(rng),
                Normals::RandDistr => rand_distr::StandardNormal.sample(rng),
                Normals::StreamV2 => dpinfer_simulators::StreamVersion::V2.std_normal(rng),
            };
        }
        out[0] = th[0] + s / 100.0;
        Ok(())
    }
}

/// A simulator that does nothing (out = θ): measures the framework's own cost per proposal
/// (prior draw + step bookkeeping + distance).
#[derive(Clone, Copy)]
struct Null;

impl Simulator for Null {
    fn param_dim(&self) -> usize {
        1
    }
    fn output_dim(&self) -> usize {
        1
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        th: &[f64],
        _: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        out[0] = th[0];
        Ok(())
    }
}

/// Rejection ABC of `sim` against the observation 0.5 at threshold 0.05 for `budget`
/// simulations (seed 1); the number accepted.
fn rejection_run<S: Simulator>(sim: S, budget: u64) -> usize {
    let obs = [0.5];
    let mut s = RejectionAbc::new(
        Normal::new(0.0, 1.0).unwrap(),
        sim,
        Euclidean::new(&obs).unwrap(),
        RejectionSettings {
            rule: Rule::Threshold(0.05),
            budget,
            target: u64::MAX,
        },
    )
    .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    s.run(&mut rng).unwrap();
    s.accepted().len()
}

fn rejection(c: &mut Criterion) {
    let n = 100_000u64;
    let mut g = c.benchmark_group("abc/rejection");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    for (name, normals) in [
        ("gaussian_mean_100obs_1e5_sims", Normals::Polar),
        ("gaussian_mean_100obs_ziggurat_1e5_sims", Normals::RandDistr),
        ("gaussian_mean_100obs_stream_v2_1e5_sims", Normals::StreamV2),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| black_box(rejection_run(MeanOf100(normals), n)))
        });
    }
    g.bench_function("null_simulator_overhead_1e5_steps", |b| {
        b.iter(|| black_box(rejection_run(Null, n)));
    });
    g.finish();
}

fn smc(c: &mut Criterion) {
    let obs = [0.5];
    let mut g = c.benchmark_group("abc/smc");
    g.sample_size(10);
    // α = 0.3 and kernel scale 1 (see the crate README); the default 2·cov kernel with the
    // median schedule needs ~76k simulations instead of ~55k.
    let settings = SmcSettings {
        particles: 1000,
        tolerance: Tolerance::Quantile {
            initial: f64::INFINITY,
            alpha: 0.3,
        },
        kernel_scale: 1.0,
        final_tolerance: 0.01,
        max_generations: 50,
        ..SmcSettings::default()
    };
    let run = || {
        let mut s = SmcAbc::new(
            Normal::new(0.0, 1.0).unwrap(),
            MeanOf100(Normals::RandDistr),
            Euclidean::new(&obs).unwrap(),
            settings.clone(),
        )
        .unwrap();
        s.run(&mut Xoshiro256PlusPlus::seed_from_u64(2)).unwrap();
        s
    };
    let s = run();
    eprintln!(
        "smc: {} simulations, {} generations to tolerance 0.01",
        s.simulations(),
        s.history().len()
    );
    g.bench_function("gaussian_mean_1000_particles_to_0.01", |b| {
        b.iter(|| black_box(run().simulations()));
    });
    g.finish();
    smc_batched_mmd(c);
}

/// SMC-ABC by particle streams (`run_batched`, all particles in one block) on raw data sets:
/// 100 draws of N(θ, 1) per simulation compared with 100 observed draws by the random-feature
/// MMD (`RffMmd`, D = 100, bandwidth 1), 500 particles, 4 generations of the median
/// schedule, on rayon pools of 1 and 2 threads. The distances of each round's accepted
/// simulations are one `Discrepancy::distances` call (`RffReference::mmd_many`).
fn smc_batched_mmd(c: &mut Criterion) {
    use dpinfer_abc::summary::RffSummary;
    use dpinfer_distances::{RffReference, Rows};
    use dpinfer_simulators::models::gaussian::GaussianMean;
    let model = GaussianMean::new(100, 1.0, 0.0, 1.0).unwrap();
    let mut obs = vec![0.0; 100];
    model
        .simulate(&[0.5], &mut Xoshiro256PlusPlus::seed_from_u64(9), &mut obs)
        .unwrap();
    let rff = RffSummary::from_seed(9, 1, 100, 1.0).unwrap();
    let reference =
        RffReference::new(rff.features().unwrap(), Rows::one_dim(&obs).unwrap()).unwrap();
    let settings = SmcSettings {
        particles: 500,
        tolerance: Tolerance::Quantile {
            initial: f64::INFINITY,
            alpha: 0.5,
        },
        final_tolerance: 0.0,
        max_generations: 4,
        ..SmcSettings::default()
    };
    let run = || {
        let mut s = SmcAbc::new(
            model.prior(),
            model,
            dpinfer_abc::discrepancy::RffMmd::new(reference.clone()).unwrap(),
            settings.clone(),
        )
        .unwrap();
        s.run_batched(3, 0).unwrap();
        s
    };
    let s = run();
    eprintln!(
        "smc rff-mmd: {} simulations, {} generations, final tolerance {}",
        s.simulations(),
        s.history().len(),
        s.history().last().map_or(f64::NAN, |h| h.tolerance)
    );
    let mut g = c.benchmark_group("abc/smc_batched");
    g.sample_size(10);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        g.bench_function(
            format!("gaussian_mean_raw100_rff_mmd_500_particles_4_gens_{threads}_threads"),
            |b| b.iter(|| pool.install(|| black_box(run().simulations()))),
        );
    }
    g.finish();
}

fn svt(c: &mut Criterion) {
    let prior = Normal::new(0.0, 1.0).unwrap();
    let obs = 0.5;
    let mut g = c.benchmark_group("abc/svt_private_pass");
    g.sample_size(10);
    for (name, t, pairs_seed, noise_seed) in [
        ("1e5_pairs_abs_distance", 100_000usize, 3, 4),
        ("1e6_pairs_abs_distance", 1_000_000, 5, 6),
    ] {
        let pairs = PublicPairs::generate(&prior, &Null, t, pairs_seed).unwrap();
        g.throughput(Throughput::Elements(t as u64));
        g.bench_function(name, |b| {
            let mut noise = ChaCha20Rng::seed_from_u64(noise_seed);
            b.iter(|| {
                // c larger than T: the pass visits every pair (worst case)
                let s = SvtAbcSettings {
                    epsilon_abc: 0.001,
                    epsilon_total: 1.0,
                    c: 10 * t as u64,
                    sensitivity: Sensitivity::declared(1e-4, Relations::REPLACE_ONE).unwrap(),
                    clip: 4.0,
                    resample: Resample::Never,
                };
                let mut p = SvtAbc::new(&pairs, |y: &[f64]| (y[0] - obs).abs(), s).unwrap();
                p.run(&mut noise).unwrap();
                black_box(p.indicators().len())
            });
        });
    }
    g.finish();
}

criterion_group!(benches, rejection, smc, svt);
criterion_main!(benches);
