//! Benchmarks of dpinfer-distances: exact MMD (cached reference vs free function), 5-D MMD,
//! RFF MMD (ABCDP toy: 100 features, 5000 points), median heuristic, clipped weighted L2.
//! The unsuffixed names run at the detected runtime-dispatch level; `…/portable`, `…/x86v3`
//! (AVX2) and `…/x86v4` (AVX-512) force a level (`dpinfer_distances::simd::with_level`), so
//! the speed-up of each instruction set is a ratio measured in the same run. Groups ending in
//! `_v2` run the same job with `KernelVersion::V2` (the others use the default, version 1).
//! On a loaded machine prefer `examples/distances_cpu.rs` (CPU time; what
//! `crates/distances/bench/side_by_side.py` runs).
use core::hint::black_box;

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use dpinfer_benches::normals;
use dpinfer_distances::simd::{Level, with_level};
use dpinfer_distances::{
    ClippedWeightedL2, Gaussian, KernelVersion, MmdReference, RandomFourierFeatures, RffReference,
    Rows, TUBERCULOSIS_CLIP, TUBERCULOSIS_WEIGHTS, median_heuristic, mmd2_biased,
};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

/// Every dispatch level this CPU has, with its bench-name suffix.
fn levels() -> Vec<(&'static str, Level)> {
    Level::available()
        .into_iter()
        .map(|l| {
            let name = match l {
                Level::Portable => "portable",
                Level::X86V3 => "x86v3",
                Level::X86V4 => "x86v4",
                _ => "other",
            };
            (name, l)
        })
        .collect()
}

/// Benchmarks `f` as `name` (detected level) and `name/<level>` for every available level.
fn at_levels<O>(c: &mut Criterion, name: &str, sample_size: usize, mut f: impl FnMut() -> O) {
    let mut g = c.benchmark_group(name);
    g.sample_size(sample_size);
    g.bench_function("detected", |b: &mut Bencher| b.iter(&mut f));
    for (suffix, level) in levels() {
        g.bench_function(suffix, |b: &mut Bencher| {
            with_level(level, || b.iter(&mut f)).unwrap();
        });
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let g = Gaussian::new(1.0).unwrap();

    for n in [1000usize, 5000] {
        let x = normals(&mut rng, n, 0.0);
        let y = normals(&mut rng, n, 0.3);
        let (xr, yr) = (Rows::one_dim(&x).unwrap(), Rows::one_dim(&y).unwrap());
        let r = MmdReference::new(g, xr).unwrap();
        let ss = if n == 1000 { 50 } else { 10 };
        at_levels(c, &format!("mmd_reference_1d_n{n}"), ss, || {
            r.mmd(black_box(yr)).unwrap()
        });
        at_levels(c, &format!("mmd2_biased_free_1d_n{n}"), ss, || {
            mmd2_biased(&g, black_box(xr), black_box(yr)).unwrap()
        });
        if n == 5000 {
            let g2 = g.with_kernel_version(KernelVersion::V2);
            let r2 = MmdReference::new(g2, xr).unwrap();
            at_levels(c, "mmd_reference_1d_n5000_v2", ss, || {
                r2.mmd(black_box(yr)).unwrap()
            });
            at_levels(c, "mmd2_biased_free_1d_n5000_v2", ss, || {
                mmd2_biased(&g2, black_box(xr), black_box(yr)).unwrap()
            });
        }
    }

    let x5 = normals(&mut rng, 5000, 0.0);
    let y5 = normals(&mut rng, 5000, 0.2);
    let (x5r, y5r) = (Rows::new(&x5, 5).unwrap(), Rows::new(&y5, 5).unwrap());
    let g5 = Gaussian::new(2.0).unwrap();
    let r5 = MmdReference::new(g5, x5r).unwrap();
    at_levels(c, "mmd_reference_5d_n1000", 50, || {
        r5.mmd(black_box(y5r)).unwrap()
    });

    let z = normals(&mut rng, 50, 0.0);
    let f = RandomFourierFeatures::new(&z, 1, 1.0).unwrap();
    let obs = normals(&mut rng, 5000, 0.0);
    let sim = normals(&mut rng, 5000, 0.5);
    let rr = RffReference::new(f, Rows::one_dim(&obs).unwrap()).unwrap();
    let simr = Rows::one_dim(&sim).unwrap();
    at_levels(c, "rff_mmd_D100_n5000", 100, || {
        rr.mmd(black_box(simr)).unwrap()
    });

    let mut buf = vec![0.0; 2000 * 1999 / 2];
    for s in [1000usize, 2000] {
        at_levels(c, &format!("median_heuristic_n5000_sub{s}"), 20, || {
            median_heuristic(black_box(simr), s, &mut buf).unwrap()
        });
    }

    let cl = ClippedWeightedL2::new(&TUBERCULOSIS_WEIGHTS, TUBERCULOSIS_CLIP).unwrap();
    let a = normals(&mut rng, 8, 0.0);
    let bb = normals(&mut rng, 8, 1.0);
    c.bench_function("clipped_weighted_l2_k8", |b| {
        b.iter(|| cl.distance(black_box(&a), black_box(&bb)).unwrap())
    });
    let obs_s = normals(&mut rng, 8 * 1000, 0.0);
    let (o, s1) = (Rows::new(&obs_s, 8).unwrap(), Rows::new(&bb, 8).unwrap());
    c.bench_function("clipped_weighted_l2_mean_n1000", |b| {
        b.iter(|| cl.mean_distance(black_box(o), black_box(s1)).unwrap())
    });

    // Version 2 of the kernels on the same data.
    let rr2 = RffReference::new(
        f.with_kernel_version(KernelVersion::V2),
        Rows::one_dim(&obs).unwrap(),
    )
    .unwrap();
    at_levels(c, "rff_mmd_D100_n5000_v2", 100, || {
        rr2.mmd(black_box(simr)).unwrap()
    });
    let r5v2 = MmdReference::new(g5.with_kernel_version(KernelVersion::V2), x5r).unwrap();
    at_levels(c, "mmd_reference_5d_n1000_v2", 50, || {
        r5v2.mmd(black_box(y5r)).unwrap()
    });

    // RFF on 5-D data (the 5-D exact-MMD sets), 50 frequencies of dimension 5 (drawn last so
    // the data of the benches above are unchanged).
    let z5 = normals(&mut rng, 50 * 5, 0.0);
    let f5 = RandomFourierFeatures::new(&z5, 5, 2.0).unwrap();
    let rr5 = RffReference::new(f5, x5r).unwrap();
    at_levels(c, "rff_mmd_D100_5d_n1000", 100, || {
        rr5.mmd(black_box(y5r)).unwrap()
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
