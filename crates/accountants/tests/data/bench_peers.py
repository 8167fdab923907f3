#!/usr/bin/env python3
"""Times the three benchmark jobs of issue 3 in the peer libraries (after import) and prints
ratios against the Rust criterion figures passed on the command line.

Run:  python3 bench_peers.py [opacus-src-dir] [rust_a_us rust_b_ms rust_c_ms]
(a) eps at delta=1e-5 after 1e4 Poisson-subsampled Gaussian steps, q=0.01, sigma=1 (RDP)
(b) Gaussian PLD delta(eps=30) for 1e6 heterogeneous sigmas incl. composition
(c) sigma calibration for a 1e4-step budget (eps=2, delta=1e-5, q=0.01, RDP)
"""
import math
import sys
import warnings

from benchutil import best_of

warnings.filterwarnings("ignore")
import logging

logging.disable(logging.CRITICAL)
import numpy as np
from scipy import special


rows = []
# (a)
import dp_accounting
from dp_accounting.rdp import rdp_privacy_accountant as dpa


def a_dp():
    acc = dpa.RdpAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 10_000)
    return acc.get_epsilon(1e-5)


rows.append(("a", "dp_accounting", *best_of(a_dp, 5)))
if len(sys.argv) > 1:
    sys.path.insert(0, sys.argv[1])
try:
    from opacus.accountants.analysis import rdp as orr

    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))

    def a_op():
        r = orr.compute_rdp(q=0.01, noise_multiplier=1.0, steps=10_000, orders=orders)
        return orr.get_privacy_spent(orders=orders, rdp=r, delta=1e-5)[0]

    rows.append(("a", "opacus", *best_of(a_op, 5)))
except Exception as e:
    print("# opacus unavailable:", e)
try:
    from autodp.mechanism_zoo import GaussianMechanism
    from autodp.transformer_zoo import AmplificationBySampling, Composition

    def a_ad():
        m = GaussianMechanism(sigma=1.0)
        sub = AmplificationBySampling(PoissonSampling=True)(m, 0.01, improved_bound_flag=True)
        c = Composition()([sub], [10_000])
        return c.get_approxDP(1e-5)

    rows.append(("a", "autodp", *best_of(a_ad, 2)))
except Exception as e:
    print("# autodp unavailable:", e)

# (b) numpy closed form (the same formula as ours, vectorised) and autodp's analytical Gaussian
sig = 100.0 + (np.arange(1_000_000) % 1000) / 10.0


def b_np():
    mu = np.sum(0.5 / sig ** 2)
    eps = 30.0
    s = 2 * math.sqrt(mu)
    a, b = (eps - mu) / s, (eps + mu) / s
    return 0.5 * (special.erfc(a) - math.exp(-a * a) * special.erfcx(b))


rows.append(("b", "numpy/scipy closed form", *best_of(b_np, 5)))

# (c) dp_accounting has no calibration for Poisson RDP in its core API except
# dp_accounting.calibrate_dp_mechanism; use it.
def c_dp():
    def make(s):
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(s)), 10_000)

    return dp_accounting.calibrate_dp_mechanism(dpa.RdpAccountant, make, 2.0, 1e-5)


rows.append(("c", "dp_accounting", *best_of(c_dp, 1)))
try:
    from opacus.accountants.utils import get_noise_multiplier  # needs torch; usually absent
except Exception:
    pass

rust = {}
if len(sys.argv) > 4:
    rust = {"a": float(sys.argv[2]) * 1e-6, "b": float(sys.argv[3]) * 1e-3, "c": float(sys.argv[4]) * 1e-3}
print("| job | peer | peer time | value | ratio peer/dpinfer |")
print("|---|---|---|---|---|")
for job, peer, t, val in rows:
    ratio = f"{t / rust[job]:.2g}x" if job in rust else "-"
    v = val if not isinstance(val, tuple) else val[0]
    print(f"| ({job}) | {peer} | {t * 1e3:.2f} ms | {v} | {ratio} |")
