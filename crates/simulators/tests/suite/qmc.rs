//! Scrambled Sobol points and the inner-integral estimator (`qmc`).
//!
//! Known answers: the plain sequence against SciPy's independent implementation of the same
//! Joe–Kuo table (`tests/data/sobol_joe_kuo.py`) and the first points published by Joe & Kuo.
//! Statistical checks (seeded streams), each at α = 1e-6: KS of scrambled coordinates over
//! independent scrambles (3 checks), z-tests of the mean over scrambles (2 checks); file-wide
//! false-failure rate below 5e-6. The net property and the range (0, 1) are exact.

use crate::common::{Z2_1E6, ks_crit_1e6, ks_stat, mean_var};
use dpinfer_simulators::qmc::{InnerIntegral, MAX_DIM, Sampling, Sobol};
use dpinfer_simulators::{SimError, SimStream};

/// The stream domain these tests draw scrambles from.
const DOMAIN: u64 = 0x51_0B01;

#[test]
fn plain_sequence_matches_the_published_points() {
    // Joe & Kuo's first points (dimensions 1–3), Gray-code order.
    let published = [
        [0.0, 0.0, 0.0],
        [0.5, 0.5, 0.5],
        [0.75, 0.25, 0.25],
        [0.25, 0.75, 0.75],
        [0.375, 0.375, 0.625],
        [0.875, 0.875, 0.125],
        [0.625, 0.125, 0.875],
        [0.125, 0.625, 0.375],
    ];
    let mut seq = Sobol::new(3).unwrap();
    let mut p = [0.0; 3];
    for want in published {
        seq.next_into(&mut p).unwrap();
        assert_eq!(p, want);
    }
}

#[test]
fn plain_sequence_matches_scipy_in_32_dimensions() {
    let text = include_str!("../data/sobol_joe_kuo.txt");
    let mut seq = Sobol::new(MAX_DIM).unwrap();
    let mut p = [0.0; MAX_DIM];
    let mut lines = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut it = line.split_whitespace().map(|t| t.parse::<u64>().unwrap());
        let index = it.next().unwrap();
        let want: Vec<f64> = it.map(|k| k as f64 / 4_294_967_296.0).collect();
        assert_eq!(want.len(), MAX_DIM);
        if index != seq.position() {
            seq.seek(index).unwrap();
        }
        seq.next_into(&mut p).unwrap();
        assert_eq!(p.as_slice(), want.as_slice(), "index {index}");
        lines += 1;
    }
    assert_eq!(lines, 64 + 3 * 26 + 2);
    // After the last point (2³² − 1) the sequence is exhausted.
    assert_eq!(seq.next_into(&mut p), Err(SimError::Exhausted));
}

#[test]
fn seek_equals_stepping() {
    let mut stream = SimStream::with_domain(3, DOMAIN, 0);
    let mut a = Sobol::scrambled(5, &mut stream).unwrap();
    let mut b = a.clone();
    let (mut pa, mut pb) = ([0.0; 5], [0.0; 5]);
    for _ in 0..1000 {
        a.next_into(&mut pa).unwrap();
    }
    b.seek(1000).unwrap();
    for i in 0..3 {
        a.next_into(&mut pa).unwrap();
        b.next_into(&mut pb).unwrap();
        assert_eq!(pa, pb, "point {}", 1000 + i);
    }
    b.seek(0).unwrap();
    let mut c = Sobol::scrambled(5, &mut SimStream::with_domain(3, DOMAIN, 0)).unwrap();
    b.next_into(&mut pb).unwrap();
    c.next_into(&mut pa).unwrap();
    assert_eq!(pa, pb);
    assert!(b.seek((1 << 32) + 1).is_err());
}

#[test]
fn scrambled_points_are_nets_inside_the_open_cube() {
    // Every coordinate of the first 2^m points has exactly one point per interval of width
    // 2^-m (m = 1…10), and no point is 0 or 1, for several scrambles in 32 dimensions.
    for job in 0..4 {
        let mut stream = SimStream::with_domain(11, DOMAIN, job);
        let mut seq = Sobol::scrambled(MAX_DIM, &mut stream).unwrap();
        let n = 1 << 10;
        let mut pts = vec![[0.0; MAX_DIM]; n];
        for p in &mut pts {
            seq.next_into(p).unwrap();
            assert!(p.iter().all(|&x| x > 0.0 && x < 1.0));
        }
        for m in 1..=10 {
            let k = 1usize << m;
            for d in 0..MAX_DIM {
                let mut hit = vec![0u32; k];
                for p in &pts[..k] {
                    hit[(p[d] * k as f64) as usize] += 1;
                }
                assert!(hit.iter().all(|&h| h == 1), "job {job}, m {m}, dim {d}");
            }
        }
    }
}

#[test]
fn scrambled_coordinates_are_uniform() {
    // Point index 0, 1 and 77 of 2000 independent scrambles (one stream job each), in
    // dimensions 1, 10 and 32: KS against U(0, 1).
    let reps = 2000;
    for (index, d) in [(0u64, 1usize), (1, 10), (77, 32)] {
        let mut xs: Vec<f64> = (0..reps)
            .map(|job| {
                let mut s = SimStream::with_domain(21, DOMAIN, job);
                let mut seq = Sobol::scrambled(d, &mut s).unwrap();
                seq.seek(index).unwrap();
                let mut p = vec![0.0; d];
                seq.next_into(&mut p).unwrap();
                p[d - 1]
            })
            .collect();
        let ks = ks_stat(&mut xs, |x| x);
        assert!(
            ks < ks_crit_1e6(reps as usize),
            "index {index} dim {d}: {ks}"
        );
    }
}

#[test]
fn estimator_is_unbiased_over_scrambles() {
    // ∫ Π_d (½ + u_d) = 1, a product integrand in 10 dimensions, and ∫ Σ_d u_d² = 10/3: the mean of 1500 independent RQMC (M = 64) and MC estimates is
    // within a 1e-6 two-sided z-bound of the truth.
    let r = 10;
    let reps = 1500;
    for sampling in [Sampling::Rqmc, Sampling::MonteCarlo] {
        let est = InnerIntegral::new(sampling, 64, r).unwrap();
        let run = |g: &dyn Fn(&[f64]) -> f64, domain: u64| -> Vec<f64> {
            let mut y = vec![0.0; r];
            (0..reps)
                .map(|job| {
                    let mut s = SimStream::with_domain(31, domain, job);
                    est.estimate(
                        &mut s,
                        &mut y,
                        |u, out| {
                            out.copy_from_slice(u);
                            Ok::<(), SimError>(())
                        },
                        g,
                    )
                    .unwrap()
                })
                .collect()
        };
        let product = run(&|y| y.iter().map(|u| 0.5 + u).product(), DOMAIN);
        let squares = run(&|y| y.iter().map(|u| u * u).sum(), DOMAIN + 1);
        for (name, xs, truth) in [("product", product, 1.0), ("squares", squares, 10.0 / 3.0)] {
            let (m, v) = mean_var(&xs);
            let z = (m - truth) / (v / reps as f64).sqrt();
            assert!(z.abs() < Z2_1E6, "{sampling:?} {name}: mean {m}, z {z}");
        }
    }
}

#[test]
fn estimator_is_reproducible_and_checks_its_inputs() {
    let est = InnerIntegral::new(Sampling::Rqmc, 128, 3).unwrap();
    let mut y = [0.0; 3];
    let f = |u: &[f64], out: &mut [f64]| {
        out.copy_from_slice(u);
        Ok::<(), SimError>(())
    };
    let g = |y: &[f64]| y[0] * y[1] + y[2];
    let a = est
        .estimate(&mut SimStream::with_domain(1, DOMAIN, 5), &mut y, f, g)
        .unwrap();
    let b = est
        .estimate(&mut SimStream::with_domain(1, DOMAIN, 5), &mut y, f, g)
        .unwrap();
    let c = est
        .estimate(&mut SimStream::with_domain(1, DOMAIN, 6), &mut y, f, g)
        .unwrap();
    assert_eq!(a.to_bits(), b.to_bits());
    assert_ne!(a, c);
    // τ's error is returned as is.
    let err = est.estimate(
        &mut SimStream::new(1, 0),
        &mut y,
        |_, _| Err(SimError::Degenerate { what: "tau" }),
        g,
    );
    assert_eq!(err, Err(SimError::Degenerate { what: "tau" }));
    for (m, r) in [(0, 1), (1, 0), (1, MAX_DIM + 1)] {
        assert!(matches!(
            InnerIntegral::new(Sampling::MonteCarlo, m, r),
            Err(SimError::InvalidSize { .. })
        ));
    }
    assert!(Sobol::new(0).is_err() && Sobol::new(MAX_DIM + 1).is_err());
    let mut seq = Sobol::new(2).unwrap();
    assert!(matches!(
        seq.next_into(&mut [0.0; 3]),
        Err(SimError::DimensionMismatch { .. })
    ));
}
