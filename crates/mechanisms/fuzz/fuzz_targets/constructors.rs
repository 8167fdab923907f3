//! Fuzz every constructor and the grid bridge with arbitrary f64 bit patterns: each must
//! return `Ok` with finite, positive costs or a typed error, and never panic; releases
//! must be finite exact grid points.
#![no_main]

use chacha20::ChaCha20Rng;
use chacha20::rand_core::SeedableRng;
use dpinfer_mechanisms::grid::{Bridge, Grid};
use dpinfer_mechanisms::{
    BinomialCurve, ClampedStat, Gaussian, GaussianRejection, Laplace, RegressionStats,
    SparseVector, SparseVectorSettings,
};
use libfuzzer_sys::fuzz_target;

fn f(data: &[u8], i: usize) -> f64 {
    let mut b = [0u8; 8];
    for (j, slot) in b.iter_mut().enumerate() {
        *slot = data.get(i * 8 + j).copied().unwrap_or(0);
    }
    f64::from_bits(u64::from_le_bytes(b))
}

fn u(data: &[u8], i: usize) -> u64 {
    f(data, i).to_bits()
}

fn on_grid(v: f64, g: Grid) -> bool {
    g.round(v)
        .is_ok_and(|j| g.to_f64(j).to_bits() == v.to_bits())
}

fuzz_target!(|data: &[u8]| {
    let (a, b, lo, hi, x) = (f(data, 0), f(data, 1), f(data, 2), f(data, 3), f(data, 4));
    let mut rng = ChaCha20Rng::seed_from_u64(u(data, 5));

    if let Ok(m) = Laplace::new(a, b, lo, hi) {
        assert!(m.epsilon().is_finite() && m.epsilon() > 0.0);
        if let Ok(y) = m.release(x, &mut rng) {
            assert!(y.is_finite() && on_grid(y, m.grid()));
        }
    }
    if let Ok(m) = Laplace::from_epsilon(a, b, lo, hi) {
        assert!(m.epsilon() <= a);
    }
    if let Ok(m) = Gaussian::new(a, b, lo, hi) {
        assert!(m.rho().is_finite() && m.rho() > 0.0 && m.effective_sigma() >= a);
        if let Ok(y) = m.release(x, &mut rng) {
            assert!(y.is_finite() && on_grid(y, m.grid()));
        }
    }
    if let Ok(m) = Gaussian::from_zcdp(a, b, lo, hi) {
        assert!(m.rho() <= a);
    }
    let _ = Gaussian::from_epsilon_delta(a, x, b, lo, hi);
    let settings = SparseVectorSettings {
        threshold: x,
        sensitivity: b,
        lo,
        hi,
        c: u(data, 6) % 8,
        resample: u(data, 6) & 8 != 0,
    };
    if let Ok(mut s) = SparseVector::new(settings, a) {
        assert!(s.epsilon() > 0.0);
        let _ = s.query(f(data, 7), &mut rng);
    }
    if let Ok(s) = SparseVector::from_epsilon(settings, a) {
        assert!(s.epsilon() <= a);
    }
    if let Ok(m) = GaussianRejection::new(a, b, hi, x) {
        assert!(m.epsilon().is_finite() && m.epsilon() > 0.0);
        let _ = m.decide(lo, &mut rng);
    }
    if let Ok(m) = BinomialCurve::new(u(data, 0) % 64, u(data, 1), u(data, 2)) {
        assert!(
            m.release_point(u(data, 3), &mut rng)
                .is_ok_and(|s| s <= m.n())
        );
        assert!(m.epsilon_exact(3) <= m.epsilon_paper(3));
    }
    let xb = [(lo, hi)];
    if let Ok(m) = RegressionStats::new(&xb, (lo, hi), 2, a) {
        assert!(m.epsilon() <= a);
        let mut out = [0.0; 3];
        m.release_into(&[x, b], &[b, x], &mut out, &mut rng)
            .unwrap();
        assert!(out.iter().all(|v| v.is_finite()));
    }
    if let Ok(m) = ClampedStat::sum(
        lo,
        hi,
        u(data, 6),
        dpinfer_mechanisms::Neighbouring::AddRemove,
        a,
    ) {
        assert!(m.epsilon() <= a);
        if let Ok(y) = m.release(&[x, b], &mut rng) {
            assert!(y.is_finite() && on_grid(y, m.grid()));
        }
    }
    if let Ok(m) = ClampedStat::mean(lo, hi, 2, a) {
        assert!(m.epsilon() <= a);
        let y = m.release(&[x, b], &mut rng).unwrap();
        assert!(y.is_finite() && on_grid(y, m.grid()));
    }
    // The grid bridge.
    let k = i32::try_from(u(data, 6) % 2200).unwrap_or(0) - 1100;
    if let Ok(g) = Grid::new(k) {
        if let Ok(v) = g.round(x) {
            if v.unsigned_abs() <= 1 << 53 {
                let back = g.to_f64(v);
                assert!(back.is_finite());
                assert_eq!(g.round(back).ok(), Some(v));
            }
        }
        if let Ok(br) = Bridge::new(g, lo, hi) {
            let v = br.to_grid(b);
            let y = br.release(v, i64::from_le_bytes(u(data, 7).to_le_bytes()));
            assert!(y.is_finite() && on_grid(y, g));
        }
    }
});
