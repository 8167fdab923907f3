#!/usr/bin/env python3
"""Reference points of the plain (unscrambled) Sobol sequence for dpinfer-simulators' `qmc`.

Usage (from the repository root):

    python3 -m venv target/venv-qmc
    target/venv-qmc/bin/pip install scipy
    target/venv-qmc/bin/python crates/simulators/tests/data/sobol_joe_kuo.py \
        > crates/simulators/tests/data/sobol_joe_kuo.txt

SciPy's `scipy.stats.qmc.Sobol` (scramble=False, bits=32) uses Joe & Kuo's direction numbers
`new-joe-kuo-6.21201` and Gray-code order, as `qmc::Sobol` does: an independent implementation
of the same published table. Each line is `index k_1 ... k_32`, the point's coordinates as
integers k_d = x_d * 2^32 (exact). The indices are the first 64 points and, for every bit of
the index, the points around 2^k (so every one of the 32 direction numbers of every dimension
is exercised), and the last point of the sequence.
"""

import scipy
from scipy.stats import qmc

DIM = 32
indices = list(range(64))
for k in range(6, 32):
    indices += [2**k - 1, 2**k, 2**k + 1]
indices += [123456789, 2**32 - 1]

print(f"# scipy {scipy.__version__} qmc.Sobol(d={DIM}, scramble=False, bits=32); index k_1..k_{DIM} (x = k / 2^32)")
for i in indices:
    s = qmc.Sobol(d=DIM, scramble=False, bits=32)
    if i:
        s.fast_forward(i)
    x = s.random(1)[0]
    ks = [int(round(v * 2**32)) for v in x]
    assert all(abs(k / 2**32 - v) == 0 for k, v in zip(ks, x))
    print(i, " ".join(str(k) for k in ks))
