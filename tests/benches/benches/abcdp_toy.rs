//! The ABCDP toy end to end (see `dpinfer_benches::abcdp_toy`): 10 000 public pairs of 5 000
//! points each, RFF-embedded, then SVT-ABC, on rayon pools of 1 and 2 threads (the issue
//! table's target: ≤ 2 s on 2 threads), plus its phases on one thread: simulating one set,
//! embedding one set, the private pass alone over the 10 000 embeddings, and the private
//! pass over raw sets (`RffMmd`, i.e. `RffReference::mmd_many` in blocks).
//!
//! Run: `cargo bench --manifest-path tests/benches/Cargo.toml --bench abcdp_toy`
use core::hint::black_box;

use chacha20::ChaCha20Rng;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpinfer_abc::discrepancy::{Euclidean, RffMmd};
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer_benches::abcdp_toy::{SETS, Setup, pairs, run, svt_settings};
use dpinfer_distances::Rows;
use dpinfer_simulators::models::mixture::THETA_STAR;
use dpinfer_simulators::{SimStream, Simulator};
use rand::SeedableRng;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn toy(c: &mut Criterion) {
    let setup = Setup::new();
    let reference = setup.reference();
    let sensitivity = reference.sensitivity().value();
    let (examined, accepted) = pool(2).install(|| run(&setup, SETS, 1));
    eprintln!(
        "abcdp toy: bandwidth {:.3}, sensitivity {sensitivity:.3e}, {examined} pairs examined, \
         {accepted} accepted",
        setup.bandwidth
    );

    let mut g = c.benchmark_group("abcdp_toy_10k_sets_x5000");
    g.sample_size(10);
    g.throughput(Throughput::Elements(SETS as u64));
    for threads in [1usize, 2] {
        let p = pool(threads);
        g.bench_function(format!("rayon_{threads}_threads"), |b| {
            b.iter(|| p.install(|| black_box(run(&setup, SETS, 1))))
        });
    }
    g.finish();

    // Phases, one thread.
    let mut g = c.benchmark_group("abcdp_toy_phases");
    g.sample_size(20);
    let mut y = vec![0.0; setup.sim.output_dim()];
    let mut rng = SimStream::with_domain(2021, 4, 0);
    g.bench_function("simulate_one_set_5000", |b| {
        b.iter(|| {
            setup
                .sim
                .simulate(black_box(&THETA_STAR), &mut rng, &mut y)
                .unwrap()
        })
    });
    let features = setup.features();
    let mut emb = vec![0.0; features.num_features()];
    g.bench_function("embed_one_set_5000_D100", |b| {
        b.iter(|| {
            features
                .mean_embedding(Rows::one_dim(black_box(&y)).unwrap(), &mut emb)
                .unwrap()
        })
    });
    let table = pool(2).install(|| pairs(&setup, SETS));
    let one = pool(1);
    g.bench_function("svt_pass_10k_embedded_pairs", |b| {
        b.iter(|| {
            one.install(|| {
                let rho = Euclidean::new(reference.embedding()).unwrap();
                // c above T: the pass examines every pair (worst case)
                let s = SvtAbcSettings {
                    c: 1_000_000,
                    ..svt_settings(sensitivity)
                };
                let mut pass = SvtAbc::new(&table, rho, s).unwrap();
                pass.run(&mut ChaCha20Rng::seed_from_u64(2)).unwrap();
                black_box(pass.indicators().len())
            })
        })
    });
    g.finish();

    // The private pass over raw sets (the data owner embeds): 256 pairs of 5000 points,
    // `RffMmd` → `RffReference::mmd_many` in blocks, on 1 and 2 threads.
    let raw = pool(2)
        .install(|| PublicPairs::generate_parallel(&setup.prior, &setup.sim, 256, 5).unwrap());
    let mut g = c.benchmark_group("abcdp_toy_svt_raw_256_sets_x5000");
    g.sample_size(10);
    g.throughput(Throughput::Elements(256));
    for threads in [1usize, 2] {
        let p = pool(threads);
        g.bench_function(format!("rff_mmd_many_rayon_{threads}_threads"), |b| {
            b.iter(|| {
                p.install(|| {
                    let rho = RffMmd::new(reference.clone()).unwrap();
                    let s = SvtAbcSettings {
                        c: 1_000_000,
                        ..svt_settings(sensitivity)
                    };
                    let mut pass = SvtAbc::new(&raw, rho, s).unwrap();
                    pass.run(&mut ChaCha20Rng::seed_from_u64(3)).unwrap();
                    black_box(pass.indicators().len())
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, toy);
criterion_main!(benches);
