//! The replicate loop: independence from sharding and order, merging, validation.

use core::convert::Infallible;

use dpinfer_calibration::{
    CalibrationError, Problem, ReplicateError, Settings, merge, run_range, run_replicate,
};
use dpinfer_simulators::SimStream;

use crate::models::Conjugate;

fn problem() -> Conjugate {
    Conjugate::exact(2, 5, 0.3)
}

#[test]
fn shards_merge_bit_identical_to_one_run() {
    let settings = Settings::new(7, 9, 2).unwrap();
    let p = problem();
    let whole = run_range(&p, &settings, 0..23).unwrap();
    // shards given out of order, one retried (an identical duplicate)
    let shards = vec![
        run_range(&p, &settings, 15..23).unwrap(),
        run_range(&p, &settings, 0..4).unwrap(),
        run_range(&p, &settings, 4..15).unwrap(),
        run_range(&p, &settings, 3..6).unwrap(),
    ];
    let merged = merge(shards).unwrap();
    assert_eq!(merged, whole);
    // replicate by replicate, in reverse order: the same values
    for k in (0..23).rev() {
        assert_eq!(run_replicate(&p, &settings, k).unwrap(), whole[k as usize]);
    }
    // a result survives a round trip through JSON bit for bit (stored, then resumed)
    let text = serde_json::to_string(&whole).unwrap();
    let back: Vec<dpinfer_calibration::ReplicateResult> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, whole);
}

#[test]
fn seed_changes_results_and_ranks_are_in_range() {
    let p = problem();
    let a = run_range(&p, &Settings::new(1, 9, 1).unwrap(), 0..10).unwrap();
    let b = run_range(&p, &Settings::new(2, 9, 1).unwrap(), 0..10).unwrap();
    assert_ne!(a, b);
    for r in a.iter().chain(&b) {
        assert_eq!(r.ranks.len(), 2);
        assert!(r.ranks.iter().all(|&x| x <= 9) && r.tarp_rank <= 9);
        assert!(r.mass_above.iter().all(|&m| (0.0..=1.0).contains(&m)));
    }
}

#[test]
fn merge_rejects_conflicts_and_mixed_settings() {
    let p = problem();
    let a = run_range(&p, &Settings::new(1, 9, 1).unwrap(), 0..3).unwrap();
    let b = run_range(&p, &Settings::new(2, 9, 1).unwrap(), 2..4).unwrap();
    assert_eq!(
        merge(vec![a.clone(), b]),
        Err(CalibrationError::Conflict { index: 2 })
    );
    let c = run_range(&p, &Settings::new(1, 4, 1).unwrap(), 3..4).unwrap();
    assert_eq!(
        merge(vec![a, c]),
        Err(CalibrationError::Mismatch { what: "draws" })
    );
}

#[test]
fn settings_are_validated() {
    assert!(matches!(
        Settings::new(0, 0, 1),
        Err(CalibrationError::InvalidSize { name: "draws", .. })
    ));
    assert!(matches!(
        Settings::new(0, 10, 0),
        Err(CalibrationError::InvalidSize { name: "thin", .. })
    ));
    assert!(Settings::new(0, u32::MAX / 2, 3).is_err());
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            Settings::new(0, 10, 1)
                .unwrap()
                .with_tarp_scale(vec![1.0, bad])
                .is_err()
        );
    }
    let wrong_len = Settings::new(0, 10, 1)
        .unwrap()
        .with_tarp_scale(vec![1.0])
        .unwrap();
    assert!(matches!(
        run_replicate(&problem(), &wrong_len, 0),
        Err(ReplicateError::Calibration(
            CalibrationError::LengthMismatch { .. }
        ))
    ));
}

#[test]
fn deserialised_settings_are_checked_again() {
    // serde bypasses `Settings::new`: thin 0 used to underflow `thin - 1` (a panic in debug
    // builds), draws 0 gave NaN masses; both are typed errors now
    let p = problem();
    for (json, name) in [
        (r#"{"seed":1,"draws":5,"thin":0,"tarp_scale":null}"#, "thin"),
        (
            r#"{"seed":1,"draws":0,"thin":1,"tarp_scale":null}"#,
            "draws",
        ),
    ] {
        let s: Settings = serde_json::from_str(json).unwrap();
        assert!(
            matches!(
                run_replicate(&p, &s, 0),
                Err(ReplicateError::Calibration(CalibrationError::InvalidSize { name: n, .. })) if n == name
            ),
            "{json}"
        );
    }
    let s: Settings =
        serde_json::from_str(r#"{"seed":1,"draws":5,"thin":1,"tarp_scale":[1.0,-2.0]}"#).unwrap();
    assert!(matches!(
        run_replicate(&p, &s, 0),
        Err(ReplicateError::Calibration(
            CalibrationError::InvalidParameter {
                name: "tarp_scale",
                ..
            }
        ))
    ));
}

/// A problem whose sampler misbehaves in a chosen way.
struct Broken {
    what: u8,
}

impl Problem for Broken {
    type Release = ();
    type Error = &'static str;
    fn dim(&self) -> usize {
        usize::from(self.what != 9)
    }
    fn prior(&self, _: &mut SimStream, theta: &mut [f64]) -> Result<(), &'static str> {
        theta.fill(if self.what == 0 { f64::NAN } else { 0.5 });
        Ok(())
    }
    fn release(&self, _: &[f64], _: &mut SimStream, _: &mut SimStream) -> Result<(), &'static str> {
        if self.what == 1 {
            Err("simulator failed")
        } else {
            Ok(())
        }
    }
    fn posterior(
        &self,
        _: &(),
        _: &mut SimStream,
        n: usize,
        out: &mut Vec<f64>,
    ) -> Result<(), &'static str> {
        match self.what {
            2 => out.extend(core::iter::repeat_n(0.0, n - 1)),
            3 => out.extend(core::iter::repeat_n(f64::INFINITY, n)),
            // every draw ties with θ = 0.5
            _ => out.extend(core::iter::repeat_n(0.5, n)),
        }
        Ok(())
    }
}

#[test]
fn bad_problem_output_is_a_typed_error() {
    let s = Settings::new(3, 5, 1).unwrap();
    let err = |what| run_replicate(&Broken { what }, &s, 4).unwrap_err();
    assert_eq!(
        err(0),
        ReplicateError::Calibration(CalibrationError::NonFinite {
            index: 4,
            what: "theta"
        })
    );
    assert_eq!(
        err(1),
        ReplicateError::Problem {
            index: 4,
            error: "simulator failed"
        }
    );
    assert!(matches!(
        err(2),
        ReplicateError::Calibration(CalibrationError::LengthMismatch { .. })
    ));
    assert_eq!(
        err(3),
        ReplicateError::Calibration(CalibrationError::NonFinite {
            index: 4,
            what: "draws"
        })
    );
    assert!(matches!(
        err(9),
        ReplicateError::Calibration(CalibrationError::InvalidSize { name: "dim", .. })
    ));
}

#[test]
fn ties_are_broken_uniformly_at_random() {
    // all L = 5 draws equal θ: the rank must be uniform on 0..=5 over replicates (and the mass
    // above θ is ½); a rule that counted ties as below (or above) would give always 5 (or 0).
    let s = Settings::new(11, 5, 1).unwrap();
    let results = run_range(&Broken { what: 4 }, &s, 0..600).unwrap();
    let mut counts = [0u32; 6];
    for r in &results {
        counts[r.ranks[0] as usize] += 1;
        assert_eq!(r.mass_above[0], 0.5);
    }
    // each count ~ Binomial(600, 1/6): mean 100, sd 9.1; ±40 is 4.4 sd (false failure < 1e-4)
    for c in counts {
        assert!((60..=140).contains(&c), "{counts:?}");
    }
}

#[test]
fn thinning_keeps_the_last_draw_of_each_block() {
    /// Draws 0, 1, 2, …: with thin 3 the kept draws are 2, 5, 8, … .
    struct Counting;
    impl Problem for Counting {
        type Release = ();
        type Error = Infallible;
        fn dim(&self) -> usize {
            1
        }
        fn prior(&self, _: &mut SimStream, theta: &mut [f64]) -> Result<(), Infallible> {
            theta[0] = 5.5; // above the kept draws 2 and 5, below 8, 11
            Ok(())
        }
        fn release(
            &self,
            _: &[f64],
            _: &mut SimStream,
            _: &mut SimStream,
        ) -> Result<(), Infallible> {
            Ok(())
        }
        fn posterior(
            &self,
            _: &(),
            _: &mut SimStream,
            n: usize,
            out: &mut Vec<f64>,
        ) -> Result<(), Infallible> {
            out.extend((0..n).map(|i| i as f64));
            Ok(())
        }
    }
    let r = run_replicate(&Counting, &Settings::new(0, 4, 3).unwrap(), 0).unwrap();
    assert_eq!(r.ranks, vec![2]);
    assert_eq!(r.mass_above, vec![0.5]);
}
