#!/usr/bin/env python3
"""High-precision references for the crate's fast `exp` and `sincos` (src/fastexp.rs,
src/fastsincos.rs) and the minimax coefficients of their version-2 polynomials.

Run (mpmath only; from this folder):
    python3 -m venv /tmp/venv-mpmath && /tmp/venv-mpmath/bin/pip install mpmath
    /tmp/venv-mpmath/bin/python gen_transcendental.py > transcendental.txt
    /tmp/venv-mpmath/bin/python gen_transcendental.py --coefficients   # prints the Remez fits

The table is what the Rust unit tests read (never Python). Each line is
    exp <x> <hi> <lo>            e^x      = hi + lo (to 50 digits; hi = e^x rounded to f64)
    sc  <t> <shi> <slo> <chi> <clo>   sin t, cos t likewise
with x, t, hi as the 16 hex digits of the f64 bit pattern and lo as a decimal f64 (the rest
of the exact value: |lo| ≤ half an ulp of hi). Points are a fixed, seeded set: the ranges the
kernels use (exp on [−708, 0], dense near 0 and at every reduction boundary k·ln2/2; sin/cos
on |t| ≤ 8e5, dense on |t| ≤ 50, every quadrant edge k·π/4 ± 0..2 ulp, a geometric sweep).
"""
import random
import struct
import sys

import mpmath as mp

mp.mp.dps = 50


def bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def next_down(v, k=1):
    """v moved k ulps towards −∞ (k may be negative)."""
    for _ in range(abs(k)):
        b = bits(v)
        if k > 0:
            v = from_bits(b + 1) if v < 0 else (from_bits(b - 1) if v > 0 else -5e-324)
        else:
            v = from_bits(b - 1) if v < 0 else (from_bits(b + 1) if v > 0 else 5e-324)
    return v


def split(exact):
    hi = float(exact)  # mpmath rounds to nearest
    lo = float(exact - mp.mpf(hi))
    return hi, lo


def exp_points(rng):
    pts = {0.0, -0.0, -5e-324, -1e-300, -1e-17, -1e-16, -2.0**-53, -2.0**-52, -708.0}
    for i in range(400):
        pts.add(-708.0 * (i + 0.5) / 400)
    for _ in range(250):
        pts.add(-2.0 * rng.random())
    for _ in range(150):
        pts.add(-40.0 * rng.random())
    ln2 = mp.log(2)
    for k in list(range(1, 60)) + [100, 500, 1000, 1020, 2 * 1021]:
        edge = float(-(k * ln2) / 2)
        if edge < -708.0:
            continue
        for d in (-2, -1, 0, 1, 2):
            pts.add(next_down(edge, d))
    return sorted(p for p in pts if -708.0 <= p <= 0.0)


def sincos_points(rng):
    pts = {0.0, -0.0, 5e-324, 1e-300, 1e-16, 2.0**-27, 8.0e5, -8.0e5}
    for _ in range(400):
        pts.add(100.0 * rng.random() - 50.0)
    q = mp.pi / 4
    for k in list(range(-40, 41)) + [1001, -5003, 20001, 400001, 1018591]:
        edge = float(k * q)
        if abs(edge) > 8.0e5:
            continue
        for d in (-2, -1, 0, 1, 2):
            pts.add(next_down(edge, d))
    t = 1e-300
    while t <= 8.0e5:
        pts.add(t)
        pts.add(-t)
        t *= 5.0
    for _ in range(200):
        pts.add(1.6e6 * rng.random() - 8.0e5)
    return sorted(p for p in pts if abs(p) <= 8.0e5)


def table():
    rng = random.Random(20261122)
    out = []
    for x in exp_points(rng):
        hi, lo = split(mp.exp(mp.mpf(x)))
        out.append(f"exp {bits(x):016x} {bits(hi):016x} {lo!r}")
    for t in sincos_points(rng):
        s_hi, s_lo = split(mp.sin(mp.mpf(t)))
        c_hi, c_lo = split(mp.cos(mp.mpf(t)))
        out.append(f"sc {bits(t):016x} {bits(s_hi):016x} {s_lo!r} {bits(c_hi):016x} {c_lo!r}")
    return out


def remez(f, basis, w, a, b, iters=60, grid=3000):
    """Coefficients q minimising max over [a, b] of |w(x) (f(x) − Σ q_i basis_i(x))| (Remez
    exchange on a grid refined by golden-section search); returns (q, max error)."""
    m = len(basis)
    n = m + 1
    xs = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * (j + 0.5) / n) for j in range(n)]
    best = None
    for _ in range(iters):
        A = mp.matrix(n, n)
        rhs = mp.matrix(n, 1)
        for j, x in enumerate(xs):
            for i, phi in enumerate(basis):
                A[j, i] = phi(x)
            A[j, m] = (-1) ** j / w(x)
            rhs[j] = f(x)
        sol = mp.lu_solve(A, rhs)
        q = [sol[i] for i in range(m)]
        e_level = sol[m]

        def err(x, q=q):
            return w(x) * (f(x) - mp.fsum(qi * phi(x) for qi, phi in zip(q, basis)))

        g = [a + (b - a) * mp.mpf(k) / grid for k in range(grid + 1)]
        ev = [err(x) for x in g]
        ext = []
        for k in range(grid + 1):
            v = ev[k]
            if (k == 0 or abs(v) >= abs(ev[k - 1])) and (k == grid or abs(v) >= abs(ev[k + 1])):
                lo, hi = max(a, g[k] - (b - a) / grid), min(b, g[k] + (b - a) / grid)
                for _ in range(50):
                    m1, m2 = lo + (hi - lo) * mp.mpf("0.382"), lo + (hi - lo) * mp.mpf("0.618")
                    if abs(err(m1)) > abs(err(m2)):
                        hi = m2
                    else:
                        lo = m1
                xr = (lo + hi) / 2
                if abs(err(xr)) < abs(v):
                    xr = g[k]
                ext.append((xr, err(xr)))
        alt = []
        for x, v in ext:
            if alt and mp.sign(v) == mp.sign(alt[-1][1]):
                if abs(v) > abs(alt[-1][1]):
                    alt[-1] = (x, v)
            else:
                alt.append((x, v))
        while len(alt) > n:
            alt.pop(0 if abs(alt[0][1]) < abs(alt[-1][1]) else -1)
        mx = max(abs(v) for _, v in ext)
        if best is None or mx < best[1]:
            best = (q, mx)
        if len(alt) < n:
            break
        xs = [x for x, _ in alt]
        if mx <= abs(e_level) * (1 + mp.mpf("1e-6")):
            break
    return best


def rounded_error(f, coeffs, powers, w, a, b, grid=20000):
    """max |w (f − Σ c_i x^p_i)| with the coefficients rounded to f64, evaluated exactly."""
    cs = [mp.mpf(float(c)) for c in coeffs]
    return max(
        abs(w(x) * (f(x) - mp.fsum(c * x ** p for c, p in zip(cs, powers))))
        for x in (a + (b - a) * mp.mpf(k) / grid for k in range(grid + 1))
    )


def estrin_rounding(c):
    """First-order bound, in units of u = 2^-53 relative to p, on the rounding error of
    src/fastexp.rs's Estrin evaluation of 1 + r + Σ c_p r^p: Σ over operations of
    |result| · |∂p/∂result|, maximised over a grid of |r| ≤ ln2/2."""
    e = dict(zip(range(2, 11), c))
    a = float(mp.log(2) / 2) * (1 + 1e-6)
    worst = 0.0
    for i in range(-20000, 20001):
        r = a * i / 20000
        r2 = r * r
        r4 = r2 * r2
        r8 = r4 * r4
        a0, a1, a2 = 1 + r, e[2] + e[3] * r, e[4] + e[5] * r
        a3, a4 = e[6] + e[7] * r, e[8] + e[9] * r
        b0, b1, b2 = a0 + a1 * r2, a2 + a3 * r2, a4 + e[10] * r2
        p = (b0 + b1 * r4) + b2 * r8
        terms = [abs(a0), abs(e[3] * r) * r2, abs(a1) * r2, abs(e[5] * r) * r4, abs(a2) * r4,
                 abs(e[7] * r) * r4 * r2, abs(a3) * r4 * r2, abs(e[9] * r) * r8, abs(a4) * r8,
                 abs(a1 * r2), abs(b0), abs(a3 * r2) * r4, abs(b1) * r4, abs(e[10] * r2) * r8,
                 abs(b2) * r8, abs(b1 * r4), abs(b0 + b1 * r4), abs(b2 * r8), abs(p),
                 r2 * abs(a1 + a3 * r4 + e[10] * r8 + 2 * b1 * r2 + 4 * b2 * r2 ** 3),
                 r4 * abs(b1 + 2 * b2 * r4), r8 * abs(b2)]
        worst = max(worst, sum(terms) / p)
    return worst


def coefficients():
    """The version-2 polynomials, with their approximation error (real arithmetic, f64
    coefficients); the rounding errors of evaluation are bounded in the Rust module docs."""
    a = mp.log(2) / 2 * (1 + mp.mpf("1e-6"))  # |r| ≤ ln2/2 plus the reduction's slop
    powers = list(range(2, 11))
    q, _ = remez(lambda r: mp.exp(r) - 1 - r, [lambda r, p=p: r ** p for p in powers],
                 lambda r: 1 / mp.exp(r), -a, a)
    e = rounded_error(lambda r: mp.exp(r) - 1 - r, q, powers, lambda r: 1 / mp.exp(r), -a, a)
    print(f"exp: e^r ≈ 1 + r + Σ_(p=2..10) c_p r^p on |r| ≤ ln2/2, relative error {mp.nstr(e, 4)}")
    for p, c in zip(powers, q):
        print(f"  c{p} = {float(c)!r}")
    print(f"  Estrin evaluation in f64: rounding ≤ {estrin_rounding([float(c) for c in q]):.3f} u "
          "relative (first-order running-error bound)")
    b = mp.pi / 4 * (1 + mp.mpf("1e-6"))
    powers = [3, 5, 7, 9, 11, 13]
    q, _ = remez(lambda r: mp.sin(r) - r, [lambda r, p=p: r ** p for p in powers],
                 lambda r: 1, mp.mpf(0), b)
    e = rounded_error(lambda r: mp.sin(r) - r, q, powers, lambda r: 1, mp.mpf(0), b)
    print(f"sin: r + Σ s_p r^p on |r| ≤ π/4, absolute error {mp.nstr(e, 4)}")
    for p, c in zip(powers, q):
        print(f"  s{p} = {float(c)!r}")
    powers = [2, 4, 6, 8, 10, 12]
    q, _ = remez(lambda r: mp.cos(r) - 1, [lambda r, p=p: r ** p for p in powers],
                 lambda r: 1, mp.mpf(0), b)
    e = rounded_error(lambda r: mp.cos(r) - 1, q, powers, lambda r: 1, mp.mpf(0), b)
    print(f"cos: 1 + Σ c_p r^p on |r| ≤ π/4, absolute error {mp.nstr(e, 4)}")
    for p, c in zip(powers, q):
        print(f"  c{p} = {float(c)!r}")


if __name__ == "__main__":
    if "--coefficients" in sys.argv:
        coefficients()
    else:
        print("\n".join(table()))
