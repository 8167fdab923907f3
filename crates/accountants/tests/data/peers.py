#!/usr/bin/env python3
"""Cross-checks golden.txt against peer libraries and writes peers.txt.

Peers: dp_accounting (Google), opacus (its pure-numpy RDP module, imported from the wheel
without torch), autodp, prv_accountant, opendp. Each line of peers.txt is
    peer  kind  params...  peer_value  mpmath_value  rel_err
Disagreements above 1e-6 relative are listed at the end with a short explanation.

Run:  python3 peers.py [path/to/opacus-src] > peers.txt
"""
import math
import sys
import warnings

warnings.filterwarnings("ignore")
import logging

logging.disable(logging.CRITICAL)

golden = []
for line in open(__file__.rsplit("/", 1)[0] + "/golden.txt"):
    if line.startswith("#") or not line.strip():
        continue
    parts = line.split()
    golden.append((parts[0], [float(x) for x in parts[1:-1]], float(parts[-1])))

rows = []


def row(peer, kind, params, val, want):
    rel = abs(val - want) / abs(want) if want != 0 and val == val else (0.0 if val == want else float("nan"))
    rows.append((peer, kind, params, val, want, rel))


# dp_accounting
try:
    from dp_accounting.rdp import rdp_privacy_accountant as dpa

    for kind, p, want in golden:
        if kind == "pg_rdp":
            q, s, a = p
            v = float(dpa._compute_rdp_poisson_subsampled_gaussian(q, s, [a])[0])
            row("dp_accounting", kind, p, v, want)
except Exception as e:  # pragma: no cover
    print("# dp_accounting unavailable:", e)

# opacus (numpy-only module)
try:
    if len(sys.argv) > 1:
        sys.path.insert(0, sys.argv[1])
    from opacus.accountants.analysis import rdp as orr

    for kind, p, want in golden:
        if kind == "pg_rdp":
            q, s, a = p
            with warnings.catch_warnings():
                v = float(orr.compute_rdp(q=q, noise_multiplier=s, steps=1, orders=[a])[0])
            row("opacus", kind, p, v, want)
except Exception as e:  # pragma: no cover
    print("# opacus unavailable:", e)

# autodp: exact (analytical) Gaussian = PLD with mu = 1/(2 sigma^2)
try:
    from autodp import dp_bank

    for kind, p, want in golden:
        if kind == "pld_delta":
            mu, eps = p
            if mu < 1e-6 or mu > 1e3 or eps > 1000:
                continue
            sigma = 1 / math.sqrt(2 * mu)
            v = math.exp(dp_bank.get_logdelta_ana_gaussian(sigma, eps))
            row("autodp", kind, p, v, want)
except Exception as e:  # pragma: no cover
    print("# autodp unavailable:", e)

# prv_accountant: eps(delta) for one Gaussian with sigma = 1/sqrt(2 mu) (returns lower,
# estimate, upper; the upper value is compared)
try:
    from prv_accountant import Accountant

    for kind, p, want in golden:
        if kind == "pld_eps":
            mu, delta = p
            if not (0.01 <= mu <= 2 and delta >= 1e-10 and want > 0):
                continue
            sigma = 1 / math.sqrt(2 * mu)
            acc = Accountant(noise_multiplier=sigma, sampling_probability=1.0, delta=delta,
                             eps_error=1e-4, max_compositions=1)
            lo, est, hi = acc.compute_epsilon(num_compositions=1)
            row("prv_accountant(upper)", kind, p, float(hi), want)
except Exception as e:  # pragma: no cover
    print("# prv_accountant unavailable:", e)

# opendp: zCDP -> approx DP conversion
try:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for kind, p, want in golden:
        if kind == "zcdp_eps":
            rho, delta = p
            space = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
            m = dp.m.make_gaussian(*space, scale=1 / math.sqrt(2 * rho))
            m2 = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(m), delta)
            eps, _ = m2.map(1.0)
            row("opendp", kind, p, float(eps), want)
except Exception as e:  # pragma: no cover
    print("# opendp unavailable:", e)

print("# peer cross-check of golden.txt; columns: peer kind params peer_value mpmath rel_err")
bad = []
for peer, kind, p, v, want, rel in rows:
    print(peer, kind, " ".join(repr(x) for x in p), repr(v), repr(want), repr(rel))
    if not (rel <= 1e-6):
        bad.append((peer, kind, p, v, want, rel))
print("# disagreements (> 1e-6 relative or NaN):", len(bad))
for peer, kind, p, v, want, rel in bad:
    print("#  ", peer, kind, p, "peer", v, "mpmath", want, "rel", rel)
