# %% [markdown]
# # dpinfer from Python: accounting, mechanisms, private ABC
#
# A notebook-style script (cells separated by `# %%`; runs as a plain script too):
# `python python/examples/quickstart.py`. Needs the dpinfer wheel and numpy.

# %%
import numpy as np

import dpinfer
from dpinfer import abc, priors
from dpinfer import accounting as A
from dpinfer import mechanisms as M
from dpinfer.errors import BudgetExceeded

print("dpinfer", dpinfer.__version__)

# %% [markdown]
# ## 1. Accounting a DP-SGD run (dp_accounting-style API)

# %%
q, sigma, steps, delta = 256 / 60_000, 1.1, 15_000, 1e-5
acc = A.RdpAccountant()
acc.compose(A.PoissonSampledDpEvent(q, A.GaussianDpEvent(sigma)), steps)
report = acc.epsilon_report(delta)
print(f"RDP: eps = {report.epsilon:.3f} at delta = {delta} ({report.conversion}, order {report.order})")

# The noise multiplier for a target budget (opacus' get_noise_multiplier signature):
z = A.get_noise_multiplier(target_epsilon=3.0, target_delta=delta, sample_rate=q, steps=steps)
print(f"noise multiplier for eps = 3: {z:.4f}")

# %% [markdown]
# ## 2. An opacus user swaps in the accountant

# %%
opacus_like = A.RDPAccountant()
for _ in range(1000):
    opacus_like.step(noise_multiplier=z, sample_rate=q)
print("opacus-compatible eps after 1000 steps:", round(opacus_like.get_epsilon(delta), 4))

# %% [markdown]
# ## 3. A budget filter refuses what does not fit

# %%
f = A.BudgetFilter(A.ZcdpAccountant(), 1.0, 1e-6)
release = M.Gaussian(rho=0.001, sensitivity=1.0, lo=0.0, hi=1.0)
answers = []
try:
    while True:
        f.try_compose(release.event)  # admit first, then release
        answers.append(release.release(0.42)[0])
except BudgetExceeded as e:
    print(f"{len(answers)} Gaussian releases fit in eps = 1; the next would reach eps = {e.epsilon:.4f}")

# %% [markdown]
# ## 4. Mechanisms return the value and its event (noise from the OS CSPRNG)

# %%
lap = M.Laplace(epsilon=0.5, sensitivity=1.0, lo=0.0, hi=100.0)
value, event = lap.release(37.0)
print("Laplace release:", value, event)

# %% [markdown]
# ## 5. Private ABC (ABCDP): public pairs from your numpy simulator, private SVT pass


# %%
def simulator(theta, seeds):
    """theta (n, 1), seeds (n,) -> (n, 1): the mean of 50 N(theta, 1) draws per row."""
    out = np.empty((len(theta), 1))
    for i, (t, s) in enumerate(zip(theta, seeds)):
        out[i, 0] = np.random.default_rng(int(s)).normal(t[0], 1.0, 50).mean()
    return out


prior = priors.Uniform(-3.0, 3.0)
thetas, outputs = abc.simulate_pairs(prior, simulator, seed=2026, stop=20_000)  # public
private_observation = np.array([0.7])  # the data owner's summary
dist = abc.euclidean_distances(outputs, private_observation)
result = abc.svt_abc(thetas, dist, epsilon_abc=0.05, epsilon_total=10.0, c=20,
                     sensitivity=0.02, clip=1.0, names=["theta"])
print(f"SVT-ABC: {len(result)} accepted, posterior mean {result.mean()[0]:.3f}, "
      f"eps = {result.privacy['epsilon']:.3f} ({result.privacy['event'].name})")
print(result.to_pandas().describe().loc[["mean", "std"]])

# %% [markdown]
# ## 6. Non-private SMC-ABC with the same simulator (for comparison)

# %%
smc = abc.smc_abc(prior, simulator, private_observation, particles=500, max_generations=6, seed=1)
print(f"SMC-ABC mean {smc.mean()[0]:.3f} after {smc.diagnostics['simulations']} simulations "
      f"({smc.diagnostics['stop_reason']})")
