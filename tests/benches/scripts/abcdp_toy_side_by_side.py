#!/usr/bin/env python3
"""Side-by-side timing of the ABCDP toy (the issue table's row: 10 000 simulated data sets of
5 000 points, RFF embedding each with D = 100, then SVT-ABC): dpinfer (the one-shot example
`tests/benches/examples/abcdp_toy_once.rs`, rayon pools of 1 and 2 threads) against a numpy
float32 implementation of the same pipeline, alternating in the same run.

numpy's BLAS/OpenMP pools are pinned to one thread (numpy's elementwise cos/sin are
single-threaded anyway). Both wall-clock and CPU seconds are reported: on a shared machine the
wall time of a run depends on the load, CPU seconds much less (a run's CPU seconds on one
thread is what it takes on an idle core).

Usage (from the repository root, numpy in the interpreter):
    cargo build --release --manifest-path tests/benches/Cargo.toml --example abcdp_toy_once
    python3 tests/benches/scripts/abcdp_toy_side_by_side.py [ROUNDS] [SETS]
"""
import os
import statistics
import subprocess
import sys
import time

from side_by_side import arg, child_cpu, load_average, pin_numpy_threads

pin_numpy_threads()

import numpy as np  # noqa: E402 (after the thread pinning)

EXE = "tests/benches/target/release/examples/abcdp_toy_once"
N = 5000
FREQS = 50
THETA_STAR = np.array([0.25, 0.04, 0.33, 0.04, 0.34])


def numpy_toy(sets, seed=1, batch=16):
    """Pairs (θ, μ̂(Y)) in float32 batches of sets, then SVT (Laplace noise, c = 50)."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal(FREQS) / 0.6).astype(np.float32)  # frequencies / bandwidth
    scale = np.float32(np.sqrt(2.0 / (2 * FREQS)))

    def draw(theta, size):
        cum = np.cumsum(theta, axis=-1)
        u = rng.random(size)
        comp = (u[..., None] >= cum[..., None, :-1]).sum(-1)
        return (comp + rng.random(size)).astype(np.float32)

    def embed(y):  # y: (b, N) float32 -> (b, 2F)
        p = y[..., None] * w  # (b, N, F)
        return np.concatenate([np.cos(p).mean(1), np.sin(p).mean(1)], axis=-1) * scale

    obs = draw(THETA_STAR[None, :], (1, N))
    e_obs = embed(obs)[0]
    thetas = rng.dirichlet(np.ones(5), sets)
    embs = np.empty((sets, 2 * FREQS), np.float32)
    for i in range(0, sets, batch):
        th = thetas[i:i + batch]
        embs[i:i + batch] = embed(draw(th, (len(th), N)))
    rho = np.sqrt(((embs - e_obs) ** 2).sum(1)).clip(0, 2)
    # SVT: threshold noise Lap(b), query noise Lap(2b), stop after c acceptances.
    c, eps, sens, eps_abc = 50, 1.0, 2.0 / N, 0.05
    b = (c + 1) * sens / eps
    thr = eps_abc + rng.laplace(0, b)
    acc = 0
    examined = 0
    for r in rho:
        examined += 1
        if r + rng.laplace(0, 2 * b) <= thr:
            acc += 1
            if acc >= c:
                break
    return examined, acc


def ours(threads, sets):
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run([EXE, str(threads), str(sets)], check=True, capture_output=True,
                         text=True).stdout.split()
    wall_total = time.perf_counter() - t0
    return float(out[2]), child_cpu() - c0, wall_total


def peer(sets):
    c0, t0 = time.process_time(), time.perf_counter()
    numpy_toy(sets)
    return time.perf_counter() - t0, time.process_time() - c0


def main():
    rounds = arg(1, 3)
    sets = arg(2, 10_000)
    rows = {k: [] for k in ("numpy", "ours1", "ours2")}
    loads = []
    for r in range(rounds):
        loads.append(load_average())
        rows["numpy"].append(peer(sets))
        w, cpu, _ = ours(1, sets)
        rows["ours1"].append((w, cpu))
        w, cpu, _ = ours(2, sets)
        rows["ours2"].append((w, cpu))
        print(f"round {r + 1}/{rounds}: " + ", ".join(
            f"{k} {v[-1][0]:.2f} s wall / {v[-1][1]:.2f} s cpu" for k, v in rows.items()),
            file=sys.stderr)
    loads.append(load_average())
    med = lambda k, i: statistics.median(x[i] for x in rows[k])
    print(f"ABCDP toy, {sets} sets x {N} points, D = {2 * FREQS}; {rounds} alternating rounds; "
          f"1-min load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    print("| run | wall s (median) | CPU s (median) | numpy ÷ ours, wall | numpy ÷ ours, CPU |")
    print("|---|---|---|---|---|")
    for k, name in (("numpy", "numpy float32, 1 thread"), ("ours1", "dpinfer, 1 thread"),
                    ("ours2", "dpinfer, 2 threads")):
        rw = [a[0] / b[0] for a, b in zip(rows["numpy"], rows[k])]
        rc = [a[1] / b[1] for a, b in zip(rows["numpy"], rows[k])]
        print(f"| {name} | {med(k, 0):.2f} | {med(k, 1):.2f} | {statistics.median(rw):.2f}× | "
              f"{statistics.median(rc):.2f}× |")


if __name__ == "__main__":
    main()
