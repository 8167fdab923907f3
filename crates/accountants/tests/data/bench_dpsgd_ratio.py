#!/usr/bin/env python3
"""Issue 30 item 2's figure, by itself: dpinfer's numerical PLD against dp_accounting 0.6.0's
PLD accountant on 10⁴ DP-SGD steps (Poisson-subsampled Gaussian, q = 0.01, σ = 1.1, δ = 1e-5,
add/remove), both in this process, alternating, ROUNDS rounds of best-of-3 wall time each
(composition + query, after import), and the ratio per round. Same venv as
bench_comparison.py (dp-accounting 0.6.0 and dpinfer built by `maturin develop --release`).

  /work/venv-events/bin/python bench_dpsgd_ratio.py [ROUNDS]
"""
import os
import platform
import statistics
import sys

from benchutil import best_of

from dp_accounting import dp_event as E
from dp_accounting.pld import pld_privacy_accountant as DP
import dp_accounting
from dpinfer import accounting as A

Q, SIGMA, STEPS, DELTA = 0.01, 1.1, 10_000, 1e-5
AR = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


def theirs():
    acc = DP.PLDAccountant(AR)
    acc.compose(E.PoissonSampledDpEvent(Q, E.GaussianDpEvent(SIGMA)), STEPS)
    return acc.get_epsilon(DELTA)


def ours():
    acc = A.PldAccountant("add_remove")
    acc.compose(A.PoissonSampledDpEvent(Q, A.GaussianDpEvent(SIGMA)), STEPS)
    return acc.get_epsilon(DELTA)


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
print(f"# {cpu}, {os.cpu_count()} vCPUs, python {platform.python_version()}, load {os.getloadavg()}")
ratios = []
for r in range(rounds):
    (t_them, e_them), (t_us, e_us) = best_of(theirs), best_of(ours)
    ratios.append(t_them / t_us)
    print(f"round {r}: dp_accounting {t_them*1e3:.1f} ms (ε {e_them:.6f}), dpinfer {t_us*1e3:.1f} ms (ε {e_us:.6f}), ratio {t_them/t_us:.1f}×")
print(f"median ratio {statistics.median(ratios):.1f}× (min {min(ratios):.1f}×, max {max(ratios):.1f}×), load {os.getloadavg()}")
