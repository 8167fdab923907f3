//! Benchmarks of dpinfer-mechanisms: secure exact samplers (draws/s), mechanisms, and the
//! idealised f64 path for comparison. Noise RNG: ChaCha20 (the realistic CSPRNG cost is
//! included in every figure).
use std::hint::black_box;

use chacha20::ChaCha20Rng;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpinfer_mechanisms::idealized::{IdealizedGaussian, IdealizedLaplace};
use dpinfer_mechanisms::sampling::{
    bernoulli, bernoulli_exp_neg, discrete_gaussian, discrete_laplace, uniform_below,
};
use dpinfer_mechanisms::{
    BinomialCurve, Gaussian, GaussianRejection, Laplace, SparseVector, SparseVectorSettings,
};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

fn samplers(c: &mut Criterion) {
    let mut g = c.benchmark_group("sampler");
    g.throughput(Throughput::Elements(1));
    let mut r = ChaCha20Rng::seed_from_u64(1);
    g.bench_function("uniform_below(10^6+3)", |b| {
        b.iter(|| uniform_below(&mut r, black_box(1_000_003)).unwrap())
    });
    g.bench_function("bernoulli(1/3)", |b| {
        b.iter(|| bernoulli(&mut r, black_box(1), black_box(3)).unwrap())
    });
    g.bench_function("bernoulli_exp_neg(0.7)", |b| {
        b.iter(|| bernoulli_exp_neg(&mut r, black_box(7), black_box(10)).unwrap())
    });
    g.bench_function("discrete_laplace(scale 10)", |b| {
        b.iter(|| discrete_laplace(&mut r, black_box(10), 1).unwrap())
    });
    g.bench_function("discrete_laplace(scale 2^40)", |b| {
        b.iter(|| discrete_laplace(&mut r, black_box(1 << 40), 1).unwrap())
    });
    g.bench_function("discrete_gaussian(sigma 10)", |b| {
        b.iter(|| discrete_gaussian(&mut r, black_box(100), 1).unwrap())
    });
    g.bench_function("discrete_gaussian(sigma 2^24)", |b| {
        b.iter(|| discrete_gaussian(&mut r, black_box(1 << 48), 1).unwrap())
    });
    let mut x = Xoshiro256PlusPlus::seed_from_u64(2);
    let il = IdealizedLaplace::new(1.0).unwrap();
    let ig = IdealizedGaussian::new(1.0).unwrap();
    g.bench_function("idealized f64 Laplace (Xoshiro)", |b| {
        b.iter(|| il.add_noise(black_box(0.5), &mut x))
    });
    g.bench_function("idealized f64 Gaussian (Xoshiro)", |b| {
        b.iter(|| ig.add_noise(black_box(0.5), &mut x))
    });
    g.finish();
}

fn mechanisms(c: &mut Criterion) {
    let mut g = c.benchmark_group("mechanism");
    let mut r = ChaCha20Rng::seed_from_u64(3);
    let lap = Laplace::new(1.0, 1.0, -100.0, 100.0).unwrap();
    g.bench_function("Laplace::release", |b| {
        b.iter(|| lap.release(black_box(3.7), &mut r).unwrap())
    });
    let gau = Gaussian::new(1.0, 1.0, -100.0, 100.0).unwrap();
    g.bench_function("Gaussian::release", |b| {
        b.iter(|| gau.release(black_box(3.7), &mut r).unwrap())
    });
    let rej = GaussianRejection::from_epsilon(0.1, 0.01, 2.0, 0.3).unwrap();
    g.bench_function("GaussianRejection::decide", |b| {
        b.iter(|| rej.decide(black_box(0.25), &mut r).unwrap())
    });
    let settings = SparseVectorSettings {
        threshold: 0.3,
        sensitivity: 0.01,
        lo: 0.0,
        hi: 1.0,
        c: 1_000_000_000_000,
        resample: false,
    };
    // scale 0.05 with query 0.9 vs threshold 0.3: positives (which end a run) are ~e^-6 rare.
    let mut svt = SparseVector::new(settings, 0.05).unwrap();
    g.bench_function("SparseVector::query", |b| {
        b.iter(|| svt.query(black_box(0.9), &mut r).unwrap())
    });
    let curve = BinomialCurve::new(1000, 1000, 1_000_000).unwrap();
    let infected = [
        10u64, 200, 5_000, 80_000, 300_000, 420_000, 300_000, 90_000, 8_000, 500,
    ];
    let mut out = [0u64; 10];
    g.throughput(Throughput::Elements(1));
    g.bench_function("BinomialCurve n=1000 L=10 K=1e6 (per curve)", |b| {
        b.iter(|| {
            curve
                .release_curve(black_box(&infected), &mut out, &mut r)
                .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, samplers, mechanisms);
criterion_main!(benches);
