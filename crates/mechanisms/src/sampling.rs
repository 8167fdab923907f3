//! Exact integer samplers after Canonne, Kamath & Steinke (2020).
//!
//! Everything here uses integer arithmetic only: no floating-point number is computed,
//! compared or rounded on the way from random bits to the sample. All arithmetic is
//! checked; parameters for which an intermediate would overflow make the sampler return
//! [`MechanismError::Overflow`] — it never silently resamples, truncates or wraps.
//!
//! These are *raw* noise samplers: they do no privacy bookkeeping. Use the mechanisms
//! ([`crate::Laplace`], [`crate::Gaussian`], …) to release data.
//!
//! # Parameter limits
//!
//! | sampler | parameters | limit |
//! |---|---|---|
//! | [`uniform_below`] | `n: u64` | `n ≥ 1` |
//! | [`uniform_below_u128`] | `n: u128` | `n ≥ 1` |
//! | [`bernoulli`] | `p/q`, `u128` | `q ≥ 1`, `p ≤ q` |
//! | [`bernoulli_exp_neg`] | `γ = num/den`, `u128` | `den ≥ 1`; `den·k` must fit `u128` for the loop counter `k` (k ≈ 20 has probability < 10⁻¹⁸) |
//! | [`discrete_laplace`] | scale `t/s`, `u64` | `t, s ≥ 1`; sample magnitude must fit `i64` |
//! | [`discrete_gaussian`] | `σ² = num/den`, `u64` | `num, den ≥ 1`; `(|Y|·den·t − num)²` must fit `u128` where `t = ⌊σ⌋+1` (holds for σ ≤ 2²⁴ and `den = 1` for all practically reachable `Y`) |
//!
//! # Timing
//!
//! The default samplers are *rejection* samplers: their running time is random, but it
//! depends only on the public parameters and on fresh random bits, never on private data
//! (the mechanisms add noise to data only after sampling). A caller that also wants the
//! running time to be independent of the random bits can use the fixed-trial variants
//! [`uniform_below_fixed`] and [`bernoulli_fixed`], which always consume the same number of
//! words and fail with [`MechanismError::TrialsExhausted`] with a documented probability.
//!
//! # References
//!
//! C. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
//! NeurIPS 2020, arXiv:2004.00010, Algorithms 1–3.

use crate::MechanismError;
use crate::rng::{NoiseRng, next_u64, next_u128};

/// Uniform integer in `{0, …, n−1}` by rejection (no modulo bias).
///
/// Draws a `u64`, rejects the `2⁶⁴ mod n` lowest values and reduces the rest modulo `n`,
/// so every residue has exactly `⌊2⁶⁴/n⌋` preimages. Expected draws `< 2`.
///
/// # Errors
///
/// [`MechanismError::ZeroDenominator`] if `n == 0`; [`MechanismError::Entropy`] if the RNG fails.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::sampling::uniform_below;
/// let mut rng = ChaCha20Rng::seed_from_u64(1);
/// let u = uniform_below(&mut rng, 6).unwrap();
/// assert!(u < 6);
/// assert!(uniform_below(&mut rng, 0).is_err());
/// ```
pub fn uniform_below<R: NoiseRng + ?Sized>(rng: &mut R, n: u64) -> Result<u64, MechanismError> {
    if n == 0 {
        return Err(MechanismError::ZeroDenominator);
    }
    // 2^64 mod n
    let reject = n.wrapping_neg() % n;
    loop {
        let r = next_u64(rng)?;
        if r >= reject {
            return Ok(r % n);
        }
    }
}

/// [`uniform_below`] with a fixed number of draws (constant work).
///
/// Always consumes exactly `trials` words and returns the first accepted one, so the
/// running time does not depend on the random bits. Fails with probability
/// `((2⁶⁴ mod n)/2⁶⁴)^trials ≤ 2^(−trials)` (for `n ≤ 2³²`, `≤ 2^(−32·trials)`).
///
/// # Errors
///
/// [`MechanismError::ZeroDenominator`] if `n == 0` or `trials == 0`;
/// [`MechanismError::TrialsExhausted`] if no draw was accepted;
/// [`MechanismError::Entropy`] if the RNG fails.
pub fn uniform_below_fixed<R: NoiseRng + ?Sized>(
    rng: &mut R,
    n: u64,
    trials: u32,
) -> Result<u64, MechanismError> {
    if n == 0 || trials == 0 {
        return Err(MechanismError::ZeroDenominator);
    }
    let reject = n.wrapping_neg() % n;
    let mut out = 0u64;
    let mut found = false;
    for _ in 0..trials {
        let r = next_u64(rng)?;
        let ok = r >= reject;
        // Select without branching on the value of r.
        let take = ok & !found;
        out = if take { r % n } else { out };
        found |= ok;
    }
    if found {
        Ok(out)
    } else {
        Err(MechanismError::TrialsExhausted)
    }
}

/// Uniform integer in `{0, …, n−1}` for `n: u128` by rejection (two words per draw).
///
/// # Errors
///
/// [`MechanismError::ZeroDenominator`] if `n == 0`; [`MechanismError::Entropy`] if the RNG fails.
pub fn uniform_below_u128<R: NoiseRng + ?Sized>(
    rng: &mut R,
    n: u128,
) -> Result<u128, MechanismError> {
    if n == 0 {
        return Err(MechanismError::ZeroDenominator);
    }
    if let Ok(small) = u64::try_from(n) {
        return uniform_below(rng, small).map(u128::from);
    }
    let reject = n.wrapping_neg() % n;
    loop {
        let r = next_u128(rng)?;
        if r >= reject {
            return Ok(r % n);
        }
    }
}

/// Exact Bernoulli(`p/q`) for integers `0 ≤ p ≤ q`, `q ≥ 1`: returns `uniform_below(q) < p`.
///
/// # Errors
///
/// [`MechanismError::ZeroDenominator`] if `q == 0`; [`MechanismError::OutOfRange`] if `p > q`;
/// [`MechanismError::Entropy`] if the RNG fails.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::sampling::bernoulli;
/// let mut rng = ChaCha20Rng::seed_from_u64(2);
/// assert!(bernoulli(&mut rng, 3, 3).unwrap());
/// assert!(!bernoulli(&mut rng, 0, 3).unwrap());
/// ```
pub fn bernoulli<R: NoiseRng + ?Sized>(
    rng: &mut R,
    p: u128,
    q: u128,
) -> Result<bool, MechanismError> {
    if q == 0 {
        return Err(MechanismError::ZeroDenominator);
    }
    if p > q {
        return Err(MechanismError::OutOfRange { param: "p" });
    }
    Ok(uniform_below_u128(rng, q)? < p)
}

/// Bernoulli(`p/q`) with a fixed number of `u64` draws (constant work), `q ≤ 2⁶⁴ − 1`.
///
/// See [`uniform_below_fixed`] for the failure probability.
///
/// # Errors
///
/// As [`bernoulli`] and [`uniform_below_fixed`].
pub fn bernoulli_fixed<R: NoiseRng + ?Sized>(
    rng: &mut R,
    p: u64,
    q: u64,
    trials: u32,
) -> Result<bool, MechanismError> {
    if q == 0 {
        return Err(MechanismError::ZeroDenominator);
    }
    if p > q {
        return Err(MechanismError::OutOfRange { param: "p" });
    }
    Ok(uniform_below_fixed(rng, q, trials)? < p)
}

/// Bernoulli(exp(−γ)) for `γ = num/den ∈ [0, 1]` (CKS20 Algorithm 1, first part).
fn bernoulli_exp_neg_unit<R: NoiseRng + ?Sized>(
    rng: &mut R,
    num: u128,
    den: u128,
) -> Result<bool, MechanismError> {
    // K ← 1; loop { A ← Bernoulli(γ/K); if A = 0 break; K ← K+1 }; return K odd.
    // P(K odd) = Σ_k odd [γ^{k−1}/(k−1)! − γ^k/k!] = e^{−γ}.
    let mut k: u128 = 1;
    loop {
        let q = den.checked_mul(k).ok_or(MechanismError::Overflow)?;
        if !bernoulli(rng, num, q)? {
            break;
        }
        k = k.checked_add(1).ok_or(MechanismError::Overflow)?;
    }
    Ok(k % 2 == 1)
}

/// Exact Bernoulli(exp(−γ)) for a rational `γ = num/den ≥ 0` (CKS20 Algorithm 1).
///
/// For `γ > 1` it multiplies `⌊γ⌋` independent Bernoulli(e⁻¹) coins (stopping at the
/// first 0) with one Bernoulli(exp(−(γ − ⌊γ⌋))) coin. Expected work is `O(1)` for every
/// `γ`.
///
/// # Errors
///
/// [`MechanismError::ZeroDenominator`] if `den == 0`; [`MechanismError::Overflow`] if
/// `den·k` overflows for the internal counter `k`; [`MechanismError::Entropy`] if the RNG fails.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::sampling::bernoulli_exp_neg;
/// let mut rng = ChaCha20Rng::seed_from_u64(3);
/// // exp(−0) = 1
/// assert!(bernoulli_exp_neg(&mut rng, 0, 7).unwrap());
/// ```
///
/// # References
///
/// Canonne, Kamath, Steinke (2020), Algorithm 1.
pub fn bernoulli_exp_neg<R: NoiseRng + ?Sized>(
    rng: &mut R,
    num: u128,
    den: u128,
) -> Result<bool, MechanismError> {
    if den == 0 {
        return Err(MechanismError::ZeroDenominator);
    }
    let whole = num / den;
    let frac = num % den;
    let mut i: u128 = 0;
    while i < whole {
        if !bernoulli_exp_neg_unit(rng, 1, 1)? {
            return Ok(false);
        }
        i += 1;
    }
    bernoulli_exp_neg_unit(rng, frac, den)
}

/// Exact discrete Laplace with scale `t/s`: `P(Z = z) ∝ exp(−|z|·s/t)` on ℤ
/// (CKS20 Algorithm 2).
///
/// `P(Z = z) = (1 − e^{−s/t}) / (1 + e^{−s/t}) · e^{−|z| s/t}`.
///
/// # Errors
///
/// [`MechanismError::ZeroDenominator`] if `t == 0` or `s == 0`; [`MechanismError::Overflow`]
/// if the magnitude of the sample would not fit `i64` (probability below `exp(−2⁶²·s/t)`);
/// [`MechanismError::Entropy`] if the RNG fails.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::sampling::discrete_laplace;
/// let mut rng = ChaCha20Rng::seed_from_u64(4);
/// let z: i64 = discrete_laplace(&mut rng, 10, 1).unwrap(); // scale 10
/// # let _ = z;
/// ```
///
/// # References
///
/// Canonne, Kamath, Steinke (2020), Algorithm 2.
pub fn discrete_laplace<R: NoiseRng + ?Sized>(
    rng: &mut R,
    t: u64,
    s: u64,
) -> Result<i64, MechanismError> {
    if t == 0 || s == 0 {
        return Err(MechanismError::ZeroDenominator);
    }
    let t128 = u128::from(t);
    loop {
        let u = uniform_below(rng, t)?;
        if !bernoulli_exp_neg(rng, u128::from(u), t128)? {
            continue;
        }
        let mut v: u128 = 0;
        while bernoulli_exp_neg_unit(rng, 1, 1)? {
            v = v.checked_add(1).ok_or(MechanismError::Overflow)?;
        }
        let negative = bernoulli(rng, 1, 2)?;
        let x = t128
            .checked_mul(v)
            .and_then(|tv| tv.checked_add(u128::from(u)))
            .ok_or(MechanismError::Overflow)?;
        let y = x / u128::from(s);
        if negative && y == 0 {
            continue;
        }
        let y = i64::try_from(y).map_err(|_| MechanismError::Overflow)?;
        return Ok(if negative { -y } else { y });
    }
}

/// Integer square root `⌊√n⌋`.
pub(crate) fn isqrt_u128(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    // Newton iteration from an over-estimate; monotonically decreasing.
    let bits = 128 - n.leading_zeros();
    let mut x: u128 = 1u128 << bits.div_ceil(2);
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// Exact discrete Gaussian with variance parameter `σ² = num/den`:
/// `P(Y = y) ∝ exp(−y²/(2σ²))` on ℤ (CKS20 Algorithm 3).
///
/// Proposes `Y ~` discrete Laplace with scale `t = ⌊σ⌋ + 1` and accepts with probability
/// `exp(−(|Y| − σ²/t)²/(2σ²))`, evaluated exactly as the rational
/// `(|Y|·den·t − num)² / (2·num·den·t²)`.
///
/// # Errors
///
/// [`MechanismError::ZeroDenominator`] if `num == 0` or `den == 0`;
/// [`MechanismError::Overflow`] if an intermediate does not fit `u128` (see the module
/// table of limits); [`MechanismError::Entropy`] if the RNG fails.
///
/// # Example
///
/// ```
/// # use chacha20::ChaCha20Rng; use rand_core::SeedableRng;
/// use dpinfer_mechanisms::sampling::discrete_gaussian;
/// let mut rng = ChaCha20Rng::seed_from_u64(5);
/// let y: i64 = discrete_gaussian(&mut rng, 9, 1).unwrap(); // σ = 3
/// # let _ = y;
/// ```
///
/// # References
///
/// Canonne, Kamath, Steinke (2020), Algorithm 3 and Theorem 4 (pmf) / Theorem 14 (ρ-zCDP with
/// ρ = Δ²/(2σ²)).
pub fn discrete_gaussian<R: NoiseRng + ?Sized>(
    rng: &mut R,
    num: u64,
    den: u64,
) -> Result<i64, MechanismError> {
    if num == 0 || den == 0 {
        return Err(MechanismError::ZeroDenominator);
    }
    let num = u128::from(num);
    let den = u128::from(den);
    let t = isqrt_u128(num / den) + 1;
    let t64 = u64::try_from(t).map_err(|_| MechanismError::Overflow)?;
    // 2·num·den·t²
    let gamma_den = num
        .checked_mul(den)
        .and_then(|v| v.checked_mul(2))
        .and_then(|v| v.checked_mul(t))
        .and_then(|v| v.checked_mul(t))
        .ok_or(MechanismError::Overflow)?;
    loop {
        let y = discrete_laplace(rng, t64, 1)?;
        let abs_y = u128::from(y.unsigned_abs());
        let a = abs_y
            .checked_mul(den)
            .and_then(|v| v.checked_mul(t))
            .ok_or(MechanismError::Overflow)?;
        let diff = a.abs_diff(num);
        let gamma_num = diff.checked_mul(diff).ok_or(MechanismError::Overflow)?;
        if bernoulli_exp_neg(rng, gamma_num, gamma_den)? {
            return Ok(y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_exact() {
        for n in 0u128..2000 {
            let r = isqrt_u128(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "n={n}");
        }
        for &n in &[
            u128::MAX,
            (1u128 << 100) - 1,
            1u128 << 100,
            u128::from(u64::MAX),
        ] {
            let r = isqrt_u128(n);
            assert!(r.checked_mul(r).is_some_and(|v| v <= n));
            assert!((r + 1).checked_mul(r + 1).is_none_or(|v| v > n));
        }
    }
}
