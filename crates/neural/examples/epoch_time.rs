//! Wall time of one training epoch on the SIR round-10 training-set shape: 10 000 pairs,
//! θ 2-D (the target), s_dp 10-D (the context), minibatches of 100, 5 % held out; the default
//! spline flow and the default MAF by maximum likelihood, and the spline flow with SPPE's
//! atomic loss (10 atoms); `nsf-fused` and `atomic-fused` are the same with
//! `SplineImpl::Fused` (the spline as one fused operation). The twin of `benches/sbi_epoch.py` (sbi, PyTorch) for the speed
//! comparison in the crate README. It also prints the bits of the trained flows' losses and of a
//! log-density, so a change meant to be speed-only can be checked to change no number.
//!
//! Not run in CI. Run:
//! `RAYON_NUM_THREADS=1 cargo run --release -p dpinfer-neural --example epoch_time -- [--epochs 3] [--only nsf|nsf-fused|maf|atomic|atomic-fused]`
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::cast_precision_loss)]

use dpinfer_neural::{
    ConditionalFlow, FlowSettings, MafSettings, NsfSettings, RoundRows, SplineImpl, TrainSettings,
    TrainingSet,
};
use dpinfer_simulators::SimStream;
use dpinfer_simulators::dist::ziggurat_normal;
use std::time::Instant;

const PAIRS: usize = 10_000;
const THETA: usize = 2;
const S_DP: usize = 10;

fn arg<T: core::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().ok().unwrap())
}

/// θ ~ N(0, I₂); s_dp = a smooth nonlinear map of θ (a curve of 10 points) plus noise.
fn training_set() -> (TrainingSet, Vec<f64>) {
    let mut rng = SimStream::new(20_261_122, 1);
    let theta: Vec<f64> = (0..PAIRS * THETA)
        .map(|_| ziggurat_normal(&mut rng))
        .collect();
    let mut s = Vec::with_capacity(PAIRS * S_DP);
    for p in theta.chunks(THETA) {
        for l in 0..S_DP {
            let t = l as f64 / S_DP as f64;
            s.push((p[0] * t).sin() + p[1] * t * t + 0.1 * ziggurat_normal(&mut rng));
        }
    }
    let mut data = TrainingSet::new(THETA, S_DP, 0.05).unwrap();
    data.push_round(
        RoundRows {
            target: &theta,
            context: &s,
            weight: None,
            rows_per_pair: 1,
        },
        &mut rng,
    )
    .unwrap();
    // log N(θ; 0, I): the prior of the atomic loss
    let log_prior = theta
        .chunks(THETA)
        .map(|p| -0.5 * (p[0] * p[0] + p[1] * p[1]) - 1.837_877_066_409_345_5)
        .collect();
    (data, log_prior)
}

/// CPU seconds (user + system, every thread) of this process so far, from `/proc/self/stat`
/// (Linux; NaN elsewhere): on a shared machine steadier than wall time.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // fields after the command's closing parenthesis; utime and stime are 14 and 15
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0) // USER_HZ
        })
        .unwrap_or(f64::NAN)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let epochs: usize = arg(&args, "--epochs", 3);
    let only: String = arg(&args, "--only", String::from("all"));
    let threads = std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| String::from("default"));
    let (data, log_prior) = training_set();
    let settings = TrainSettings {
        max_epochs: epochs,
        patience: epochs + 1,
        ..TrainSettings::default()
    };
    let fused = FlowSettings::Nsf(NsfSettings {
        spline: SplineImpl::Fused,
        ..NsfSettings::default()
    });
    let cases = [
        ("nsf", FlowSettings::Nsf(NsfSettings::default()), false),
        ("nsf-fused", fused, false),
        ("maf", FlowSettings::Maf(MafSettings::default()), false),
        ("atomic", FlowSettings::Nsf(NsfSettings::default()), true),
        ("atomic-fused", fused, true),
    ];
    println!(
        "{PAIRS} pairs ({} training), θ {THETA}-D, s_dp {S_DP}-D, batch {}, {epochs} epochs, RAYON_NUM_THREADS={threads}",
        data.len() - data.validation_rows(),
        settings.batch_size
    );
    for (name, flow_settings, atomic) in cases {
        if only != "all" && only != name {
            continue;
        }
        let mut flow = ConditionalFlow::new(flow_settings, THETA, S_DP, 3).unwrap();
        let mut rng = SimStream::new(5, 0);
        let t0 = Instant::now();
        let c0 = cpu_seconds();
        let report = if atomic {
            flow.fit_atomic(&data, &log_prior, 10, &settings, &mut rng)
                .unwrap()
        } else {
            flow.fit(&data, &settings, &mut rng).unwrap()
        };
        let secs = t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - c0;
        let mut lp = [0.0];
        flow.log_prob(&[0.3, -0.2], &[0.1; S_DP], &mut lp).unwrap();
        println!(
            "{name}: {:.3} s per epoch, CPU {:.3} s per epoch ({} parameters); losses {:?}; check {:016x} {:016x}",
            secs / report.epochs as f64,
            cpu / report.epochs as f64,
            flow.parameter_count(),
            report.train_loss,
            report.validation_loss.last().unwrap().to_bits(),
            lp[0].to_bits()
        );
    }
}
