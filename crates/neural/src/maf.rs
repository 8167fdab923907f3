//! Masked autoregressive flow (Papamakarios et al. 2017): affine layers, each a conditional
//! MADE (Germain et al. 2015) with the context feeding every first-layer unit; the target's
//! order reversed between layers. The scale is `softplus(a) + 10⁻³` (nflows'
//! `MaskedAffineAutoregressiveTransform`), positive and unbounded above.

use crate::error::{Result, backend};
use crate::net::{Builder, Linear, relu, softplus};
use crate::settings::MafSettings;
use candle_core::{D, Tensor};

/// One MADE layer.
#[derive(Debug)]
pub(crate) struct Made {
    input: Linear,
    context: Linear,
    hidden: Vec<Linear>,
    output: Linear,
    dim: usize,
}

impl Made {
    pub(crate) fn new(
        b: &mut Builder<'_>,
        name: &str,
        dim: usize,
        context_dim: usize,
        s: &MafSettings,
    ) -> Result<Self> {
        let h = s.hidden;
        // Degrees: inputs 1..=dim; hidden units cycle through 1..=dim−1 (0 when dim = 1: they
        // see the context only); output i (shift and scale) has degree i + 1.
        let hdeg: Vec<usize> = (0..h)
            .map(|k| if dim == 1 { 0 } else { 1 + k % (dim - 1) })
            .collect();
        let mut m_in = vec![0f32; h * dim];
        for k in 0..h {
            for i in 0..dim {
                if hdeg[k] > i {
                    m_in[k * dim + i] = 1.0;
                }
            }
        }
        let mut m_hid = vec![0f32; h * h];
        for k in 0..h {
            for j in 0..h {
                if hdeg[k] >= hdeg[j] {
                    m_hid[k * h + j] = 1.0;
                }
            }
        }
        let mut m_out = vec![0f32; 2 * dim * h];
        for o in 0..2 * dim {
            for j in 0..h {
                if o % dim + 1 > hdeg[j] {
                    m_out[o * h + j] = 1.0;
                }
            }
        }
        let input = Linear::new(b, &format!("{name}.input"), dim, h, true, None)?.masked(m_in)?;
        let context = Linear::new(b, &format!("{name}.context"), context_dim, h, false, None)?;
        let mut hidden = Vec::with_capacity(s.hidden_layers - 1);
        for l in 1..s.hidden_layers {
            hidden.push(
                Linear::new(b, &format!("{name}.hidden{l}"), h, h, true, None)?
                    .masked(m_hid.clone())?,
            );
        }
        let output =
            Linear::new(b, &format!("{name}.output"), h, 2 * dim, true, None)?.masked(m_out)?;
        Ok(Self {
            input,
            context,
            hidden,
            output,
            dim,
        })
    }

    /// Shift and scale for every coordinate, each depending only on earlier coordinates.
    fn shift_scale(&self, y: &Tensor, c: &Tensor) -> candle_core::Result<(Tensor, Tensor)> {
        let mut h = relu(&(self.input.forward(y)? + self.context.forward(c)?)?)?;
        for l in &self.hidden {
            h = relu(&l.forward(&h)?)?;
        }
        let o = self.output.forward(&h)?;
        let shift = o.narrow(D::Minus1, 0, self.dim)?;
        let scale = (softplus(&o.narrow(D::Minus1, self.dim, self.dim)?)? + 1e-3)?;
        Ok((shift, scale))
    }

    /// Data → noise: `u = y·scale + shift`, `log|det| = Σ log scale`.
    pub(crate) fn forward(&self, y: &Tensor, c: &Tensor) -> Result<(Tensor, Tensor)> {
        let f = || -> candle_core::Result<(Tensor, Tensor)> {
            let (shift, scale) = self.shift_scale(y, c)?;
            let u = ((y * &scale)? + shift)?;
            Ok((u, scale.log()?.sum(D::Minus1)?))
        };
        f().map_err(backend)
    }

    /// Noise → data, one coordinate per pass (`dim` passes).
    pub(crate) fn inverse(&self, u: &Tensor, c: &Tensor) -> Result<Tensor> {
        let f = || -> candle_core::Result<Tensor> {
            let mut y = u.zeros_like()?;
            for _ in 0..self.dim {
                let (shift, scale) = self.shift_scale(&y, c)?;
                y = ((u - shift)? / scale)?;
            }
            Ok(y)
        };
        f().map_err(backend)
    }
}
