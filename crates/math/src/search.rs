//! Integer search for the largest argument a monotone predicate accepts: the one
//! doubling-then-bisection loop behind every "how many steps fit in the budget" answer
//! (`dpinfer-accountants`' calibrations, `dpinfer-mcmc`'s iteration budgets).

/// The largest `k ∈ [0, max]` with `ok(k)`, for a predicate that is true from 1 up to some
/// `k` and false beyond (`ok(0)` is taken as true and never asked). Probes `1, 2, 4, …`
/// while `≤ max` (and `max` itself once the doubling passes it), then bisects between the
/// last accepted and the first refused argument: `O(log k)` calls, the same calls for the
/// same predicate. Returns 0 for `max = 0` or when `ok(1)` is false; the first error `ok`
/// returns is passed on.
///
/// # Errors
/// The predicate's own.
///
/// ```
/// use dpinfer_math::largest_true;
/// let k = largest_true(1 << 52, |k| Ok::<_, ()>(k * k <= 1_000_000_007))?;
/// assert_eq!(k, 31_622);
/// assert_eq!(largest_true(10, |_| Ok::<_, ()>(true))?, 10);
/// assert_eq!(largest_true(10, |k| Ok::<_, ()>(k < 1))?, 0);
/// assert_eq!(largest_true(10, |_| Err::<bool, _>("no")), Err("no"));
/// # Ok::<(), ()>(())
/// ```
pub fn largest_true<E>(max: u64, mut ok: impl FnMut(u64) -> Result<bool, E>) -> Result<u64, E> {
    if max == 0 || !ok(1)? {
        return Ok(0);
    }
    let mut lo = 1u64;
    let mut hi = 2u64;
    // `lo < max` only stops the doubling once it saturates at `max = u64::MAX`.
    while hi <= max && lo < max && ok(hi)? {
        lo = hi;
        hi = hi.saturating_mul(2);
    }
    if lo == max || (hi > max && ok(max)?) {
        return Ok(max);
    }
    // Invariant: ok(lo), !ok(hi).
    let mut hi = hi.min(max);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every threshold and cap up to 70: the exact answer, and never more than
    /// `2·log₂(max) + 3` calls.
    #[test]
    fn exhaustive_small() {
        for max in 0..70u64 {
            for t in 0..80u64 {
                let mut calls = 0u32;
                let k = largest_true(max, |k| {
                    calls += 1;
                    assert!((1..=max).contains(&k), "probe {k} outside 1..={max}");
                    Ok::<_, ()>(k <= t)
                });
                assert_eq!(k, Ok(t.min(max)), "max {max}, threshold {t}");
                assert!(calls <= 2 * (64 - max.leading_zeros()) + 3, "{calls} calls");
            }
        }
        assert_eq!(largest_true(u64::MAX, |_| Ok::<_, ()>(true)), Ok(u64::MAX));
        assert_eq!(
            largest_true(u64::MAX, |k| Ok::<_, ()>(k < 1 << 63)),
            Ok((1 << 63) - 1)
        );
    }
}
