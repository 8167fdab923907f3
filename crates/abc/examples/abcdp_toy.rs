//! ABCDP toy of Park, Vinaroz & Jitkrittum (Entropy 2021, §6.1, Figure 3): mixture of five
//! uniforms with mixing proportions θ ~ Dirichlet(1), θ* = (0.25, 0.04, 0.33, 0.04, 0.34),
//! N = 5000 private observations, ρ = RFF MMD with 100 features (50 frequencies, Gaussian
//! kernel, bandwidth by the median heuristic on *simulated* data), sensitivity 2/N.
//!
//! The modeler's public pairs store each pseudo-dataset's RFF mean embedding (a public
//! function of public data), so ρ_t = ‖μ̂(Y*) − μ̂(Y_t)‖ costs O(D) in the private pass. For
//! every (c, ε_abc, ε_total, RESAMPLE) the private pass is repeated over `runs` random public
//! orderings of the pairs with fresh privacy noise; the table reports the mean over runs of
//! the mean-squared error between the posterior mean and θ* (a run with no acceptance uses
//! the prior mean).
//!
//! Run: `cargo run --release -p dpinfer-abc --example abcdp_toy [T] [n_pseudo] [runs]`
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
use dpinfer_distances::{RandomFourierFeatures, RffReference, Rows, median_heuristic};
use dpinfer_distances::{Relations, Sensitivity};
use dpinfer_simulators::prior::Dirichlet;
use dpinfer_simulators::{Prior, SimStream};
use rand_core::{Rng, SeedableRng};

const THETA_STAR: [f64; 5] = [0.25, 0.04, 0.33, 0.04, 0.34];
const N_OBS: usize = 5000;
const FREQS: usize = 50;
const SEED: u64 = 2021;

fn u01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / 9_007_199_254_740_992.0
}

/// y ~ Σ_i θ_i U[i−1, i].
fn draw_mixture<R: Rng + ?Sized>(theta: &[f64], rng: &mut R, out: &mut [f64]) {
    for o in out.iter_mut() {
        let u = u01(rng);
        let mut c = 0.0;
        let mut k = theta.len() - 1;
        for (i, &t) in theta.iter().enumerate() {
            c += t;
            if u < c {
                k = i;
                break;
            }
        }
        *o = k as f64 + u01(rng);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let t: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(4000);
    let n_pseudo: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5000);
    let runs: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(20);
    let prior = Dirichlet::new(5, 1.0).unwrap();

    // Public: bandwidth from a prior-predictive pseudo-dataset, and the RFF frequencies.
    let mut pub_rng = SimStream::with_domain(SEED, 1, 0);
    let mut th = [0.0; 5];
    prior.sample(&mut pub_rng, &mut th).unwrap();
    let mut sim = vec![0.0; 1000];
    draw_mixture(&th, &mut pub_rng, &mut sim);
    let mut buf = vec![0.0; 1000 * 999 / 2];
    let bandwidth = median_heuristic(Rows::one_dim(&sim).unwrap(), 1000, &mut buf).unwrap();
    let z: Vec<f64> = (0..FREQS)
        .map(|_| dpinfer_simulators::dist::std_normal(&mut pub_rng))
        .collect();
    let features = RandomFourierFeatures::new(&z, 1, bandwidth).unwrap();
    let d = features.num_features();

    // Private: the observations and their embedding.
    let mut obs = vec![0.0; N_OBS];
    draw_mixture(
        &THETA_STAR,
        &mut SimStream::with_domain(SEED, 2, 0),
        &mut obs,
    );
    let reference = RffReference::new(features, Rows::one_dim(&obs).unwrap()).unwrap();
    let sensitivity = reference.sensitivity().value();
    let e_star = reference.embedding().to_vec();

    // Public pairs (θ_t, μ̂(Y_t)), one stream per pair.
    let t0 = std::time::Instant::now();
    let mut thetas = vec![0.0; t * 5];
    let mut embs = vec![0.0; t * d];
    let mut y = vec![0.0; n_pseudo];
    for i in 0..t {
        let mut rng = SimStream::with_domain(SEED, 3, i as u64);
        let th = &mut thetas[i * 5..(i + 1) * 5];
        prior.sample(&mut rng, th).unwrap();
        draw_mixture(th, &mut rng, &mut y);
        features
            .mean_embedding(Rows::one_dim(&y).unwrap(), &mut embs[i * d..(i + 1) * d])
            .unwrap();
    }
    eprintln!("{t} public pairs in {:.1} s", t0.elapsed().as_secs_f64());
    let rho = |e: &[f64]| -> f64 {
        e.iter()
            .zip(&e_star)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt()
    };
    let mut rhos: Vec<f64> = (0..t).map(|i| rho(&embs[i * d..(i + 1) * d])).collect();
    rhos.sort_by(f64::total_cmp);
    eprintln!(
        "bandwidth {bandwidth:.3}; Δ = {sensitivity:.3e}; ρ quantiles 1%/5%/25%/50%: {:.4} {:.4} {:.4} {:.4}",
        rhos[t / 100],
        rhos[t / 20],
        rhos[t / 4],
        rhos[t / 2]
    );

    // Random public orderings of the pairs, one per run.
    let orders: Vec<PublicPairs> = (0..runs)
        .map(|r| {
            let mut idx: Vec<usize> = (0..t).collect();
            let mut rng = SimStream::with_domain(SEED, 4, r as u64);
            for i in (1..t).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                idx.swap(i, j);
            }
            let th: Vec<f64> = idx
                .iter()
                .flat_map(|&i| thetas[i * 5..(i + 1) * 5].to_vec())
                .collect();
            let em: Vec<f64> = idx
                .iter()
                .flat_map(|&i| embs[i * d..(i + 1) * d].to_vec())
                .collect();
            PublicPairs::from_parts(5, d, th, em).unwrap()
        })
        .collect();

    let mse = |acc: &[f64]| -> f64 {
        let k = acc.len() / 5;
        let mut m = [0.2; 5];
        if k > 0 {
            m = [0.0; 5];
            for row in acc.chunks_exact(5) {
                for (a, b) in m.iter_mut().zip(row) {
                    *a += b / k as f64;
                }
            }
        }
        m.iter()
            .zip(THETA_STAR)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            / 5.0
    };

    let mut noise = ChaCha20Rng::seed_from_u64(0x5EC2E7); // a secret seed in real use
    println!("| c | ε_abc | non-private | ε=10 | ε=10 (R) | ε=1 | ε=1 (R) | ε=0.5 | ε=0.5 (R) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for c in [10_u64, 100] {
        for eps_abc in [0.03, 0.05, 0.1, 0.2] {
            // non-private: first c pairs with ρ ≤ ε_abc
            let np: f64 = orders
                .iter()
                .map(|p| {
                    let acc: Vec<f64> = (0..p.len())
                        .filter(|&i| rho(p.output(i)) <= eps_abc)
                        .take(c as usize)
                        .flat_map(|i| p.theta(i).to_vec())
                        .collect();
                    mse(&acc)
                })
                .sum::<f64>()
                / runs as f64;
            let mut row = format!("| {c} | {eps_abc} | {np:.5} |");
            for eps_total in [10.0, 1.0, 0.5] {
                for resample in [Resample::Never, Resample::AfterAccept] {
                    let s = SvtAbcSettings {
                        epsilon_abc: eps_abc,
                        epsilon_total: eps_total,
                        c,
                        sensitivity: Sensitivity::declared(sensitivity, Relations::REPLACE_ONE)
                            .unwrap(),
                        clip: 2.0,
                        resample,
                    };
                    let m: f64 = orders
                        .iter()
                        .map(|p| {
                            let mut pass = SvtAbc::new(p, rho, s).unwrap();
                            pass.run(&mut noise).unwrap();
                            mse(&pass.accepted_thetas())
                        })
                        .sum::<f64>()
                        / runs as f64;
                    row.push_str(&format!(" {m:.5} |"));
                }
            }
            println!("{row}");
        }
    }
}
