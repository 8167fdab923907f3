//! The family of private passes over a public pairs table ([`PrivatePass`]): SVT-ABC
//! ([`crate::svt::SvtAbc`]), Gaussian rejection ABCDP
//! ([`crate::gaussian::GaussianRejectionAbcdp`]) and soft-ABC ([`crate::soft::SoftAbcdp`]).
//! Each is built and checked from its settings (whose [`Sensitivity`](dpinfer_distances::Sensitivity)
//! carries the neighbouring relation), states its privacy claim before any noise is drawn,
//! runs once with the caller's noise generator and then releases θ rows with public facts —
//! one signature for the three, so a front end handles every pass (and the next one) alike.
//!
//! ```
//! # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
//! use dpinfer_abc::analysis::Resample;
//! use dpinfer_abc::pairs::PublicPairs;
//! use dpinfer_abc::pass::PrivatePass;
//! use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
//! use dpinfer_distances::{Neighbouring, Relations, Sensitivity};
//! let pairs = PublicPairs::from_parts(1, 1, vec![0.1, 0.2, 0.3], vec![0.9, 0.52, 0.1]).unwrap();
//! let settings = SvtAbcSettings { epsilon_abc: 0.05, epsilon_total: 1.0, c: 1,
//!     sensitivity: Sensitivity::declared(0.01, Relations::ADD_REMOVE).unwrap(), clip: 1.0,
//!     resample: Resample::Never };
//! let mut pass: Box<dyn PrivatePass<ChaCha20Rng>> =
//!     Box::new(SvtAbc::new(&pairs, |y: &[f64]| (y[0] - 0.5).abs(), settings).unwrap());
//! let claim = pass.claim().unwrap(); // known before any noise
//! assert_eq!(claim.relation, Neighbouring::AddRemove);
//! pass.run(&mut ChaCha20Rng::seed_from_u64(1)).unwrap();
//! let out = pass.release().unwrap();
//! assert!(out.samples.len() <= 1 && out.weights.is_none());
//! ```

use alloc::vec::Vec;

use dpinfer_accountants::Claim;

use crate::error::AbcError;

/// What a private pass released: θ rows (row-major), their weights for a weighted pass
/// (soft-ABC), and public facts about the run (noise scales, counts), in a fixed order.
#[derive(Clone, Debug, PartialEq)]
pub struct Released {
    /// Released θ, row-major.
    pub samples: Vec<f64>,
    /// Normalised weights of the rows (soft-ABC), else `None`.
    pub weights: Option<Vec<f64>>,
    /// Public facts: name and value.
    pub facts: Vec<(&'static str, f64)>,
}

/// A private pass over a public pairs table, generic over the noise generator `R` (a
/// [`NoiseRng`](dpinfer_mechanisms::NoiseRng)) so that it can be held as
/// `Box<dyn PrivatePass<R>>`.
pub trait PrivatePass<R: ?Sized> {
    /// The privacy claim of the whole pass, under the relation of its settings' sensitivity;
    /// known when the pass is built, before any noise is drawn.
    ///
    /// # Errors
    /// [`AbcError::Accounting`] if the accountant rejects the pass's events.
    fn claim(&self) -> Result<Claim, AbcError>;

    /// Runs the pass to the end, drawing every noise value from `noise`.
    ///
    /// # Errors
    /// [`AbcError::Mechanism`] if the noise generator fails.
    fn run(&mut self, noise: &mut R) -> Result<(), AbcError>;

    /// What the pass released (after [`PrivatePass::run`]): public post-processing of the
    /// noisy decisions or distances.
    ///
    /// # Errors
    /// As the pass's own accessors (e.g. [`AbcError::Empty`] for weights before a run).
    fn release(&self) -> Result<Released, AbcError>;
}

/// What a user sets of an SVT-ABC pass ([`SvtAbcSettings`](crate::svt::SvtAbcSettings)):
/// the budget and the distance's calibration complete it ([`SvtAbcOptions::settings`]). With
/// the `serde` feature its fields are the `[sampler]` keys of `dpinfer run` (`kind =
/// "svt-abc"`), unknown keys refused.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct SvtAbcOptions {
    /// ABC threshold ε_abc.
    pub epsilon_abc: f64,
    /// Stop after `c ≥ 1` acceptances.
    pub c: u64,
    /// RESAMPLE: `true` is [`Resample::AfterAccept`](crate::analysis::Resample::AfterAccept)
    /// (fresh threshold noise after each acceptance), `false` (default) `Resample::Never`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub resample: bool,
}

impl SvtAbcOptions {
    /// The settings with the total budget, the clipped distance's sensitivity and the clip
    /// (checked by [`SvtAbcSettings::validate`](crate::svt::SvtAbcSettings::validate)).
    #[must_use]
    pub fn settings(
        &self,
        epsilon_total: f64,
        sensitivity: dpinfer_distances::Sensitivity,
        clip: f64,
    ) -> crate::svt::SvtAbcSettings {
        use crate::analysis::Resample;
        crate::svt::SvtAbcSettings {
            epsilon_abc: self.epsilon_abc,
            epsilon_total,
            c: self.c,
            sensitivity,
            clip,
            resample: if self.resample {
                Resample::AfterAccept
            } else {
                Resample::Never
            },
        }
    }
}

/// What a user sets of a soft-ABC pass ([`SoftAbcdpSettings`](crate::soft::SoftAbcdpSettings)):
/// the threshold; the budget and the distance's calibration complete it
/// ([`SoftAbcOptions::settings`]). With the `serde` feature, the `[sampler]` keys of `kind =
/// "soft-abc"`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct SoftAbcOptions {
    /// Soft threshold ε_abc of the kernel `exp(−ρ/ε_abc)`.
    pub epsilon_abc: f64,
}

impl SoftAbcOptions {
    /// The settings with the total budget (ε, δ), the clipped distance's sensitivity and the
    /// clipping bound; the floor is [`SoftAbcdpSettings::FLOOR`](crate::soft::SoftAbcdpSettings::FLOOR).
    #[must_use]
    pub fn settings(
        &self,
        epsilon_total: f64,
        delta_total: f64,
        sensitivity: dpinfer_distances::Sensitivity,
        bound: f64,
    ) -> crate::soft::SoftAbcdpSettings {
        crate::soft::SoftAbcdpSettings {
            epsilon_abc: self.epsilon_abc,
            epsilon_total,
            delta_total,
            sensitivity,
            bound,
            floor: crate::soft::SoftAbcdpSettings::FLOOR,
        }
    }
}

/// What a user sets of a Gaussian rejection ABCDP pass
/// ([`GaussianRejectionSettings`](crate::gaussian::GaussianRejectionSettings)): the
/// threshold; the budget and the distance's calibration complete it
/// ([`GaussianAbcOptions::settings`]). With the `serde` feature, the `[sampler]` keys of
/// `kind = "gaussian-abc"`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct GaussianAbcOptions {
    /// ABC threshold ε_abc, below the clipping bound.
    pub epsilon_abc: f64,
}

impl GaussianAbcOptions {
    /// The settings with the total ε, the clipped distance's sensitivity and the clipping
    /// bound.
    #[must_use]
    pub fn settings(
        &self,
        epsilon_total: f64,
        sensitivity: dpinfer_distances::Sensitivity,
        bound: f64,
    ) -> crate::gaussian::GaussianRejectionSettings {
        crate::gaussian::GaussianRejectionSettings {
            epsilon_abc: self.epsilon_abc,
            epsilon_total,
            sensitivity,
            bound,
        }
    }
}

#[cfg(test)]
mod options_tests {
    use super::*;
    use crate::analysis::Resample;
    use dpinfer_distances::{Relations, Sensitivity};

    #[test]
    fn options_complete_into_the_settings_field_by_field() {
        let sens = Sensitivity::declared(0.25, Relations::ADD_REMOVE).unwrap();
        let o = SvtAbcOptions {
            epsilon_abc: 0.1,
            c: 5,
            resample: true,
        };
        let s = o.settings(1.5, sens, 2.0);
        assert_eq!(
            (s.epsilon_abc, s.epsilon_total, s.c, s.clip, s.resample),
            (0.1, 1.5, 5, 2.0, Resample::AfterAccept)
        );
        assert_eq!(s.sensitivity, sens);
        let never = SvtAbcOptions {
            resample: false,
            ..o
        };
        assert_eq!(never.settings(1.5, sens, 2.0).resample, Resample::Never);
        let s = SoftAbcOptions { epsilon_abc: 0.2 }.settings(1.0, 1e-5, sens, 3.0);
        assert_eq!(
            (
                s.epsilon_abc,
                s.epsilon_total,
                s.delta_total,
                s.bound,
                s.floor
            ),
            (0.2, 1.0, 1e-5, 3.0, crate::soft::SoftAbcdpSettings::FLOOR)
        );
        assert_eq!(s.sensitivity, sens);
        let s = GaussianAbcOptions { epsilon_abc: 0.3 }.settings(0.5, sens, 4.0);
        assert_eq!((s.epsilon_abc, s.epsilon_total, s.bound), (0.3, 0.5, 4.0));
        assert_eq!(s.sensitivity, sens);
    }
}
