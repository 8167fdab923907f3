//! Bit-level value stability: MMD², RFF MMD² and the median heuristic on fixed data, pinned
//! as IEEE-754 bit patterns. The kernels use only `+ − × ÷ √` in a fixed order (no FMA, no
//! reassociation; version 3's `exp` adds correctly rounded FMAs, one result on every level),
//! so these bits must be the same on every target and every `-C target-cpu`
//! (checked on x86-64 baseline SSE2 and `target-cpu=native` with AVX-512) and every runtime
//! dispatch level (`dpinfer_distances::simd`). Every [`KernelVersion`] is pinned: version 1
//! (the default) keeps the bits of every release before version 2 existed, version 2 has its
//! own. A change to these bits is a deliberate numerical change: add a kernel version instead
//! of re-pinning an existing one.
#![cfg(feature = "alloc")] // uses the crate's alloc API
#![allow(clippy::unwrap_used, clippy::cast_precision_loss)]

use dpinfer_distances::{
    Gaussian, KernelVersion, Laplace, Matern32, MmdReference, RandomFourierFeatures, RffReference,
    Rows, median_heuristic, mmd2_biased,
};
use dpinfer_math::Fnv1a;

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

fn values(version: KernelVersion) -> [f64; 6] {
    let (x1, y1) = (
        data(1, 1000),
        data(2, 1000)
            .iter()
            .map(|v| 0.7 * v + 0.2)
            .collect::<Vec<_>>(),
    );
    let (x5, y5) = (data(3, 5 * 300), data(4, 5 * 300));
    let g = Gaussian::new(0.9).unwrap().with_kernel_version(version);
    let r1 = MmdReference::new(g, Rows::one_dim(&x1).unwrap()).unwrap();
    let a = r1.mmd2(Rows::one_dim(&y1).unwrap()).unwrap();
    let b = mmd2_biased(&g, Rows::new(&x5, 5).unwrap(), Rows::new(&y5, 5).unwrap()).unwrap();
    let lap = Laplace::new(1.3).unwrap().with_kernel_version(version);
    let c = mmd2_biased(&lap, Rows::new(&x5, 5).unwrap(), Rows::new(&y5, 5).unwrap()).unwrap();
    // RFF: "standard-normal" frequencies need not be normal for a bit test.
    let z = data(5, 50);
    let f = RandomFourierFeatures::new(&z, 1, 0.9)
        .unwrap()
        .with_kernel_version(version);
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

/// Distances on tiny sets, where one kernel or feature value moves the last bits (the means
/// over the 1000-row sets of [`values`] average the versions' per-value differences away:
/// they agree bit for bit): FNV-1a hashes of the bits of 300 MMD²s between 3- and 2-point
/// sets for each of the Gaussian, Laplace and Matérn-3/2 kernels (1-D and 3-D), and of 300
/// RFF mean embeddings (50 frequencies) of 3-point sets (1-D and 2-D).
fn tiny_set_hashes(version: KernelVersion) -> [u64; 4] {
    let d = data(7, 300 * 15);
    let z1 = data(8, 50);
    let z2 = data(9, 100);
    let g = Gaussian::new(0.7).unwrap().with_kernel_version(version);
    let lap = Laplace::new(0.8).unwrap().with_kernel_version(version);
    let mat = Matern32::new(0.9).unwrap().with_kernel_version(version);
    let f1 = RandomFourierFeatures::new(&z1, 1, 0.6)
        .unwrap()
        .with_kernel_version(version);
    let f2 = RandomFourierFeatures::new(&z2, 2, 0.6)
        .unwrap()
        .with_kernel_version(version);
    let mut h = [Fnv1a::new(), Fnv1a::new(), Fnv1a::new(), Fnv1a::new()];
    let mut emb = [0.0; 100];
    for q in d.chunks_exact(15) {
        let (x1, y1) = (
            Rows::one_dim(&q[..3]).unwrap(),
            Rows::one_dim(&q[3..5]).unwrap(),
        );
        let (x3, y3) = (
            Rows::new(&q[..9], 3).unwrap(),
            Rows::new(&q[9..15], 3).unwrap(),
        );
        for (x, y) in [(x1, y1), (x3, y3)] {
            h[0].write_u64(mmd2_biased(&g, x, y).unwrap().to_bits());
            h[1].write_u64(mmd2_biased(&lap, x, y).unwrap().to_bits());
            h[2].write_u64(mmd2_biased(&mat, x, y).unwrap().to_bits());
        }
        f1.mean_embedding(x1, &mut emb).unwrap();
        h[3].write_f64s(&emb);
        f2.mean_embedding(Rows::new(&q[..6], 2).unwrap(), &mut emb)
            .unwrap();
        h[3].write_f64s(&emb);
    }
    h.map(|x| x.finish())
}

/// The pinned tiny-set hashes of each kernel version.
fn pinned_hashes(version: KernelVersion) -> [u64; 4] {
    match version {
        KernelVersion::V1 => [
            0xac9c_ffd4_ee07_9a1c, // Gaussian
            0xc5c5_5fd9_4348_fa3d, // Laplace
            0x9236_2185_eebb_eeee, // Matérn-3/2
            0xcb36_85b1_668d_4ffa, // RFF embeddings
        ],
        KernelVersion::V2 => [
            0xb887_994b_424e_fe9c,
            0xf7ba_be86_65a8_43ba,
            0x6f46_703e_561e_06fd,
            0x923b_4425_fcc3_1db2,
        ],
        KernelVersion::V3 => [
            0xd837_6731_5835_ab34,
            0x8739_d11a_ebc8_edf9,
            0xbed6_2699_bffb_f0e0,
            0x923b_4425_fcc3_1db2, // RFF: version 2's `sincos`, the same bits
        ],
        _ => unreachable!("a new kernel version needs its own pinned hashes"),
    }
}

/// The pinned bits of each kernel version.
fn pinned(version: KernelVersion) -> [u64; 6] {
    match version {
        KernelVersion::V1 => PINNED,
        KernelVersion::V2 => PINNED_V2,
        KernelVersion::V3 => PINNED_V3,
        _ => unreachable!("a new kernel version needs its own pinned bits"),
    }
}

const VERSIONS: [KernelVersion; 3] = [KernelVersion::V1, KernelVersion::V2, KernelVersion::V3];

#[test]
fn pinned_bits() {
    assert_eq!(KernelVersion::default(), KernelVersion::V1);
    assert_eq!(KernelVersion::LATEST, *VERSIONS.last().unwrap());
    for version in VERSIONS {
        let v = values(version);
        let bits = v.map(f64::to_bits);
        // Print to re-pin: cargo test -p dpinfer-distances --test suite -- value_stability:: --nocapture
        println!("{version:?}: {v:?}\n{bits:#018x?}");
        for (i, (got, want)) in bits.iter().zip(pinned(version)).enumerate() {
            assert_eq!(
                *got,
                want,
                "{version:?}, value {i}: {} vs pinned {}",
                v[i],
                f64::from_bits(want)
            );
        }
    }
    // The default (no `with_kernel_version`) is version 1, bit for bit.
    let g = Gaussian::new(0.9).unwrap();
    let x = data(1, 1000);
    let y: Vec<f64> = data(2, 1000).iter().map(|v| 0.7 * v + 0.2).collect();
    let r = MmdReference::new(g, Rows::one_dim(&x).unwrap()).unwrap();
    assert_eq!(
        r.mmd2(Rows::one_dim(&y).unwrap()).unwrap().to_bits(),
        PINNED[0]
    );
    // Versions agree to the stated error budget (1e-15 per kernel value; the MMD² values here
    // are means of such values, so within a few 1e-15), and the median heuristic does not
    // depend on the version.
    let a = values(KernelVersion::V1);
    for b in [values(KernelVersion::V2), values(KernelVersion::V3)] {
        for i in 0..4 {
            assert!(
                (a[i] - b[i]).abs() < 1e-14,
                "value {i}: {} vs {}",
                a[i],
                b[i]
            );
        }
        assert_eq!((a[4], a[5]), (b[4], b[5]));
    }
    // The tiny-set distances see the version: every hash differs between versions.
    for version in VERSIONS {
        let h = tiny_set_hashes(version);
        println!("{version:?} tiny-set hashes: {h:#018x?}");
        assert_eq!(h, pinned_hashes(version), "{version:?}");
    }
    let (h1, h2) = (
        tiny_set_hashes(KernelVersion::V1),
        tiny_set_hashes(KernelVersion::V2),
    );
    assert!(h1.iter().zip(&h2).all(|(a, b)| a != b));
    // Version 3 changes the `exp` kernels' bits and keeps version 2's random features.
    let h3 = tiny_set_hashes(KernelVersion::V3);
    assert!(h3[..3].iter().zip(&h2[..3]).all(|(a, b)| a != b));
    assert!(h3[..3].iter().zip(&h1[..3]).all(|(a, b)| a != b));
    assert_eq!(h3[3], h2[3]);
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
        for version in VERSIONS {
            let v = with_level(level, || {
                assert_eq!(Level::current(), level);
                values(version)
            })
            .unwrap();
            let h = with_level(level, || tiny_set_hashes(version)).unwrap();
            assert_eq!(h, pinned_hashes(version), "{level:?}, {version:?}");
            for (i, (got, want)) in v.map(f64::to_bits).iter().zip(pinned(version)).enumerate() {
                assert_eq!(
                    *got, want,
                    "{level:?}, {version:?}, value {i}: {} vs pinned",
                    v[i]
                );
            }
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

/// Version 2 (`KernelVersion::V2`) on the same data: the same bits as version 1 — these are
/// means over ≥ 90 000 kernel values (or 1000-point embeddings), whose per-value differences
/// of an ulp or two average out below the result's last bit. The versions are told apart by
/// the tiny-set hashes ([`tiny_set_hashes`]).
const PINNED_V2: [u64; 6] = PINNED;

/// Version 3 (`KernelVersion::V3`, fused multiply-adds in `exp`): its own bits on the 5-D
/// Laplace MMD², version 1's elsewhere (means of many values, as for version 2); the tiny-set
/// hashes tell it apart.
const PINNED_V3: [u64; 6] = [
    PINNED[0],
    PINNED[1],
    0x3f79_9def_708d_4a10, // 5-D Laplace MMD²: 16 ulp above versions 1 and 2
    PINNED[3],
    PINNED[4],
    PINNED[5],
];
