//! [`FnSimulator`]: a [`Simulator`] from a function, so a user's model is a few lines.

use core::fmt;

use crate::error::{SimError, check_len};
use crate::simulator::Simulator;
use rand_core::Rng;

/// A [`Simulator`] built from a closure `f(θ, rng, out)` and the two dimensions.
///
/// The closure receives the simulation randomness as `&mut dyn Rng` (public randomness only:
/// the samplers pass a [`SimStream`](crate::SimStream)) and writes `output_dim` values into
/// `out`; θ and `out` lengths are checked before it is called, and its output is checked for
/// NaN/∞ after (a non-finite output is reported as the recoverable
/// [`SimError::Degenerate`], "reject this θ"). To reject a θ explicitly, return
/// [`SimError::OutsideSupport`], [`SimError::Degenerate`] or a recoverable
/// [`SimError::Model`].
///
/// ```
/// use dpinfer_simulators::{FnSimulator, SimStream, Simulator, dist};
/// // y_i ~ N(μ, 1), i = 1..10
/// let model = FnSimulator::new(1, 10, |theta, rng, out| {
///     for y in out.iter_mut() {
///         *y = theta[0] + dist::std_normal(rng);
///     }
///     Ok(())
/// })?;
/// let mut y = [0.0; 10];
/// model.simulate(&[2.0], &mut SimStream::new(7, 0), &mut y)?;
/// assert!(y.iter().all(|v| v.is_finite()));
/// # Ok::<(), dpinfer_simulators::SimError>(())
/// ```
#[derive(Clone, Copy)]
pub struct FnSimulator<F> {
    param_dim: usize,
    output_dim: usize,
    f: F,
}

impl<F> fmt::Debug for FnSimulator<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnSimulator")
            .field("param_dim", &self.param_dim)
            .field("output_dim", &self.output_dim)
            .finish_non_exhaustive()
    }
}

impl<F> FnSimulator<F>
where
    F: Fn(&[f64], &mut dyn Rng, &mut [f64]) -> Result<(), SimError>,
{
    /// A simulator with θ of length `param_dim` and outputs of length `output_dim`.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] when either dimension is 0.
    pub fn new(param_dim: usize, output_dim: usize, f: F) -> Result<Self, SimError> {
        if param_dim == 0 {
            return Err(SimError::InvalidSize {
                name: "param_dim",
                value: 0,
            });
        }
        if output_dim == 0 {
            return Err(SimError::InvalidSize {
                name: "output_dim",
                value: 0,
            });
        }
        Ok(Self {
            param_dim,
            output_dim,
            f,
        })
    }
}

impl<F> Simulator for FnSimulator<F>
where
    F: Fn(&[f64], &mut dyn Rng, &mut [f64]) -> Result<(), SimError>,
{
    fn param_dim(&self) -> usize {
        self.param_dim
    }
    fn output_dim(&self) -> usize {
        self.output_dim
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        check_len("theta", self.param_dim, theta.len())?;
        check_len("out", self.output_dim, out.len())?;
        let mut r: &mut R = rng;
        (self.f)(theta, &mut r, out)?;
        if out.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(SimError::Degenerate {
                what: "non-finite simulator output",
            })
        }
    }
}
