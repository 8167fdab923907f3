//! Bit-level value stability: MMD², RFF MMD² and the median heuristic on fixed data, pinned
//! as IEEE-754 bit patterns. The kernels use only `+ − × ÷ √` in a fixed order (no FMA, no
//! reassociation), so these bits must be the same on every target and every `-C target-cpu`
//! (checked on x86-64 baseline SSE2 and `target-cpu=native` with AVX-512) and every runtime
//! dispatch level (`dpinfer_distances::simd`). A change to these
//! bits is a deliberate numerical change: re-pin and say so in the commit.
#![cfg(feature = "alloc")] // uses the crate's alloc API
#![allow(clippy::unwrap_used, clippy::cast_precision_loss)]

use dpinfer_distances::{
    Gaussian, Laplace, MmdReference, RandomFourierFeatures, RffReference, Rows, median_heuristic,
    mmd2_biased,
};

/// Deterministic pseudo-data in (−3, 3) from a 64-bit integer hash (SplitMix64 finaliser), so
/// the test depends on no RNG crate.
fn data(seed: u64, len: usize) -> Vec<f64> {
    (0..len as u64)
        .map(|i| {
            let mut z =
                seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            6.0 * ((z >> 11) as f64 / (1u64 << 53) as f64) - 3.0
        })
        .collect()
}

fn values() -> [f64; 6] {
    let (x1, y1) = (
        data(1, 1000),
        data(2, 1000)
            .iter()
            .map(|v| 0.7 * v + 0.2)
            .collect::<Vec<_>>(),
    );
    let (x5, y5) = (data(3, 5 * 300), data(4, 5 * 300));
    let g = Gaussian::new(0.9).unwrap();
    let r1 = MmdReference::new(g, Rows::one_dim(&x1).unwrap()).unwrap();
    let a = r1.mmd2(Rows::one_dim(&y1).unwrap()).unwrap();
    let b = mmd2_biased(&g, Rows::new(&x5, 5).unwrap(), Rows::new(&y5, 5).unwrap()).unwrap();
    let lap = Laplace::new(1.3).unwrap();
    let c = mmd2_biased(&lap, Rows::new(&x5, 5).unwrap(), Rows::new(&y5, 5).unwrap()).unwrap();
    // RFF: "standard-normal" frequencies need not be normal for a bit test.
    let z = data(5, 50);
    let f = RandomFourierFeatures::new(&z, 1, 0.9).unwrap();
    let rr = RffReference::new(f, Rows::one_dim(&x1).unwrap()).unwrap();
    let d = rr.mmd2(Rows::one_dim(&y1).unwrap()).unwrap();
    let mut buf = vec![0.0; 500 * 499 / 2];
    let e = median_heuristic(Rows::one_dim(&y1).unwrap(), 500, &mut buf).unwrap();
    let f5 = median_heuristic(
        Rows::new(&x5, 5).unwrap(),
        300,
        &mut vec![0.0; 300 * 299 / 2],
    )
    .unwrap();
    [a, b, c, d, e, f5]
}

#[test]
fn pinned_bits() {
    let v = values();
    let bits = v.map(f64::to_bits);
    // Print to re-pin: cargo test -p dpinfer-distances --test suite -- value_stability:: --nocapture
    println!("{v:?}\n{bits:#018x?}");
    let pinned: [u64; 6] = PINNED;
    for (i, (got, want)) in bits.iter().zip(pinned).enumerate() {
        assert_eq!(
            *got,
            want,
            "value {i}: {} vs pinned {}",
            v[i],
            f64::from_bits(want)
        );
    }
}

/// The same pinned bits under every runtime-dispatch level this CPU has (portable baseline,
/// AVX2, AVX-512), forced with `simd::with_level`: the kernels fix lane count and summation
/// order, so the instruction set must not change a bit. Also checks that the levels the
/// machine reports are all exercised (at least the portable one).
#[cfg(feature = "std")]
#[test]
fn pinned_bits_on_every_dispatch_level() {
    use dpinfer_distances::simd::{Level, with_level};
    let levels = Level::available();
    assert!(levels.contains(&Level::Portable));
    assert!(levels.contains(&Level::detected()));
    println!("dispatch levels on this CPU: {levels:?}");
    for level in levels {
        let v = with_level(level, || {
            assert_eq!(Level::current(), level);
            values()
        })
        .unwrap();
        for (i, (got, want)) in v.map(f64::to_bits).iter().zip(PINNED).enumerate() {
            assert_eq!(*got, want, "{level:?}, value {i}: {} vs pinned", v[i]);
        }
    }
    // Outside `with_level` the detected level is back.
    assert_eq!(Level::current(), Level::detected());
}

const PINNED: [u64; 6] = [
    0x3fa4_b4df_0f67_ce70, // 1-D Gaussian MMD², cached reference (0.040442438726952970)
    0x3f7b_1adc_a0f9_d892, // 5-D Gaussian MMD², free function
    0x3f79_9def_708d_4a00, // 5-D Laplace MMD², free function
    0x3fa4_9300_6605_404b, // RFF MMD², D = 100, cached embedding
    0x3ff3_cbd2_2b2d_0fc9, // median heuristic, 1-D, 500-point subsample
    0x4015_38a1_da88_bc5b, // median heuristic, 5-D, 300 points
];
