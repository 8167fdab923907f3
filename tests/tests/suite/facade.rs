//! The facade re-exports every crate.

#[test]
fn facade_reexports_math() {
    let x = dpinfer::math::norm_quantile(0.975);
    assert!((dpinfer::math::norm_cdf(x) - 0.975).abs() < 1e-15);
}
