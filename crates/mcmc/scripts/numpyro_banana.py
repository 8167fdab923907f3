#!/usr/bin/env python3
"""NumPyro NUTS on the thesis 2-D banana (n = 100 000), for the ESS/s comparison with the
exact (non-DP) kernels of dpinfer-mcmc (`cargo run --release -p dpinfer-mcmc --example banana_mmd`).

Same model as `BananaSettings::thesis_2d()`: a = 20, b = 0, m = 0, sigma1^2 = 20,
sigma2^2 = 2.5, prior Ban(0, 1000 I, a, b, m) (z ~ N(0, 1000 I), theta = (z1, z2 - a z1^2),
Jacobian 1), data simulated at theta = (0, 3); per-row likelihood
x1 ~ N(theta1, sigma1^2), x2 ~ N(theta2 + a theta1^2, sigma2^2), evaluated over all n rows at
every gradient (as the Rust kernels do). NUTS samples theta itself (improper flat sites plus
the exact log density as a factor), so it faces the same banana geometry as the Rust kernels;
it is *not* given the reparametrisation (theta1, u) that would make the posterior Gaussian.

ESS: rank-normalised split bulk ESS (Vehtari et al. 2021) from ArviZ, minimum over theta1,
theta2 -- the same estimator `dpinfer_mcmc::diagnostics::ess_bulk` implements. ESS/s is
reported for the sampling phase alone (most favourable to NumPyro: adaptation and JIT
compilation excluded) and for the whole run (warm-up incl. compilation + sampling).

Run (throw-away venv, not needed by the test suite):
  python3 -m venv target/venv-numpyro
  target/venv-numpyro/bin/pip install numpyro jax jaxlib arviz
  target/venv-numpyro/bin/python crates/mcmc/scripts/numpyro_banana.py
"""
import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import arviz as az  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import numpyro  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from numpyro.distributions import constraints  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402

jax.config.update("jax_enable_x64", True)

A, S1, S2, S0 = 20.0, 20.0, 2.5, 1000.0
N = 100_000
rng = np.random.default_rng(2021)
x1 = jnp.asarray(rng.normal(0.0, np.sqrt(S1), N))
x2 = jnp.asarray(rng.normal(3.0, np.sqrt(S2), N))


def model(x1, x2):
    th = numpyro.sample("theta", dist.ImproperUniform(constraints.real_vector, (), (2,)))
    u = th[1] + A * th[0] ** 2
    log_prior = -0.5 * (th[0] ** 2 + u**2) / S0
    log_lik = jnp.sum(-0.5 * (x1 - th[0]) ** 2 / S1 - 0.5 * (x2 - u) ** 2 / S2)
    numpyro.factor("logp", log_prior + log_lik)


def run(num_warmup, num_samples, seed):
    kernel = NUTS(model, dense_mass=False, target_accept_prob=0.8)
    mcmc = MCMC(kernel, num_warmup=num_warmup, num_samples=num_samples, progress_bar=False)
    key = jax.random.PRNGKey(seed)
    init = {"theta": jnp.array([0.0, 3.0])}
    t0 = time.perf_counter()
    mcmc.warmup(key, x1, x2, init_params=init, extra_fields=("num_steps",))
    t1 = time.perf_counter()
    mcmc.run(mcmc.post_warmup_state.rng_key, x1, x2, extra_fields=("num_steps",))
    jax.block_until_ready(mcmc.get_samples()["theta"])
    t2 = time.perf_counter()
    th = np.asarray(mcmc.get_samples()["theta"])
    steps = np.asarray(mcmc.get_extra_fields()["num_steps"])
    ess = min(
        float(az.ess(th[None, :, k], method="bulk")) for k in range(2)
    )
    return t1 - t0, t2 - t1, ess, steps.mean(), th


print(f"jax {jax.__version__}, numpyro {numpyro.__version__}, devices {jax.devices()}")
print("| run | warm-up s (incl. JIT) | sampling s | min bulk ESS | ESS/s sampling | ESS/s total | mean leapfrog steps |")
print("|---|---|---|---|---|---|---|")
for seed in range(3):
    tw, ts, ess, steps, th = run(1000, 2000, seed)
    print(
        f"| seed {seed} | {tw:.2f} | {ts:.2f} | {ess:.0f} | {ess / ts:.1f} | {ess / (tw + ts):.1f} | {steps:.1f} |"
    )
print(f"posterior mean {th.mean(0)}, sd {th.std(0)}")
