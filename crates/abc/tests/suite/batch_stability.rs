//! The batched per-row-stream paths (public pairs, rejection and SMC-ABC with one stream per
//! proposal) are pinned bit for bit to the values of the per-row implementation they replaced
//! (hashes recorded from the per-θ code before the `BatchSimulator` change), for every batch
//! size and thread count.
#![cfg(feature = "alloc")]

#[cfg(feature = "parallel")]
use crate::common::on_threads;
use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::rejection::{RejectionAbc, RejectionSettings, Rule};
use dpinfer_abc::smc::{SmcAbc, SmcSettings};
use dpinfer_math::Fnv1a;
use dpinfer_simulators::prior::Normal;
use dpinfer_simulators::{FnSimulator, SimError, Simulator, dist};
use rand_core::Rng;

/// y = (θ + N(0, 0.1²), N(0, 1)); a recoverable failure when the first uniform is < 0.2, so
/// the redraw/failed-row paths are exercised.
fn flaky_model(theta: &[f64], rng: &mut dyn Rng, out: &mut [f64]) -> Result<(), SimError> {
    if dist::uniform01(rng) < 0.2 {
        return Err(SimError::Degenerate { what: "flaky" });
    }
    out[0] = theta[0] + 0.1 * dist::std_normal(rng);
    out[1] = dist::std_normal(rng);
    Ok(())
}

type Flaky = FnSimulator<fn(&[f64], &mut dyn Rng, &mut [f64]) -> Result<(), SimError>>;

fn flaky() -> Flaky {
    FnSimulator::new(1, 2, flaky_model as _).unwrap()
}

/// The workspace's fingerprint hash (FNV-1a) over the bits of a sequence of floats.
fn hash(xs: &[f64]) -> u64 {
    let mut h = Fnv1a::new();
    h.write_f64s(xs);
    h.finish()
}

const OBS: [f64; 2] = [0.5, 0.0];

fn pairs_hash() -> (u64, u64) {
    let p = PublicPairs::generate(&Normal::new(0.0, 1.0).unwrap(), &flaky(), 3000, 9).unwrap();
    (hash(p.thetas()), hash(p.outputs()))
}

fn rejection() -> RejectionAbc<Normal, Flaky, Euclidean<'static>> {
    RejectionAbc::new(
        Normal::new(0.0, 1.0).unwrap(),
        flaky(),
        Euclidean::new(&OBS).unwrap(),
        RejectionSettings {
            rule: Rule::Threshold(1.2),
            budget: 30_000,
            target: 700,
        },
    )
    .unwrap()
}

fn rejection_hash(r: &RejectionAbc<Normal, Flaky, Euclidean<'static>>) -> (u64, u64, u64) {
    (hash(r.accepted()), hash(r.distances()), r.simulations())
}

fn smc() -> SmcAbc<Normal, Flaky, Euclidean<'static>> {
    SmcAbc::new(
        Normal::new(0.0, 1.0).unwrap(),
        flaky(),
        Euclidean::new(&OBS).unwrap(),
        SmcSettings {
            max_generations: 6,
            ..crate::common::median_smc(300, 1.05)
        },
    )
    .unwrap()
}

fn smc_hash(s: &SmcAbc<Normal, Flaky, Euclidean<'static>>) -> (u64, u64, u64, u64) {
    (
        hash(s.particles()),
        hash(s.weights()),
        hash(s.distances()),
        s.simulations(),
    )
}

/// Recorded from the per-θ implementation (before `BatchSimulator`).
const PAIRS: (u64, u64) = (13398427320336702349, 13877219143947156992);
const REJECTION: (u64, u64, u64) = (398809815136640306, 12331048136819811719, 1876);
const SMC: (u64, u64, u64, u64) = (
    4988004950701304721,
    5878071140638526468,
    9613173910818779022,
    2479,
);

#[test]
fn pairs_are_pinned() {
    assert_eq!(pairs_hash(), PAIRS);
}

#[test]
fn pairs_rows_equal_the_per_row_loop() {
    use dpinfer_abc::pairs::PAIRS_DOMAIN;
    use dpinfer_simulators::{Prior, SimStream};
    let prior = Normal::new(0.0, 1.0).unwrap();
    // more rows than one block, so block boundaries are crossed
    let t = dpinfer_abc::pairs::PAIRS_BLOCK + 77;
    let p = PublicPairs::generate(&prior, &flaky(), t, 4).unwrap();
    for i in (0..t).step_by(97).chain([t - 1]) {
        let mut rng = SimStream::with_domain(4, PAIRS_DOMAIN, i as u64);
        let mut th = [0.0];
        let mut y = [0.0; 2];
        loop {
            prior.sample(&mut rng, &mut th).unwrap();
            if flaky().simulate(&th, &mut rng, &mut y).is_ok() {
                break;
            }
        }
        assert_eq!(th[0].to_bits(), p.theta(i)[0].to_bits(), "row {i}");
        assert_eq!(
            y.map(f64::to_bits),
            [p.output(i)[0].to_bits(), p.output(i)[1].to_bits()]
        );
    }
}

#[test]
fn rejection_batched_is_pinned_for_every_batch_size() {
    for batch in [1, 7, 256, 4096, 100_000] {
        let mut r = rejection();
        r.run_batched(11, batch).unwrap();
        assert_eq!(rejection_hash(&r), REJECTION, "batch {batch}");
    }
}

#[test]
fn smc_batched_is_pinned_for_every_batch_size() {
    for batch in [0, 1, 13, 300] {
        let mut s = smc();
        s.run_batched(17, batch).unwrap();
        assert_eq!(smc_hash(&s), SMC, "batch {batch}");
    }
}

#[cfg(feature = "parallel")]
#[test]
fn parallel_paths_are_pinned_for_1_2_and_7_threads() {
    for threads in [1, 2, 7] {
        let (pairs, rej, smc_) = on_threads(threads, || {
            let p =
                PublicPairs::generate_parallel(&Normal::new(0.0, 1.0).unwrap(), &flaky(), 3000, 9)
                    .unwrap();
            let mut r = rejection();
            r.run_parallel(11).unwrap();
            let mut s = smc();
            s.run_parallel(17).unwrap();
            (
                (hash(p.thetas()), hash(p.outputs())),
                rejection_hash(&r),
                smc_hash(&s),
            )
        });
        assert_eq!(pairs, PAIRS, "{threads} threads");
        assert_eq!(rej, REJECTION, "{threads} threads");
        assert_eq!(smc_, SMC, "{threads} threads");
    }
}
