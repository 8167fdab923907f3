#!/usr/bin/env python3
"""Side-by-side timing of rejection ABC on the Gaussian-mean toy (the issue table's row): θ ~
N(0, 1), 100 observations y ~ N(θ, 1), summary ȳ, tolerance 0.05 around 0.5. dpinfer
(`examples/rejection_once.rs`: `RejectionAbc::run_parallel` with the library's `GaussianMean`,
stream version 1 = polar normals and 2 = ziggurat, rayon pools of 1 and 2 threads) against
numpy batched (blocks of 10^5 simulations, one thread), alternating in the same run. Reports
simulations per second by wall clock and by CPU time (on a loaded machine the CPU-time rate
is close to the idle-core rate).

Usage (from the repository root, numpy in the interpreter):
    cargo build --release --manifest-path tests/benches/Cargo.toml --example rejection_once
    python3 tests/benches/scripts/rejection_side_by_side.py [ROUNDS] [SIMS]
"""
import os
import statistics
import subprocess
import sys
import time

from side_by_side import arg, child_cpu, load_average, pin_numpy_threads

pin_numpy_threads()

import numpy as np  # noqa: E402 (after the thread pinning)

EXE = "tests/benches/target/release/examples/rejection_once"


def numpy_rejection(sims, seed=1, block=100_000):
    rng = np.random.default_rng(seed)
    acc = 0
    for i in range(0, sims, block):
        n = min(block, sims - i)
        theta = rng.normal(0.0, 1.0, n)
        s = theta + rng.normal(0.0, 1.0, (n, 100)).mean(axis=1)
        acc += int((np.abs(s - 0.5) <= 0.05).sum())
    return acc


def ours(threads, sims, version):
    c0 = child_cpu()
    out = subprocess.run([EXE, str(threads), str(sims), str(version)], check=True,
                         capture_output=True, text=True).stdout.split()
    return sims / float(out[2]), sims / (child_cpu() - c0)


def peer(sims):
    c0, t0 = time.process_time(), time.perf_counter()
    numpy_rejection(sims)
    return sims / (time.perf_counter() - t0), sims / (time.process_time() - c0)


def main():
    rounds = arg(1, 3)
    sims = arg(2, 1_000_000)
    runs = {"numpy": lambda: peer(sims)}
    for v in (1, 2):
        for t in (1, 2):
            runs[f"v{v} {t}t"] = (lambda v=v, t=t: ours(t, sims, v))
    res = {k: [] for k in runs}
    loads = []
    for r in range(rounds):
        loads.append(load_average())
        for k, f in runs.items():
            res[k].append(f())
        print(f"round {r + 1}/{rounds}", file=sys.stderr)
    loads.append(load_average())
    names = {"numpy": "numpy batched, 1 thread", "v1 1t": "dpinfer, polar normals (v1), 1 thread",
             "v1 2t": "dpinfer, v1, 2 threads", "v2 1t": "dpinfer, ziggurat (v2), 1 thread",
             "v2 2t": "dpinfer, v2, 2 threads"}
    print(f"Rejection ABC, Gaussian-mean toy, {sims} simulations per run, {rounds} alternating "
          f"rounds; 1-min load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    print("| run | k sims/s, wall (median) | k sims/s, CPU (median) | ÷ numpy, wall | ÷ numpy, CPU |")
    print("|---|---|---|---|---|")
    for k in runs:
        w = statistics.median(x[0] for x in res[k]) / 1e3
        c = statistics.median(x[1] for x in res[k]) / 1e3
        rw = statistics.median(a[0] / b[0] for a, b in zip(res[k], res["numpy"]))
        rc = statistics.median(a[1] / b[1] for a, b in zip(res[k], res["numpy"]))
        print(f"| {names[k]} | {w:.0f} | {c:.0f} | {rw:.2f}× | {rc:.2f}× |")


if __name__ == "__main__":
    main()
