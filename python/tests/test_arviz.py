"""``RunResult.to_datatree()`` / ``to_arviz()``: ArviZ ≥ 1.0's ``xarray.DataTree`` —
posterior over (chain, draw), sample_stats with the weights, observed_data only when given,
the privacy claim as attributes — saved to netCDF and read back; ``az.summary`` and
``az.plot_rank`` run on it: with arviz ≥ 1.0 where installed (it needs Python ≥ 3.12), with
arviz 0.x through ``az.InferenceData.from_datatree`` on Python 3.11 (the CI's interpreter).

Fails on the old code: ``to_datatree`` did not exist and ``to_arviz`` built an arviz 0.x
``InferenceData`` without weights or privacy attributes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpinfer

from test_run import soft_mixture

xr = pytest.importorskip("xarray")

WEIGHTED = soft_mixture(n=300, features=30, pairs=300)

NON_PRIVATE = """
[model]
name = "gaussian-mean"
n = 100

[distance]
kind = "rff-mmd"
features = 30

[sampler]
kind = "rejection"
pairs = 400
accept = 40

[seeds]
run = 2
"""


@pytest.fixture(scope="module")
def weighted(tmp_path_factory):
    return dpinfer.run(text=WEIGHTED, out=tmp_path_factory.mktemp("w"), threads=1)


def test_datatree_layout_weights_and_privacy_attributes(weighted, tmp_path):
    r = weighted
    dt = r.to_datatree()
    assert isinstance(dt, xr.DataTree)
    post = dt["posterior"].to_dataset()
    assert list(post.data_vars) == r.names
    n = len(r)
    for i, name in enumerate(r.names):
        assert post[name].dims == ("chain", "draw") and post[name].shape == (1, n)
        assert np.array_equal(post[name].values[0], r.samples[:, i])  # released order, exact
    w = dt["sample_stats"]["weight"].values[0]
    assert w.shape == (n,) and math.isclose(w.sum(), 1.0, rel_tol=1e-12)
    assert np.allclose(w, r.weights / r.weights.sum(), rtol=0, atol=1e-15)
    assert "observed_data" not in dt.children  # the private input is never put there
    for attrs in (dt.attrs, post.attrs):
        assert attrs["epsilon"] == r.ledger["epsilon"] and attrs["delta"] == r.ledger["delta"]
        assert attrs["relation"] == "replace-one"
        assert "zcdp" in attrs["event"] and attrs["claim_text"] == r.claim_text
        assert attrs["model"] == "uniform-mixture" and attrs["sampler"] == "soft-abc"
    # the documented one-liner, and back
    pytest.importorskip("h5netcdf")
    path = tmp_path / "posterior.nc"
    r.to_datatree().to_netcdf(path)
    back = xr.open_datatree(path)
    assert np.array_equal(back["posterior"][r.names[0]].values, post[r.names[0]].values)
    assert back.attrs["epsilon"] == r.ledger["epsilon"]
    assert back["sample_stats"]["weight"].shape == (1, n)


def test_resampled_arviz_data_and_observed_data_given_by_the_caller(weighted):
    r = weighted
    obs = np.arange(6.0)
    dt = r.to_arviz(observed_data={"y": obs})
    post = dt["posterior"]
    # seeded resample proportional to the weights: every draw is a released draw
    s = np.stack([post[n].values[0] for n in r.names], axis=1)
    released = {tuple(row) for row in r.samples}
    assert all(tuple(row) in released for row in s)
    assert np.array_equal(dt["observed_data"]["y"].values, obs)
    assert np.array_equal(r.to_arviz()["posterior"][r.names[0]].values, post[r.names[0]].values)


def test_non_private_run_is_labelled(tmp_path):
    r = dpinfer.run(text=NON_PRIVATE, out=tmp_path / "np", threads=1)
    dt = r.to_datatree()
    assert math.isinf(dt.attrs["epsilon"])
    assert "sample_stats" not in dt.children  # unweighted, no per-draw distances
    assert dt["posterior"]["mu"].shape == (1, len(r))


def _arviz_data(az, dt):
    """What ArviZ's functions take: the DataTree itself for arviz >= 1.0; for the 0.x line
    (the only one on Python 3.11, the CI's interpreter) its documented conversion
    ``az.InferenceData.from_datatree`` — the groups, dims and attributes carry over."""
    if int(az.__version__.split(".")[0]) >= 1:
        return dt
    return az.InferenceData.from_datatree(dt)


def test_arviz_summary(weighted):
    az = pytest.importorskip("arviz")
    for dt in (weighted.to_arviz(), weighted.to_datatree()):
        s = az.summary(_arviz_data(az, dt))
        assert list(s.index) == weighted.names
        # the weighted posterior's means, within 4 Monte Carlo standard errors of the
        # weighted means of the released draws (a false-failure rate below 1e-4 per name)
        w = weighted.weights / weighted.weights.sum()
        for i, name in enumerate(weighted.names):
            m = float(np.sum(w * weighted.samples[:, i]))
            assert abs(s.loc[name, "mean"] - m) <= 4 * s.loc[name, "mcse_mean"] + 1e-3


def test_arviz_0x_rank_plot_of_one_chain(weighted):
    """arviz 0.x (Python 3.11) draws the rank plot of one chain; arviz >= 1.0 refuses one
    chain (next test)."""
    az = pytest.importorskip("arviz")
    if int(az.__version__.split(".")[0]) >= 1:
        pytest.skip("arviz >= 1.0: see test_arviz_rank_plot")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    axes = az.plot_rank(_arviz_data(az, weighted.to_arviz()))
    titles = [ax.get_title() for ax in np.ravel(axes)]
    assert [t for t in titles if t] == weighted.names  # one panel per parameter (+ spare cells)


@pytest.mark.xfail(
    strict=True,
    reason="arviz 1.3's plot_rank needs >= 2 chains; to_datatree gives one (open item)",
)
def test_arviz_rank_plot(weighted):
    az = pytest.importorskip("arviz", minversion="1.0")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    az.plot_rank(weighted.to_arviz())
