#!/usr/bin/env python3
"""Generates src/ziggurat_normal_tables.rs: the 256-layer ZIGNOR ziggurat for N(0, 1)
(J. A. Doornik 2005, "An improved ziggurat method to generate normal random samples", with his
constants R = 3.6541528853610088, V = 0.00492867323399), the stream-version-2 normal sampler.

The tables are built exactly as the Rand project's `ziggurat_tables.py` builds the tables of
`rand_distr::StandardNormal` (double arithmetic, each value printed with 18 decimals), so our
draws equal rand_distr 0.6's on the same 64-bit stream (tests/suite/normal_v2.rs checks 10^6 draws;
tail draws may differ in the last bits, as we take ln from libm and rand_distr from the
platform). Python's `math.exp` here is the platform's,
and Rand's published table has one entry (F[94]) one ulp away from what glibc gives; this
script keeps Rand's published value for that entry (RAND_PUBLISHED_F94 below) so that the
two samplers agree bit for bit. Every value is also checked against mpmath at 40 digits:
F[i] = exp(-X[i]^2 / 2) to 5e-16 relative and the layer areas equal V to 1e-12 relative.

Run: python3 tools/ziggurat_normal.py > src/ziggurat_normal_tables.rs
"""
import math
from mpmath import mp, mpf, exp

from ziggurat_emit import emit

R = 3.654152885361008796
V = 0.00492867323399
N = 256
# The one entry of Rand's published ZIG_NORM_F that is one ulp away from a glibc regeneration.
RAND_PUBLISHED_F94 = float.fromhex("0x1.a6b7e0b1996dfp-3")


def f(x):
    return math.exp(-x * x / 2.0)


def finv(y):
    return math.sqrt(-2.0 * math.log(y))


X = [0.0] * (N + 1)
X[0] = V / f(R)
X[1] = R
for i in range(2, N):
    X[i] = finv(V / X[i - 1] + f(X[i - 1]))
X[N] = 0.0
F = [f(x) for x in X]
X = [float("%.18f" % x) for x in X]
F = [float("%.18f" % x) for x in F]
assert abs(F[94] - RAND_PUBLISHED_F94) <= math.ulp(F[94])
F[94] = RAND_PUBLISHED_F94

mp.dps = 40
for i in range(N + 1):
    exact = exp(-mpf(X[i]) ** 2 / 2)
    assert abs((mpf(F[i]) - exact) / exact) < 5e-16, i
for i in range(1, N - 1):
    area = mpf(X[i]) * (exp(-mpf(X[i + 1]) ** 2 / 2) - exp(-mpf(X[i]) ** 2 / 2))
    assert abs(area / V - 1) < 1e-12, (i, float(area / V - 1))


emit(
    "ziggurat_normal.py",
    "Ziggurat tables for the standard normal (256 layers, Doornik 2005 ZIGNOR).",
    "NORM",
    "Layer edges X[0..=256] (X[0] = V / f(R), X[1] = R, X[256] = 0).",
    "exp(-X[i]² / 2).",
    X,
    F,
    "Tail start R.",
    R,
)
