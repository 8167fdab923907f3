//! Early rejection with incremental simulators and bit-identical parallel rejection ABC.
#![cfg(feature = "alloc")]

use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::rejection::{RejectionAbc, RejectionSettings, RejectionStep, Rule};
use dpinfer_simulators::prior::Normal;
use dpinfer_simulators::{IncrementalSimulator, SimError, SimStream, Simulator};
use rand_core::Rng;

/// A Gaussian random walk with drift θ observed at 10 times (one value per block).
#[derive(Clone, Copy, Debug)]
struct Walk;

impl Simulator for Walk {
    fn param_dim(&self) -> usize {
        1
    }
    fn output_dim(&self) -> usize {
        10
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        let mut run = self.begin(theta)?;
        for b in 0..10 {
            self.next_block(&mut run, rng, &mut out[b..=b])?;
        }
        Ok(())
    }
}

impl IncrementalSimulator for Walk {
    type Run = (f64, f64, usize);
    fn n_blocks(&self) -> usize {
        10
    }
    fn block_len(&self) -> usize {
        1
    }
    fn begin(&self, theta: &[f64]) -> Result<Self::Run, SimError> {
        Ok((theta[0], 0.0, 0))
    }
    fn next_block<R: Rng + ?Sized>(
        &self,
        run: &mut Self::Run,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        if run.2 >= 10 {
            return Err(SimError::Exhausted);
        }
        run.1 += run.0 + 0.3 * dpinfer_simulators::dist::std_normal(rng);
        run.2 += 1;
        out[0] = run.1;
        Ok(())
    }
}

#[test]
fn early_rejection_gives_identical_decisions() {
    let obs: Vec<f64> = (1..=10).map(|i| 0.5 * f64::from(i)).collect();
    let settings = RejectionSettings {
        rule: Rule::Threshold(1.5),
        budget: 5000,
        target: u64::MAX,
    };
    let mk = || {
        RejectionAbc::new(
            Normal::new(0.0, 1.0).unwrap(),
            Walk,
            Euclidean::new(&obs).unwrap(),
            settings,
        )
        .unwrap()
    };
    let (mut full, mut early) = (mk(), mk());
    for i in 0..5000 {
        let a = full.step(&mut SimStream::new(7, i)).unwrap();
        let b = early.step_early(&mut SimStream::new(7, i)).unwrap();
        assert_eq!(a, b, "proposal {i}");
    }
    assert_eq!(full.accepted(), early.accepted());
    assert!(!full.accepted().is_empty());
    assert_eq!(
        early.step_early(&mut SimStream::new(7, 0)).unwrap(),
        RejectionStep::Done
    );
}

#[cfg(feature = "parallel")]
#[test]
fn parallel_is_bit_identical_for_any_thread_count() {
    use crate::common::{gaussian_mean, on_threads};
    let obs = [0.5];
    let run = |threads| {
        let mut s = RejectionAbc::new(
            Normal::new(0.0, 1.0).unwrap(),
            gaussian_mean(100.0),
            Euclidean::new(&obs).unwrap(),
            RejectionSettings {
                rule: Rule::Threshold(0.05),
                budget: 40_000,
                target: 300,
            },
        )
        .unwrap();
        on_threads(threads, || s.run_parallel(11)).unwrap();
        (
            s.accepted().to_vec(),
            s.distances().to_vec(),
            s.simulations(),
        )
    };
    let one = run(1);
    assert_eq!(one.0.len(), 300);
    assert_eq!(run(2), one);
    assert_eq!(run(7), one);
}

#[cfg(feature = "parallel")]
#[test]
fn parallel_smc_is_bit_identical_and_correct() {
    use crate::common::{AbcPosterior, gaussian_mean, on_threads, weighted_mean_sd};
    use dpinfer_abc::smc::{SmcAbc, StopReason};
    let obs = [0.5];
    let run = |threads| {
        let mut s = SmcAbc::new(
            Normal::new(0.0, 1.0).unwrap(),
            gaussian_mean(100.0),
            Euclidean::new(&obs).unwrap(),
            crate::common::median_smc(500, 0.02),
        )
        .unwrap();
        let r = on_threads(threads, || s.run_parallel(17)).unwrap();
        (
            r,
            s.particles().to_vec(),
            s.weights().to_vec(),
            s.simulations(),
            s.history().last().copied().unwrap(),
        )
    };
    let one = run(1);
    assert_eq!(one.0, StopReason::FinalTolerance);
    assert_eq!(run(2), one);
    assert_eq!(run(7), one);
    let post = AbcPosterior::new(1.0, 100.0, 0.5, one.4.tolerance);
    let (m, sd) = weighted_mean_sd(&one.1, &one.2);
    // 8 SE under the ESS approximation, as in gaussian_mean.rs.
    let ess = one.4.ess;
    assert!(
        (m - post.mean).abs() < 8.0 * post.sd / ess.sqrt(),
        "{m} vs {}",
        post.mean
    );
    assert!(
        (sd - post.sd).abs() < 8.0 * post.sd / (2.0 * ess).sqrt(),
        "{sd} vs {}",
        post.sd
    );
}
