"""dpinfer.mcmc with a Python per-row log-likelihood: the exact samplers recover a conjugate
posterior; the private samplers stop at the budget and their claims match the accountant; the
front end is the library's run (Python == library, bit for bit)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dpinfer import accounting as A
from dpinfer import mcmc, priors
from dpinfer.errors import InvalidParameterError

N = 1000
X = np.random.default_rng(0).normal(0.5, 1.0, N)
PRIOR_SD = 10.0


def log_lik(theta):
    return -0.5 * (X - theta[0, 0]) ** 2


def posterior():
    prec = N + 1 / PRIOR_SD**2
    return X.sum() / prec, 1 / math.sqrt(prec)


def check_posterior(r, ess_min=1000.0):
    """Mean within 0.3 posterior sd and sd within 20 % of the exact posterior N(m, s²), given
    the library's bulk ESS ≥ ``ess_min`` (asserted). At ESS 1000 the Monte Carlo standard
    error of the mean is s/√1000 = 0.032 s, so 0.3 s is 9.5 standard errors (two-sided normal
    tail 2e-21); the sd estimate has standard error ≈ s/√(2·1000) = 0.022 s, so 0.2 s is 8.9
    standard errors (tail 5e-19). At ESS 500: 6.7 and 6.3 standard errors (tails 2e-11 and
    3e-10). The false-failure rate per call is below 1e-9 for ``ess_min`` ≥ 500 (CLT for the
    chain averages; a larger ESS only lowers it). Measured bulk ESS at these seeds: RWMH 4596,
    Barker 2944, HMC 1089."""
    m, s = posterior()
    assert r.diagnostics["ess"][0] >= ess_min, r.diagnostics["ess"]
    assert abs(r.samples.mean() - m) < 0.3 * s
    assert abs(r.samples.std() - s) < 0.2 * s


def test_rwmh_recovers_conjugate_posterior():
    """20000 iterations after 2000 burn-in (see ``check_posterior`` for the tolerance)."""
    r = mcmc.rwmh(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], iterations=22_000,
                  step_size=0.08, burn_in=2000, seed=3)
    assert r.samples.shape == (20_000, 1) and r.privacy is None
    check_posterior(r)
    assert 0.2 < r.diagnostics["acceptance_rate"] < 0.9
    assert r.diagnostics["iterations"] == 22_000 and r.diagnostics["clip_fraction"] == 0.0
    assert abs(r.diagnostics["rhat"][0] - 1.0) < 0.05


def test_rwmh_clip_is_applied():
    """``clip`` without ε clips every per-row ratio to ±clip·‖θ′−θ‖₂ (the library's clipped
    RWMH): a tiny clip clips almost every row, a huge one none; neither is private."""
    kw = dict(iterations=400, step_size=0.08, seed=3)
    tight = mcmc.rwmh(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], clip=1e-3, **kw)
    loose = mcmc.rwmh(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], clip=1e6, **kw)
    plain = mcmc.rwmh(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], **kw)
    assert tight.diagnostics["clip_fraction"] > 0.9 and tight.privacy is None
    assert loose.diagnostics["clip_fraction"] == 0.0
    np.testing.assert_array_equal(loose.samples, plain.samples)


def test_dp_penalty_stops_at_budget_and_matches_calibration():
    tau, eps, delta = 1.0, 1.0, 1e-5
    r = mcmc.dp_penalty(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], epsilon=eps, delta=delta,
                        clip=5.0, tau=tau, step_size=0.02, noise_seed=1, seed=2)
    k = A.dp_penalty_max_steps(eps, delta, tau, N, 0.5, "pld")
    assert r.privacy["max_iterations"] == k and r.diagnostics["iterations"] == k
    assert r.privacy["epsilon"] <= eps and r.privacy["delta"] == delta
    # The released chain's cost, composed independently: k Gaussian releases with noise
    # multiplier τ·n^α on a normalised sensitivity of 1.
    acc = A.PldAccountant(neighbouring="replace_one")
    acc.compose(A.Event.gaussian(tau * math.sqrt(N)), k)
    assert acc.get_epsilon(delta) == pytest.approx(r.privacy["epsilon"], rel=1e-9)
    # The library's claim: the same composition, stated as a value.
    assert r.privacy["claim_epsilon"] == pytest.approx(r.privacy["epsilon"], rel=1e-9)
    assert r.privacy["accountant"] == "pld"
    assert f"{k} × Gaussian" in r.privacy["claim"] and "replace-one" in r.privacy["claim"]


def test_mcmc_errors():
    with pytest.raises(InvalidParameterError):
        mcmc.rwmh(priors.Normal(0.0, 1.0), lambda t: np.zeros(3), N, [0.0], iterations=5, step_size=0.1)
    with pytest.raises(InvalidParameterError):
        mcmc.rwmh(priors.Uniform(0, 1), log_lik, N, [5.0], iterations=5, step_size=0.1)
    with pytest.raises(ZeroDivisionError):
        mcmc.rwmh(priors.Normal(0.0, 1.0), lambda t: 1 / 0, N, [0.0], iterations=5, step_size=0.1)


def test_barker_recovers_conjugate_posterior():
    r = mcmc.barker(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], iterations=22_000,
                    step_size=0.06, burn_in=2000, seed=4)
    check_posterior(r)


def test_dp_barker_stops_at_budget():
    eps, delta, batch = 2.0, 1e-5, 500
    r = mcmc.dp_barker(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], epsilon=eps, delta=delta,
                       batch=batch, temperature=0.1, step_size=0.05, noise_seed=1, seed=2)
    k = r.privacy["max_iterations"]
    assert r.diagnostics["iterations"] == k >= 1
    assert 0 < r.privacy["epsilon"] <= eps and r.privacy["delta"] == delta
    # the same calibration (thesis Thm 8) reached through dpinfer.accounting
    assert A.dp_barker_max_steps(eps, delta, batch, N)[0] == k
    assert r.privacy["claim_epsilon"] == pytest.approx(r.privacy["epsilon"], rel=1e-9)
    assert r.privacy["accountant"] == "rdp_integers"


def grad_log_lik(theta):
    return (X - theta[0, 0]).reshape(-1, 1)


def test_hmc_recovers_conjugate_posterior():
    """Trajectory length 0.036 ≈ 0.18 of the oscillation period 2π·sd (a half period would
    map θ to its reflection about the mean and never mix)."""
    r = mcmc.hmc(priors.Normal(0.0, PRIOR_SD), log_lik, grad_log_lik, N, [0.0], iterations=3000,
                 step_size=0.004, leapfrog_steps=9, burn_in=500, seed=5)
    assert r.samples.shape == (2500, 1)
    check_posterior(r, ess_min=500.0)


class GradPrior:
    """N(0, 10²) as a Python prior with a gradient."""

    def sample(self, seeds):
        return np.array([[np.random.default_rng(int(x)).normal(0.0, PRIOR_SD)] for x in seeds])

    def log_pdf(self, theta):
        return -0.5 * (theta[:, 0] / PRIOR_SD) ** 2

    def grad_log_pdf(self, theta):
        return -theta[0] / PRIOR_SD**2


def test_dp_hmc_stops_at_budget_and_matches_calibration():
    eps, delta, tau_l, tau_g, L = 2.0, 1e-5, 1.0, 1.0, 5
    r = mcmc.dp_hmc(GradPrior(), log_lik, grad_log_lik, N, [0.0], epsilon=eps, delta=delta,
                    ratio_clip=5.0, grad_clip=5.0, tau_l=tau_l, tau_g=tau_g, step_size=0.01,
                    leapfrog_steps=L, noise_seed=1, seed=2)
    k = A.dp_hmc_max_steps(eps, delta, tau_l, tau_g, N, L, "pld")
    assert r.privacy["max_iterations"] == k == r.diagnostics["iterations"] >= 1
    assert 0 < r.privacy["epsilon"] <= eps
    # k ratio tests and kL + 1 gradients (Algorithm 3's reuse), composed by the library.
    assert f"{k} × Gaussian" in r.privacy["claim"]
    assert f"{k * L + 1} × Gaussian" in r.privacy["claim"]
    assert r.privacy["claim_epsilon"] == pytest.approx(r.privacy["epsilon"], rel=1e-9)


def test_hmc_needs_a_prior_gradient():
    with pytest.raises(InvalidParameterError):
        mcmc.hmc(priors.Uniform(-1, 1), log_lik, grad_log_lik, N, [0.0], iterations=5,
                 step_size=0.01, leapfrog_steps=2)


def test_exact_runs_validate_their_length():
    """The library's run settings: at least one iteration, burn-in below the iteration count."""
    for bad in (dict(iterations=0), dict(iterations=10, burn_in=10)):
        with pytest.raises(InvalidParameterError):
            mcmc.rwmh(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], step_size=0.1, **bad)


def test_private_chain_cut_by_budget_keeps_half():
    """A private chain the budget stops before ``burn_in`` discards at most half of what it
    ran (the library's rule), instead of returning no draws."""
    r = mcmc.dp_penalty(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], epsilon=1.0,
                        delta=1e-5, clip=5.0, tau=1.0, step_size=0.02, burn_in=10**6,
                        noise_seed=1, seed=2)
    k = r.diagnostics["iterations"]
    assert len(r.samples) == k - k // 2


def test_chains_share_one_budget():
    """Three DP-penalty chains split the iteration count the library allows for three chains
    (DP penalty has no per-chain one-off release, so it is the one-chain count): shares differ
    by at most one, the iterations run sum to ``max_iterations``, and ε is the composition
    over every iteration of every chain, within the target. ``chains=1`` is the default run."""
    eps, delta, tau = 1.0, 1e-5, 1.0
    kw = dict(epsilon=eps, delta=delta, clip=5.0, tau=tau, step_size=0.02, noise_seed=1, seed=2)
    one = mcmc.dp_penalty(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], **kw)
    also = mcmc.dp_penalty(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], chains=1, **kw)
    np.testing.assert_array_equal(one.samples, also.samples)
    three = mcmc.dp_penalty(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], chains=3, **kw)
    k = three.privacy["max_iterations"]
    shares = three.diagnostics["chain_iterations"]
    assert k == one.privacy["max_iterations"] == sum(shares) == three.diagnostics["iterations"]
    assert len(shares) == 3 and max(shares) - min(shares) <= 1
    assert sorted(set(three.diagnostics["chain"].tolist())) == [0, 1, 2]
    assert len(three.diagnostics["noise_sd"]) == k
    acc = A.PldAccountant(neighbouring="replace_one")
    acc.compose(A.Event.gaussian(tau * math.sqrt(N)), k)
    assert acc.get_epsilon(delta) == pytest.approx(three.privacy["epsilon"], rel=1e-9)
    assert three.privacy["epsilon"] <= eps
    assert f"{k} × Gaussian" in three.privacy["claim"]


def test_rwmh_chains_agree_on_the_posterior():
    """Four exact chains of 6000 iterations (1000 burn-in each): the pooled draws pass
    ``check_posterior`` and split-R̂ over the chains is below 1.05. With ESS ≥ 100 per half
    chain, R̂² − 1 ≈ χ²₇/(7·ESS_half) − 1/n, so R̂ ≥ 1.05 needs χ²₇ > 72: probability < 1e-12."""
    r = mcmc.rwmh(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], iterations=6000,
                  step_size=0.08, burn_in=1000, chains=4, seed=7)
    assert r.samples.shape == (20_000, 1)
    assert r.diagnostics["chain_iterations"] == [6000] * 4
    check_posterior(r)
    assert r.diagnostics["rhat"][0] < 1.05, r.diagnostics["rhat"]


def test_budget_below_two_iterations_is_refused():
    """A target too small for two iterations raises before any noise is drawn (the library's
    run); half a target is an invalid-parameter error naming ``epsilon``."""
    from dpinfer.errors import BudgetExhausted

    with pytest.raises(BudgetExhausted):
        mcmc.dp_penalty(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], epsilon=1e-4,
                        delta=1e-6, clip=5.0, tau=1.0, step_size=0.02, noise_seed=1)
    with pytest.raises(InvalidParameterError) as e:
        mcmc._native.penalty(priors.Normal(0.0, PRIOR_SD), log_lik, N, np.zeros(1),
                             iterations=10, step_size=[0.1], epsilon=1.0)
    assert e.value.name == "epsilon"


DATA = Path(__file__).resolve().parents[2] / "crates" / "mcmc" / "tests" / "data"
PARITY_X = (np.arange(200) % 17) / 8.0 - 1.0


def parity_log_lik(theta):
    return -0.5 * (PARITY_X - theta[0, 0]) ** 2


def parity_grad_log_lik(theta):
    return (PARITY_X - theta[0, 0]).reshape(-1, 1)


def library_run(name):
    """A run of the library's ``Run`` committed by ``crates/mcmc/tests/suite/run_kernels.rs``."""
    want = {"draw": []}
    for line in (DATA / name).read_text().splitlines():
        if line.startswith("#"):
            continue
        key, value = line.split()
        if key == "draw":
            want["draw"].append(float(value))
        else:
            want[key] = float(value)
    return want


def same_as_library(r, want):
    assert r.diagnostics["iterations"] == want["iterations"] == len(want["draw"])
    assert r.privacy["max_iterations"] == want["allowed"]
    assert r.samples[:, 0].tolist() == want["draw"]
    assert r.diagnostics["acceptance_rate"] == want["acceptance_rate"]
    assert r.privacy["epsilon"] == want["epsilon"] and r.privacy["delta"] == want["delta"]
    assert r.privacy["claim_epsilon"] == want["claim_epsilon"]


def test_dp_penalty_is_the_library_run():
    """Python == library: ``run_kernels.rs`` (``parity_run``) runs the library's ``Run`` with
    this kernel, these seeds and this model (the per-row likelihood in the same
    floating-point operations) and commits its draws and ε; the front end reproduces them bit
    for bit."""
    r = mcmc.dp_penalty(priors.Normal(0.0, 10.0), parity_log_lik, 200, [0.0], epsilon=4.0,
                        delta=1e-5, clip=5.0, tau=1.0, step_size=0.05, seed=2, noise_seed=1)
    same_as_library(r, library_run("python_parity.txt"))


def test_dp_hmc_is_the_library_run():
    """As above for DP HMC (``parity_hmc_run``): Python gradients, the library's prior."""
    r = mcmc.dp_hmc(priors.Normal(0.0, 10.0), parity_log_lik, parity_grad_log_lik, 200, [0.0],
                    epsilon=4.0, delta=1e-5, ratio_clip=3.0, grad_clip=2.0, tau_l=2.0,
                    tau_g=2.0, step_size=0.005, leapfrog_steps=2, seed=2, noise_seed=1)
    same_as_library(r, library_run("python_parity_dp_hmc.txt"))
