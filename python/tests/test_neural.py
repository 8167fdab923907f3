"""dpinfer.neural (SPPE / SPLE) with a numpy simulator, tiny settings: the posterior moves
toward the released statistic, runs are reproducible from the seed, the saved estimator
samples the run's draws again, and bad arguments raise typed errors."""

from __future__ import annotations

import numpy as np
import pytest

from dpinfer import mechanisms, neural, priors
from dpinfer.errors import InvalidParameterError

N_OBS = 20
TINY = dict(rounds=2, simulations=200, noise_draws=2, layers=2, hidden=32, max_epochs=40, samples=200)


def mean_sim(theta, seeds):
    """The mean of N_OBS draws of N(θ, 1)."""
    out = np.empty((len(theta), 1))
    for i, (t, s) in enumerate(zip(theta, seeds)):
        out[i, 0] = np.random.default_rng(int(s)).normal(t[0], 1.0, N_OBS).mean()
    return out


def _setting():
    prior = priors.Independent(priors.Normal(0.0, 3.0))
    mech = mechanisms.Laplace(epsilon=5.0, sensitivity=0.5, lo=-10.0, hi=10.0, dim=1, noise_seed=7)
    return prior, mech, np.array([2.0])


def test_sppe_moves_to_the_release_and_is_reproducible(tmp_path):
    prior, mech, obs = _setting()
    path = str(tmp_path / "q.safetensors")
    a = neural.sppe(prior, mean_sim, obs, mech, seed=3, estimator_path=path, **TINY)
    b = neural.sppe(prior, mean_sim, obs, mech, seed=3, **TINY)
    assert a.samples.shape == (200, 1)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert len(a.rounds) == 2 and a.rounds[1]["proposal"] == "truncated"
    # prior N(0, 9); the posterior given a release near 2 sits well right of 0 and is narrower
    assert 1.0 < a.samples.mean() < 3.0 and a.samples.std() < 1.5
    again = neural.sample_estimator(path, prior, obs, 200, seed=3)
    np.testing.assert_array_equal(again, a.samples)


def test_sple_reports_its_chains():
    prior, mech, obs = _setting()
    r = neural.sple(prior, mean_sim, obs, mech, seed=1, **TINY)
    assert r.samples.shape == (200, 1)
    assert r.rounds[1]["proposal"] == "mcmc"
    assert len(r.diagnostics["rhat"]) == 1 and len(r.diagnostics["ess_bulk"]) == 1
    assert 0.5 < r.samples.mean() < 3.5


def test_bad_arguments_raise_typed_errors():
    prior, mech, obs = _setting()
    with pytest.raises(InvalidParameterError) as e:
        neural.sppe(prior, mean_sim, obs, mech, rounds=0)
    assert e.value.name == "rounds"
    with pytest.raises(InvalidParameterError) as e:
        neural.sppe(prior, mean_sim, obs, mech, sampling="sobol")
    assert e.value.name == "sampling"
    with pytest.raises(InvalidParameterError) as e:
        neural.sppe(prior, mean_sim, obs, "laplace")
    assert e.value.name == "mechanism"


def test_the_fused_spline_is_a_reproducible_opt_in_version(tmp_path):
    """``spline=2`` (the fused spline, SplineImpl version 2) trains reproducibly and its saved
    estimator samples the run's draws again; the default (version 1) trains to other last bits;
    unknown versions and a spline for the MAF raise typed errors naming ``spline``."""
    prior, mech, obs = _setting()
    path = str(tmp_path / "fused.safetensors")
    a = neural.sppe(prior, mean_sim, obs, mech, seed=3, spline=2, estimator_path=path, **TINY)
    b = neural.sppe(prior, mean_sim, obs, mech, seed=3, spline=2, **TINY)
    v1 = neural.sppe(prior, mean_sim, obs, mech, seed=3, **TINY)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert not np.array_equal(a.samples, v1.samples)
    assert abs(a.samples.mean() - v1.samples.mean()) < 0.5
    np.testing.assert_array_equal(neural.sample_estimator(path, prior, obs, 200, seed=3), a.samples)
    for bad in (dict(spline=3), dict(flow="maf", spline=2)):
        with pytest.raises(InvalidParameterError) as e:
            neural.sppe(prior, mean_sim, obs, mech, **bad)
        assert e.value.name == "spline"


def test_a_negative_or_huge_spline_number_is_the_typed_settings_error():
    """``spline=`` outside ``u32`` (negative, or beyond 64 bits) raises the typed
    InvalidParameterError naming ``spline``, not pyo3's OverflowError; a non-int a TypeError."""
    prior, mech, obs = _setting()
    for bad in (-1, -(2**40), 2**32 + 1, 2**70, -(2**70)):
        with pytest.raises(InvalidParameterError) as e:
            neural.sppe(prior, mean_sim, obs, mech, spline=bad)
        assert e.value.name == "spline"
        assert not isinstance(e.value, OverflowError)
    with pytest.raises(TypeError):
        neural.sppe(prior, mean_sim, obs, mech, spline=2.0)
