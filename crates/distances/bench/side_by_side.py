#!/usr/bin/env python3
"""Side-by-side timing of dpinfer-distances (every runtime-dispatch level, both kernel
versions) and the numpy/scipy equivalent, alternating in the same run, by **CPU time of the
measuring thread** on both sides (numpy: `time.thread_time`; Rust:
`tests/benches/examples/distances_cpu.rs`, the scheduler's run time of its thread), so the
ratios hold on a loaded machine, where wall time mostly measures the other jobs. Both sides
single-threaded (numpy's BLAS/OpenMP pools are pinned to one thread below).

Usage (from the repository root, numpy + scipy in the interpreter):
    python3 crates/distances/bench/side_by_side.py [ROUNDS] [MIN_CPU_MS]
    python3 crates/distances/bench/side_by_side.py threads [ROUNDS]   # 1 vs 2 rayon threads
    python3 crates/distances/bench/side_by_side.py targets [ROUNDS]   # both, then issue 33's
                                                                      # targets table

`targets` runs ROUNDS (default 5) rounds of the single-thread jobs and of the thread
scaling, prints both tables and then one line per target of issue 33 item 3 (numpy ratio or
thread speed-up, median over rounds, per level and kernel version) with "met", "met, under
the 15 % margin" or "MISSED".

Each round times numpy on every job, then every job at every level and kernel version; ratios
are taken per round and the table shows the median (and range) over rounds. It also prints,
per job and level, the cycles per kernel (or sin/cos) value at the measured clock and the
fraction of the vector units' throughput bound reached (the operation counts and the port
model are below and in the crate README).
"""
import os

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"

import statistics
import subprocess
import sys
import time

import numpy as np
from scipy.spatial.distance import cdist

rng = np.random.default_rng(42)

# Vector operations per kernel value (Gaussian sums) or per (sin, cos) pair (RFF), counted from
# the source of each version (crates/distances/src/fastexp.rs, fastsincos.rs, kernel.rs,
# rff.rs, gram.rs): (all operations, of which multiplies). Loads, loop control and the copy
# of the 5-D rows into coordinate-major order (gram.rs: 5 moves per row of y per 64 rows of x)
# are not counted. The 5-D Gram sums add 4 squares per distance (the first is not added to 0).
# RFF counts the quadrant code as 15 integer operations on SSE2/AVX2 and 11 on AVX-512
# (bit-selects become one `vpternlogq`).
# Version 3 fuses each a·b + c of version 2's exp into one fma (counted as a multiply): 11
# operations fewer per kernel value, the same number of multiply-class operations; its
# random features are version 2's.
OPS = {
    ("gauss1", 1): (45, 20), ("gauss1", 2): (36, 16), ("gauss1", 3): (25, 16),
    ("gauss5", 1): (57, 24), ("gauss5", 2): (48, 20), ("gauss5", 3): (37, 20),
    ("rff1", 1): (61, 23), ("rff1", 2): (51, 18), ("rff1", 3): (51, 18),
    ("rff5", 1): (75, 28), ("rff5", 2): (65, 23), ("rff5", 3): (65, 23),
}
VERSIONS = (1, 2, 3)
KIND = {
    "mmd2_biased_free_1d_n5000": "gauss1", "mmd_reference_1d_n5000": "gauss1",
    "mmd_reference_5d_n1000": "gauss5", "rff_mmd_D100_n5000": "rff1",
    "rff_mmd_D100_5d_n1000": "rff5",
}
# Port model of the machine the README's figures come from (Intel Xeon, family 6 model 207,
# a Golden Cove-class core): 128/256-bit vectors issue 3 FP/integer vector operations per
# cycle (multiplies on 2 of those ports), 512-bit vectors 2 per cycle (ports 0+1 fused, 5).
LEVELS = {"portable": (2, 3, 2), "x86v3": (4, 3, 2), "x86v4": (8, 2, 2)}  # lanes, ports, mul ports
# AMD Zen 4 (the 2026-11-30 EPYC guest): four 256-bit FP pipes (two of them multiply/FMA);
# 512-bit operations issue as two halves, so half the rate with twice the lanes.
PORT_MODEL = "Intel Golden Cove"
try:
    if "AuthenticAMD" in open("/proc/cpuinfo").read():
        LEVELS = {"portable": (2, 4, 2), "x86v3": (4, 4, 2), "x86v4": (8, 2, 1)}
        PORT_MODEL = "AMD Zen 4"
except OSError:
    pass


def bound_cycles(kind, version, level):
    ops, muls = OPS[(kind, version)]
    lanes, ports, mports = LEVELS[level]
    if level == "x86v4" and kind.startswith("rff"):
        ops -= 4
    return max(ops / ports, muls / mports) / lanes


def cpu_median(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t = time.thread_time()
        f()
        ts.append(time.thread_time() - t)
    return float(np.median(ts)) * 1e3  # ms


def gauss(a, b, l):
    return np.exp(-cdist(a, b, "sqeuclidean") / (2 * l * l))


def numpy_jobs():
    """name -> (function, repetitions), on data of the same sizes as the Rust jobs."""
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
    wts = np.array([1, 1, 2, 10, 100, 100, 10, 10], float)
    obs = rng.normal(size=(1000, 8))
    one = rng.normal(size=8) + 1.0

    def clipped():
        d = np.sqrt((wts * (obs - one) ** 2).sum(1))
        return np.minimum(d, 200.0).mean()

    jobs["clipped_weighted_l2_mean_n1000"] = (clipped, 200)
    return jobs


def cargo_example(args):
    return subprocess.run(
        ["cargo", "run", "--quiet", "--release", "--manifest-path", "tests/benches/Cargo.toml",
         "--example", "distances_cpu", "--"] + args,
        check=True, capture_output=True, text=True,
    ).stdout


def threads(rounds):
    """Prints the thread-scaling table; returns {version: [speed-up per round]}."""
    out = cargo_example(["threads", str(rounds)])
    t = {}
    for line in out.splitlines():
        _, n, v, ms = line.split()
        t.setdefault((int(v), int(n)), []).append(float(ms))
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    print("| kernel version | 1 thread (ms, wall) | 2 threads (ms, wall) | speed-up (median of rounds) |")
    print("|---|---|---|---|")
    for v in sorted({v for v, _ in t}):
        one, two = t[(v, 1)], t[(v, 2)]
        sp = [a / b for a, b in zip(one, two)]
        print(f"| {v} | {statistics.median(one):.1f} ({min(one):.1f}–{max(one):.1f}) | "
              f"{statistics.median(two):.1f} ({min(two):.1f}–{max(two):.1f}) | "
              f"{statistics.median(sp):.2f}× ({min(sp):.2f}–{max(sp):.2f}) |")
    return {v: [a / b for a, b in zip(t[(v, 1)], t[(v, 2)])] for v in sorted({v for v, _ in t})}


# Issue 33 item 3: (job, target numpy ratio) on both levels, and two threads over one.
TARGETS = [
    ("RFF MMD ≥ 10×", "rff_mmd_D100_n5000", 10.0),
    ("exact MMD² 1-D ≥ 6× (free)", "mmd2_biased_free_1d_n5000", 6.0),
    ("exact MMD² 1-D ≥ 6× (cached Y*)", "mmd_reference_1d_n5000", 6.0),
    ("exact MMD² 5-D ≥ 4× (cached Y*)", "mmd_reference_5d_n1000", 4.0),
]
MARGIN = 1.15


def verdict(value, target):
    if value >= target * MARGIN:
        return "met"
    if value >= target:
        return "met, under the 15 % margin"
    return "MISSED"


def targets_table(ratio, speedups):
    med = statistics.median
    print()
    print("| target | level | " + " | ".join(f"kernel version {v}" for v in VERSIONS) + " |")
    print("|---|---|" + "---|" * len(VERSIONS))
    for label, job, target in TARGETS:
        for level in ("x86v3", "x86v4"):
            cells = []
            for v in VERSIONS:
                r = ratio.get((job, level, v))
                cells.append("—" if r is None else
                             f"{med(r):.1f}× ({min(r):.1f}–{max(r):.1f}) {verdict(med(r), target)}")
            print(f"| {label} | {level} | " + " | ".join(cells) + " |")
    cells = []
    for v in VERSIONS:
        sp = speedups.get(v)
        if sp is None:
            cells.append("—")
            continue
        # 2 cores: 2× is the ceiling, so the threads target has no 15 % margin above 1.9×.
        cells.append(f"{med(sp):.2f}× ({min(sp):.2f}–{max(sp):.2f}) "
                     f"{'met' if med(sp) >= 1.9 else 'MISSED'}")
    print("| two threads ≥ 1.9× one (1-D 5000², wall) | detected | " + " | ".join(cells) + " |")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "threads":
        threads(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
        return
    if len(sys.argv) > 1 and sys.argv[1] == "targets":
        rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
        ratio = single_thread(rounds, "300")
        print()
        speedups = threads(rounds)
        targets_table(ratio, speedups)
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    min_cpu = sys.argv[2] if len(sys.argv) > 2 else "300"
    single_thread(rounds, min_cpu)


def single_thread(rounds, min_cpu):
    """Prints the single-thread table; returns {(job, level, version): [ratio per round]}."""
    jobs = numpy_jobs()
    ours, peer, ratio, cyc, ghzs, loads = {}, {}, {}, {}, [], []
    for r in range(rounds):
        npt = {k: cpu_median(f, reps) for k, (f, reps) in jobs.items()}
        for k, t in npt.items():
            peer.setdefault(k, []).append(t)
        out = cargo_example([min_cpu])
        lines = [ln.split() for ln in out.splitlines()]
        ghz = float(next(ln[1] for ln in lines if ln[0] == "ghz"))
        ghzs.append(ghz)
        for ln in lines:
            if ln[0] == "ghz":
                continue
            name, level, version, cpu, _wall, values = ln[0], ln[1], int(ln[2]), float(ln[3]), float(ln[4]), float(ln[5])
            key = (name, level, version)
            ours.setdefault(key, []).append(cpu)
            ratio.setdefault(key, []).append(npt[name] / cpu)
            cyc.setdefault(key, []).append(cpu * 1e-3 * ghz * 1e9 / values)
        loads.append(open("/proc/loadavg").read().split()[0])
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    med = statistics.median
    print(f"load average after each round: {', '.join(loads)}; clock (dependent multiplies): "
          f"{', '.join(f'{g:.2f}' for g in ghzs)} GHz; bound: {PORT_MODEL} port model")
    vs = VERSIONS
    print("| job | level | " + " | ".join(f"v{v} (CPU ms)" for v in vs) + " | numpy/scipy (CPU ms) | "
          + " | ".join(f"numpy ÷ v{v}" for v in vs) + " | cycles/value " + " / ".join(f"v{v}" for v in vs)
          + " | bound " + " / ".join(f"v{v}" for v in vs) + " | of bound " + " / ".join(f"v{v}" for v in vs) + " |")
    print("|---|---|" + "---|" * (3 * len(vs) + 4))
    names = sorted({k[0] for k in ours})
    for name in names:
        for level in ("portable", "x86v3", "x86v4", "scalar"):
            if level == "scalar" and (name, level, 0) in ours:
                k = (name, level, 0)
                rr = ratio[k]
                print(f"| {name} | scalar | {med(ours[k]):.4f} |" + " (same) |" * (len(vs) - 1)
                      + f" {med(peer[name]):.4f} | {med(rr):.1f}× ({min(rr):.1f}–{max(rr):.1f}) |"
                      + " |" * (len(vs) - 1) + " | | |")
                continue
            keys = [(name, level, v) for v in vs if (name, level, v) in ours]
            if not keys:
                continue
            kind = KIND[name]
            bs = [bound_cycles(kind, k[2], level) for k in keys]
            cs = [med(cyc[k]) for k in keys]
            print(f"| {name} | {level} | " + " | ".join(f"{med(ours[k]):.3f}" for k in keys)
                  + f" | {med(peer[name]):.3f} | "
                  + " | ".join(f"{med(ratio[k]):.1f}× ({min(ratio[k]):.1f}–{max(ratio[k]):.1f})" for k in keys)
                  + " | " + " / ".join(f"{c:.2f}" for c in cs) + " | " + " / ".join(f"{b:.2f}" for b in bs)
                  + " | " + " / ".join(f"{b / c:.0%}" for b, c in zip(bs, cs)) + " |")
    return ratio


if __name__ == "__main__":
    main()
