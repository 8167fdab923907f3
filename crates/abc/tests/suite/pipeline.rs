//! The sharded pipeline as library API: pairs over row ranges (shards) concatenate to the
//! whole table; PMC generations with a fixed number of proposals (kernel shared with
//! SMC-ABC) — proposals, nearest-`N` selection and Beaumont weights checked against an
//! independent computation; the nearest-`k` pass; the public replicas. Every parallel path is
//! bit-identical for 1, 2 and 7 threads.
#![cfg(feature = "alloc")]

use crate::common;

use common::{gaussian_mean, noisy2};
use dpinfer_abc::AbcError;
use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::pairs::{PAIRS_DOMAIN, Proposal, PublicPairs, pairs_domain};
use dpinfer_abc::pmc::{self, PmcKernel, Population};
use dpinfer_abc::rejection::nearest;
use dpinfer_abc::smc::{
    BinomialReplicate, LaplaceReplicate, Privatized, PublicMechanism, Replicate,
};
use dpinfer_simulators::Rowless;
use dpinfer_simulators::prior::{Normal, Uniform};
use dpinfer_simulators::{Prior, SimStream, Simulator};

#[cfg(feature = "parallel")]
fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn shards_concatenate_to_the_whole_table() {
    let prior = Normal::new(0.0, 2.0).unwrap();
    let sim = gaussian_mean(50.0);
    let whole = PublicPairs::generate(&prior, &sim, 10_000, 5).unwrap();
    // Uneven shards, one crossing a 4096-row block boundary.
    let cuts = [0u64, 1, 4000, 4097, 9999, 10_000];
    let parts: Vec<PublicPairs> = cuts
        .windows(2)
        .map(|w| PublicPairs::generate_range(&prior, &sim, 5, w[0]..w[1]).unwrap())
        .collect();
    assert_eq!(PublicPairs::concat(&parts).unwrap(), whole);
    // The table round-trips through the row-major file layout.
    let t = whole.to_table();
    assert_eq!(PublicPairs::from_table(1, 1, &t).unwrap(), whole);
    // Generation 0 is the pairs domain itself; later generations have their own domains.
    assert_eq!(pairs_domain(0), PAIRS_DOMAIN);
    assert!((1..1000).all(|g| pairs_domain(g) != PAIRS_DOMAIN));
    // Row j is the row's own stream: prior draw, then the simulation.
    let mut rng = SimStream::with_domain(5, PAIRS_DOMAIN, 4321);
    let mut th = [0.0];
    prior.sample(&mut rng, &mut th).unwrap();
    let mut y = [0.0];
    sim.simulate(&th, &mut rng, &mut y).unwrap();
    assert_eq!(whole.theta(4321), th);
    assert_eq!(whole.output(4321), y);
}

#[test]
fn bad_ranges_and_tables_are_typed_errors() {
    let prior = Normal::new(0.0, 1.0).unwrap();
    let sim = gaussian_mean(4.0);
    assert!(matches!(
        PublicPairs::generate_range(&prior, &sim, 1, 5..5),
        Err(AbcError::InvalidCount { .. })
    ));
    assert!(matches!(
        PublicPairs::generate_range(&prior, &sim, 1, 7..3),
        Err(AbcError::InvalidCount { .. })
    ));
    assert!(matches!(
        PublicPairs::generate_range(&prior, &sim, 1, 0..u64::MAX),
        Err(AbcError::InvalidCount { .. })
    ));
    assert!(matches!(
        PublicPairs::from_table(1, 1, &[0.0; 3]),
        Err(AbcError::LengthMismatch { .. })
    ));
    assert!(matches!(
        PublicPairs::concat(&[]),
        Err(AbcError::Empty { .. })
    ));
    let a = PublicPairs::from_parts(1, 1, vec![0.0], vec![0.0]).unwrap();
    let b = PublicPairs::from_parts(1, 2, vec![0.0], vec![0.0, 1.0]).unwrap();
    assert!(matches!(
        PublicPairs::concat(&[a, b]),
        Err(AbcError::LengthMismatch { .. })
    ));
}

/// A weighted 2-D population around (1, −1).
fn population() -> Population {
    let n = 200;
    let mut rng = SimStream::new(11, 0);
    let mut particles = Vec::with_capacity(2 * n);
    let mut log_w = Vec::with_capacity(n);
    for _ in 0..n {
        let a = 1.0 + 0.3 * dpinfer_simulators::dist::std_normal(&mut rng);
        let b = -1.0 + 0.5 * dpinfer_simulators::dist::std_normal(&mut rng) + 0.2 * a;
        particles.extend_from_slice(&[a, b]);
        log_w.push(-0.5 * a * a);
    }
    let mut weights = vec![0.0; n];
    dpinfer_abc::weights::normalize_log_weights(&log_w, &mut weights).unwrap();
    let ess = dpinfer_abc::weights::effective_sample_size(&weights).unwrap();
    Population {
        generation: 3,
        tolerance: 0.5,
        dim: 2,
        particles,
        weights,
        ess,
        proposals: 1000,
    }
}

/// Independent prior: θ₁, θ₂ iid Uniform(−5, 5).
#[derive(Clone, Copy, Debug)]
struct Box2;

impl Prior for Box2 {
    fn dim(&self) -> usize {
        2
    }
    fn sample<R: rand_core::Rng + ?Sized>(
        &self,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), dpinfer_simulators::SimError> {
        let u = Uniform::new(-5.0, 5.0).unwrap();
        u.sample(rng, &mut out[..1])?;
        u.sample(rng, &mut out[1..])
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if self.in_support(theta) {
            -2.0 * 10f64.ln()
        } else {
            f64::NEG_INFINITY
        }
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        theta.iter().all(|t| (-5.0..=5.0).contains(t))
    }
}

/// A 2-D prior with an empty support (never hit by a kernel proposal).
#[derive(Clone, Copy, Debug)]
struct Nowhere;

impl Prior for Nowhere {
    fn dim(&self) -> usize {
        2
    }
    fn sample<R: rand_core::Rng + ?Sized>(
        &self,
        _: &mut R,
        _: &mut [f64],
    ) -> Result<(), dpinfer_simulators::SimError> {
        Err(dpinfer_simulators::SimError::Exhausted)
    }
    fn ln_density(&self, _: &[f64]) -> f64 {
        f64::NEG_INFINITY
    }
    fn in_support(&self, _: &[f64]) -> bool {
        false
    }
}

#[test]
fn pmc_generation_selects_the_nearest_and_weights_as_beaumont() {
    let pop = population();
    let kernel = PmcKernel::new(&pop).unwrap();
    assert_eq!(kernel.generation(), 3);
    let prior = Box2;
    let proposal = Proposal::Kernel {
        prior: &prior,
        kernel: &kernel,
    };
    assert_eq!(proposal.generation(), 4);
    let pairs = PublicPairs::simulate(&proposal, &Rowless(&noisy2()), 9, 0..2000).unwrap();
    assert!((0..pairs.len()).all(|i| prior.in_support(pairs.theta(i))));
    // Row j of generation 4 is the row's stream in generation 4's domain.
    let mut rng = SimStream::with_domain(9, pairs_domain(4), 1234);
    let mut th = [0.0; 2];
    kernel.draw_in_support(&prior, &mut rng, &mut th).unwrap();
    assert_eq!(pairs.theta(1234), th);

    let obs = [1.2, -0.8];
    let p = pmc::select(
        &prior,
        Some(&kernel),
        &pairs,
        Euclidean::new(&obs).unwrap(),
        100,
    )
    .unwrap();
    assert_eq!(
        (p.generation, p.dim, p.proposals, p.len()),
        (4, 2, 2000, 100)
    );
    p.validate().unwrap();
    // The tolerance is the 100th smallest distance; exactly the kept rows are within it.
    let d: Vec<f64> = (0..pairs.len())
        .map(|i| {
            let y = pairs.output(i);
            ((y[0] - obs[0]).powi(2) + (y[1] - obs[1]).powi(2)).sqrt()
        })
        .collect();
    let mut sorted = d.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(p.tolerance, sorted[99]);
    // Independent Beaumont weights: π(θ) / Σ_k w_k N(θ; θ_k, 2Σ_w), with Σ_w the plug-in
    // weighted covariance, the 2×2 inverse and determinant written out.
    let (w, x) = (&pop.weights, &pop.particles);
    let m: Vec<f64> = (0..2)
        .map(|c| (0..w.len()).map(|k| w[k] * x[2 * k + c]).sum())
        .collect();
    let cov = |a: usize, b: usize| -> f64 {
        2.0 * (0..w.len())
            .map(|k| w[k] * (x[2 * k + a] - m[a]) * (x[2 * k + b] - m[b]))
            .sum::<f64>()
    };
    let (s11, s12, s22) = (cov(0, 0), cov(0, 1), cov(1, 1));
    let det = s11 * s22 - s12 * s12;
    let mix = |t: &[f64]| -> f64 {
        (0..w.len())
            .map(|k| {
                let (u, v) = (t[0] - x[2 * k], t[1] - x[2 * k + 1]);
                let q = (s22 * u * u - 2.0 * s12 * u * v + s11 * v * v) / det;
                w[k] * (-0.5 * q).exp()
            })
            .sum()
    };
    let raw: Vec<f64> = p.particles.chunks_exact(2).map(|t| 1.0 / mix(t)).collect();
    let total: f64 = raw.iter().sum();
    for (got, r) in p.weights.iter().zip(&raw) {
        assert!(
            (got - r / total).abs() <= 1e-12 * (r / total),
            "{got} vs {}",
            r / total
        );
    }
    // Every kept particle is within the tolerance.
    for t in p.particles.chunks_exact(2) {
        let i = (0..pairs.len()).find(|&i| pairs.theta(i) == t).unwrap();
        let y = pairs.output(i);
        assert!(((y[0] - obs[0]).powi(2) + (y[1] - obs[1]).powi(2)).sqrt() <= p.tolerance);
    }
    // Generation 0: prior draws, uniform weights.
    let g0 =
        PublicPairs::simulate(&Proposal::Prior(&prior), &Rowless(&noisy2()), 9, 0..500).unwrap();
    let p0 = pmc::select(&prior, None, &g0, Euclidean::new(&obs).unwrap(), 50).unwrap();
    assert_eq!(p0.generation, 0);
    assert!(p0.weights.iter().all(|&w| w == 1.0 / 50.0));
    assert_eq!(p0.ess, 50.0);
}

#[test]
fn degenerate_or_inconsistent_populations_are_refused() {
    let mut pop = population();
    // Copies of one particle: no spread.
    let first = [pop.particles[0], pop.particles[1]];
    for c in pop.particles.chunks_exact_mut(2) {
        c.copy_from_slice(&first);
    }
    assert_eq!(
        PmcKernel::new(&pop).unwrap_err(),
        AbcError::DegeneratePopulation { coordinate: 0 }
    );
    // θ₂ = 3 θ₁ exactly: a linear function of the other coordinate.
    let mut pop = population();
    for c in pop.particles.chunks_exact_mut(2) {
        c[1] = 3.0 * c[0];
    }
    assert!(matches!(
        PmcKernel::new(&pop),
        Err(AbcError::DegeneratePopulation { coordinate: 1 } | AbcError::DegenerateCovariance)
    ));
    // Edited weights or ESS.
    let mut pop = population();
    pop.weights[0] += 0.1;
    assert!(PmcKernel::new(&pop).is_err());
    let mut pop = population();
    pop.ess += 1.0;
    assert!(matches!(
        pop.validate(),
        Err(AbcError::InvalidParameter { name: "ess", .. })
    ));
    let mut pop = population();
    pop.proposals = 10;
    assert!(pop.validate().is_err());
    let mut pop = population();
    pop.particles[3] = f64::NAN;
    assert!(pop.validate().is_err());
    // A prior whose support the kernel (almost) never hits.
    let pop = population();
    let kernel = PmcKernel::new(&pop).unwrap();
    let mut th = [0.0; 2];
    let mut rng = SimStream::new(1, 1);
    assert_eq!(
        kernel.draw_in_support(&Nowhere, &mut rng, &mut th),
        Err(AbcError::SupportMissed {
            tries: pmc::MAX_SUPPORT_MISSES
        })
    );
    assert!(matches!(
        kernel.draw_in_support(&Normal::new(0.0, 1.0).unwrap(), &mut rng, &mut th),
        Err(AbcError::LengthMismatch { .. })
    ));
}

#[test]
fn nearest_k_keeps_the_k_smallest_distances_ties_by_row() {
    let pp = PublicPairs::from_parts(
        1,
        1,
        vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        vec![0.5, f64::NAN, 0.1, 0.5, -0.1, 3.0],
    )
    .unwrap();
    let n = nearest(&pp, |y: &[f64]| y[0].abs(), 4).unwrap();
    assert_eq!(n.indices, vec![2, 4, 0, 3]);
    assert_eq!(n.distances, vec![0.1, 0.1, 0.5, 0.5]);
    assert_eq!(n.tolerance, 0.5);
    assert_eq!(n.thetas(&pp), vec![2.0, 4.0, 0.0, 3.0]);
    // NaN reads as +∞: last.
    let all = nearest(&pp, |y: &[f64]| y[0].abs(), 6).unwrap();
    assert_eq!(all.indices[5], 1);
    assert_eq!(all.tolerance, f64::INFINITY);
    assert!(nearest(&pp, |y: &[f64]| y[0], 0).is_err());
    assert!(nearest(&pp, |y: &[f64]| y[0], 7).is_err());
}

#[test]
fn replicas_are_one_type_and_validated() {
    assert!(BinomialReplicate::new(0, 1.0, 10.0).is_err());
    assert!(BinomialReplicate::new(10, 0.0, 10.0).is_err());
    assert!(BinomialReplicate::new(10, 1.0, f64::NAN).is_err());
    assert!(LaplaceReplicate::new(-1.0).is_err());
    // The enum draws exactly what the wrapped replica draws.
    let lap = LaplaceReplicate::new(0.7).unwrap();
    let s = [1.0, 2.0, 3.0];
    let (mut a, mut b) = ([0.0; 3], [0.0; 3]);
    lap.privatize(&s, &mut SimStream::new(3, 3), &mut a);
    Replicate::Laplace(lap).privatize(&s, &mut SimStream::new(3, 3), &mut b);
    assert_eq!(a, b);
    // None is the identity.
    None::<Replicate>.privatize(&s, &mut SimStream::new(3, 3), &mut b);
    assert_eq!(b, s);
    // Binomial(n, (I + m)/(K + 2m)) / n: mean (I + m)/(K + 2m), variance p(1−p)/n.
    let rep = BinomialReplicate::new(400, 5.0, 100.0).unwrap();
    let counts = [30.0; 1];
    let p = (30.0 + 5.0) / (100.0 + 10.0);
    let draws = 20_000;
    let mut rng = SimStream::new(8, 0);
    let mut sum = 0.0;
    let mut out = [0.0];
    for _ in 0..draws {
        rep.privatize(&counts, &mut rng, &mut out);
        sum += out[0];
    }
    let sd_mean = (p * (1.0 - p) / 400.0 / f64::from(draws)).sqrt();
    // 5 sd: false failure < 6e-7.
    assert!((sum / f64::from(draws) - p).abs() < 5.0 * sd_mean);
    // Privatized = model, then the replica, from the same stream.
    let sim = Privatized::new(gaussian_mean(25.0), Some(Replicate::Laplace(lap)));
    let mut x = [0.0];
    sim.simulate(&[1.0], &mut SimStream::new(4, 4), &mut x)
        .unwrap();
    let mut rng = SimStream::new(4, 4);
    let mut y = [0.0];
    gaussian_mean(25.0)
        .simulate(&[1.0], &mut rng, &mut y)
        .unwrap();
    let mut z = [0.0];
    lap.privatize(&y, &mut rng, &mut z);
    assert_eq!(x, z);
}

#[cfg(feature = "parallel")]
#[test]
fn parallel_tables_and_pmc_generations_do_not_depend_on_the_thread_count() {
    let prior = Box2;
    let pop = population();
    let kernel = PmcKernel::new(&pop).unwrap();
    let seq0 =
        PublicPairs::simulate(&Proposal::Prior(&prior), &Rowless(&noisy2()), 2, 100..3100).unwrap();
    let proposal = Proposal::Kernel {
        prior: &prior,
        kernel: &kernel,
    };
    let seq4 = PublicPairs::simulate(&proposal, &Rowless(&noisy2()), 2, 100..3100).unwrap();
    for threads in [1, 2, 7] {
        let (p0, p4) = common::on_threads(threads, || {
            (
                PublicPairs::simulate_parallel(
                    &Proposal::Prior(&prior),
                    &Rowless(&noisy2()),
                    2,
                    100..3100,
                )
                .unwrap(),
                PublicPairs::simulate_parallel(&proposal, &Rowless(&noisy2()), 2, 100..3100)
                    .unwrap(),
            )
        });
        assert_eq!(bits(p0.thetas()), bits(seq0.thetas()), "{threads} threads");
        assert_eq!(
            bits(p0.outputs()),
            bits(seq0.outputs()),
            "{threads} threads"
        );
        assert_eq!(bits(p4.thetas()), bits(seq4.thetas()), "{threads} threads");
        assert_eq!(
            bits(p4.outputs()),
            bits(seq4.outputs()),
            "{threads} threads"
        );
        let r = common::on_threads(threads, || {
            PublicPairs::generate_range_parallel(&prior, &noisy2(), 2, 100..3100).unwrap()
        });
        assert_eq!(r, seq0, "{threads} threads");
    }
}

#[test]
fn pmc_settings_own_their_defaults_and_checks() {
    let d = pmc::PmcSettings::default();
    assert_eq!(
        (d.particles, d.generations, d.final_tolerance),
        (500, 5, 0.0)
    );
    d.validate().unwrap();
    let bad = |f: fn(&mut pmc::PmcSettings)| {
        let mut s = pmc::PmcSettings::default();
        f(&mut s);
        s.validate().unwrap_err()
    };
    assert!(matches!(
        bad(|s| s.particles = 1),
        AbcError::InvalidCount {
            name: "particles",
            ..
        }
    ));
    assert!(matches!(
        bad(|s| s.particles = 10_001),
        AbcError::InvalidCount {
            name: "particles",
            ..
        }
    ));
    assert!(matches!(
        bad(|s| s.generations = 0),
        AbcError::InvalidCount {
            name: "generations",
            ..
        }
    ));
    assert!(matches!(
        bad(|s| s.final_tolerance = f64::NAN),
        AbcError::InvalidParameter { .. }
    ));
    let mut p = population();
    let s = pmc::PmcSettings {
        final_tolerance: 0.4,
        ..d
    };
    p.generation = 1;
    assert!(!s.done_after(&p)); // tolerance 0.5 > 0.4, generation 2 of 5 next
    p.tolerance = 0.4;
    assert!(s.done_after(&p));
    p.tolerance = 0.5;
    p.generation = 4;
    assert!(s.done_after(&p)); // the fifth generation was the last
}
