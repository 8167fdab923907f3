//! Value stability (E15): the first outputs of the samplers and models for fixed streams are
//! pinned, so any change to the numbers a seed produces is a deliberate, visible change.

use dpinfer_simulators::dist;
use dpinfer_simulators::models::mixture::{THETA_STAR, UniformMixture};
use dpinfer_simulators::models::sir::{Sir, SirSettings};
use dpinfer_simulators::{SimStream, Simulator};

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-14 * y.abs().max(1e-300), "{x} vs {y}");
    }
}

fn draws() -> Vec<f64> {
    let mut r = SimStream::new(2024, 1);
    let mut v = Vec::new();
    for _ in 0..3 {
        v.push(dist::std_normal(&mut r));
    }
    for _ in 0..3 {
        v.push(dist::exponential(&mut r));
    }
    v.push(dist::gamma(&mut r, 0.7));
    v.push(dist::gamma(&mut r, 3.5));
    #[allow(clippy::cast_precision_loss)]
    {
        v.push(dist::poisson(&mut r, 4.2) as f64);
        v.push(dist::poisson(&mut r, 420.0) as f64);
        v.push(dist::binomial(&mut r, 1000, 0.3) as f64);
    }
    v
}

fn models() -> Vec<f64> {
    let mut v = vec![0.0; 4];
    UniformMixture::new(5, 4)
        .unwrap()
        .simulate(&THETA_STAR, &mut SimStream::new(7, 0), &mut v)
        .unwrap();
    let mut s = vec![0.0; 5];
    Sir::new(SirSettings {
        population: 1000,
        t_end: 40.0,
        n_obs: 5,
        times: None,
    })
    .unwrap()
    .simulate(&[0.6, 0.1], &mut SimStream::new(7, 1), &mut s)
    .unwrap();
    v.extend(s);
    v
}

#[test]
fn pinned_values() {
    let d = draws();
    let m = models();
    close(&d, &DRAWS);
    close(&m, &MODELS);
}
/// std_normal ×3, exponential ×3, gamma(0.7), gamma(3.5), poisson(4.2), poisson(420),
/// binomial(1000, 0.3) from `SimStream::new(2024, 1)`.
const DRAWS: [f64; 11] = [
    -0.6916197684936182,
    -1.3775389570208783,
    0.6010274958808643,
    0.244819941169397,
    0.814122254934549,
    0.9294510827090008,
    1.676699828879094,
    3.0162494613536084,
    3.0,
    392.0,
    298.0,
];

/// 4 mixture draws at θ* (stream (7, 0)), then SIR K = 1000, θ = (0.6, 0.1), I at t = 0, 10,
/// 20, 30, 40 (stream (7, 1)).
const MODELS: [f64; 9] = [
    4.1246202789326345,
    0.3965560227203174,
    0.837922945671276,
    0.7144451115174786,
    1.0,
    30.0,
    504.0,
    312.0,
    110.0,
];

/// Stream version 2: the first ziggurat normals of `SimStream::new(2024, 1)` (the stream of
/// `DRAWS`), then the Gaussian-mean toy (n = 3, σ = 2) at μ = 1.5 on stream (7, 2) under
/// version 2. Version 1 stays the default: `pinned_values` above is unchanged.
fn v2_draws() -> Vec<f64> {
    use dpinfer_simulators::StreamVersion;
    use dpinfer_simulators::models::gaussian::GaussianMean;
    let mut r = SimStream::new(2024, 1);
    let mut v: Vec<f64> = (0..4).map(|_| dist::ziggurat_normal(&mut r)).collect();
    let mut y = vec![0.0; 3];
    GaussianMean::new(3, 2.0, 0.0, 10.0)
        .unwrap()
        .with_stream_version(StreamVersion::V2)
        .simulate(&[1.5], &mut SimStream::new(7, 2), &mut y)
        .unwrap();
    v.extend(y);
    v
}

#[test]
fn pinned_values_stream_version_2() {
    close(&v2_draws(), &V2_DRAWS);
}

const V2_DRAWS: [f64; 7] = [
    -1.3879393043264048,
    -0.2268987746839935,
    -0.6025912439547214,
    -0.33867264977057343,
    4.809707807867376,
    -1.2263752594412778,
    4.211650086200309,
];
