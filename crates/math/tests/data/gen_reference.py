#!/usr/bin/env python3
"""Generate high-precision reference values for dpinfer-math.

Usage (from the repository root):

    python3 -m venv target/venv-math
    target/venv-math/bin/pip install mpmath
    target/venv-math/bin/python crates/math/tests/data/gen_reference.py \
        > crates/math/tests/data/reference.txt

Every argument is an exact IEEE double (printed with 17 significant digits after the decimal
point, which round-trips), and every reference value is mpmath evaluated at that exact double
with at least 50 significant digits (more where the formula cancels), then written as an
unevaluated double-double `hi lo` (hi = nearest double, lo = double nearest the remainder), so
the Rust test measures its error against ~106 bits. The last column `kappa` is the absolute
condition scale  sum_i |x_i * df/dx_i|  at the point (0 for integer inputs): an error of
`eps * max(|f|, kappa)` is what a backward-stable evaluation is allowed.

Line format (whitespace separated):

    <function> <arg> [<arg> ...] ; <hi> <lo> <kappa>

The case points are drawn from a seeded generator, so the output is reproducible.
"""

import math
import random
import sys

import mpmath as mp
from mpmath import mpf

DPS = 50
mp.mp.dps = DPS
RNG = random.Random(20261122)

SQRT_PI = mp.sqrt(mp.pi)
MIN_SUB = 5e-324
OUT = []


def fmt(x):
    """A double with 17 digits after the point (exact round trip)."""
    if isinstance(x, int):
        return str(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return "%.17e" % x


def emit(name, args, value, kappa):
    value = mpf(value)
    hi = float(value)
    if math.isinf(hi) or math.isnan(hi):
        return  # overflowing references are checked by the property tests instead
    lo = float(value - mpf(hi))
    kappa = float(abs(mpf(kappa)))
    OUT.append(
        "%s %s ; %s %s %.6e" % (name, " ".join(fmt(a) for a in args), fmt(hi), fmt(lo), kappa)
    )


def linspace(a, b, n):
    return [a + (b - a) * i / (n - 1) for i in range(n)]


def logspace(a, b, n):
    return [10.0 ** (a + (b - a) * i / (n - 1)) for i in range(n)]


def around(x, k=3):
    """x and its k neighbouring doubles on either side."""
    out = [x]
    up = down = x
    for _ in range(k):
        up = math.nextafter(up, math.inf)
        down = math.nextafter(down, -math.inf)
        out += [up, down]
    return out


def uniform(a, b, n):
    return [RNG.uniform(a, b) for _ in range(n)]


def dedup(xs):
    seen = set()
    out = []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


# ---------------------------------------------------------------- reference functions


def ncdf(x):
    return mp.ncdf(x)


def npdf(x):
    return mp.npdf(x)


def erfcx(x):
    if x > 1e6:
        s = mpf(1)
        t = mpf(1)
        k = 1
        while True:
            t *= -(2 * k - 1) / (2 * x * x)
            s += t
            k += 1
            if abs(t) < mpf(10) ** -70:
                break
        return s / (x * SQRT_PI)
    return mp.exp(x * x) * mp.erfc(x)


def ln_ncdf(x):
    if x < -1e6:
        return mp.log(erfcx(-x / mp.sqrt(2)) / 2) - x * x / 2
    if x > 0:  # log1p of the (exact) upper tail: no rounding of 1 - tiny
        return mp.log1p(-mp.ncdf(-x))
    return mp.log(mp.ncdf(x))


def log1mexp(x):
    if x < -1:  # log1p of the exact tiny e^x: no rounding of 1 - tiny
        return mp.log1p(-mp.exp(x))
    return mp.log(-mp.expm1(x))


# ---------------------------------------------------------------- normal family


def gen_norm_cdf():
    xs = linspace(-38.5, 9.0, 120)
    xs += uniform(-38.5, 9.0, 60)
    xs += uniform(-3.0, 3.0, 20)
    xs += around(-1.0) + around(-37.5) + around(-26.5 * math.sqrt(2)) + around(0.0, 1)
    xs += [1e-300, -1e-300, 1e-17, -1e-17, 1e-8, -1e-8, 0.5, -0.5, -1.5, -38.0, -38.4, 8.3, 8.5]
    for x in dedup(xs):
        X = mpf(x)
        emit("norm_cdf", [x], ncdf(X), X * npdf(X))
        emit("norm_sf", [-x], ncdf(X), X * npdf(X))


def gen_norm_pdf():
    xs = linspace(-38.6, 38.6, 160) + uniform(-40.0, 40.0, 40)
    xs += [0.0, 1e-300, 1e-10, -1e-10, 1.0, -1.0, 37.0, 38.5]
    for x in dedup(xs):
        X = mpf(x)
        emit("norm_pdf", [x], npdf(X), X * X * npdf(X))


def gen_ln_norm_cdf():
    xs = [-(10.0**u) for u in linspace(-300.0, 5.0, 120)]
    xs += linspace(-40.0, 40.0, 100) + uniform(-60.0, 10.0, 40)
    xs += around(-1.0) + around(0.0, 1) + [-1e5, 1e-300, 5.0, 38.0, 40.0]
    xs += [-(10.0**u) for u in linspace(5.0, 154.0, 16)] + [-1.8e154]
    for x in dedup(xs):
        X = mpf(x)
        v = ln_ncdf(X)
        # d ln Phi / dx = phi/Phi; for very negative x use the mills ratio form.
        if x < -1e6:
            d = -X
        else:
            d = npdf(X) / ncdf(X)
        emit("ln_norm_cdf", [x], v, X * d)


def gen_norm_quantile():
    ps = [10.0**u for u in linspace(-323.0, -0.31, 120)]
    ps += [1.0 - 10.0**-u for u in linspace(0.31, 15.9, 50)]
    ps += linspace(0.01, 0.99, 50) + uniform(0.0, 1.0, 30)
    ps += around(0.075) + around(0.925) + around(0.5, 2)
    ps += [MIN_SUB, 1e-320, 1e-310, 2.2250738585072014e-308, 1e-300, 1 - 2.0**-53, 1 - 1e-16]
    ps += [0.5 + 1e-17, 0.5 - 1e-17, 0.075 - 1e-3, 0.925 + 1e-3, 0.025, 0.975]
    for p in dedup(ps):
        if not 0.0 < p < 1.0:
            continue
        P = mpf(p)
        x = lower_quantile(1 - P) if p > 0.5 else lower_quantile(P)
        if p > 0.5:
            x = -x
        emit("norm_quantile", [p], x, P / npdf(x))


def lower_quantile(P):
    """Phi^-1(P) for 0 < P <= 1/2 by Newton on ln Phi(t) = ln P (ln Phi is concave, so Newton
    from the right converges monotonically)."""
    lp = mp.log(P)
    t = mpf(0)
    for _ in range(200):
        step = (ln_ncdf(t) - lp) * ncdf(t) / npdf(t)
        t -= step
        if abs(step) < mpf(10) ** (-DPS + 8) * (1 + abs(t)):
            for _ in range(2):
                t -= (ln_ncdf(t) - lp) * ncdf(t) / npdf(t)
            return t
    raise RuntimeError("quantile did not converge for p=%s" % P)


def gen_erfcx():
    xs = linspace(-26.6, 30.0, 120) + uniform(-5.0, 30.0, 40)
    xs += [10.0**u for u in linspace(-300.0, 300.0, 50)]
    xs += [-(10.0**u) for u in linspace(-300.0, 1.4, 20)]
    xs += around(26.0) + around(0.0, 1) + around(0.5) + [1e154, 1.1e154, 1e300, 1.7e308]
    for x in dedup(xs):
        X = mpf(x)
        v = erfcx(X)
        emit("erfcx", [x], v, X * (2 * X * v - 2 / SQRT_PI))


def gen_erfc():
    xs = linspace(-6.0, 26.5, 150) + uniform(-3.0, 27.0, 50)
    xs += [0.0, 1e-300, -1e-300, 0.84375, 1.25, 2.857142857142857, 6.0]
    for x in dedup(xs):
        X = mpf(x)
        emit("erfc", [x], mp.erfc(X), X * 2 / SQRT_PI * mp.exp(-X * X))


def gen_norm_cdf_diff():
    pairs = [(RNG.uniform(-38, 9), RNG.uniform(-38, 9)) for _ in range(80)]
    for _ in range(60):  # straddling zero, small: erf route
        t = 10.0 ** RNG.uniform(-12, 0.5)
        pairs.append((t * RNG.uniform(0.1, 1), -t * RNG.uniform(0.1, 1)))
    for _ in range(40):  # both in the upper tail
        a = RNG.uniform(0, 38)
        pairs.append((a, a + RNG.expovariate(1.0)))
    for _ in range(30):  # both in the lower tail, close
        a = RNG.uniform(-38, -1)
        pairs.append((a, a - 10.0 ** RNG.uniform(-8, 0)))
    for a, b in pairs:
        with mp.workdps(DPS + 40):
            A, B = mpf(a), mpf(b)
            if a >= 0 and b >= 0:
                v = ncdf(-B) - ncdf(-A)
            else:
                v = ncdf(A) - ncdf(B)
            emit("norm_cdf_diff", [a, b], v, abs(A * npdf(A)) + abs(B * npdf(B)))


def gen_norm_cdf_sub_exp():
    """Phi(a) - e^eps Phi(b): the Gaussian mechanism's privacy profile (a - b = mu,
    a = mu/2 - eps/mu) and random triples."""
    cases = []
    for mu in logspace(-3.0, 3.0, 19):
        for eps in [0.0, 0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 50.0, 300.0, 3000.0]:
            cases.append((mu / 2 - eps / mu, -mu / 2 - eps / mu, eps))
    for _ in range(60):
        a = RNG.uniform(-40, 10)
        cases.append((a, a - RNG.expovariate(0.5), RNG.uniform(0, 20)))
    neg = random.Random(7)  # own stream, so the other functions' points stay put
    for _ in range(30):  # negative eps (PLD evaluations at eps < 0)
        a = neg.uniform(-30, 5)
        cases.append((a, a - neg.expovariate(0.5), -neg.uniform(0, 40)))
    for a, b, eps in cases:
        emit_norm_cdf_sub_exp(a, b, eps)


def emit_norm_cdf_sub_exp(a, b, eps):
    """Phi(a) - e^eps Phi(b) at one point and, where positive, its log (same kappa / value)."""
    with mp.workdps(DPS + 40):
        A, B, E = mpf(a), mpf(b), mpf(eps)
        pb = ncdf(B)
        v = ncdf(A) - mp.exp(E) * pb
        kap = abs(A * npdf(A)) + abs(B * mp.exp(E) * npdf(B)) + abs(E * mp.exp(E) * pb)
        emit("norm_cdf_sub_exp", [a, b, eps], v, kap)
        if v > 0.5:  # log1p of the exact complement: no rounding of 1 - tiny
            lv = mp.log1p(-(ncdf(-A) + mp.exp(E) * pb))
            emit("ln_norm_cdf_sub_exp", [a, b, eps], lv, kap / v)
        elif v > 0:
            emit("ln_norm_cdf_sub_exp", [a, b, eps], mp.log(v), kap / v)


# ---------------------------------------------------------------- log space


def lae(a, b):
    A, B = mpf(a), mpf(b)
    hi, lo = max(A, B), min(A, B)
    return hi + mp.log1p(mp.exp(lo - hi))


def weights(xs):
    m = max(mpf(x) for x in xs)
    es = [mp.exp(mpf(x) - m) for x in xs]
    s = sum(es)
    return [e / s for e in es]


def gen_log_add_exp():
    pairs = []
    for _ in range(80):
        pairs.append((RNG.uniform(-50, 50), RNG.uniform(-50, 50)))
    for _ in range(40):
        a = RNG.uniform(-1000, 1000)
        pairs.append((a, a - RNG.expovariate(0.1)))
    for _ in range(40):  # results near zero: a, b around -ln 2
        pairs.append((-math.log(2) + RNG.uniform(-1e-3, 1e-3), -math.log(2) + RNG.uniform(-1e-3, 1e-3)))
    for s in [1e-300, 1e-10, 1.0, 1e10, 1e300, -1e300, -1e10]:
        pairs += [(s, s), (s, -s), (s, 0.0)]
    pairs += [(0.0, -40.0), (0.0, -37.0), (-745.0, -745.0), (700.0, 709.0)]
    for _ in range(40):
        a = RNG.uniform(-5, 5)
        pairs.append((a, a + RNG.uniform(-1e-12, 1e-12)))
    for a, b in pairs:
        w = weights([a, b])
        emit("log_add_exp", [a, b], lae(a, b), abs(a) * w[0] + abs(b) * w[1])


def gen_log_sub_exp():
    pairs = []
    for _ in range(80):
        a, b = RNG.uniform(-50, 50), RNG.uniform(-50, 50)
        pairs.append((max(a, b), min(a, b)))
    for _ in range(40):
        a = RNG.uniform(-1000, 1000)
        pairs.append((a, a - RNG.expovariate(0.1)))
    for _ in range(40):  # cancellation: b just below a
        a = RNG.uniform(-100, 100)
        pairs.append((a, a - 10.0 ** RNG.uniform(-14, 0)))
    for _ in range(20):  # result near zero: ln(e^a - e^b) ~ 0
        b = RNG.uniform(-5, 5)
        a = float(mp.log(1 + mp.exp(mpf(b)))) + RNG.uniform(-1e-6, 1e-6)
        if a > b:
            pairs.append((a, b))
    for a in [1e300, 1e10, 1.0, 0.0, -1.0, -1e10, -1e300]:
        pairs += [(a, math.nextafter(a, -math.inf)), (a, a - 1.0), (a, a - 100.0), (a, -math.inf)]
    pairs += [(0.0, -1e-300), (1e-300, 0.0), (0.0, -math.log(2)), (0.0, -40.0), (0.0, -750.0)]
    for a, b in pairs:
        if not a > b:
            continue
        A, B = mpf(a), mpf(b)
        v = A + log1mexp(B - A)
        if b == -math.inf:
            kap = abs(a)
        else:
            ea, eb = mp.exp(A - A), mp.exp(B - A)
            kap = (abs(A) * ea + abs(B) * eb) / -mp.expm1(B - A)
        emit("log_sub_exp", [a, b], v, kap)


def gen_log1mexp():
    xs = [-(10.0**u) for u in linspace(-320.0, 3.0, 150)]
    xs += [-u for u in uniform(0.0, 5.0, 30)] + [-u for u in uniform(5.0, 800.0, 20)]
    xs += around(-math.log(2)) + [-MIN_SUB, -1e-300, -1.0, -745.0, -746.0, -1e300]
    for x in dedup(xs):
        if not x < 0:
            continue
        X = mpf(x)
        emit("log1mexp", [x], log1mexp(X), X * mp.exp(X) / (-mp.expm1(X)))


def gen_logsumexp():
    vecs = []
    for _ in range(120):
        n = RNG.randint(1, 20)
        scale = 10.0 ** RNG.uniform(-3, 3)
        c = RNG.uniform(-1000, 1000)
        vecs.append([c + RNG.gauss(0, scale) for _ in range(n)])
    for _ in range(40):
        n = RNG.randint(2, 12)
        vecs.append([RNG.uniform(-30, 30) for _ in range(n)])
    for _ in range(20):  # results near zero
        n = RNG.randint(2, 10)
        base = -math.log(n)
        vecs.append([base + RNG.uniform(-1e-4, 1e-4) for _ in range(n)])
    for _ in range(20):  # huge spread including -inf
        n = RNG.randint(2, 10)
        v = [RNG.uniform(-1e300, 1e300) for _ in range(n)] + [-math.inf]
        RNG.shuffle(v)
        vecs.append(v)
    vecs += [[5.0] * 7, [-1e300] * 3, [1e300, 1e300], [0.0] * 1000, [-745.0, -745.0], [709.0, 709.0]]
    vecs += [[-math.inf, 3.0], [1.0, 2.0, 3.0]]
    for v in vecs:
        i = max(range(len(v)), key=lambda j: v[j])
        m = mpf(v[i])
        rest = sum(mp.exp(mpf(x) - m) for j, x in enumerate(v) if j != i)
        w = weights(v)
        kap = sum(abs(mpf(x)) * wi for x, wi in zip(v, w) if x != -math.inf)
        emit("logsumexp", v, m + mp.log1p(rest), kap)


def gen_softplus():
    xs = linspace(-40.0, 40.0, 100) + uniform(-800.0, 800.0, 30)
    xs += [10.0**u for u in linspace(-300.0, 300.0, 40)]
    xs += [-(10.0**u) for u in linspace(-300.0, 2.87, 40)]
    xs += around(0.0, 1) + [-745.0, -740.0, 36.0, 37.0, 710.0, 1.7e308]
    for x in dedup(xs):
        X = mpf(x)
        sp = mp.log1p(mp.exp(X)) if X < 0 else X + mp.log1p(mp.exp(-X))
        sig = 1 / (1 + mp.exp(-X))
        emit("softplus", [x], sp, X * sig)
        emit("log_logistic", [-x], -sp, X * sig)


# ---------------------------------------------------------------- gamma and binomials


def gen_ln_gamma():
    xs = [10.0**u for u in linspace(-300.0, 300.0, 80)]
    xs += linspace(0.05, 30.0, 80) + uniform(0.0, 200.0, 20) + uniform(0.5, 3.0, 20)
    xs += [-0.5, -1.5, -2.5, -10.3, -100.7, -3.999, 1.0, 2.0, 0.9, 1.1, 1.9, 2.1]
    for x in dedup(xs):
        with mp.workdps(DPS + 10):
            X = mpf(x)
            v = mp.log(abs(mp.gamma(X))) if x < 0 else mp.loggamma(X)
            emit("ln_gamma", [x], v, X * mp.digamma(X))


def ln_binom_mp(n, k):
    """ln C(n, k) by log-gammas at a working precision that absorbs their cancellation."""
    mag = max(abs(n), 1.0)
    extra = int(math.log10(mag * (1.0 + abs(math.log(mag))))) + 20
    with mp.workdps(DPS + extra):
        N, K = mpf(n), mpf(k)
        v = mp.loggamma(N + 1) - mp.loggamma(K + 1) - mp.loggamma(N - K + 1)
        dn = mp.digamma(N + 1) - mp.digamma(N - K + 1)
        dk = -mp.digamma(K + 1) + mp.digamma(N - K + 1)
        kap = abs(N * dn) + abs(K * dk)
        return +v, +kap


def gen_ln_binomial():
    cases = []
    for n in range(0, 31):
        for k in range(0, n + 1, max(1, n // 6)):
            cases.append((float(n), float(k)))
    for _ in range(60):
        n = 10.0 ** RNG.uniform(0, 8)
        k = n * RNG.random()
        cases.append((n, k))
    for n in [1e3, 1e6, 1e10, 1e15, 1e20, 1e100, 1e300]:
        for k in [0.5, 1.0, 2.0, 3.5, 10.0, 1e3, 1e7, n / 2, n / 3, n - 1, n - 10, n * 0.999]:
            if 0 <= k <= n:
                cases.append((n, k))
    for n in [10.5, 3.25, 100.1, 7.7]:
        for k in [0.1, 1.0, 2.5, n / 2, n - 0.5]:
            cases.append((n, k))
    for _ in range(40):  # small real k (C close to 1) and small real n
        n = 10.0 ** RNG.uniform(-1, 6)
        cases.append((n, min(n, 10.0 ** RNG.uniform(-12, 0))))
    for _ in range(20):
        n = RNG.uniform(1, 20)
        cases.append((n, RNG.uniform(1, n - 1) if n > 2 else n / 3))
    cases += [(10.0, 1e-10), (1e6, 1e-3), (5.0, 4.9999), (1e15, 5e14 + 1.0), (1e6, 5e5 - 1)]
    for n, k in cases:
        if not 0 <= k <= n:
            continue
        v, kap = ln_binom_mp(n, k)
        emit("ln_binomial", [n, k], v, kap)


def gen_ln_binomial_int():
    cases = []
    for n in range(0, 70, 3):
        for k in range(0, n + 1, max(1, n // 5)):
            cases.append((n, k))
    for _ in range(60):
        n = int(10.0 ** RNG.uniform(0, 19))
        cases.append((n, RNG.randint(0, n)))
    for _ in range(40):
        n = int(10.0 ** RNG.uniform(0, 19))
        cases.append((n, min(n, RNG.randint(0, 200))))
    for n in [10**3, 10**6, 10**15, 2**53 + 1, 10**18, 2**64 - 1]:
        for k in [1, 2, 3, 10, 60, 1000, n // 2, n - 1, n - 2]:
            if 0 <= k <= n:
                cases.append((n, k))
    cases += [(67, 33), (130, 65), (131, 65), (1000, 500), (2**64 - 1, 2**63)]
    for n, k in cases:
        if k < 200 or n - k < 200:
            kk = min(k, n - k)
            with mp.workdps(DPS + 10):
                c = math.comb(n, kk)
                v = mp.log(mpf(c))
        else:
            v, _ = ln_binom_mp(float(n), float(k)) if n < 2**53 else ln_binom_int_big(n, k)
        emit("ln_binomial_int", [n, k], v, 0)


def ln_binom_int_big(n, k):
    with mp.workdps(DPS + 40):
        N, K = mpf(n), mpf(k)
        return +(mp.loggamma(N + 1) - mp.loggamma(K + 1) - mp.loggamma(N - K + 1)), 0


def dense(n):
    """Many random points per function (for hunting worst cases; not committed)."""
    def lu(a, b):  # log-uniform magnitude
        return 10.0 ** RNG.uniform(a, b)
    for _ in range(n):
        x = RNG.choice([RNG.uniform(-38.5, 9.0), RNG.uniform(-3, 1), RNG.uniform(-1.5, -0.5)])
        X = mpf(x)
        emit("norm_cdf", [x], ncdf(X), X * npdf(X))
        x = RNG.uniform(-39, 39)
        X = mpf(x)
        emit("norm_pdf", [x], npdf(X), X * X * npdf(X))
        x = RNG.choice([-lu(-5, 5), RNG.uniform(-40, 40), RNG.uniform(-2, 0)])
        X = mpf(x)
        emit("ln_norm_cdf", [x], ln_ncdf(X), X * (npdf(X) / ncdf(X) if x > -1e6 else -X))
        p = RNG.choice([lu(-323, -0.3), 1 - lu(-16, -0.3), RNG.uniform(0.05, 0.1),
                        RNG.uniform(0.9, 0.95), RNG.uniform(0, 1)])
        if 0 < p < 1:
            P = mpf(p)
            q = -lower_quantile(1 - P) if p > 0.5 else lower_quantile(P)
            emit("norm_quantile", [p], q, P / npdf(q))
        x = RNG.choice([RNG.uniform(-26.6, 30), lu(-5, 300), RNG.uniform(25, 27)])
        X = mpf(x)
        v = erfcx(X)
        emit("erfcx", [x], v, X * (2 * X * v - 2 / SQRT_PI))
        x = -lu(-20, 3)
        X = mpf(x)
        emit("log1mexp", [x], log1mexp(X), X * mp.exp(X) / (-mp.expm1(X)))
        x = RNG.choice([RNG.uniform(-50, 50), lu(-10, 3), -lu(-10, 3)])
        X = mpf(x)
        sp = mp.log1p(mp.exp(X)) if X < 0 else X + mp.log1p(mp.exp(-X))
        emit("softplus", [x], sp, X / (1 + mp.exp(-X)))
        a = RNG.choice([RNG.uniform(-40, 10), -lu(-3, 3)])
        b = a - RNG.choice([lu(-12, 1), RNG.expovariate(0.5)])
        eps = RNG.choice([RNG.uniform(-40, 40), lu(-10, 3), 0.0])
        emit_norm_cdf_sub_exp(a, b, eps)
        with mp.workdps(DPS + 40):
            a2, b2 = RNG.uniform(-38, 38), RNG.uniform(-38, 38)
            if RNG.random() < 0.5:
                b2 = a2 + RNG.uniform(-1e-3, 1e-3) if RNG.random() < 0.5 else -a2 * RNG.uniform(0.5, 2)
            A2, B2 = mpf(a2), mpf(b2)
            v2 = ncdf(-B2) - ncdf(-A2) if a2 >= 0 and b2 >= 0 else ncdf(A2) - ncdf(B2)
            emit("norm_cdf_diff", [a2, b2], v2, abs(A2 * npdf(A2)) + abs(B2 * npdf(B2)))
        x, y = RNG.uniform(-50, 50), RNG.uniform(-50, 50)
        w = weights([x, y])
        emit("log_add_exp", [x, y], lae(x, y), abs(x) * w[0] + abs(y) * w[1])
        hi_, lo_ = max(x, y), min(x, y) - RNG.choice([0.0, lu(-14, 0)])
        if hi_ > lo_:
            H, L = mpf(hi_), mpf(lo_)
            eb = mp.exp(L - H)
            emit("log_sub_exp", [hi_, lo_], H + log1mexp(L - H),
                 (abs(H) + abs(L) * eb) / -mp.expm1(L - H))
        xg = RNG.choice([lu(-5, 3), RNG.uniform(0.5, 3)])
        with mp.workdps(DPS + 10):
            XG = mpf(xg)
            emit("ln_gamma", [xg], mp.loggamma(XG), XG * mp.digamma(XG))
        nn = RNG.choice([lu(-1, 2), lu(0, 15), lu(0, 300)])
        kk = RNG.choice([nn * RNG.random(), min(nn, lu(-12, 1)), min(nn, float(RNG.randint(1, 30)))])
        if 0 <= kk <= nn:
            v, kap = ln_binom_mp(nn, kk)
            emit("ln_binomial", [nn, kk], v, kap)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--dense":
        dense(int(sys.argv[2]))
        for line in OUT:
            sys.stdout.write(line + "\n")
        return
    gen_norm_cdf()
    gen_norm_pdf()
    gen_ln_norm_cdf()
    gen_norm_quantile()
    gen_norm_cdf_sub_exp()
    gen_erfcx()
    gen_norm_cdf_diff()
    gen_erfc()
    gen_log_add_exp()
    gen_log_sub_exp()
    gen_log1mexp()
    gen_logsumexp()
    gen_softplus()
    gen_ln_gamma()
    gen_ln_binomial()
    gen_ln_binomial_int()
    counts = {}
    for line in OUT:
        name = line.split()[0]
        counts[name] = counts.get(name, 0) + 1
    out = sys.stdout
    out.write("# dpinfer-math reference values. GENERATED by gen_reference.py; do not edit.\n")
    out.write("# mpmath %s, mp.dps = %d (more where log-gammas cancel), Python %s\n"
              % (mp.__version__, DPS, sys.version.split()[0]))
    out.write("# format: <function> <args...> ; <hi> <lo> <kappa>\n")
    out.write("#   exact value = hi + lo (double-double); kappa = sum |x_i df/dx_i| (condition scale)\n")
    out.write("# counts: %s\n" % ", ".join("%s=%d" % kv for kv in sorted(counts.items())))
    for line in OUT:
        out.write(line + "\n")


if __name__ == "__main__":
    main()
