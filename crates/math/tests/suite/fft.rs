//! Our radix-2 FFT against `rustfft` / `realfft` (independent implementations) on
//! deterministic pseudo-random inputs, up to n = 2²⁰: relative ℓ₂ error ≤ 1e-14.
#![allow(clippy::unwrap_used, clippy::cast_precision_loss, clippy::float_cmp)]

use dpinfer_math::{Complex, FftError, fft_in_place, fft_twiddles, irfft, rfft, rfft_padded};
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

fn fnv(h: &mut u64, v: f64) {
    for b in v.to_bits().to_le_bytes() {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x0100_0000_01b3);
    }
}

/// Value stability: twiddle tables, `rfft` (full and mostly-zero inputs), `irfft` and the
/// complex transforms for n = 2 … 2¹⁴ hash to the bits of the implementation before the
/// speed work of issue 30 item 2 (twiddles by symmetry, the bit-reversal fused into the
/// packing, `rfft_padded`): the FFT's speed-ups change no number.
#[test]
fn transforms_keep_their_bits() {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut seed = 2026;
    for log_n in 1..=14 {
        let n = 1usize << log_n;
        let mut tw = vec![Complex::default(); n / 2];
        fft_twiddles(&mut tw).unwrap();
        for w in &tw {
            fnv(&mut h, w.re);
            fnv(&mut h, w.im);
        }
        for used in [(n / 8 + 1).min(n), n] {
            let mut x: Vec<f64> = (0..n)
                .map(|i| if i < used { lcg(&mut seed) } else { 0.0 })
                .collect();
            let short = x[..used].to_vec();
            let mut out = vec![Complex::default(); n / 2 + 1];
            rfft(&mut x, &mut out, &tw).unwrap();
            // The zero-padded transform: the same bits from the short input.
            let mut padded = vec![Complex::default(); n / 2 + 1];
            rfft_padded(&short, &mut padded, &tw).unwrap();
            for (a, b) in out.iter().zip(&padded) {
                assert_eq!(
                    (a.re.to_bits(), a.im.to_bits()),
                    (b.re.to_bits(), b.im.to_bits())
                );
            }
            for z in &out {
                fnv(&mut h, z.re);
                fnv(&mut h, z.im);
            }
            let mut back = vec![0.0; n];
            irfft(&mut out, &mut back, &tw).unwrap();
            for v in &back {
                fnv(&mut h, *v);
            }
        }
        let mut c: Vec<Complex> = (0..n / 2)
            .map(|_| Complex::new(lcg(&mut seed), lcg(&mut seed)))
            .collect();
        for inverse in [false, true] {
            fft_in_place(&mut c, &tw, inverse).unwrap();
            for z in &c {
                fnv(&mut h, z.re);
                fnv(&mut h, z.im);
            }
        }
    }
    assert_eq!(h, 0x197c_d525_62f7_a765, "FFT bits changed: {h:#018x}");
}

/// `rfft_padded` equals `rfft` on the zero-padded input, bit for bit, for every input
/// length 0 … n (each sparsity level of the bit-reversed packing), with a table for a
/// longer transform (striding), and refuses bad lengths.
#[test]
fn rfft_padded_equals_rfft_of_the_padded_input() {
    let mut seed = 11;
    let mut tw = vec![Complex::default(); 1 << 9];
    fft_twiddles(&mut tw).unwrap();
    for log_n in 1..=9 {
        let n = 1usize << log_n;
        for used in 0..=n {
            let short: Vec<f64> = (0..used).map(|_| lcg(&mut seed)).collect();
            let mut x = short.clone();
            x.resize(n, 0.0);
            let mut want = vec![Complex::default(); n / 2 + 1];
            rfft(&mut x, &mut want, &tw).unwrap();
            let mut got = vec![Complex::new(9.0, 9.0); n / 2 + 1];
            rfft_padded(&short, &mut got, &tw).unwrap();
            for (a, b) in want.iter().zip(&got) {
                assert_eq!(
                    (a.re.to_bits(), a.im.to_bits()),
                    (b.re.to_bits(), b.im.to_bits())
                );
            }
        }
    }
    let mut out = vec![Complex::default(); 5];
    assert_eq!(
        rfft_padded(&[0.0; 9], &mut out, &tw),
        Err(FftError::BadLength)
    );
    for len in [0, 1, 4] {
        let mut out = vec![Complex::default(); len];
        assert_eq!(rfft_padded(&[1.0], &mut out, &tw), Err(FftError::BadLength));
    }
    let mut out = vec![Complex::default(); (1 << 11) + 1];
    assert_eq!(
        rfft_padded(&[1.0], &mut out, &tw),
        Err(FftError::BadTwiddles)
    );
}
