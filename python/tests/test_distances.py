"""dpinfer.abc.RffMmd: the library's ABCDP distance, checked against a NumPy re-derivation
of the random-feature map (Rahimi & Recht 2007; Park, Vinaroz & Jitkrittum 2021 §4)."""

from __future__ import annotations

import numpy as np
import pytest

import dpinfer
from dpinfer.abc import RffMmd
from dpinfer.errors import DpinferError


def _features(x, z, bw):
    """φ(x) = sqrt(2/D)·[cos(ωᵀx/l), sin(ωᵀx/l)] interleaved per frequency, D = 2·len(z)."""
    t = (x @ z.T) / bw  # (n, D/2)
    d = 2 * z.shape[0]
    phi = np.empty((x.shape[0], d))
    phi[:, 0::2] = np.cos(t)
    phi[:, 1::2] = np.sin(t)
    return phi * np.sqrt(2.0 / d)


def _numpy_mmd(obs, sets, z, bw):
    mo = _features(obs, z, bw).mean(axis=0)
    return np.array([np.linalg.norm(_features(s, z, bw).mean(axis=0) - mo) for s in sets])


@pytest.mark.parametrize("d", [1, 3])
def test_distances_match_numpy(d):
    rng = np.random.default_rng(4)
    obs = rng.normal(size=(300, d))
    sets = rng.normal(0.3, 1.2, size=(17, 200, d))
    r = RffMmd(obs, seed=9, features=60, bandwidth=1.3)
    assert r.num_features == 60 and r.frequencies.shape == (30, d)
    got = r.distances(sets)
    want = _numpy_mmd(obs, sets, r.frequencies, 1.3)
    # Tolerance: the library's sincos and summation order differ from NumPy's by a few ulps
    # per feature; 1e-9 is ≥ 10⁵ times that.
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert np.all((got >= 0) & (got <= 2))
    # (m, n·d) rows are the same sets.
    np.testing.assert_array_equal(r.distances(sets.reshape(17, -1)), got)
    # The same seed gives the same public frequencies.
    np.testing.assert_array_equal(RffMmd(obs, seed=9, features=60, bandwidth=2.0).frequencies, r.frequencies)
    assert not np.array_equal(RffMmd(obs, seed=10, features=60, bandwidth=1.3).frequencies, r.frequencies)


def test_median_heuristic_on_public_data():
    rng = np.random.default_rng(5)
    data = rng.normal(size=(400, 2))
    r = RffMmd(np.zeros((5, 2)), seed=1, median_data=data)
    diff = np.linalg.norm(data[:, None, :] - data[None, :, :], axis=-1)
    want = np.median(diff[np.triu_indices(400, k=1)])
    assert r.bandwidth == pytest.approx(want, rel=1e-12)
    # Only the first 1000 rows are used.
    big = rng.normal(size=(1500, 1))
    r = RffMmd(np.zeros(5), seed=1, median_data=big)
    d1 = np.abs(big[:1000] - big[:1000].T)
    assert r.bandwidth == pytest.approx(np.median(d1[np.triu_indices(1000, k=1)]), rel=1e-12)


def test_sensitivity_is_lemma_1():
    r = RffMmd(np.zeros((250, 1)), seed=0, bandwidth=1.0)
    s = r.sensitivity()
    # 2/N plus the library's floating-point slack for sums of N unit-norm features
    # (dpinfer_distances::sensitivity::rounding_slack: about 1e-6 here, far below 2/N).
    assert 2 / 250 <= s <= 2 / 250 + 1e-5
    assert r.relation == "replace-one"
    assert r.sensitivity(10_000) >= s


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(bandwidth=1.0, median_data=np.zeros((3, 1))),
        dict(bandwidth=0.0),
        dict(bandwidth=float("nan")),
        dict(bandwidth=1.0, features=1),
        dict(median_data=np.ones((50, 1))),  # all equal: degenerate median
        dict(median_data=np.array([0.0, 1.0, float("nan")])),
    ],
)
def test_bad_settings_raise(kwargs):
    with pytest.raises(DpinferError):
        RffMmd(np.zeros((4, 1)), seed=0, **kwargs)


def test_bad_data_raise():
    with pytest.raises(DpinferError):
        RffMmd(np.array([0.0, np.nan]), seed=0, bandwidth=1.0)
    with pytest.raises(DpinferError):
        RffMmd(np.zeros((0, 1)), seed=0, bandwidth=1.0)
    r = RffMmd(np.zeros((4, 2)), seed=0, bandwidth=1.0)
    with pytest.raises(DpinferError):
        r.distances(np.zeros((3, 5)))  # 5 values are not whole rows of 2
    with pytest.raises(DpinferError):
        RffMmd(np.zeros((4, 2)), seed=0, median_data=np.zeros(5))


def test_abcdp_pipeline_recovers_the_mean():
    """The paper's two-party workflow in Python: public pairs, the library's RFF MMD and its
    sensitivity, SVT-ABC. The toy is N(μ, 1) with 500 observations at μ = 1.5, prior
    N(0, 3²); with ε = 20 over c = 30 acceptances, the accepted μ's mean lies within 0.5 of
    1.5 (the ABC posterior's sd at this tolerance is ≈ 0.2; seeds fixed)."""
    prior = dpinfer.priors.Normal(0.0, 3.0)

    def simulator(theta, seeds):
        return np.stack([np.random.default_rng(int(s)).normal(t[0], 1.0, 500) for t, s in zip(theta, seeds)])

    obs = np.random.default_rng(123).normal(1.5, 1.0, 500)
    thetas, outputs = dpinfer.abc.simulate_pairs(prior, simulator, seed=7, stop=3000)
    dist = RffMmd(obs, seed=7, features=100, median_data=outputs[0])
    rho = dist.distances(outputs)
    res = dpinfer.abc.svt_abc(
        thetas, rho, epsilon_abc=0.05, epsilon_total=20.0, c=30,
        sensitivity=dist.sensitivity(), clip=2.0, noise_seed=3,
    )
    assert res.privacy["epsilon"] <= 20.0
    assert len(res.samples) > 0
    assert abs(res.samples[:, 0].mean() - 1.5) < 0.5
