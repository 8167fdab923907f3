//! Your own model in Rust: SVT-ABC (ABCDP, Park et al. 2021, Algorithm 1) on a simulator you
//! write, either as a closure ([`FnSimulator`]) or as a `Simulator` impl — both give the same
//! public pairs bit for bit.
//!
//! Model: y_i ~ N(μ, 1), i = 1..n, summarised by the mean of the values clipped to [−C, C]
//! (the simulator computes the summary itself). Prior: μ ~ N(0, 10²) truncated to [−20, 20].
//! The data owner's distance ρ(Y*, Y_t) = |s(Y*) − s_t| changes by at most 2C/n when one of
//! the n private records is *replaced* (replace-one neighbouring relation), which is the
//! sensitivity handed to the sparse-vector mechanism.
//!
//! Run: `cargo run --release -p dpinfer-abc --example own_simulator`
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::cast_precision_loss)]

use chacha20::ChaCha20Rng;
use dpinfer_abc::analysis::Resample;
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer_distances::{Relations, Sensitivity};
use dpinfer_simulators::prior::TruncatedNormal;
use dpinfer_simulators::{FnSimulator, SimError, SimStream, Simulator, dist};
use rand_core::{Rng, SeedableRng};

const N: usize = 5_000;
const CLIP: f64 = 5.0;

/// Mean of `n` N(μ, 1) draws clipped to [−C, C].
fn clipped_mean(mu: f64, rng: &mut dyn Rng) -> f64 {
    (0..N)
        .map(|_| (mu + dist::std_normal(rng)).clamp(-CLIP, CLIP))
        .sum::<f64>()
        / N as f64
}

/// The same model as a hand-written `Simulator` impl.
struct ClippedMean;

impl Simulator for ClippedMean {
    fn param_dim(&self) -> usize {
        1
    }
    fn output_dim(&self) -> usize {
        1
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        mut rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        if theta.len() != 1 || out.len() != 1 {
            return Err(SimError::DimensionMismatch {
                what: "theta/out",
                expected: 1,
                got: theta.len(),
            });
        }
        out[0] = clipped_mean(theta[0], &mut rng);
        Ok(())
    }
}

fn main() {
    // 1. The model, in four lines.
    let sim = FnSimulator::new(1, 1, |theta, rng, out| {
        out[0] = clipped_mean(theta[0], rng);
        Ok(())
    })
    .unwrap();
    let prior = TruncatedNormal::new(0.0, 10.0, -20.0, 20.0).unwrap();

    // 2. Public pairs (θ_t, s_t): anyone can compute them from the seed.
    let t = 20_000;
    let pairs = PublicPairs::generate(&prior, &sim, t, 2021).unwrap();
    let same = PublicPairs::generate(&prior, &ClippedMean, t, 2021).unwrap();
    assert_eq!(pairs.outputs(), same.outputs(), "closure and impl agree");

    // 3. The data owner's private records and their clipped mean (private).
    let mu_true = 1.5;
    let mut data_rng = SimStream::with_domain(7, 1, 0);
    let y: Vec<f64> = (0..N)
        .map(|_| mu_true + dist::std_normal(&mut data_rng))
        .collect();
    let s_star = y.iter().map(|v| v.clamp(-CLIP, CLIP)).sum::<f64>() / N as f64;

    // 4. The private pass: ε = 2 for c = 10 accepted pairs.
    let settings = SvtAbcSettings {
        epsilon_abc: 0.03,
        epsilon_total: 2.0,
        c: 10,
        sensitivity: Sensitivity::declared(2.0 * CLIP / N as f64, Relations::REPLACE_ONE).unwrap(), // replace-one, values clipped to [−C, C]
        clip: 1.0,
        resample: Resample::AfterAccept,
    };
    let rho = |s: &[f64]| (s[0] - s_star).abs();
    let mut pass = SvtAbc::new(&pairs, rho, settings).unwrap();
    let mut noise = ChaCha20Rng::seed_from_u64(0x5EC2E7); // from the OS in real use
    pass.run(&mut noise).unwrap();
    let acc = pass.accepted_thetas();
    let mean = acc.iter().sum::<f64>() / acc.len().max(1) as f64;
    println!(
        "mean of the private records: {:.3}",
        y.iter().sum::<f64>() / N as f64
    );

    // Non-private reference: the conjugate posterior N(μ_n, τ_n²) of the unclipped model.
    let prec = 1.0 / 100.0 + N as f64;
    let mu_n = y.iter().sum::<f64>() / prec;
    println!(
        "{} of {t} pairs scanned, {} accepted (epsilon = {} under replace-one)",
        pass.accepted_indices().last().map_or(t, |&i| i + 1),
        acc.len(),
        settings.epsilon_total
    );
    println!(
        "private posterior mean of mu: {mean:.3}; exact non-private posterior: {mu_n:.3} ± {:.3}",
        prec.recip().sqrt()
    );
}
