#!/usr/bin/env python3
"""Per-row overhead of dpinfer's external-simulator protocol against ELFI and pyabc running the
same trivial numpy simulator (bench_worker.py: y = mu + 10 standard normals, vectorised).

Usage (numbers in crates/workers/README.md, "Overhead"):
    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install elfi pyabc numpy pyarrow
    cargo build --release -p dpinfer-cli --example worker_gaussian
    /tmp/peers/bin/python crates/workers/scripts/bench_external.py target/release/dpinfer \
        [target/release/examples/worker_gaussian] [N]

With the compiled worker it also runs the same rows through the compiled Rust worker and
through the built-in gaussian-mean model in-process (its prior overridden to the same
uniform): the difference per row is the protocol's own cost (Arrow IPC both ways, pipes,
batching), without Python. N (default 10^6) is the number of simulations per tool.

Reports simulations per second (best of 3) for: the simulator called directly from Python in
batches (the floor), dpinfer `simulate` with 1 and 2 workers (batch 1000, whole public step:
prior draws, protocol, shard file), ELFI rejection (batch_size 1000, quantile 1 so every
simulation is kept), and pyabc (one ABCSMC generation, acceptance of everything).
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_worker  # noqa: E402

K = 10
N_DPINFER = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
N_ELFI = N_DPINFER
N_PYABC = 2_000


def best(f, reps=3):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def direct():
    rng = np.random.default_rng(1)
    for s in range(0, N_ELFI, 1000):
        mu = rng.uniform(-3, 3, 1000)
        bench_worker.simulate(mu, np.arange(s, s + 1000, dtype=np.uint64), K)


def dpinfer(binary, threads, d, command=None):
    """`dpinfer simulate` of the whole table; command: the worker's argv (default: the numpy
    worker), or "builtin" for the in-process gaussian-mean model."""
    cfg = os.path.join(d, "bench.toml")
    with open(os.path.join(d, "obs.csv"), "w") as f:
        f.write("\n".join("0.5" for _ in range(K)))
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_worker.py")
    command = command or [sys.executable, worker]
    model = (
        'name = "gaussian-mean"\n'
        if command == "builtin"
        else f'name = "bench"\nkind = "command"\ncommand = {command!r}\noutputs = {K}\nbatch = 1000\n'
    )
    with open(cfg, "w") as f:
        f.write(f"""[model]
{model}[[model.prior]]
name = "mu"
dist = "uniform"
lo = -3.0
hi = 3.0
[data]
path = "obs.csv"
[distance]
kind = "l2"
[sampler]
kind = "rejection"
pairs = {N_DPINFER}
""".replace("'", '"'))
    out = os.path.join(d, f"s{threads}-{time.monotonic_ns()}")
    subprocess.run([binary, "simulate", cfg, "--shard", "0", "--shards", "1", "--out", out,
                    "--threads", str(threads)], check=True, capture_output=True)


def elfi_run():
    import elfi

    m = elfi.new_model()
    mu = elfi.Prior("uniform", -3, 6, model=m)

    def sim(mu, batch_size=1, random_state=None):
        seeds = random_state.randint(0, 2**31, size=batch_size).astype(np.uint64)
        return bench_worker.simulate(np.atleast_1d(mu), seeds, K)

    y = elfi.Simulator(sim, mu, observed=np.full((1, K), 0.5), model=m)
    d = elfi.Distance("euclidean", y, model=m)
    rej = elfi.Rejection(d, batch_size=1000, seed=1)
    rej.sample(N_ELFI, quantile=1.0)


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
    binary = os.path.abspath(sys.argv[1])
    rust_worker = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    print(f"machine: {machine()}; N = {N_DPINFER}")
    with tempfile.TemporaryDirectory() as d:
        rows = []
        if rust_worker:
            tb = best(lambda: dpinfer(binary, 1, d, "builtin"))
            rows.append(("dpinfer simulate, built-in gaussian-mean in-process", N_DPINFER / tb))
            for w in (1, 2):
                tw = best(lambda: dpinfer(binary, w, d, [rust_worker]))
                rows.append((f"dpinfer simulate, compiled Rust worker, {w} worker(s)", N_DPINFER / tw))
                if w == 1:
                    print(f"protocol cost per row (Rust worker - built-in, 1 worker): "
                          f"{(tw - tb) / N_DPINFER * 1e6:.2f} us")
        t = best(lambda: subprocess.run([sys.executable, "-c", "import numpy, pyarrow.ipc"], check=True))
        print(f"python startup with numpy + pyarrow: {t:.2f} s (paid once per worker)")
        t = best(direct)
        rows.append(("numpy simulator called directly (floor)", N_ELFI / t))
        for w in (1, 2):
            t = best(lambda: dpinfer(binary, w, d))
            rows.append((f"dpinfer simulate, {w} worker(s)", N_DPINFER / t))
        t = best(elfi_run)
        rows.append(("ELFI 0.8 Rejection, batch_size 1000", N_ELFI / t))
        t = best(lambda: pyabc_run(d), reps=1)
        rows.append(("pyabc ABCSMC, 1 generation, single core", N_PYABC / t))
        for name, r in rows:
            print(f"| {name} | {r:,.0f} |")
    print(f"after: {machine()}")


if __name__ == "__main__":
    main()
