//! Thread scaling of the `parallel` features (rayon): public pair generation
//! (`PublicPairs::generate_parallel`) and the exact MMD against a cached observed side
//! (`MmdReference::mmd_parallel`), and one RFF / exact MMD per set over many simulated sets
//! (`mmd_many`, `mean_embeddings`), each on dedicated rayon pools of 1 and 2 threads, next to
//! the sequential call. The results are bit-identical for every thread count (tested in the
//! crates); only the time changes.

use core::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_distances::{Gaussian, MmdReference, RandomFourierFeatures, RffReference, Rows};
use dpinfer_simulators::models::gaussian::GaussianMean;
use dpinfer_simulators::prior::Normal;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn pairs(c: &mut Criterion) {
    // 20 000 pairs of θ ~ N(0, 1) and 100 raw N(θ, 1) observations each (2·10⁶ normals).
    let prior = Normal::new(0.0, 1.0).unwrap();
    let model = GaussianMean::new(100, 1.0, 0.0, 1.0).unwrap();
    let t = 20_000;
    let mut g = c.benchmark_group("pairs_generate_20k_x100");
    g.sample_size(20);
    g.throughput(Throughput::Elements(t as u64));
    g.bench_function("sequential", |b| {
        b.iter(|| PublicPairs::generate(&prior, &model, black_box(t), 1).unwrap())
    });
    for threads in [1, 2] {
        let p = pool(threads);
        g.bench_function(format!("rayon_{threads}_threads"), |b| {
            b.iter(|| {
                p.install(|| PublicPairs::generate_parallel(&prior, &model, black_box(t), 1))
                    .unwrap()
            })
        });
    }
    g.finish();
}

fn mmd(c: &mut Criterion) {
    // biased MMD², 1-D, 5000 × 5000, Gaussian kernel, observed side cached.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let n = 5000;
    let x: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 4.0 - 2.0).collect();
    let y: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 4.0 - 1.5).collect();
    let r = MmdReference::new(Gaussian::new(1.0).unwrap(), Rows::new(&x, 1).unwrap()).unwrap();
    let yr = Rows::new(&y, 1).unwrap();
    let mut g = c.benchmark_group("mmd_cached_1d_5000");
    g.sample_size(10);
    g.bench_function("sequential", |b| b.iter(|| r.mmd(black_box(yr)).unwrap()));
    for threads in [1, 2] {
        let p = pool(threads);
        g.bench_function(format!("rayon_{threads}_threads"), |b| {
            b.iter(|| p.install(|| r.mmd_parallel(black_box(yr))).unwrap())
        });
    }
    g.finish();
}

fn many_sets(c: &mut Criterion) {
    // The ABCDP-toy distance step: 64 simulated sets of 5000 1-D points against one observed
    // set, RFF MMD with D = 100 (50 frequencies) and exact cached MMD (8 sets), one distance
    // per set, sequential loop vs `mmd_many` / `mean_embeddings` on pools of 1 and 2 threads.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let n = 5000;
    let x: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 4.0 - 2.0).collect();
    let sims: Vec<Vec<f64>> = (0..64)
        .map(|_| (0..n).map(|_| rng.random::<f64>() * 4.0 - 1.5).collect())
        .collect();
    let sets: Vec<Rows<'_>> = sims.iter().map(|s| Rows::new(s, 1).unwrap()).collect();
    let z: Vec<f64> = (0..50).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
    let f = RandomFourierFeatures::new(&z, 1, 1.0).unwrap();
    let rff = RffReference::new(f, Rows::new(&x, 1).unwrap()).unwrap();
    let mut out = vec![0.0; sets.len()];
    let mut g = c.benchmark_group("rff_mmd_64_sets_x5000");
    g.sample_size(10);
    g.throughput(Throughput::Elements(sets.len() as u64));
    g.bench_function("sequential", |b| {
        b.iter(|| {
            for (s, o) in sets.iter().zip(out.iter_mut()) {
                *o = rff.mmd(*s).unwrap();
            }
            black_box(out[0])
        })
    });
    for threads in [1, 2] {
        let p = pool(threads);
        g.bench_function(format!("mmd_many_rayon_{threads}_threads"), |b| {
            b.iter(|| p.install(|| rff.mmd_many(&sets, &mut out)).unwrap())
        });
    }
    let mut emb = vec![0.0; sets.len() * f.num_features()];
    for threads in [1, 2] {
        let p = pool(threads);
        g.bench_function(format!("mean_embeddings_rayon_{threads}_threads"), |b| {
            b.iter(|| p.install(|| f.mean_embeddings(&sets, &mut emb)).unwrap())
        });
    }
    g.finish();
    let exact = MmdReference::new(Gaussian::new(1.0).unwrap(), Rows::new(&x, 1).unwrap()).unwrap();
    let mut g = c.benchmark_group("exact_mmd_8_sets_x5000");
    g.sample_size(10);
    g.throughput(Throughput::Elements(8));
    g.bench_function("sequential", |b| {
        b.iter(|| {
            for (s, o) in sets[..8].iter().zip(out.iter_mut()) {
                *o = exact.mmd(*s).unwrap();
            }
            black_box(out[0])
        })
    });
    for threads in [1, 2] {
        let p = pool(threads);
        g.bench_function(format!("mmd_many_rayon_{threads}_threads"), |b| {
            b.iter(|| {
                p.install(|| exact.mmd_many(&sets[..8], &mut out[..8]))
                    .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, pairs, mmd, many_sets);
criterion_main!(benches);
