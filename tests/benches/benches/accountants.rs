//! Benchmarks of dpinfer-accountants (issue 3 targets: (a) ≤ 100 µs, (b) ≤ 5 ms, (c) ≤ 5 ms).
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dpinfer_accountants::pld_numeric::{Component, ComposedPld, Discretisation, Mechanism};
use dpinfer_accountants::{
    Accountant, DEFAULT_ORDERS, Event, Neighbouring, PldAccountant, RdpAccountant, calibrate,
};

fn bench(c: &mut Criterion) {
    // (a) ε at δ = 1e-5 after 10^4 Poisson-subsampled Gaussian steps, q = 0.01, σ = 1, RDP.
    c.bench_function("a_rdp_poisson_gaussian_1e4_steps_eps", |b| {
        b.iter(|| {
            let g = Event::Gaussian {
                sigma: black_box(1.0),
                sensitivity: 1.0,
            };
            let p = Event::PoissonSampled {
                q: black_box(0.01),
                event: &g,
            };
            let mut acc = RdpAccountant::new(Neighbouring::AddRemove);
            acc.compose_n(&p, 10_000).unwrap();
            acc.epsilon(1e-5).unwrap().epsilon
        })
    });

    // (b) Gaussian PLD δ(ε) for 10^6 heterogeneous σ, including the composition.
    let sigmas: Vec<f64> = (0..1_000_000)
        .map(|i| 100.0 + f64::from(i % 1000) / 10.0)
        .collect();
    c.bench_function("b_pld_1e6_heterogeneous_compose_and_delta", |b| {
        b.iter(|| {
            let mut acc = PldAccountant::new(Neighbouring::AddRemove);
            for &s in black_box(&sigmas) {
                acc.compose(&Event::Gaussian {
                    sigma: s,
                    sensitivity: 1.0,
                })
                .unwrap();
            }
            acc.delta(black_box(30.0)).unwrap().delta
        })
    });

    c.bench_function("b_pld_1e6_heterogeneous_bulk_compose_and_delta", |b| {
        b.iter(|| {
            let mut acc = PldAccountant::new(Neighbouring::AddRemove);
            acc.compose_gaussians(black_box(&sigmas), 1.0).unwrap();
            acc.delta(black_box(30.0)).unwrap().delta
        })
    });

    // (c) σ calibration for a 10^4-step budget.
    c.bench_function("c_calibrate_sigma_rdp_poisson_1e4_steps", |b| {
        b.iter(|| {
            calibrate::poisson_gaussian_sigma_rdp(
                black_box(2.0),
                1e-5,
                10_000,
                0.01,
                &DEFAULT_ORDERS,
            )
            .unwrap()
        })
    });
    c.bench_function("c_calibrate_sigma_pld_1e4_steps", |b| {
        b.iter(|| {
            calibrate::gaussian_sigma(black_box(1.0), 1e-5, 10_000, 1.0, calibrate::Method::Pld)
                .unwrap()
        })
    });
    c.bench_function("c_calibrate_sigma_zcdp_1e4_steps", |b| {
        b.iter(|| {
            calibrate::gaussian_sigma(black_box(1.0), 1e-5, 10_000, 1.0, calibrate::Method::Zcdp)
                .unwrap()
        })
    });
}

/// Issue 15: ε at δ = 1e-5 by the numerical PLD (pessimistic connect-the-dots, h = 1e-4,
/// both add/remove directions) after Poisson-subsampled Gaussian steps, q = 0.01, σ = 1.1
/// (dp_accounting 0.6.0: ε = 1.515 / 5.193, 0.52 s / 0.55 s). Target ≤ 20 ms for 10⁴ steps.
fn bench_numerical_pld(c: &mut Criterion) {
    let mut g = c.benchmark_group("pld_numeric");
    g.sample_size(10);
    for steps in [1_000u64, 10_000] {
        g.bench_function(format!("d_pld_poisson_gaussian_{steps}_steps_eps"), |b| {
            b.iter(|| {
                let step = Event::Gaussian {
                    sigma: black_box(1.1),
                    sensitivity: 1.0,
                };
                let p = Event::PoissonSampled {
                    q: black_box(0.01),
                    event: &step,
                };
                let mut acc = PldAccountant::new(Neighbouring::AddRemove);
                acc.compose_n(&p, steps).unwrap();
                acc.epsilon(1e-5).unwrap().epsilon
            })
        });
    }
    // The same 10⁴-step composition with the certified interval [lower, upper].
    g.bench_function("d_pld_poisson_gaussian_10000_steps_eps_and_lower", |b| {
        b.iter(|| {
            let c = Component::new(
                Mechanism::Gaussian {
                    mu: 0.5 / (black_box(1.1f64) * 1.1),
                },
                0.01,
            )
            .unwrap();
            let p = ComposedPld::new(
                &[(c, 10_000)],
                0.0,
                Neighbouring::AddRemove,
                Discretisation::default(),
                true,
            )
            .unwrap();
            let r = p.epsilon(1e-5).unwrap();
            (r.epsilon, r.lower)
        })
    });
    // Issue 30: the long-tail regime (small q, small σ; 7.7 s before, dp_accounting 1.5 s)
    // and cases that failed before ("window too large"). Peers: tests/data/bench_pld_regimes_peers.py.
    for (q, sigma, steps) in [
        (1e-3, 0.5, 1000u64),
        (1e-4, 0.5, 10_000),
        (1e-6, 0.3, 10_000),
    ] {
        g.bench_function(
            format!("e_pld_long_tail_q{q}_s{sigma}_{steps}_steps_eps"),
            |b| {
                b.iter(|| {
                    let step = Event::Gaussian {
                        sigma: black_box(sigma),
                        sensitivity: 1.0,
                    };
                    let p = Event::PoissonSampled {
                        q: black_box(q),
                        event: &step,
                    };
                    let mut acc = PldAccountant::new(Neighbouring::AddRemove);
                    acc.compose_n(&p, steps).unwrap();
                    acc.epsilon(1e-5).unwrap().epsilon
                })
            },
        );
    }
    // The noise the secure samplers draw: discrete Gaussian σ = 2²⁴ grid units (Δ = σ),
    // discrete Laplace scale 2⁴⁰ (ε = 1 per release), 1000 Poisson-subsampled steps.
    let dg = Event::DiscreteGaussian {
        sigma: 16_777_216.0,
        sensitivity: 16_777_216,
    };
    let dl = Event::DiscreteLaplace {
        scale: 1_099_511_627_776.0,
        sensitivity: 1_099_511_627_776,
    };
    for (name, base) in [("discrete_gaussian", dg), ("discrete_laplace", dl)] {
        g.bench_function(format!("d_pld_poisson_{name}_1000_steps_eps"), |b| {
            b.iter(|| {
                let p = Event::PoissonSampled {
                    q: black_box(0.01),
                    event: &base,
                };
                let mut acc = PldAccountant::new(Neighbouring::AddRemove);
                acc.compose_n(&p, 1000).unwrap();
                acc.epsilon(1e-5).unwrap().epsilon
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench, bench_numerical_pld);
criterion_main!(benches);
