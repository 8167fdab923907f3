//! The conditional density estimator: construction, training, log-density, sampling and its
//! file.

use crate::data::{Standardiser, TrainingSet, check_rows, index_below};
use crate::error::{NeuralError, Result, backend};
use crate::maf::Made;
use crate::net::{Adam, Builder, Source};
use crate::nsf::Coupling;
use crate::settings::{
    FlowSettings, MAX_DIM, MAX_PARAMETERS, MafSettings, NsfSettings, SplineImpl, TrainSettings,
    check_count,
};
use candle_core::{D, DType, Device, Tensor, Var};
use dpinfer_simulators::SimStream;
use dpinfer_simulators::dist::ziggurat_normal;
use rand_core::Rng;
use std::collections::HashMap;
use std::path::Path;

/// Newest version of the estimator file layout. Version 1: a 9-value header; version 2 adds
/// a 10th, the spline flow's [`SplineImpl`] number. A flow trained with the tensor spline
/// (and every MAF) is still written as version 1, byte for byte as before; a fused-spline
/// flow as version 2. Both are read.
pub const FILE_VERSION: u32 = 2;
/// Rows per tensor pass in `log_prob`, `sample` and the validation loss.
const CHUNK: usize = 8192;
/// Largest accepted number of atoms of the atomic (APT) loss.
pub const MAX_ATOMS: usize = 1000;
/// Domain of the fixed stream that draws the validation rows' atoms.
const VALIDATION_ATOMS_DOMAIN: u64 = 0x4e45_5552_4156_0000; // "NEURAV"
/// `½ log 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

#[derive(Debug)]
enum Layers {
    Nsf(Vec<Coupling>),
    Maf(Vec<Made>),
}

/// A conditional normalizing flow `q(target | context)` (see the crate docs).
#[derive(Debug)]
pub struct ConditionalFlow {
    settings: FlowSettings,
    target_dim: usize,
    context_dim: usize,
    layers: Layers,
    vars: Vec<(String, Var)>,
    target_std: Standardiser,
    context_std: Standardiser,
    fitted: bool,
    reverse: Option<Tensor>,
}

/// What one [`ConditionalFlow::fit`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FitReport {
    /// Epochs run.
    pub epochs: usize,
    /// The epoch (from 0) whose parameters were kept: the lowest validation loss.
    pub best_epoch: usize,
    /// Weighted mean training loss (negative log-density in the data's units) per epoch.
    pub train_loss: Vec<f64>,
    /// Weighted mean validation loss per epoch.
    pub validation_loss: Vec<f64>,
}

impl ConditionalFlow {
    /// A flow for `target_dim`-dimensional targets given `context_dim`-dimensional contexts,
    /// its weights drawn from `SimStream::new(seed, 0)` (PyTorch's default initialisation).
    /// Until the first [`fit`](Self::fit) the standardisation is the identity.
    ///
    /// # Errors
    /// [`NeuralError::Dimension`] / [`NeuralError::Setting`] from the settings or dimensions,
    /// and [`NeuralError::Dimension`] `parameters` for an architecture of more than
    /// [`MAX_PARAMETERS`](crate::MAX_PARAMETERS) trainable scalars.
    pub fn new(
        settings: FlowSettings,
        target_dim: usize,
        context_dim: usize,
        seed: u64,
    ) -> Result<Self> {
        let mut rng = SimStream::new(seed, 0);
        Self::build(settings, target_dim, context_dim, Source::Random(&mut rng))
    }

    fn build(
        settings: FlowSettings,
        target_dim: usize,
        context_dim: usize,
        source: Source<'_>,
    ) -> Result<Self> {
        settings.check()?;
        check_count("target_dim", target_dim, MAX_DIM)?;
        check_count("context_dim", context_dim, MAX_DIM)?;
        check_count(
            "parameters",
            settings.parameter_count(target_dim, context_dim),
            MAX_PARAMETERS,
        )?;
        let mut b = Builder::new(source);
        let layers = match settings {
            FlowSettings::Nsf(s) => Layers::Nsf(
                (0..s.layers)
                    .map(|l| {
                        Coupling::new(&mut b, &format!("layer{l}"), l, target_dim, context_dim, &s)
                    })
                    .collect::<Result<_>>()?,
            ),
            FlowSettings::Maf(s) => Layers::Maf(
                (0..s.layers)
                    .map(|l| Made::new(&mut b, &format!("layer{l}"), target_dim, context_dim, &s))
                    .collect::<Result<_>>()?,
            ),
        };
        let reverse = if target_dim > 1 {
            #[allow(clippy::cast_possible_truncation)]
            let idx: Vec<u32> = (0..target_dim as u32).rev().collect();
            Some(Tensor::new(idx.as_slice(), &Device::Cpu).map_err(backend)?)
        } else {
            None
        };
        Ok(Self {
            settings,
            target_dim,
            context_dim,
            layers,
            vars: b.vars,
            target_std: Standardiser::identity(target_dim),
            context_std: Standardiser::identity(context_dim),
            fitted: false,
            reverse,
        })
    }

    /// The architecture.
    #[must_use]
    pub fn settings(&self) -> FlowSettings {
        self.settings
    }

    /// Dimension of the target.
    #[must_use]
    pub fn target_dim(&self) -> usize {
        self.target_dim
    }

    /// Dimension of the context.
    #[must_use]
    pub fn context_dim(&self) -> usize {
        self.context_dim
    }

    /// Number of trainable scalars.
    #[must_use]
    pub fn parameter_count(&self) -> usize {
        self.vars
            .iter()
            .map(|(_, v)| v.as_tensor().elem_count())
            .sum()
    }

    /// Standardised data → (noise, Σ log|det|) through every layer.
    fn to_noise(&self, y: &Tensor, c: &Tensor) -> Result<(Tensor, Tensor)> {
        let n = y.dims()[0];
        let mut y = y.clone();
        let mut ld = Tensor::zeros(n, DType::F32, &Device::Cpu).map_err(backend)?;
        match &self.layers {
            Layers::Nsf(ls) => {
                for l in ls {
                    let (u, l_ld) = l.forward(&y, c)?;
                    y = u;
                    ld = (ld + l_ld).map_err(backend)?;
                }
            }
            Layers::Maf(ls) => {
                for (i, l) in ls.iter().enumerate() {
                    if i > 0
                        && let Some(r) = &self.reverse
                    {
                        y = y.index_select(r, 1).map_err(backend)?;
                    }
                    let (u, l_ld) = l.forward(&y, c)?;
                    y = u;
                    ld = (ld + l_ld).map_err(backend)?;
                }
            }
        }
        Ok((y, ld))
    }

    /// Noise → standardised data.
    fn to_data(&self, u: &Tensor, c: &Tensor) -> Result<Tensor> {
        let mut y = u.clone();
        match &self.layers {
            Layers::Nsf(ls) => {
                for l in ls.iter().rev() {
                    y = l.inverse(&y, c)?;
                }
            }
            Layers::Maf(ls) => {
                for (i, l) in ls.iter().enumerate().rev() {
                    y = l.inverse(&y, c)?;
                    if i > 0
                        && let Some(r) = &self.reverse
                    {
                        y = y.index_select(r, 1).map_err(backend)?;
                    }
                }
            }
        }
        Ok(y)
    }

    /// `log q(y | c)` of standardised rows, without the standardisation's Jacobian.
    fn log_prob_z(&self, y: &Tensor, c: &Tensor) -> Result<Tensor> {
        let (u, ld) = self.to_noise(y, c)?;
        #[allow(clippy::cast_precision_loss)]
        let norm = -HALF_LN_2PI * self.target_dim as f64;
        let base = u
            .sqr()
            .and_then(|s| s.sum(D::Minus1))
            .and_then(|s| s.affine(-0.5, norm))
            .map_err(backend)?;
        (base + ld).map_err(backend)
    }

    fn tensor(values: Vec<f32>, rows: usize, cols: usize) -> Result<Tensor> {
        Tensor::from_vec(values, (rows, cols), &Device::Cpu).map_err(backend)
    }

    /// `log q(target | context)` of `n` rows (row-major `n × target_dim` and
    /// `n × context_dim`) into `out` (`n` values), in the data's own units.
    ///
    /// # Errors
    /// [`NeuralError::Length`] for buffers that disagree; [`NeuralError::NonFinite`] for a NaN
    /// or infinite value.
    pub fn log_prob(&self, target: &[f64], context: &[f64], out: &mut [f64]) -> Result<()> {
        let n = out.len();
        check_len("target", target.len(), n * self.target_dim)?;
        check_len("context", context.len(), n * self.context_dim)?;
        check_rows("target", target, self.target_dim)?;
        check_rows("context", context, self.context_dim)?;
        let jac = self.target_std.log_jacobian();
        let mut start = 0;
        while start < n {
            let m = CHUNK.min(n - start);
            let y = Self::tensor(
                self.target_std
                    .apply(&target[start * self.target_dim..(start + m) * self.target_dim]),
                m,
                self.target_dim,
            )?;
            let c = Self::tensor(
                self.context_std
                    .apply(&context[start * self.context_dim..(start + m) * self.context_dim]),
                m,
                self.context_dim,
            )?;
            let lp = self.log_prob_z(&y, &c)?.to_vec1::<f32>().map_err(backend)?;
            for (o, v) in out[start..start + m].iter_mut().zip(lp) {
                *o = f64::from(v) - jac;
            }
            start += m;
        }
        Ok(())
    }

    /// Draws `out.len() / target_dim` targets from `q(· | context)` (one context row) into
    /// `out`, row-major; base normals from `rng` (public simulation randomness).
    ///
    /// # Errors
    /// [`NeuralError::Length`] if `context` is not one row or `out` not whole rows;
    /// [`NeuralError::NonFinite`] for a NaN or infinite context.
    pub fn sample<R: Rng + ?Sized>(
        &self,
        context: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<()> {
        check_len("context", context.len(), self.context_dim)?;
        check_rows("context", context, self.context_dim)?;
        let n = out.len() / self.target_dim;
        check_len("out", out.len(), n * self.target_dim)?;
        let cz = self.context_std.apply(context);
        let mut start = 0;
        while start < n {
            let m = CHUNK.min(n - start);
            #[allow(clippy::cast_possible_truncation)]
            let u: Vec<f32> = (0..m * self.target_dim)
                .map(|_| ziggurat_normal(rng) as f32)
                .collect();
            let u = Self::tensor(u, m, self.target_dim)?;
            let c = Tensor::from_vec(cz.clone(), (1, self.context_dim), &Device::Cpu)
                .and_then(|c| c.broadcast_as((m, self.context_dim)))
                .and_then(|c| c.contiguous())
                .map_err(backend)?;
            let y = self
                .to_data(&u, &c)?
                .flatten_all()
                .and_then(|y| y.to_vec1::<f32>())
                .map_err(backend)?;
            for (i, (o, v)) in out[start * self.target_dim..(start + m) * self.target_dim]
                .iter_mut()
                .zip(y)
                .enumerate()
            {
                let j = i % self.target_dim;
                *o = f64::from(v) * self.target_std.sd[j] + self.target_std.mean[j];
            }
            start += m;
        }
        Ok(())
    }

    /// Trains on every row of `data` (all rounds), minimising the weighted mean negative
    /// log-density of the training rows with Adam over shuffled minibatches (`rng`: public
    /// simulation randomness), stopping after `patience` epochs without a lower validation
    /// loss, and keeps the parameters of the best epoch. The first call fits the
    /// standardisation of targets and contexts to the training rows; later calls keep it (the
    /// network's weights are only meaningful in its units).
    ///
    /// # Errors
    /// [`NeuralError::Setting`]/[`NeuralError::Dimension`] from `settings`;
    /// [`NeuralError::Length`] if `data`'s dimensions are not the flow's;
    /// [`NeuralError::TooFewPairs`] for an empty set; [`NeuralError::Diverged`] if the loss
    /// becomes NaN or infinite (the parameters are then those of the best epoch so far).
    pub fn fit<R: Rng + ?Sized>(
        &mut self,
        data: &TrainingSet,
        settings: &TrainSettings,
        rng: &mut R,
    ) -> Result<FitReport> {
        self.fit_objective(data, settings, rng, None)
    }

    /// Trains with the **atomic** loss of automatic posterior transformation (APT; Greenberg,
    /// Nonnenmacher & Macke 2019, §2.3 and App. A.2; the PPE-A loss of Xiong, Ju & Zhang,
    /// eq. 7–8): for a row `(θᵢ, xᵢ)` of a minibatch and `atoms − 1` contrasting targets `θⱼ`
    /// drawn uniformly (with replacement) from the minibatch's rows of *other* simulated
    /// pairs, the row's loss is
    /// `−log [ (q(θᵢ | xᵢ)/π(θᵢ)) / Σ_{k ∈ {i} ∪ atoms} (q(θ_k | xᵢ)/π(θ_k)) ]`,
    /// the negative log of the proposal-corrected posterior `q̃ ∝ q·p̃/π` over the atomic
    /// proposal `p̃` (uniform on the atoms). Its minimiser is the true posterior whatever
    /// proposals the rows were drawn from, so every earlier round's rows can be used.
    /// `log_prior[row]` is `ln π(target of row)` for every row of `data` (training and
    /// validation). Rows are weighted as in [`fit`](Self::fit). The validation loss is the
    /// same loss with atoms drawn once per call from a fixed stream (so epochs compare);
    /// both are reported without the standardisation's Jacobian (it cancels). The first call
    /// of either `fit` fits the standardisation.
    ///
    /// The contrasting atoms come from `rng` after each epoch's shuffle; a row whose minibatch
    /// holds no row of another pair after 64 tries uses its own target as the atom.
    ///
    /// # Errors
    /// As [`fit`](Self::fit); [`NeuralError::Dimension`] (`atoms`) unless
    /// `2 ≤ atoms ≤ MAX_ATOMS`; [`NeuralError::Length`] unless `log_prior` has one value
    /// per row; [`NeuralError::NonFinite`] (`log_prior`) for a NaN or infinite value (a target
    /// outside the prior's support).
    pub fn fit_atomic<R: Rng + ?Sized>(
        &mut self,
        data: &TrainingSet,
        log_prior: &[f64],
        atoms: usize,
        settings: &TrainSettings,
        rng: &mut R,
    ) -> Result<FitReport> {
        check_atomic(data, log_prior, atoms)?;
        self.fit_objective(data, settings, rng, Some((atoms, log_prior, None)))
    }

    /// [`fit_atomic`](Self::fit_atomic) with the **combined loss** of sbi's `SNPE_C`
    /// (`use_combined_loss`): a row with `mle[row]` adds its negative log-density
    /// `−log q(θᵢ | xᵢ)` to its atomic loss. Meant for the rows drawn from the prior (round 1
    /// of [`sppe`](crate::sppe)), for which maximum likelihood is itself consistent for the
    /// posterior: they anchor the flow's density where the atomic loss only fixes ratios
    /// between atoms. Both losses' minimiser is still the true posterior. The reported losses
    /// are the sum's weighted mean, the log-density without the standardisation's Jacobian
    /// (a constant).
    ///
    /// # Errors
    /// As [`fit_atomic`](Self::fit_atomic); [`NeuralError::Length`] unless `mle` has one value
    /// per row.
    pub fn fit_combined<R: Rng + ?Sized>(
        &mut self,
        data: &TrainingSet,
        log_prior: &[f64],
        mle: &[bool],
        atoms: usize,
        settings: &TrainSettings,
        rng: &mut R,
    ) -> Result<FitReport> {
        check_atomic(data, log_prior, atoms)?;
        check_len("mle", mle.len(), data.len())?;
        self.fit_objective(data, settings, rng, Some((atoms, log_prior, Some(mle))))
    }

    #[allow(clippy::too_many_lines)]
    fn fit_objective<R: Rng + ?Sized>(
        &mut self,
        data: &TrainingSet,
        settings: &TrainSettings,
        rng: &mut R,
        atomic: Option<AtomicLoss<'_>>,
    ) -> Result<FitReport> {
        settings.check()?;
        check_len(
            "training set target_dim",
            data.target_dim(),
            self.target_dim,
        )?;
        check_len(
            "training set context_dim",
            data.context_dim(),
            self.context_dim,
        )?;
        if data.is_empty() {
            return Err(NeuralError::TooFewPairs {
                pairs: 0,
                needed: 2,
            });
        }
        let train_mask: Vec<bool> = data.validation.iter().map(|v| !v).collect();
        if !self.fitted {
            self.target_std =
                Standardiser::fit(&data.target, self.target_dim, &data.weight, &train_mask);
            self.context_std =
                Standardiser::fit(&data.context, self.context_dim, &data.weight, &train_mask);
            self.fitted = true;
        }
        // the Jacobian cancels in the atomic loss's ratio
        let jac = if atomic.is_some() {
            0.0
        } else {
            self.target_std.log_jacobian()
        };
        let rows_of = |keep: bool| -> Vec<usize> {
            (0..data.len())
                .filter(|&r| data.validation[r] != keep)
                .collect()
        };
        let split = |keep: bool| -> Result<(Tensor, Tensor, Vec<f32>)> {
            let rows: Vec<usize> = (0..data.len())
                .filter(|&r| data.validation[r] != keep)
                .collect();
            let mut y = Vec::with_capacity(rows.len() * self.target_dim);
            let mut c = Vec::with_capacity(rows.len() * self.context_dim);
            let mut w = Vec::with_capacity(rows.len());
            for &r in &rows {
                y.extend_from_slice(&data.target[r * self.target_dim..(r + 1) * self.target_dim]);
                c.extend_from_slice(
                    &data.context[r * self.context_dim..(r + 1) * self.context_dim],
                );
                #[allow(clippy::cast_possible_truncation)]
                w.push(data.weight[r] as f32);
            }
            Ok((
                Self::tensor(self.target_std.apply(&y), rows.len(), self.target_dim)?,
                Self::tensor(self.context_std.apply(&c), rows.len(), self.context_dim)?,
                w,
            ))
        };
        let (ty, tc, tw) = split(true)?;
        let (vy, vc, vw) = split(false)?;
        let n_train = tw.len();
        // Atomic loss: each split's pair ids and log prior (f32), and the validation atoms.
        let atomic = match atomic {
            Some((atoms, log_prior, mle)) => {
                let side = |keep: bool| -> (Vec<usize>, Vec<f32>) {
                    let rows = rows_of(keep);
                    #[allow(clippy::cast_possible_truncation)]
                    let lp = rows.iter().map(|&r| log_prior[r] as f32).collect();
                    (rows.iter().map(|&r| data.pair[r]).collect(), lp)
                };
                let (train_pair, train_prior) = side(true);
                let (val_pair, val_prior) = side(false);
                // the combined loss's MLE mask of each split (1 or 0 per row)
                let mask = |keep: bool| -> Option<Vec<f32>> {
                    mle.map(|m| {
                        rows_of(keep)
                            .iter()
                            .map(|&r| if m[r] { 1.0 } else { 0.0 })
                            .collect()
                    })
                };
                let (train_mle, val_mle) = (mask(true), mask(false));
                let mut fixed = SimStream::with_domain(0, VALIDATION_ATOMS_DOMAIN, 0);
                let all: Vec<u32> = (0..vw.len())
                    .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                    .collect();
                let val_atoms = draw_atoms(&all, &val_pair, atoms, &mut fixed);
                Some(Atomic {
                    atoms,
                    train_pair,
                    train_prior,
                    val_prior,
                    val_atoms,
                    train_mle,
                    val_mle,
                })
            }
            None => None,
        };
        let vars: Vec<Var> = self.vars.iter().map(|(_, v)| v.clone()).collect();
        let mut adam = Adam::new(
            vars,
            settings.learning_rate,
            settings.weight_decay,
            settings.clip_max_norm,
        )
        .map_err(backend)?;
        let mut order: Vec<u32> = (0..n_train)
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        let mut report = FitReport {
            epochs: 0,
            best_epoch: 0,
            train_loss: Vec::new(),
            validation_loss: Vec::new(),
        };
        let mut best = f64::INFINITY;
        let mut best_params = self.snapshot()?;
        let mut since_best = 0;
        for epoch in 0..settings.max_epochs {
            for i in (1..n_train).rev() {
                order.swap(i, index_below(rng, i + 1));
            }
            let mut total = 0.0;
            let mut total_w = 0.0;
            for batch in order.chunks(settings.batch_size) {
                let idx = Tensor::new(batch, &Device::Cpu).map_err(backend)?;
                let y = ty.index_select(&idx, 0).map_err(backend)?;
                let c = tc.index_select(&idx, 0).map_err(backend)?;
                let bw: Vec<f32> = batch.iter().map(|&i| tw[i as usize]).collect();
                let wsum: f32 = bw.iter().sum();
                let w = Tensor::from_vec(bw, batch.len(), &Device::Cpu).map_err(backend)?;
                let lp = match &atomic {
                    None => self.log_prob_z(&y, &c)?,
                    Some(a) => {
                        let idx = draw_atoms(batch, &a.train_pair, a.atoms, rng);
                        let lp =
                            self.atomic_log_prob(&ty, &tc, batch, &idx, a.atoms, &a.train_prior)?;
                        match &a.train_mle {
                            None => lp,
                            Some(m) => {
                                let bm: Vec<f32> = batch.iter().map(|&i| m[i as usize]).collect();
                                let bm = Tensor::from_vec(bm, batch.len(), &Device::Cpu)
                                    .map_err(backend)?;
                                let own = (self.log_prob_z(&y, &c)? * bm).map_err(backend)?;
                                (lp + own).map_err(backend)?
                            }
                        }
                    }
                };
                let loss = (lp * w)
                    .and_then(|t| t.sum_all())
                    .and_then(|t| t.affine(-1.0 / f64::from(wsum), 0.0))
                    .map_err(backend)?;
                let value = f64::from(loss.to_scalar::<f32>().map_err(backend)?);
                if !value.is_finite() {
                    self.restore(&best_params)?;
                    return Err(NeuralError::Diverged { epoch });
                }
                total += value * f64::from(wsum);
                total_w += f64::from(wsum);
                let grads = loss.backward().map_err(backend)?;
                if !adam.step(&grads).map_err(backend)? {
                    self.restore(&best_params)?;
                    return Err(NeuralError::Diverged { epoch });
                }
            }
            report.train_loss.push(total / total_w + jac);
            let val = match &atomic {
                None => self.mean_nll(&vy, &vc, &vw)? + jac,
                Some(a) => self.mean_atomic_nll(&vy, &vc, &vw, a)?,
            };
            report.validation_loss.push(val);
            report.epochs = epoch + 1;
            if !val.is_finite() {
                self.restore(&best_params)?;
                return Err(NeuralError::Diverged { epoch });
            }
            if val < best {
                best = val;
                report.best_epoch = epoch;
                best_params = self.snapshot()?;
                since_best = 0;
            } else {
                since_best += 1;
                if since_best >= settings.patience {
                    break;
                }
            }
        }
        self.restore(&best_params)?;
        Ok(report)
    }

    /// The atomic log-probabilities `log q̃(θ_row | x_row)` of the rows `rows` (indices into
    /// `y`/`c`), whose atoms are `atoms_idx` (`atoms` indices into `y` per row, the first
    /// the row itself): `ℓ_k = log q(θ_k | x) − log π(θ_k)`, then `ℓ_0 − logsumexp_k ℓ_k`.
    fn atomic_log_prob(
        &self,
        y: &Tensor,
        c: &Tensor,
        rows: &[u32],
        atoms_idx: &[u32],
        atoms: usize,
        log_prior: &[f32],
    ) -> Result<Tensor> {
        let b = rows.len();
        let ctx: Vec<u32> = rows
            .iter()
            .flat_map(|&r| core::iter::repeat_n(r, atoms))
            .collect();
        let prior: Vec<f32> = atoms_idx.iter().map(|&i| log_prior[i as usize]).collect();
        let dev = &Device::Cpu;
        let yi = Tensor::new(atoms_idx, dev).map_err(backend)?;
        let ci = Tensor::new(ctx.as_slice(), dev).map_err(backend)?;
        let ya = y.index_select(&yi, 0).map_err(backend)?;
        let ca = c.index_select(&ci, 0).map_err(backend)?;
        let lp = self.log_prob_z(&ya, &ca)?;
        let prior = Tensor::from_vec(prior, b * atoms, dev).map_err(backend)?;
        let logits = (lp - prior)
            .and_then(|t| t.reshape((b, atoms)))
            .map_err(backend)?;
        let lse = logits.log_sum_exp(1).map_err(backend)?;
        let own = logits
            .narrow(1, 0, 1)
            .and_then(|t| t.squeeze(1))
            .map_err(backend)?;
        (own - lse).map_err(backend)
    }

    /// Weighted mean atomic loss of the validation rows (atoms fixed for the whole fit).
    fn mean_atomic_nll(&self, y: &Tensor, c: &Tensor, w: &[f32], a: &Atomic) -> Result<f64> {
        weighted_mean_nll(w, (CHUNK / a.atoms).max(1), |start, m| {
            let rows: Vec<u32> = (start..start + m)
                .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect();
            let atoms = &a.val_atoms[start * a.atoms..(start + m) * a.atoms];
            let mut lp = self
                .atomic_log_prob(y, c, &rows, atoms, a.atoms, &a.val_prior)?
                .to_vec1::<f32>()
                .map_err(backend)?;
            if let Some(mask) = &a.val_mle {
                let own = self
                    .log_prob_z(
                        &y.narrow(0, start, m).map_err(backend)?,
                        &c.narrow(0, start, m).map_err(backend)?,
                    )?
                    .to_vec1::<f32>()
                    .map_err(backend)?;
                for ((v, o), k) in lp.iter_mut().zip(own).zip(&mask[start..start + m]) {
                    *v += o * k;
                }
            }
            Ok(lp)
        })
    }

    /// Weighted mean negative log-density of standardised rows (no Jacobian).
    fn mean_nll(&self, y: &Tensor, c: &Tensor, w: &[f32]) -> Result<f64> {
        weighted_mean_nll(w, CHUNK, |start, m| {
            self.log_prob_z(
                &y.narrow(0, start, m).map_err(backend)?,
                &c.narrow(0, start, m).map_err(backend)?,
            )?
            .to_vec1::<f32>()
            .map_err(backend)
        })
    }

    fn snapshot(&self) -> Result<Vec<Tensor>> {
        self.vars
            .iter()
            .map(|(_, v)| v.as_tensor().copy().map_err(backend))
            .collect()
    }

    fn restore(&self, params: &[Tensor]) -> Result<()> {
        for ((_, v), p) in self.vars.iter().zip(params) {
            v.set(p).map_err(backend)?;
        }
        Ok(())
    }

    /// Saves the estimator (architecture, standardisation, every weight) as a safetensors
    /// file ([`to_bytes`](Self::to_bytes) written to `path`, replacing what is there);
    /// [`load`](Self::load) gives back a flow whose log-densities and samples are
    /// bit-identical. The optimiser's state is not saved (each `fit` starts a fresh one).
    /// A front end writing into a folder it owns should write [`to_bytes`](Self::to_bytes)
    /// atomically instead (the pipeline's results folder does).
    ///
    /// # Errors
    /// [`NeuralError::Io`] if the file cannot be written.
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self.to_bytes()?;
        std::fs::write(path, bytes).map_err(|e| NeuralError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// The bytes of the safetensors file [`save`](Self::save) writes.
    ///
    /// # Errors
    /// [`NeuralError::Io`] if a tensor cannot be serialised.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut map: HashMap<String, Tensor> = HashMap::new();
        for (name, v) in &self.vars {
            map.insert(format!("param.{name}"), v.as_tensor().clone());
        }
        let (kind, a, b, c, d) = match self.settings {
            FlowSettings::Nsf(s) => (0u32, s.layers, s.hidden, s.blocks, s.bins),
            FlowSettings::Maf(s) => (1u32, s.layers, s.hidden, s.hidden_layers, 0),
        };
        let spline = match self.settings {
            FlowSettings::Nsf(s) => s.spline,
            FlowSettings::Maf(_) => SplineImpl::Tensor,
        };
        let mut header = vec![
            1,
            kind as usize,
            self.target_dim,
            self.context_dim,
            a,
            b,
            c,
            d,
            usize::from(self.fitted),
        ];
        if spline != SplineImpl::Tensor {
            header[0] = 2;
            header.push(spline.number() as usize);
        }
        let header: Vec<u32> = header
            .iter()
            .map(|&v| u32::try_from(v).unwrap_or(u32::MAX))
            .collect();
        let tail = match self.settings {
            FlowSettings::Nsf(s) => s.tail_bound,
            FlowSettings::Maf(_) => 0.0,
        };
        let dev = Device::Cpu;
        let mut put = |name: &str, t: candle_core::Result<Tensor>| -> Result<()> {
            map.insert(format!("meta.{name}"), t.map_err(backend)?);
            Ok(())
        };
        put("header", Tensor::new(header.as_slice(), &dev))?;
        put("tail_bound", Tensor::new(&[tail], &dev))?;
        put(
            "target_mean",
            Tensor::new(self.target_std.mean.as_slice(), &dev),
        )?;
        put(
            "target_sd",
            Tensor::new(self.target_std.sd.as_slice(), &dev),
        )?;
        put(
            "context_mean",
            Tensor::new(self.context_std.mean.as_slice(), &dev),
        )?;
        put(
            "context_sd",
            Tensor::new(self.context_std.sd.as_slice(), &dev),
        )?;
        safetensors::serialize(map, None).map_err(|e| NeuralError::Io {
            path: String::from("(in memory)"),
            message: e.to_string(),
        })
    }

    /// Loads an estimator written by [`save`](Self::save).
    ///
    /// # Errors
    /// [`NeuralError::Io`] if the file cannot be read; [`NeuralError::Format`] if it is not a
    /// safetensors file of this layout (missing or misshapen tensors, an unknown version,
    /// invalid settings, non-finite standardisation).
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| NeuralError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let map = candle_core::safetensors::load_buffer(&bytes, &Device::Cpu).map_err(|e| {
            NeuralError::Format {
                message: e.to_string(),
            }
        })?;
        let format = |message: String| NeuralError::Format { message };
        let get_u32 = |name: &str| -> Result<Vec<u32>> {
            map.get(&format!("meta.{name}"))
                .ok_or_else(|| format(format!("tensor meta.{name} is missing")))?
                .to_vec1::<u32>()
                .map_err(|e| format(e.to_string()))
        };
        let get_f64 = |name: &str| -> Result<Vec<f64>> {
            map.get(&format!("meta.{name}"))
                .ok_or_else(|| format(format!("tensor meta.{name} is missing")))?
                .to_vec1::<f64>()
                .map_err(|e| format(e.to_string()))
        };
        let h = get_u32("header")?;
        let spline = match (h.first(), h.len()) {
            (Some(1), 9) => SplineImpl::Tensor,
            (Some(2), 10) if h[1] == 0 => {
                SplineImpl::try_from(h[9]).map_err(|e| format(e.to_string()))?
            }
            _ => return Err(format(format!("unknown header {h:?}"))),
        };
        let u = |i: usize| h[i] as usize;
        let tail = get_f64("tail_bound")?;
        let settings = match (h[1], tail.as_slice()) {
            (0, &[tail_bound]) => FlowSettings::Nsf(NsfSettings {
                layers: u(4),
                hidden: u(5),
                blocks: u(6),
                bins: u(7),
                tail_bound,
                spline,
            }),
            (1, &[_]) => FlowSettings::Maf(MafSettings {
                layers: u(4),
                hidden: u(5),
                hidden_layers: u(6),
            }),
            _ => return Err(format("unknown flow kind".to_owned())),
        };
        let params: HashMap<String, Tensor> = map
            .iter()
            .filter_map(|(k, v)| k.strip_prefix("param.").map(|k| (k.to_owned(), v.clone())))
            .collect();
        let mut flow =
            Self::build(settings, u(2), u(3), Source::Loaded(&params)).map_err(|e| match e {
                NeuralError::Format { .. } => e,
                other => format(other.to_string()),
            })?;
        if flow.vars.len() != params.len() {
            return Err(format(format!(
                "{} weight tensors, the architecture has {}",
                params.len(),
                flow.vars.len()
            )));
        }
        let std = |m: &str, s: &str, dim: usize| -> Result<Standardiser> {
            let mean = get_f64(m)?;
            let sd = get_f64(s)?;
            if mean.len() != dim
                || sd.len() != dim
                || mean.iter().any(|v| !v.is_finite())
                || sd.iter().any(|v| !(v.is_finite() && *v > 0.0))
            {
                return Err(format(format!("invalid standardisation {m}/{s}")));
            }
            Ok(Standardiser { mean, sd })
        };
        flow.target_std = std("target_mean", "target_sd", flow.target_dim)?;
        flow.context_std = std("context_mean", "context_sd", flow.context_dim)?;
        flow.fitted = h[8] == 1;
        Ok(flow)
    }
}

/// The atomic loss of a fit: atoms per row, `ln π` per row, the combined loss's MLE mask.
type AtomicLoss<'a> = (usize, &'a [f64], Option<&'a [bool]>);

/// The atomic loss's per-fit state: atoms per row, each split's pair ids and log prior, the
/// validation rows' fixed atoms, and the combined loss's masks.
struct Atomic {
    atoms: usize,
    train_pair: Vec<usize>,
    train_prior: Vec<f32>,
    val_prior: Vec<f32>,
    val_atoms: Vec<u32>,
    /// The combined loss's MLE mask (1 or 0) per training and validation row.
    train_mle: Option<Vec<f32>>,
    val_mle: Option<Vec<f32>>,
}

/// `atoms` indices per row of `rows` (indices into a split whose rows belong to the pairs
/// `pair`): the row itself, then `atoms − 1` rows of `rows` drawn uniformly with replacement
/// among those of another pair (64 tries each; the row itself when they all fail).
fn draw_atoms<R: Rng + ?Sized>(
    rows: &[u32],
    pair: &[usize],
    atoms: usize,
    rng: &mut R,
) -> Vec<u32> {
    let mut out = Vec::with_capacity(rows.len() * atoms);
    for &r in rows {
        out.push(r);
        for _ in 1..atoms {
            let mut pick = r;
            for _ in 0..64 {
                let j = rows[index_below(rng, rows.len())];
                if pair[j as usize] != pair[r as usize] {
                    pick = j;
                    break;
                }
            }
            out.push(pick);
        }
    }
    out
}

/// `−Σ wᵢ lpᵢ / Σ wᵢ` over the rows, `lp` computed `step` rows at a time by
/// `lp_of(start, rows)`.
fn weighted_mean_nll(
    w: &[f32],
    step: usize,
    mut lp_of: impl FnMut(usize, usize) -> Result<Vec<f32>>,
) -> Result<f64> {
    let n = w.len();
    let mut total = 0.0;
    let mut total_w = 0.0;
    let mut start = 0;
    while start < n {
        let m = step.min(n - start);
        let lp = lp_of(start, m)?;
        for (v, &wi) in lp.iter().zip(&w[start..start + m]) {
            total -= f64::from(*v) * f64::from(wi);
            total_w += f64::from(wi);
        }
        start += m;
    }
    Ok(total / total_w)
}

/// The atomic loss's inputs: `2 ≤ atoms ≤ MAX_ATOMS` and one finite log prior per row.
fn check_atomic(data: &TrainingSet, log_prior: &[f64], atoms: usize) -> Result<()> {
    check_count("atoms", atoms, MAX_ATOMS)?;
    if atoms < 2 {
        return Err(NeuralError::Dimension {
            name: "atoms (at least 2)",
            value: atoms,
            max: MAX_ATOMS,
        });
    }
    check_len("log_prior", log_prior.len(), data.len())?;
    check_rows("log_prior", log_prior, 1)
}

fn check_len(name: &'static str, got: usize, expected: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(NeuralError::Length {
            name,
            expected,
            got,
        })
    }
}
