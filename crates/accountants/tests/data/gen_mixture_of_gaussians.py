#!/usr/bin/env python3
"""Mixture of Gaussians (Event::MixtureOfGaussians, add/remove): references for
tests/suite/mixture_of_gaussians.rs.

The pair is P = sum_i p_i N(c_i, sigma^2) against Q = N(0, sigma^2); under add/remove both
orders count: delta(eps) = max(H_{e^eps}(P||Q), H_{e^eps}(Q||P)).

Lines (comma separated; sensitivities and probabilities joined by '|'):
  exact,sigma,c,p,eps,delta
      one release: delta(eps) by 1-D quadrature in 40-digit mpmath of
      max(int (P - e^eps Q)_+, int (Q - e^eps P)_+), split at the loss threshold (the
      privacy loss is increasing in x, so each positive part is one tail).
  pld,sigma,c,p,count,delta,eps_dpa,eps_at,delta_dpa
      dp_accounting 0.6.0's PLDAccountant (add/remove, value_discretization_interval 1e-4,
      pessimistic connect-the-dots) after compose(MixtureOfGaussiansDpEvent(sigma, c, p),
      count): get_epsilon(delta) and get_delta(eps_at).

Run (a throw-away venv outside the repository):
  python3 -m venv /work/venv-events && /work/venv-events/bin/pip install dp-accounting==0.6.0 mpmath
  /work/venv-events/bin/python gen_mixture_of_gaussians.py > mixture_of_gaussians.txt
"""
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant as pld
from mpmath import mp, mpf, exp, log, ncdf, findroot, quad, inf

mp.dps = 40


def lossfn(sigma, c, p):
    s = mpf(sigma)
    return lambda x: log(sum(mpf(pi) * exp((mpf(ci) * x - mpf(ci) ** 2 / 2) / s**2) for ci, pi in zip(c, p)))


def exact_delta(sigma, c, p, eps):
    s = mpf(sigma)
    l = lossfn(sigma, c, p)
    e = mpf(eps)
    pc = lambda x: sum(mpf(pi) * ncdf((x - mpf(ci)) / s) for ci, pi in zip(c, p))
    qc = lambda x: ncdf(x / s)
    # remove: {l > eps} = {x > x1}; H = P(x > x1) - e^eps Q(x > x1)
    x1 = findroot(lambda x: l(x) - e, mpf(max(c)) / 2 + eps * s**2 / max(c), solver="newton")
    rem = (1 - pc(x1)) - exp(e) * (1 - qc(x1))
    # add: {-l > eps} = {x < x2}, l(x2) = -eps (may not exist when inf l >= -eps)
    p0 = sum(mpf(pi) for ci, pi in zip(c, p) if ci == 0)
    if p0 > 0 and log(p0) >= -e:
        add = mpf(0)
    else:
        lo = mpf(-1)
        while l(lo) > -e:
            lo *= 2
        hi = mpf(max(c))
        for _ in range(200):
            mid = (lo + hi) / 2
            if l(mid) > -e:
                hi = mid
            else:
                lo = mid
        x2 = (lo + hi) / 2
        add = qc(x2) - exp(e) * pc(x2)
    return max(rem, add)


def j(v):
    return "|".join(repr(float(x)) for x in v)


CASES = [
    (1.0, [0.0, 1.0, 2.0], [0.81, 0.18, 0.01]),
    (2.0, [1.0, 2.0], [0.5, 0.5]),
    (0.8, [0.0, 0.5, 1.0], [0.9, 0.05, 0.05]),
    (5.0, [0.0, 1.0, 3.0, 4.0], [0.7, 0.1, 0.1, 0.1]),
]

print("# mixture of Gaussians references: gen_mixture_of_gaussians.py (mpmath 40 digits, dp_accounting 0.6.0)")
for sigma, c, p in CASES:
    for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
        print(f"exact,{sigma!r},{j(c)},{j(p)},{eps!r},{mp.nstr(exact_delta(sigma, c, p, eps), 25)}")
for (sigma, c, p), count, delta, eps_at in [
    (CASES[0], 1, 1e-5, 1.0),
    (CASES[0], 100, 1e-5, 2.0),
    (CASES[1], 10, 1e-6, 3.0),
    (CASES[2], 1000, 1e-5, 1.0),
    (CASES[3], 50, 1e-5, 1.0),
]:
    acc = pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(dp_accounting.dp_event.MixtureOfGaussiansDpEvent(sigma, c, p), count)
    print(f"pld,{sigma!r},{j(c)},{j(p)},{count},{delta!r},{float(acc.get_epsilon(delta))!r},{eps_at!r},{float(acc.get_delta(eps_at))!r}")
