"""dpinfer.abc.smc_abc's perturbation kernels and prior-predictive first tolerance (issue 31):
every choice reaches the conjugate posterior; the defaults are the previous sampler, bit for
bit; bad values raise InvalidParameterError naming the keyword."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpinfer import abc, priors
from dpinfer.errors import InvalidParameterError

N_OBS = 20


def sim(theta, seeds):
    """ȳ of N_OBS draws from N(θ, 1), drawn directly as N(θ, 1/N_OBS), one stream per row."""
    z = np.array([np.random.default_rng(int(s)).standard_normal() for s in seeds])
    return (np.asarray(theta)[:, 0] + z / math.sqrt(N_OBS))[:, None]


def run(**kw):
    return abc.smc_abc(priors.Normal(0.0, 3.0), sim, [1.0], particles=500, final_tolerance=0.01,
                       max_generations=20, seed=11, **kw)


@pytest.mark.parametrize("kernel", ["twice-covariance", "olcm", "mvn"])
@pytest.mark.parametrize("first", ["infinity", "prior-quantile"])
def test_every_kernel_reaches_the_conjugate_posterior(kernel, first):
    r = run(kernel=kernel, first_tolerance=first)
    assert r.diagnostics["stop_reason"] == "final_tolerance"
    v = 1 / (1 / 9 + N_OBS)
    m = v * N_OBS
    assert abs(r.mean()[0] - m) < 0.05
    sd = math.sqrt(np.average((r.samples[:, 0] - r.mean()[0]) ** 2, weights=r.weights))
    assert abs(sd - math.sqrt(v)) < 0.3 * math.sqrt(v)
    g0 = r.diagnostics["history"][0]
    if first == "prior-quantile":
        # generation 0 ran at the median of 500 prior-predictive distances, not at ∞
        assert math.isfinite(g0["tolerance"]) and g0["simulations"] > 2 * 500 * 0.8
    else:
        assert g0["tolerance"] == math.inf and g0["simulations"] == 500


def test_the_defaults_are_the_previous_sampler():
    a = run()
    b = run(kernel="twice-covariance", kernel_scale=2.0, first_tolerance="infinity")
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.weights, b.weights)
    c = run(kernel="olcm")
    assert not np.array_equal(a.samples, c.samples)


def test_bad_kernel_keywords_are_named():
    with pytest.raises(InvalidParameterError) as e:
        run(kernel="gauss")
    assert e.value.name == "kernel"
    with pytest.raises(InvalidParameterError) as e:
        run(first_tolerance="median")
    assert e.value.name == "first_tolerance"
    with pytest.raises(InvalidParameterError) as e:
        run(first_tolerance="prior-quantile", geometric_factor=0.7)
    assert e.value.name == "first_tolerance"
    with pytest.raises(InvalidParameterError) as e:
        run(kernel="mvn", kernel_scale=-1.0)
    assert e.value.name == "kernel_scale"
