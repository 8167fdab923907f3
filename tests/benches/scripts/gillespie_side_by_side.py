#!/usr/bin/env python3
"""Side-by-side timing of the exact Gillespie SIR at K = 10^6 (the issue table's last row):
dpinfer (`examples/sir_once.rs`) against the plain C loop `sir_gillespie.c` (gcc -O2, default
target), alternating in the same run; ns per event by wall clock and by CPU time (the children's
user + system seconds, which on a loaded machine is close to the idle-core figure).

Usage (from the repository root):
    cargo build --release --manifest-path tests/benches/Cargo.toml --example sir_once
    python3 tests/benches/scripts/gillespie_side_by_side.py [ROUNDS] [REPS]
"""
import os
import statistics
import subprocess
import sys

from side_by_side import arg, child_cpu, load_average

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = "tests/benches/target/release/examples/sir_once"
PEER = "tests/benches/target/sir_gillespie_c"


def timed(cmd):
    c0 = child_cpu()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
    cpu = child_cpu() - c0
    events, wall = int(out[0]), float(out[1])
    return 1e9 * wall / events, 1e9 * cpu / events


def main():
    rounds = arg(1, 5)
    reps = arg(2, "20", str)
    subprocess.run(["gcc", "-O2", "-o", PEER, os.path.join(HERE, "sir_gillespie.c"), "-lm"],
                   check=True)
    res = {"ours": [], "c": []}
    loads = []
    for r in range(rounds):
        loads.append(load_average())
        res["ours"].append(timed([OURS, reps]))
        res["c"].append(timed([PEER, reps]))
        print(f"round {r + 1}: ours {res['ours'][-1]}, C {res['c'][-1]}", file=sys.stderr)
    loads.append(load_average())
    print(f"Gillespie SIR K = 1e6 at theta*, {reps} trajectories per run, {rounds} alternating "
          f"rounds; 1-min load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} "
          "cores")
    print("| run | ns/event, wall (median, range) | ns/event, CPU (median, range) |")
    print("|---|---|---|")
    for k, name in (("ours", "dpinfer `Sir`"), ("c", "plain C loop, gcc -O2")):
        w = [x[0] for x in res[k]]
        c = [x[1] for x in res[k]]
        print(f"| {name} | {statistics.median(w):.2f} ({min(w):.2f}-{max(w):.2f}) | "
              f"{statistics.median(c):.2f} ({min(c):.2f}-{max(c):.2f}) |")
    rw = [a[0] / b[0] for a, b in zip(res["c"], res["ours"])]
    rc = [a[1] / b[1] for a, b in zip(res["c"], res["ours"])]
    print(f"| C ÷ dpinfer | {statistics.median(rw):.2f}× | {statistics.median(rc):.2f}× |")


if __name__ == "__main__":
    main()
