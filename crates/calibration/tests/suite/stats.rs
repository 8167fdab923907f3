//! The statistics against independent values.

use core::convert::Infallible;

use dpinfer_calibration::{
    CalibrationError, EcdfBand, PRIOR_STREAM, Problem, REFERENCE_STREAM, Settings, binomial_tails,
    central_coverage, dispersion, holm, rank_histogram, replicate_stream, run_replicate,
    tarp_curve,
};
use dpinfer_simulators::SimStream;
use dpinfer_simulators::dist::uniform01;
use rand_core::Rng;

#[test]
fn binomial_tails_match_exact_fractions() {
    // Binomial(20, ½): P(X ≤ 5) = 21700/2²⁰, P(X ≤ 6) = 60460/2²⁰ (sums of C(20, k))
    let (cdf, sf) = binomial_tails(20, 0.5);
    assert!((cdf[5] - 21700.0 / 1048576.0).abs() < 1e-15);
    assert!((cdf[6] - 60460.0 / 1048576.0).abs() < 1e-15);
    assert!((sf[15] - 21700.0 / 1048576.0).abs() < 1e-15);
    assert_eq!(cdf[20], 1.0);
    assert_eq!(sf[0], 1.0);
    // Binomial(3, 0.2): P(X ≤ 0) = 0.512, P(X ≥ 3) = 0.008
    let (cdf, sf) = binomial_tails(3, 0.2);
    assert!((cdf[0] - 0.512).abs() < 1e-15 && (sf[3] - 0.008).abs() < 1e-15);
}

#[test]
fn holm_matches_the_textbook_example() {
    // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02
    let adj = holm(&[0.01, 0.04, 0.03, 0.005]).unwrap();
    for (a, e) in adj.iter().zip([0.03, 0.06, 0.06, 0.02]) {
        assert!((a - e).abs() < 1e-15, "{adj:?}");
    }
    // 2·0.8 caps at 1, and adjusted p-values never decrease along the order
    assert_eq!(holm(&[0.9, 0.8]).unwrap(), vec![1.0, 1.0]);
    assert_eq!(holm(&[0.02, 0.3]).unwrap(), vec![0.04, 0.3]);
    assert!(holm(&[0.5, f64::NAN]).is_err());
    assert!(holm(&[1.5]).is_err());
}

#[test]
fn rank_histogram_counts_equal_bins() {
    // ranks in 0..=9, 5 bins of width 2
    let h = rank_histogram(&[0, 1, 2, 9, 8, 8, 5], 9, 5).unwrap();
    assert_eq!(h, vec![2, 1, 1, 0, 3]);
    assert!(matches!(
        rank_histogram(&[0], 9, 3),
        Err(CalibrationError::InvalidSize { name: "bins", .. })
    ));
    assert!(matches!(
        rank_histogram(&[10], 9, 5),
        Err(CalibrationError::InvalidSize { name: "rank", .. })
    ));
}

#[test]
fn band_with_one_point_is_the_binomial_interval() {
    // L = 1: one point z = ½ and c = #{rank = 0} ~ Binomial(20, ½). The attainable two-sided
    // tail probabilities are 2·21700/2²⁰ = 0.0414 (c = 5 or 15) and 2·60460/2²⁰ = 0.1153
    // (c = 6 or 14); fewer than 5 % of the simulations reach 0.0414, so the 95 % band is
    // exactly c ∈ [6, 14] (P(γ ≤ 0.0414) = 0.0414: 166 of 4000 expected, the cut is at 200;
    // 2.7 sd).
    let band = EcdfBand::new(20, 1, 0.95, 4000, 5).unwrap();
    assert_eq!(band.count_limits(), vec![(6, 14)]);
    assert!((band.threshold() - 2.0 * 60460.0 / 1048576.0).abs() < 1e-15);
    let lim = band.limits();
    assert!((lim[0].1 - (6.0 / 20.0 - 0.5)).abs() < 1e-15);
    assert!((lim[0].2 - (14.0 / 20.0 - 0.5)).abs() < 1e-15);
}

fn uniform_ranks(rng: &mut SimStream, k: usize, draws: u32) -> Vec<u32> {
    (0..k)
        .map(|_| (rng.next_u64() % (u64::from(draws) + 1)) as u32)
        .collect()
}

#[test]
fn band_coverage_and_test_size_by_simulation() {
    // K = 50 replicates, L = 19: 4000 fresh uniform rank sets (a different seed from the
    // band's). Coverage of the simultaneous 95 % band, and the size of the test at 5 %.
    // Errors: binomial sd of 4000 trials ≈ 0.0034, plus the threshold's own Monte Carlo error
    // from 1000 simulations ≈ 0.0069; ±0.03 is > 3.9 combined sd (false failure < 1e-4).
    let band = EcdfBand::new(50, 19, 0.95, 1000, 1).unwrap();
    let mut inside = 0;
    let mut rejected = 0;
    let n = 4000;
    for m in 0..n {
        let ranks = uniform_ranks(&mut SimStream::new(77, m), 50, 19);
        let t = band.test(&ranks).unwrap();
        inside += usize::from(t.inside_band);
        rejected += usize::from(t.p_value <= 0.05);
    }
    let coverage = inside as f64 / n as f64;
    let size = rejected as f64 / n as f64;
    assert!((coverage - 0.95).abs() < 0.03, "coverage {coverage}");
    assert!((size - 0.05).abs() < 0.03, "size {size}");
}

#[test]
fn ecdf_test_rejects_clearly_nonuniform_ranks() {
    let band = EcdfBand::new(50, 19, 0.95, 1000, 1).unwrap();
    // ranks only in the top quarter
    let ranks: Vec<u32> = (0..50).map(|i| 15 + i % 5).collect();
    let t = band.test(&ranks).unwrap();
    assert!(!t.inside_band);
    assert!(t.p_value < 0.002, "{}", t.p_value);
    assert!(band.test(&ranks[..10]).is_err());
    assert!(band.test(&[20; 50]).is_err());
    assert!(EcdfBand::new(50, 19, 1.0, 1000, 1).is_err());
    assert!(EcdfBand::new(50, 19, 0.95, 0, 1).is_err());
    assert!(EcdfBand::new(0, 19, 0.95, 10, 1).is_err());
    // L·(K + 1) beyond the table cap: an error before any allocation
    assert!(matches!(
        EcdfBand::new(100_000, 1000, 0.95, 10, 1),
        Err(CalibrationError::InvalidSize { name: "draws", .. })
    ));
}

#[test]
fn dispersion_sign_and_zero_for_uniform_grid() {
    let grid: Vec<u32> = (0..=9).collect();
    assert!(dispersion(&grid, 9).abs() < 1e-15);
    let grid: Vec<u32> = (0..=10).collect();
    assert!(dispersion(&grid, 10).abs() < 1e-15);
    assert!((dispersion(&[0, 9, 0, 9], 9) - 0.2).abs() < 1e-15); // tails: over-confident
    assert!((dispersion(&[4, 5, 4, 5], 9) + 0.2).abs() < 1e-15); // centre: over-dispersed
}

#[test]
fn central_coverage_counts_masses_in_the_interval() {
    let mass = [0.5, 0.04, 0.96, 0.3, 0.9];
    // 90 %: [0.05, 0.95] holds 0.5, 0.3, 0.9
    assert!((central_coverage(&mass, 0.9).unwrap() - 0.6).abs() < 1e-15);
    assert!(central_coverage(&mass, 1.0).is_err());
    assert!(central_coverage(&mass, f64::NAN).is_err());
}

#[test]
fn tarp_curve_by_hand() {
    let c = tarp_curve(&[0, 1, 1, 3], 3).unwrap();
    assert_eq!(
        c,
        vec![
            (0.0, 0.0),
            (0.25, 0.25),
            (0.5, 0.75),
            (0.75, 0.75),
            (1.0, 1.0)
        ]
    );
}

/// Fixed posterior draws; θ and the reference point from the prior's own streams.
struct FixedDraws;

const DRAWS: [[f64; 2]; 4] = [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 3.0]];

impl Problem for FixedDraws {
    type Release = ();
    type Error = Infallible;
    fn dim(&self) -> usize {
        2
    }
    fn prior(&self, rng: &mut SimStream, theta: &mut [f64]) -> Result<(), Infallible> {
        for t in theta {
            *t = 3.0 * uniform01(rng);
        }
        Ok(())
    }
    fn release(&self, _: &[f64], _: &mut SimStream, _: &mut SimStream) -> Result<(), Infallible> {
        Ok(())
    }
    fn posterior(
        &self,
        _: &(),
        _: &mut SimStream,
        n: usize,
        out: &mut Vec<f64>,
    ) -> Result<(), Infallible> {
        for d in DRAWS.iter().cycle().take(n) {
            out.extend_from_slice(d);
        }
        Ok(())
    }
}

#[test]
fn tarp_rank_and_mass_above_by_hand() {
    let settings = Settings::new(9, 4, 1)
        .unwrap()
        .with_tarp_scale(vec![1.0, 2.0])
        .unwrap();
    for k in 0..20 {
        let r = run_replicate(&FixedDraws, &settings, k).unwrap();
        let draw = |which| {
            let mut rng = replicate_stream(9, which, k);
            [3.0 * uniform01(&mut rng), 3.0 * uniform01(&mut rng)]
        };
        let (theta, reference) = (draw(PRIOR_STREAM), draw(REFERENCE_STREAM));
        let dist = |x: &[f64; 2]| (x[0] - reference[0]).hypot((x[1] - reference[1]) / 2.0);
        let tarp = DRAWS.iter().filter(|d| dist(d) < dist(&theta)).count() as u32;
        assert_eq!(r.tarp_rank, tarp, "replicate {k}");
        for j in 0..2 {
            let below = DRAWS.iter().filter(|d| d[j] < theta[j]).count() as u32;
            assert_eq!(r.ranks[j], below);
            assert_eq!(r.mass_above[j], f64::from(4 - below) / 4.0);
        }
    }
}
