//! dpinfer-math checks: values from libm-based code compared with 60-digit mpmath values
//! (`gen_math_refs.py` prints them; each input is the exact f64 the code receives).
//! Tolerances are relative and sit a little above the crate's documented accuracy
//! (a few ulp; 2.2e-16 is one ulp at 1): a platform-dependent or wrong code path misses them.

use alloc::vec::Vec;
use dpinfer_math as m;

/// Returns `0` or the 1-based index of the first check that fails.
pub(crate) fn verify() -> u32 {
    // logsumexp over a heap Vec also exercises the global allocator.
    let xs: Vec<f64> = (0..4u8).map(f64::from).collect();
    let rows: [(f64, f64, f64); 18] = [
        (m::norm_cdf(-5.0), 2.86651571879193911674e-7, 1e-15),
        (m::norm_cdf(1.5), 0.933192798731141933996, 1e-15),
        (m::norm_cdf(-37.0), 5.72557122252457682268e-300, 1e-14),
        (m::ln_norm_cdf(-1e5), -5000000012.43186399827, 1e-15),
        (m::ln_norm_cdf(-40.0), -804.608442013753788167, 1e-15),
        (m::ln_norm_cdf(3.0), -0.00135080996474819379884, 1e-14),
        (m::norm_quantile(1e-300), -37.0470962993611992365, 1e-15),
        (m::norm_quantile(0.975), 1.95996398454005385560, 1e-15),
        (m::norm_quantile(1e-10), -6.36134090240405619910, 1e-15),
        (m::erfcx(30.0), 0.0187958888614167514971, 1e-15),
        (m::erfcx(0.5), 0.615690344192925874871, 1e-15),
        (m::erfcx(-3.0), 16205.9888539995866255, 1e-15),
        (m::erfc(10.0), 2.08848758376254475700e-45, 1e-14),
        (m::ln_binomial_int(1000, 500), 689.467261567851180076, 1e-15),
        (m::ln_gamma(0.5), 0.572364942924700087072, 1e-15),
        (m::log1mexp(-1e-20), -46.0517018598809137352, 1e-15),
        (
            m::log_add_exp(-1000.0, -1001.0),
            -999.686738312481777166,
            1e-15,
        ),
        (m::logsumexp(&xs), 3.44018969856119533049, 1e-15),
    ];
    crate::first_failure(&rows)
}
