#!/usr/bin/env python3
"""Side-by-side timing of dpinfer-distances (criterion, every runtime-dispatch level) and the
numpy/scipy equivalent, alternating in the same run, printing ratios. Both sides single-threaded
(the Rust benches are; numpy's BLAS/OpenMP pools are pinned to one thread below).

Usage (from the repository root, numpy + scipy in the interpreter):
    python3 crates/distances/bench/side_by_side.py [ROUNDS]

Each round times numpy on every job, then runs the criterion benches of the same jobs; the
ratio numpy/ours is taken per round (same minute) and the table shows the median and range over
rounds. On a shared machine only such same-run ratios are meaningful.
"""
import os

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"

import re
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
from scipy.spatial.distance import cdist, pdist

rng = np.random.default_rng(42)


def best_median(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3  # ms


def gauss(a, b, l):
    return np.exp(-cdist(a, b, "sqeuclidean") / (2 * l * l))


def numpy_jobs():
    """name of the criterion group -> (function, repetitions)."""
    jobs = {}
    x1 = rng.normal(size=(5000, 1))
    y1 = rng.normal(size=(5000, 1)) + 0.3
    kxx1 = gauss(x1, x1, 1.0).mean()
    jobs["mmd2_biased_free_1d_n5000"] = (
        lambda: gauss(x1, x1, 1.0).mean() + gauss(y1, y1, 1.0).mean() - 2 * gauss(x1, y1, 1.0).mean(),
        3,
    )
    jobs["mmd_reference_1d_n5000"] = (
        lambda: np.sqrt(max(kxx1 + gauss(y1, y1, 1.0).mean() - 2 * gauss(x1, y1, 1.0).mean(), 0)),
        3,
    )
    x5 = rng.normal(size=(1000, 5))
    y5 = rng.normal(size=(1000, 5)) + 0.2
    kxx5 = gauss(x5, x5, 2.0).mean()
    jobs["mmd_reference_5d_n1000"] = (
        lambda: np.sqrt(max(kxx5 + gauss(y5, y5, 2.0).mean() - 2 * gauss(x5, y5, 2.0).mean(), 0)),
        10,
    )
    x = rng.normal(size=5000)
    y = rng.normal(size=5000) + 0.5
    w = rng.normal(size=50)
    s = np.sqrt(2 / 100)

    def emb1(v):
        p = np.outer(v, w)
        return np.concatenate([np.cos(p), np.sin(p)], axis=1).mean(0) * s

    ex = emb1(x)
    jobs["rff_mmd_D100_n5000"] = (lambda: np.sqrt(((ex - emb1(y)) ** 2).sum()), 20)
    w5 = rng.normal(size=(50, 5)) / 2.0

    def emb5(v):
        p = v @ w5.T
        return np.concatenate([np.cos(p), np.sin(p)], axis=1).mean(0) * s

    ex5 = emb5(x5)
    jobs["rff_mmd_D100_5d_n1000"] = (lambda: np.sqrt(((ex5 - emb5(y5)) ** 2).sum()), 20)
    for sub in (1000, 2000):
        jobs[f"median_heuristic_n5000_sub{sub}"] = (
            lambda sub=sub: np.median(pdist(y[:sub, None])),
            5,
        )
    return jobs


UNITS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
LINE = re.compile(r"^(\S+)\s*\n?\s*time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", re.M)


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def criterion(names):
    """Criterion medians (ms) of the jobs, and the CPU share the bench process got (its CPU
    seconds over its wall seconds: ≈ 1 on an idle core, the fraction of a core under load)."""
    flt = "^(" + "|".join(re.escape(n) for n in names) + ")/"
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run(
        ["cargo", "bench", "--manifest-path", "tests/benches/Cargo.toml", "--bench", "distances",
         "--", "--warm-up-time", "1", "--measurement-time", "3", "--noplot", flt],
        check=True, capture_output=True, text=True,
    ).stdout
    share = min(1.0, (child_cpu() - c0) / (time.perf_counter() - t0))
    return {m[1]: float(m[2]) * UNITS[m[3]] for m in LINE.finditer(out)}, share


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    jobs = numpy_jobs()
    ratios, ours, peer, shares, cpu = {}, {}, {}, [], {}
    for r in range(rounds):
        npt = {k: best_median(f, reps) for k, (f, reps) in jobs.items()}
        rs, share = criterion(list(jobs))
        shares.append(share)
        for name, t in rs.items():
            group = name.split("/")[0]
            ours.setdefault(name, []).append(t)
            cpu.setdefault(name, []).append(t * share)
            peer.setdefault(group, []).append(npt[group])
            ratios.setdefault(name, []).append(npt[group] / t)
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    print(f"load average at the end: {open('/proc/loadavg').read().split()[:3]}; CPU share of "
          f"the bench process per round: {', '.join(f'{x:.2f}' for x in shares)}")
    print("| job / dispatch level | dpinfer (median ms) | × CPU share (≈ idle ms) | numpy/scipy (ms) "
          "| numpy ÷ dpinfer |")
    print("|---|---|---|---|---|")
    for name in sorted(ours):
        group = name.split("/")[0]
        rr = ratios[name]
        print(f"| {name} | {statistics.median(ours[name]):.3f} "
              f"({min(ours[name]):.3f}–{max(ours[name]):.3f}) | "
              f"{statistics.median(cpu[name]):.3f} | "
              f"{statistics.median(peer[group]):.3f} | {statistics.median(rr):.2f}× "
              f"({min(rr):.2f}–{max(rr):.2f}) |")


if __name__ == "__main__":
    main()
