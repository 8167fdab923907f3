//! Benchmarks of dpinfer-simulators: simulations/s for each model, SIR events/s, the banana
//! fused clip-and-sum throughput, and the stream RNG.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

use dpinfer_simulators::models::banana::{Banana, BananaSettings};
use dpinfer_simulators::models::cubic::CubicOutbreak;
use dpinfer_simulators::models::gaussian::GaussianMean;
use dpinfer_simulators::models::linreg::{BETA_STAR, LinRegSettings, LinearRegression};
use dpinfer_simulators::models::mixture::{THETA_STAR, UniformMixture};
use dpinfer_simulators::models::sir::{Sir, SirSettings, SirTauLeap, theta_star};
use dpinfer_simulators::models::tb::{TRUE_THETA, TbPrior, Tuberculosis};
use dpinfer_simulators::{
    IncrementalSimulator, Prior, RowGradient, RowLikelihood, SimStream, Simulator,
};
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

fn stream(c: &mut Criterion) {
    let mut g = c.benchmark_group("stream");
    g.throughput(Throughput::Elements(1_000_000));
    g.bench_function("SimStream 1e6 u64", |b| {
        let mut r = SimStream::new(1, 2);
        b.iter(|| {
            let mut acc = 0u64;
            for _ in 0..1_000_000 {
                acc ^= r.next_u64();
            }
            black_box(acc)
        })
    });
    g.bench_function("Xoshiro256++ 1e6 u64 (reference)", |b| {
        let mut r = Xoshiro256PlusPlus::seed_from_u64(1);
        b.iter(|| {
            let mut acc = 0u64;
            for _ in 0..1_000_000 {
                acc ^= r.next_u64();
            }
            black_box(acc)
        })
    });
    g.finish();
}

fn sir(c: &mut Criterion) {
    let mut g = c.benchmark_group("sir");
    g.sample_size(10);
    let sir = Sir::paper();
    let th = theta_star();
    // events of one trajectory (for the events/s throughput)
    let mut run = sir.begin(&th).unwrap();
    let mut r = SimStream::new(5, 0);
    let mut o = [0.0];
    for _ in 0..10 {
        sir.next_block(&mut run, &mut r, &mut o).unwrap();
    }
    eprintln!(
        "SIR K=1e6 at theta*: {} events per trajectory",
        run.events()
    );
    g.throughput(Throughput::Elements(run.events()));
    g.bench_function("gillespie K=1e6 theta* (events/s)", |b| {
        let mut job = 0;
        let mut out = [0.0; 10];
        b.iter(|| {
            job += 1;
            sir.simulate(&th, &mut SimStream::new(5, job % 4), &mut out)
                .unwrap();
            black_box(out[9])
        })
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("gillespie K=1e6 theta*, stop after 3 of 10 times", |b| {
        let mut out = [0.0; 10];
        b.iter(|| {
            sir.simulate_until(&th, &mut SimStream::new(5, 0), &mut out, |k, _| k >= 3)
                .unwrap();
            black_box(out[2])
        })
    });
    let tau = SirTauLeap::new(SirSettings::paper(), 0.1).unwrap();
    g.bench_function("tau-leap K=1e6 tau=0.1 (approximate)", |b| {
        let mut job = 0;
        let mut out = [0.0; 10];
        b.iter(|| {
            job += 1;
            tau.simulate(&th, &mut SimStream::new(5, job % 8), &mut out)
                .unwrap();
            black_box(out[9])
        })
    });
    g.finish();
}

/// 10⁶ standard normals: stream version 1 (polar), version 2 (ziggurat), rand_distr's
/// `StandardNormal` (the peer the ziggurat follows); and the Gaussian-mean toy under both.
fn normals(c: &mut Criterion) {
    use dpinfer_simulators::StreamVersion;
    use dpinfer_simulators::dist;
    let mut g = c.benchmark_group("normals");
    g.throughput(Throughput::Elements(1_000_000));
    let mut r = SimStream::new(3, 3);
    g.bench_function("v1 polar 1e6", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for _ in 0..1_000_000 {
                s += dist::std_normal(&mut r);
            }
            black_box(s)
        })
    });
    g.bench_function("v2 ziggurat 1e6", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for _ in 0..1_000_000 {
                s += dist::ziggurat_normal(&mut r);
            }
            black_box(s)
        })
    });
    g.bench_function("rand_distr StandardNormal 1e6 (peer)", |b| {
        use rand_distr::Distribution;
        b.iter(|| {
            let mut s = 0.0;
            for _ in 0..1_000_000 {
                let z: f64 = rand_distr::StandardNormal.sample(&mut r);
                s += z;
            }
            black_box(s)
        })
    });
    g.throughput(Throughput::Elements(1));
    let mut out = vec![0.0; 1000];
    for v in [StreamVersion::V1, StreamVersion::V2] {
        let gm = GaussianMean::new(1000, 1.0, 0.0, 1.0)
            .unwrap()
            .with_stream_version(v);
        g.bench_function(format!("gaussian mean n=1000 v{}", v.number()), |b| {
            b.iter(|| gm.simulate(&[0.5], &mut r, &mut out).unwrap())
        });
    }
    g.finish();
}

fn models(c: &mut Criterion) {
    let mut g = c.benchmark_group("models");
    g.throughput(Throughput::Elements(1));
    let mut r = SimStream::new(9, 9);
    let gm = GaussianMean::new(1000, 1.0, 0.0, 1.0).unwrap();
    let mut out = vec![0.0; 5000];
    g.bench_function("gaussian mean n=1000", |b| {
        b.iter(|| gm.simulate(&[0.5], &mut r, &mut out[..1000]).unwrap())
    });
    let mx = UniformMixture::paper();
    g.bench_function("uniform mixture n=5000", |b| {
        b.iter(|| mx.simulate(&THETA_STAR, &mut r, &mut out).unwrap())
    });
    let cu = CubicOutbreak::paper();
    g.bench_function("cubic outbreak 18 points", |b| {
        b.iter(|| {
            cu.simulate(black_box(&[0.1, 0.2, 0.3, 0.4]), &mut r, &mut out[..18])
                .unwrap()
        })
    });
    let lr = LinearRegression::new(LinRegSettings::paper()).unwrap();
    g.bench_function("linear regression n=100 -> s~", |b| {
        b.iter(|| lr.simulate(&BETA_STAR, &mut r, &mut out[..9]).unwrap())
    });
    let tb = Tuberculosis::reference();
    g.bench_function("tuberculosis theta_true", |b| {
        b.iter(|| tb.simulate(&TRUE_THETA, &mut r, &mut out[..8]).unwrap())
    });
    let tp = TbPrior::reference();
    g.bench_function("tuberculosis truncated prior draw", |b| {
        let mut th = [0.0; 4];
        b.iter(|| tp.sample(&mut r, &mut th).unwrap())
    });
    g.finish();
}

fn banana(c: &mut Criterion) {
    let mut g = c.benchmark_group("banana");
    for (label, s) in [
        ("2-D n=100k", BananaSettings::thesis_2d()),
        ("10-D n=200k", BananaSettings::thesis_10d()),
    ] {
        let model = Banana::new(s).unwrap();
        let mut theta = vec![0.0; s.dim];
        theta[1] = 3.0;
        let mut x = vec![0.0; s.n * s.dim];
        model
            .simulate(&theta, &mut SimStream::new(1, 1), &mut x)
            .unwrap();
        let data = model.data(&x).unwrap();
        let mut t2 = theta.clone();
        t2[0] += 0.001;
        t2[1] -= 0.002;
        g.throughput(Throughput::Elements(s.n as u64));
        g.bench_function(format!("clipped_log_ratio_sum {label} (fused)"), |b| {
            b.iter(|| {
                data.clipped_log_ratio_sum(black_box(&theta), black_box(&t2), 0, s.n, 0.01)
                    .unwrap()
            })
        });
        let mut r = vec![0.0; s.n];
        g.bench_function(
            format!("row_log_ratio + clip_sum {label} (two passes)"),
            |b| {
                b.iter(|| {
                    data.row_log_ratio(black_box(&theta), black_box(&t2), 0, &mut r)
                        .unwrap();
                    dpinfer_simulators::likelihood::clip_sum(&r, 0.01).unwrap()
                })
            },
        );
        let mut acc = vec![0.0; s.dim];
        g.bench_function(format!("clipped_grad_sum {label}"), |b| {
            b.iter(|| {
                data.clipped_grad_sum(black_box(&theta), 0, s.n, 1.0, &mut acc)
                    .unwrap()
            })
        });
        if s.dim == 2 {
            let post = model.posterior(&data, 1.0).unwrap();
            let mut t = [0.0; 2];
            let mut rr = SimStream::new(3, 3);
            g.throughput(Throughput::Elements(1));
            g.bench_function("exact posterior draw 2-D", |b| {
                b.iter(|| post.sample(&mut rr, &mut t).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, stream, normals, sir, models, banana);
criterion_main!(benches);
