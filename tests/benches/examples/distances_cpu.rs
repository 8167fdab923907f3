//! Per-thread CPU time of the distance kernels at every runtime-dispatch level and every
//! kernel version, for `crates/distances/bench/side_by_side.py` (which times numpy on the same
//! jobs by its thread's CPU time, so the ratios hold on a loaded machine, where wall-clock
//! time mostly measures the other jobs). Same data as `benches/distances.rs` (seed 42, same
//! draw order).
//!
//! Prints one line per measurement: `job level version cpu_ms_per_call wall_ms_per_call
//! values_per_call`, then `ghz <f>`: this core's clock, from a dependent chain of integer
//! squarings (3 cycles each on the x86-64 cores we run on), by CPU time. With `threads` as
//! the first argument it instead times `MmdReference::mmd_parallel` (1-D, 5000 × 5000) on
//! rayon pools of 1 and 2 threads by wall time (`par <threads> <version> <wall_ms>`).
//!
//! Run: `cargo run --release --manifest-path tests/benches/Cargo.toml --example distances_cpu
//! -- [MIN_CPU_MS [JOB_SUBSTRING [LEVEL [VERSION]]]] | threads [ROUNDS]` (the filters select
//! one job, level — `portable`, `x86v3`, `x86v4` — or kernel version, for profiling; with a job
//! filter the clipped-L2 line and the clock are skipped).
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::too_many_lines
)]

use core::hint::black_box;
use std::time::Instant;

use dpinfer_benches::normals;
use dpinfer_distances::simd::{Level, with_level};
use dpinfer_distances::{
    ClippedWeightedL2, Gaussian, KernelVersion, MmdReference, RandomFourierFeatures, RffReference,
    Rows, TUBERCULOSIS_CLIP, TUBERCULOSIS_WEIGHTS, mmd2_biased,
};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

/// CPU time of the calling thread in nanoseconds (Linux: the scheduler's run time).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// `(cpu ms, wall ms)` per call of `f`, repeated until at least `min_cpu_ms` of CPU time.
fn time<O>(min_cpu_ms: f64, mut f: impl FnMut() -> O) -> (f64, f64) {
    black_box(f());
    let (c0, w0) = (thread_cpu_ns(), Instant::now());
    let mut n = 0u32;
    loop {
        black_box(f());
        n += 1;
        let c = (thread_cpu_ns() - c0) as f64 / 1e6;
        if c >= min_cpu_ms && n >= 3 {
            let w = w0.elapsed().as_secs_f64() * 1e3;
            return (c / f64::from(n), w / f64::from(n));
        }
    }
}

/// The core clock in GHz: a dependent chain of 64-bit squarings (`imul`, 3 cycles each on
/// the x86-64 cores we run on; a square cannot be folded with the next one, as a multiply by
/// a constant can).
fn ghz() -> f64 {
    let n = 200_000_000u64;
    let c0 = thread_cpu_ns();
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..n {
        x = x.wrapping_mul(x);
    }
    black_box(x);
    3.0 * n as f64 / (thread_cpu_ns() - c0) as f64
}

fn level_name(l: Level) -> &'static str {
    match l {
        Level::Portable => "portable",
        Level::X86V3 => "x86v3",
        Level::X86V4 => "x86v4",
        _ => "other",
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    // The draw order of benches/distances.rs.
    let _x1k = normals(&mut rng, 1000, 0.0);
    let _y1k = normals(&mut rng, 1000, 0.3);
    let x = normals(&mut rng, 5000, 0.0);
    let y = normals(&mut rng, 5000, 0.3);
    let x5 = normals(&mut rng, 5000, 0.0);
    let y5 = normals(&mut rng, 5000, 0.2);
    let z = normals(&mut rng, 50, 0.0);
    let obs = normals(&mut rng, 5000, 0.0);
    let sim = normals(&mut rng, 5000, 0.5);
    let _a = normals(&mut rng, 8, 0.0);
    let bb = normals(&mut rng, 8, 1.0);
    let obs_s = normals(&mut rng, 8 * 1000, 0.0);
    let z5 = normals(&mut rng, 50 * 5, 0.0);
    let (xr, yr) = (Rows::one_dim(&x).unwrap(), Rows::one_dim(&y).unwrap());
    let (x5r, y5r) = (Rows::new(&x5, 5).unwrap(), Rows::new(&y5, 5).unwrap());
    let simr = Rows::one_dim(&sim).unwrap();

    if args.get(1).map(String::as_str) == Some("threads") {
        let rounds: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(3);
        for _ in 0..rounds {
            for version in [KernelVersion::V1, KernelVersion::V2, KernelVersion::V3] {
                let g = Gaussian::new(1.0).unwrap().with_kernel_version(version);
                let r = MmdReference::new(g, xr).unwrap();
                for threads in [1usize, 2] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    pool.install(|| black_box(r.mmd_parallel(yr).unwrap()));
                    let t = Instant::now();
                    let reps = 5;
                    for _ in 0..reps {
                        pool.install(|| black_box(r.mmd_parallel(black_box(yr)).unwrap()));
                    }
                    let ms = t.elapsed().as_secs_f64() * 1e3 / f64::from(reps);
                    println!("par {threads} {} {ms:.3}", version.number());
                }
            }
        }
        return;
    }

    let min_cpu_ms: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(300.0);
    // Optional filters (for profiling one job): a job-name substring, a level name, a version.
    let only_job = args.get(2).cloned().unwrap_or_default();
    let only_level = args.get(3).cloned();
    let only_version: Option<u32> = args.get(4).and_then(|a| a.parse().ok());
    let cl = ClippedWeightedL2::new(&TUBERCULOSIS_WEIGHTS, TUBERCULOSIS_CLIP).unwrap();
    let (o, s1) = (Rows::new(&obs_s, 8).unwrap(), Rows::new(&bb, 8).unwrap());
    for level in Level::available() {
        for version in [KernelVersion::V1, KernelVersion::V2, KernelVersion::V3] {
            let v = version.number();
            let lv = level_name(level);
            if only_level.as_deref().is_some_and(|l| l != lv)
                || only_version.is_some_and(|o| o != v)
            {
                continue;
            }
            let g = Gaussian::new(1.0).unwrap().with_kernel_version(version);
            let g5 = Gaussian::new(2.0).unwrap().with_kernel_version(version);
            let f = RandomFourierFeatures::new(&z, 1, 1.0)
                .unwrap()
                .with_kernel_version(version);
            let f5 = RandomFourierFeatures::new(&z5, 5, 2.0)
                .unwrap()
                .with_kernel_version(version);
            with_level(level, || {
                let r = MmdReference::new(g, xr).unwrap();
                let r5 = MmdReference::new(g5, x5r).unwrap();
                let rr = RffReference::new(f, Rows::one_dim(&obs).unwrap()).unwrap();
                let rr5 = RffReference::new(f5, x5r).unwrap();
                let n = 5000.0f64;
                let jobs: [(&str, f64, &mut dyn FnMut() -> f64); 5] = [
                    (
                        "mmd2_biased_free_1d_n5000",
                        n * (n - 1.0) + n * n,
                        &mut || mmd2_biased(&g, black_box(xr), black_box(yr)).unwrap(),
                    ),
                    (
                        "mmd_reference_1d_n5000",
                        n * (n - 1.0) / 2.0 + n * n,
                        &mut || r.mmd(black_box(yr)).unwrap(),
                    ),
                    (
                        "mmd_reference_5d_n1000",
                        1000.0 * 999.0 / 2.0 + 1e6,
                        &mut || r5.mmd(black_box(y5r)).unwrap(),
                    ),
                    ("rff_mmd_D100_n5000", 5000.0 * 50.0, &mut || {
                        rr.mmd(black_box(simr)).unwrap()
                    }),
                    ("rff_mmd_D100_5d_n1000", 1000.0 * 50.0, &mut || {
                        rr5.mmd(black_box(y5r)).unwrap()
                    }),
                ];
                for (name, values, job) in jobs {
                    if !name.contains(only_job.as_str()) {
                        continue;
                    }
                    let (c, w) = time(min_cpu_ms, job);
                    println!("{name} {lv} {v} {c:.5} {w:.5} {values}");
                }
            })
            .unwrap();
        }
    }
    if !only_job.is_empty() {
        return;
    }
    let (c, w) = time(min_cpu_ms, || {
        cl.mean_distance(black_box(o), black_box(s1)).unwrap()
    });
    println!("clipped_weighted_l2_mean_n1000 scalar 0 {c:.6} {w:.6} 1000");
    println!("ghz {:.3}", ghz());
}
