#!/usr/bin/env python3
"""Golden values for the numerical PLD accountant (tests/suite/pld_numeric.rs).

Peers: Google dp_accounting 0.6.0 `PLDAccountant` (pessimistic connect-the-dots,
value_discretization_interval = 1e-4, add/remove neighbours: both directions, worse reported)
and Microsoft prv-accountant 0.2.0 `PRVAccountant` (certified lower/upper bounds; its
Poisson-subsampled Gaussian is the remove direction, so its lower bound is a lower bound of the
exact add/remove value too). Every case uses Δ = 1.

Each output line:  name | events | query | x | dp_accounting | prv_low | prv_up
  events: ';'-separated parts  kind:q=..,s=..,n=..  with kind pg (Poisson Gaussian, s = σ),
          pl (Poisson Laplace, s = scale b), g (Gaussian), l (Laplace)
  query:  eps (x = δ, values are ε)  or  delta (x = ε, values are δ)
  prv_*:  'nan' where prv-accountant has no such mechanism (subsampled Laplace)

Run:  python3 -m venv /tmp/pldpeers && /tmp/pldpeers/bin/pip install dp-accounting==0.6.0 prv-accountant==0.2.0
      /tmp/pldpeers/bin/python gen_pld_golden.py > pld_golden.txt
"""
import math
import sys
import warnings

warnings.filterwarnings("ignore")

import dp_accounting
from dp_accounting import dp_event as E
from dp_accounting.pld import pld_privacy_accountant as P
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import (
    GaussianMechanism, LaplaceMechanism, PoissonSubsampledGaussianMechanism)


def parse(spec):
    parts = []
    for p in spec.split(";"):
        kind, kv = p.split(":")
        d = dict(x.split("=") for x in kv.split(","))
        parts.append((kind, float(d.get("q", 1)), float(d["s"]), int(float(d["n"]))))
    return parts


def dpa_event(kind, q, s, n):
    base = E.GaussianDpEvent(s) if kind in ("pg", "g") else E.LaplaceDpEvent(s)
    if kind in ("pg", "pl"):
        base = E.PoissonSampledDpEvent(q, base)
    return E.SelfComposedDpEvent(base, n)


def dpa(spec, query, x):
    acc = P.PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(E.ComposedDpEvent([dpa_event(*p) for p in parse(spec)]))
    return acc.get_epsilon(x) if query == "eps" else acc.get_delta(x)


def prv(spec, query, x):
    prvs, counts = [], []
    for kind, q, s, n in parse(spec):
        if kind == "pg":
            prvs.append(PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=s))
        elif kind == "g":
            prvs.append(GaussianMechanism(noise_multiplier=s))
        elif kind == "l":
            prvs.append(LaplaceMechanism(mu=1.0 / s))
        else:
            return float("nan"), float("nan")
        counts.append(n)
    delta = x if query == "eps" else 1e-6
    acc = PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=0.01,
                        delta_error=delta * 1e-3)
    if query == "eps":
        lo, _, up = acc.compute_epsilon(delta=x, num_self_compositions=counts)
    else:
        lo, _, up = acc.compute_delta(epsilon=x, num_self_compositions=counts)
    return lo, up


CASES = []
# Poisson-subsampled Gaussian, ε(δ).
for q, s, n, d in [
    (1e-4, 0.5, 1_000_000, 1e-5), (1e-4, 1.0, 100_000, 1e-5), (1e-3, 0.8, 100_000, 1e-5),
    (1e-3, 2.0, 10_000, 1e-6), (0.01, 1.1, 1, 1e-5), (0.01, 1.1, 100, 1e-5),
    (0.01, 1.1, 1000, 1e-5), (0.01, 1.1, 10_000, 1e-5), (0.01, 0.5, 1000, 1e-5),
    (0.01, 0.8, 3000, 1e-8), (0.01, 5.0, 100_000, 1e-5), (0.01, 10.0, 1_000_000, 1e-5),
    (0.02, 1.0, 5000, 1e-5), (0.05, 2.0, 1000, 1e-5), (0.1, 1.0, 100, 1e-5),
    (0.1, 3.0, 1000, 1e-6), (0.25, 1.5, 100, 1e-5), (0.5, 2.0, 50, 1e-5),
    (0.5, 0.7, 5, 1e-3), (1.0, 1.0, 1, 1e-5), (1.0, 2.0, 10, 1e-5), (1.0, 10.0, 1000, 1e-6),
    (1.0, 0.5, 1, 1e-2), (0.003, 1.0, 30_000, 1e-7),
]:
    CASES.append((f"pg_q{q}_s{s}_n{n}", f"pg:q={q},s={s},n={n}", "eps", d))
# Poisson-subsampled Gaussian, δ(ε).
for q, s, n, e in [
    (0.01, 1.1, 1000, 1.0), (0.01, 1.1, 10_000, 3.0), (0.1, 2.0, 100, 0.5),
    (1e-3, 1.0, 10_000, 0.2), (1.0, 2.0, 10, 2.0), (0.05, 0.9, 500, 4.0),
]:
    CASES.append((f"pgd_q{q}_s{s}_n{n}_e{e}", f"pg:q={q},s={s},n={n}", "delta", e))
# Laplace (plain and Poisson-subsampled).
for kind, q, b, n, qry, x in [
    ("pl", 0.01, 0.5, 1000, "eps", 1e-5), ("pl", 0.1, 1.0, 100, "eps", 1e-5),
    ("pl", 0.05, 0.2, 1000, "eps", 1e-6), ("pl", 0.3, 2.0, 50, "delta", 1.0),
    ("l", 1.0, 2.0, 10, "eps", 1e-5), ("l", 1.0, 10.0, 100, "eps", 1e-6),
    ("l", 1.0, 1.0, 3, "delta", 1.5),
]:
    CASES.append((f"{kind}_q{q}_b{b}_n{n}_{qry}", f"{kind}:q={q},s={b},n={n}", qry, x))
# Heterogeneous compositions.
for name, spec, qry, x in [
    ("het_two_sgd", "pg:q=0.01,s=1.1,n=1000;pg:q=0.02,s=1.5,n=500", "eps", 1e-5),
    ("het_sgd_gauss", "pg:q=0.01,s=1.0,n=1000;g:s=5.0,n=10", "eps", 1e-5),
    ("het_lap_sgd", "pl:q=0.1,s=2.0,n=100;pg:q=0.05,s=1.5,n=200", "eps", 1e-5),
    ("het_gauss_lap", "g:s=2.0,n=3;l:s=5.0,n=4", "eps", 1e-6),
    ("het_three", "pg:q=0.001,s=0.9,n=20000;pg:q=0.01,s=2.0,n=2000;g:s=20.0,n=5", "eps", 1e-6),
    ("het_two_sgd_delta", "pg:q=0.01,s=1.1,n=1000;pg:q=0.02,s=1.5,n=500", "delta", 1.5),
]:
    CASES.append((name, spec, qry, x))

print("# numerical PLD golden values; generated by gen_pld_golden.py (dp_accounting 0.6.0,"
      " prv-accountant 0.2.0)")
print("# name | events | query | x | dp_accounting | prv_low | prv_up")
for name, spec, qry, x in CASES:
    v = dpa(spec, qry, x)
    lo, up = prv(spec, qry, x)
    print(f"{name} | {spec} | {qry} | {x!r} | {float(v)!r} | {float(lo)!r} | {float(up)!r}", flush=True)
    print(name, v, lo, up, file=sys.stderr)
