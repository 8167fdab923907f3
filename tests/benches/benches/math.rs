//! Benchmarks of dpinfer-math's special functions.
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    c.bench_function("norm_quantile(1e-10)", |b| {
        b.iter(|| dpinfer_math::norm_quantile(black_box(1e-10)))
    });
    c.bench_function("ln_norm_cdf(-30)", |b| {
        b.iter(|| dpinfer_math::ln_norm_cdf(black_box(-30.0)))
    });
    c.bench_function("erfcx(3)", |b| b.iter(|| dpinfer_math::erfcx(black_box(3.0))));
}

criterion_group!(benches, bench);
criterion_main!(benches);
