//! The papers' models. Each comes with its paper defaults (a `paper()` or `Default`
//! constructor), validated parameters and a citation.
//!
//! | model | paper | traits |
//! |---|---|---|
//! | [`gaussian::GaussianMean`] | conjugate toy (exact posterior) | `Simulator`, `IncrementalSimulator`, `RowLikelihood`, `RowGradient` |
//! | [`mixture::UniformMixture`] | ABCDP (Park et al. 2021) eq. 11 | `Simulator`, `IncrementalSimulator` |
//! | [`cubic::CubicOutbreak`] | ABCDP §6.2, eq. 12 | `Simulator`, `IncrementalSimulator` |
//! | `tb::Tuberculosis` (`alloc`) | Lintusaari et al. 2019 via ABCDP §6.3 | `Simulator` |
//! | [`sir::Sir`], [`sir::SirTauLeap`] | Xiong et al. §4.1, App. E.1 | `Simulator`, `IncrementalSimulator` |
//! | [`linreg::LinearRegression`] | Xiong et al. §4.2, App. E.2 | `Simulator` |
//! | [`banana::Banana`] | Räisä 2021 thesis §2.3, Theorem 5 | `Simulator`, `RowLikelihood`, `RowGradient` |
//!
//! With `alloc`, `registry::Model` holds them by name (`"sir"`, `"gaussian-mean"`, …) with
//! their paper priors, parameter names, true θ and embedded data sets, next to a user's own
//! model (`registry::UserModel`) and declared-prior overrides.

pub mod banana;
pub mod cubic;
pub mod gaussian;
pub mod linreg;
pub mod mixture;
#[cfg(feature = "alloc")]
pub mod registry;
pub mod sir;
#[cfg(feature = "alloc")]
pub mod tb;

/// The block step of the models that emit one observation per block (cubic outbreak, Gaussian
/// mean, uniform mixture): `out` must hold one value and the run must have a block left
/// (`*done < n`, else [`SimError::Exhausted`](crate::SimError::Exhausted)); then
/// `out[0] = next(*done)?` and the block is counted.
pub(crate) fn one_value_block(
    done: &mut usize,
    n: usize,
    out: &mut [f64],
    next: impl FnOnce(usize) -> Result<f64, crate::SimError>,
) -> Result<(), crate::SimError> {
    crate::error::check_len("out", 1, out.len())?;
    if *done >= n {
        return Err(crate::SimError::Exhausted);
    }
    out[0] = next(*done)?;
    *done += 1;
    Ok(())
}
