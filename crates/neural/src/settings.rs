//! Flow architectures and training settings, with the paper's defaults and their checks.

use crate::error::{NeuralError, Result};

/// Largest accepted target or context dimension.
pub const MAX_DIM: usize = 4096;
/// Largest accepted number of flow layers.
pub const MAX_LAYERS: usize = 64;
/// Largest accepted number of hidden units per layer.
pub const MAX_HIDDEN: usize = 4096;
/// Largest accepted number of residual blocks (NSF) or hidden layers (MAF) per flow layer.
pub const MAX_BLOCKS: usize = 16;
/// Largest accepted number of spline bins (the minimum bin width 10⁻³ caps it below 1000).
pub const MAX_BINS: usize = 256;

/// Largest accepted number of trainable scalars (4 · 10⁷: 160 MB of `f32`, and as much again
/// for each of Adam's two moments).
pub const MAX_PARAMETERS: usize = 40_000_000;

/// The architecture of a conditional normalizing flow q(target | context).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FlowSettings {
    /// Rational-quadratic neural spline flow (Durkan et al. 2019): coupling layers whose
    /// conditioner is a residual network on the untransformed half of the target and the
    /// context; monotone rational-quadratic splines on `[-tail_bound, tail_bound]`, identity
    /// outside.
    Nsf(NsfSettings),
    /// Masked autoregressive flow (Papamakarios et al. 2017) with affine layers, each a
    /// conditional MADE; cheaper to train, slower to sample in high dimension.
    Maf(MafSettings),
}

impl Default for FlowSettings {
    /// The paper's neural spline flow ([`NsfSettings::default`]).
    fn default() -> Self {
        Self::Nsf(NsfSettings::default())
    }
}

/// Settings of the neural spline flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NsfSettings {
    /// Coupling layers (paper: 8).
    pub layers: usize,
    /// Hidden units of each residual network (paper: 50).
    pub hidden: usize,
    /// Residual blocks per layer, each two linear maps with ReLU (paper: 2).
    pub blocks: usize,
    /// Bins of each monotone spline (paper: 10).
    pub bins: usize,
    /// The spline acts on `[-tail_bound, tail_bound]` of the standardised variable, the
    /// identity outside (paper: 5).
    pub tail_bound: f64,
    /// How the spline's gradients are computed in training (default
    /// [`SplineImpl::Tensor`], the version every earlier seeded result was trained with;
    /// [`SplineImpl::Fused`] is faster). Densities and samples of given weights are the same
    /// bits with either; trained weights are not.
    pub spline: SplineImpl,
}

/// The implementation of the neural spline flow's rational-quadratic spline, a versioned
/// setting (as `dpinfer_simulators::StreamVersion`): both give bit-identical outputs and
/// log-determinants for the same weights (the fused forward pass repeats the tensor version's
/// `f32` operations in order), but their gradients round differently, so **trained weights
/// differ in the last bits** and then in every later number of a seeded run. The default stays
/// version 1 so that seeded results trained before version 2 existed reproduce; new work may
/// choose [`SplineImpl::LATEST`]. Recorded in the estimator file (file version 2 when fused).
///
/// ```
/// use dpinfer_neural::SplineImpl;
/// assert_eq!(SplineImpl::default(), SplineImpl::Tensor);
/// assert_eq!(SplineImpl::try_from(2), Ok(SplineImpl::Fused));
/// assert_eq!(SplineImpl::Fused.number(), 2);
/// assert!(SplineImpl::try_from(3).is_err());
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SplineImpl {
    /// Version 1: about 120 elementwise tensor operations per layer, differentiated by the
    /// tensor library's autodiff.
    #[default]
    Tensor,
    /// Version 2: one fused operation per layer on `f32` buffers with an analytic backward pass
    /// (one pass per element each way, no intermediate tensors).
    Fused,
}

impl SplineImpl {
    /// The newest version (what new work should use).
    pub const LATEST: Self = Self::Fused;

    /// The version's number (1, 2), as written in the estimator file.
    #[must_use]
    pub const fn number(self) -> u32 {
        match self {
            Self::Tensor => 1,
            Self::Fused => 2,
        }
    }
}

impl TryFrom<u32> for SplineImpl {
    type Error = NeuralError;

    /// The version numbered `n`.
    ///
    /// # Errors
    /// [`NeuralError::Setting`] (`spline`) for an unknown number.
    fn try_from(n: u32) -> Result<Self> {
        match n {
            1 => Ok(Self::Tensor),
            2 => Ok(Self::Fused),
            _ => Err(NeuralError::Setting {
                name: "spline",
                value: f64::from(n),
                expected: "1 (tensor) or 2 (fused)",
            }),
        }
    }
}

impl Default for NsfSettings {
    fn default() -> Self {
        Self {
            layers: 8,
            hidden: 50,
            blocks: 2,
            bins: 10,
            tail_bound: 5.0,
            spline: SplineImpl::Tensor,
        }
    }
}

/// Settings of the masked autoregressive flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MafSettings {
    /// Affine autoregressive layers, the order of the target reversed between them (default 5,
    /// as sbi's `maf`).
    pub layers: usize,
    /// Hidden units of each MADE (default 50).
    pub hidden: usize,
    /// Masked hidden layers of each MADE, ReLU (default 2).
    pub hidden_layers: usize,
}

impl Default for MafSettings {
    fn default() -> Self {
        Self {
            layers: 5,
            hidden: 50,
            hidden_layers: 2,
        }
    }
}

pub(crate) fn check_count(name: &'static str, value: usize, max: usize) -> Result<()> {
    if value == 0 || value > max {
        return Err(NeuralError::Dimension { name, value, max });
    }
    Ok(())
}

impl FlowSettings {
    /// Trainable scalars of this architecture for the given dimensions (saturating).
    #[must_use]
    pub fn parameter_count(&self, target_dim: usize, context_dim: usize) -> usize {
        let lin = |i: usize, o: usize| i.saturating_add(1).saturating_mul(o);
        match *self {
            Self::Nsf(s) => {
                // layer l transforms the coordinates i with i + l even (all of a 1-D target)
                let per = |trans: usize| {
                    let ident = target_dim - trans;
                    lin(ident.saturating_add(context_dim), s.hidden)
                        .saturating_add(
                            s.blocks
                                .saturating_mul(2)
                                .saturating_mul(lin(s.hidden, s.hidden)),
                        )
                        .saturating_add(lin(
                            s.hidden,
                            trans.saturating_mul(3usize.saturating_mul(s.bins).saturating_sub(1)),
                        ))
                };
                if target_dim == 1 {
                    s.layers.saturating_mul(per(1))
                } else {
                    s.layers
                        .div_ceil(2)
                        .saturating_mul(per(target_dim.div_ceil(2)))
                        .saturating_add((s.layers / 2).saturating_mul(per(target_dim / 2)))
                }
            }
            Self::Maf(s) => {
                let per = lin(target_dim, s.hidden)
                    .saturating_add(context_dim.saturating_mul(s.hidden))
                    .saturating_add(
                        (s.hidden_layers.saturating_sub(1)).saturating_mul(lin(s.hidden, s.hidden)),
                    )
                    .saturating_add(lin(s.hidden, target_dim.saturating_mul(2)));
                s.layers.saturating_mul(per)
            }
        }
    }

    /// Checks every field.
    ///
    /// # Errors
    /// [`NeuralError::Dimension`] for a zero or too large count, [`NeuralError::Setting`] for
    /// a tail bound that is not finite and positive, or fewer than 2 bins.
    pub fn check(&self) -> Result<()> {
        match *self {
            Self::Nsf(s) => {
                check_count("layers", s.layers, MAX_LAYERS)?;
                check_count("hidden", s.hidden, MAX_HIDDEN)?;
                check_count("blocks", s.blocks, MAX_BLOCKS)?;
                check_count("bins", s.bins, MAX_BINS)?;
                if s.bins < 2 {
                    #[allow(clippy::cast_precision_loss)]
                    return Err(NeuralError::Setting {
                        name: "bins",
                        value: s.bins as f64,
                        expected: "at least 2",
                    });
                }
                if !(s.tail_bound.is_finite() && s.tail_bound > 0.0 && s.tail_bound <= 1e6) {
                    return Err(NeuralError::Setting {
                        name: "tail_bound",
                        value: s.tail_bound,
                        expected: "finite, > 0 and <= 1e6",
                    });
                }
            }
            Self::Maf(s) => {
                check_count("layers", s.layers, MAX_LAYERS)?;
                check_count("hidden", s.hidden, MAX_HIDDEN)?;
                check_count("hidden_layers", s.hidden_layers, MAX_BLOCKS)?;
            }
        }
        Ok(())
    }
}

/// How [`crate::ConditionalFlow::fit`] trains (Papamakarios et al. 2019's early stopping; the
/// paper's App. E.1.1 values are the defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainSettings {
    /// Rows per minibatch (paper: 100).
    pub batch_size: usize,
    /// Adam's learning rate (paper: 5 × 10⁻⁴).
    pub learning_rate: f64,
    /// Adam's weight decay, an L2 term added to the gradient as PyTorch's `Adam` does
    /// (paper: 10⁻⁴).
    pub weight_decay: f64,
    /// Stop after this many epochs without a lower validation loss (paper: 20).
    pub patience: usize,
    /// Stop after this many epochs in any case (default 1000).
    pub max_epochs: usize,
    /// Rescale the gradient to at most this Euclidean norm (sbi's default 5).
    pub clip_max_norm: f64,
}

impl Default for TrainSettings {
    fn default() -> Self {
        Self {
            batch_size: 100,
            learning_rate: 5e-4,
            weight_decay: 1e-4,
            patience: 20,
            max_epochs: 1000,
            clip_max_norm: 5.0,
        }
    }
}

impl TrainSettings {
    /// Checks every field.
    ///
    /// # Errors
    /// [`NeuralError::Dimension`] for a zero or huge batch size, patience or epoch cap;
    /// [`NeuralError::Setting`] for a learning rate or clip norm that is not finite and
    /// positive, or a weight decay that is not finite and non-negative.
    pub fn check(&self) -> Result<()> {
        check_count("batch_size", self.batch_size, 1 << 24)?;
        check_count("patience", self.patience, 1 << 24)?;
        check_count("max_epochs", self.max_epochs, 1 << 24)?;
        if !(self.learning_rate.is_finite()
            && self.learning_rate > 0.0
            && self.learning_rate <= 1.0)
        {
            return Err(NeuralError::Setting {
                name: "learning_rate",
                value: self.learning_rate,
                expected: "finite, > 0 and <= 1",
            });
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0 && self.weight_decay <= 1.0)
        {
            return Err(NeuralError::Setting {
                name: "weight_decay",
                value: self.weight_decay,
                expected: "finite, >= 0 and <= 1",
            });
        }
        if !(self.clip_max_norm.is_finite() && self.clip_max_norm > 0.0) {
            return Err(NeuralError::Setting {
                name: "clip_max_norm",
                value: self.clip_max_norm,
                expected: "finite and > 0",
            });
        }
        Ok(())
    }
}
