#!/usr/bin/env python3
"""Fit the DP-Barker correction distribution V_corr as a Gaussian mixture.

Goal (Heikkilae et al. 2019, thesis section 3.2): for a noise variance sigma2, find a
distribution V_corr such that N(0, sigma2) + V_corr is as close as possible to
Logistic(0, 1). No exact V_corr exists for sigma2 > 0 (the ratio of characteristic functions,
(pi t / sinh(pi t)) * exp(sigma2 t^2 / 2), is unbounded), so we fit a symmetric mixture of
Gaussians with means on a grid k*h (k = -K..K) and one common component sd s, and choose the
weights by a LINEAR PROGRAM that minimises the sup-norm CDF error

    max_x | sum_k w_k Phi((x - mu_k) / sqrt(sigma2 + s^2)) - 1 / (1 + exp(-x)) |

over a dense grid of x (the CDF objective the issue asks for; the original HJDH19 fit used
a log-density loss), subject to two more linear constraints (issue 13):

* **variance**: sum_k w_k (mu_k^2 + s^2) = pi^2/3 - sigma2 exactly, so that N(0, sigma2) +
  V_corr has the logistic's variance (an unconstrained sup-CDF fit can park weight far out:
  the sigma2 = 2 table used to have +3.98 % variance from weight 0.0021 at +-9.5);
* **tail**: for 3 <= x <= 12 the CDF error is at most a fraction eta of the logistic's
  survival 1/(1 + e^x) (relative tail accuracy; beyond x = 12 the survival, < 7e-6, approaches
  the LP solver's feasibility tolerance, so the sup-CDF bound is what holds there). (h, s) is scanned with eta = 0.2; then, for the best
  (h, s), eta is lowered through 0.1, 0.05, 0.02, 0.01 as long as the sup-CDF error stays
  within 10 % of the eta = 0.2 fit.

For fixed (h, s, eta) the problem is convex (an LP in w). The achieved sup
error, the variance and the fourth moment are then re-measured on the final mixture (the sup
error on a 10x finer grid) and stored / printed with the table.

Output: ../src/vcorr_tables.rs (Rust source with const arrays: weights, means, component sd,
alias-table probabilities and aliases for O(1) sampling, and the measured sup-CDF error).
Prints one Markdown table row per sigma2 (components, sup-CDF error, relative variance and
fourth-moment errors of N(0, sigma2) + V_corr, worst relative tail error on [3, 12]).
Run:  python3 -m venv target/venv-mcmc && target/venv-mcmc/bin/pip install numpy scipy
      target/venv-mcmc/bin/python crates/mcmc/scripts/fit_vcorr.py
"""
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import linprog
from scipy.special import expit, ndtr

GRID = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0]
X_MAX = 30.0


def design(x, means, v):
    # column k: CDF at x of the symmetric pair (+mu_k, -mu_k), each with half weight
    # (k = 0 is the centre component with full weight)
    a = 0.5 * (ndtr((x[:, None] - means[None, :]) / v) + ndtr((x[:, None] + means[None, :]) / v))
    return a


TAIL_X = 3.0
TAIL_END = 12.0
ETA_SCAN = 0.2
ETAS_TIGHTER = [0.1, 0.05, 0.02, 0.01]


def fit(sigma2, h, s, x, eta):
    kmax = int(round(25.0 / h))
    means = h * np.arange(0, kmax + 1)
    v = np.sqrt(sigma2 + s * s)
    a = design(x, means, v)
    f = expit(x)
    m = len(means)
    # variables: p_0..p_{m-1}, t ; minimise t
    c = np.zeros(m + 1)
    c[-1] = 1.0
    ones = np.ones((len(x), 1))
    zeros = np.zeros((len(x), 1))
    tail = (x >= TAIL_X) & (x <= TAIL_END)
    sf = expit(-x[tail])  # logistic survival 1/(1 + e^x)
    a_ub = np.vstack([np.hstack([a, -ones]), np.hstack([-a, -ones]),
                      np.hstack([a[tail], zeros[tail]]), np.hstack([-a[tail], zeros[tail]])])
    b_ub = np.concatenate([f, -f, f[tail] + eta * sf, -f[tail] + eta * sf])
    a_eq = np.zeros((2, m + 1))
    a_eq[0, :m] = 1.0
    a_eq[1, :m] = means ** 2 + s * s  # second moment of the pair (+-mu_k) with sd s
    target_var = np.pi ** 2 / 3.0 - sigma2
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0, target_var],
                  bounds=[(0, None)] * m + [(0, None)], method="highs")
    if res.status != 0:
        return None
    p = np.clip(res.x[:m], 0.0, None)
    p /= p.sum()
    return means, p


def sup_error(sigma2, means, p, s, x):
    v = np.sqrt(sigma2 + s * s)
    g = design(x, means, v) @ p
    return np.max(np.abs(g - expit(x)))


def expand(means, p):
    """Full mirrored component list (mean, weight), dropping zero weights."""
    mus, ws = [], []
    for mu, w in zip(means, p):
        if w <= 1e-15:
            continue
        if mu == 0.0:
            mus.append(0.0)
            ws.append(w)
        else:
            mus += [-mu, mu]
            ws += [w / 2, w / 2]
    order = np.argsort(mus)
    mus = np.array(mus)[order]
    ws = np.array(ws)[order]
    ws /= ws.sum()
    return mus, ws


def alias_table(w):
    """Vose's alias method."""
    n = len(w)
    prob = np.zeros(n)
    alias = np.zeros(n, dtype=int)
    scaled = w * n
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    while small and large:
        l = small.pop()
        g = large.pop()
        prob[l] = scaled[l]
        alias[l] = g
        scaled[g] = scaled[g] + scaled[l] - 1.0
        (small if scaled[g] < 1.0 else large).append(g)
    for i in large + small:
        prob[i] = 1.0
        alias[i] = i
    return prob, alias


def main():
    out = Path(__file__).resolve().parent.parent / "src" / "vcorr_tables.rs"
    x_fit = np.linspace(0.0, X_MAX, 1201)
    x_check = np.linspace(-X_MAX, X_MAX, 60001)
    tables = []
    for sigma2 in GRID:
        best = None
        for h in [0.2, 0.3, 0.4]:
            for s in [0.05, 0.1, 0.2, 0.3, 0.5]:
                r = fit(sigma2, h, s, x_fit, ETA_SCAN)
                if r is None:
                    continue
                means, p = r
                err = sup_error(sigma2, means, p, s, x_check)
                if best is None or err < best[0]:
                    best = (err, h, s, means, p, ETA_SCAN)
        print(f"sigma2={sigma2}: scan done, best h={best[1]} s={best[2]} err={best[0]:.2e}",
              file=sys.stderr, flush=True)
        err0, h, s = best[0], best[1], best[2]
        for eta in ETAS_TIGHTER:
            r = fit(sigma2, h, s, x_fit, eta)
            if r is None:
                break
            e = sup_error(sigma2, r[0], r[1], s, x_check)
            if e > 1.1 * err0:
                break
            best = (e, h, s, r[0], r[1], eta)
        err, h, s, means, p, eta = best
        mus, ws = expand(means, p)
        # re-measure with the final (renormalised, zero-dropped) mixture
        v = np.sqrt(sigma2 + s * s)
        g = (ndtr((x_check[:, None] - mus[None, :]) / v) @ ws)
        err = float(np.max(np.abs(g - expit(x_check))))
        gauss = float(np.max(np.abs(ndtr(x_check / np.sqrt(np.pi ** 2 / 3)) - expit(x_check))))
        # moments of N(0, sigma2) + V_corr against the logistic's pi^2/3 and 7 pi^4/15
        m2v = float(ws @ (mus ** 2 + s * s))
        m4v = float(ws @ (mus ** 4 + 6 * mus ** 2 * s * s + 3 * s ** 4))
        var = sigma2 + m2v
        m4 = 3 * sigma2 ** 2 + 6 * sigma2 * m2v + m4v
        var_err = var / (np.pi ** 2 / 3) - 1.0
        m4_err = m4 / (7 * np.pi ** 4 / 15) - 1.0
        tail = (x_check >= TAIL_X) & (x_check <= TAIL_END)
        tail_rel = float(np.max(np.abs(g[tail] - expit(x_check[tail])) / expit(-x_check[tail])))
        print(f"| {sigma2} | {len(mus)} | {err:.1e} | {var_err:+.2e} | {m4_err:+.2e} | "
              f"{tail_rel:.2g} (eta {eta}) | h={h} s={s} (plain Gaussian: {gauss:.1e})",
              file=sys.stderr)
        prob, alias = alias_table(ws)
        tables.append((sigma2, s, err, mus, ws, prob, alias, h))

    def arr(name, ty, vals, fmt):
        body = ", ".join(fmt(v) for v in vals)
        return f"const {name}: [{ty}; {len(vals)}] = [{body}];\n"

    lines = ["// @generated by crates/mcmc/scripts/fit_vcorr.py -- do not edit by hand.\n",
             "// Gaussian-mixture fits of the DP-Barker correction V_corr (HJDH19; thesis section 3.2):\n",
             "// N(0, sigma2) + V_corr ~= Logistic(0, 1), weights chosen by a minimax-CDF linear program\n",
             "// with the logistic's variance as an equality and a relative tail-error bound on [3, 12].\n",
             "#![allow(clippy::approx_constant, clippy::excessive_precision)]\n\n"]
    names = []
    for i, (sigma2, s, err, mus, ws, prob, alias, h) in enumerate(tables):
        tag = f"T{i}"
        names.append((sigma2, s, err, tag, len(mus)))
        lines.append(f"// sigma2 = {sigma2}: grid spacing h = {h}, component sd s = {s}, "
                     f"measured sup-CDF error {err:.3e} on [-30, 30] (60001 points)\n")
        lines.append(arr(f"{tag}_MEANS", "f64", mus, lambda v: repr(float(v))))
        lines.append(arr(f"{tag}_WEIGHTS", "f64", ws, lambda v: repr(float(v))))
        lines.append(arr(f"{tag}_PROB", "f64", prob, lambda v: repr(float(v))))
        lines.append(arr(f"{tag}_ALIAS", "u16", alias, lambda v: str(int(v))))
        lines.append("\n")
    lines.append("/// All fitted tables, ordered by noise variance.\n")
    lines.append(f"pub(crate) const TABLES: [RawTable; {len(names)}] = [\n")
    for sigma2, s, err, tag, m in names:
        lines.append(f"    RawTable {{ sigma2: {sigma2!r}, component_sd: {s!r}, sup_cdf_error: {err!r}, "
                     f"means: &{tag}_MEANS, weights: &{tag}_WEIGHTS, prob: &{tag}_PROB, alias: &{tag}_ALIAS }},\n")
    lines.append("];\n\n")
    lines.append("/// One fitted table in raw form.\n")
    lines.append("#[derive(Debug)]\npub(crate) struct RawTable {\n"
                 "    pub(crate) sigma2: f64,\n    pub(crate) component_sd: f64,\n"
                 "    pub(crate) sup_cdf_error: f64,\n    pub(crate) means: &'static [f64],\n"
                 "    pub(crate) weights: &'static [f64],\n    pub(crate) prob: &'static [f64],\n"
                 "    pub(crate) alias: &'static [u16],\n}\n")
    out.write_text("".join(lines))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
