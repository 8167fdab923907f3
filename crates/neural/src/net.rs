//! Named parameters (random initialisation or loaded from a file), linear maps and the Adam
//! optimiser, on the tensor library (candle, CPU, `f32`).

use crate::error::{NeuralError, Result, backend};
use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Tensor, Var};
use dpinfer_simulators::SimStream;
use dpinfer_simulators::dist::uniform01;
use std::collections::HashMap;

/// Where parameters come from.
pub(crate) enum Source<'a> {
    /// `U(−b, b)` entries from a seeded stream (PyTorch's default bound `1/√fan_in`).
    Random(&'a mut SimStream),
    /// Tensors read from a file, by name.
    Loaded(&'a HashMap<String, Tensor>),
}

/// Builds the named parameters of a network.
pub(crate) struct Builder<'a> {
    source: Source<'a>,
    pub(crate) vars: Vec<(String, Var)>,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(source: Source<'a>) -> Self {
        Self {
            source,
            vars: Vec::new(),
        }
    }

    /// A parameter of shape `dims` named `name`, initialised `U(−bound, bound)`.
    pub(crate) fn param(&mut self, name: String, dims: &[usize], bound: f64) -> Result<Var> {
        let n: usize = dims.iter().product();
        let var = match &mut self.source {
            Source::Random(rng) => {
                #[allow(clippy::cast_possible_truncation)]
                let values: Vec<f32> = (0..n)
                    .map(|_| ((2.0 * uniform01(&mut **rng) - 1.0) * bound) as f32)
                    .collect();
                Var::from_tensor(&Tensor::from_vec(values, dims, &Device::Cpu).map_err(backend)?)
                    .map_err(backend)?
            }
            Source::Loaded(map) => {
                let t = map.get(&name).ok_or_else(|| NeuralError::Format {
                    message: format!("tensor {name} is missing"),
                })?;
                if t.dims() != dims || t.dtype() != DType::F32 {
                    return Err(NeuralError::Format {
                        message: format!(
                            "tensor {name} has shape {:?} and type {:?}, expected {dims:?} f32",
                            t.dims(),
                            t.dtype()
                        ),
                    });
                }
                Var::from_tensor(t).map_err(backend)?
            }
        };
        self.vars.push((name, var.clone()));
        Ok(var)
    }
}

/// `y = x Wᵀ + b`, optionally with a fixed 0/1 mask on `W` (MADE).
#[derive(Debug)]
pub(crate) struct Linear {
    w: Var,
    b: Option<Var>,
    mask: Option<Tensor>,
}

impl Linear {
    /// `inputs → outputs`, PyTorch's default initialisation (`bound = 1/√inputs`) unless
    /// `bound` is given.
    pub(crate) fn new(
        builder: &mut Builder<'_>,
        name: &str,
        inputs: usize,
        outputs: usize,
        bias: bool,
        bound: Option<f64>,
    ) -> Result<Self> {
        #[allow(clippy::cast_precision_loss)]
        let bound = bound.unwrap_or(1.0 / (inputs.max(1) as f64).sqrt());
        let w = builder.param(format!("{name}.weight"), &[outputs, inputs], bound)?;
        let b = if bias {
            Some(builder.param(format!("{name}.bias"), &[outputs], bound)?)
        } else {
            None
        };
        Ok(Self { w, b, mask: None })
    }

    /// The same with a 0/1 mask (`outputs × inputs`, row-major).
    pub(crate) fn masked(mut self, mask: Vec<f32>) -> Result<Self> {
        let dims = self.w.as_tensor().dims().to_vec();
        self.mask = Some(Tensor::from_vec(mask, dims, &Device::Cpu).map_err(backend)?);
        Ok(self)
    }

    /// `forward(relu(x))` as one operation of the graph ([`ReluLinear`]) for an unmasked map
    /// with a bias (the spline flow's residual blocks), else the two operations. The same
    /// bits, forward and backward.
    pub(crate) fn forward_relu(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match (&self.mask, &self.b) {
            (None, Some(b)) => {
                x.contiguous()?
                    .apply_op3(self.w.as_tensor(), b.as_tensor(), ReluLinear)
            }
            _ => self.forward(&relu(x)?),
        }
    }

    pub(crate) fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let w = match &self.mask {
            Some(m) => (self.w.as_tensor() * m)?,
            None => self.w.as_tensor().clone(),
        };
        let y = x.matmul(&w.t()?)?;
        match &self.b {
            Some(b) => y.contiguous()?.apply_op2(b.as_tensor(), BiasAdd),
            None => Ok(y),
        }
    }
}

/// `y + b` with `y` `(n, m)` and `b` `(m)`: the tensor library's `broadcast_add` as one
/// operation. Its broadcast path indexes every element and its backward sums the bias's
/// gradient through a strided reduction: together a third of a spline flow's epoch. The same
/// values: the forward is the same additions, the bias's gradient the same column sums in
/// the same order (`0 + g₀ⱼ + g₁ⱼ + …`, the library's reduction over dimension 0), `y`'s
/// gradient the incoming gradient itself — so trained weights are bit-identical.
struct BiasAdd;

impl candle_core::CustomOp2 for BiasAdd {
    fn name(&self) -> &'static str {
        "bias-add"
    }

    fn cpu_fwd(
        &self,
        s1: &candle_core::CpuStorage,
        l1: &candle_core::Layout,
        s2: &candle_core::CpuStorage,
        l2: &candle_core::Layout,
    ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        use candle_core::CpuStorage;
        let (n, m) = l1.shape().dims2()?;
        if l2.shape().dims() != [m] {
            candle_core::bail!("bias-add: bias {:?} for ({n}, {m})", l2.shape());
        }
        let (Some((a1, b1)), Some((a2, b2))) = (l1.contiguous_offsets(), l2.contiguous_offsets())
        else {
            candle_core::bail!("bias-add: operands not contiguous");
        };
        let out = match (s1, s2) {
            (CpuStorage::F32(y), CpuStorage::F32(b)) => {
                CpuStorage::F32(add_rows(&y[a1..b1], &b[a2..b2]))
            }
            (CpuStorage::F64(y), CpuStorage::F64(b)) => {
                CpuStorage::F64(add_rows(&y[a1..b1], &b[a2..b2]))
            }
            _ => candle_core::bail!("bias-add: operands must both be f32 or both f64"),
        };
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        _y: &Tensor,
        b: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let m = b.elem_count();
        let gb = match g.dtype() {
            DType::F32 => Tensor::from_vec(
                with_slice::<f32, _>(g, |g| column_sums(g, m))?,
                m,
                g.device(),
            )?,
            DType::F64 => Tensor::from_vec(
                with_slice::<f64, _>(g, |g| column_sums(g, m))?,
                m,
                g.device(),
            )?,
            other => candle_core::bail!("bias-add: unsupported type {other:?}"),
        };
        Ok((Some(g.clone()), Some(gb)))
    }
}

/// Runs `f` on the values of `t` (row-major) as a slice of `T`: without a copy for a contiguous
/// CPU tensor (the storage is read-locked meanwhile: `f` must not write to `t`), else on a copy.
pub(crate) fn with_slice<T: candle_core::WithDType, R>(
    t: &Tensor,
    f: impl FnOnce(&[T]) -> R,
) -> candle_core::Result<R> {
    {
        let (storage, layout) = t.storage_and_layout();
        if let (candle_core::Storage::Cpu(cpu), Some((a, b))) =
            (&*storage, layout.contiguous_offsets())
        {
            return Ok(f(&cpu.as_slice::<T>()?[a..b]));
        }
    }
    let v = t.flatten_all()?.to_vec1::<T>()?;
    Ok(f(&v))
}

fn add_rows<T: Copy + core::ops::Add<Output = T>>(y: &[T], b: &[T]) -> Vec<T> {
    let mut out = y.to_vec();
    for row in out.chunks_exact_mut(b.len()) {
        for (v, &c) in row.iter_mut().zip(b) {
            *v = *v + c;
        }
    }
    out
}

fn column_sums<T: Copy + Default + core::ops::AddAssign>(g: &[T], m: usize) -> Vec<T> {
    let mut out = vec![T::default(); m];
    for row in g.chunks_exact(m) {
        for (o, &v) in out.iter_mut().zip(row) {
            *o += v;
        }
    }
    out
}

/// `max(x, 0)`: the tensor library's `relu` as one operation whose backward is one pass
/// (the library's allocates a zero tensor, a comparison, a conversion and a product). The same
/// values: the forward is `max(x, 0)`, the gradient `g · (x ≥ 0 ? 1 : 0)` as the library's.
pub(crate) fn relu(x: &Tensor) -> candle_core::Result<Tensor> {
    x.contiguous()?.apply_op1(Relu)
}

struct Relu;

impl candle_core::CustomOp1 for Relu {
    fn name(&self) -> &'static str {
        "relu"
    }

    fn cpu_fwd(
        &self,
        s: &candle_core::CpuStorage,
        l: &candle_core::Layout,
    ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        use candle_core::CpuStorage;
        let Some((a, b)) = l.contiguous_offsets() else {
            candle_core::bail!("relu: operand not contiguous");
        };
        let out = match s {
            CpuStorage::F32(v) => CpuStorage::F32(v[a..b].iter().map(|x| x.max(0.0)).collect()),
            CpuStorage::F64(v) => CpuStorage::F64(v[a..b].iter().map(|x| x.max(0.0)).collect()),
            _ => candle_core::bail!("relu: f32 or f64 only"),
        };
        Ok((out, l.shape().clone()))
    }

    fn bwd(&self, x: &Tensor, _res: &Tensor, g: &Tensor) -> candle_core::Result<Option<Tensor>> {
        fn mask<T: candle_core::WithDType>(x: &Tensor, g: &Tensor) -> candle_core::Result<Tensor> {
            let (zero, one) = (T::from_f64(0.0), T::from_f64(1.0));
            let out = with_slice::<T, _>(x, |xs| {
                with_slice::<T, _>(g, |gs| {
                    xs.iter()
                        .zip(gs)
                        .map(|(&x, &g)| g * if x >= zero { one } else { zero })
                        .collect::<Vec<T>>()
                })
            })??;
            Tensor::from_vec(out, x.shape(), x.device())
        }
        match x.dtype() {
            DType::F32 => mask::<f32>(x, g).map(Some),
            DType::F64 => mask::<f64>(x, g).map(Some),
            other => candle_core::bail!("relu: unsupported type {other:?}"),
        }
    }
}

/// `relu(x)·Wᵀ + b` (`x` `(n, i)`, `W` `(o, i)`, `b` `(o)`) as one node of the graph instead of
/// four (ReLU, transpose, matrix product, bias): the tensor library's backward pass allocates a
/// zero tensor and an addition for every argument of every node, most of an epoch's
/// bookkeeping. The arithmetic is the four operations' own, call for call: the forward runs
/// [`Relu`], the library's `matmul` with `W` transposed as a view, and [`BiasAdd`] on fresh
/// tensors over the same values; the backward makes the library's matrix-product gradient
/// calls on the same layouts (`g·W`, `relu(x)ᵀ·g`, then transposed), [`BiasAdd`]'s column sums
/// and [`Relu`]'s mask. So outputs and gradients are the same bits (up to the sign of a zero
/// gradient, which the library's accumulation `0 + g` erases anyway), and a trained flow's
/// weights are bit-identical: no version.
struct ReluLinear;

/// A fresh tensor over the values of a contiguous CPU storage.
fn storage_tensor(
    s: &candle_core::CpuStorage,
    l: &candle_core::Layout,
) -> candle_core::Result<Tensor> {
    use candle_core::CpuStorage;
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("relu-linear: operand not contiguous");
    };
    match s {
        CpuStorage::F32(v) => Tensor::from_slice(&v[a..b], l.shape(), &Device::Cpu),
        CpuStorage::F64(v) => Tensor::from_slice(&v[a..b], l.shape(), &Device::Cpu),
        _ => candle_core::bail!("relu-linear: f32 or f64 only"),
    }
}

impl candle_core::CustomOp3 for ReluLinear {
    fn name(&self) -> &'static str {
        "relu-linear"
    }

    fn cpu_fwd(
        &self,
        s1: &candle_core::CpuStorage,
        l1: &candle_core::Layout,
        s2: &candle_core::CpuStorage,
        l2: &candle_core::Layout,
        s3: &candle_core::CpuStorage,
        l3: &candle_core::Layout,
    ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        use candle_core::CpuStorage;
        let x = storage_tensor(s1, l1)?;
        let w = storage_tensor(s2, l2)?;
        let b = storage_tensor(s3, l3)?;
        let y = x
            .apply_op1(Relu)?
            .matmul(&w.t()?)?
            .contiguous()?
            .apply_op2(&b, BiasAdd)?;
        let shape = y.shape().clone();
        let out = match y.dtype() {
            DType::F32 => CpuStorage::F32(y.flatten_all()?.to_vec1::<f32>()?),
            DType::F64 => CpuStorage::F64(y.flatten_all()?.to_vec1::<f64>()?),
            other => candle_core::bail!("relu-linear: unsupported type {other:?}"),
        };
        Ok((out, shape))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        res: &Tensor,
        g: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        use candle_core::CustomOp1;
        use candle_core::CustomOp2;
        let (x, w, g) = (x.detach(), w.detach(), g.detach());
        // BiasAdd: the bias's column sums; the product's gradient is `g` itself
        let (_, gb) = BiasAdd.bwd(res, b, res, &g)?;
        // the library's matmul backward for `a·Wᵀ` (rhs = W.t(), so rhs.t() is W's layout)
        let a = x.apply_op1(Relu)?;
        let ga = g.matmul(&w)?;
        let gw = a.t()?.matmul(&g)?.t()?;
        // Relu's mask
        let gx = Relu.bwd(&x, &a, &ga)?;
        Ok((gx, Some(gw), gb))
    }
}

/// `log(1 + eˣ)`, stable for large `|x|`.
pub(crate) fn softplus(x: &Tensor) -> candle_core::Result<Tensor> {
    x.relu()? + (x.abs()?.neg()?.exp()? + 1.0)?.log()?
}

/// Softmax over the last dimension (max-shifted).
pub(crate) fn softmax_last(x: &Tensor) -> candle_core::Result<Tensor> {
    let last = x.rank() - 1;
    let shifted = x.broadcast_sub(&x.max_keepdim(last)?.detach())?;
    let e = shifted.exp()?;
    e.broadcast_div(&e.sum_keepdim(last)?)
}

/// Adam (Kingma & Ba 2014) with PyTorch's coupled weight decay (`g ← g + λθ`) and global
/// gradient-norm clipping; a fresh optimiser per [`crate::ConditionalFlow::fit`], as sbi does
/// per round.
///
/// The update runs on plain `f32` buffers, one pass per parameter tensor, instead of a dozen
/// tensor operations (each allocating) per parameter: the arithmetic is the tensor version's
/// operation for operation (each `affine(a, b)` is `x·(a as f32) + (b as f32)`; the norm is
/// still the tensor library's sum of squares), so the trained weights are bit-identical to it
/// (`tests::the_buffer_adam_is_the_tensor_adam_bit_for_bit`). It was 43 % of a spline-flow
/// epoch's time (96 parameter tensors × ~15 allocating operations per step; 4.8 s → 2.7 s
/// per epoch on the SIR round-10 shape, `examples/epoch_time.rs`).
pub(crate) struct Adam {
    vars: Vec<Var>,
    m: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
    t: i32,
    lr: f64,
    weight_decay: f64,
    clip: f64,
}

impl Adam {
    pub(crate) fn new(
        vars: Vec<Var>,
        lr: f64,
        weight_decay: f64,
        clip: f64,
    ) -> candle_core::Result<Self> {
        let m: Vec<Vec<f32>> = vars
            .iter()
            .map(|v| vec![0f32; v.as_tensor().elem_count()])
            .collect();
        Ok(Self {
            v: m.clone(),
            m,
            vars,
            t: 0,
            lr,
            weight_decay,
            clip,
        })
    }

    /// One step; `Ok(false)` (and no update) when the gradient is not finite.
    #[allow(clippy::cast_possible_truncation)]
    pub(crate) fn step(&mut self, grads: &GradStore) -> candle_core::Result<bool> {
        const B1: f64 = 0.9;
        const B2: f64 = 0.999;
        const EPS: f64 = 1e-8;
        let mut sq = 0.0f64;
        let mut gs = Vec::with_capacity(self.vars.len());
        for var in &self.vars {
            let g = match grads.get(var.as_tensor()) {
                // the norm by the tensor library's own reduction (its summation order
                // depends on the SIMD features it was compiled with)
                Some(g) => {
                    sq += f64::from(g.sqr()?.sum_all()?.to_scalar::<f32>()?);
                    g.flatten_all()?.to_vec1::<f32>()?
                }
                None => vec![0f32; var.as_tensor().elem_count()],
            };
            gs.push(g);
        }
        let norm = sq.sqrt();
        if !norm.is_finite() {
            return Ok(false);
        }
        let scale = if norm > self.clip {
            self.clip / (norm + 1e-6)
        } else {
            1.0
        };
        self.t += 1;
        let c1 = 1.0 - B1.powi(self.t);
        let c2 = 1.0 - B2.powi(self.t);
        // every affine(a, b) of the tensor version: x·(a as f32) + (b as f32)
        let scale = scale as f32;
        let wd = self.weight_decay as f32;
        let (b1, nb1) = (B1 as f32, (1.0 - B1) as f32);
        let (b2, nb2) = (B2 as f32, (1.0 - B2) as f32);
        let inv_c2 = (1.0 / c2) as f32;
        let eps = EPS as f32;
        let step = (self.lr / c1) as f32;
        for (i, g) in gs.into_iter().enumerate() {
            let var = &self.vars[i];
            let theta = var.as_tensor();
            let dims = theta.dims().to_vec();
            let mut next = theta.flatten_all()?.to_vec1::<f32>()?;
            let (m, v) = (&mut self.m[i], &mut self.v[i]);
            // (a gradient has its parameter's shape: the four buffers have one length)
            for (((th, &g), mk), vk) in next.iter_mut().zip(&g).zip(m.iter_mut()).zip(v.iter_mut())
            {
                let gk = (g * scale + 0.0) + (*th * wd + 0.0);
                *mk = (*mk * b1 + 0.0) + (gk * nb1 + 0.0);
                *vk = (*vk * b2 + 0.0) + ((gk * gk) * nb2 + 0.0);
                // (the tensor version's affine(1, ε): ·1 is exact)
                let denom = (*vk * inv_c2 + 0.0).sqrt() + eps;
                let update = (*mk * step + 0.0) / denom;
                *th -= update;
            }
            var.set(&Tensor::from_vec(next, dims, &Device::Cpu)?)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use dpinfer_simulators::dist::ziggurat_normal;

    /// The optimiser as it was written on tensors (one tensor operation per arithmetic step):
    /// the reference the buffer version must match bit for bit.
    struct TensorAdam {
        vars: Vec<Var>,
        m: Vec<Tensor>,
        v: Vec<Tensor>,
        t: i32,
        lr: f64,
        weight_decay: f64,
        clip: f64,
    }

    impl TensorAdam {
        fn step(&mut self, grads: &GradStore) -> candle_core::Result<bool> {
            const B1: f64 = 0.9;
            const B2: f64 = 0.999;
            const EPS: f64 = 1e-8;
            let mut sq = 0.0f64;
            let mut gs = Vec::with_capacity(self.vars.len());
            for var in &self.vars {
                let g = match grads.get(var.as_tensor()) {
                    Some(g) => g.clone(),
                    None => var.as_tensor().zeros_like()?,
                };
                sq += f64::from(g.sqr()?.sum_all()?.to_scalar::<f32>()?);
                gs.push(g);
            }
            let norm = sq.sqrt();
            if !norm.is_finite() {
                return Ok(false);
            }
            let scale = if norm > self.clip {
                self.clip / (norm + 1e-6)
            } else {
                1.0
            };
            self.t += 1;
            let c1 = 1.0 - B1.powi(self.t);
            let c2 = 1.0 - B2.powi(self.t);
            for (i, g) in gs.into_iter().enumerate() {
                let theta = self.vars[i].as_tensor();
                let g = (g.affine(scale, 0.0)? + theta.affine(self.weight_decay, 0.0)?)?;
                self.m[i] = (self.m[i].affine(B1, 0.0)? + g.affine(1.0 - B1, 0.0)?)?;
                self.v[i] = (self.v[i].affine(B2, 0.0)? + g.sqr()?.affine(1.0 - B2, 0.0)?)?;
                let denom = self.v[i].affine(1.0 / c2, 0.0)?.sqrt()?.affine(1.0, EPS)?;
                let update = (self.m[i].affine(self.lr / c1, 0.0)? / denom)?;
                let next = (theta - update)?.detach();
                self.vars[i].set(&next)?;
            }
            Ok(true)
        }
    }

    fn params(rng: &mut SimStream) -> Vec<Var> {
        [vec![7, 5], vec![7], vec![3]]
            .iter()
            .map(|dims| {
                let n: usize = dims.iter().product();
                #[allow(clippy::cast_possible_truncation)]
                let v: Vec<f32> = (0..n).map(|_| ziggurat_normal(rng) as f32).collect();
                Var::from_tensor(&Tensor::from_vec(v, dims.as_slice(), &Device::Cpu).unwrap())
                    .unwrap()
            })
            .collect()
    }

    /// A loss whose gradient reaches the first two parameters only (the third gets none, as
    /// a parameter unused by a loss), large enough at times to be clipped.
    fn loss(vars: &[Var], x: &Tensor) -> Tensor {
        let h = x.matmul(&vars[0].as_tensor().t().unwrap()).unwrap();
        let h = h.broadcast_add(vars[1].as_tensor()).unwrap();
        (h.sqr().unwrap().sum_all().unwrap() * 0.7).unwrap()
    }

    #[test]
    fn the_buffer_adam_is_the_tensor_adam_bit_for_bit() {
        let a = params(&mut SimStream::new(20_261_122, 3));
        let b = params(&mut SimStream::new(20_261_122, 3));
        for clip in [5.0, 1e6] {
            let mut fast = Adam::new(a.clone(), 5e-3, 1e-4, clip).unwrap();
            let mut slow = TensorAdam {
                m: b.iter()
                    .map(|v| v.as_tensor().zeros_like().unwrap())
                    .collect(),
                v: b.iter()
                    .map(|v| v.as_tensor().zeros_like().unwrap())
                    .collect(),
                vars: b.clone(),
                t: 0,
                lr: 5e-3,
                weight_decay: 1e-4,
                clip,
            };
            let mut rng = SimStream::new(20_261_122, 4);
            for _ in 0..25 {
                #[allow(clippy::cast_possible_truncation)]
                let x: Vec<f32> = (0..4 * 5)
                    .map(|_| ziggurat_normal(&mut rng) as f32)
                    .collect();
                let x = Tensor::from_vec(x, (4, 5), &Device::Cpu).unwrap();
                assert!(fast.step(&loss(&a, &x).backward().unwrap()).unwrap());
                assert!(slow.step(&loss(&b, &x).backward().unwrap()).unwrap());
                for (p, q) in a.iter().zip(&b) {
                    let p: Vec<u32> = p
                        .flatten_all()
                        .unwrap()
                        .to_vec1::<f32>()
                        .unwrap()
                        .iter()
                        .map(|v| v.to_bits())
                        .collect();
                    let q: Vec<u32> = q
                        .flatten_all()
                        .unwrap()
                        .to_vec1::<f32>()
                        .unwrap()
                        .iter()
                        .map(|v| v.to_bits())
                        .collect();
                    assert_eq!(p, q);
                }
            }
        }
        // a non-finite gradient: no step, parameters untouched
        let before: Vec<f32> = a[0].flatten_all().unwrap().to_vec1().unwrap();
        let mut fast = Adam::new(a.clone(), 5e-3, 1e-4, 5.0).unwrap();
        let x = Tensor::from_vec(vec![f32::INFINITY; 20], (4, 5), &Device::Cpu).unwrap();
        assert!(!fast.step(&loss(&a, &x).backward().unwrap()).unwrap());
        assert_eq!(
            before,
            a[0].flatten_all().unwrap().to_vec1::<f32>().unwrap()
        );
    }

    /// An `f32` variable of shape `dims`, standard normal entries, every `zero_every`-th exactly 0.
    fn var_with_zeros(rng: &mut SimStream, dims: &[usize], zero_every: usize) -> Var {
        let n: usize = dims.iter().product();
        #[allow(clippy::cast_possible_truncation)]
        let v: Vec<f32> = (0..n)
            .map(|i| {
                if i % zero_every == 0 {
                    0.0
                } else {
                    ziggurat_normal(rng) as f32
                }
            })
            .collect();
        Var::from_tensor(&Tensor::from_vec(v, dims, &Device::Cpu).unwrap()).unwrap()
    }

    /// The bits of an `f32` tensor's values.
    fn bits(t: &Tensor) -> Vec<u32> {
        t.flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    }

    /// `Linear::forward` (bias added by `BiasAdd`) and `relu` (the `Relu` operation) give the
    /// bits of the tensor library's `broadcast_add` and `relu`, forward and backward, in a
    /// residual block (a tensor with two consumers), with inputs of exactly 0 at the ReLU.
    #[test]
    fn bias_add_and_relu_are_the_library_ops_bit_for_bit() {
        let mut rng = SimStream::new(20261122, 12);
        let mut var = |dims: &[usize]| var_with_zeros(&mut rng, dims, 7);
        let x = var(&[37, 5]);
        let (w1, b1, w2, b2) = (var(&[6, 5]), var(&[6]), var(&[6, 6]), var(&[6]));
        let vars = [&x, &w1, &b1, &w2, &b2];
        let run = |ours: bool| -> Vec<Vec<u32>> {
            let lin = |h: &Tensor, w: &Var, b: &Var| -> Tensor {
                if ours {
                    Linear {
                        w: w.clone(),
                        b: Some(b.clone()),
                        mask: None,
                    }
                    .forward(h)
                    .unwrap()
                } else {
                    h.matmul(&w.as_tensor().t().unwrap())
                        .unwrap()
                        .broadcast_add(b.as_tensor())
                        .unwrap()
                }
            };
            let act = |h: &Tensor| {
                if ours {
                    relu(h).unwrap()
                } else {
                    h.relu().unwrap()
                }
            };
            // x has exact zeros: the ReLU's tie (its gradient passes at 0)
            let h = lin(&act(x.as_tensor()), &w1, &b1);
            let out = (&h + lin(&act(&h), &w2, &b2)).unwrap();
            let out = act(&out);
            let loss = out.sqr().unwrap().sum_all().unwrap();
            let grads = loss.backward().unwrap();
            let mut all = vec![bits(&out)];
            all.extend(vars.iter().map(|v| bits(grads.get(v.as_tensor()).unwrap())));
            all
        };
        assert_eq!(run(true), run(false));
    }

    /// `Linear::forward_relu` (the fused `ReluLinear` node) gives the bits of
    /// `Linear::forward(&relu(x))` — output and every gradient — in the spline flow's residual
    /// block (`h + l2(relu(l1(relu(h))))`, `h` with two consumers), with inputs of exactly 0 at
    /// both ReLUs and a loss whose gradient has exact zeros (so the sign of a zero is exercised).
    #[test]
    fn the_fused_relu_linear_is_relu_then_linear_bit_for_bit() {
        let mut rng = SimStream::new(20261130, 3);
        let mut var = |dims: &[usize]| var_with_zeros(&mut rng, dims, 5);
        let x = var(&[53, 7]);
        let (w0, b0) = (var(&[9, 7]), var(&[9]));
        let (w1, b1, w2, b2) = (var(&[9, 9]), var(&[9]), var(&[9, 9]), var(&[9]));
        let vars = [&x, &w0, &b0, &w1, &b1, &w2, &b2];
        let linear = |w: &Var, b: &Var| Linear {
            w: w.clone(),
            b: Some(b.clone()),
            mask: None,
        };
        let run = |fused: bool| -> Vec<Vec<u32>> {
            let (l0, l1, l2) = (linear(&w0, &b0), linear(&w1, &b1), linear(&w2, &b2));
            let step = |l: &Linear, h: &Tensor| {
                if fused {
                    l.forward_relu(h).unwrap()
                } else {
                    l.forward(&relu(h).unwrap()).unwrap()
                }
            };
            let h = l0.forward(x.as_tensor()).unwrap();
            let h = (&h + step(&l2, &step(&l1, &h))).unwrap();
            // relu before the loss: exact zeros in the incoming gradient
            let out = relu(&h).unwrap();
            let loss = out.sqr().unwrap().sum_all().unwrap();
            let grads = loss.backward().unwrap();
            let mut all = vec![bits(&out)];
            all.extend(vars.iter().map(|v| bits(grads.get(v.as_tensor()).unwrap())));
            all
        };
        let (fused, plain) = (run(true), run(false));
        assert!(
            fused[1..].iter().flatten().any(|&g| g != 0),
            "gradients flow"
        );
        assert_eq!(fused, plain);
    }
}
