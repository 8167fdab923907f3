//! Neural spline flow (Durkan et al. 2019): rational-quadratic coupling layers. Layer `l`
//! transforms the target coordinates `i` with `(i + l)` even and conditions on the others and
//! the context through a residual network (an input map, `blocks` pre-activation residual
//! blocks of two linear maps with ReLU, an output map; nflows' `ResidualNet`). A
//! one-dimensional target is transformed by every layer, conditioned on the context only.

use crate::error::{Result, backend};
use crate::fused::rq_spline_fused;
use crate::net::{Builder, Linear};
use crate::settings::NsfSettings;
use crate::settings::SplineImpl;
use crate::spline::rq_spline;
use candle_core::{D, Device, Tensor};

/// One coupling layer.
#[derive(Debug)]
pub(crate) struct Coupling {
    identity: Option<Tensor>,
    transformed: Tensor,
    /// Inverse of the column order `[identity…, transformed…]`.
    unpermute: Tensor,
    n_transformed: usize,
    first: Linear,
    blocks: Vec<(Linear, Linear)>,
    last: Linear,
    settings: NsfSettings,
}

impl Coupling {
    pub(crate) fn new(
        b: &mut Builder<'_>,
        name: &str,
        layer: usize,
        dim: usize,
        context_dim: usize,
        s: &NsfSettings,
    ) -> Result<Self> {
        let (trans, ident): (Vec<u32>, Vec<u32>) = if dim == 1 {
            (vec![0], Vec::new())
        } else {
            #[allow(clippy::cast_possible_truncation)]
            (0..dim as u32).partition(|&i| (i as usize + layer).is_multiple_of(2))
        };
        let mut order: Vec<u32> = ident.clone();
        order.extend_from_slice(&trans);
        let mut unpermute = vec![0u32; dim];
        for (pos, &col) in order.iter().enumerate() {
            #[allow(clippy::cast_possible_truncation)]
            {
                unpermute[col as usize] = pos as u32;
            }
        }
        let dev = Device::Cpu;
        let n_trans = trans.len();
        let n_ident = ident.len();
        let identity = if ident.is_empty() {
            None
        } else {
            Some(Tensor::new(ident.as_slice(), &dev).map_err(backend)?)
        };
        let transformed = Tensor::new(trans.as_slice(), &dev).map_err(backend)?;
        let unpermute = Tensor::new(unpermute.as_slice(), &dev).map_err(backend)?;
        let h = s.hidden;
        let first = Linear::new(
            b,
            &format!("{name}.initial"),
            n_ident + context_dim,
            h,
            true,
            None,
        )?;
        let mut blocks = Vec::with_capacity(s.blocks);
        for k in 0..s.blocks {
            let l1 = Linear::new(b, &format!("{name}.block{k}.0"), h, h, true, None)?;
            // nflows: the block's last map starts near zero, so each block starts near the
            // identity.
            let l2 = Linear::new(b, &format!("{name}.block{k}.1"), h, h, true, Some(1e-3))?;
            blocks.push((l1, l2));
        }
        let last = Linear::new(
            b,
            &format!("{name}.final"),
            h,
            n_trans * (3 * s.bins - 1),
            true,
            None,
        )?;
        Ok(Self {
            identity,
            transformed,
            unpermute,
            n_transformed: n_trans,
            first,
            blocks,
            last,
            settings: *s,
        })
    }

    fn spline_params(&self, ident: Option<&Tensor>, c: &Tensor) -> candle_core::Result<Tensor> {
        let input = match ident {
            Some(i) => Tensor::cat(&[i, c], D::Minus1)?,
            None => c.clone(),
        };
        let mut h = self.first.forward(&input)?;
        for (l1, l2) in &self.blocks {
            let t = l2.forward_relu(&l1.forward_relu(&h)?)?;
            h = (h + t)?;
        }
        let p = self.last.forward(&h)?;
        let n = p.dims()[0];
        p.reshape((n, self.n_transformed, 3 * self.settings.bins - 1))
    }

    fn apply(
        &self,
        y: &Tensor,
        c: &Tensor,
        inverse: bool,
    ) -> candle_core::Result<(Tensor, Tensor)> {
        let ident = match &self.identity {
            Some(idx) => Some(y.index_select(idx, 1)?),
            None => None,
        };
        let trans = y.index_select(&self.transformed, 1)?;
        let params = self.spline_params(ident.as_ref(), c)?;
        // The inverse (sampling, never differentiated) is always the fused operation: its
        // outputs are the tensor version's bits.
        let spline = if inverse || self.settings.spline == SplineImpl::Fused {
            rq_spline_fused
        } else {
            rq_spline
        };
        let (out, ld) = spline(
            &trans,
            &params,
            self.settings.bins,
            self.settings.tail_bound,
            self.settings.hidden,
            inverse,
        )?;
        let joined = match ident {
            Some(i) => Tensor::cat(&[&i, &out], D::Minus1)?,
            None => out,
        };
        Ok((joined.index_select(&self.unpermute, 1)?, ld.sum(D::Minus1)?))
    }

    /// Data → noise and `log|det|`.
    pub(crate) fn forward(&self, y: &Tensor, c: &Tensor) -> Result<(Tensor, Tensor)> {
        self.apply(y, c, false).map_err(backend)
    }

    /// Noise → data.
    pub(crate) fn inverse(&self, u: &Tensor, c: &Tensor) -> Result<Tensor> {
        self.apply(u, c, true).map(|(y, _)| y).map_err(backend)
    }
}
