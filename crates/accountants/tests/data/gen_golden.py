#!/usr/bin/env python3
"""Generates golden.txt: high-precision reference values for dpinfer-accountants.

Every value is computed from the defining formula with mpmath at 50 significant digits,
independently of the Rust code (no shared series tricks: the fractional-order subsampled
Gaussian uses numerical integration of the defining integral, not the MTZ19 series).

Run:  python3 gen_golden.py > golden.txt      (needs only mpmath)
Line format:  kind  param...  expected      (whitespace separated, '#' comments)
"""
import mpmath as mp

mp.mp.dps = 50
out = []


def emit(kind, *vals):
    out.append(kind + " " + " ".join(mp.nstr(mp.mpf(v), 30) if not isinstance(v, str) else v for v in vals))


# ---- Gaussian PLD delta(eps) (SMM19 Lemma 12) ----
def pld_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    s = 2 * mp.sqrt(mu)
    return (mp.erfc((eps - mu) / s) - mp.exp(eps) * mp.erfc((eps + mu) / s)) / 2


for mu in ["1e-10", "1e-6", "1e-3", "0.05", "0.5", "1", "5", "50", "1000", "10000"]:
    for eps in ["0", "1e-6", "0.01", "0.5", "1", "3", "10", "100", "1000", "5000"]:
        d = pld_delta(mu, eps)
        if d > mp.mpf("1e-300"):
            emit("pld_delta", mu, eps, d)

# ---- PLD eps(delta) ----
for mu in ["1e-4", "0.01", "0.5", "2", "50", "1e4"]:
    for delta in ["1e-2", "1e-5", "1e-10", "1e-50", "1e-300"]:
        target = mp.mpf(delta)
        if pld_delta(mu, 0) <= target:
            emit("pld_eps", mu, delta, 0)
            continue
        lo, hi = mp.mpf(0), mp.mpf(mu) + 2 * mp.sqrt(mp.mpf(mu) * -mp.log(target)) + 1
        for _ in range(300):
            mid = (lo + hi) / 2
            if pld_delta(mu, mid) > target:
                lo = mid
            else:
                hi = mid
        emit("pld_eps", mu, delta, hi)

# ---- 10^6 heterogeneous Gaussian compositions: sigma_i = 1 + (i mod 100)/10, Delta=1 ----
mu_tot = mp.mpf(0)
for r in range(100):
    mu_tot += 10000 * (1 / (2 * (1 + mp.mpf(r) / 10) ** 2))
emit("pld_mu_hetero_1e6", mu_tot)
emit("pld_delta_hetero_1e6", "3000", pld_delta(mu_tot, 3000))


# ---- Poisson subsampled Gaussian RDP (MTZ19) ----
def a_int(q, s, a):
    q, s = mp.mpf(q), mp.mpf(s)
    return mp.fsum(mp.binomial(a, k) * (1 - q) ** (a - k) * q ** k * mp.exp((k * k - k) / (2 * s * s)) for k in range(a + 1))


def a_frac(q, s, a):
    q, s, a = mp.mpf(q), mp.mpf(s), mp.mpf(a)
    f = lambda x: mp.npdf(x, 0, s) * ((1 - q) + q * mp.exp((2 * x - 1) / (2 * s * s))) ** a
    z0 = s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2
    peak = a if a > 1 else 1
    pts = sorted(set([-40 * s, -10 * s, -3 * s, 0, 3 * s, 10 * s, z0, peak, peak + 10 * s, 40 * s + peak]))
    pts = [-mp.inf] + [p for p in pts] + [mp.inf]
    return mp.quad(f, pts, maxdegree=12)


def rdp_from_a(A, a):
    return mp.log(A) / (mp.mpf(a) - 1)


for q in ["1e-8", "1e-4", "0.01", "0.2", "0.5", "0.9999"]:
    for s in ["0.5", "1", "2", "10"]:
        for a in [2, 3, 8, 32, 256, 1024, 2048, 4096]:
            if a > 256 and s not in ("1", "10"):
                continue
            A = a_int(q, s, a)
            emit("pg_rdp", q, s, a, rdp_from_a(A, a))
for q in ["1e-8", "1e-3", "0.01", "0.2"]:
    for s in ["0.8", "1", "2", "10"]:
        for a in ["1.01", "1.25", "1.5", "2.5", "5.5", "12.5"]:
            A = a_frac(q, s, a)
            emit("pg_rdp", q, s, a, rdp_from_a(A, a))
for q in ["0.5", "0.9", "0.9999"]:
    for s in ["1", "3"]:
        for a in ["1.25", "2.5", "7.5"]:
            A = a_frac(q, s, a)
            emit("pg_rdp", q, s, a, rdp_from_a(A, a))
# integer order through the integral too (consistency of the two references)
for q, s, a in [("0.01", "1", 3), ("0.2", "2", 8)]:
    assert abs(a_frac(q, s, a) / a_int(q, s, a) - 1) < mp.mpf("1e-30")


# ---- WBK19 Theorem 9, Gaussian base eps'(j) = j/(2 s^2), sum through j = alpha ----
def wbk19(q, s, a):
    q, s = mp.mpf(q), mp.mpf(s)
    e = lambda j: mp.mpf(j) / (2 * s * s)
    t = 1 + q * q * mp.binomial(a, 2) * min(4 * (mp.exp(e(2)) - 1), 2 * mp.exp(e(2)))
    t += 2 * mp.fsum(q ** j * mp.binomial(a, j) * mp.exp((j - 1) * e(j)) for j in range(3, a + 1))
    return min(mp.log(t) / (a - 1), e(a))


for q in ["0.001", "0.01", "0.1", "0.5"]:
    for s in ["1", "4"]:
        for a in [2, 3, 10, 40, 64, 256, 1024]:
            emit("wor_gauss_rdp", q, s, a, wbk19(q, s, a))


# ---- Laplace RDP (Mironov 2017 Prop. 6), b = scale, Delta = 1 ----
def lap(b, a):
    l, a = mp.mpf(b), mp.mpf(a)
    v = mp.log(a / (2 * a - 1) * mp.exp((a - 1) / l) + (a - 1) / (2 * a - 1) * mp.exp(-a / l)) / (a - 1)
    return min(v, 1 / l)


for b in ["0.1", "0.5", "1", "3", "10"]:
    for a in ["1.5", "2", "10", "100"]:
        emit("laplace_rdp", b, a, lap(b, a))

# ---- zCDP -> (eps, delta) ----
def cks_eps(rho, delta):
    rho, delta = mp.mpf(rho), mp.mpf(delta)
    f = lambda t: (1 + mp.exp(t)) * rho + mp.log(1 - 1 / (1 + mp.exp(t))) - (mp.log(delta) + mp.log(1 + mp.exp(t))) / mp.exp(t)
    # golden-section in high precision over a wide bracket
    lo, hi = mp.mpf(-30), mp.mpf(40)
    g = (mp.sqrt(5) - 1) / 2
    for _ in range(400):
        x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if f(x1) <= f(x2):
            hi = x2
        else:
            lo = x1
    bs = rho + 2 * mp.sqrt(rho * mp.log(1 / delta))
    return min(f((lo + hi) / 2), bs)


for rho in ["1e-6", "0.01", "0.1", "0.5", "1", "10"]:
    for delta in ["1e-3", "1e-5", "1e-10"]:
        emit("zcdp_eps", rho, delta, max(cks_eps(rho, delta), 0))
        emit("zcdp_bs", rho, delta, mp.mpf(rho) + 2 * mp.sqrt(mp.mpf(rho) * mp.log(1 / mp.mpf(delta))))

# ---- inverse rho (thesis Thm 6) ----
for eps in ["1e-12", "1e-6", "0.1", "1", "10"]:
    for delta in ["1e-5", "1e-300"]:
        e, d = mp.mpf(eps), mp.mpf(delta)
        emit("rho_inv", eps, delta, (mp.sqrt(e - mp.log(d)) - mp.sqrt(-mp.log(d))) ** 2)

# ---- RDP -> DP conversions for a Gaussian curve r(a) = a*mu on the default grid ----
grid = [mp.mpf(x) for x in "1.25 1.5 1.75 2 2.25 2.5 2.75 3 3.5 4 4.5 5 5.5 6 7 8 9 10 11 12 13 14 15 16 18 20 22 24 26 28 32 36 40 48 56 64 72 80 96 112 128 144 160 192 208 224 256".split()]
for mu in ["1e-4", "0.01", "0.5", "5"]:
    for delta in ["1e-5", "1e-10"]:
        m, d = mp.mpf(mu), mp.mpf(delta)
        best = min(min(a * m + mp.log(1 / d) / (a - 1), a * m + mp.log(1 - 1 / a) - (mp.log(d) + mp.log(a)) / (a - 1)) for a in grid)
        emit("rdp_conv_gauss", mu, delta, max(best, 0))

# ---- pure amplification ----
for q in ["1e-8", "0.01", "0.5", "0.9999"]:
    for e in ["1e-3", "1", "10", "800"]:
        emit("amplify_pure", q, e, mp.log(1 + mp.mpf(q) * (mp.exp(mp.mpf(e)) - 1)))

# ---- advanced composition (DRV) and optimal composition (KOV) ----
def kov(e0, d0, k, dt):
    e0, d0, dt = mp.mpf(e0), mp.mpf(d0), mp.mpf(dt)
    best = None
    for i in range(k // 2 + 1):
        di = mp.fsum(mp.binomial(k, l) * (mp.exp((k - l) * e0) - mp.exp((k - 2 * i + l) * e0)) for l in range(i)) / (1 + mp.exp(e0)) ** k
        if 1 - (1 - d0) ** k * (1 - di) <= dt:
            best = (k - 2 * i) * e0
        else:
            break
    return best


for e0, d0, k, dt in [("0.1", "0", 10, "1e-5"), ("0.1", "0", 100, "1e-5"), ("0.01", "0", 1000, "1e-6"),
                      ("0.5", "1e-7", 50, "1e-4"), ("1", "0", 20, "1e-3"), ("0.05", "1e-9", 400, "1e-5")]:
    # the (k+1)-fold composition dominates the k-fold one, so its corner points are valid too
    cands = [v for v in (kov(e0, d0, k, dt), kov(e0, d0, k + 1, dt)) if v is not None]
    emit("kov", e0, d0, k, dt, min(cands))
    e, kk, dd = mp.mpf(e0), k, mp.mpf(dt) - k * mp.mpf(d0)
    emit("drv", e0, d0, k, dt, mp.sqrt(2 * kk * mp.log(1 / dd)) * e + kk * e * (mp.exp(e) - 1))

# ---- binomial curve (Xiong Prop 4) ----
for n, m, L in [(10, "5", 3), (100, "1000", 20), (1, "0.5", 1)]:
    emit("binom_exact", n, m, L, L * n * mp.log(1 + 1 / mp.mpf(m)))
    emit("binom_paper", n, m, L, mp.mpf(n) * L / mp.mpf(m))

print("# dpinfer-accountants golden values; generated by gen_golden.py with mpmath", mp.__version__, "at", mp.mp.dps, "digits")
print("# cases:", len(out))
print("\n".join(out))
