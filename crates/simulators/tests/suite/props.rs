//! "No panic on any input": every public entry point returns `Ok` with finite values or a
//! typed `Err` for arbitrary f64 (NaN, ±0, ±∞, subnormals, huge).

use crate::common::any_f64;
use dpinfer_simulators::likelihood::{affine_clip_sum, clip_sum};
use dpinfer_simulators::models::banana::{Banana, BananaSettings};
use dpinfer_simulators::models::cubic::CubicOutbreak;
use dpinfer_simulators::models::gaussian::GaussianMean;
use dpinfer_simulators::models::linreg::{LinRegSettings, LinearRegression};
use dpinfer_simulators::models::mixture::UniformMixture;
use dpinfer_simulators::models::sir::{Sir, SirSettings, SirTauLeap};
use dpinfer_simulators::{RowGradient, RowLikelihood, SimStream, Simulator};
use proptest::prelude::*;

fn finite_or_err(
    r: Result<(), dpinfer_simulators::SimError>,
    out: &[f64],
) -> Result<(), TestCaseError> {
    if r.is_ok() {
        prop_assert!(
            out.iter().all(|x| x.is_finite()),
            "non-finite output {out:?}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn simulators_never_panic(a in any_f64(), b in any_f64(), c in any_f64(), d in any_f64(), e in any_f64(), seed in any::<u64>()) {
        let mut r = SimStream::new(seed, 0);
        let mut out = vec![0.0; 64];
        let g = GaussianMean::new(8, 1.0, 0.0, 1.0).unwrap();
        finite_or_err(g.simulate(&[a], &mut r, &mut out[..8]), &out[..8])?;
        let m = UniformMixture::new(5, 16).unwrap();
        finite_or_err(m.simulate(&[a, b, c, d, e], &mut r, &mut out[..16]), &out[..16])?;
        finite_or_err(CubicOutbreak::paper().simulate(&[a, b, c, d], &mut r, &mut out[..18]), &out[..18])?;
        let s = SirSettings { population: 50, t_end: 10.0, n_obs: 4, times: None };
        finite_or_err(Sir::new(s).unwrap().simulate(&[a, b], &mut r, &mut out[..4]), &out[..4])?;
        finite_or_err(SirTauLeap::new(s, 0.5).unwrap().simulate(&[a.abs().min(1e3), b], &mut r, &mut out[..4]), &out[..4])?;
        let lr = LinearRegression::new(LinRegSettings { n: 5, ..LinRegSettings::paper() }).unwrap();
        finite_or_err(lr.simulate(&[a, b, c], &mut r, &mut out[..9]), &out[..9])?;
        let bn = Banana::new(BananaSettings { n: 4, ..BananaSettings::thesis_2d() }).unwrap();
        finite_or_err(bn.simulate(&[a, b], &mut r, &mut out[..8]), &out[..8])?;
        // wrong lengths are typed errors
        prop_assert!(g.simulate(&[a, b], &mut r, &mut out[..8]).is_err());
        prop_assert!(m.simulate(&[a], &mut r, &mut out[..16]).is_err());
    }

    #[test]
    fn settings_constructors_never_panic(a in any_f64(), b in any_f64(), n in 0usize..5, k in any::<u64>()) {
        let _ = GaussianMean::new(n, a, b, a);
        let _ = UniformMixture::new(n, n);
        let _ = CubicOutbreak::new(n, a, b);
        let _ = Sir::new(SirSettings { population: k, t_end: a, n_obs: n, times: None });
        let _ = SirTauLeap::new(SirSettings::paper(), a);
        let _ = LinearRegression::new(LinRegSettings { noise_var: a, x_bound: b, ..LinRegSettings::paper() });
        let _ = Banana::new(BananaSettings { a, b, sigma1_sq: a, dim: n, ..BananaSettings::thesis_2d() });
    }

    #[test]
    fn row_likelihoods_never_panic_or_nan(t1 in any_f64(), t2 in any_f64(), u1 in any_f64(), u2 in any_f64(), bound in any_f64(), x0 in any_f64(), first in 0usize..40, count in 0usize..40) {
        let mut x = vec![0.3; 64];
        x[5] = x0;
        let bn = Banana::new(BananaSettings { n: 32, ..BananaSettings::thesis_2d() }).unwrap();
        let data = bn.data(&x).unwrap();
        if let Ok(s) = data.clipped_log_ratio_sum(&[t1, t2], &[u1, u2], first, count, bound) {
            prop_assert!(s.sum.is_finite() && s.sum.abs() <= count as f64 * bound * (1.0 + 1e-12));
        }
        let mut acc = [0.0; 2];
        if data.clipped_grad_sum(&[t1, t2], first, count, bound, &mut acc).is_ok() {
            prop_assert!(acc.iter().all(|v| v.is_finite()));
        }
        let g = GaussianMean::new(8, 1.0, 0.0, 1.0).unwrap();
        let gd = g.likelihood(&x[..32]).unwrap();
        if let Ok(s) = gd.clipped_log_ratio_sum(&[t1], &[u1], first, count, bound) {
            prop_assert!(s.sum.is_finite());
        }
        if let Ok(s) = clip_sum(&[t1, t2, u1, x0], bound) {
            prop_assert!(s.sum.is_finite());
        }
        if let Ok(s) = affine_clip_sum(&[&x[..8], &x[8..16]], &[t1, t2], u1, bound) {
            prop_assert!(s.sum.is_finite());
        }
    }

    /// The minibatch pass equals the one-row pass row by row, bit for bit (sum, Σc², count),
    /// for the 2-D and 10-D banana fast paths and the default (Gaussian-mean) implementation,
    /// with arbitrary data values; a row index past n is an error, never a panic.
    #[test]
    fn minibatch_pass_equals_one_row_passes(
        t in proptest::collection::vec(-5.0f64..5.0, 10),
        u in proptest::collection::vec(-5.0f64..5.0, 10),
        bound in prop_oneof![Just(1e-3), Just(0.5), Just(3.0), Just(1e250)],
        wild in any_f64(),
        wild_at in 0usize..320,
        rows in proptest::collection::vec(0usize..34, 0..40),
    ) {
        for dim in [2usize, 10] {
            let n = 32;
            let bn = Banana::new(BananaSettings { n, dim, ..BananaSettings::thesis_2d() }).unwrap();
            let mut x: Vec<f64> = (0..n * dim).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
            x[wild_at % (n * dim)] = wild;
            let data = bn.data(&x).unwrap();
            check_rows(&data, &t[..dim], &u[..dim], &rows, bound, n)?;
        }
        let g = GaussianMean::new(32, 1.0, 0.0, 1.0).unwrap();
        let mut x: Vec<f64> = (0..32).map(|i| f64::from(i) * 0.1).collect();
        x[wild_at % 32] = wild;
        let gd = g.likelihood(&x).unwrap();
        check_rows(&gd, &t[..1], &u[..1], &rows, bound, 32)?;
    }
}

fn check_rows<L: RowLikelihood>(
    lik: &L,
    t: &[f64],
    u: &[f64],
    rows: &[usize],
    bound: f64,
    n: usize,
) -> Result<(), TestCaseError> {
    let got = lik.clipped_log_ratio_rows(t, u, rows, bound);
    if rows.iter().any(|&j| j >= n) {
        prop_assert!(got.is_err());
        return Ok(());
    }
    let got = got.unwrap();
    let (mut s, mut s2, mut c) = (0.0, 0.0, 0);
    for &j in rows {
        let one = lik.clipped_log_ratio_sum(t, u, j, 1, bound).unwrap();
        s += one.sum;
        s2 += one.sum * one.sum;
        c += one.clipped;
    }
    prop_assert_eq!(got.sum.to_bits(), s.to_bits());
    prop_assert_eq!(got.sum_sq.to_bits(), s2.to_bits());
    prop_assert_eq!(got.clipped, c);
    prop_assert!(got.sum.abs() <= rows.len() as f64 * bound * (1.0 + 1e-12));
    Ok(())
}
