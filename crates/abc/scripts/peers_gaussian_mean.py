"""Side-by-side peers for the Gaussian-mean ABC toy of the abc crate's benchmarks
(tests/benches/benches/abc.rs): y_i ~ N(theta, 1), i = 1..100, summary = mean, prior
theta ~ N(0, 1), observed summary 0.5, distance |s - s_obs|.

  * rejection ABC, 1e5 simulations, tolerance 0.05: vectorised numpy, ELFI (batched and
    batch_size = 1), pyabc is SMC-only (its first generation with a fixed epsilon is used);
  * SMC-ABC, 1000 particles to tolerance 0.01: pyabc (single core, quantile epsilon 0.3),
    ELFI (schedule 1.0 -> 0.01).

Run from the workspace root inside a venv with `pip install pyabc elfi`:
    python crates/abc/scripts/peers_gaussian_mean.py > crates/abc/results/peers_gaussian_mean.md
Prints a markdown table; timings are wall-clock on one core of the machine it runs on.
"""
import logging
import os
import tempfile
import time

import numpy as np

logging.disable(logging.WARNING)
os.environ.setdefault("OMP_NUM_THREADS", "1")

S_OBS = 0.5
N_OBS = 100
rows = []


def row(tool, task, seconds, sims, note=""):
    rows.append((tool, task, seconds, sims, note))


# --- numpy, vectorised rejection -------------------------------------------------------
rng = np.random.default_rng(1)
t0 = time.perf_counter()
n = 100_000
theta = rng.normal(0.0, 1.0, n)
s = theta + rng.normal(0.0, 1.0, (n, N_OBS)).mean(axis=1)
acc = theta[np.abs(s - S_OBS) <= 0.05]
row("numpy (vectorised)", "rejection, 1e5 sims, tol 0.05", time.perf_counter() - t0, n,
    f"{acc.size} accepted")

# --- ELFI -------------------------------------------------------------------------------
try:
    import elfi
    import scipy.stats as ss

    def sim(theta, batch_size=1, random_state=None):
        random_state = random_state or np.random
        theta = np.asarray(theta).reshape(-1, 1)
        return theta + random_state.normal(0.0, 1.0, (batch_size, N_OBS))

    def mean(y):
        return np.mean(y, axis=1)

    def build():
        m = elfi.ElfiModel()
        th = elfi.Prior(ss.norm, 0, 1, model=m, name="theta")
        y_obs = np.full((1, N_OBS), S_OBS)
        sim_node = elfi.Simulator(sim, th, observed=y_obs, name="sim")
        summ = elfi.Summary(mean, sim_node, name="mean")
        d = elfi.Distance("euclidean", summ, name="d")
        return m, d

    for batch in (10_000, 1):
        m, d = build()
        n = 100_000 if batch > 1 else 5_000
        rej = elfi.Rejection(d, batch_size=batch, seed=1)
        t0 = time.perf_counter()
        res = rej.sample(1000, quantile=1000 / n)
        dt = time.perf_counter() - t0
        row(f"ELFI {elfi.__version__} (batch {batch})", f"rejection, {n} sims", dt, n)
    m, d = build()
    smc = elfi.SMC(d, batch_size=1000, seed=1)
    t0 = time.perf_counter()
    res = smc.sample(1000, thresholds=[1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01])
    dt = time.perf_counter() - t0
    row(f"ELFI {elfi.__version__}", "SMC-ABC, 1000 particles to 0.01", dt,
        int(res.n_sim), f"mean {float(np.mean(res.samples['theta'])):.3f}")
except Exception as e:  # report, do not fail the whole table
    row("ELFI", "failed", float("nan"), 0, repr(e)[:80])

# --- pyabc ------------------------------------------------------------------------------
try:
    import pyabc

    def model(p):
        return {"s": p["theta"] + np.random.normal(0.0, 1.0, N_OBS).mean()}

    def dist(x, y):
        return abs(x["s"] - y["s"])

    prior = pyabc.Distribution(theta=pyabc.RV("norm", 0, 1))
    db = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "pyabc.db")
    abc = pyabc.ABCSMC(model, prior, dist, population_size=1000,
                       sampler=pyabc.sampler.SingleCoreSampler(),
                       eps=pyabc.QuantileEpsilon(alpha=0.3))
    abc.new(db, {"s": S_OBS})
    np.random.seed(1)
    t0 = time.perf_counter()
    h = abc.run(minimum_epsilon=0.01, max_nr_populations=30)
    dt = time.perf_counter() - t0
    sims = int(h.total_nr_simulations)
    df, w = h.get_distribution()
    row(f"pyabc {pyabc.__version__} (single core)", "SMC-ABC, 1000 particles to 0.01", dt, sims,
        f"mean {float(np.sum(df['theta'].to_numpy() * w)):.3f}")
except Exception as e:
    row("pyabc", "failed", float("nan"), 0, repr(e)[:80])

print("| tool | task | seconds | simulations | simulations/s | note |")
print("|---|---|---|---|---|---|")
for tool, task, sec, sims, note in rows:
    rate = sims / sec if sec == sec and sec > 0 else float("nan")
    print(f"| {tool} | {task} | {sec:.3f} | {sims} | {rate:,.0f} | {note} |")
