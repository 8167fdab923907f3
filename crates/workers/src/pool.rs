//! The worker pool: long-lived processes, one request stream and one answer stream each,
//! up to [`PoolSettings::in_flight`] batches in flight per worker, timeouts, retries on fresh
//! workers, and the stderr tail of a failed worker.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{Schema, SchemaRef};

use crate::error::{Failure, Fault, FaultKind, WorkerError};
use crate::ipc::CheckedStream;
use crate::protocol::{
    Answer, Request, parse_answer, request_batch, request_schema, summarise_schema,
};

/// Lines of a worker's stderr kept for error messages.
pub const STDERR_LINES: usize = 20;
/// Bytes of stray stdout output kept to show in a "not Arrow" error.
const STRAY_BYTES: usize = 64;

/// How to run an external simulator.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolSettings {
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// Working directory of the workers.
    pub dir: PathBuf,
    /// Parameter names (request columns), in θ order.
    pub param_names: Vec<String>,
    /// Values per simulation.
    pub outputs: usize,
    /// Rows per request batch, at most; a call's rows are split into equal batches (never
    /// changes a number).
    pub batch: usize,
    /// Time a worker may take to answer one batch.
    pub timeout: Duration,
    /// Retries of a failed batch, each on a fresh worker.
    pub retries: u32,
    /// Extra environment variables of the workers (e.g. `OMP_NUM_THREADS = 1` for numpy
    /// workers that should not start a thread per core each); `DPINFER_WORKER` is always set.
    pub env: Vec<(String, String)>,
    /// Request batches a worker may have in flight (1 or 2): with 2 the next request is
    /// written before the current answer is read, so the worker never waits for the pool
    /// to decode an answer. Never changes a number.
    pub in_flight: usize,
}

impl PoolSettings {
    /// Settings with the defaults: in the current directory, batches of 64 rows, a 60 s
    /// timeout, 2 retries, 2 batches in flight per worker.
    #[must_use]
    pub fn new(command: Vec<String>, param_names: Vec<String>, outputs: usize) -> Self {
        Self {
            command,
            dir: PathBuf::from("."),
            param_names,
            outputs,
            batch: 64,
            timeout: Duration::from_secs(60),
            retries: 2,
            env: Vec::new(),
            in_flight: 2,
        }
    }
}

/// A pool of worker processes; idle workers are kept for the next call and stopped (stdin
/// closed, then killed if they do not exit) when the pool is dropped.
pub struct Pool {
    settings: PoolSettings,
    request_schema: SchemaRef,
    idle: Mutex<Vec<Worker>>,
    spawned: AtomicUsize,
}

impl core::fmt::Debug for Pool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
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
    answers: Receiver<Result<RecordBatch, (FaultKind, String)>>,
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

impl<R: Read> Read for Capture<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Ok(mut s) = self.seen.lock()
            && s.len() < STRAY_BYTES
        {
            let take = n.min(STRAY_BYTES - s.len());
            s.extend_from_slice(&buf[..take]);
        }
        Ok(n)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing stdin lets a well-behaved worker exit; whether or not it did, what it
        // started is stopped with its group.
        self.requests = None;
        for _ in 0..20 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        kill_group(&mut self.child);
        let _ = self.child.wait();
    }
}

/// Stops a worker and every process it started. On Unix each worker leads its own process
/// group (`process_group(0)` at spawn), so a child it forked (a `multiprocessing` helper, a
/// shell's `sleep &`) that still holds its pipes is in the group: the whole group gets
/// SIGKILL. The standard library has no group kill and `unsafe` is forbidden here (no
/// `libc::killpg`), so this runs the system's `kill -KILL -- -PGID`; where that program is
/// missing, the worker alone is killed ([`Child::kill`]). Called when a worker is dropped
/// (after a moment for a worker whose stdin was closed to exit by itself: its children are
/// stopped even when it exited cleanly) and at a timeout. The group id is the worker's
/// PID, which the OS does not reuse while any process of the group lives.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
}

/// A chunk of the requests: its index in the call and its rows.
type Chunk<'a> = (usize, &'a [Request]);

impl Pool {
    /// A pool for `settings` (no process is started until the first batch or
    /// [`Pool::start`]).
    ///
    /// # Errors
    /// [`WorkerError::InvalidSettings`]: an empty command, no parameters, zero outputs or
    /// batch size, `in_flight` not 1 or 2, a zero timeout, a parameter named `row` or `seed`,
    /// an empty or repeated name.
    pub fn new(settings: PoolSettings) -> Result<Self, WorkerError> {
        let invalid = |name, reason: &str| WorkerError::InvalidSettings {
            name,
            reason: reason.to_string(),
        };
        if settings.command.first().is_none_or(String::is_empty) {
            return Err(invalid(
                "command",
                "model.command must name a program, e.g. [\"python3\", \"sim.py\"]",
            ));
        }
        if settings.param_names.is_empty() {
            return Err(invalid(
                "param_names",
                "a command model needs at least one [[model.prior]] parameter",
            ));
        }
        if settings.outputs == 0 || settings.batch == 0 {
            return Err(invalid(
                "outputs",
                "model.outputs and model.batch must be positive",
            ));
        }
        if !(1..=2).contains(&settings.in_flight) {
            return Err(invalid("in_flight", "in_flight must be 1 or 2"));
        }
        if settings.timeout.is_zero() {
            return Err(invalid("timeout", "the timeout must be positive"));
        }
        let request_schema =
            request_schema(&settings.param_names, settings.outputs).map_err(|reason| {
                WorkerError::InvalidSettings {
                    name: "param_names",
                    reason,
                }
            })?;
        Ok(Self {
            request_schema,
            settings,
            idle: Mutex::new(Vec::new()),
            spawned: AtomicUsize::new(0),
        })
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &PoolSettings {
        &self.settings
    }

    /// Worker processes started so far (including replacements of failed ones).
    #[must_use]
    pub fn started(&self) -> usize {
        self.spawned.load(Ordering::Relaxed)
    }

    /// Starts idle workers until `workers` are idle, without waiting for them to be ready:
    /// their start-up (e.g. `import numpy, pyarrow`) then overlaps whatever the caller does
    /// next (drawing θ). Optional: [`Pool::run`] starts the workers it needs.
    ///
    /// # Errors
    /// [`WorkerError::Spawn`].
    pub fn start(&self, workers: usize) -> Result<(), WorkerError> {
        let have = self.idle.lock().map_or(0, |i| i.len());
        let mut fresh = Vec::new();
        for _ in have..workers {
            fresh.push(self.spawn()?);
        }
        if let Ok(mut idle) = self.idle.lock() {
            idle.extend(fresh);
        }
        Ok(())
    }

    /// Simulates every request with up to `workers` processes in parallel (equal batches of
    /// at most `settings.batch` rows, a multiple of `workers` of them where possible); answers are in request order, and do not depend on `workers`,
    /// the batch size or which worker ran a row (each row carries its own seed).
    ///
    /// # Errors
    /// [`WorkerError::ThetaLength`]; [`WorkerError::Spawn`]; [`WorkerError::Failed`]: a batch
    /// that failed `retries + 1` times on fresh workers, with the row that then failed alone,
    /// the fault and the worker's stderr tail.
    pub fn run(&self, requests: &[Request], workers: usize) -> Result<Vec<Answer>, WorkerError> {
        let d = self.settings.param_names.len();
        if let Some(r) = requests.iter().find(|r| r.theta.len() != d) {
            return Err(WorkerError::ThetaLength {
                row: r.row,
                expected: d,
                got: r.theta.len(),
            });
        }
        // Batches of equal size, at most `batch` rows, and a multiple of `workers` of them
        // where the rows allow (4096 rows in batches of at most 1000 on 2 workers are 6 × 683
        // rather than 4 × 1000 + 96): no short batch whose fixed cost is paid for a few rows,
        // and no worker left with one more batch than the others at the end of the call.
        // Never changes a number.
        let n = requests.len();
        let w = workers.max(1);
        let count = n
            .div_ceil(self.settings.batch)
            .div_ceil(w)
            .saturating_mul(w)
            .clamp(1, n.max(1));
        let chunks: Vec<&[Request]> = requests.chunks(n.div_ceil(count).max(1)).collect();
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let results: Mutex<Vec<Option<Vec<Answer>>>> = Mutex::new(vec![None; chunks.len()]);
        let first_error: Mutex<Option<WorkerError>> = Mutex::new(None);
        let threads = workers.clamp(1, chunks.len().max(1));
        let take = || {
            if failed.load(Ordering::Relaxed) {
                return None;
            }
            let k = next.fetch_add(1, Ordering::Relaxed);
            chunks.get(k).map(|c| (k, *c))
        };
        let done = |k: usize, a: Vec<Answer>| {
            if let Ok(mut r) = results.lock() {
                r[k] = Some(a);
            }
        };
        let fail = |e: WorkerError| {
            failed.store(true, Ordering::Relaxed);
            if let Ok(mut f) = first_error.lock()
                && f.is_none()
            {
                *f = Some(e);
            }
        };
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    let mut worker = None;
                    // The last line of defence: a panic in this thread (none is known: every
                    // answer is checked before arrow decodes it) fails the call with a typed
                    // error instead of unwinding through the scope into the caller. Its
                    // worker is then dropped (killed), never reused.
                    let driven = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        self.drive(&mut worker, &take, &done)
                    }));
                    match driven {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => fail(e),
                        Err(_) => {
                            worker = None;
                            fail(WorkerError::Panicked);
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
        for r in results.into_inner().map_err(|_| WorkerError::Panicked)? {
            out.extend(r.ok_or(WorkerError::Panicked)?);
        }
        Ok(out)
    }

    /// One pool thread: keeps up to `in_flight` chunks on its worker, reads answers in order,
    /// and on a fault hands the failed chunk to [`Pool::retry`] and re-sends the chunks that
    /// were queued behind it on a fresh worker (they did not fail: no attempt is counted).
    fn drive<'a>(
        &self,
        worker: &mut Option<Worker>,
        take: &(dyn Fn() -> Option<Chunk<'a>> + Sync),
        done: &(dyn Fn(usize, Vec<Answer>) + Sync),
    ) -> Result<(), WorkerError> {
        let mut inflight: VecDeque<Chunk<'a>> = VecDeque::new();
        let mut resend: VecDeque<Chunk<'a>> = VecDeque::new();
        loop {
            while inflight.len() < self.settings.in_flight {
                let Some(c) = resend.pop_front().or_else(take) else {
                    break;
                };
                let w = self.worker(worker)?;
                match self.send(w, c.1) {
                    Ok(()) => inflight.push_back(c),
                    Err(f) => {
                        *worker = None;
                        // Everything already sent to this worker is lost with it.
                        let lost: Vec<Chunk<'a>> = inflight.drain(..).collect();
                        let (first, rest) = match lost.split_first() {
                            Some((first, rest)) => (*first, [rest, &[c]].concat()),
                            None => (c, Vec::new()),
                        };
                        done(first.0, self.retry(worker, first.1, f)?);
                        resend.extend(rest);
                    }
                }
            }
            let Some(c) = inflight.pop_front() else {
                return Ok(());
            };
            let w = self.worker(worker)?;
            match self.receive(w, c.1) {
                Ok(a) => done(c.0, a),
                Err(f) => {
                    *worker = None;
                    resend.extend(inflight.drain(..));
                    done(c.0, self.retry(worker, c.1, f)?);
                }
            }
        }
    }

    /// The thread's worker: its own, an idle one, or a fresh one.
    fn worker<'w>(&self, worker: &'w mut Option<Worker>) -> Result<&'w mut Worker, WorkerError> {
        if worker.is_none() {
            let taken = self.idle.lock().ok().and_then(|mut i| i.pop());
            *worker = Some(match taken {
                Some(w) => w,
                None => self.spawn()?,
            });
        }
        worker.as_mut().ok_or(WorkerError::Panicked)
    }

    /// After `first` (the fault of the first attempt): `retries` more attempts, each on a
    /// fresh worker with nothing else in flight; then, for a batch of several rows, its rows
    /// one at a time (one attempt each, a fresh worker after a failure). Answers are per row,
    /// so if every row succeeds alone the batch is recovered; otherwise the first failing row
    /// is named.
    fn retry(
        &self,
        worker: &mut Option<Worker>,
        chunk: &[Request],
        first: Fault,
    ) -> Result<Vec<Answer>, WorkerError> {
        let mut last = first;
        for _ in 0..self.settings.retries {
            *worker = Some(self.spawn()?);
            let w = self.worker(worker)?;
            match self.batch(w, chunk) {
                Ok(a) => return Ok(a),
                Err(f) => {
                    *worker = None;
                    last = f;
                }
            }
        }
        let attempts = self.settings.retries + 1;
        let mut row = None;
        if chunk.len() > 1 {
            let mut answers = Vec::with_capacity(chunk.len());
            for r in chunk {
                let w = self.worker(worker)?;
                match self.batch(w, core::slice::from_ref(r)) {
                    Ok(a) => answers.extend(a),
                    Err(f) => {
                        *worker = None;
                        row = Some(r.row);
                        last = f;
                        break;
                    }
                }
            }
            if row.is_none() {
                return Ok(answers);
            }
        }
        Err(WorkerError::Failed(Box::new(Failure {
            command: self.settings.command.join(" "),
            batch: chunk.iter().map(|r| r.row).collect(),
            row,
            attempts,
            fault: last,
        })))
    }

    fn spawn(&self) -> Result<Worker, WorkerError> {
        self.spawn_for(&self.request_schema, None)
    }

    /// Summarises the observed data with the user's program, by the same function it applies
    /// to its simulations (protocol v1's summarise request): one fresh worker, started with
    /// `DPINFER_REQUEST=summarise` in its environment, reads a request stream whose schema
    /// has the metadata `dpinfer.request = "summarise"` and the columns `row` (`uint64`) and
    /// `data` (`list<float64>`), gets one batch of one row (row 0, the data's values in
    /// order) and answers it like a simulation: `row`, `output` with `outputs` finite
    /// values. One attempt, within the timeout; the worker is then stopped.
    ///
    /// # Errors
    /// [`WorkerError::Spawn`]; [`WorkerError::Failed`] (row 0, one attempt) for any fault of
    /// that worker, an answer that breaks the protocol or a `reject` of the data.
    pub fn summarise(&self, data: &[f64]) -> Result<Vec<f64>, WorkerError> {
        use arrow_array::{ArrayRef, ListArray, UInt64Array};
        let failed = |fault: Fault| {
            WorkerError::Failed(Box::new(Failure {
                command: self.settings.command.join(" "),
                batch: vec![0],
                row: None,
                attempts: 1,
                fault,
            }))
        };
        let schema = summarise_schema(self.settings.outputs);
        let mut w = self.spawn_for(&schema, Some(("DPINFER_REQUEST", "summarise")))?;
        let list = ListArray::from_iter_primitive::<arrow_array::types::Float64Type, _, _>(
            core::iter::once(Some(data.iter().copied().map(Some))),
        );
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(UInt64Array::from(vec![0_u64])) as ArrayRef,
                Arc::new(list) as ArrayRef,
            ],
        )
        .map_err(|e| {
            failed(Self::fault(
                &mut w,
                FaultKind::Request,
                format!("cannot build the summarise request: {e}"),
            ))
        })?;
        let sent = w.requests.as_ref().is_some_and(|tx| tx.send(batch).is_ok());
        if !sent {
            return Err(failed(Self::fault(
                &mut w,
                FaultKind::StdinClosed,
                "the worker stopped reading its stdin".into(),
            )));
        }
        let row = [Request {
            row: 0,
            seed: 0,
            theta: Vec::new(),
        }];
        match self.receive(&mut w, &row).map_err(failed)?.pop() {
            Some(Answer::Output(v)) => Ok(v),
            _ => Err(failed(Self::fault(
                &mut w,
                FaultKind::BadAnswer,
                "the worker rejected the observed data (reject = true)".into(),
            ))),
        }
    }

    /// Starts a worker whose request stream has `schema`, with `extra` in its environment.
    fn spawn_for(
        &self,
        schema: &SchemaRef,
        extra: Option<(&str, &str)>,
    ) -> Result<Worker, WorkerError> {
        let id = self.spawned.fetch_add(1, Ordering::Relaxed);
        let cmd = &self.settings.command;
        let spawn_error = |source| WorkerError::Spawn {
            command: cmd.join(" "),
            dir: self.settings.dir.clone(),
            source,
        };
        let mut command = Command::new(&cmd[0]);
        // Its own process group, so that stopping it stops everything it started.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .args(&cmd[1..])
            .current_dir(&self.settings.dir)
            .envs(self.settings.env.iter().map(|(k, v)| (k, v)))
            .env("DPINFER_WORKER", id.to_string())
            .envs(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_error)?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_group(&mut child);
            let _ = child.wait();
            return Err(spawn_error(std::io::Error::other("no pipes to the worker")));
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
        let (req_tx, req_rx) = mpsc::sync_channel::<RecordBatch>(self.settings.in_flight);
        let schema = Arc::clone(schema);
        std::thread::spawn(move || write_requests(stdin, &schema, &req_rx));
        let (ans_tx, ans_rx) = mpsc::sync_channel(self.settings.in_flight);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = Arc::clone(&seen);
        let seen3 = Arc::clone(&seen);
        let max_body = self.max_answer_bytes();
        std::thread::spawn(move || {
            // The capture sits above the buffer, so it sees exactly the bytes the decoder
            // consumed: after a complete message, what it holds is the next message's start.
            let stdout = Capture {
                inner: BufReader::new(stdout),
                seen: seen2,
            };
            // The last line of defence: a panic while decoding (none is known: every message
            // is checked first) is a fault of this worker, not a dead thread.
            let tx = ans_tx.clone();
            let read = std::panic::catch_unwind(AssertUnwindSafe(move || {
                let reader = match CheckedStream::try_new(stdout, max_body) {
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
                let mut reader = reader;
                while let Some(b) = reader.next() {
                    let b = match b {
                        Ok(b) => {
                            // A complete message: what follows it is the next message's start.
                            if let Ok(mut s) = seen3.lock() {
                                s.clear();
                            }
                            Ok(b)
                        }
                        Err(e) => {
                            // Text instead of a message (a `print` to stdout): one more read
                            // (buffered bytes, normally) so the error can show what it was.
                            let mut more = [0u8; STRAY_BYTES];
                            let _ = reader.get_mut().read(&mut more);
                            let stray = seen3.lock().map(|s| s.clone()).unwrap_or_default();
                            Err(stray_message(&stray).unwrap_or_else(|| describe_read_error(&e)))
                        }
                    };
                    let stop = b.is_err();
                    if ans_tx.send(b).is_err() || stop {
                        return;
                    }
                }
                let _ = ans_tx.send(Err((
                    FaultKind::Closed,
                    "the worker closed its stdout".into(),
                )));
            }));
            if read.is_err() {
                let _ = tx.send(Err((
                    FaultKind::NotArrow,
                    "the worker's answer could not be decoded".into(),
                )));
            }
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

    /// The largest answer message body accepted: 16 bytes per value of a full batch (the
    /// answer's own layout needs about 8 per value and 13 per row) plus 64 MiB, so a worker
    /// that declares a longer body is a fault before anything is allocated for it.
    fn max_answer_bytes(&self) -> u64 {
        let per_row = (self.settings.outputs as u64).saturating_add(8);
        (self.settings.batch as u64)
            .saturating_mul(per_row)
            .saturating_mul(16)
            .saturating_add(64 << 20)
    }

    /// A fault of worker `w`: its exit status (after a moment for its last words on stderr)
    /// and its stderr tail.
    fn fault(w: &mut Worker, kind: FaultKind, message: String) -> Fault {
        Fault {
            kind,
            message,
            worker: w.id,
            exit: wait_exit(&mut w.child, Duration::from_millis(200)),
            stderr_tail: w
                .stderr
                .lock()
                .map(|t| t.iter().cloned().collect())
                .unwrap_or_default(),
        }
    }

    /// One attempt with nothing else in flight.
    fn batch(&self, w: &mut Worker, chunk: &[Request]) -> Result<Vec<Answer>, Fault> {
        self.send(w, chunk)?;
        self.receive(w, chunk)
    }

    /// Writes the request batch of `chunk` to `w` (through its writer thread).
    fn send(&self, w: &mut Worker, chunk: &[Request]) -> Result<(), Fault> {
        let batch =
            match request_batch(&self.request_schema, self.settings.param_names.len(), chunk) {
                Ok(b) => b,
                Err(e) => {
                    return Err(Self::fault(
                        w,
                        FaultKind::Request,
                        format!("cannot build the request: {e}"),
                    ));
                }
            };
        let sent = w.requests.as_ref().is_some_and(|tx| tx.send(batch).is_ok());
        if sent {
            Ok(())
        } else {
            Err(Self::fault(
                w,
                FaultKind::StdinClosed,
                "the worker stopped reading its stdin".into(),
            ))
        }
    }

    /// Reads and checks `w`'s answer to `chunk` (its oldest request in flight).
    fn receive(&self, w: &mut Worker, chunk: &[Request]) -> Result<Vec<Answer>, Fault> {
        let answer = match w.answers.recv_timeout(self.settings.timeout) {
            Ok(Ok(b)) => b,
            Ok(Err((kind, e))) => return Err(Self::fault(w, kind, e)),
            Err(RecvTimeoutError::Timeout) => {
                // Read the stray bytes before the kill: the reader thread sees end-of-stream
                // once the worker is gone.
                let stray = w.unparsed.lock().map(|s| s.clone()).unwrap_or_default();
                kill_group(&mut w.child);
                if let Some((kind, message)) = stray_message(&stray) {
                    return Err(Self::fault(w, kind, message));
                }
                return Err(Self::fault(
                    w,
                    FaultKind::Timeout,
                    format!(
                        "no answer within {} s (model.timeout); the worker was killed",
                        self.settings.timeout.as_secs_f64()
                    ),
                ));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Self::fault(
                    w,
                    FaultKind::Closed,
                    "the worker closed its stdout".into(),
                ));
            }
        };
        parse_answer(&answer, chunk, self.settings.outputs)
            .map_err(|e| Self::fault(w, FaultKind::BadAnswer, e))
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

/// The fault of a worker whose stdout starts with something other than an Arrow message
/// (text from a `print`), showing what it wrote; `None` for bytes that look like a message.
fn stray_message(stray: &[u8]) -> Option<(FaultKind, String)> {
    (stray.len() >= 4 && stray[..4] != [0xff; 4]).then(|| {
        (
            FaultKind::NotArrow,
            format!(
                "the worker's stdout is not a valid Arrow IPC stream: it wrote {:?}… \
                 (stdout is reserved for the protocol; print to stderr)",
                String::from_utf8_lossy(stray)
            ),
        )
    })
}

fn describe_read_error(e: &arrow_schema::ArrowError) -> (FaultKind, String) {
    (
        FaultKind::NotArrow,
        format!("the worker's stdout is not a valid Arrow IPC stream ({e})"),
    )
}

fn wait_exit(child: &mut Child, within: Duration) -> Option<ExitStatus> {
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
