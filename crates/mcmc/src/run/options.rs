//! The kernels' settings as a user writes them: every field optional, an unset one keeps the
//! kernel's default ([`Walk::new`], [`DpPenalty::new`], [`DpBarker::new`], [`DpHmc::new`]);
//! the (ε, δ) [`Target`] is not among them (the caller's budget). With the `serde` feature
//! each derives `Serialize`/`Deserialize` with `deny_unknown_fields`: the field names are the
//! `[sampler]` keys of `dpinfer run`, and an unset field serializes as `null` (the pipeline's
//! release fingerprint hashes that form, so fields are only ever added, each left out of the
//! serialized form while unset).

use alloc::vec::Vec;

use super::{DpBarker, DpHmc, DpPenalty, Kernel, Scale, Target, Walk, WalkKind};
use crate::Shear;
use crate::budget::Accounting;

/// The random-walk keys: a walk of `kind` with the set fields in place of [`Walk::new`]'s.
fn walk(
    kind: WalkKind,
    scale: Option<f64>,
    scales: Option<&Vec<f64>>,
    temperature: Option<f64>,
) -> Walk {
    let mut w = Walk::new(kind);
    if let Some(s) = scales {
        w.scale = Scale::PerCoordinate(s.clone());
    } else if let Some(s) = scale {
        w.scale = Scale::Uniform(s);
    }
    w.temperature = temperature.unwrap_or(w.temperature);
    w
}

/// Random-walk Metropolis ([`Kernel::Rwmh`], a Gaussian walk): non-private.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct RwmhOptions {
    /// Proposal step in every coordinate (default 0.05).
    pub proposal_scale: Option<f64>,
    /// Per-coordinate proposal steps (overrides `proposal_scale`).
    pub proposal_scales: Option<Vec<f64>>,
    /// Likelihood temperature `T ∈ (0, 1]` of π(θ)·L(θ)^T (default 1).
    pub temperature: Option<f64>,
}

impl RwmhOptions {
    /// The kernel (checked when a [`Run`](super::Run) is built).
    #[must_use]
    pub fn kernel(&self) -> Kernel {
        let scales = self.proposal_scales.as_ref();
        Kernel::Rwmh(walk(
            WalkKind::Gaussian,
            self.proposal_scale,
            scales,
            self.temperature,
        ))
    }
}

/// The DP penalty algorithm with the guided random walk ([`DpPenalty`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct DpPenaltyOptions {
    /// Proposal step in every coordinate (default 0.05).
    pub proposal_scale: Option<f64>,
    /// Per-coordinate proposal steps (overrides `proposal_scale`).
    pub proposal_scales: Option<Vec<f64>>,
    /// Likelihood temperature (default 1).
    pub temperature: Option<f64>,
    /// Per-row log-ratio clip per unit distance ([`DpPenalty::clip`], default 5).
    pub ratio_clip: Option<f64>,
    /// Noise scale τ (default 0.5).
    pub tau: Option<f64>,
    /// `"pld"` (exact, default) or `"zcdp"`.
    pub accounting: Option<Accounting>,
}

impl DpPenaltyOptions {
    /// The kernel for `target` (checked when a [`Run`](super::Run) is built).
    #[must_use]
    pub fn kernel(&self, target: Target) -> Kernel {
        let mut k = DpPenalty::new(target);
        let scales = self.proposal_scales.as_ref();
        k.walk = walk(
            WalkKind::Guided,
            self.proposal_scale,
            scales,
            self.temperature,
        );
        k.clip = self.ratio_clip.unwrap_or(k.clip);
        k.tau = self.tau.unwrap_or(k.tau);
        k.accounting = self.accounting.unwrap_or(k.accounting);
        Kernel::DpPenalty(k)
    }
}

/// DP Barker with minibatches ([`DpBarker`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct DpBarkerOptions {
    /// Proposal step in every coordinate (default 0.05).
    pub proposal_scale: Option<f64>,
    /// Per-coordinate proposal steps (overrides `proposal_scale`).
    pub proposal_scales: Option<Vec<f64>>,
    /// Likelihood temperature (batch/n in the thesis experiments; default 1).
    pub temperature: Option<f64>,
    /// Batch size |B| (default 1000).
    pub batch: Option<usize>,
    /// The Gaussian walk moves in the sheared coordinates `(θ₁, θ₂ + a(θ₁ − m)², θ₃, …)`
    /// ([`Proposal::Sheared`](crate::Proposal::Sheared); the scales are then the steps in
    /// those coordinates). Unset: the plain Gaussian walk. Left out of the serialized form
    /// while unset.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub shear: Option<Shear>,
}

impl DpBarkerOptions {
    /// The kernel for `target` (checked when a [`Run`](super::Run) is built).
    #[must_use]
    pub fn kernel(&self, target: Target) -> Kernel {
        let mut k = DpBarker::new(target);
        let scales = self.proposal_scales.as_ref();
        let kind = self.shear.map_or(WalkKind::Gaussian, WalkKind::Sheared);
        k.walk = walk(kind, self.proposal_scale, scales, self.temperature);
        k.batch = self.batch.unwrap_or(k.batch);
        Kernel::DpBarker(k)
    }
}

/// DP Hamiltonian Monte Carlo ([`DpHmc`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct DpHmcOptions {
    /// Leapfrog step size η (default 0.01).
    pub step_size: Option<f64>,
    /// Leapfrog steps L (default 10).
    pub leapfrog_steps: Option<u32>,
    /// Diagonal inverse mass matrix (default all 1).
    pub inv_mass: Option<Vec<f64>>,
    /// Likelihood temperature (default 1).
    pub temperature: Option<f64>,
    /// Per-row log-ratio clip `b_l` (default 5).
    pub ratio_clip: Option<f64>,
    /// Per-row gradient L2 clip `b_g` (default 5).
    pub grad_clip: Option<f64>,
    /// Noise scale of the ratio releases τ_l (default 0.5).
    pub tau_l: Option<f64>,
    /// Noise scale of the gradient releases τ_g (default 0.5).
    pub tau_g: Option<f64>,
    /// `"pld"` (exact, default) or `"zcdp"`.
    pub accounting: Option<Accounting>,
}

impl DpHmcOptions {
    /// The kernel for `target` (checked when a [`Run`](super::Run) is built).
    #[must_use]
    pub fn kernel(&self, target: Target) -> Kernel {
        let mut k = DpHmc::new(target);
        k.step_size = self.step_size.unwrap_or(k.step_size);
        k.leapfrog_steps = self.leapfrog_steps.unwrap_or(k.leapfrog_steps);
        if let Some(m) = &self.inv_mass {
            k.inv_mass = Some(m.clone());
        }
        k.temperature = self.temperature.unwrap_or(k.temperature);
        k.ratio_clip = self.ratio_clip.unwrap_or(k.ratio_clip);
        k.grad_clip = self.grad_clip.unwrap_or(k.grad_clip);
        k.tau_l = self.tau_l.unwrap_or(k.tau_l);
        k.tau_g = self.tau_g.unwrap_or(k.tau_g);
        k.accounting = self.accounting.unwrap_or(k.accounting);
        Kernel::DpHmc(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Target = Target {
        epsilon: 1.0,
        delta: 1e-5,
    };

    #[test]
    fn unset_options_are_the_kernels_defaults() {
        assert_eq!(
            RwmhOptions::default().kernel(),
            Kernel::Rwmh(Walk::new(WalkKind::Gaussian))
        );
        assert_eq!(
            DpPenaltyOptions::default().kernel(T),
            Kernel::DpPenalty(DpPenalty::new(T))
        );
        assert_eq!(
            DpBarkerOptions::default().kernel(T),
            Kernel::DpBarker(DpBarker::new(T))
        );
        assert_eq!(
            DpHmcOptions::default().kernel(T),
            Kernel::DpHmc(DpHmc::new(T))
        );
    }

    #[test]
    fn set_options_replace_the_defaults() {
        let o = DpHmcOptions {
            step_size: Some(0.02),
            leapfrog_steps: Some(7),
            inv_mass: Some(alloc::vec![2.0]),
            temperature: Some(0.5),
            ratio_clip: Some(3.0),
            grad_clip: Some(4.0),
            tau_l: Some(0.3),
            tau_g: Some(0.6),
            accounting: Some(Accounting::Zcdp),
        };
        let Kernel::DpHmc(k) = o.kernel(T) else {
            panic!("not DP HMC");
        };
        assert_eq!(
            (k.step_size, k.leapfrog_steps, k.inv_mass.as_deref()),
            (0.02, 7, Some(&[2.0][..]))
        );
        assert_eq!(
            (k.temperature, k.ratio_clip, k.grad_clip, k.tau_l, k.tau_g),
            (0.5, 3.0, 4.0, 0.3, 0.6)
        );
        assert_eq!(k.accounting, Accounting::Zcdp);
        // Per-coordinate scales win over the uniform one.
        let o = DpPenaltyOptions {
            proposal_scale: Some(0.2),
            proposal_scales: Some(alloc::vec![0.1, 0.3]),
            ratio_clip: Some(3.0),
            tau: Some(0.4),
            ..DpPenaltyOptions::default()
        };
        let Kernel::DpPenalty(k) = o.kernel(T) else {
            panic!("not DP penalty");
        };
        assert_eq!(k.walk.scale, Scale::PerCoordinate(alloc::vec![0.1, 0.3]));
        assert_eq!((k.clip, k.tau, k.walk.kind), (3.0, 0.4, WalkKind::Guided));
        let Kernel::DpBarker(k) = (DpBarkerOptions {
            proposal_scale: Some(0.2),
            batch: Some(50),
            ..DpBarkerOptions::default()
        })
        .kernel(T) else {
            panic!("not DP Barker");
        };
        assert_eq!((k.walk.scale, k.batch), (Scale::Uniform(0.2), 50));
        assert_eq!(k.walk.kind, WalkKind::Gaussian);
    }

    #[test]
    fn a_shear_turns_the_barker_walk_into_the_sheared_walk() {
        let shear = Shear { a: 20.0, m: 0.0 };
        let Kernel::DpBarker(k) = (DpBarkerOptions {
            proposal_scales: Some(alloc::vec![0.1, 0.035]),
            shear: Some(shear),
            ..DpBarkerOptions::default()
        })
        .kernel(T) else {
            panic!("not DP Barker");
        };
        assert_eq!(k.walk.kind, WalkKind::Sheared(shear));
        assert_eq!(
            k.walk.proposal(2),
            Ok(crate::Proposal::Sheared {
                scale: alloc::vec![0.1, 0.035],
                shear
            })
        );
    }
}
