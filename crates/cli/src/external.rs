//! External simulators: `[model] kind = "command"` runs the user's program as a pool of
//! long-lived worker processes that speak Arrow IPC streams over stdin/stdout.
//!
//! # Protocol (version 1)
//!
//! The worker is started once (`command`, no shell, in the config file's folder) and keeps
//! running until its stdin closes.
//!
//! * **stdin** carries one Arrow IPC *stream*: the schema, then one record batch per request.
//!   Columns: `row` (`uint64`, the table row id), `seed` (`uint64`, the row's simulation seed),
//!   then one `float64` column per parameter, named as in `[[model.prior]]`. The schema
//!   metadata holds `dpinfer.protocol = "1"` and `dpinfer.outputs` (the output length).
//! * **stdout** carries one Arrow IPC stream back: a schema, then exactly one record batch per
//!   request batch, in order, with the same rows (any order): `row` (any integer type, or
//!   `float64` holding integers — R writes `int32`/`double`) and `output`, a
//!   `fixed_size_list<float64>` or `list<float64>` of exactly `outputs` values per row.
//!   Optional `reject` (`bool`): `true` marks a θ the simulator rejects (its `output` may be
//!   null); the row then gets a fresh θ from its own stream, as a built-in model's recoverable
//!   failure does.
//! * **stderr** is free text; its last lines are shown when the worker fails.
//!
//! Every row's seed is drawn from the row's own public stream (`SimStream` keyed by the run
//! seed, the generation and the row id, after its θ draw), so outputs depend neither on the
//! batch size nor on the number of workers nor on which worker ran a row.
//!
//! Faults — the worker exits, answers nothing within `timeout` seconds, writes bytes that are
//! not an Arrow stream, answers with missing, unknown or repeated row ids, the wrong output
//! length, or NaN/±∞ — stop the worker, and the batch is retried on a fresh worker up to
//! `retries` times; then the run fails with an error naming the rows, the fault and the
//! worker's stderr tail.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, bail};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, UInt64Array};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// Protocol version written to the request schema metadata.
pub const PROTOCOL_VERSION: &str = "1";
/// Lines of a worker's stderr kept for error messages.
const STDERR_LINES: usize = 20;

/// How to run the external simulator.
#[derive(Debug, Clone)]
pub struct ExternalSettings {
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// Working directory of the workers (the config file's folder).
    pub dir: PathBuf,
    /// Parameter names (request columns), in θ order.
    pub param_names: Vec<String>,
    /// Values per simulation.
    pub outputs: usize,
    /// Rows per request batch.
    pub batch: usize,
    /// Seconds a worker may take to answer one batch.
    pub timeout: Duration,
    /// Retries of a failed batch, each on a fresh worker.
    pub retries: u32,
    /// `[model.summary]`, applied to every answer (the protocol carries the raw outputs).
    pub summary: Option<crate::summary_decl::DeclaredSummary>,
}

/// One row to simulate.
#[derive(Debug, Clone)]
pub struct Request {
    /// Table row id.
    pub row: u64,
    /// The row's simulation seed.
    pub seed: u64,
    /// θ.
    pub theta: Vec<f64>,
}

/// What the simulator made of one row.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `outputs` finite values.
    Output(Vec<f64>),
    /// The simulator rejected θ (the `reject` marker).
    Reject,
}

/// A pool of worker processes; idle workers are kept for the next call.
pub struct Pool {
    settings: ExternalSettings,
    request_schema: SchemaRef,
    idle: Mutex<Vec<Worker>>,
    spawned: AtomicUsize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("command", &self.settings.command)
            .field("outputs", &self.settings.outputs)
            .finish_non_exhaustive()
    }
}

struct Worker {
    id: usize,
    child: Child,
    requests: Option<SyncSender<RecordBatch>>,
    answers: Receiver<Result<RecordBatch, String>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The first bytes read from stdout since the last complete answer.
    unparsed: Arc<Mutex<Vec<u8>>>,
}

/// Records the first bytes of stdout not yet decoded, so that a timeout after stray output
/// (a `print` to stdout) can say what the worker wrote.
struct Capture<R> {
    inner: R,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl<R: std::io::Read> std::io::Read for Capture<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Ok(mut s) = self.seen.lock()
            && s.len() < 64
        {
            let take = n.min(64 - s.len());
            s.extend_from_slice(&buf[..take]);
        }
        Ok(n)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing stdin lets a well-behaved worker exit; then make sure it is gone.
        self.requests = None;
        for _ in 0..20 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A failed batch: what went wrong (naming rows) and the worker's stderr tail.
struct Fault {
    what: String,
    stderr: String,
}

impl Pool {
    /// A pool for `settings` (no process is started until the first batch).
    ///
    /// # Errors
    /// An empty command, no parameters, zero outputs or batch size, duplicate names.
    pub fn new(settings: ExternalSettings) -> Result<Self> {
        if settings.command.is_empty() || settings.command[0].is_empty() {
            bail!("model.command must name a program, e.g. [\"python3\", \"sim.py\"]");
        }
        if settings.param_names.is_empty() {
            bail!("a command model needs at least one [[model.prior]] parameter");
        }
        if settings.outputs == 0 || settings.batch == 0 {
            bail!("model.outputs and model.batch must be positive");
        }
        let mut fields = vec![
            Field::new("row", DataType::UInt64, false),
            Field::new("seed", DataType::UInt64, false),
        ];
        for n in &settings.param_names {
            if n == "row" || n == "seed" || fields.iter().any(|f| f.name() == n) {
                bail!("parameter name {n:?} is reserved or repeated");
            }
            fields.push(Field::new(n, DataType::Float64, false));
        }
        let meta = HashMap::from([
            ("dpinfer.protocol".to_string(), PROTOCOL_VERSION.to_string()),
            ("dpinfer.outputs".to_string(), settings.outputs.to_string()),
        ]);
        Ok(Self {
            request_schema: Arc::new(Schema::new(fields).with_metadata(meta)),
            settings,
            idle: Mutex::new(Vec::new()),
            spawned: AtomicUsize::new(0),
        })
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &ExternalSettings {
        &self.settings
    }

    /// Simulates every request with up to `workers` processes in parallel (batches of
    /// `settings.batch` rows); answers are in request order.
    ///
    /// # Errors
    /// A batch that failed `retries + 1` times (the message names rows, fault and stderr).
    pub fn run(&self, requests: &[Request], workers: usize) -> Result<Vec<Answer>> {
        let d = self.settings.param_names.len();
        if let Some(r) = requests.iter().find(|r| r.theta.len() != d) {
            bail!(
                "row {}: θ has {} values, expected {d}",
                r.row,
                r.theta.len()
            );
        }
        let chunks: Vec<&[Request]> = requests.chunks(self.settings.batch).collect();
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let results: Mutex<Vec<Option<Vec<Answer>>>> = Mutex::new(vec![None; chunks.len()]);
        let first_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
        let threads = workers.clamp(1, chunks.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    let mut worker: Option<Worker> = None;
                    loop {
                        if failed.load(Ordering::Relaxed) {
                            break;
                        }
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(k) else { break };
                        match self.batch_with_retries(&mut worker, chunk) {
                            Ok(a) => {
                                if let Ok(mut r) = results.lock() {
                                    r[k] = Some(a);
                                }
                            }
                            Err(e) => {
                                failed.store(true, Ordering::Relaxed);
                                if let Ok(mut f) = first_error.lock()
                                    && f.is_none()
                                {
                                    *f = Some(e);
                                }
                                break;
                            }
                        }
                    }
                    if let Some(w) = worker
                        && let Ok(mut idle) = self.idle.lock()
                    {
                        idle.push(w);
                    }
                });
            }
        });
        if let Some(e) = first_error.into_inner().ok().flatten() {
            return Err(e);
        }
        let mut out = Vec::with_capacity(requests.len());
        for r in results
            .into_inner()
            .map_err(|_| anyhow::anyhow!("a simulation thread panicked"))?
        {
            match r {
                Some(a) => out.extend(a),
                None => bail!("a simulation thread stopped without an answer"),
            }
        }
        if let Some(s) = &self.settings.summary {
            for (a, r) in out.iter_mut().zip(requests) {
                if let Answer::Output(v) = a {
                    *v = s
                        .compute(v)
                        .map_err(|e| anyhow::anyhow!("row {}: {e:#}", r.row))?;
                }
            }
        }
        Ok(out)
    }

    fn batch_with_retries(
        &self,
        worker: &mut Option<Worker>,
        chunk: &[Request],
    ) -> Result<Vec<Answer>> {
        let mut last: Option<Fault> = None;
        for _ in 0..=self.settings.retries {
            let w = match worker {
                Some(w) => w,
                None => {
                    let taken = self.idle.lock().ok().and_then(|mut i| i.pop());
                    worker.insert(match taken {
                        Some(w) => w,
                        None => self.spawn()?,
                    })
                }
            };
            match self.batch(w, chunk) {
                Ok(a) => return Ok(a),
                Err(f) => {
                    // The worker is in an unknown state: stop it, retry on a fresh one.
                    *worker = None;
                    last = Some(f);
                }
            }
        }
        let mut f = last.unwrap_or(Fault {
            what: "no attempt was made".into(),
            stderr: String::new(),
        });
        let attempts = self.settings.retries + 1;
        let mut failed_rows = format!(
            "{} ({attempts} attempt(s), each on a fresh worker)",
            rows_label(chunk)
        );
        if chunk.len() > 1 {
            // Isolate the row: run the batch's rows one at a time (one attempt each, on a
            // fresh worker after a failure). Answers are per row, so if every row succeeds
            // alone the batch is recovered; otherwise the first failing row is named.
            let mut answers = Vec::with_capacity(chunk.len());
            let mut isolated = None;
            for r in chunk {
                let w = match worker {
                    Some(w) => w,
                    None => worker.insert(self.spawn()?),
                };
                match self.batch(w, std::slice::from_ref(r)) {
                    Ok(a) => answers.extend(a),
                    Err(e) => {
                        *worker = None;
                        isolated = Some((r.row, e));
                        break;
                    }
                }
            }
            match isolated {
                None => return Ok(answers),
                Some((row, e)) => {
                    failed_rows = format!(
                        "row {row} (the batch {} failed {attempts} time(s); row {row} then \
                         failed alone)",
                        rows_label(chunk)
                    );
                    f = e;
                }
            }
        }
        let tail = if f.stderr.trim().is_empty() {
            "(worker stderr was empty)".to_string()
        } else {
            format!(
                "worker stderr (last lines):\n{}",
                f.stderr
                    .lines()
                    .map(|l| format!("  | {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        };
        bail!(
            "external simulator {:?} failed on {failed_rows}: {}\n{tail}",
            self.settings.command.join(" "),
            f.what
        )
    }

    fn spawn(&self) -> Result<Worker> {
        let id = self.spawned.fetch_add(1, Ordering::Relaxed);
        let cmd = &self.settings.command;
        let mut child = Command::new(&cmd[0])
            .args(&cmd[1..])
            .current_dir(&self.settings.dir)
            .env("DPINFER_WORKER", id.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot start the external simulator {:?} in {}: {e}",
                    cmd.join(" "),
                    self.settings.dir.display()
                )
            })?;
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(a), Some(b), Some(c)) => (a, b, c),
                _ => bail!("external simulator: no pipes to the worker"),
            };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let t2 = Arc::clone(&tail);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut t) = t2.lock() {
                    if t.len() == STDERR_LINES {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }
        });
        let (req_tx, req_rx) = mpsc::sync_channel::<RecordBatch>(1);
        let schema = Arc::clone(&self.request_schema);
        std::thread::spawn(move || write_requests(stdin, &schema, &req_rx));
        let (ans_tx, ans_rx) = mpsc::sync_channel(1);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = Arc::clone(&seen);
        let seen3 = Arc::clone(&seen);
        std::thread::spawn(move || {
            let stdout = Capture {
                inner: stdout,
                seen: seen2,
            };
            let reader = match StreamReader::try_new(BufReader::new(stdout), None) {
                Ok(r) => r,
                Err(e) => {
                    let _ = ans_tx.send(Err(describe_read_error(&e)));
                    return;
                }
            };
            // The schema message is not stray output: keep only what follows it.
            if let Ok(mut s) = seen3.lock() {
                s.clear();
            }
            for b in reader {
                let stop = b.is_err();
                if let Ok(mut s) = seen3.lock() {
                    s.clear();
                }
                if ans_tx.send(b.map_err(|e| describe_read_error(&e))).is_err() || stop {
                    return;
                }
            }
            let _ = ans_tx.send(Err("the worker closed its stdout".into()));
        });
        Ok(Worker {
            id,
            child,
            requests: Some(req_tx),
            answers: ans_rx,
            stderr: tail,
            unparsed: seen,
        })
    }

    fn batch(&self, w: &mut Worker, chunk: &[Request]) -> Result<Vec<Answer>, Fault> {
        let fault = |w: &mut Worker, what: String| {
            // Give the stderr reader a moment to collect the worker's last words.
            let exited = wait_exit(&mut w.child, Duration::from_millis(200));
            let what = match exited {
                Some(status) => format!("{what} (worker {} exited: {status})", w.id),
                None => format!("{what} (worker {})", w.id),
            };
            Fault {
                what,
                stderr: w
                    .stderr
                    .lock()
                    .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
                    .unwrap_or_default(),
            }
        };
        let batch = match self.request_batch(chunk) {
            Ok(b) => b,
            Err(e) => return Err(fault(w, format!("cannot build the request: {e}"))),
        };
        let sent = w.requests.as_ref().is_some_and(|tx| tx.send(batch).is_ok());
        if !sent {
            return Err(fault(w, "the worker stopped reading its stdin".into()));
        }
        let answer = match w.answers.recv_timeout(self.settings.timeout) {
            Ok(Ok(b)) => b,
            Ok(Err(e)) => return Err(fault(w, e)),
            Err(RecvTimeoutError::Timeout) => {
                let _ = w.child.kill();
                let stray = w.unparsed.lock().map(|s| s.clone()).unwrap_or_default();
                if stray.len() >= 4 && stray[..4] != [0xff; 4] {
                    return Err(fault(
                        w,
                        format!(
                            "the worker's stdout is not a valid Arrow IPC stream: it wrote {:?}… \
                             (stdout is reserved for the protocol; print to stderr)",
                            String::from_utf8_lossy(&stray)
                        ),
                    ));
                }
                return Err(fault(
                    w,
                    format!(
                        "no answer within {} s (model.timeout); the worker was killed",
                        self.settings.timeout.as_secs_f64()
                    ),
                ));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(fault(w, "the worker closed its stdout".into()));
            }
        };
        self.parse_answer(&answer, chunk).map_err(|e| fault(w, e))
    }

    fn request_batch(&self, chunk: &[Request]) -> Result<RecordBatch> {
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from_iter_values(chunk.iter().map(|r| r.row))),
            Arc::new(UInt64Array::from_iter_values(chunk.iter().map(|r| r.seed))),
        ];
        for k in 0..self.settings.param_names.len() {
            cols.push(Arc::new(Float64Array::from_iter_values(
                chunk.iter().map(|r| r.theta[k]),
            )));
        }
        Ok(RecordBatch::try_new(
            Arc::clone(&self.request_schema),
            cols,
        )?)
    }

    fn parse_answer(&self, b: &RecordBatch, chunk: &[Request]) -> Result<Vec<Answer>, String> {
        let k = self.settings.outputs;
        let rows = b
            .column_by_name("row")
            .ok_or("the answer has no `row` column")?;
        let ids = integer_ids(rows.as_ref())?;
        if ids.len() != chunk.len() {
            return Err(format!(
                "the answer has {} rows for a batch of {} ({})",
                ids.len(),
                chunk.len(),
                rows_label(chunk)
            ));
        }
        let output = b
            .column_by_name("output")
            .ok_or("the answer has no `output` column")?;
        let reject = match b.column_by_name("reject") {
            None => None,
            Some(c) => Some(
                c.as_boolean_opt()
                    .ok_or("the `reject` column must be of type bool")?,
            ),
        };
        let index: HashMap<u64, usize> =
            chunk.iter().enumerate().map(|(i, r)| (r.row, i)).collect();
        let mut out: Vec<Option<Answer>> = vec![None; chunk.len()];
        for (i, id) in ids.iter().enumerate() {
            let Some(&pos) = index.get(id) else {
                return Err(format!(
                    "the answer holds row id {id}, which is not in the batch ({})",
                    rows_label(chunk)
                ));
            };
            if out[pos].is_some() {
                return Err(format!("the answer holds row {id} twice"));
            }
            let rejected = reject.is_some_and(|r| r.is_valid(i) && r.value(i));
            if rejected {
                out[pos] = Some(Answer::Reject);
                continue;
            }
            if output.is_null(i) {
                return Err(format!("row {id}: null output without `reject = true`"));
            }
            let values = list_values(output.as_ref(), i, *id)?;
            if values.len() != k {
                return Err(format!(
                    "row {id}: {} output values, model.outputs = {k}",
                    values.len()
                ));
            }
            if let Some(j) = values.iter().position(|v| !v.is_finite()) {
                return Err(format!(
                    "row {id}: output {j} is {} (mark a θ the simulator cannot handle with \
                     reject = true)",
                    values[j]
                ));
            }
            out[pos] = Some(Answer::Output(values));
        }
        out.into_iter()
            .zip(chunk)
            .map(|(a, r)| a.ok_or_else(|| format!("row {} is missing from the answer", r.row)))
            .collect()
    }
}

fn write_requests(stdin: ChildStdin, schema: &Schema, rx: &Receiver<RecordBatch>) {
    let Ok(mut w) = StreamWriter::try_new(std::io::BufWriter::new(stdin), schema) else {
        return;
    };
    if w.flush().is_err() {
        return;
    }
    while let Ok(b) = rx.recv() {
        if w.write(&b).is_err() || w.flush().is_err() {
            return;
        }
    }
    let _ = w.finish();
    let _ = w.get_mut().flush();
}

fn describe_read_error(e: &arrow_schema::ArrowError) -> String {
    format!("the worker's stdout is not a valid Arrow IPC stream ({e})")
}

fn wait_exit(child: &mut Child, within: Duration) -> Option<std::process::ExitStatus> {
    let steps = (within.as_millis() / 10).max(1);
    for _ in 0..steps {
        if let Ok(Some(s)) = child.try_wait() {
            // Let the stderr thread drain the pipe.
            std::thread::sleep(Duration::from_millis(20));
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// "row 7" or "rows 8..=15".
fn rows_label(chunk: &[Request]) -> String {
    match chunk {
        [] => "no rows".into(),
        [r] => format!("row {}", r.row),
        [a, .., b] if b.row >= a.row && b.row - a.row + 1 == chunk.len() as u64 => {
            format!("rows {}..={}", a.row, b.row)
        }
        _ => format!(
            "rows {}",
            chunk
                .iter()
                .map(|r| r.row.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn integer_ids(a: &dyn Array) -> Result<Vec<u64>, String> {
    let bad = || "the `row` column must hold non-negative integers".to_string();
    if a.null_count() > 0 {
        return Err("the `row` column holds nulls".into());
    }
    Ok(match a.data_type() {
        DataType::UInt64 => a.as_primitive::<UInt64Type>().values().to_vec(),
        DataType::UInt32 => a
            .as_primitive::<UInt32Type>()
            .values()
            .iter()
            .map(|&v| u64::from(v))
            .collect(),
        DataType::Int64 => a
            .as_primitive::<Int64Type>()
            .values()
            .iter()
            .map(|&v| u64::try_from(v).map_err(|_| bad()))
            .collect::<Result<_, _>>()?,
        DataType::Int32 => a
            .as_primitive::<Int32Type>()
            .values()
            .iter()
            .map(|&v| u64::try_from(v).map_err(|_| bad()))
            .collect::<Result<_, _>>()?,
        DataType::Float64 => a
            .as_primitive::<Float64Type>()
            .values()
            .iter()
            .map(|&v| {
                #[allow(clippy::cast_sign_loss)]
                if v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0 {
                    Ok(v as u64)
                } else {
                    Err(bad())
                }
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "the `row` column has type {other}, expected uint64"
            ));
        }
    })
}

fn list_values(a: &dyn Array, i: usize, id: u64) -> Result<Vec<f64>, String> {
    let inner: ArrayRef = match a.data_type() {
        DataType::FixedSizeList(..) => a.as_fixed_size_list().value(i),
        DataType::List(_) => a.as_list::<i32>().value(i),
        DataType::LargeList(_) => a.as_list::<i64>().value(i),
        other => {
            return Err(format!(
                "the `output` column has type {other}, expected a list of float64"
            ));
        }
    };
    let f = inner
        .as_primitive_opt::<Float64Type>()
        .ok_or("the `output` lists must hold float64 values")?;
    if f.null_count() > 0 {
        return Err(format!("row {id}: null inside the output list"));
    }
    Ok(f.values().to_vec())
}
