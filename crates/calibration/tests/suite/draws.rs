//! `pick_draws`: posterior draws from what a sampler released.

use dpinfer_calibration::{CalibrationError, Output, pick_draws};
use dpinfer_simulators::SimStream;

fn rng(job: u64) -> SimStream {
    SimStream::with_domain(11, 0xD7A3, job)
}

/// A chain is thinned evenly: rows ⌊(i + 1)·m/n⌋ − 1, the last row always kept.
#[test]
fn a_chain_is_thinned_evenly() {
    let chain: Vec<f64> = (0..10)
        .flat_map(|i| [f64::from(i), -f64::from(i)])
        .collect();
    let mut out = Vec::new();
    pick_draws(&chain, 2, Output::Chain, 4, &mut rng(0), &mut out).unwrap();
    // m = 10, n = 4: rows 1, 4, 6, 9
    assert_eq!(out, [1.0, -1.0, 4.0, -4.0, 6.0, -6.0, 9.0, -9.0]);
    // fewer rows than draws: rows repeat, still in order
    let mut out = Vec::new();
    pick_draws(&chain[..6], 2, Output::Chain, 5, &mut rng(0), &mut out).unwrap();
    assert_eq!(out.len(), 10);
    assert_eq!(&out[8..], &[2.0, -2.0]);
}

/// Exchangeable draws: a subset without replacement, each n-subset (and order) uniform. For
/// m = 4, n = 2 the 12 ordered pairs are counted over 24 000 picks; each count is
/// Binomial(24 000, 1/12) (mean 2000, sd 42.8): within ±250 (5.8 sd; false failure < 1e-7
/// over the 12 cells). A value drawn twice never appears.
#[test]
fn exchangeable_draws_are_a_uniform_subset_without_replacement() {
    let atoms = [0.0, 1.0, 2.0, 3.0];
    let mut counts = [[0u32; 4]; 4];
    for job in 0..24_000 {
        let mut out = Vec::new();
        pick_draws(&atoms, 1, Output::Exchangeable, 2, &mut rng(job), &mut out).unwrap();
        assert_ne!(out[0], out[1]);
        #[allow(clippy::cast_sign_loss)]
        {
            counts[out[0] as usize][out[1] as usize] += 1;
        }
    }
    for (a, row) in counts.iter().enumerate() {
        for (b, &c) in row.iter().enumerate() {
            if a != b {
                assert!((1750..=2250).contains(&c), "({a}, {b}): {c}");
            }
        }
    }
}

/// Weighted draws follow the weights (systematic resampling): weights (0, 0.25, 0.75) give
/// exactly n/4 and 3n/4 draws of the last two rows for n divisible by 4.
#[test]
fn weighted_draws_follow_the_weights() {
    let rows = [10.0, 20.0, 30.0];
    let mut out = Vec::new();
    pick_draws(
        &rows,
        1,
        Output::Weighted(&[0.0, 0.25, 0.75]),
        8,
        &mut rng(3),
        &mut out,
    )
    .unwrap();
    assert_eq!(out.iter().filter(|&&x| x == 10.0).count(), 0);
    assert_eq!(out.iter().filter(|&&x| x == 20.0).count(), 2);
    assert_eq!(out.iter().filter(|&&x| x == 30.0).count(), 6);
}

/// Too few exchangeable draws, bad shapes and bad weights are typed errors.
#[test]
fn bad_input_is_a_typed_error() {
    let mut out = Vec::new();
    let r = pick_draws(
        &[1.0, 2.0],
        1,
        Output::Exchangeable,
        3,
        &mut rng(0),
        &mut out,
    );
    assert_eq!(
        r,
        Err(CalibrationError::LengthMismatch {
            name: "released draws",
            expected: 3,
            found: 2
        })
    );
    assert!(matches!(
        pick_draws(&[1.0, 2.0, 3.0], 2, Output::Chain, 1, &mut rng(0), &mut out),
        Err(CalibrationError::InvalidSize { name: "dim", .. })
    ));
    assert!(matches!(
        pick_draws(&[], 1, Output::Chain, 1, &mut rng(0), &mut out),
        Err(CalibrationError::LengthMismatch { found: 0, .. })
    ));
    assert!(matches!(
        pick_draws(
            &[1.0, 2.0],
            1,
            Output::Weighted(&[1.0]),
            1,
            &mut rng(0),
            &mut out
        ),
        Err(CalibrationError::LengthMismatch {
            name: "weights",
            ..
        })
    ));
    for w in [[f64::NAN, 1.0], [-1.0, 1.0], [0.0, 0.0]] {
        assert!(
            matches!(
                pick_draws(
                    &[1.0, 2.0],
                    1,
                    Output::Weighted(&w),
                    1,
                    &mut rng(0),
                    &mut out
                ),
                Err(CalibrationError::InvalidParameter {
                    name: "weights",
                    ..
                })
            ),
            "{w:?}"
        );
    }
    assert!(out.is_empty());
}
