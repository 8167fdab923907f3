#!/usr/bin/env python3
"""dp_accounting 0.6.0's PLDAccountant (h = 1e-4, add/remove) timed on the numerical-PLD
benchmark cases of tests/benches/benches/accountants.rs (`pld_numeric/d_*` and `e_*`, ε at
δ = 1e-5 after Poisson-subsampled Gaussian steps, composition + query): best of 3 after import,
wall (perf_counter) and CPU (process_time). Run in the same minutes as
`cd tests/benches && cargo bench --bench accountants -- pld_numeric/ --warm-up-time 1 --measurement-time 4`.

Run:  python3 -m venv /tmp/v && /tmp/v/bin/pip install dp-accounting==0.6.0
      /tmp/v/bin/python bench_pld_regimes_peers.py
"""
import time
import warnings

warnings.filterwarnings("ignore")

import dp_accounting
from dp_accounting import dp_event as E
from dp_accounting.pld import pld_privacy_accountant as P

CASES = [(0.01, 1.1, 1000), (0.01, 1.1, 10_000), (1e-3, 0.5, 1000), (1e-4, 0.5, 10_000),
         (1e-6, 0.3, 10_000)]


def run(q, s, n):
    acc = P.PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(E.SelfComposedDpEvent(E.PoissonSampledDpEvent(q, E.GaussianDpEvent(s)), n))
    return acc.get_epsilon(1e-5)


for q, s, n in CASES:
    wall, cpu, eps = float("inf"), float("inf"), None
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        eps = run(q, s, n)
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    print(f"q={q} sigma={s} steps={n}: eps {eps:.6f}  wall {wall * 1e3:.1f} ms  cpu {cpu * 1e3:.1f} ms",
          flush=True)
