"""Benchmarks of the dpinfer Python package against peers in the same process.

Run (after installing the wheel, dp-accounting and opacus --no-deps, optionally elfi and
pyabc into the same venv):

    python python/benches/bench.py            # all
    python python/benches/bench.py accounting # only the accountant figures

Prints one line per measurement: name, median time, and ratios to ours. The figures in
python/README.md come from this script. Timings are medians of repeated runs
(time.perf_counter); no timing is asserted anywhere.
"""

from __future__ import annotations

import importlib.util
import pathlib
import platform
import statistics
import sys
import time

import numpy as np


def median_time(f, repeat=7, number=1):
    f()  # warm up
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            f()
        ts.append((time.perf_counter() - t) / number)
    return statistics.median(ts)


def fmt(t):
    if t < 1e-6:
        return f"{t * 1e9:8.1f} ns"
    if t < 1e-3:
        return f"{t * 1e6:8.2f} µs"
    if t < 1:
        return f"{t * 1e3:8.2f} ms"
    return f"{t:8.2f} s "


def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def opacus_rdp():
    spec = importlib.util.find_spec("opacus")
    if spec is None:
        return None
    path = pathlib.Path(spec.origin).parent / "accountants" / "analysis" / "rdp.py"
    s = importlib.util.spec_from_file_location("_opacus_rdp", path)
    m = importlib.util.module_from_spec(s)
    s.loader.exec_module(m)
    return m


def bench_accounting():
    from dpinfer import accounting as A

    q, z, steps, delta = 0.01, 1.0, 10_000, 1e-5
    print(f"\n## ε after {steps} Poisson-subsampled Gaussian steps (q={q}, σ={z}, δ={delta})")
    rows = []

    def ours_default():
        acc = A.RdpAccountant()
        acc.compose(A.Event.poisson_sampled(q, A.Event.gaussian(z)), steps)
        return acc.get_epsilon(delta)

    def ours_opacus_grid():
        acc = A.RdpAccountant(A.OPACUS_DEFAULT_ALPHAS)
        acc.compose_poisson_gaussian(z, q, steps)
        return acc.get_epsilon(delta)

    def ours_dpa_grid():
        acc = A.RdpAccountant(A.DP_ACCOUNTING_DEFAULT_ORDERS)
        acc.compose(A.Event.poisson_sampled(q, A.Event.gaussian(z)), steps)
        return acc.get_epsilon(delta)

    t0 = median_time(ours_default, number=20)
    rows.append(("dpinfer RdpAccountant (34 default orders)", t0, ours_default()))
    t1 = median_time(ours_opacus_grid, number=5)
    rows.append(("dpinfer RdpAccountant (opacus' 151 alphas)", t1, ours_opacus_grid()))
    t2 = median_time(ours_dpa_grid, number=5)
    rows.append(("dpinfer RdpAccountant (dp_accounting's 155 orders)", t2, ours_dpa_grid()))
    peers = []
    o = opacus_rdp()
    if o is not None:
        alphas = A.OPACUS_DEFAULT_ALPHAS

        def opacus_job():
            rdp = o.compute_rdp(q=q, noise_multiplier=z, steps=steps, orders=alphas)
            return o.get_privacy_spent(orders=alphas, rdp=rdp, delta=delta)[0]

        tp = median_time(opacus_job, repeat=5)
        rows.append(("opacus RDP analysis (151 alphas)", tp, opacus_job()))
        peers.append(("opacus", tp, t1))
    try:
        import dp_accounting as dpa

        def dpa_job():
            acc = dpa.rdp.RdpAccountant()
            acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z)), steps)
            return acc.get_epsilon(delta)

        td = median_time(dpa_job, repeat=5)
        rows.append(("dp_accounting RdpAccountant (155 orders)", td, dpa_job()))
        peers.append(("dp_accounting", td, t2))
    except ImportError:
        pass
    for name, t, eps in rows:
        print(f"  {name:<52} {fmt(t)}   ε = {eps:.4f}")
    for name, tp, tours in peers:
        print(f"  ratio {name} / dpinfer on the same grid: {tp / tours:.0f}×")

    print("\n## call overhead of the binding")
    ev = A.Event.gaussian(1.0)
    pld = A.PldAccountant()
    n = 200_000
    t = median_time(lambda: [pld.compose(ev) for _ in range(n)], repeat=5) / n
    print(f"  PldAccountant.compose(Event.gaussian) per call  {fmt(t)}  (Rust work: one add, ~ns)")
    pure = A.PureDpAccountant()
    t = median_time(lambda: [pure.get_epsilon(1e-5) for _ in range(n)], repeat=5) / n
    print(f"  PureDpAccountant.get_epsilon per call           {fmt(t)}")
    acc = A.RDPAccountant()
    t = median_time(lambda: [acc.step(noise_multiplier=1.0, sample_rate=0.01) for _ in range(10_000)], repeat=5) / 10_000
    print(f"  opacus-compatible RDPAccountant.step per call   {fmt(t)}  (composes 151 orders)")
    a = A.RdpAccountant()
    a.compose(A.Event.poisson_sampled(q, A.Event.gaussian(z)), steps)
    t = median_time(lambda: [a.get_epsilon(delta) for _ in range(10_000)], repeat=5) / 10_000
    print(f"  RdpAccountant.get_epsilon (34 orders) per call  {fmt(t)}")
    t = median_time(lambda: A.get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=q, steps=steps), repeat=5)
    print(f"  get_noise_multiplier (RDP, 34 orders)           {fmt(t)}")


def numpy_simulator(n_obs=20):
    def sim(theta, seeds):
        # Vectorised: one generator for the batch, seeded by the first row's seed.
        rng = np.random.default_rng(int(seeds[0]))
        return rng.normal(theta[:, :1], 1.0, (len(theta), n_obs)).mean(axis=1, keepdims=True)

    return sim


def bench_abc():
    from dpinfer import abc, priors

    sim = numpy_simulator()
    obs = np.array([1.0])
    print("\n## ABC with the same numpy simulator (θ ~ U(-5, 5), y = mean of 20 N(θ, 1))")
    n = 20_000

    def ours_rej():
        return abc.rejection_abc(priors.Uniform(-5, 5), sim, obs, budget=n, nearest=200, seed=1)

    t_rej = median_time(ours_rej, repeat=3)
    print(f"  dpinfer rejection_abc, {n} sims (4096-row calls)  {fmt(t_rej)}   mean {ours_rej().mean()[0]:.3f}")

    def ours_pairs():
        th, y = abc.simulate_pairs(priors.Uniform(-5, 5), sim, seed=1, stop=n, batch_size=4096)
        d = abc.euclidean_distances(y, obs)
        keep = np.argsort(d, kind="stable")[:200]
        return th[keep]

    t_pairs = median_time(ours_pairs, repeat=5)
    print(f"  dpinfer simulate_pairs + distances, {n} sims (batched) {fmt(t_pairs)}   mean {ours_pairs().mean():.3f}")

    def sim_alone():
        # the numpy work itself on the same 4096-row blocks: the floor of any batched sampler
        rng = np.random.default_rng(0)
        th = rng.uniform(-5, 5, (n, 1))
        seeds = rng.integers(0, 2**63, n, dtype=np.uint64)
        for a in range(0, n, 4096):
            sim(th[a:a + 4096], seeds[a:a + 4096])

    t_alone = median_time(sim_alone, repeat=5)
    print(f"  numpy simulator alone, {n} rows in 4096-row calls   {fmt(t_alone)}")

    trivial = lambda t, s: t[:, :1] * 1.0  # noqa: E731
    t_triv = median_time(lambda: abc.rejection_abc(priors.Uniform(-5, 5), trivial, obs, budget=n, nearest=200, seed=1), repeat=3)
    print(f"  binding cost per simulation (trivial simulator)    {fmt(t_triv / n)}")
    t_rng = median_time(lambda: np.random.default_rng(12345), repeat=5, number=1000)
    print(f"  (numpy: np.random.default_rng(seed) alone costs    {fmt(t_rng)})")

    def ours_smc():
        return abc.smc_abc(priors.Uniform(-5, 5), sim, obs, particles=500, max_generations=8, seed=1)

    r = ours_smc()
    t_smc = median_time(ours_smc, repeat=3)
    print(f"  dpinfer smc_abc 500 particles, 8 generations       {fmt(t_smc)}   sims {r.diagnostics['simulations']}, mean {r.mean()[0]:.3f}")

    def ours_smc_per_theta():
        return abc.smc_abc(priors.Uniform(-5, 5), sim, obs, particles=500, max_generations=8, seed=1, batch_size=1)

    t_smc1 = median_time(ours_smc_per_theta, repeat=3)
    print(f"  same, batch_size=1 (one row per call, identical result) {fmt(t_smc1)}   speed-up of batching {t_smc1 / t_smc:.1f}×")

    try:
        import elfi

        def elfi_distance():
            """The same model in ELFI (built inside each timed call, as before): a
            U(-5, 5) prior, the mean of 20 N(θ, 1) draws, Euclidean distance to obs."""
            m = elfi.ElfiModel()
            t1 = elfi.Prior("uniform", -5, 10, model=m, name="t1")

            def esim(t1, batch_size=1, random_state=None):
                rs = random_state or np.random
                return rs.normal(np.asarray(t1).reshape(-1, 1), 1.0, (batch_size, 20)).mean(axis=1, keepdims=True)

            y = elfi.Simulator(esim, t1, observed=obs.reshape(1, 1), model=m, name="y")
            return elfi.Distance("euclidean", y, model=m, name="d")

        def elfi_rej():
            rej = elfi.Rejection(elfi_distance(), batch_size=4096, seed=1)
            return rej.sample(200, quantile=200 / n)

        t_elfi = median_time(elfi_rej, repeat=3)
        print(f"  ELFI Rejection, {n} sims (batch 4096)             {fmt(t_elfi)}   ratio ELFI / dpinfer simulate_pairs {t_elfi / t_pairs:.2f}×, / rejection_abc {t_elfi / t_rej:.2f}×")
        print(f"  (ELFI / numpy simulator alone {t_elfi / t_alone:.2f}×: the most any batched sampler can reach)")

        def elfi_smc():
            smc = elfi.SMC(elfi_distance(), batch_size=500, seed=1)
            return smc.sample(500, quantiles=[0.5] * 7)

        t_esmc = median_time(elfi_smc, repeat=3)
        print(f"  ELFI SMC 500 particles, 8 generations              {fmt(t_esmc)}   ratio ELFI / dpinfer {t_esmc / t_smc:.2f}×")
    except ImportError:
        print("  (elfi not installed: skipped)")
    try:
        import pyabc  # noqa: F401
        import tempfile, os, logging

        logging.getLogger("ABC").setLevel(logging.ERROR)

        def pyabc_smc():
            def model(p):
                return {"y": np.random.normal(p["t"], 1.0, 20).mean()}

            prior = pyabc.Distribution(t=pyabc.RV("uniform", -5, 10))
            dist = lambda a, b: abs(a["y"] - b["y"])  # noqa: E731
            abc_ = pyabc.ABCSMC(model, prior, dist, population_size=500,
                                sampler=pyabc.sampler.SingleCoreSampler())
            db = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "b.db")
            abc_.new(db, {"y": 1.0})
            return abc_.run(max_nr_populations=8)

        t_p = median_time(pyabc_smc, repeat=1)
        print(f"  pyabc ABCSMC 500 particles, 8 generations          {fmt(t_p)}   ratio pyabc / dpinfer {t_p / t_smc:.1f}×")
    except ImportError:
        print("  (pyabc not installed: skipped)")


def main():
    import dpinfer

    print(f"dpinfer {dpinfer.__version__}, Python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"CPU: {cpu()}")
    what = sys.argv[1:] or ["accounting", "abc"]
    if "accounting" in what:
        bench_accounting()
    if "abc" in what:
        bench_abc()


if __name__ == "__main__":
    main()
