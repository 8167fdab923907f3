"""Reference log densities for the priors in `prior/univariate.rs`, with mpmath at 50 digits.

Run: python3 -m venv /tmp/mp && /tmp/mp/bin/pip install mpmath==1.4.1 &&
     /tmp/mp/bin/python univariate_priors.py > univariate_priors.txt
Columns: dist p1 p2 p3 p4 x ln_pdf (p3, p4 unused = 0 except for the truncated normal).
"""
from mpmath import mp, mpf, log, loggamma, erfc, sqrt, pi, inf

mp.dps = 50


def ln_phi_tail(a, b):
    # ln(Phi(b) - Phi(a)) with erfc, exact at 50 digits even far in a tail.
    phi = lambda x: erfc(-x / sqrt(2)) / 2 if x != -inf else mpf(0)
    sf = lambda x: erfc(x / sqrt(2)) / 2 if x != inf else mpf(0)
    if a >= 0:
        return log(sf(a) - sf(b))
    return log(phi(b) - phi(a))


rows = []
for k, r in [(3, 2), (0.5, 1), (0.01, 0.3), (250, 4), (1, 1)]:
    for x in [1e-3, 0.5, 1.5, 7.25, 60.0]:
        k_, r_, x_ = mpf(k), mpf(r), mpf(x)
        v = k_ * log(r_) - loggamma(k_) + (k_ - 1) * log(x_) - r_ * x_
        rows.append(("gamma", k, r, 0, 0, x, v))
for a, b in [(2, 3), (0.5, 0.5), (0.05, 2), (300, 40), (1, 1)]:
    for x in [1e-6, 0.03, 0.3, 0.75, 0.999]:
        a_, b_, x_ = mpf(a), mpf(b), mpf(x)
        v = loggamma(a_ + b_) - loggamma(a_) - loggamma(b_) + (a_ - 1) * log(x_) + (b_ - 1) * log(1 - x_)
        rows.append(("beta", a, b, 0, 0, x, v))
for lam in [2, 1e-3, 50]:
    for x in [0, 0.7, 12.5]:
        v = log(mpf(lam)) - mpf(lam) * mpf(x)
        rows.append(("exponential", lam, 0, 0, 0, x, v))
for m, s, lo, hi, xs in [
    (0, 1, 0, inf, [0, 1, 3]),
    (0.5, 2, -1, 2, [-1, 0, 1.9]),
    (0, 1, 40, inf, [40, 40.5, 45]),
    (0, 1, -inf, -30, [-30, -31]),
    (3, 0.1, 2.5, 2.6, [2.5, 2.55]),
    (-2, 5, -1e-3, 1e-3, [0]),
]:
    for x in xs:
        m_, s_, x_ = mpf(m), mpf(s), mpf(x)
        a = (mpf(lo) - m_) / s_ if lo != -inf else -inf
        b = (mpf(hi) - m_) / s_ if hi != inf else inf
        z = (x_ - m_) / s_
        v = -z * z / 2 - log(s_) - log(sqrt(2 * pi)) - ln_phi_tail(a, b)
        rows.append(("truncated-normal", m, s, lo, hi, x, v))

for r in rows:
    print(r[0], *[repr(float(t)) for t in r[1:6]], mp.nstr(r[6], 20))
