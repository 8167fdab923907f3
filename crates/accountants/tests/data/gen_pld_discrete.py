#!/usr/bin/env python3
"""Exact δ(ε) of composed discrete-Laplace / discrete-Gaussian PLDs (plain and
Poisson-subsampled) by enumeration in 40-digit arithmetic (mpmath), independent of the
Rust code: writes pld_discrete.txt, read by tests/suite/pld_discrete.rs.

Pairs (grid units, integer shift k):
  dl: P = DLap(k, β), Q = DLap(0, β), pmf ∝ exp(-|z|/β)            (CKS 2020, Alg. 2)
  dg: P = N_Z(k, σ²), Q = N_Z(0, σ²), pmf ∝ exp(-z²/2σ²)          (CKS 2020, Alg. 3)
Poisson subsampling at rate q: remove pair (qP + (1-q)Q, Q) and add pair (Q, qP + (1-q)Q);
the line holds the larger δ of the two directions (add/remove: the worse direction).
n-fold composition: the PLD has finitely many atoms (discrete Gaussian: |z| ≤ 13σ + k,
dropped mass < 1e-36), so the composed PLD is the multinomial over atom counts; plain
discrete Gaussians (losses on a lattice) are composed by convolving the pmf of Σz.

Line format: kind,param,k,q,n,eps,delta_exact   (param = β or σ)
wor lines:   wor-<kind>,param,k,gamma,1,eps,delta   (one step of the remove pair at rate γ,
             the profile the without-replacement PLD must dominate for ε ≥ 0)

Run: python3 -m venv /tmp/v && /tmp/v/bin/pip install mpmath && /tmp/v/bin/python gen_pld_discrete.py
"""
import itertools
import math
import sys

from mpmath import mp, mpf, exp, log, fsum, binomial, factorial

mp.dps = 40


def base_pmf(kind, param, k):
    """Atoms z with (P(z), Q(z)) of the base pair (lumped ends for the discrete Laplace)."""
    if kind == "dl":
        b = mpf(param)
        rho = exp(-1 / b)
        c = (1 - rho) / (1 + rho)
        out = []
        for z in range(0, k + 1):
            if z == 0:
                qz = 1 / (1 + rho)
                pz = rho**k / (1 + rho)
            elif z == k:
                qz = rho**k / (1 + rho)
                pz = 1 / (1 + rho)
            else:
                qz = c * rho**z
                pz = c * rho ** (k - z)
            out.append((z, pz, qz))
        return out
    s = mpf(param)
    cut = int(math.ceil(13 * float(s))) + 1
    zs = range(-cut - k, k + cut + 1)
    w = {z: exp(-mpf(z) ** 2 / (2 * s * s)) for z in range(-cut - 2 * k, 2 * k + cut + 1)}
    theta = fsum(exp(-mpf(z) ** 2 / (2 * s * s)) for z in range(-40 * int(s) - 200, 40 * int(s) + 201))
    return [(z, w[z - k] / theta, w[z] / theta) for z in zs]


def pld(atoms, q, direction):
    """[(loss, mass under the upper distribution)] of one step, and the mass at +inf."""
    q = mpf(q)
    out = []
    for _, p, qq in atoms:
        mix = q * p + (1 - q) * qq
        if direction == "remove":
            up, lo = mix, qq
        else:
            up, lo = qq, mix
        if up == 0:
            continue
        out.append((log(up / lo), up))
    return out


def delta_multinomial(atoms1, n, eps):
    """δ(ε) of the n-fold composition of a finite PLD, exactly."""
    eps = mpf(eps)
    m = len(atoms1)
    ls = [a[0] for a in atoms1]
    ws = [a[1] for a in atoms1]
    total = []
    nf = factorial(n)
    for c in itertools.combinations_with_replacement(range(m), n):
        counts = [0] * m
        for i in c:
            counts[i] += 1
        L = fsum(counts[i] * ls[i] for i in range(m) if counts[i])
        if L <= eps:
            continue
        coef = nf
        mass = mpf(1)
        for i in range(m):
            if counts[i]:
                coef /= factorial(counts[i])
                mass *= ws[i] ** counts[i]
        total.append(coef * mass * (1 - exp(eps - L)))
    return fsum(total)


def delta_dg_plain(s, k, n, eps):
    """n-fold plain discrete Gaussian: Σz ~ n-fold convolution; loss τ(Σz - nk/2)."""
    s = mpf(s)
    atoms = base_pmf("dg", s, k)
    q1 = {z: qq for z, _, qq in atoms}
    dist = {0: mpf(1)}
    for _ in range(n):
        nd = {}
        for a, pa in dist.items():
            for z, pz in q1.items():
                nd[a + z] = nd.get(a + z, 0) + pa * pz
        dist = nd
    tau = mpf(k) / (s * s)
    eps = mpf(eps)
    out = []
    for S, qS in dist.items():
        L = tau * (S - mpf(n * k) / 2)
        if L > eps:
            # P(S) = Q(S) e^L (shifted law), δ = Σ (P − e^ε Q)
            out.append(qS * (exp(L) - exp(eps)))
    return fsum(out)


def main():
    lines = []
    eps_list = [0.0, 0.25, 0.5, 1.0, 2.0]
    cases = [
        ("dl", 1.0, 1, [1.0, 0.2, 0.01], [1, 5, 20]),
        ("dl", 2.0, 3, [1.0, 0.1], [1, 5, 12]),
        ("dl", 0.5, 1, [0.05], [1, 10]),
        ("dg", 1.0, 1, [0.3, 0.05], [1, 2, 3]),
        ("dg", 2.0, 3, [0.1], [1, 2]),
        ("dg", 0.6, 1, [1.0], [1, 2]),
    ]
    for kind, param, k, qs, ns in cases:
        atoms = base_pmf(kind, param, k)
        for q in qs:
            for n in ns:
                dirs = ["remove"] if q == 1.0 else ["remove", "add"]
                for e in eps_list:
                    if kind == "dg" and q == 1.0 and n > 1:
                        d = delta_dg_plain(param, k, n, e)
                    else:
                        d = max(delta_multinomial(pld(atoms, q, dr), n, e) for dr in dirs)
                    lines.append(f"{kind},{param!r},{k},{q!r},{n},{e!r},{mp.nstr(d, 25)}")
    for kind, param, k in [("dg", 1.5, 2), ("dg", 4.0, 1), ("dg", 10.0, 3), ("dg", 3.0, 7)]:
        for n in [1, 4, 10]:
            for e in eps_list:
                lines.append(
                    f"{kind},{param!r},{k},1.0,{n},{e!r},{mp.nstr(delta_dg_plain(param, k, n, e), 25)}"
                )
    for kind, param, k, gamma in [("dl", 1.0, 1, 0.1), ("dg", 1.0, 1, 0.25)]:
        atoms = base_pmf(kind, param, k)
        for e in eps_list:
            d = delta_multinomial(pld(atoms, gamma, "remove"), 1, e)
            lines.append(f"wor-{kind},{param!r},{k},{gamma!r},1,{e!r},{mp.nstr(d, 25)}")
    out = "\n".join(lines) + "\n"
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
