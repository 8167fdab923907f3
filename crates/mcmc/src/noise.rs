//! Privacy noise: the only place the samplers touch the noise RNG.

use crate::McmcError;
use crate::rng::NoNoise;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::NoNoise {}
    impl<R: rand_core::CryptoRng + ?Sized> Sealed for R {}
}

/// Source of privacy noise for the samplers (sealed).
///
/// Implemented for every [`rand_core::CryptoRng`], where noise is **discrete Gaussian**
/// noise on a fine public grid drawn exactly by `dpinfer-mechanisms`' [`Gaussian`]
/// mechanism (Canonne, Kamath & Steinke 2020), and for [`NoNoise`] (adds nothing; only the
/// exact kernels use it, and they never call it).
///
/// [`Gaussian`]: dpinfer_mechanisms::Gaussian
pub trait PrivacyNoise: sealed::Sealed {
    /// Releases `x + noise` with noise standard deviation at least `sigma`, for a quantity of
    /// sensitivity `sensitivity` lying in `[−bound, bound]`. Returns the released value and
    /// the effective σ used (≥ `sigma`), whose zCDP cost is at most `Δ²/(2σ²)`.
    ///
    /// # Errors
    ///
    /// Mechanism parameter errors or entropy failure.
    fn release(
        &mut self,
        x: f64,
        sigma: f64,
        sensitivity: f64,
        bound: f64,
    ) -> Result<(f64, f64), McmcError>;
    /// Vector form: releases `x` in place (ℓ₂ sensitivity `sensitivity`, every coordinate in
    /// `[−bound, bound]`); returns the effective σ.
    ///
    /// # Errors
    ///
    /// As [`PrivacyNoise::release`].
    fn release_vec(
        &mut self,
        x: &mut [f64],
        sigma: f64,
        sensitivity: f64,
        bound: f64,
    ) -> Result<f64, McmcError>;
    /// One uniform `u64` from the noise stream (for the V_corr draw).
    fn noise_u64(&mut self) -> u64;
    /// One continuous standard normal draw from the noise stream (the data-dependent part
    /// of DP Barker's noise; 0 for [`NoNoise`]).
    fn std_normal(&mut self) -> f64;
}

impl PrivacyNoise for NoNoise {
    fn release(&mut self, x: f64, _: f64, _: f64, _: f64) -> Result<(f64, f64), McmcError> {
        Ok((x, 0.0))
    }
    fn release_vec(&mut self, _: &mut [f64], _: f64, _: f64, _: f64) -> Result<f64, McmcError> {
        Ok(0.0)
    }
    fn noise_u64(&mut self) -> u64 {
        0
    }
    fn std_normal(&mut self) -> f64 {
        0.0
    }
}

/// Builds a grid Gaussian whose zCDP cost does not exceed `Δ²/(2σ²)` (the grid rounding can
/// raise the effective sensitivity; σ is then raised by the needed factor).
fn mechanism(
    dim: usize,
    sigma: f64,
    sensitivity: f64,
    bound: f64,
) -> Result<dpinfer_mechanisms::Gaussian, McmcError> {
    let target = sensitivity * sensitivity / (2.0 * sigma * sigma);
    let mut s = sigma;
    for _ in 0..8 {
        let m = dpinfer_mechanisms::Gaussian::vector(dim, s, sensitivity, -bound, bound)?;
        let r = m.rho();
        if r <= target {
            return Ok(m);
        }
        // Grid steps are ≈ σ·2⁻²³: step σ up by at least 2⁻²⁰ so the grid σ changes.
        s *= libm::sqrt(r / target).max(1.0) * (1.0 + 1.0 / 1_048_576.0);
    }
    Err(McmcError::AccountingFailed)
}

impl<R: rand_core::CryptoRng + ?Sized> PrivacyNoise for R {
    fn release(
        &mut self,
        x: f64,
        sigma: f64,
        sensitivity: f64,
        bound: f64,
    ) -> Result<(f64, f64), McmcError> {
        let m = mechanism(1, sigma, sensitivity, bound)?;
        Ok((m.release(x, self)?, m.effective_sigma()))
    }
    fn release_vec(
        &mut self,
        x: &mut [f64],
        sigma: f64,
        sensitivity: f64,
        bound: f64,
    ) -> Result<f64, McmcError> {
        let m = mechanism(x.len(), sigma, sensitivity, bound)?;
        let mut out = alloc::vec![0.0; x.len()];
        m.release_into(x, &mut out, self)?;
        x.copy_from_slice(&out);
        Ok(m.effective_sigma())
    }
    fn noise_u64(&mut self) -> u64 {
        self.next_u64()
    }
    fn std_normal(&mut self) -> f64 {
        crate::rng::std_normal(self)
    }
}

#[cfg(test)]
mod tests {
    use super::mechanism;

    /// The noise actually drawn never costs more zCDP than the budget assumed per release.
    #[test]
    fn mechanism_cost_never_exceeds_target() {
        for &(s, d, b) in &[
            (1.2, 0.6, 31.6),
            (1.0, 1.0, 10.0),
            (10.0, 1.0, 1e3),
            (0.03, 0.2, 5e4),
            (123.0, 7.0, 1e6),
        ] {
            for dim in [1usize, 2, 10] {
                let m = mechanism(dim, s, d, b).unwrap();
                assert!(m.rho() <= d * d / (2.0 * s * s), "{s} {d} {b} {dim}");
                assert!(m.effective_sigma() >= s);
                assert!(m.effective_sigma() <= s * 1.001);
            }
        }
    }
}
