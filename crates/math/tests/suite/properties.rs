//! Property tests over all of f64 (NaN, ±0, ±∞, subnormals, huge values): every function
//! returns its documented special values and range, never panics, is monotone where the
//! mathematical function is, and satisfies its identities (round trips, symmetries, Pascal's
//! rule, permutation invariance, compensated summation exactness).
#![allow(
    clippy::float_cmp,
    reason = "special values and symmetries are exact by design and checked exactly"
)]
#![allow(clippy::cast_precision_loss, reason = "test data")]

use dpinfer_math::{
    NeumaierSum, erfc, erfcx, ln_binomial, ln_binomial_int, ln_gamma, ln_norm_cdf,
    ln_norm_cdf_sub_exp, ln_norm_sf, log_add_exp, log_logistic, log_sub_exp, log1mexp, logsumexp,
    logsumexp_iter, norm_cdf, norm_cdf_diff, norm_cdf_sub_exp, norm_pdf, norm_quantile, norm_sf,
    softplus, two_product,
};
use proptest::prelude::*;

const EPS: f64 = f64::EPSILON;

/// Every class of double, with the special values and moderate values over-weighted.
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => proptest::num::f64::ANY,
        2 => prop::sample::select(vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            f64::MAX,
            f64::MIN,
            1.0,
            -1.0,
            0.5,
            -38.5,
            -37.5,
            26.0,
            -26.6,
        ]),
        3 => -60.0..60.0_f64,
    ]
}

/// Doubles in `[0, 1]`, heavy on the tails and the edges.
fn any_prob() -> impl Strategy<Value = f64> {
    prop_oneof![
        2 => 0.0..=1.0_f64,
        2 => (-323.5..0.0_f64).prop_map(|e| libm::pow(10.0, e)),
        1 => (-16.0..-0.3_f64).prop_map(|e| 1.0 - libm::pow(10.0, e)),
        1 => prop::sample::select(vec![0.0, 1.0, 5e-324, 0.5, 0.075, 0.925, 1.0 - EPS / 2.0]),
    ]
}

/// Whether `a + b == c` holds exactly in real arithmetic (Knuth's TwoSum error is zero).
fn sum_is_exact(a: f64, b: f64, c: f64) -> bool {
    let s = a + b;
    let bp = s - a;
    let ap = s - bp;
    s == c && (a - ap) + (b - bp) == 0.0
}

fn ulp(y: f64) -> f64 {
    let y = y.abs();
    if y.is_finite() {
        y.next_up() - y
    } else {
        f64::NAN
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn normal_cdf_family_special_values_and_range(x in any_f64()) {
        let c = norm_cdf(x);
        let s = norm_sf(x);
        let d = norm_pdf(x);
        let l = ln_norm_cdf(x);
        let ls = ln_norm_sf(x);
        if x.is_nan() {
            prop_assert!(c.is_nan() && s.is_nan() && d.is_nan() && l.is_nan() && ls.is_nan());
        } else {
            prop_assert!((0.0..=1.0).contains(&c), "Φ({x}) = {c}");
            prop_assert_eq!(s.to_bits(), norm_cdf(-x).to_bits());
            prop_assert!((0.0..=0.398_942_280_401_432_7).contains(&d));
            prop_assert_eq!(d.to_bits(), norm_pdf(-x).to_bits());
            prop_assert!(l <= 0.0 && !l.is_nan(), "ln Φ({x}) = {l}");
            prop_assert_eq!(ls.to_bits(), ln_norm_cdf(-x).to_bits());
            // ln Φ agrees with Φ wherever Φ is a normal number (exp turns an absolute error
            // of ulp(ln Φ) into a relative one, hence the |ln Φ| in the tolerance).
            if c >= f64::MIN_POSITIVE {
                prop_assert!((libm::exp(l) - c).abs() <= 4.0 * EPS * (l.abs() + 2.0) * c, "x={x}");
            }
        }
        if x == f64::NEG_INFINITY {
            prop_assert_eq!(c, 0.0);
            prop_assert_eq!(l, f64::NEG_INFINITY);
        }
        if x == f64::INFINITY {
            prop_assert_eq!(c, 1.0);
            prop_assert_eq!(l, 0.0);
            prop_assert_eq!(d, 0.0);
        }
    }

    #[test]
    fn normal_cdf_and_log_cdf_are_monotone(x in any_f64(), step in 0_u32..4) {
        prop_assume!(!x.is_nan());
        let mut y = x;
        for _ in 0..step {
            y = y.next_up();
        }
        // Adjacent doubles and far-apart pairs alike.
        for (a, b) in [(x, y), (x, x + 1.0), (x.min(0.0) * 2.0, x.min(0.0))] {
            if a <= b {
                prop_assert!(norm_cdf(a) <= norm_cdf(b), "Φ not monotone at {a}, {b}");
                prop_assert!(ln_norm_cdf(a) <= ln_norm_cdf(b), "ln Φ not monotone at {a}, {b}");
                prop_assert!(norm_sf(a) >= norm_sf(b));
            }
        }
    }

    #[test]
    fn quantile_special_values_range_and_monotone(p in any_f64(), q in any_prob(), k in 0_u32..4) {
        let x = norm_quantile(p);
        if p.is_nan() || !(0.0..=1.0).contains(&p) {
            prop_assert!(x.is_nan());
        } else if p == 0.0 {
            prop_assert_eq!(x, f64::NEG_INFINITY);
        } else if p == 1.0 {
            prop_assert_eq!(x, f64::INFINITY);
        } else {
            prop_assert!(x.is_finite() && x.abs() < 38.5, "Φ⁻¹({p}) = {x}");
        }
        let mut r = q;
        for _ in 0..k {
            r = r.next_up().min(1.0);
        }
        prop_assert!(norm_quantile(q) <= norm_quantile(r), "Φ⁻¹ not monotone at {q}, {r}");
        if 0.0 < q && q < 1.0 {
            // Antisymmetry where 1 − q is exact.
            let r = 1.0 - q;
            if sum_is_exact(r, q, 1.0) {
                let (a, b) = (norm_quantile(q), norm_quantile(r));
                prop_assert!((a + b).abs() <= 2.0 * ulp(a), "Φ⁻¹({q}) = {a}, Φ⁻¹({r}) = {b}");
            }
        }
    }

    #[test]
    fn quantile_inverts_cdf(x in -37.0..3.0_f64) {
        // Well-conditioned direction: Φ has a few ulp relative error, so Φ⁻¹(Φ(x)) may move by
        // that times Φ/φ, plus a few ulp of x.
        let p = norm_cdf(x);
        let back = norm_quantile(p);
        let tol = 8.0 * EPS * (p / norm_pdf(x) + x.abs());
        prop_assert!((back - x).abs() <= tol, "x={x} p={p} back={back} tol={tol}");
        // And the other way round, relative to p.
        let q = norm_cdf(norm_quantile(p));
        let tol_p = 8.0 * EPS * p + norm_pdf(x) * 4.0 * ulp(x);
        prop_assert!((q - p).abs() <= tol_p, "x={x} p={p} q={q}");
    }

    #[test]
    fn erfcx_special_values_and_range(x in any_f64()) {
        let v = erfcx(x);
        if x.is_nan() {
            prop_assert!(v.is_nan());
        } else if x >= 0.0 {
            prop_assert!((0.0..=1.0).contains(&v), "erfcx({x}) = {v}");
            if x == f64::INFINITY {
                prop_assert_eq!(v, 0.0);
            }
            // erfcx is decreasing on [0, ∞): compare with a larger argument.
            prop_assert!(erfcx(x * 1.5 + 1e-3) <= v);
        } else {
            prop_assert!(v >= 1.0, "erfcx({x}) = {v}");
            if x < -26.7 {
                prop_assert_eq!(v, f64::INFINITY);
            }
        }
        let e = erfc(x);
        prop_assert!(x.is_nan() || (0.0..=2.0).contains(&e));
    }

    #[test]
    fn erfcx_matches_erfc_where_both_are_representable(x in -5.0..26.0_f64) {
        let lhs = erfcx(x) * libm::exp(-x * x);
        let rhs = erfc(x);
        // exp(−x²) with x² rounded has relative error ≤ x²·ε plus its own rounding.
        prop_assert!((lhs - rhs).abs() <= (8.0 + 2.0 * x * x) * EPS * rhs, "x={x}");
    }

    #[test]
    fn log_add_exp_properties(a in any_f64(), b in any_f64()) {
        let v = log_add_exp(a, b);
        prop_assert_eq!(v.to_bits(), log_add_exp(b, a).to_bits());
        if a.is_nan() || b.is_nan() {
            prop_assert!(v.is_nan());
        } else {
            prop_assert!(v >= a.max(b), "log_add_exp({a}, {b}) = {v}");
            if a == f64::NEG_INFINITY {
                prop_assert_eq!(v, b);
            }
            if a.is_finite() && b.is_finite() && a.max(b) < 1e300 {
                prop_assert!(v <= a.max(b) + core::f64::consts::LN_2 * (1.0 + 4.0 * EPS) + ulp(a.max(b)));
            }
        }
    }

    #[test]
    fn log_sub_exp_properties(a in any_f64(), b in any_f64()) {
        let v = log_sub_exp(a, b);
        if a.is_nan() || b.is_nan() || a < b {
            prop_assert!(v.is_nan());
        } else if a == b {
            prop_assert!(v == f64::NEG_INFINITY || (a == f64::INFINITY && v.is_nan()));
        } else {
            prop_assert!(v <= a, "log_sub_exp({a}, {b}) = {v}");
            // Inverse of log_add_exp where the sum is well-conditioned.
            if a.is_finite() && b.is_finite() && a - b > 1e-3 && a.abs() < 1e15 {
                let back = log_add_exp(v, b);
                prop_assert!((back - a).abs() <= 8.0 * EPS * (a.abs() + b.abs() + 1.0), "{a} {b}");
            }
        }
    }

    #[test]
    fn log1mexp_properties(x in any_f64()) {
        let v = log1mexp(x);
        if x.is_nan() || x > 0.0 {
            prop_assert!(v.is_nan());
        } else if x == 0.0 {
            prop_assert_eq!(v, f64::NEG_INFINITY);
        } else {
            prop_assert!(v <= 0.0 && !v.is_nan());
            if x == f64::NEG_INFINITY {
                prop_assert_eq!(v, 0.0);
            }
            // Decreasing in |x| → increasing toward 0 from below: log1mexp(2x) ≥ log1mexp(x).
            if x.is_finite() && x > -1e300 {
                prop_assert!(log1mexp(2.0 * x) >= v);
            }
        }
    }

    #[test]
    fn logsumexp_properties(
        xs in prop::collection::vec(any_f64(), 0..12),
        seed in any::<u64>(),
    ) {
        let v = logsumexp(&xs);
        prop_assert_eq!(v.to_bits(), logsumexp_iter(xs.iter().copied()).to_bits());
        if xs.iter().any(|x| x.is_nan()) {
            prop_assert!(v.is_nan());
            return Ok(());
        }
        let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if xs.is_empty() || m == f64::NEG_INFINITY {
            prop_assert_eq!(v, f64::NEG_INFINITY);
            return Ok(());
        }
        if m == f64::INFINITY {
            prop_assert_eq!(v, f64::INFINITY);
            return Ok(());
        }
        let n = xs.len() as f64;
        prop_assert!(v >= m && v <= m + libm::log(n) * (1.0 + 4.0 * EPS) + 4.0 * ulp(m), "{xs:?} -> {v}");
        // Permutation invariance (up to rounding): a seeded Fisher–Yates shuffle.
        let mut ys = xs.clone();
        let mut s = seed;
        for i in (1..ys.len()).rev() {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let j = usize::try_from((s >> 33) % (i as u64 + 1)).expect("small");
            ys.swap(i, j);
        }
        let w = logsumexp(&ys);
        let scale = xs.iter().filter(|x| x.is_finite()).fold(0.0_f64, |acc, x| acc.max(x.abs()));
        prop_assert!((v - w).abs() <= 4.0 * n * EPS * (scale + 1.0), "{v} vs {w}");
    }

    #[test]
    fn softplus_and_log_logistic(x in any_f64()) {
        let s = softplus(x);
        let l = log_logistic(x);
        if x.is_nan() {
            prop_assert!(s.is_nan() && l.is_nan());
            return Ok(());
        }
        prop_assert!(s >= 0.0 && s >= x, "softplus({x}) = {s}");
        prop_assert!(l <= 0.0, "log σ({x}) = {l}");
        prop_assert_eq!(l.to_bits(), (-softplus(-x)).to_bits());
        if x.is_finite() && x.abs() < 1e15 {
            // softplus(x) − softplus(−x) = x.
            prop_assert!((s - softplus(-x) - x).abs() <= 4.0 * EPS * (x.abs() + 1.0));
        }
        if x == f64::INFINITY {
            prop_assert_eq!(s, f64::INFINITY);
            prop_assert_eq!(l, 0.0);
        }
        if x == f64::NEG_INFINITY {
            prop_assert_eq!(s, 0.0);
            prop_assert_eq!(l, f64::NEG_INFINITY);
        }
    }

    #[test]
    fn ln_gamma_special_values(x in any_f64()) {
        let v = ln_gamma(x);
        if x.is_nan() {
            prop_assert!(v.is_nan());
        } else if x <= 0.0 && libm::floor(x) == x {
            prop_assert_eq!(v, f64::INFINITY, "pole at {}", x);
        } else if x > 0.0 && x < 1e300 {
            // Recurrence ln Γ(x+1) = ln Γ(x) + ln x where the terms do not cancel.
            if (3.0..1e15).contains(&x) {
                let r = ln_gamma(x + 1.0) - v - libm::log(x);
                prop_assert!(r.abs() <= 8.0 * EPS * (v.abs() + 1.0), "x={x}");
            }
        }
    }

    #[test]
    fn ln_binomial_domain_and_symmetry(n in any_f64(), k in any_f64()) {
        let v = ln_binomial(n, k);
        if n.is_nan() || k.is_nan() || k < 0.0 || k > n || (n.is_infinite() && k.is_infinite()) {
            prop_assert!(v.is_nan(), "ln C({n}, {k}) = {v}");
            return Ok(());
        }
        prop_assert!(!v.is_nan());
        if k == 0.0 || k == n {
            prop_assert_eq!(v, 0.0);
        }
        if n.is_finite() {
            prop_assert!(v >= 0.0 && v.is_finite(), "ln C({n}, {k}) = {v}");
            let m = n - k;
            if m >= 0.0 && sum_is_exact(m, k, n) {
                // n − k exact, so C(n, k) = C(n, n − k) must give the same bits.
                prop_assert_eq!(v.to_bits(), ln_binomial(n, m).to_bits());
            }
        }
    }

    #[test]
    fn ln_binomial_real_small_arguments(n in 0.0..40.0_f64, t in 0.0..=1.0_f64) {
        // Finite and ≥ 0 everywhere on the domain, continuous across the branch points.
        let k = n * t;
        let v = ln_binomial(n, k);
        prop_assert!(v.is_finite() && v >= 0.0, "ln C({n}, {k}) = {v}");
        let k2 = (k * (1.0 + 1e-9)).min(n);
        let v2 = ln_binomial(n, k2);
        prop_assert!((v - v2).abs() <= 1e-6 * (1.0 + v.abs()), "jump at ({n}, {k}): {v} vs {v2}");
    }

    #[test]
    fn ln_binomial_int_pascal(n in 1_u64..2000, k in 0_u64..2000) {
        // Pascal's rule in log space, an independent identity for every branch.
        let k = k % (n + 1);
        let lhs = ln_binomial_int(n, k);
        let rhs = log_add_exp(
            if k == 0 { f64::NEG_INFINITY } else { ln_binomial_int(n - 1, k - 1) },
            ln_binomial_int(n - 1, k),
        );
        prop_assert!((lhs - rhs).abs() <= 8.0 * EPS * lhs.abs().max(1.0), "C({n},{k}): {lhs} vs {rhs}");
        // The real version agrees on integers.
        let r = ln_binomial(n as f64, k as f64);
        prop_assert!((r - lhs).abs() <= 4.0 * EPS * lhs.abs().max(1.0));
        prop_assert_eq!(ln_binomial_int(n, n + 1 + k), f64::NEG_INFINITY);
    }

    #[test]
    fn ln_binomial_int_huge(n in any::<u64>(), k in any::<u64>()) {
        let v = ln_binomial_int(n, k);
        if k > n {
            prop_assert_eq!(v, f64::NEG_INFINITY);
        } else {
            prop_assert!(v.is_finite() && v >= 0.0);
            prop_assert_eq!(v.to_bits(), ln_binomial_int(n, n - k).to_bits());
        }
    }

    #[test]
    fn norm_cdf_sub_exp_matches_direct_difference(a in -8.0..8.0_f64, b in -8.0..8.0_f64, eps in 0.0..5.0_f64) {
        // Where no cancellation happens the plain formula is accurate: compare against it.
        let direct = norm_cdf(a) - libm::exp(eps) * norm_cdf(b);
        let v = norm_cdf_sub_exp(a, b, eps);
        let scale = norm_cdf(a) + libm::exp(eps) * norm_cdf(b);
        prop_assert!((v - direct).abs() <= 64.0 * EPS * scale, "{a} {b} {eps}: {v} vs {direct}");
    }

    #[test]
    fn norm_cdf_diff_properties(a in any_f64(), b in any_f64()) {
        let v = norm_cdf_diff(a, b);
        if a.is_nan() || b.is_nan() {
            prop_assert!(v.is_nan());
            return Ok(());
        }
        prop_assert_eq!(v, -norm_cdf_diff(b, a));
        prop_assert!((-1.0..=1.0).contains(&v));
        prop_assert!((a >= b) == (v >= 0.0) || v == 0.0, "Φ({a}) − Φ({b}) = {v}");
        let direct = norm_cdf(a) - norm_cdf(b);
        prop_assert!((v - direct).abs() <= 4.0 * EPS * (norm_cdf(a) + norm_cdf(b)), "{v} vs {direct}");
    }

    #[test]
    fn norm_cdf_sub_exp_special_values(a in any_f64(), b in any_f64(), eps in any_f64()) {
        let v = norm_cdf_sub_exp(a, b, eps);
        let l = ln_norm_cdf_sub_exp(a, b, eps);
        if a.is_nan() || b.is_nan() || eps.is_nan() {
            prop_assert!(v.is_nan() && l.is_nan());
        } else if !v.is_nan() {
            prop_assert!(v <= 1.0);
            // The log version is the log of the linear one wherever that is a normal number.
            if v >= f64::MIN_POSITIVE {
                prop_assert!((libm::exp(l) - v).abs() <= 1e-12 * v, "{a} {b} {eps}: {v} vs ln {l}");
            }
            if v < 0.0 {
                prop_assert!(l.is_nan());
            }
        }
        if a.is_finite() && b.is_finite() && eps.is_finite() {
            prop_assert!(!v.is_nan(), "Φ({a}) − e^{eps}·Φ({b}) gave NaN");
            prop_assert!(!l.is_nan() || v <= 0.0, "ln(Φ({a}) − e^{eps}·Φ({b})) gave NaN, linear {v}");
        }
    }

    #[test]
    fn two_product_is_exact(
        ma in (1_u64 << 52)..(1_u64 << 53),
        mb in (1_u64 << 52)..(1_u64 << 53),
        ea in -400_i32..400,
        eb in -400_i32..400,
        sa in any::<bool>(),
        sb in any::<bool>(),
    ) {
        // a = ±ma·2^ea, b = ±mb·2^eb exactly; their product is ma·mb·2^(ea+eb), a 106-bit
        // integer times a power of two, which hi + lo must reproduce exactly.
        let a = if sa { -1.0 } else { 1.0 } * (ma as f64) * libm::ldexp(1.0, ea);
        let b = if sb { -1.0 } else { 1.0 } * (mb as f64) * libm::ldexp(1.0, eb);
        let (hi, lo) = two_product(a, b);
        let e0 = ea + eb;
        let exact = i128::from(ma) * i128::from(mb) * if sa == sb { 1 } else { -1 };
        let as_int = |v: f64| -> i128 {
            // v is a multiple of 2^e0 by construction.
            let scaled = libm::ldexp(v, -e0);
            assert!(scaled.abs() < 1.7e38, "below 2^107 by construction");
            #[allow(clippy::cast_possible_truncation, reason = "integral value, checked range")]
            let i = scaled as i128;
            assert_eq!(i as f64, scaled);
            i
        };
        prop_assert_eq!(as_int(hi) + as_int(lo), exact);
    }

    #[test]
    fn neumaier_is_exact_on_adversarial_sums(
        parts in prop::collection::vec((-(1_i64 << 52)..(1_i64 << 52), -20_i32..50), 1..40),
    ) {
        // Every term is m·2^e with e ≥ −20, so the exact sum is an integer multiple of 2^-20
        // held exactly in i128. Each term is paired with its negation shifted by an ulp-sized
        // residue to force catastrophic cancellation in a naive sum.
        let mut xs = Vec::new();
        let mut exact: i128 = 0;
        for &(m, e) in &parts {
            let big = (m as f64) * libm::ldexp(1.0, e);
            xs.push(big);
            xs.push(1.0);
            xs.push(-big);
            exact += 1 << 20;
        }
        let exact_f = libm::ldexp(exact as f64, -20);
        let naive: f64 = xs.iter().sum();
        let comp = NeumaierSum::sum_iter(xs.iter().copied());
        prop_assert!((comp - exact_f).abs() <= (naive - exact_f).abs());
        prop_assert_eq!(comp, exact_f, "naive {}", naive);
    }
}

#[test]
fn neumaier_beats_naive_on_a_classic_case() {
    let xs = [1.0, 1e100, 1.0, -1e100];
    let naive: f64 = xs.iter().sum();
    assert_eq!(naive, 0.0);
    assert_eq!(NeumaierSum::sum_iter(xs), 2.0);
    // Many small terms after a big one: 1 + 1e6·1e-16 → naive stays at 1.
    let mut s = NeumaierSum::new();
    s.add(1.0);
    let mut naive = 1.0;
    for _ in 0..1_000_000 {
        s.add(1e-16);
        naive += 1e-16;
    }
    assert_eq!(naive, 1.0);
    assert!((s.sum() - (1.0 + 1e-10)).abs() <= 2.0 * EPS);
    // Non-finite inputs propagate as in ordinary summation.
    assert!(NeumaierSum::sum_iter([1.0, f64::INFINITY]).is_infinite());
    assert!(NeumaierSum::sum_iter([f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    assert!(NeumaierSum::sum_iter([1.0, f64::NAN]).is_nan());
}

#[test]
fn documented_special_values() {
    assert_eq!(norm_quantile(0.5).to_bits(), 0.0_f64.to_bits());
    assert!(norm_quantile(5e-324) < -38.4);
    assert_eq!(norm_cdf(-40.0), 0.0);
    assert_eq!(norm_cdf(9.0), 1.0);
    assert_eq!(erfcx(0.0), 1.0);
    assert_eq!(
        log_add_exp(f64::NEG_INFINITY, f64::NEG_INFINITY),
        f64::NEG_INFINITY
    );
    assert_eq!(log_add_exp(f64::INFINITY, f64::INFINITY), f64::INFINITY);
    assert!(log_sub_exp(f64::INFINITY, f64::INFINITY).is_nan());
    assert_eq!(log_sub_exp(1.0, f64::NEG_INFINITY), 1.0);
    assert_eq!(logsumexp(&[]), f64::NEG_INFINITY);
    assert_eq!(ln_binomial(f64::INFINITY, 0.0), 0.0);
    assert_eq!(ln_binomial(f64::INFINITY, 3.0), f64::INFINITY);
    assert_eq!(ln_binomial(7.0, 1.0), libm::log(7.0));
    assert_eq!(ln_binomial_int(0, 0), 0.0);
    assert_eq!(ln_gamma(1.0), 0.0);
    assert_eq!(ln_gamma(2.0), 0.0);
}

#[test]
fn quantile_monotone_across_branch_switches() {
    // Walk 20 000 adjacent doubles through each switch point of the algorithm (and through the
    // centre); Φ⁻¹ must never decrease.
    for p0 in [0.075, 0.925, 0.5, 0.25, 1e-300, f64::MIN_POSITIVE] {
        let mut p = p0;
        for _ in 0..10_000 {
            p = p.next_down();
        }
        let mut prev = norm_quantile(p);
        for _ in 0..20_000 {
            p = p.next_up();
            let x = norm_quantile(p);
            assert!(x >= prev, "Φ⁻¹ decreases at p = {p:e}: {prev} then {x}");
            prev = x;
        }
    }
}

#[test]
fn cdf_and_log_cdf_monotone_across_branch_switches() {
    // Φ switches formula at x = −1 and at −x/√2 = 26.5 (x ≈ −37.48); ln Φ also at 0. Walk
    // 20 000 adjacent doubles through each switch: neither may ever decrease.
    let deep = -26.5 * core::f64::consts::SQRT_2;
    for x0 in [-1.0, deep, 0.0, -40.0] {
        let mut x = x0;
        for _ in 0..10_000 {
            x = x.next_down();
        }
        let (mut c, mut l) = (norm_cdf(x), ln_norm_cdf(x));
        for _ in 0..20_000 {
            x = x.next_up();
            let (c2, l2) = (norm_cdf(x), ln_norm_cdf(x));
            assert!(c2 >= c, "Φ decreases at {x:e}: {c:e} then {c2:e}");
            assert!(l2 >= l, "ln Φ decreases at {x:e}: {l:e} then {l2:e}");
            (c, l) = (c2, l2);
        }
    }
}
