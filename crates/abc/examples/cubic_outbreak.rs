//! Cubic outbreak curve of ABCDP (Park, Vinaroz & Jitkrittum 2021, §6.2, Figure 4):
//! y(t) = a₃ + a₂t + a₁t² + a₀t³ with a_i ~ N(0, 1), the 18 Netherlands daily case counts as
//! the private data, c = 5 accepted samples from T = 50 000 prior draws, ε_abc = 0.1 and
//! ε_total ∈ {13, 22, 44} (plus non-private).
//!
//! ρ is the MMD between the observed and simulated sets of 18 values with a Gaussian kernel
//! (B_k = 1, so Δ_ρ = 2/18 under replace-one, Lemma 1); its bandwidth comes from the median
//! heuristic on simulated (public) curves. For each ε the private pass is repeated over 20
//! random public orderings with fresh noise; the table reports the mean over runs of the RMSE
//! between the curve at the posterior mean and the data, and of the spread (sd over the 5
//! accepted curves at the last day), the quantity Figure 4 visualises.
//!
//! Run: `cargo run --release -p dpinfer-abc --example cubic_outbreak`
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation
)]

use chacha20::ChaCha20Rng;
use dpinfer_abc::analysis::Resample;
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer_distances::{Gaussian, MmdReference, Rows, median_heuristic};
use dpinfer_distances::{Relations, Sensitivity};
use dpinfer_simulators::SimStream;
use dpinfer_simulators::models::cubic::{CubicOutbreak, NETHERLANDS_CASES};
use rand_core::{Rng, SeedableRng};

const T: usize = 50_000;
const C: u64 = 5;
const RUNS: usize = 20;

fn curve(a: &[f64], t: f64) -> f64 {
    a[3] + a[2] * t + a[1] * t * t + a[0] * t * t * t
}

fn main() {
    let model = CubicOutbreak::paper();
    let prior = model.prior().unwrap();
    let pairs = PublicPairs::generate(&prior, &model, T, 2020).unwrap();
    // Bandwidth: median heuristic over 50 simulated curves (public).
    let sims: Vec<f64> = (0..50).flat_map(|i| pairs.output(i).to_vec()).collect();
    let mut buf = vec![0.0; sims.len() * (sims.len() - 1) / 2];
    let bw = median_heuristic(Rows::one_dim(&sims).unwrap(), sims.len(), &mut buf).unwrap();
    let reference = MmdReference::new(
        Gaussian::new(bw).unwrap(),
        Rows::one_dim(&NETHERLANDS_CASES).unwrap(),
    )
    .unwrap();
    let delta = reference.sensitivity().value();
    let rho = |y: &[f64]| {
        reference
            .mmd(Rows::one_dim(y).unwrap())
            .unwrap_or(f64::INFINITY)
    };
    eprintln!("bandwidth {bw:.1}; Δ = {delta:.4}");

    let orders: Vec<PublicPairs> = (0..RUNS)
        .map(|r| {
            let mut idx: Vec<usize> = (0..T).collect();
            let mut rng = SimStream::with_domain(2020, 9, r as u64);
            for i in (1..T).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                idx.swap(i, j);
            }
            let th: Vec<f64> = idx.iter().flat_map(|&i| pairs.theta(i).to_vec()).collect();
            let ys: Vec<f64> = idx.iter().flat_map(|&i| pairs.output(i).to_vec()).collect();
            PublicPairs::from_parts(4, 18, th, ys).unwrap()
        })
        .collect();

    let summarize = |acc: &[f64]| -> (f64, f64) {
        let k = acc.len() / 4;
        if k == 0 {
            return (f64::NAN, f64::NAN);
        }
        let mut m = [0.0; 4];
        for row in acc.chunks_exact(4) {
            for (a, b) in m.iter_mut().zip(row) {
                *a += b / k as f64;
            }
        }
        let rmse = (NETHERLANDS_CASES
            .iter()
            .enumerate()
            .map(|(t, y)| (curve(&m, t as f64) - y).powi(2))
            .sum::<f64>()
            / 18.0)
            .sqrt();
        let last: Vec<f64> = acc.chunks_exact(4).map(|a| curve(a, 17.0)).collect();
        let lm = last.iter().sum::<f64>() / k as f64;
        let sd = (last.iter().map(|v| (v - lm).powi(2)).sum::<f64>() / k as f64).sqrt();
        (rmse, sd)
    };

    let mut noise = ChaCha20Rng::seed_from_u64(0xC0B1D); // secret in real use
    println!(
        "| ε_total | ε of the pass | RMSE of posterior-mean curve | sd of y(17) over the 5 samples |"
    );
    println!("|---|---|---|---|");
    let np: Vec<(f64, f64)> = orders
        .iter()
        .map(|p| {
            let acc: Vec<f64> = (0..T)
                .filter(|&i| rho(p.output(i)) <= 0.1)
                .take(C as usize)
                .flat_map(|i| p.theta(i).to_vec())
                .collect();
            summarize(&acc)
        })
        .collect();
    let mean = |v: &[(f64, f64)]| {
        let n = v.len() as f64;
        (
            v.iter().map(|x| x.0).sum::<f64>() / n,
            v.iter().map(|x| x.1).sum::<f64>() / n,
        )
    };
    let (a, b) = mean(&np);
    println!("| ∞ (non-private) | — | {a:.1} | {b:.1} |");
    for eps in [44.0, 22.0, 13.0] {
        let s = SvtAbcSettings {
            epsilon_abc: 0.1,
            epsilon_total: eps,
            c: C,
            sensitivity: Sensitivity::declared(delta, Relations::REPLACE_ONE).unwrap(),
            clip: 2.0,
            resample: Resample::Never,
        };
        let mut spent = 0.0;
        let res: Vec<(f64, f64)> = orders
            .iter()
            .map(|p| {
                let mut pass = SvtAbc::new(p, rho, s).unwrap();
                pass.run(&mut noise).unwrap();
                spent = pass.epsilon();
                summarize(&pass.accepted_thetas())
            })
            .collect();
        let (a, b) = mean(&res);
        println!("| {eps} | {spent:.4} | {a:.1} | {b:.1} |");
    }
}
