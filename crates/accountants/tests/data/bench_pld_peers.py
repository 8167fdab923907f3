#!/usr/bin/env python3
"""Side-by-side for issue 15: ε at δ = 1e-5 after Poisson-subsampled Gaussian steps, q = 0.01,
σ = 1.1, by dp_accounting 0.6.0 (RDP and PLD, h = 1e-4) and prv-accountant 0.2.0 (eps_error
0.01), timed after import (best of 3, composition + query), next to dpinfer's criterion
figures passed on the command line (milliseconds, same order as STEPS) and its ε values.

Run:  /tmp/pldpeers/bin/python bench_pld_peers.py [ours_ms_1000 ours_ms_10000]
Ours: cd tests/benches && cargo bench --bench accountants -- pld_numeric
"""
import resource
import sys
import warnings

from benchutil import best_of

warnings.filterwarnings("ignore")

import dp_accounting
from dp_accounting import dp_event as E
from dp_accounting.pld import pld_privacy_accountant as P
from dp_accounting.rdp import rdp_privacy_accountant as R
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

Q, SIGMA, DELTA = 0.01, 1.1, 1e-5
STEPS = [1000, 10_000]
OURS_EPS = {1000: 1.515371, 10_000: 5.192628}  # dpinfer PldAccountant (rounded up, 5 digits)


def event(n):
    return E.SelfComposedDpEvent(E.PoissonSampledDpEvent(Q, E.GaussianDpEvent(SIGMA)), n)


def rdp(n):
    acc = R.RdpAccountant()
    acc.compose(event(n))
    return acc.get_epsilon(DELTA)


def pld(n):
    acc = P.PLDAccountant()
    acc.compose(event(n))
    return acc.get_epsilon(DELTA)


def prv(n):
    acc = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(Q, SIGMA)],
                        max_self_compositions=[n], eps_error=0.01, delta_error=DELTA * 1e-3)
    return acc.compute_epsilon(delta=DELTA, num_self_compositions=[n])


ours_ms = [float(x) for x in sys.argv[1:3]] if len(sys.argv) >= 3 else [float("nan")] * 2
print("| steps | RDP ε (dp_accounting) | PLD ε dp_accounting | time | prv ε [low, up] | time |"
      " dpinfer ε | dpinfer time | speed-up vs dp_accounting |")
print("|---|---|---|---|---|---|---|---|---|")
for n, ours in zip(STEPS, ours_ms):
    e_rdp = rdp(n)
    t_pld, e_pld = best_of(lambda: pld(n))
    t_prv, (lo, est, up) = best_of(lambda: prv(n))
    print(f"| {n} | {e_rdp:.4f} | {e_pld:.5f} | {t_pld * 1e3:.0f} ms | {est:.4f} [{lo:.4f}, {up:.4f}]"
          f" | {t_prv * 1e3:.0f} ms | {OURS_EPS[n]:.6f} | {ours:.1f} ms | {t_pld * 1e3 / ours:.0f}× |")
print(f"peak RSS of this Python process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
