"""Simulations-to-tolerance of SMC-ABC: dpinfer (each kernel, with and without the
prior-predictive first tolerance) against pyabc 0.13 and ELFI 0.8 on three models.

Same rule everywhere: N particles, the tolerance of generation t+1 is the weighted median of
generation t's accepted distances, Euclidean distance on the summaries; the count is the total
number of simulations (calibration samples included) up to and including the first generation
whose tolerance is <= the target. Each tool runs unfloored (no final tolerance) so that no
tool's last generation is cut short at the target.

Not part of CI: it needs a throw-away virtualenv with pyabc==0.13.0, elfi==0.8.8 and the
dpinfer wheel (`maturin build --release -m python/Cargo.toml`), e.g.

    python -m venv /tmp/venv && /tmp/venv/bin/pip install pyabc==0.13.0 elfi==0.8.8 maturin
    /tmp/venv/bin/maturin build --release --locked -m python/Cargo.toml --out /tmp/wheel
    /tmp/venv/bin/pip install /tmp/wheel/dpinfer-*.whl
    /tmp/venv/bin/python crates/abc/benches/smc_tolerance/bench.py [reps [models [tools]]]

(`models`, `tools`: comma-separated names / label prefixes, e.g. `3 "" pyabc,ELFI`.)
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time

import numpy as np

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N = 200  # particles, every tool
ONLY = set(sys.argv[2].split(",")) if len(sys.argv) > 2 and sys.argv[2] else None
TOOLS = sys.argv[3].split(",") if len(sys.argv) > 3 else None


# ---------------------------------------------------------------- models (numpy, batched)
# simulate(theta (b, d), rng) -> summaries (b, k)


def gm_sim(theta, rng):
    """Gaussian mean: ybar of 100 N(θ, 1) draws, drawn directly as N(θ, 1/100)."""
    return theta[:, :1] + rng.standard_normal((len(theta), 1)) / 10.0


SIR_K = 1_000_000
SIR_T = np.arange(0, 154, 17)  # t = 0, 17, ..., 153 (the library's paper grid)


def sir_sim(theta, rng):
    """The library's SIR (K = 10^6, one infected at t = 0) by tau-leaping with tau = 1 day,
    θ = (log β, log γ); summaries I(t)/K at t = 0, 17, ..., 153."""
    b = len(theta)
    beta, gamma = np.exp(theta[:, 0]), np.exp(theta[:, 1])
    s = np.full(b, SIR_K - 1.0)
    i = np.ones(b)
    out = np.empty((b, len(SIR_T)))
    out[:, 0] = i / SIR_K
    col = 1
    for t in range(1, SIR_T[-1] + 1):
        inf = np.minimum(rng.poisson(beta * s * i / SIR_K), s)
        rec = np.minimum(rng.poisson(gamma * i), i + inf)
        s -= inf
        i += inf - rec
        if t == SIR_T[col]:
            out[:, col] = i / SIR_K
            col += 1
    return out


GK_N = 100


def gk_sim(theta, rng):
    """g-and-k (A, B, g, k), 100 draws; the robust summaries of Drovandi & Pettitt (2011) from
    the octiles E1..E7: E4, E6 − E2, (E6 + E2 − 2 E4)/(E6 − E2), (E7 − E5 + E3 − E1)/(E6 − E2) —
    skewed, heavy-tailed sampling distributions at n = 100."""
    a, b_, g, k = (theta[:, j : j + 1] for j in range(4))
    z = rng.standard_normal((len(theta), GK_N))
    x = a + b_ * (1 + 0.8 * np.tanh(g * z / 2)) * (1 + z * z) ** k * z
    e = np.quantile(x, np.arange(1, 8) / 8, axis=1)  # (7, b)
    iqr = e[5] - e[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.stack([e[3], iqr, (e[5] + e[1] - 2 * e[3]) / iqr, (e[6] - e[4] + e[2] - e[0]) / iqr], axis=1)
    return np.where(np.isfinite(s), s, 1e6)


# name: (simulate, prior [(kind, a, b)], truth, target tolerance)
MODELS = {
    "gaussian-mean": (gm_sim, [("norm", 0.0, 1.0)], None, 0.01),
    "sir": (sir_sim, [("norm", np.log(0.4), np.sqrt(0.5)), ("norm", np.log(0.125), np.sqrt(0.2))], [-0.5, -3.0], 0.06),
    "g-and-k": (gk_sim, [("uniform", 0.0, 10.0)] * 4, [3.0, 1.0, 2.0, 0.5], 1.0),
}


def observed(name):
    sim, _, truth, _ = MODELS[name]
    if truth is None:
        return np.array([0.5])
    return sim(np.array([truth]), np.random.default_rng(20261122))[0]


# ---------------------------------------------------------------- dpinfer


def run_dpinfer(name, seed, kernel, first):
    from dpinfer import abc, priors

    sim, prior, _, target = MODELS[name]
    parts = [priors.Normal(a, b) if k == "norm" else priors.Uniform(a, a + b) for k, a, b in prior]
    p = parts[0] if len(parts) == 1 else priors.Independent(*parts)

    def f(theta, seeds):
        return sim(np.asarray(theta), np.random.default_rng(np.asarray(seeds, dtype=np.uint64)))

    def run(final, gens):
        return abc.smc_abc(p, f, observed(name), particles=N, quantile=0.5, final_tolerance=final,
                           max_generations=gens, simulation_budget=3_000_000, seed=seed,
                           kernel=kernel, first_tolerance=first)

    # the generation that reaches the target (floored there), then the same run unfloored up
    # to that generation: bit-identical before it, its own weighted median at it
    gens = len(run(target, 40).diagnostics["history"])
    r = run(0.0, gens)
    for g in r.diagnostics["history"]:
        if g["tolerance"] <= target:
            return g["total_simulations"], g["generation"] + 1
    return None, len(r.diagnostics["history"])


# ---------------------------------------------------------------- pyabc


def run_pyabc(name, seed):
    import pyabc

    sim, prior, _, target = MODELS[name]
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    d = len(prior)
    rvs = {f"p{j}": pyabc.RV(k, a, b) for j, (k, a, b) in enumerate(prior)}

    def model(par):
        th = np.array([[par[f"p{j}"] for j in range(d)]])
        return {"s": sim(th, rng)[0]}

    obs = {"s": observed(name)}

    def dist(x, y):
        return float(np.sqrt(np.sum((x["s"] - y["s"]) ** 2)))

    abc_ = pyabc.ABCSMC(model, pyabc.Distribution(**rvs), dist, population_size=N,
                        sampler=pyabc.sampler.SingleCoreSampler())
    db = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "h.db")
    abc_.new(db, obs)
    h = abc_.run(minimum_epsilon=target, max_nr_populations=40)
    pops = h.get_all_populations().sort_values("t")
    total = 0
    for _, row in pops.iterrows():
        total += int(row["samples"])
        if row["t"] >= 0 and row["epsilon"] <= target:
            return total, int(row["t"]) + 1
    return None, int(pops["t"].max()) + 1


# ---------------------------------------------------------------- ELFI


def run_elfi(name, seed):
    import elfi

    sim, prior, _, target = MODELS[name]
    elfi.new_model()
    ps = [elfi.Prior(k, a, b, name=f"p{j}") for j, (k, a, b) in enumerate(prior)]

    def simulator(*args, batch_size=1, random_state=None):
        th = np.column_stack([np.broadcast_to(np.asarray(a, float), (batch_size,)) for a in args])
        return sim(th, np.random.default_rng(random_state.randint(2**31)))

    obs = observed(name)
    s = elfi.Simulator(simulator, *ps, observed=obs[None, :], name="s")
    dd = elfi.Distance("euclidean", s, name="d")
    # round 0: rejection from the prior keeping the nearest N of 2N (threshold = median of the
    # prior-predictive distances); then the weighted median of the previous population
    smc = elfi.SMC(dd, batch_size=N, seed=seed)
    smc.bar = False
    rounds = 40
    smc.set_objective(N, quantiles=[0.5] * (rounds + 1))
    total = 0
    while not smc.finished:
        smc.iterate()
        if len(smc._populations) > 0 and getattr(smc, "_seen", 0) < len(smc._populations):
            smc._seen = len(smc._populations)
            pop = smc._populations[-1]
            total += pop.n_sim
            if pop.threshold <= target:
                return total, len(smc._populations)
    return None, len(smc._populations)


# ---------------------------------------------------------------- main


def main():
    logging.disable(logging.WARNING)
    import warnings

    warnings.filterwarnings("ignore")
    tools = [
        ("dpinfer twice-covariance, ε₀ = ∞ (default)", lambda m, s: run_dpinfer(m, s, "twice-covariance", "infinity")),
        ("dpinfer twice-covariance, prior-quantile ε₀", lambda m, s: run_dpinfer(m, s, "twice-covariance", "prior-quantile")),
        ("dpinfer mvn (Silverman), prior-quantile ε₀", lambda m, s: run_dpinfer(m, s, "mvn", "prior-quantile")),
        ("dpinfer olcm, ε₀ = ∞", lambda m, s: run_dpinfer(m, s, "olcm", "infinity")),
        ("dpinfer olcm, prior-quantile ε₀", lambda m, s: run_dpinfer(m, s, "olcm", "prior-quantile")),
        ("pyabc 0.13 (MultivariateNormalTransition, MedianEpsilon)", run_pyabc),
        ("ELFI 0.8 (SMC, quantiles 0.5)", run_elfi),
    ]
    if TOOLS is None or TOOLS == ["dpinfer"]:
        import dpinfer  # noqa: F401  (fail early without the wheel)
    print(f"N = {N} particles, {REPS} seeds per cell; mean ± sd of the simulations to the first "
          "generation with tolerance ≤ target (generations in brackets)\n")
    models = [m for m in MODELS if ONLY is None or m in ONLY]
    print("| tool | " + " | ".join(f"{m} (ε* = {MODELS[m][3]})" for m in models) + " |")
    print("|---|" + "---|" * len(models))
    for label, fn in tools:
        if TOOLS is not None and not any(label.startswith(t) for t in TOOLS):
            continue
        cells = []
        for m in models:
            sims, gens = [], []
            t0 = time.time()
            for rep in range(REPS):
                n, g = fn(m, 1000 + rep)
                if n is None:
                    sims.append(np.nan)
                else:
                    sims.append(n)
                gens.append(g)
            sims = np.array(sims, float)
            ok = np.isfinite(sims)
            cell = f"{np.nanmean(sims):,.0f} ± {np.nanstd(sims, ddof=1) if ok.sum() > 1 else 0:,.0f} [{np.mean(gens):.1f}]"
            if not ok.all():
                cell += f" ({(~ok).sum()} not reached)"
            cells.append(cell)
            print(f"  {label} {m}: {cell} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
