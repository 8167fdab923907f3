//! ABCDP tuberculosis experiment of Park, Vinaroz & Jitkrittum (Entropy 2021, §6.3, Figure 5):
//! the Lintusaari et al. (2019) birth–death–mutation TB model with the 8 summaries of their
//! Table 1 and their weighted L2 distance, θ = (R₁, t₁, R₂, β), θ* = (5.88, 6.74, 0.09, 192),
//! ε_total = 1, ε_abc = 150, clipping bound C = 200, c = 10 accepted, RESAMPLE True/False,
//! n ∈ {100, 1000} observations.
//!
//! **What "n observations" is.** As in the paper's reference script (`test_TB.py` of the ABCDP
//! code), the private data are `n` independent outbreak datasets simulated at θ*, each reduced
//! to its 8 summaries. For a proposed θ_t the modeler simulates `n` pseudo-datasets, and the
//! distance is the mean of the per-dataset clipped distances,
//! `ρ_t = (1/n) Σ_j min(ρ_w(s(Y_tj), s(Y*_j)), C)`
//! ([`dpinfer_simulators::models::tb::mean_clipped_distance`]), whose replace-one sensitivity
//! (one observed dataset replaced) is `Δ = C/n` — the reference script's `Bm = C/n`.
//!
//! **Protocol.** The modeler draws `T` public pairs (θ_t, n_max pseudo-summaries) from the
//! truncated prior; the `n = 100` runs use the first 100 pseudo-datasets of each pair. Each of
//! `runs` repetitions draws a fresh observed collection at θ* (its own stream), a fresh public
//! ordering of the pairs and fresh privacy noise, then runs SVT-ABC (`SvtAbc`, Algorithm 1 with
//! exact discrete Laplace noise) with `Δ = C/n`. The reported error is the paper's: mean over
//! the 4 parameters of |posterior mean − θ*| (prior mean if nothing is accepted), averaged
//! over the runs (± standard error). For comparison we also report non-private rejection ABC
//! (first `c` pairs in the same ordering with ρ_t ≤ ε_abc) and SVT-ABC calibrated with the
//! crude `Δ = C` (what a single-dataset bound would give).
//!
//! Run: `cargo run --release -p dpinfer-abc --example tuberculosis [T] [n_max] [runs]`
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::panic,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation
)]

use chacha20::ChaCha20Rng;
use dpinfer_abc::analysis::Resample;
use dpinfer_abc::pairs::PublicPairs;
use dpinfer_abc::svt::{SvtAbc, SvtAbcSettings};
use dpinfer_distances::{Relations, Sensitivity};
use dpinfer_simulators::models::tb::{
    N_SUMMARIES, TRUE_THETA, TbPrior, Tuberculosis, mean_clipped_distance,
    mean_clipped_distance_sensitivity,
};
use dpinfer_simulators::{Prior, SimStream, Simulator};
use rand_core::{Rng, SeedableRng};

const SEED: u64 = 2021;
const EPS_TOTAL: f64 = 1.0;
const EPS_ABC: f64 = 150.0;
const CLIP: f64 = 200.0;
const C_STOP: u64 = 10;

/// One simulation with retries on a recoverable failure (same stream).
fn simulate(sim: &Tuberculosis, th: &[f64], rng: &mut SimStream, out: &mut [f64]) {
    for _ in 0..1000 {
        if sim.simulate(th, rng, out).is_ok() {
            return;
        }
    }
    panic!("TB simulation failed 1000 times at {th:?}");
}

/// |mean(accepted) − θ*| per parameter (prior mean if none accepted).
fn abs_errors(acc: &[f64], prior_mean: &[f64; 4]) -> [f64; 4] {
    let k = acc.len() / 4;
    let mut m = *prior_mean;
    if k > 0 {
        m = [0.0; 4];
        for row in acc.chunks_exact(4) {
            for (a, b) in m.iter_mut().zip(row) {
                *a += b / k as f64;
            }
        }
    }
    let mut e = [0.0; 4];
    for i in 0..4 {
        e[i] = (m[i] - TRUE_THETA[i]).abs();
    }
    e
}

/// The paper's error: mean over the 4 parameters of |posterior mean − θ*|.
fn mae(e: &[f64; 4]) -> f64 {
    e.iter().sum::<f64>() / 4.0
}

fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, (var / n).sqrt())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let t: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let n_max: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let runs: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(20);
    let sim = Tuberculosis::reference();
    let prior = TbPrior::reference();
    let d = N_SUMMARIES;

    // Public pairs: θ_t and n_max pseudo-datasets (one stream per pair, as PublicPairs::generate).
    let t0 = std::time::Instant::now();
    let mut thetas = vec![0.0; t * 4];
    let mut outs = vec![0.0; t * n_max * d];
    for i in 0..t {
        let mut rng = SimStream::with_domain(SEED, 3, i as u64);
        let th = &mut thetas[i * 4..(i + 1) * 4];
        prior.sample(&mut rng, th).unwrap();
        for j in 0..n_max {
            let o = &mut outs[(i * n_max + j) * d..(i * n_max + j + 1) * d];
            simulate(&sim, th, &mut rng, o);
        }
    }
    eprintln!(
        "{t} public pairs × {n_max} pseudo-datasets in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let mut prior_mean = [0.0; 4];
    for row in thetas.chunks_exact(4) {
        for (a, b) in prior_mean.iter_mut().zip(row) {
            *a += b / t as f64;
        }
    }
    let prior_abs = abs_errors(&[], &prior_mean);
    let prior_err = mae(&prior_abs);

    let mut noise = ChaCha20Rng::seed_from_u64(0x7B_2021); // a secret seed in real use
    println!(
        "| n | Δ = C/n | b (R) / b (no R) | prior mean | non-private rejection | ABCDP (R) | ABCDP (no R) | ABCDP (R), Δ = C | ABCDP (no R), Δ = C | paper (R) | paper (no R) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut extra: Vec<String> = Vec::new();
    for (n, paper) in [(100_usize, (4.71, 4.51)), (1000, (2.20, 2.10))] {
        if n > n_max {
            continue;
        }
        let delta = mean_clipped_distance_sensitivity(n, CLIP).unwrap();
        let mut errs: [Vec<f64>; 5] = Default::default();
        let mut accepted = [0usize; 5];
        let mut per_param = [[0.0f64; 4]; 5];
        let mut rho_stats = (0.0, 0usize, 0usize); // sum of ρ, count ρ ≤ ε_abc, count
        let mut bs = [0.0; 2];
        for r in 0..runs {
            // Private: a fresh observed collection of n datasets at θ*.
            let mut obs = vec![0.0; n * d];
            let mut orng = SimStream::with_domain(SEED, 2, r as u64);
            for row in obs.chunks_exact_mut(d) {
                simulate(&sim, &TRUE_THETA, &mut orng, row);
            }
            // Public ordering of the pairs; outputs restricted to the first n pseudo-datasets.
            let mut idx: Vec<usize> = (0..t).collect();
            let mut prng = SimStream::with_domain(SEED, 4, r as u64);
            for i in (1..t).rev() {
                let j = (prng.next_u64() % (i as u64 + 1)) as usize;
                idx.swap(i, j);
            }
            let th: Vec<f64> = idx
                .iter()
                .flat_map(|&i| thetas[i * 4..(i + 1) * 4].to_vec())
                .collect();
            let em: Vec<f64> = idx
                .iter()
                .flat_map(|&i| outs[i * n_max * d..(i * n_max + n) * d].to_vec())
                .collect();
            let pairs = PublicPairs::from_parts(4, n * d, th, em).unwrap();
            let rho = |y: &[f64]| mean_clipped_distance(y, &obs, CLIP).unwrap_or(CLIP);

            // Non-private rejection ABC on the same ordering.
            let acc: Vec<f64> = (0..pairs.len())
                .filter(|&i| {
                    let v = rho(pairs.output(i));
                    rho_stats.0 += v;
                    rho_stats.2 += 1;
                    if v <= EPS_ABC {
                        rho_stats.1 += 1;
                    }
                    v <= EPS_ABC
                })
                .take(C_STOP as usize)
                .flat_map(|i| pairs.theta(i).to_vec())
                .collect();
            accepted[0] += acc.len() / 4;
            let e = abs_errors(&acc, &prior_mean);
            errs[0].push(mae(&e));
            for i in 0..4 {
                per_param[0][i] += e[i] / runs as f64;
            }

            let mut k = 1;
            for sens in [delta, CLIP] {
                for resample in [Resample::AfterAccept, Resample::Never] {
                    let s = SvtAbcSettings {
                        epsilon_abc: EPS_ABC,
                        epsilon_total: EPS_TOTAL,
                        c: C_STOP,
                        sensitivity: Sensitivity::declared(sens, Relations::REPLACE_ONE).unwrap(),
                        clip: CLIP,
                        resample,
                    };
                    let mut pass = SvtAbc::new(&pairs, rho, s).unwrap();
                    assert!(pass.epsilon() <= EPS_TOTAL);
                    if k <= 2 {
                        bs[k - 1] = pass.noise_scale();
                    }
                    pass.run(&mut noise).unwrap();
                    let acc = pass.accepted_thetas();
                    accepted[k] += acc.len() / 4;
                    let e = abs_errors(&acc, &prior_mean);
                    errs[k].push(mae(&e));
                    for i in 0..4 {
                        per_param[k][i] += e[i] / runs as f64;
                    }
                    k += 1;
                }
            }
        }
        eprintln!(
            "n = {n}: mean ρ over pairs {:.1}, fraction ρ ≤ ε_abc {:.3}; mean accepted per run (np, R, noR, R Δ=C, noR Δ=C): {:?}",
            rho_stats.0 / rho_stats.2 as f64,
            rho_stats.1 as f64 / rho_stats.2 as f64,
            accepted.map(|a| a as f64 / runs as f64)
        );
        let cell = |v: &[f64]| {
            let (m, se) = mean_se(v);
            format!("{m:.2} ± {se:.2}")
        };
        println!(
            "| {n} | {delta} | {:.1} / {:.1} | {prior_err:.2} | {} | {} | {} | {} | {} | {} | {} |",
            bs[0],
            bs[1],
            cell(&errs[0]),
            cell(&errs[1]),
            cell(&errs[2]),
            cell(&errs[3]),
            cell(&errs[4]),
            paper.0,
            paper.1
        );
        let below =
            |v: &[f64], x: f64| v.iter().filter(|&&e| e <= x).count() as f64 / v.len() as f64;
        let sd = |v: &[f64]| mean_se(v).1 * (v.len() as f64).sqrt();
        extra.push(format!(
            "| {n} | prior mean | {:.2} | {:.2} | {:.3} | {:.2} | {prior_err:.2} | — | — |",
            prior_abs[0], prior_abs[1], prior_abs[2], prior_abs[3]
        ));
        for (k, name, pv) in [
            (0, "non-private rejection", None),
            (1, "ABCDP (R)", Some(paper.0)),
            (2, "ABCDP (no R)", Some(paper.1)),
        ] {
            let pp = per_param[k];
            let frac = pv.map_or("—".to_string(), |x| format!("{:.2}", below(&errs[k], x)));
            extra.push(format!(
                "| {n} | {name} | {:.2} | {:.2} | {:.3} | {:.2} | {:.2} | {:.2} | {frac} |",
                pp[0],
                pp[1],
                pp[2],
                pp[3],
                mean_se(&errs[k]).0,
                sd(&errs[k])
            ));
        }
    }
    println!();
    println!(
        "Per-parameter |posterior mean − θ*| (mean over runs), the per-run sd of the error, and the fraction of runs at or below the paper's single-run error:"
    );
    println!();
    println!(
        "| n | method | R₁ | t₁ | R₂ | β | mean (paper's error) | per-run sd | P(run ≤ paper) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for l in extra {
        println!("{l}");
    }
}
