"""dpinfer.mcmc with a Python per-row log-likelihood: the exact sampler recovers a conjugate
posterior; the DP penalty stops at the budget and its claim matches the accountant."""

from __future__ import annotations

import math

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


def test_rwmh_recovers_conjugate_posterior():
    """20000 iterations after 2000 burn-in: mean within 0.3 posterior sd (≈ 10 Monte Carlo
    standard errors at an effective sample size ≥ 1000) and sd within 20 %."""
    m, s = posterior()
    r = mcmc.rwmh(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], iterations=22_000,
                  step_size=0.08, burn_in=2000, seed=3)
    assert r.samples.shape == (20_000, 1) and r.privacy is None
    assert abs(r.samples.mean() - m) < 0.3 * s
    assert abs(r.samples.std() - s) < 0.2 * s
    assert 0.2 < r.diagnostics["acceptance_rate"] < 0.9


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


def test_mcmc_errors():
    with pytest.raises(InvalidParameterError):
        mcmc.rwmh(priors.Normal(0.0, 1.0), lambda t: np.zeros(3), N, [0.0], iterations=5, step_size=0.1)
    with pytest.raises(InvalidParameterError):
        mcmc.rwmh(priors.Uniform(0, 1), log_lik, N, [5.0], iterations=5, step_size=0.1)
    with pytest.raises(ZeroDivisionError):
        mcmc.rwmh(priors.Normal(0.0, 1.0), lambda t: 1 / 0, N, [0.0], iterations=5, step_size=0.1)


def test_barker_recovers_conjugate_posterior():
    m, s = posterior()
    r = mcmc.barker(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], iterations=22_000,
                    step_size=0.06, burn_in=2000, seed=4)
    assert abs(r.samples.mean() - m) < 0.3 * s
    assert abs(r.samples.std() - s) < 0.2 * s


def test_dp_barker_stops_at_budget():
    eps, delta, batch = 2.0, 1e-5, 500
    r = mcmc.dp_barker(priors.Normal(0.0, PRIOR_SD), log_lik, N, [0.0], epsilon=eps, delta=delta,
                       batch=batch, temperature=0.1, step_size=0.05, noise_seed=1, seed=2)
    k = r.privacy["max_iterations"]
    assert r.diagnostics["iterations"] == k >= 1
    assert 0 < r.privacy["epsilon"] <= eps and r.privacy["delta"] == delta
    # the same calibration (thesis Thm 8) reached through dpinfer.accounting
    assert A.dp_barker_max_steps(eps, delta, batch, N)[0] == k


def grad_log_lik(theta):
    return (X - theta[0, 0]).reshape(-1, 1)


def test_hmc_recovers_conjugate_posterior():
    """Trajectory length 0.036 ≈ 0.18 of the oscillation period 2π·sd (a half period would
    map θ to its reflection about the mean and never mix)."""
    m, s = posterior()
    r = mcmc.hmc(priors.Normal(0.0, PRIOR_SD), log_lik, grad_log_lik, N, [0.0], iterations=3000,
                 step_size=0.004, leapfrog_steps=9, burn_in=500, seed=5)
    assert r.samples.shape == (2500, 1)
    assert abs(r.samples.mean() - m) < 0.3 * s
    assert abs(r.samples.std() - s) < 0.2 * s


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


def test_hmc_needs_a_prior_gradient():
    with pytest.raises(InvalidParameterError):
        mcmc.hmc(priors.Uniform(-1, 1), log_lik, grad_log_lik, N, [0.0], iterations=5,
                 step_size=0.01, leapfrog_steps=2)
