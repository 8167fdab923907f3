#!/usr/bin/env python3
"""The accountants README's comparison table (issue 30 item 5): for a fixed set of events,
ε at δ (add/remove unless stated) by dpinfer (through its Python binding, numerical PLD and
RDP), dp_accounting 0.6.0 (PLD at h = 1e-4 and RDP on its default orders), prv-accountant
0.2.0 (eps_error 0.01: its certified [lower, upper] and estimate) and opacus 1.6.0 (its RDP
and PRV accountants, DP-SGD only), OpenDP 0.16.0 (its privacy maps: zCDP composed and
converted by `make_zCDP_to_approxDP`, or pure ε composed, the smaller) and autodp 0.2.3.1 (RDP
`Composition`, with `AmplificationBySampling` for Poisson sampling; `ComposeGaussian`, exact,
for plain Gaussians), each timed after import (best of 3, composition + query, wall clock), all
in one run. A peer that cannot account an event gets "n/a: <reason>".

Run (a throw-away venv with dp-accounting 0.6.0, prv-accountant 0.2.0, opacus 1.6.0,
opendp 0.16.0, autodp 0.2.3.1 and dpinfer built by `maturin develop --release`):
  /work/venv-events/bin/python bench_comparison.py > comparison.md
"""
import math
import os
import platform
import time
import warnings

warnings.filterwarnings("ignore")

import dp_accounting
from dp_accounting import dp_event as E
from dp_accounting.pld import pld_privacy_accountant as DP
from dp_accounting.rdp import rdp_privacy_accountant as DR
from prv_accountant import PRVAccountant
from prv_accountant import privacy_random_variables as PRV
# opacus' accountants are plain numpy/scipy, but `import opacus` pulls in torch (not installed
# here): load the package without its __init__ and stub the optimizer type the accountant
# base class imports (used only by the optimizer hook, never by get_epsilon).
import importlib.util
import sys
import types

_base = list(importlib.util.find_spec("opacus").submodule_search_locations)[0]
_pkg = types.ModuleType("opacus")
_pkg.__path__ = [_base]
sys.modules["opacus"] = _pkg
_opt = types.ModuleType("opacus.optimizers")
_opt.DPOptimizer = object
sys.modules["opacus.optimizers"] = _opt
from opacus.accountants import RDPAccountant as OpacusRDP, PRVAccountant as OpacusPRV  # noqa: E402

import opendp.prelude as odp
from autodp import mechanism_zoo as AZ, transformer_zoo as AT

from dpinfer import accounting as A

odp.enable_features("contrib")

AR = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
RO = dp_accounting.NeighboringRelation.REPLACE_ONE


def best_of(f, n=3):
    best, out = float("inf"), None
    for _ in range(n):
        t = time.perf_counter()
        try:
            out = f()
        except Exception as e:  # noqa: BLE001 (reported in the table)
            return None, f"error: {type(e).__name__}"
        best = min(best, time.perf_counter() - t)
    return best, out


def dpa_pld(event, count, delta, rel=AR):
    def run():
        acc = DP.PLDAccountant(rel)
        acc.compose(event, count)
        return acc.get_epsilon(delta)
    return best_of(run)


def dpa_rdp(event, count, delta, rel=AR):
    def run():
        acc = DR.RdpAccountant(neighboring_relation=rel)
        acc.compose(event, count)
        return acc.get_epsilon(delta)
    return best_of(run)


def ours(kind, event, count, delta, rel="add_remove"):
    def run():
        acc = A.PldAccountant(rel) if kind == "pld" else A.RdpAccountant(neighbouring=rel)
        acc.compose(event, count)
        return acc.get_epsilon(delta)
    return best_of(run)


def prv(mech, count, delta):
    def run():
        acc = PRVAccountant(prvs=[mech], max_self_compositions=[count], eps_error=0.01,
                            delta_error=delta / 1000)
        return acc.compute_epsilon(delta=delta, num_self_compositions=[count])
    return best_of(run)


def opacus(cls, sigma, q, steps, delta):
    def run():
        acc = cls()
        acc.history = [(sigma, q, steps)]
        return acc.get_epsilon(delta=delta)
    return best_of(run)


def opendp_eps(measurements, delta, d_in=1.0):
    """ε at δ of the composition of OpenDP measurements (input distance `d_in`: sensitivity 1,
    or one changed record): the smaller of the zCDP route (pure ε-DP steps converted by
    ρ = ε²/2) and, for pure steps, ε composed."""
    def run():
        pure = None
        if all(m.output_measure == odp.max_divergence() for m in measurements):
            pure = odp.c.make_composition(measurements).map(d_in)
            measurements_z = [odp.c.make_pureDP_to_zCDP(m) for m in measurements]
        else:
            measurements_z = measurements
        z = odp.c.make_zCDP_to_approxDP(odp.c.make_composition(measurements_z))
        e = z.map(d_in).epsilon(delta)
        return e if pure is None else min(e, pure)
    return best_of(run)


def autodp_eps(build, delta):
    def run():
        return build().get_approxDP(delta)
    return best_of(run)


def na(reason):
    return (None, f"n/a: {reason}")


def cell(r):
    t, v = r
    if t is None:
        return v if v else "–"
    if isinstance(v, tuple):
        lo, est, up = v
        return f"{est:.4f} [{lo:.4f}, {up:.4f}] / {t * 1e3:.0f} ms" if t < 1 else f"{est:.4f} [{lo:.4f}, {up:.4f}] / {t:.2f} s"
    if t < 1e-3:
        return f"{v:.4f} / {t * 1e6:.0f} µs"
    return f"{v:.4f} / {t * 1e3:.1f} ms" if t < 1 else f"{v:.4f} / {t:.2f} s"


NA = (None, "–")
rows = []

# DP-SGD: Poisson-subsampled Gaussian.
for q, sigma, steps, delta in [(0.01, 1.1, 1000, 1e-5), (0.01, 1.1, 10_000, 1e-5), (1e-3, 0.5, 1000, 1e-5)]:
    d_ev = E.PoissonSampledDpEvent(q, E.GaussianDpEvent(sigma))
    o_ev = A.PoissonSampledDpEvent(q, A.GaussianDpEvent(sigma))
    rows.append((
        f"Poisson-subsampled Gaussian q={q:g}, σ={sigma:g}, {steps} steps, δ={delta:g}",
        ours("pld", o_ev, steps, delta), ours("rdp", o_ev, steps, delta),
        dpa_pld(d_ev, steps, delta), dpa_rdp(d_ev, steps, delta),
        prv(PRV.PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q), steps, delta),
        opacus(OpacusRDP, sigma, q, steps, delta), opacus(OpacusPRV, sigma, q, steps, delta),
        na("no Poisson subsampling (only make_population_amplification, for a simple random sample)"),
        autodp_eps(lambda: AT.Composition()(
            [AT.AmplificationBySampling(PoissonSampling=True)(AZ.GaussianMechanism(sigma=sigma), q,
                                                               improved_bound_flag=True)],
            [steps]), delta),
    ))

# Gaussian and Laplace without subsampling.
rows.append((
    "Gaussian σ=2, 100 releases, δ=1e-6",
    ours("pld", A.GaussianDpEvent(2.0), 100, 1e-6), ours("rdp", A.GaussianDpEvent(2.0), 100, 1e-6),
    dpa_pld(E.GaussianDpEvent(2.0), 100, 1e-6), dpa_rdp(E.GaussianDpEvent(2.0), 100, 1e-6),
    prv(PRV.GaussianMechanism(noise_multiplier=2.0), 100, 1e-6), NA, NA,
    opendp_eps([odp.m.make_gaussian(odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float), scale=2.0)] * 100, 1e-6),
    autodp_eps(lambda: AT.ComposeGaussian()([AZ.GaussianMechanism(sigma=2.0)], [100]), 1e-6),
))
rows.append((
    "Laplace b=10, 100 releases, δ=1e-6",
    ours("pld", A.LaplaceDpEvent(10.0), 100, 1e-6), ours("rdp", A.LaplaceDpEvent(10.0), 100, 1e-6),
    dpa_pld(E.LaplaceDpEvent(10.0), 100, 1e-6), dpa_rdp(E.LaplaceDpEvent(10.0), 100, 1e-6),
    prv(PRV.LaplaceMechanism(mu=0.1), 100, 1e-6), NA, NA,  # prv's mu = Δ/b
    opendp_eps([odp.m.make_laplace(odp.atom_domain(T=float, nan=False), odp.absolute_distance(T=float), scale=10.0)] * 100, 1e-6),
    autodp_eps(lambda: AT.Composition()([AZ.LaplaceMechanism(b=10.0)], [100]), 1e-6),
))
# Randomized response (replace-one): dp_accounting's PLD composes it once per compose call.
rows.append((
    "randomized response p=0.5, k=4, 100 releases, replace-one, δ=1e-6 (dp_accounting PLD: 100 compose calls)",
    ours("pld", A.RandomizedResponseDpEvent(0.5, 4), 100, 1e-6, "replace_one"),
    ours("rdp", A.RandomizedResponseDpEvent(0.5, 4), 100, 1e-6, "replace_one"),
    best_of(lambda: (lambda acc: ([acc.compose(E.RandomizedResponseDpEvent(0.5, 4)) for _ in range(100)], acc.get_epsilon(1e-6))[1])(DP.PLDAccountant(RO))),
    dpa_rdp(E.RandomizedResponseDpEvent(0.5, 4), 100, 1e-6, RO),
    NA, NA, NA,
    # OpenDP's prob is the chance of the true category: 1 − p + p/k = 0.625.
    opendp_eps([odp.m.make_randomized_response(categories=[0, 1, 2, 3], prob=0.625)] * 100, 1e-6, d_in=1),
    na("binary randomized response only"),
))
# Tree aggregation (RDP in dp_accounting).
rows.append((
    "tree aggregation (one DP-FTRL epoch) σ=5, 1000 steps, 10 epochs, δ=1e-6 (dp_accounting: REPLACE_SPECIAL, the same pair)",
    ours("pld", A.SingleEpochTreeAggregationDpEvent(5.0, 1000), 10, 1e-6),
    ours("rdp", A.SingleEpochTreeAggregationDpEvent(5.0, 1000), 10, 1e-6),
    NA, dpa_rdp(E.SingleEpochTreeAggregationDpEvent(5.0, 1000), 10, 1e-6, dp_accounting.NeighboringRelation.REPLACE_SPECIAL),
    NA, NA, NA,
    na("no tree-aggregation event"), na("no tree-aggregation event"),
))
# Truncated Poisson-subsampled Gaussian (PLD in dp_accounting).
rows.append((
    "truncated Poisson-subsampled Gaussian n=10⁴, q=0.01, B=120, σ=1.1, 1000 steps, δ=1e-5",
    ours("pld", A.TruncatedSubsampledGaussianDpEvent(10000, 0.01, 120, 1.1), 1000, 1e-5), NA,
    dpa_pld(E.TruncatedSubsampledGaussianDpEvent(10000, 0.01, 120, 1.1), 1000, 1e-5), NA,
    NA, NA, NA,
    na("no subsampling with a batch cap"), na("no subsampling with a batch cap"),
))
# Mixture of Gaussians (PLD in dp_accounting).
rows.append((
    "mixture of Gaussians σ=2, c=(0,1), p=(0.9,0.1), 100 releases, δ=1e-5",
    ours("pld", A.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], [0.9, 0.1]), 100, 1e-5), NA,
    dpa_pld(E.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], [0.9, 0.1]), 100, 1e-5), NA,
    NA, NA, NA,
    na("no mixture-of-Gaussians pair"), na("no mixture-of-Gaussians pair"),
))
# Repeat-and-select (RDP in dp_accounting).
inner_o = A.SelfComposedDpEvent(A.PoissonSampledDpEvent(0.01, A.GaussianDpEvent(1.1)), 1000)
inner_d = E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1)), 1000)
rows.append((
    "repeat-and-select of 1000 DP-SGD steps (q=0.01, σ=1.1), geometric, mean 10, δ=1e-5",
    NA, ours("rdp", A.RepeatAndSelectDpEvent(inner_o, 10.0, 1.0), 1, 1e-5),
    NA, dpa_rdp(E.RepeatAndSelectDpEvent(inner_d, 10.0, 1.0), 1, 1e-5),
    NA, NA, NA,
    na("no repeat-and-select"), na("no repeat-and-select"),
))
# Sampling with replacement (replace-one; an event dp_accounting defines but does not account).
rows.append((
    "Gaussian σ=2 on 64 draws with replacement of 10⁴ rows, 1000 steps, replace-one, δ=1e-5",
    ours("pld", A.SampledWithReplacementDpEvent(10000, 64, A.GaussianDpEvent(2.0)), 1000, 1e-5, "replace_one"), NA,
    (None, "unsupported"), (None, "unsupported"), NA, NA, NA,
    na("no sampling with replacement"), na("no sampling with replacement (without replacement only)"),
))
# Random allocation (no released accountant has it).
rows.append((
    "random allocation 1 of 1000 steps, σ=1.1, 1 epoch, δ=1e-5",
    NA, ours("rdp", A.Event.random_allocation(1.1, 1000), 1, 1e-5),
    NA, NA, NA, NA, NA,
    na("no random allocation"), na("no random allocation"),
))

uname = platform.uname()
try:
    cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except (OSError, StopIteration):
    cpu = platform.processor()
print(f"Machine: {cpu}, {os.cpu_count()} vCPUs, {uname.system} {uname.release}; "
      f"load average {os.getloadavg()[0]:.1f} at the start of the run; Python {platform.python_version()}.")
print()
print("| event | dpinfer PLD | dpinfer RDP | dp_accounting PLD | dp_accounting RDP | prv-accountant est. [low, up] | opacus RDP | opacus PRV | OpenDP | autodp |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, *cells in rows:
    print(f"| {name} | " + " | ".join(cell(c) for c in cells) + " |")
print()
print(f"load average {os.getloadavg()[0]:.1f} at the end of the run.")
