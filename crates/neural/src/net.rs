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

    pub(crate) fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let w = match &self.mask {
            Some(m) => (self.w.as_tensor() * m)?,
            None => self.w.as_tensor().clone(),
        };
        let y = x.matmul(&w.t()?)?;
        match &self.b {
            Some(b) => y.broadcast_add(b.as_tensor()),
            None => Ok(y),
        }
    }
}

pub(crate) fn relu(x: &Tensor) -> candle_core::Result<Tensor> {
    x.relu()
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
pub(crate) struct Adam {
    vars: Vec<Var>,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
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
        let m = vars
            .iter()
            .map(|v| v.as_tensor().zeros_like())
            .collect::<candle_core::Result<Vec<_>>>()?;
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
    pub(crate) fn step(&mut self, grads: &GradStore) -> candle_core::Result<bool> {
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
