#!/usr/bin/env python3
"""Generates src/ziggurat_tables.rs: the 256-layer ziggurat for Exp(1) (Marsaglia & Tsang 2000,
"The ziggurat method for generating random variables", J. Stat. Softw. 5(8), with their
constants r = 7.69711747013104972, v = 0.0039496598225815571993).

X[0] = v / f(r) (pseudo-width of the base layer incl. the tail), X[1] = r,
X[i+1] = f^{-1}(v / X[i] + f(X[i])) for i = 1..254, X[256] = 0; F[i] = f(X[i]) = exp(-X[i]).
Computed with mpmath at 50 digits, rounded to f64.
Run: python3 tools/ziggurat_exp.py > src/ziggurat_tables.rs
"""
from mpmath import mp, mpf, exp, log

from ziggurat_emit import emit

mp.dps = 50
r = mpf('7.69711747013104972')
v = mpf('0.0039496598225815571993')
X = [mpf(0)] * 257
X[0] = v / exp(-r)
X[1] = r
for i in range(1, 256):
    y = v / X[i] + exp(-X[i])
    X[i + 1] = -log(y) if y < 1 else mpf(0)
X[256] = mpf(0)
F = [exp(-x) for x in X]

emit(
    "ziggurat_exp.py",
    "Ziggurat tables for the standard exponential (256 layers).",
    "EXP",
    "Layer edges X[0..=256] (X[1] = r, X[256] = 0).",
    "exp(-X[i]).",
    [float(x) for x in X],
    [float(x) for x in F],
    "Tail start r.",
    float(r),
)
