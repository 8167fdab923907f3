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
