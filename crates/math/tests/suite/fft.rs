//! Our radix-2 FFT against `rustfft` / `realfft` (independent implementations) on
//! deterministic pseudo-random inputs, up to n = 2²⁰: relative ℓ₂ error ≤ 1e-14.
#![allow(clippy::unwrap_used, clippy::cast_precision_loss, clippy::float_cmp)]

use dpinfer_math::{Complex, fft_in_place, fft_twiddles, irfft, rfft};
use rustfft::num_complex::Complex64;

/// A small LCG (deterministic; this test needs no statistics).
fn lcg(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64) / (1u64 << 53) as f64 - 0.5
}

fn rel_l2(a: &[Complex], b: &[Complex64]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for (x, y) in a.iter().zip(b) {
        num += (x.re - y.re).powi(2) + (x.im - y.im).powi(2);
        den += y.re * y.re + y.im * y.im;
    }
    (num / den).sqrt()
}

#[test]
fn complex_matches_rustfft() {
    let mut seed = 42;
    for log_n in 0..=20 {
        let n = 1usize << log_n;
        let x: Vec<Complex> = (0..n)
            .map(|_| Complex::new(lcg(&mut seed), lcg(&mut seed)))
            .collect();
        let mut tw = vec![Complex::default(); (n / 2).max(1)];
        fft_twiddles(&mut tw).unwrap();
        for inverse in [false, true] {
            let mut ours = x.clone();
            fft_in_place(&mut ours, &tw, inverse).unwrap();
            let mut theirs: Vec<Complex64> = x.iter().map(|c| Complex64::new(c.re, c.im)).collect();
            let mut planner = rustfft::FftPlanner::new();
            let plan = if inverse {
                planner.plan_fft_inverse(n)
            } else {
                planner.plan_fft_forward(n)
            };
            plan.process(&mut theirs);
            let e = rel_l2(&ours, &theirs);
            assert!(e < 1e-14, "n = {n}, inverse = {inverse}: rel l2 {e:e}");
        }
    }
}

#[test]
fn real_matches_realfft_and_round_trips() {
    let mut seed = 7;
    for log_n in 1..=20 {
        let n = 1usize << log_n;
        let x: Vec<f64> = (0..n).map(|_| lcg(&mut seed)).collect();
        // One table for the largest length also serves shorter transforms (striding).
        let mut tw = vec![Complex::default(); 1 << 19];
        fft_twiddles(&mut tw).unwrap();
        let mut scratch = x.clone();
        let mut ours = vec![Complex::default(); n / 2 + 1];
        rfft(&mut scratch, &mut ours, &tw).unwrap();
        let mut planner = realfft::RealFftPlanner::<f64>::new();
        let r2c = planner.plan_fft_forward(n);
        let mut inp = x.clone();
        let mut theirs = r2c.make_output_vec();
        r2c.process(&mut inp, &mut theirs).unwrap();
        let e = rel_l2(&ours, &theirs);
        assert!(e < 1e-14, "n = {n}: rel l2 {e:e}");
        let mut back = vec![0.0; n];
        irfft(&mut ours, &mut back, &tw).unwrap();
        let err = x
            .iter()
            .zip(&back)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-14, "n = {n}: round trip {err:e}");
    }
}

#[test]
fn twiddles_are_unit_and_symmetric() {
    let mut tw = vec![Complex::default(); 1 << 12];
    fft_twiddles(&mut tw).unwrap();
    let n = 2 * tw.len();
    for (k, w) in tw.iter().enumerate() {
        assert!((w.norm_sqr() - 1.0).abs() < 4e-16);
        let a = -2.0 * core::f64::consts::PI * k as f64 / n as f64;
        assert!((w.re - a.cos()).abs() < 1e-15 && (w.im - a.sin()).abs() < 1e-15);
    }
    // cos(π/2 − x) = sin(x) exactly by construction.
    assert_eq!(tw[n / 4 - 1].re, -tw[1].im);
}
