#!/usr/bin/env python3
"""Truncated Poisson-subsampled Gaussian (Event::TruncatedSubsampledGaussian, add/remove):
references for tests/suite/truncated_gaussian.rs.

The analysed pair (dp_accounting 0.6.0's from_truncated_subsampled_gaussian_mechanism,
arXiv 2508.15089) is the mixture, with the branch revealed, of
  weight 1 - t: the Poisson-subsampled Gaussian, rate q, standardised shift a1 = sens/sigma
                (both add/remove orders);
  weight t:     the replace-one pair (1-w)N(0,1) + wN(-a,1) vs (1-w)N(0,1) + wN(a,1),
                a = 2 sens/sigma, w = q' (symmetric);
with t = P(Bin(n-1, q) >= B) and q' = P(Bin(n, q) >= B+1) * B / (t n).

Lines (comma separated):
  exact,n,q,B,sigma,eps,delta,t,q2
      one release: delta(eps) = max over the two orders of (1-t) delta_poisson + t delta_replace,
      each a closed form in 40-digit mpmath at the loss threshold (found by findroot), with t
      and q' from mpmath's regularised incomplete beta (P(Bin(m, q) >= k) = I_q(k, m-k+1)).
  pld,n,q,B,sigma,count,delta,eps_dpa,eps_at,delta_dpa
      dp_accounting 0.6.0's PLDAccountant (add/remove, value_discretization_interval 1e-4,
      pessimistic connect-the-dots) after compose(TruncatedSubsampledGaussianDpEvent(n, q, B,
      sigma), count): get_epsilon(delta) and get_delta(eps_at).

Run (a throw-away venv outside the repository):
  python3 -m venv /work/venv-events && /work/venv-events/bin/pip install dp-accounting==0.6.0 mpmath
  /work/venv-events/bin/python gen_truncated_gaussian.py > truncated_gaussian.txt
"""
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant as pld
from mpmath import mp, mpf, exp, log, ncdf, findroot, betainc

mp.dps = 40


def sf(m, q, k):
    """P(Bin(m, q) >= k)."""
    if k <= 0:
        return mpf(1)
    if k > m:
        return mpf(0)
    return betainc(k, m - k + 1, 0, q, regularized=True)


def weights(n, q, b):
    q = mpf(q)
    t = sf(n - 1, q, b)
    if t == 0:
        return t, mpf(0)
    return t, sf(n, q, b + 1) * b / (t * n)


def poisson_deltas(q, a1, eps):
    q, e = mpf(q), mpf(eps)
    # remove: (1-q)N(0) + qN(a1) vs N(0); loss increasing; threshold e^{a1 z - a1^2/2} = (e^eps - 1 + q)/q
    z = (log((exp(e) - 1 + q) / q) + a1**2 / 2) / a1
    rem = (1 - q) * (1 - ncdf(z)) + q * (1 - ncdf(z - a1)) - exp(e) * (1 - ncdf(z))
    # add: N(0) vs the mixture; loss < -eps for z < z2, e^{a1 z2 - a1^2/2} = (e^-eps - 1 + q)/q
    r = exp(-e) - 1 + q
    if r <= 0:
        add = mpf(0)
    else:
        z2 = (log(r / q) + a1**2 / 2) / a1
        add = ncdf(z2) - exp(e) * ((1 - q) * ncdf(z2) + q * ncdf(z2 - a1))
    return rem, add


def replace_delta(w, a, eps):
    w, e = mpf(w), mpf(eps)
    g = lambda z: log(1 - w + w * exp(a * z - a**2 / 2))
    loss = lambda z: g(-z) - g(z)
    lo, hi = mpf(-60), mpf(60)
    for _ in range(400):
        mid = (lo + hi) / 2
        if loss(mid) > e:
            lo = mid
        else:
            hi = mid
    z = (lo + hi) / 2
    p = (1 - w) * ncdf(z) + w * ncdf(z + a)
    qq = (1 - w) * ncdf(z) + w * ncdf(z - a)
    return p - exp(e) * qq


def exact_delta(n, q, b, sigma, eps):
    t, w = weights(n, q, b)
    a1 = 1 / mpf(sigma)
    rem, add = poisson_deltas(q, a1, eps)
    rep = replace_delta(w, 2 * a1, eps) if t > 0 else mpf(0)
    return max((1 - t) * rem + t * rep, (1 - t) * add + t * rep), t, w


CASES = [
    (60000, 0.01, 600, 1.0),
    (10000, 0.01, 120, 1.1),
    (1000, 0.1, 100, 2.0),
    (100, 0.5, 60, 1.0),
]

print("# truncated Poisson-subsampled Gaussian references: gen_truncated_gaussian.py (mpmath 40 digits, dp_accounting 0.6.0)")
for n, q, b, sigma in CASES:
    for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
        d, t, w = exact_delta(n, q, b, sigma, eps)
        print(f"exact,{n},{q!r},{b},{sigma!r},{eps!r},{mp.nstr(d, 25)},{mp.nstr(t, 25)},{mp.nstr(w, 25)}")
for (n, q, b, sigma), count, delta, eps_at in [
    (CASES[0], 1000, 1e-5, 2.0),
    (CASES[1], 1000, 1e-5, 1.0),
    (CASES[2], 100, 1e-6, 1.0),
    (CASES[3], 10, 1e-5, 3.0),
]:
    acc = pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(dp_accounting.dp_event.TruncatedSubsampledGaussianDpEvent(n, q, b, sigma), count)
    print(f"pld,{n},{q!r},{b},{sigma!r},{count},{delta!r},{float(acc.get_epsilon(delta))!r},{eps_at!r},{float(acc.get_delta(eps_at))!r}")
