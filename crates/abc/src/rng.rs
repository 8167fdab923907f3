//! Public-randomness helpers on top of `rand_core` (perturbation kernels, resampling, priors in
//! tests). Never used for privacy noise: that comes from the caller's `CryptoRng` through
//! `dpinfer-mechanisms`.

use rand_core::Rng;

/// 2⁻⁵³.
const TWO_POW_M53: f64 = 1.0 / 9_007_199_254_740_992.0;

/// A uniform draw on the open interval (0, 1): the 53-bit grid shifted by half a step, so it
/// is never 0 or 1 and `ln` of it is always finite.
#[inline]
pub(crate) fn u01_open<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    // (k + 0.5)·2⁻⁵³ with k < 2⁵³ is exactly representable and lies in (0, 1).
    ((rng.next_u64() >> 11) as f64 + 0.5) * TWO_POW_M53
}

/// A standard normal draw by the Box–Muller transform on `libm` (identical on every target).
#[inline]
pub(crate) fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1 = u01_open(rng);
    let u2 = u01_open(rng);
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(core::f64::consts::TAU * u2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    #[test]
    fn uniform_is_open_and_has_right_moments() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let n = 200_000;
        let mut s = 0.0;
        for _ in 0..n {
            let u = u01_open(&mut rng);
            assert!(u > 0.0 && u < 1.0);
            s += u;
        }
        // mean 1/2, sd of the mean sqrt(1/12/n) ≈ 6.5e-4; 6 sd → false failure < 2e-9.
        assert!((s / f64::from(n) - 0.5).abs() < 6.0 * 6.5e-4);
    }

    #[test]
    fn normal_has_right_moments() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let n = 200_000_u32;
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let z = standard_normal(&mut rng);
            s += z;
            s2 += z * z;
        }
        let nf = f64::from(n);
        // sd(mean) = 1/sqrt(n) ≈ 2.2e-3; sd(mean of z²) = sqrt(2/n) ≈ 3.2e-3; 6 sd each.
        assert!((s / nf).abs() < 6.0 * 2.24e-3);
        assert!((s2 / nf - 1.0).abs() < 6.0 * 3.17e-3);
    }
}
