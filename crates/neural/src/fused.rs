//! The rational-quadratic spline of [`crate::spline::rq_spline`] as **one** tensor operation
//! (a candle `CustomOp2` on CPU buffers): one pass per element forward and one backward, no
//! tensor per intermediate. The forward repeats the tensor version's arithmetic operation for
//! operation (the same `f32` roundings in the same order: softmax, floored bin sizes, cumulative
//! knots, bin search, the rational-quadratic formula, the identity tails), so its outputs are
//! bit-identical to it; the backward is the analytic gradient, which rounds differently from
//! the tensor library's autodiff (hence [`crate::SplineImpl`]).

use crate::net::with_slice;
use crate::spline::{MIN_BIN_HEIGHT, MIN_BIN_WIDTH, MIN_DERIVATIVE};
use candle_core::{CpuStorage, CustomOp2, Layout, Result, Shape, Tensor, bail};
use core::ops::{Add, Div, Mul, Neg, Sub};

/// The float operations the spline needs, for `f32` (training) and `f64` (tests).
trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    /// The cast the tensor library applies to a scalar operand (`T::from_f64`).
    fn of(v: f64) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    fn max(self, other: Self) -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[allow(clippy::cast_possible_truncation)]
            fn of(v: f64) -> Self {
                v as $t
            }
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
        }
    };
}
real!(f32);
real!(f64);

/// The scalars of one spline, cast as the tensor version casts them.
#[derive(Clone, Copy)]
struct Consts<T> {
    /// `1/√hidden`, the widths' and heights' scale.
    norm: T,
    /// `1 − min·K` and `min` of the widths and heights.
    w_scale: T,
    w_min: T,
    h_scale: T,
    h_min: T,
    d_min: T,
    /// `2B`, `−B` (the knots' affine map) and `B`.
    two_b: T,
    minus_b: T,
    b: T,
}

impl<T: Real> Consts<T> {
    #[allow(clippy::cast_precision_loss)]
    fn new(bins: usize, tail_bound: f64, hidden: usize) -> Self {
        let k = bins as f64;
        Self {
            norm: T::of((hidden as f64).sqrt().recip()),
            w_scale: T::of(1.0 - MIN_BIN_WIDTH * k),
            w_min: T::of(MIN_BIN_WIDTH),
            h_scale: T::of(1.0 - MIN_BIN_HEIGHT * k),
            h_min: T::of(MIN_BIN_HEIGHT),
            d_min: T::of(MIN_DERIVATIVE),
            two_b: T::of(2.0 * tail_bound),
            minus_b: T::of(-tail_bound),
            b: T::of(tail_bound),
        }
    }
}

/// One element's spline: knots `cum` (K + 1), bin sizes (K), the softmax (K) of both axes and
/// the knot derivatives `d` (K + 1; only those of the element's bin are set). Buffers
/// allocated once per operation.
struct Spline<T> {
    bins: usize,
    smw: Vec<T>,
    cumw: Vec<T>,
    widths: Vec<T>,
    smh: Vec<T>,
    cumh: Vec<T>,
    heights: Vec<T>,
    d: Vec<T>,
}

impl<T: Real> Spline<T> {
    fn new(bins: usize) -> Self {
        Self {
            bins,
            smw: vec![T::ZERO; bins],
            cumw: vec![T::ZERO; bins + 1],
            widths: vec![T::ZERO; bins],
            smh: vec![T::ZERO; bins],
            cumh: vec![T::ZERO; bins + 1],
            heights: vec![T::ZERO; bins],
            d: vec![T::ONE; bins + 1],
        }
    }

    /// Fills the spline from one element's `3K − 1` unnormalised parameters.
    fn set(&mut self, p: &[T], c: &Consts<T>) {
        let k = self.bins;
        knots(
            &p[..k],
            c.norm,
            c.w_scale,
            c.w_min,
            c,
            &mut self.smw,
            &mut self.cumw,
            &mut self.widths,
        );
        knots(
            &p[k..2 * k],
            c.norm,
            c.h_scale,
            c.h_min,
            c,
            &mut self.smh,
            &mut self.cumh,
            &mut self.heights,
        );
    }

    /// Sets the knot derivatives `d[b]` and `d[b + 1]` (the others are not read) from the
    /// unnormalised `p`: `softplus(u) + min` as the tensor version, `relu(u) + ln(exp(−|u|)·1
    /// + 1)`, then `·1 + min`; the ends are 1.
    fn set_derivatives(&mut self, p: &[T], b: usize, c: &Consts<T>) {
        let k = self.bins;
        for j in b..=b + 1 {
            self.d[j] = if j == 0 || j == k {
                T::ONE
            } else {
                let u = p[2 * k + j - 1];
                let sp = u.max(T::ZERO) + ((-u.abs()).exp() * T::ONE + T::ONE).ln();
                sp * T::ONE + c.d_min
            };
        }
    }

    /// The bin of `v` on the knots `cum`: the number of interior knots `≤ v`.
    fn bin(&self, v: T, cum: &[T]) -> usize {
        cum[1..self.bins].iter().filter(|&&knot| v >= knot).count()
    }
}

/// Softmax of `u·norm`, floored sizes `sm·scale + min`, their cumulative sums mapped to
/// `[−B, B]` (ends exact) and the bin sizes as differences of knots: `knots` of
/// [`crate::spline`], operation for operation.
#[allow(clippy::too_many_arguments)]
fn knots<T: Real>(
    u: &[T],
    norm: T,
    scale: T,
    min: T,
    c: &Consts<T>,
    sm: &mut [T],
    cum: &mut [T],
    sizes: &mut [T],
) {
    let k = u.len();
    for (s, &v) in sm.iter_mut().zip(u) {
        *s = v * norm + T::ZERO;
    }
    let mut m = sm[0];
    for &v in &sm[1..] {
        m = m.max(v);
    }
    let mut total = T::ZERO;
    for s in sm.iter_mut() {
        *s = (*s - m).exp();
        total = total + *s;
    }
    for s in sm.iter_mut() {
        *s = *s / total;
    }
    cum[0] = -c.b;
    let mut acc = T::ZERO;
    for i in 0..k - 1 {
        acc = acc + (sm[i] * scale + min);
        cum[i + 1] = acc * c.two_b + c.minus_b;
    }
    cum[k] = c.b;
    for i in 0..k {
        sizes[i] = cum[i + 1] - cum[i];
    }
}

/// The spline at `x` (clamped to `[−B, B]`) in bin `b`: `(y, log dy/dx)`, or the inverse.
fn eval<T: Real>(s: &Spline<T>, xc: T, b: usize, inverse: bool) -> (T, T) {
    let two = T::of(2.0);
    let (cw, w, ch, h) = (s.cumw[b], s.widths[b], s.cumh[b], s.heights[b]);
    let (d0, d1) = (s.d[b], s.d[b + 1]);
    let delta = h / w;
    let sum_d = (d0 + d1) - (delta * two + T::ZERO);
    if inverse {
        let dy = xc - ch;
        let a = dy * sum_d + h * (delta - d0);
        let bb = h * d0 - dy * sum_d;
        let cc = -delta * dy;
        let disc = (bb * bb - ((a * cc) * T::of(4.0) + T::ZERO)).max(T::ZERO);
        let root = (cc * two + T::ZERO) / (-bb - disc.sqrt());
        let out = root * w + cw;
        let om = -root * T::ONE + T::ONE;
        let tt = root * om;
        let denom = delta + sum_d * tt;
        let num = (delta * delta)
            * ((d1 * (root * root) + ((delta * tt) * two + T::ZERO)) + d0 * (om * om));
        let ld = -(num.ln() - (denom.ln() * two + T::ZERO));
        (out, ld)
    } else {
        let theta = (xc - cw) / w;
        let om = -theta * T::ONE + T::ONE;
        let tt = theta * om;
        let num = h * (delta * (theta * theta) + d0 * tt);
        let denom = delta + sum_d * tt;
        let out = ch + num / denom;
        let dnum = (delta * delta)
            * ((d1 * (theta * theta) + ((delta * tt) * two + T::ZERO)) + d0 * (om * om));
        let ld = dnum.ln() - (denom.ln() * two + T::ZERO);
        (out, ld)
    }
}

/// Gradients of one inside element's `gy·y + gl·log dy/dx` (forward direction) with respect to
/// `x` and the spline's bin quantities.
struct BinGrad<T> {
    x: T,
    cw: T,
    w: T,
    ch: T,
    h: T,
    d0: T,
    d1: T,
}

fn eval_grad<T: Real>(s: &Spline<T>, xc: T, b: usize, gy: T, gl: T) -> BinGrad<T> {
    let two = T::of(2.0);
    let (cw, w, h) = (s.cumw[b], s.widths[b], s.heights[b]);
    let (d0, d1) = (s.d[b], s.d[b + 1]);
    let theta = (xc - cw) / w;
    let delta = h / w;
    let om = T::ONE - theta;
    let tau = theta * om;
    let sum = d0 + d1 - two * delta;
    let bq = delta * theta * theta + d0 * tau;
    let num = h * bq;
    let den = delta + sum * tau;
    let aq = d1 * theta * theta + two * delta * tau + d0 * om * om;
    // y = ch + num/den; ld = ln(δ²·aq) − 2 ln den
    let g_num = gy / den;
    let g_den = -gy * num / (den * den) - two * gl / den;
    let g_a = gl / aq;
    let mut g_delta = two * gl / delta;
    let mut g_d0 = g_a * om * om;
    let mut g_d1 = g_a * theta * theta;
    let mut g_theta = g_a * (two * d1 * theta - two * d0 * om);
    let mut g_tau = g_a * two * delta;
    g_delta = g_delta + g_a * two * tau;
    // den = δ + sum·τ
    g_delta = g_delta + g_den;
    let g_sum = g_den * tau;
    g_tau = g_tau + g_den * sum;
    // num = h·bq, bq = δθ² + d0·τ
    let mut g_h = g_num * bq;
    let g_bq = g_num * h;
    g_delta = g_delta + g_bq * theta * theta;
    g_theta = g_theta + g_bq * two * delta * theta;
    g_d0 = g_d0 + g_bq * tau;
    g_tau = g_tau + g_bq * d0;
    // sum = d0 + d1 − 2δ
    g_d0 = g_d0 + g_sum;
    g_d1 = g_d1 + g_sum;
    g_delta = g_delta - two * g_sum;
    // τ = θ(1 − θ)
    g_theta = g_theta + g_tau * (T::ONE - two * theta);
    // δ = h / w, θ = (x − cw) / w
    g_h = g_h + g_delta / w;
    let g_w = -g_delta * delta / w - g_theta * theta / w;
    BinGrad {
        x: g_theta / w,
        cw: -g_theta / w,
        w: g_w,
        ch: gy,
        h: g_h,
        d0: g_d0,
        d1: g_d1,
    }
}

/// Gradient of the unnormalised sizes `u` (K) from the gradients of the knots `g_cum`
/// (K + 1; the ends are constants): through the cumulative sum, the floor and the softmax.
fn knots_grad<T: Real>(sm: &[T], g_cum: &[T], scale: T, two_b: T, norm: T, out: &mut [T]) {
    let k = sm.len();
    // cum[i + 1] = acc_i·2B − B with acc_i = Σ_{m ≤ i} size_m (i < K − 1)
    let mut suffix = T::ZERO;
    let mut dot = T::ZERO;
    for m in (0..k).rev() {
        if m + 1 < k {
            suffix = suffix + g_cum[m + 1] * two_b;
        }
        // d size_m / d sm_m = scale
        out[m] = suffix * scale;
        dot = dot + sm[m] * out[m];
    }
    for m in 0..k {
        out[m] = sm[m] * (out[m] - dot) * norm;
    }
}

/// The fused spline as a candle operation on `x` `(n, t)` and `params` `(n, t, 3K − 1)`; the
/// result is `(2, n, t)`: outputs, then `log |dy/dx|` (`log |dx/dy|` for the inverse).
struct RqSpline {
    bins: usize,
    tail_bound: f64,
    hidden: usize,
    inverse: bool,
}

impl RqSpline {
    fn forward<T: Real>(&self, x: &[T], p: &[T]) -> Vec<T> {
        let c = Consts::<T>::new(self.bins, self.tail_bound, self.hidden);
        let np = 3 * self.bins - 1;
        let n = x.len();
        let mut out = vec![T::ZERO; 2 * n];
        let mut s = Spline::new(self.bins);
        let (ys, lds) = out.split_at_mut(n);
        for (((&xi, pi), y), ld) in x
            .iter()
            .zip(p.chunks_exact(np))
            .zip(ys.iter_mut())
            .zip(lds.iter_mut())
        {
            s.set(pi, &c);
            let inside = if xi >= -c.b && xi <= c.b {
                T::ONE
            } else {
                T::ZERO
            };
            // clamp as maximum then minimum
            let lo = if xi < -c.b { -c.b } else { xi };
            let xc = if lo > c.b { c.b } else { lo };
            let b = s.bin(xc, if self.inverse { &s.cumh } else { &s.cumw });
            s.set_derivatives(pi, b, &c);
            let (v, l) = eval(&s, xc, b, self.inverse);
            let outside = -inside * T::ONE + T::ONE;
            *y = inside * v + outside * xi;
            *ld = inside * l;
        }
        out
    }

    /// `(∂/∂x, ∂/∂params)` of `Σ gy·y + gl·log|dy/dx|` (forward direction only).
    fn backward<T: Real>(&self, x: &[T], p: &[T], g: &[T]) -> (Vec<T>, Vec<T>) {
        let c = Consts::<T>::new(self.bins, self.tail_bound, self.hidden);
        let k = self.bins;
        let np = 3 * k - 1;
        let n = x.len();
        let (gys, gls) = g.split_at(n);
        let mut gx = vec![T::ZERO; n];
        let mut gp = vec![T::ZERO; n * np];
        let mut s = Spline::new(k);
        let mut g_cumw = vec![T::ZERO; k + 1];
        let mut g_cumh = vec![T::ZERO; k + 1];
        for (i, ((&xi, pi), gpi)) in x
            .iter()
            .zip(p.chunks_exact(np))
            .zip(gp.chunks_exact_mut(np))
            .enumerate()
        {
            if !(xi >= -c.b && xi <= c.b) {
                gx[i] = gys[i]; // identity tails; parameters unused
                continue;
            }
            s.set(pi, &c);
            let b = s.bin(xi, &s.cumw);
            s.set_derivatives(pi, b, &c);
            let bg = eval_grad(&s, xi, b, gys[i], gls[i]);
            gx[i] = bg.x;
            g_cumw.iter_mut().for_each(|v| *v = T::ZERO);
            g_cumh.iter_mut().for_each(|v| *v = T::ZERO);
            // cw = cum[b], w = cum[b + 1] − cum[b]; the same for the heights
            g_cumw[b] = bg.cw - bg.w;
            g_cumw[b + 1] = bg.w;
            g_cumh[b] = bg.ch - bg.h;
            g_cumh[b + 1] = bg.h;
            let (gw, rest) = gpi.split_at_mut(k);
            let (gh, gd) = rest.split_at_mut(k);
            knots_grad(&s.smw, &g_cumw, c.w_scale, c.two_b, c.norm, gw);
            knots_grad(&s.smh, &g_cumh, c.h_scale, c.two_b, c.norm, gh);
            // d_j = softplus(u_{j−1}) + min for j = 1..K−1: d softplus = sigmoid
            for (j, g) in gd.iter_mut().enumerate() {
                let gdj = if j + 1 == b {
                    bg.d0
                } else if j == b {
                    bg.d1
                } else {
                    continue;
                };
                let u = pi[2 * k + j];
                *g = gdj / (T::ONE + (-u).exp());
            }
        }
        (gx, gp)
    }
}

fn slice<'a, T>(v: &'a [T], l: &Layout, name: &str) -> Result<&'a [T]> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&v[a..b]),
        None => bail!("rq-spline: {name} is not contiguous"),
    }
}

impl CustomOp2 for RqSpline {
    fn name(&self) -> &'static str {
        "rq-spline"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (n, t) = l1.shape().dims2()?;
        if l2.shape().dims() != [n, t, 3 * self.bins - 1] {
            bail!(
                "rq-spline: params {:?} for x ({n}, {t}) and {} bins",
                l2.shape(),
                self.bins
            );
        }
        let out = match (s1, s2) {
            (CpuStorage::F32(x), CpuStorage::F32(p)) => {
                CpuStorage::F32(self.forward(slice(x, l1, "x")?, slice(p, l2, "params")?))
            }
            (CpuStorage::F64(x), CpuStorage::F64(p)) => {
                CpuStorage::F64(self.forward(slice(x, l1, "x")?, slice(p, l2, "params")?))
            }
            _ => bail!("rq-spline: x and params must both be f32 or both f64"),
        };
        Ok((out, Shape::from((2, n, t))))
    }

    fn bwd(
        &self,
        x: &Tensor,
        p: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        if self.inverse {
            bail!("rq-spline: the inverse has no backward pass");
        }
        fn go<T: Real + candle_core::WithDType>(
            op: &RqSpline,
            x: &Tensor,
            p: &Tensor,
            g: &Tensor,
        ) -> Result<(Tensor, Tensor)> {
            let (gx, gp) = with_slice::<T, _>(x, |xs| {
                with_slice::<T, _>(p, |ps| with_slice::<T, _>(g, |gs| op.backward(xs, ps, gs)))
            })???;
            Ok((
                Tensor::from_vec(gx, x.shape(), x.device())?,
                Tensor::from_vec(gp, p.shape(), p.device())?,
            ))
        }
        let (gx, gp) = match x.dtype() {
            candle_core::DType::F32 => go::<f32>(self, x, p, g)?,
            candle_core::DType::F64 => go::<f64>(self, x, p, g)?,
            other => bail!("rq-spline: unsupported type {other:?}"),
        };
        Ok((Some(gx), Some(gp)))
    }
}

/// [`crate::spline::rq_spline`] as one fused operation: the same arguments and results, the
/// same output bits; gradients from an analytic backward pass (forward direction only).
pub(crate) fn rq_spline_fused(
    x: &Tensor,
    params: &Tensor,
    bins: usize,
    tail_bound: f64,
    hidden: usize,
    inverse: bool,
) -> Result<(Tensor, Tensor)> {
    let op = RqSpline {
        bins,
        tail_bound,
        hidden,
        inverse,
    };
    let x = x.contiguous()?;
    let params = params.contiguous()?;
    let out = if inverse {
        x.apply_op2_no_bwd(&params, &op)?
    } else {
        x.apply_op2(&params, op)?
    };
    Ok((out.get(0)?, out.get(1)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::cast_precision_loss)]
    use super::*;
    use crate::spline::rq_spline;
    use candle_core::{DType, Device, Var};
    use dpinfer_simulators::SimStream;
    use dpinfer_simulators::dist::{uniform01, ziggurat_normal};

    const BINS: usize = 10;
    const TAIL: f64 = 5.0;
    const HIDDEN: usize = 50;
    const NP: usize = 3 * BINS - 1;

    /// `n` elements with random splines (unnormalised parameters of sd `scale`); the inputs
    /// are a third uniform on `[−6, 6]` (both tails), a third exactly on a knot of their own
    /// spline (the bin edges, in the direction's axis), a third a hair beside a knot; and
    /// `±B` exactly.
    fn case(n: usize, scale: f64, inverse: bool, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = SimStream::new(20261122, seed);
        let p: Vec<f64> = (0..n * NP)
            .map(|_| scale * ziggurat_normal(&mut rng))
            .collect();
        let c = Consts::<f64>::new(BINS, TAIL, HIDDEN);
        let mut s = Spline::new(BINS);
        let x = (0..n)
            .map(|i| {
                s.set(&p[i * NP..(i + 1) * NP], &c);
                let knots = if inverse { &s.cumh } else { &s.cumw };
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let knot = knots[1 + (uniform01(&mut rng) * (BINS - 1) as f64) as usize];
                match i % 3 {
                    _ if i == 0 => -TAIL,
                    _ if i == 1 => TAIL,
                    0 => -6.0 + 12.0 * uniform01(&mut rng),
                    1 => knot,
                    _ => knot + 1e-7 * (2.0 * uniform01(&mut rng) - 1.0),
                }
            })
            .collect();
        (x, p)
    }

    fn tensors(x: &[f64], p: &[f64], dtype: DType) -> (Tensor, Tensor) {
        let n = x.len();
        let dev = Device::Cpu;
        (
            Tensor::from_vec(x.to_vec(), (n, 1), &dev)
                .unwrap()
                .to_dtype(dtype)
                .unwrap(),
            Tensor::from_vec(p.to_vec(), (n, 1, NP), &dev)
                .unwrap()
                .to_dtype(dtype)
                .unwrap(),
        )
    }

    fn bits(t: &Tensor) -> Vec<u64> {
        let t = t.flatten_all().unwrap();
        match t.dtype() {
            DType::F32 => t
                .to_vec1::<f32>()
                .unwrap()
                .iter()
                .map(|v| u64::from(v.to_bits()))
                .collect(),
            _ => t
                .to_vec1::<f64>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect(),
        }
    }

    #[test]
    fn the_fused_spline_gives_the_tensor_splines_bits() {
        for dtype in [DType::F32, DType::F64] {
            for (seed, scale) in [(1, 0.5), (2, 3.0)] {
                for inverse in [false, true] {
                    let (x, p) = case(3000, scale, inverse, seed);
                    let (x, p) = tensors(&x, &p, dtype);
                    let (y0, l0) = rq_spline(&x, &p, BINS, TAIL, HIDDEN, inverse).unwrap();
                    let (y1, l1) = rq_spline_fused(&x, &p, BINS, TAIL, HIDDEN, inverse).unwrap();
                    assert_eq!(bits(&y0), bits(&y1), "{dtype:?} {scale} inverse {inverse}");
                    assert_eq!(bits(&l0), bits(&l1), "{dtype:?} {scale} inverse {inverse}");
                }
            }
        }
    }

    /// Fixed random weights `(a, b)` of the test loss `Σ a·y + b·ld`.
    fn weights(n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut rng = SimStream::new(20261122, 99);
        let a = (0..n).map(|_| ziggurat_normal(&mut rng)).collect();
        let b = (0..n).map(|_| ziggurat_normal(&mut rng)).collect();
        (a, b)
    }

    /// Per element `a·y + b·ld` (f64, forward direction).
    fn elementwise_loss(x: &[f64], p: &[f64], a: &[f64], b: &[f64]) -> Vec<f64> {
        let (xt, pt) = tensors(x, p, DType::F64);
        let (y, ld) = rq_spline_fused(&xt, &pt, BINS, TAIL, HIDDEN, false).unwrap();
        let y: Vec<f64> = y.flatten_all().unwrap().to_vec1().unwrap();
        let ld: Vec<f64> = ld.flatten_all().unwrap().to_vec1().unwrap();
        (0..x.len()).map(|i| a[i] * y[i] + b[i] * ld[i]).collect()
    }

    /// Gradients of `Σ a·y + b·ld` by backpropagation through either implementation.
    fn grads(x: &[f64], p: &[f64], dtype: DType, fused: bool) -> (Vec<f64>, Vec<f64>) {
        let n = x.len();
        let (xt, pt) = tensors(x, p, dtype);
        let (xv, pv) = (
            Var::from_tensor(&xt).unwrap(),
            Var::from_tensor(&pt).unwrap(),
        );
        let f = if fused { rq_spline_fused } else { rq_spline };
        let (y, ld) = f(xv.as_tensor(), pv.as_tensor(), BINS, TAIL, HIDDEN, false).unwrap();
        let (a, b) = weights(n);
        let col = |v: Vec<f64>| {
            Tensor::from_vec(v, (n, 1), &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap()
        };
        let loss = ((y * col(a)).unwrap().sum_all().unwrap()
            + (ld * col(b)).unwrap().sum_all().unwrap())
        .unwrap();
        let g = loss.backward().unwrap();
        let get = |v: &Var| -> Vec<f64> {
            g.get(v.as_tensor())
                .unwrap()
                .to_dtype(DType::F64)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap()
        };
        (get(&xv), get(&pv))
    }

    /// Largest `|g − reference| / (atol + rtol·|reference|)` (≤ 1 passes).
    fn worst(g: &[f64], reference: &[f64], atol: f64, rtol: f64) -> f64 {
        assert_eq!(g.len(), reference.len());
        g.iter()
            .zip(reference)
            .map(|(v, r)| (v - r).abs() / (atol + rtol * r.abs()))
            .fold(0.0, f64::max)
    }

    /// The fused backward pass against the tensor library's autodiff of the tensor spline:
    /// in f64 to `10⁻⁹·(1 + |g|)` (the two differ only in rounding), in f32 (the training
    /// type) to `2·10⁻³·(1 + |g|)`; on uniform, knot and beside-knot inputs and both tails.
    /// At exactly `x = ±B` the autodiff halves the spline's share of `∂/∂x` (its clamp's
    /// tie rule): there the fused pass gives the one-sided derivative, checked against
    /// finite differences below, and the autodiff comparison skips `∂/∂x` of those points.
    #[test]
    fn the_fused_gradients_are_the_autodiff_gradients() {
        for (seed, scale) in [(3, 0.5), (4, 3.0)] {
            let (x, p) = case(600, scale, false, seed);
            let edge = |i: usize| (x[i].abs() - TAIL).abs() == 0.0;
            for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 2e-3)] {
                let (gx0, gp0) = grads(&x, &p, dtype, false);
                let (gx1, gp1) = grads(&x, &p, dtype, true);
                let keep = |g: &[f64]| -> Vec<f64> {
                    g.iter()
                        .enumerate()
                        .filter(|&(i, _)| !edge(i))
                        .map(|(_, v)| *v)
                        .collect()
                };
                let wx = worst(&keep(&gx1), &keep(&gx0), tol, tol);
                let wp = worst(&gp1, &gp0, tol, tol);
                assert!(
                    wx <= 1.0 && wp <= 1.0,
                    "{dtype:?} scale {scale}: x {wx}, params {wp}"
                );
            }
        }
    }

    /// The fused backward pass against central finite differences of the (f64) forward pass,
    /// every input and every parameter, to `10⁻⁶·(1 + |g|)` (`h = 10⁻⁶`: truncation
    /// `O(h²)`, rounding `≈ 10⁻¹⁶/h`), including both tails; at `x = ±B` exactly `∂/∂x` is
    /// the one-sided derivative from inside (the log-det jumps to the tails' 0 there), checked
    /// by a one-sided difference to `10⁻⁵`. Inputs on or within `10⁻⁷` of an interior knot
    /// are left out: the difference straddles two bins there (second derivatives jump).
    #[test]
    fn the_fused_gradients_are_finite_differences() {
        let h = 1e-6;
        for (seed, scale) in [(5, 0.5), (6, 3.0)] {
            let (x, p) = case(300, scale, false, seed);
            let n = x.len();
            let smooth: Vec<usize> = (0..n).filter(|&i| i < 2 || i % 3 == 0).collect();
            let (a, b) = weights(n);
            let (gx, gp) = grads(&x, &p, DType::F64, true);
            let shifted = |dx: f64, j: Option<usize>| -> Vec<f64> {
                let mut xs = x.clone();
                let mut ps = p.clone();
                match j {
                    None => xs.iter_mut().for_each(|v| *v += dx),
                    Some(j) => (0..n).for_each(|i| ps[i * NP + j] += dx),
                }
                elementwise_loss(&xs, &ps, &a, &b)
            };
            let fd = |j: Option<usize>| -> Vec<f64> {
                let (up, down) = (shifted(h, j), shifted(-h, j));
                smooth
                    .iter()
                    .map(|&i| (up[i] - down[i]) / (2.0 * h))
                    .collect()
            };
            let pick = |g: &[f64], j: Option<usize>| -> Vec<f64> {
                smooth
                    .iter()
                    .map(|&i| match j {
                        None => g[i],
                        Some(j) => g[i * NP + j],
                    })
                    .collect()
            };
            // ∂/∂x at ±B (the first two points) one-sided, from inside (O(h))
            let (up, down, mid) = (shifted(h, None), shifted(-h, None), shifted(0.0, None));
            let inward = [(mid[0] - up[0]) / -h, (mid[1] - down[1]) / h];
            let wb = worst(&gx[..2], &inward, 1e-5, 1e-5);
            assert!(
                wb <= 1.0,
                "scale {scale}: d/dx at ±B {wb}: {:?} {inward:?}",
                &gx[..2]
            );
            let fdx: Vec<f64> = fd(None)[2..].to_vec();
            let wx = worst(&pick(&gx, None)[2..], &fdx, 1e-6, 1e-6);
            assert!(wx <= 1.0, "scale {scale}: d/dx {wx}");
            for j in 0..NP {
                let wp = worst(&pick(&gp, Some(j)), &fd(Some(j)), 1e-6, 1e-6);
                assert!(wp <= 1.0, "scale {scale}: d/dparam {j}: {wp}");
            }
        }
    }
}
