//! Benchmarks of dpinfer-math's special functions: one or two representative arguments per
//! function, chosen to hit each evaluation branch (centre, tails, series, continued fraction).
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use dpinfer_math as m;

fn normal(c: &mut Criterion) {
    let mut g = c.benchmark_group("normal");
    for x in [0.5, -3.0, -30.0] {
        g.bench_function(format!("norm_cdf({x})"), |b| {
            b.iter(|| m::norm_cdf(black_box(x)))
        });
    }
    g.bench_function("norm_pdf(1.5)", |b| b.iter(|| m::norm_pdf(black_box(1.5))));
    for x in [-0.5, -30.0, -1e5] {
        g.bench_function(format!("ln_norm_cdf({x})"), |b| {
            b.iter(|| m::ln_norm_cdf(black_box(x)))
        });
    }
    for p in [0.3, 0.975, 1e-10, 1e-300] {
        g.bench_function(format!("norm_quantile({p:e})"), |b| {
            b.iter(|| m::norm_quantile(black_box(p)))
        });
    }
    for x in [0.5, 3.0, 30.0] {
        g.bench_function(format!("erfcx({x})"), |b| b.iter(|| m::erfcx(black_box(x))));
    }
    g.bench_function("norm_cdf_diff(0.3,-0.2)", |b| {
        b.iter(|| m::norm_cdf_diff(black_box(0.3), black_box(-0.2)))
    });
    // The Gaussian mechanism's δ(ε) at μ = 1, ε = 1 (a moderate case) and μ = 0.1, ε = 5
    // (both arguments deep in the tail).
    for (mu, eps) in [(1.0_f64, 1.0_f64), (0.1, 5.0)] {
        let (a, bb) = (mu / 2.0 - eps / mu, -mu / 2.0 - eps / mu);
        g.bench_function(format!("norm_cdf_sub_exp(mu={mu},eps={eps})"), |b| {
            b.iter(|| m::norm_cdf_sub_exp(black_box(a), black_box(bb), black_box(eps)))
        });
        g.bench_function(format!("ln_norm_cdf_sub_exp(mu={mu},eps={eps})"), |b| {
            b.iter(|| m::ln_norm_cdf_sub_exp(black_box(a), black_box(bb), black_box(eps)))
        });
    }
    g.finish();
}

fn logspace(c: &mut Criterion) {
    let mut g = c.benchmark_group("logspace");
    g.bench_function("log_add_exp", |b| {
        b.iter(|| m::log_add_exp(black_box(-3.0), black_box(-4.5)))
    });
    g.bench_function("log_sub_exp", |b| {
        b.iter(|| m::log_sub_exp(black_box(-3.0), black_box(-4.5)))
    });
    g.bench_function("log1mexp(-0.1)", |b| {
        b.iter(|| m::log1mexp(black_box(-0.1)))
    });
    g.bench_function("softplus(2)", |b| b.iter(|| m::softplus(black_box(2.0))));
    let xs: Vec<f64> = (0..1000).map(|i| -0.01 * f64::from(i)).collect();
    g.bench_function("logsumexp(1000)", |b| {
        b.iter(|| m::logsumexp(black_box(&xs)))
    });
    g.bench_function("NeumaierSum(1000)", |b| {
        b.iter(|| m::NeumaierSum::sum_iter(black_box(&xs).iter().copied()))
    });
    g.finish();
}

fn binomial(c: &mut Criterion) {
    let mut g = c.benchmark_group("binomial");
    g.bench_function("ln_gamma(7.5)", |b| b.iter(|| m::ln_gamma(black_box(7.5))));
    for (n, k) in [(1e6, 3.5), (1e15, 5e14), (7.7, 2.5), (0.6, 0.1)] {
        g.bench_function(format!("ln_binomial({n},{k})"), |b| {
            b.iter(|| m::ln_binomial(black_box(n), black_box(k)))
        });
    }
    for (n, k) in [(64_u64, 32_u64), (1_000_000, 1000)] {
        g.bench_function(format!("ln_binomial_int({n},{k})"), |b| {
            b.iter(|| m::ln_binomial_int(black_box(n), black_box(k)))
        });
    }
    g.finish();
}

criterion_group!(benches, normal, logspace, binomial);
criterion_main!(benches);
