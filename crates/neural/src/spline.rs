//! The monotone rational-quadratic spline of Durkan et al. (2019), batched on tensors, with
//! identity ("linear") tails outside `[-B, B]` (their App. A.1; nflows'
//! `unconstrained_rational_quadratic_spline`).

use crate::net::{softmax_last, softplus};
use candle_core::{D, DType, Result, Tensor};

/// Smallest bin width, bin height and knot derivative (nflows' defaults).
pub(crate) const MIN_BIN_WIDTH: f64 = 1e-3;
pub(crate) const MIN_BIN_HEIGHT: f64 = 1e-3;
pub(crate) const MIN_DERIVATIVE: f64 = 1e-3;

/// Applies the spline elementwise: `x` is `(n, t)`, `params` `(n, t, 3K − 1)` unnormalised
/// widths (K), heights (K) and interior derivatives (K − 1); widths and heights are divided by
/// `√hidden` first (as nflows). Returns the output and `log |dy/dx|`, both `(n, t)`;
/// `inverse` maps outputs back to inputs and returns `log |dx/dy|`.
pub(crate) fn rq_spline(
    x: &Tensor,
    params: &Tensor,
    bins: usize,
    tail_bound: f64,
    hidden: usize,
    inverse: bool,
) -> Result<(Tensor, Tensor)> {
    let (n, t) = x.dims2()?;
    #[allow(clippy::cast_precision_loss)]
    let norm = (hidden as f64).sqrt().recip();
    let uw = params.narrow(D::Minus1, 0, bins)?.affine(norm, 0.0)?;
    let uh = params.narrow(D::Minus1, bins, bins)?.affine(norm, 0.0)?;
    let ud = params.narrow(D::Minus1, 2 * bins, bins - 1)?;
    let (cumw, widths) = knots(&uw, bins, MIN_BIN_WIDTH, tail_bound)?;
    let (cumh, heights) = knots(&uh, bins, MIN_BIN_HEIGHT, tail_bound)?;
    let ones = Tensor::ones((n, t, 1), x.dtype(), x.device())?;
    let inner = (softplus(&ud)? + MIN_DERIVATIVE)?;
    let derivs = Tensor::cat(&[&ones, &inner, &ones], D::Minus1)?;

    // Inside [-B, B] the spline, outside the identity (log-det 0).
    let inside = x
        .ge(-tail_bound)?
        .to_dtype(x.dtype())?
        .mul(&x.le(tail_bound)?.to_dtype(x.dtype())?)?;
    let xc = x.clamp(-tail_bound, tail_bound)?;
    let search = if inverse { &cumh } else { &cumw };
    // bin = number of interior knots ≤ x
    let interior = search.narrow(D::Minus1, 1, bins - 1)?.detach();
    let idx = xc
        .detach()
        .unsqueeze(D::Minus1)?
        .broadcast_ge(&interior)?
        .to_dtype(x.dtype())?
        .sum_keepdim(D::Minus1)?
        .to_dtype(DType::U32)?
        .contiguous()?;
    let pick = |v: &Tensor| -> Result<Tensor> {
        v.contiguous()?.gather(&idx, D::Minus1)?.squeeze(D::Minus1)
    };
    let in_cw = pick(&cumw.narrow(D::Minus1, 0, bins)?)?;
    let in_w = pick(&widths)?;
    let in_ch = pick(&cumh.narrow(D::Minus1, 0, bins)?)?;
    let in_h = pick(&heights)?;
    let d0 = pick(&derivs.narrow(D::Minus1, 0, bins)?)?;
    let d1 = pick(&derivs.narrow(D::Minus1, 1, bins)?)?;
    let delta = (&in_h / &in_w)?;
    let sum_d = ((&d0 + &d1)? - delta.affine(2.0, 0.0)?)?;

    let (y, logdet) = if inverse {
        let dy = (&xc - &in_ch)?;
        let a = ((&dy * &sum_d)? + (&in_h * (&delta - &d0)?)?)?;
        let b = ((&in_h * &d0)? - (&dy * &sum_d)?)?;
        let c = (delta.neg()? * &dy)?;
        let disc = (b.sqr()? - (a * &c)?.affine(4.0, 0.0)?)?.relu()?;
        let root = (c.affine(2.0, 0.0)? / (b.neg()? - disc.sqrt()?)?)?;
        let out = ((&root * &in_w)? + &in_cw)?;
        let tt = (&root * (root.neg()? + 1.0)?)?;
        let denom = (&delta + (&sum_d * &tt)?)?;
        let num = (delta.sqr()?
            * ((&d1 * root.sqr()?)?
                + (&delta * &tt)?.affine(2.0, 0.0)?
                + (&d0 * (root.neg()? + 1.0)?.sqr()?)?)?)?;
        let ld = (num.log()? - denom.log()?.affine(2.0, 0.0)?)?.neg()?;
        (out, ld)
    } else {
        let theta = ((&xc - &in_cw)? / &in_w)?;
        let tt = (&theta * (theta.neg()? + 1.0)?)?;
        let num = (&in_h * ((&delta * theta.sqr()?)? + (&d0 * &tt)?)?)?;
        let denom = (&delta + (&sum_d * &tt)?)?;
        let out = (&in_ch + (num / &denom)?)?;
        let dnum = (delta.sqr()?
            * ((&d1 * theta.sqr()?)?
                + (&delta * &tt)?.affine(2.0, 0.0)?
                + (&d0 * (theta.neg()? + 1.0)?.sqr()?)?)?)?;
        let ld = (dnum.log()? - denom.log()?.affine(2.0, 0.0)?)?;
        (out, ld)
    };
    let outside = (inside.neg()? + 1.0)?;
    let y = ((&inside * y)? + (&outside * x)?)?;
    let logdet = (inside * logdet)?;
    Ok((y, logdet))
}

/// Knot positions `(n, t, K + 1)` from `-B` to `B` (both exact) and bin sizes `(n, t, K)` from
/// unnormalised sizes: softmax, floored at `min`.
fn knots(unnorm: &Tensor, bins: usize, min: f64, bound: f64) -> Result<(Tensor, Tensor)> {
    #[allow(clippy::cast_precision_loss)]
    let sizes = softmax_last(unnorm)?.affine(1.0 - min * bins as f64, min)?;
    let cum = sizes.cumsum(D::Minus1)?.affine(2.0 * bound, -bound)?;
    let dims = cum.dims().to_vec();
    let (n, t) = (dims[0], dims[1]);
    let hi = Tensor::ones((n, t, 1), cum.dtype(), cum.device())?.affine(bound, 0.0)?;
    let lo = hi.neg()?;
    let cum = Tensor::cat(&[&lo, &cum.narrow(D::Minus1, 0, bins - 1)?, &hi], D::Minus1)?;
    let sizes = (cum.narrow(D::Minus1, 1, bins)? - cum.narrow(D::Minus1, 0, bins)?)?;
    Ok((cum, sizes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::cast_precision_loss)]
    use super::*;
    use candle_core::Device;
    use dpinfer_simulators::SimStream;
    use dpinfer_simulators::dist::ziggurat_normal;

    const BINS: usize = 10;
    const TAIL: f64 = 5.0;

    /// `n` points on [-6, 6] (both tails and the interior), each with its own random spline
    /// (f64: the checks are of the formulas, not of f32 rounding).
    fn case(n: usize, scale: f64) -> (Tensor, Tensor) {
        let mut rng = SimStream::new(20261122, 7);
        let x: Vec<f64> = (0..n)
            .map(|i| -6.0 + 12.0 * (i as f64 + 0.5) / n as f64)
            .collect();
        let p: Vec<f64> = (0..n * (3 * BINS - 1))
            .map(|_| scale * ziggurat_normal(&mut rng))
            .collect();
        (
            Tensor::from_vec(x, (n, 1), &Device::Cpu).unwrap(),
            Tensor::from_vec(p, (n, 1, 3 * BINS - 1), &Device::Cpu).unwrap(),
        )
    }

    fn run(x: &Tensor, p: &Tensor, inverse: bool) -> (Vec<f64>, Vec<f64>) {
        let (y, ld) = rq_spline(x, p, BINS, TAIL, 1, inverse).unwrap();
        (
            y.flatten_all().unwrap().to_vec1().unwrap(),
            ld.flatten_all().unwrap().to_vec1().unwrap(),
        )
    }

    #[test]
    fn the_rq_spline_is_invertible_and_its_log_det_is_the_derivative() {
        for scale in [0.5, 3.0] {
            let (x, p) = case(2001, scale);
            let (y, ld) = run(&x, &p, false);
            let (back, ld_inv) = run(
                &Tensor::from_vec(y.clone(), (2001, 1), &Device::Cpu).unwrap(),
                &p,
                true,
            );
            let xs: Vec<f64> = x.flatten_all().unwrap().to_vec1().unwrap();
            for i in 0..xs.len() {
                assert!(
                    (back[i] - xs[i]).abs() < 1e-9,
                    "x {} -> {} -> {}",
                    xs[i],
                    y[i],
                    back[i]
                );
                assert!((ld[i] + ld_inv[i]).abs() < 1e-9);
                if xs[i].abs() > TAIL {
                    assert!(
                        (y[i] - xs[i]).abs() < 1e-15 && ld[i].abs() < 1e-15,
                        "tails are the identity"
                    );
                }
            }
            // central finite difference of the same spline at x ± h
            let h = 1e-6;
            let shift = |d: f64| {
                Tensor::from_vec(
                    xs.iter().map(|v| v + d).collect::<Vec<_>>(),
                    (2001, 1),
                    &Device::Cpu,
                )
                .unwrap()
            };
            let (yp, _) = run(&shift(h), &p, false);
            let (ym, _) = run(&shift(-h), &p, false);
            let mut worst: f64 = 0.0;
            for i in 0..xs.len() {
                if (xs[i].abs() - TAIL).abs() < 2.0 * h {
                    continue; // the tail boundary: one-sided derivatives agree only to O(h)
                }
                let fd = ((yp[i] - ym[i]) / (2.0 * h)).ln();
                // rounding of y (|y| ≤ 6) over 2h is ~5·10⁻¹⁰ absolute: relative to the
                // derivative e^ld, allowed with a 20× margin
                let tol = 1e-6 + 1e-8 / ld[i].exp();
                worst = worst.max((fd - ld[i]).abs() / tol);
            }
            assert!(
                worst < 1.0,
                "log-det vs finite difference: {worst} tolerances"
            );
        }
    }

    #[test]
    fn the_rq_spline_is_monotone_and_maps_the_interval_onto_itself() {
        let (x, p) = case(4001, 2.0);
        let (y, _) = run(&x, &p, false);
        // different splines per point: check the ends and a same-spline sweep instead
        let mut rng = SimStream::new(20261122, 8);
        let one: Vec<f64> = (0..3 * BINS - 1)
            .map(|_| 2.0 * ziggurat_normal(&mut rng))
            .collect();
        let n = 1001;
        let xs: Vec<f64> = (0..n)
            .map(|i| -TAIL + 2.0 * TAIL * i as f64 / (n - 1) as f64)
            .collect();
        let pp: Vec<f64> = (0..n).flat_map(|_| one.clone()).collect();
        let (ys, _) = run(
            &Tensor::from_vec(xs, (n, 1), &Device::Cpu).unwrap(),
            &Tensor::from_vec(pp, (n, 1, 3 * BINS - 1), &Device::Cpu).unwrap(),
            false,
        );
        assert!((ys[0] + TAIL).abs() < 1e-12 && (ys[n - 1] - TAIL).abs() < 1e-12);
        assert!(ys.windows(2).all(|w| w[1] > w[0]));
        assert!(y.iter().all(|v| v.is_finite()));
    }
}
