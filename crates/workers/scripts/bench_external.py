#!/usr/bin/env python3
"""Per-row overhead of dpinfer's worker pool (dpinfer-workers) against ELFI and pyabc running the
same trivial numpy simulator (bench_worker.py: y = mu + 10 standard normals, vectorised over the
batch, each row from its own seed), all in the same run, at 2*10^5 and 10^6 simulations.

Usage (numbers in crates/workers/README.md, "Overhead"):
    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install elfi==0.8.8 pyabc==0.13.0 numpy pyarrow
    cargo build --release -p dpinfer-workers --example bench_pool --example worker_gaussian
    /tmp/peers/bin/python crates/workers/scripts/bench_external.py \
        target/release/examples/bench_pool [target/release/examples/worker_gaussian] [N ...]

dpinfer rows: examples/bench_pool.rs computes the public pairs table through the pool
(`PublicPairs::simulate` + `CommandSimulator`: theta draws, per-row seeds, Arrow IPC both ways,
answer checks), from starting the pool to the last answer, so worker start-up is included;
batches of 1000 rows (ELFI's batch_size). "1 in flight" is the pool before pipelining (a worker
waits while the pool decodes its answer and sends the next request), "2 in flight" the default.
With the compiled Rust worker (same rows, no Python) the difference to the Python worker is
Python's share. ELFI: Rejection with batch_size 1000 and quantile 1 (every simulation kept).
pyabc: one ABCSMC generation of 2000 particles on the single-core sampler (it calls the model
once per particle, so it is timed at 2000 only). Simulations per second, best of `REPS`.
"""
import contextlib
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_worker  # noqa: E402

K = 10
BATCH = 1000
N_PYABC = 2_000
REPS = 3


def best(f, reps=REPS):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def direct(n):
    rng = np.random.default_rng(1)
    for s in range(0, n, BATCH):
        mu = rng.uniform(-3, 3, BATCH)
        bench_worker.simulate(mu, np.arange(s, s + BATCH, dtype=np.uint64), K)


def pool(bench, n, workers, in_flight, command):
    """Seconds of one pool run and the start-up of one worker, from bench_pool's line."""
    out = subprocess.run(
        [bench, str(n), str(workers), str(BATCH), str(in_flight), str(K)] + command,
        check=True, capture_output=True, text=True,
    ).stdout
    kv = dict(f.split("=") for f in out.split() if "=" in f)
    return float(kv["seconds"]), float(kv["startup_s"]), float(kv["pool_cpu_us"]), float(kv["worker_cpu_us"])


def best_pool(bench, n, workers, in_flight, command):
    """Best wall time, start-up and the CPU per row (pool, workers) of the best run."""
    runs = [pool(bench, n, workers, in_flight, command) for _ in range(REPS)]
    fastest = min(runs)
    return fastest[0], min(r[1] for r in runs), fastest[2], fastest[3]


def elfi_run(n):
    import elfi

    m = elfi.new_model()
    mu = elfi.Prior("uniform", -3, 6, model=m)

    def sim(mu, batch_size=1, random_state=None):
        seeds = random_state.randint(0, 2**31, size=batch_size).astype(np.uint64)
        return bench_worker.simulate(np.atleast_1d(mu), seeds, K)

    y = elfi.Simulator(sim, mu, observed=np.full((1, K), 0.5), model=m)
    d = elfi.Distance("euclidean", y, model=m)
    rej = elfi.Rejection(d, batch_size=BATCH, seed=1)
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):  # its progress bar
        rej.sample(n, quantile=1.0)


def pyabc_run(d):
    import logging

    import pyabc

    logging.getLogger().setLevel(logging.ERROR)
    for name in ("ABC", "Sampler", "History", "Epsilon", "Distance", "Acceptor"):
        logging.getLogger(name).setLevel(logging.ERROR)

    def model(p):
        s = np.array([np.random.randint(0, 2**31)], dtype=np.uint64)
        return {"y": bench_worker.simulate(np.array([p["mu"]]), s, K)[0]}

    prior = pyabc.Distribution(mu=pyabc.RV("uniform", -3, 6))
    abc = pyabc.ABCSMC(model, prior, lambda a, b: 0.0, population_size=N_PYABC,
                       sampler=pyabc.sampler.SingleCoreSampler())
    db = "sqlite:///" + os.path.join(d, f"pyabc-{time.monotonic_ns()}.db")
    abc.new(db, {"y": np.full(K, 0.5)})
    abc.run(max_nr_populations=1)


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.1f}"


def main():
    bench = os.path.abspath(sys.argv[1])
    rust_worker = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    sizes = [int(a) for a in sys.argv[3:]] or [200_000, 1_000_000]
    py_worker = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_worker.py")]
    print(f"before: {machine()}")
    t = best(lambda: subprocess.run([sys.executable, "-c", "import numpy, pyarrow.ipc"], check=True))
    print(f"python start-up with numpy + pyarrow: {t:.3f} s (paid once per worker)")
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            rows = [("numpy simulator called directly (floor)", n / best(lambda: direct(n)))]
            startup = None
            cpu = []
            for workers, in_flight in ((1, 1), (1, 2), (2, 2)):
                sec, st, pc, wc = best_pool(bench, n, workers, in_flight, py_worker)
                startup = st if startup is None else min(startup, st)
                name = f"dpinfer pool, numpy worker, {workers} worker(s), {in_flight} in flight"
                rows.append((name, n / sec))
                cpu.append((name, pc, wc))
            if rust_worker:
                for workers in (1, 2):
                    sec, _, pc, wc = best_pool(bench, n, workers, 2, [rust_worker])
                    name = f"dpinfer pool, compiled Rust worker, {workers} worker(s)"
                    rows.append((name, n / sec))
                    cpu.append((name, pc, wc))
            ip = subprocess.run([bench, str(n), "1", str(BATCH), "2", str(K), "--in-process"],
                                check=True, capture_output=True, text=True).stdout
            ip = dict(f.split("=") for f in ip.split() if "=" in f)
            cpu.append(("the same table in-process (Rust model, no pool)", float(ip["cpu_us"]), 0.0))
            elfi = n / best(lambda: elfi_run(n))
            rows.append(("ELFI 0.8.8 Rejection, batch_size 1000", elfi))
            if n == sizes[0]:
                rows.append((f"pyabc 0.13.0 ABCSMC, {N_PYABC} simulations, single core",
                             N_PYABC / best(lambda: pyabc_run(d), reps=1)))
            print(f"\nN = {n:,}: pool start-up (spawn + imports + first answer) {startup:.3f} s")
            print("| | simulations/s | / ELFI |")
            print("|---|---|---|")
            for name, r in rows:
                print(f"| {name} | {r:,.0f} | {r / elfi:.2f}x |")
            print("\n| CPU per row (µs) | pool process | worker processes |")
            print("|---|---|---|")
            for name, pc, wc in cpu:
                print(f"| {name} | {pc:.2f} | {wc:.2f} |")
    print(f"\nafter: {machine()}")


if __name__ == "__main__":
    main()
