//! The worker pool against the compiled reference worker (`examples/worker_gaussian.rs`, no
//! Python needed), through the `dpinfer_simulators` traits it implements (what a pairs table
//! of `dpinfer-abc` asks of it; the CLI's `tests/external.rs` runs whole tables through it):
//! blocks of rows independent of worker count, batch size and pipelining depth and equal to
//! the same model simulated in-process; every fault named with its row, its kind and the
//! worker's stderr; retries on a fresh worker; the reject marker.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::float_cmp,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dpinfer_simulators::prior::Uniform;
use dpinfer_simulators::{FnSimulator, SimError, SimStream, Simulator, dist};
use dpinfer_simulators::{Prior, RowSimulator, Rowless};
use dpinfer_workers::{
    CommandSimulator, FAILED_CODE, FaultKind, Pool, PoolSettings, REJECT_CODE, WorkerError,
};
use rand_core::Rng;

/// The compiled reference worker (built with the package's examples by `cargo test`).
fn worker() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let p = dir
        .join("examples")
        .join(format!("worker_gaussian{}", std::env::consts::EXE_SUFFIX));
    assert!(
        p.exists(),
        "{} is missing: run `cargo test -p dpinfer-workers` (which builds the examples) or \
         `cargo build -p dpinfer-workers --example worker_gaussian` first",
        p.display()
    );
    p
}

const OUTPUTS: usize = 50;
const ROWS: u64 = 120;
const SEED: u64 = 11;

fn settings(batch: usize, in_flight: usize, env: &[(&str, &str)]) -> PoolSettings {
    let mut s = PoolSettings::new(
        vec![worker().display().to_string()],
        vec!["mu".into()],
        OUTPUTS,
    );
    s.batch = batch;
    s.in_flight = in_flight;
    s.env = env
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    s
}

/// Rows of a table as the [`RowSimulator`] sees them: θ_j from `prior` on row `j`'s own
/// stream, then the whole block in one `simulate_rows` call (a pairs table of `dpinfer-abc`
/// does the same and redraws a rejected row; here it comes back with `ok = false`).
#[derive(Debug)]
struct Block {
    thetas: Vec<f64>,
    out: Vec<f64>,
    ok: Vec<bool>,
}

fn block<S: RowSimulator + ?Sized>(
    prior: &Uniform,
    sim: &S,
    rows: Range<u64>,
) -> Result<Block, SimError> {
    let ids: Vec<u64> = rows.collect();
    let mut streams: Vec<SimStream> = ids
        .iter()
        .map(|&j| SimStream::with_domain(SEED, 1, j))
        .collect();
    let mut thetas = vec![0.0; ids.len()];
    for (s, t) in streams.iter_mut().zip(thetas.iter_mut()) {
        prior.sample(s, std::slice::from_mut(t))?;
    }
    let mut out = vec![0.0; ids.len() * sim.row_output_dim()];
    let mut ok = vec![false; ids.len()];
    sim.simulate_rows(&ids, &thetas, &mut streams, &mut out, &mut ok)?;
    Ok(Block { thetas, out, ok })
}

fn table(s: PoolSettings, workers: usize) -> Result<Block, SimError> {
    let prior = Uniform::new(-3.0, 3.0).unwrap();
    let sim = CommandSimulator::new(Pool::new(s).unwrap(), workers);
    block(&prior, &sim, 0..ROWS)
}

/// The reference worker's model in-process: seed = the row stream's next u64, then
/// y_i = μ + z_i from `SimStream::new(seed, 0)`.
fn in_process() -> impl Simulator {
    let model = |theta: &[f64], rng: &mut dyn Rng, out: &mut [f64]| {
        let mut r = SimStream::new(rng.next_u64(), 0);
        for y in out.iter_mut() {
            *y = theta[0] + dist::std_normal(&mut r);
        }
        Ok(())
    };
    FnSimulator::new(1, OUTPUTS, model).unwrap()
}

fn bits(t: &Block) -> Vec<u64> {
    t.thetas.iter().chain(&t.out).map(|v| v.to_bits()).collect()
}

#[test]
fn one_and_four_workers_any_batch_size_and_pipelining_give_the_same_table_bit_for_bit() {
    let prior = Uniform::new(-3.0, 3.0).unwrap();
    let reference = block(&prior, &Rowless(&in_process()), 0..ROWS).unwrap();
    assert!(reference.ok.iter().all(|&ok| ok));
    for (batch, in_flight, workers) in [(64, 1, 1), (7, 2, 4), (1, 2, 2), (1000, 2, 1)] {
        let t = table(settings(batch, in_flight, &[]), workers).unwrap();
        assert!(
            bits(&t) == bits(&reference),
            "batch {batch}, {in_flight} in flight, {workers} workers differs from in-process"
        );
    }
}

/// Simulates with a fault injected at row 37 and returns the typed error.
fn fault(name: &str, batch: usize, retries: u32, timeout: f64) -> WorkerError {
    let spec = format!("{name}@37");
    let mut s = settings(batch, 2, &[("DPINFER_TEST_FAULT", &spec)]);
    s.retries = retries;
    s.timeout = Duration::from_secs_f64(timeout);
    let prior = Uniform::new(-3.0, 3.0).unwrap();
    let sim = CommandSimulator::new(Pool::new(s).unwrap(), 2);
    let e = block(&prior, &sim, 0..ROWS).unwrap_err();
    assert_eq!(
        e,
        SimError::Model {
            code: FAILED_CODE,
            recoverable: false
        },
        "{name}"
    );
    sim.take_error().expect("the pool keeps the typed error")
}

fn failure(e: &WorkerError) -> &dpinfer_workers::Failure {
    match e {
        WorkerError::Failed(f) => f,
        other => panic!("expected a failed batch, got {other}"),
    }
}

#[test]
fn a_crashing_worker_names_the_row_exit_status_and_stderr() {
    let e = fault("crash", 8, 1, 60.0);
    let f = failure(&e);
    assert_eq!(e.row(), Some(37));
    assert_eq!(f.row, Some(37));
    assert_eq!(f.batch, (32..40).collect::<Vec<u64>>());
    assert_eq!(f.attempts, 2);
    assert_eq!(f.fault.kind, FaultKind::Closed);
    assert_eq!(f.fault.exit.and_then(|s| s.code()), Some(3));
    assert!(
        e.stderr_tail()
            .iter()
            .any(|l| l.contains("injecting fault \"crash\" at row 37")),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("failed on row 37 (the batch rows 32..=39 failed 2 time(s)"),
        "{text}"
    );
    assert!(text.contains("exit status: 3"), "{text}");
    assert!(text.contains("  | worker: injecting fault"), "{text}");
}

#[test]
fn a_hanging_worker_is_killed_after_the_timeout() {
    let t = Instant::now();
    let e = fault("hang", 8, 0, 1.0);
    assert_eq!(e.row(), Some(37));
    assert_eq!(failure(&e).fault.kind, FaultKind::Timeout);
    assert!(e.to_string().contains("no answer within 1 s"), "{e}");
    // The batch and the isolated row: two timeouts, not an hour.
    assert!(t.elapsed() < Duration::from_secs(60));
}

#[test]
fn garbage_on_stdout_is_reported_as_not_arrow() {
    // The worker writes a line that is not Arrow and then hangs; at the timeout the pool
    // reports the bytes it read after the last complete message.
    let e = fault("garbage", 8, 0, 5.0);
    assert_eq!(e.row(), Some(37), "{e}");
    assert_eq!(failure(&e).fault.kind, FaultKind::NotArrow, "{e}");
    let text = e.to_string();
    assert!(text.contains("not a valid Arrow IPC stream"), "{text}");
    assert!(text.contains("Traceback (most recent call last)"), "{text}");
}

#[test]
fn wrong_row_ids_wrong_dimensions_and_nan_are_named() {
    for (name, want) in [
        ("wrong-id", "row id 1000037, which is not in the batch"),
        ("dims", "row 37: 51 output values, model.outputs = 50"),
        ("nan", "row 37: output 1 is NaN"),
    ] {
        let e = fault(name, 8, 0, 60.0);
        assert_eq!(e.row(), Some(37), "{name}");
        assert_eq!(failure(&e).fault.kind, FaultKind::BadAnswer, "{name}");
        assert!(e.to_string().contains(want), "{name}: {e}");
    }
}

#[test]
fn a_worker_that_crashes_once_is_replaced_and_the_table_is_unchanged() {
    let ok = table(settings(8, 2, &[]), 1).unwrap();
    let s = settings(8, 2, &[("DPINFER_TEST_FAULT", "crash-once@37")]);
    let pool = Pool::new(s).unwrap();
    let prior = Uniform::new(-3.0, 3.0).unwrap();
    let sim = CommandSimulator::new(pool, 1);
    let retried = block(&prior, &sim, 0..ROWS).unwrap();
    assert!(bits(&ok) == bits(&retried));
    assert!(sim.pool().started() >= 2, "no fresh worker was started");
}

/// The reject marker is a row that is not ok (the table redraws its θ from the row's own
/// stream); the other rows of the block are untouched.
#[test]
fn rejected_thetas_come_back_not_ok_and_leave_the_other_rows_alone() {
    let all = table(settings(16, 2, &[]), 2).unwrap();
    let rej = table(settings(16, 2, &[("DPINFER_TEST_REJECT_BELOW", "0.0")]), 2).unwrap();
    assert!(all.ok.iter().all(|&ok| ok));
    assert_eq!(all.thetas, rej.thetas);
    assert!(rej.thetas.iter().any(|&m| m < 0.0));
    for (j, (&mu, &ok)) in rej.thetas.iter().zip(&rej.ok).enumerate() {
        assert_eq!(ok, mu >= 0.0, "row {j}: θ = {mu}");
        let row = j * OUTPUTS..(j + 1) * OUTPUTS;
        if ok {
            assert!(all.out[row.clone()] == rej.out[row], "row {j} changed");
        }
    }
}

#[test]
fn one_theta_at_a_time_through_the_simulator_trait() {
    let sim = CommandSimulator::new(
        Pool::new(settings(4, 2, &[("DPINFER_TEST_REJECT_BELOW", "0.0")])).unwrap(),
        1,
    );
    let mut out = vec![0.0; OUTPUTS];
    let mut rng = SimStream::new(5, 0);
    let mut twin = rng.clone();
    sim.simulate(&[1.5], &mut rng, &mut out).unwrap();
    let mut want = vec![0.0; OUTPUTS];
    in_process().simulate(&[1.5], &mut twin, &mut want).unwrap();
    assert!(out == want);
    assert_eq!(
        sim.simulate(&[-1.0], &mut rng, &mut out),
        Err(SimError::Model {
            code: REJECT_CODE,
            recoverable: true
        })
    );
    assert!(matches!(
        sim.simulate(&[1.0, 2.0], &mut rng, &mut out),
        Err(SimError::DimensionMismatch { .. })
    ));
}

/// Issue 31, item 1: `CommandSimulator::on(w)` is a `BatchSimulator` that sends a whole block
/// of θ rows to the pool in one call (request batches of `batch` rows, spread over `w`
/// workers), each row with the seed its per-row path sends — so a batched sampler gets the
/// same numbers on 1 or 2 workers and with any batch size, equal to the in-process model.
/// (Before, the only `BatchSimulator` was the blanket one of `Simulator`: one row per call.)
#[test]
fn a_block_of_thetas_goes_to_the_workers_in_batches_with_the_per_row_seeds() {
    use dpinfer_simulators::BatchSimulator;
    let log = tmp("batch-log").join("batches.txt");
    let env = [
        ("DPINFER_TEST_REJECT_BELOW", "-2.5"),
        ("DPINFER_TEST_BATCH_LOG", log.to_str().unwrap()),
    ];
    let n: u32 = 40;
    let thetas: Vec<f64> = (0..n).map(|i| -3.0 + 0.15 * f64::from(i)).collect();
    let streams =
        || -> Vec<SimStream> { (0..n).map(|i| SimStream::new(9, u64::from(i))).collect() };
    // the per-row path, in-process
    let mut want = vec![0.0; OUTPUTS * n as usize];
    let mut st = streams();
    for (i, th) in thetas.iter().enumerate() {
        in_process()
            .simulate(
                &[*th],
                &mut st[i],
                &mut want[i * OUTPUTS..(i + 1) * OUTPUTS],
            )
            .unwrap();
    }
    for (batch, workers) in [(8, 2), (64, 1)] {
        let _ = std::fs::remove_file(&log);
        let sim = CommandSimulator::new(Pool::new(settings(batch, 2, &env)).unwrap(), 1);
        let mut out = vec![0.0; OUTPUTS * n as usize];
        let mut ok = vec![false; n as usize];
        let mut st = streams();
        sim.on(workers)
            .simulate_batch(&thetas, &mut st, &mut out, &mut ok)
            .unwrap();
        for i in 0..n as usize {
            assert_eq!(ok[i], thetas[i] >= -2.5, "row {i}");
            if ok[i] {
                assert!(
                    out[i * OUTPUTS..(i + 1) * OUTPUTS] == want[i * OUTPUTS..(i + 1) * OUTPUTS],
                    "row {i} (batch {batch}, {workers} workers)"
                );
            }
        }
        // every stream advanced by exactly the one seed draw
        let mut fresh = streams();
        for (a, b) in st.iter_mut().zip(fresh.iter_mut()) {
            b.next_u64();
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let lines = std::fs::read_to_string(&log).unwrap();
        let rows: Vec<(String, usize)> = lines
            .lines()
            .map(|l| {
                let (w, r) = l.split_once(' ').unwrap();
                (w.to_string(), r.parse().unwrap())
            })
            .collect();
        assert_eq!(
            rows.iter().map(|r| r.1).sum::<usize>(),
            n as usize,
            "{lines}"
        );
        // whole request batches (7 rows each for batch 8 on 2 workers), never one row per call
        assert!(rows.iter().all(|r| r.1 <= batch && r.1 > 1), "{lines}");
        assert!(
            rows.iter().all(|r| r.0.parse::<usize>().unwrap() < workers),
            "{lines}"
        );
    }
    let _ = std::fs::remove_file(&log);
}

/// Issue 31, item 3: `Pool::summarise` sends the observed data to one fresh worker as a
/// summarise request; a worker that does not understand it (the reference worker expects
/// `seed` and θ columns) is a `Failed` error for row 0 with one attempt and the worker's
/// stderr, not a hang or a panic.
#[test]
fn a_summarise_request_to_a_worker_that_cannot_answer_it_is_a_typed_failure() {
    let pool = Pool::new(settings(8, 2, &[])).unwrap();
    let e = pool.summarise(&[1.0, 2.5, -3.0]).unwrap_err();
    let WorkerError::Failed(f) = &e else {
        panic!("{e}")
    };
    assert_eq!((f.batch.as_slice(), f.attempts), (&[0][..], 1), "{e}");
    assert!(
        f.fault
            .stderr_tail
            .iter()
            .any(|l| l.contains("reference worker")),
        "{e}"
    );
}

#[test]
fn a_missing_program_and_invalid_settings_are_typed_errors() {
    let mut s = settings(4, 2, &[]);
    s.command = vec!["/nonexistent/simulator".into()];
    let sim = CommandSimulator::new(Pool::new(s).unwrap(), 1);
    let mut out = vec![0.0; OUTPUTS];
    let r = sim.simulate(&[0.0], &mut SimStream::new(1, 1), &mut out);
    assert_eq!(
        r,
        Err(SimError::Model {
            code: FAILED_CODE,
            recoverable: false
        })
    );
    let e = sim.take_error().unwrap();
    assert!(matches!(e, WorkerError::Spawn { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("cannot start the external simulator")
    );
    assert!(sim.take_error().is_none());

    for (edit, name) in [
        (
            Box::new(|s: &mut PoolSettings| s.command.clear()) as Box<dyn Fn(&mut PoolSettings)>,
            "command",
        ),
        (Box::new(|s: &mut PoolSettings| s.outputs = 0), "outputs"),
        (Box::new(|s: &mut PoolSettings| s.batch = 0), "outputs"),
        (
            Box::new(|s: &mut PoolSettings| s.in_flight = 3),
            "in_flight",
        ),
        (
            Box::new(|s: &mut PoolSettings| s.timeout = Duration::ZERO),
            "timeout",
        ),
        (
            Box::new(|s: &mut PoolSettings| s.param_names = vec!["seed".into()]),
            "param_names",
        ),
        (
            Box::new(|s: &mut PoolSettings| s.param_names.clear()),
            "param_names",
        ),
    ] {
        let mut s = settings(4, 2, &[]);
        edit(&mut s);
        match Pool::new(s) {
            Err(WorkerError::InvalidSettings { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let pool = Pool::new(settings(4, 2, &[])).unwrap();
    let e = pool
        .run(
            &[dpinfer_workers::Request {
                row: 9,
                seed: 1,
                theta: vec![],
            }],
            1,
        )
        .unwrap_err();
    assert_eq!(e.row(), Some(9));
}

#[test]
fn started_workers_are_used_and_the_output_map_names_the_row_it_refuses() {
    let pool = Pool::new(settings(8, 2, &[])).unwrap();
    pool.start(3).unwrap();
    assert_eq!(pool.started(), 3);
    // The mean of the 50 outputs; a mean above 2.5 is refused.
    let mean: std::sync::Arc<dpinfer_workers::OutputMap> =
        std::sync::Arc::new(|raw: &[f64], out: &mut [f64]| {
            let m = raw.iter().sum::<f64>() / raw.len() as f64;
            if m > 2.5 {
                return Err(format!("mean {m} above 2.5"));
            }
            out[0] = m;
            Ok(())
        });
    let sim = CommandSimulator::new(pool, 3)
        .with_output_map(1, std::sync::Arc::clone(&mean))
        .unwrap();
    assert_eq!(sim.output_dim(), 1);
    let prior = Uniform::new(-2.0, 2.0).unwrap();
    let t = block(&prior, &sim, 0..ROWS).unwrap();
    assert_eq!(
        sim.pool().started(),
        3,
        "the started workers were not reused"
    );
    // Row by row equal to the in-process model's mean.
    let full = block(&prior, &Rowless(&in_process()), 0..ROWS).unwrap();
    assert_eq!(t.thetas, full.thetas);
    for (&m, f) in t.out.iter().zip(full.out.chunks_exact(OUTPUTS)) {
        let want = f.iter().sum::<f64>() / OUTPUTS as f64;
        assert_eq!(m.to_bits(), want.to_bits());
    }
    let wide = Uniform::new(2.9, 3.0).unwrap();
    let e = block(&wide, &sim, 0..ROWS);
    assert!(e.is_err());
    match sim.take_error() {
        Some(WorkerError::OutputMap { row, reason }) => {
            assert!(row < ROWS);
            assert!(reason.contains("above 2.5"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        CommandSimulator::new(Pool::new(settings(8, 2, &[])).unwrap(), 1)
            .with_output_map(0, mean)
            .is_err()
    );
}

/// A fresh folder under cargo's per-test temporary folder.
fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An Arrow IPC stream of one int64 batch (one null, so the values buffer follows a
/// validity buffer) whose values buffer declares 2⁴⁰ bytes: arrow's own reader panics on it.
fn forged_stream() -> Vec<u8> {
    let col: arrow_array::Int64Array = (0..5_i64).map(|i| (i != 1).then_some(i)).collect();
    let batch = arrow_array::RecordBatch::try_from_iter([(
        "y",
        std::sync::Arc::new(col) as arrow_array::ArrayRef,
    )])
    .unwrap();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let mut b = w.into_inner().unwrap();
    let at = (0..b.len() - 16)
        .step_by(4)
        .find(|&i| {
            let w = |j: usize| i64::from_le_bytes(b[j..j + 8].try_into().unwrap());
            w(i + 8) == 40 && (0..256).contains(&w(i)) && w(i) % 8 == 0
        })
        .unwrap();
    b[at + 8..at + 16].copy_from_slice(&(1_i64 << 40).to_le_bytes());
    b
}

/// Issue 26, item 4: a forged answer is a `NotArrow` fault naming the forgery, not a panic
/// of the pool's reader thread (which was then reported as "closed its stdout").
#[test]
fn a_forged_answer_length_is_a_not_arrow_fault() {
    let dir = tmp("pool-forged");
    let answer = dir.join("answer.arrows");
    std::fs::write(&answer, forged_stream()).unwrap();
    let mut s = settings(8, 1, &[]);
    s.command = vec![
        "sh".into(),
        "-c".into(),
        format!("cat {:?}; sleep 30", answer.display().to_string()),
    ];
    s.retries = 0;
    s.timeout = Duration::from_secs(20);
    let t = Instant::now();
    let prior = Uniform::new(-3.0, 3.0).unwrap();
    let sim = CommandSimulator::new(Pool::new(s).unwrap(), 1);
    assert!(block(&prior, &sim, 0..8).is_err());
    let e = sim.take_error().unwrap();
    assert_eq!(failure(&e).fault.kind, FaultKind::NotArrow, "{e}");
    assert!(e.to_string().contains("outside its body"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(15), "{e}");
}

/// Whether process `pid` still runs (a zombie awaiting its reaper does not), within 2 s.
fn alive(pid: &str) -> bool {
    for _ in 0..200 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return false,
            Ok(s)
                if s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z')) =>
            {
                return false;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    true
}

/// Issue 26, item 8: a worker that forks a child holding its pipes (`sleep 1000 &`) leaves
/// nothing running once the pool is dropped, after a clean run and after a timeout: every
/// worker is its own process group and the whole group is stopped.
#[cfg(target_os = "linux")]
#[test]
fn a_workers_forked_children_are_stopped_with_it() {
    let dir = tmp("pool-fork");
    let children = dir.join("children");
    for (fault, timeout) in [("", 60.0), ("hang@37", 1.0)] {
        let _ = std::fs::remove_file(&children);
        let mut s = settings(8, 2, &[("DPINFER_TEST_FAULT", fault)]);
        s.command = vec![
            "sh".into(),
            "-c".into(),
            format!(
                "sleep 1000 & echo $! >> {:?}; exec {:?}",
                children.display().to_string(),
                worker().display().to_string()
            ),
        ];
        s.retries = 0;
        s.timeout = Duration::from_secs_f64(timeout);
        let prior = Uniform::new(-3.0, 3.0).unwrap();
        let sim = CommandSimulator::new(Pool::new(s).unwrap(), 2);
        let r = block(&prior, &sim, 0..ROWS);
        assert_eq!(r.is_ok(), fault.is_empty(), "{fault}");
        drop(sim);
        let pids = std::fs::read_to_string(&children).unwrap();
        assert!(!pids.trim().is_empty());
        for pid in pids.split_whitespace() {
            assert!(
                !alive(pid),
                "{fault}: the worker's child {pid} outlived the pool"
            );
        }
    }
}
