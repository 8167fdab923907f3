"""dpinfer.mechanisms: events equal the Rust crate's costs, releases are distributed as
documented (seeded statistical tests with stated false-failure rates), OS noise by default."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpinfer import accounting as A
from dpinfer import mechanisms as M
from dpinfer.errors import BudgetExhausted, InvalidParameterError


def test_laplace_from_epsilon_certifies_at_most_epsilon():
    m = M.Laplace(epsilon=0.5, sensitivity=1.0, lo=0.0, hi=100.0)
    assert 0.5 * (1 - 1e-9) <= m.epsilon <= 0.5
    v, ev = m.release(42.0)
    assert isinstance(v, float) and ev.name == "PureEpsilon"
    acc = A.PureDpAccountant()
    acc.compose(ev)
    assert acc.get_epsilon(1e-9) == pytest.approx(m.epsilon, rel=1e-12)
    # every output is a grid point
    assert (v / m.grid_spacing) == pytest.approx(round(v / m.grid_spacing), abs=1e-9)


def test_laplace_moments():
    """n = 20000 releases of a Laplace(b = 2) mechanism at x = 50: mean within 5 standard
    errors (false-failure ≈ 6e-7) and variance 2b² within 5 standard errors (Var of X²-type
    estimator with kurtosis 6: se ≈ 2b²·√(5/n))."""
    m = M.Laplace(scale=2.0, sensitivity=1.0, lo=0.0, hi=100.0, noise_seed=11)
    xs = np.array([m.release(50.0)[0] for _ in range(20_000)])
    se = math.sqrt(8.0 / len(xs))
    assert abs(xs.mean() - 50.0) < 5 * se
    var = xs.var()
    assert abs(var - 8.0) < 5 * 8.0 * math.sqrt(5.0 / len(xs))


def test_gaussian_vector_release_and_zcdp_event():
    m = M.Gaussian(rho=0.5, sensitivity=1.0, lo=-10.0, hi=10.0, dim=4, noise_seed=3)
    v, ev = m.release(np.array([0.0, 1.0, 2.0, 3.0]))
    assert v.shape == (4,) and ev.name == "Zcdp"
    assert m.rho <= 0.5
    z = A.ZcdpAccountant()
    z.compose(ev)
    assert z.rho == pytest.approx(m.rho, rel=1e-12)
    # (ε, δ) calibration goes through zCDP and certifies ≤ target
    g = M.Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, lo=0, hi=1)
    assert A.zcdp_to_epsilon(g.rho, 1e-5).epsilon <= 1.0 + 1e-12


def test_gaussian_moments():
    """20000 draws, σ′ = effective σ: mean within 5 s.e., variance within 5 s.e. (normal
    kurtosis: se = σ′²·√(2/n)); false-failure ≈ 1e-6."""
    m = M.Gaussian(sigma=3.0, sensitivity=1.0, lo=-100.0, hi=100.0, noise_seed=5)
    xs = np.array([m.release(1.0)[0] for _ in range(20_000)])
    s2 = m.effective_sigma**2
    assert abs(xs.mean() - 1.0) < 5 * math.sqrt(s2 / len(xs))
    assert abs(xs.var() - s2) < 5 * s2 * math.sqrt(2.0 / len(xs))


def test_seeded_is_reproducible_and_os_default_is_not():
    a = M.Laplace(scale=1.0, sensitivity=1.0, lo=0, hi=10, noise_seed=7)
    b = M.Laplace(scale=1.0, sensitivity=1.0, lo=0, hi=10, noise_seed=7)
    assert [a.release(5.0)[0] for _ in range(10)] == [b.release(5.0)[0] for _ in range(10)]
    assert "NOT private" in a.noise_source
    c = M.Laplace(scale=1.0, sensitivity=1.0, lo=0, hi=10)
    d = M.Laplace(scale=1.0, sensitivity=1.0, lo=0, hi=10)
    assert "OS CSPRNG" in c.noise_source
    # two OS-seeded generators agree on 20 draws with probability < 1e-10
    assert [c.release(5.0)[0] for _ in range(20)] != [d.release(5.0)[0] for _ in range(20)]


def test_binomial_curve():
    m = M.BinomialCurve(n=50, m=10, population=1000, noise_seed=1)
    counts, ev = m.release(np.array([0, 100, 500, 1000], dtype=np.uint64))
    assert counts.dtype == np.uint64 and counts.shape == (4,) and (counts <= 50).all()
    assert ev.name == "BinomialCurve"
    assert m.epsilon(4) == pytest.approx(4 * 50 * math.log1p(1 / 10), rel=1e-12)
    acc = A.PureDpAccountant(neighbouring="replace_one")
    acc.compose(ev)
    assert acc.get_epsilon(1e-9) == pytest.approx(m.epsilon(4), rel=1e-9)
    p = M.BinomialCurve(n=50, m=10, population=1000, bound="paper")
    assert p.epsilon(4) == pytest.approx(4 * 50 / 10, rel=1e-12)


def test_binomial_mean():
    """Mean of 4000 releases at I = 500 of 1000, m = 10: n·(I+m)/(K+2m) = 25 within 5 s.e."""
    m = M.BinomialCurve(n=50, m=10, population=1000, noise_seed=2)
    counts, _ = m.release(np.full(4000, 500, dtype=np.uint64))
    p = 510 / 1020
    assert abs(counts.mean() - 50 * p) < 5 * math.sqrt(50 * p * (1 - p) / 4000)


def test_sparse_vector_session():
    m = M.SparseVector(threshold=0.5, sensitivity=0.01, lo=0.0, hi=1.0, c=2, epsilon=10.0, noise_seed=4)
    assert m.epsilon <= 10.0 and m.event.name in ("PureEpsilon", "SparseVector")
    # far below the threshold with Lap(b ≈ 0.003) noise: accepted unless |noise| > 0.5,
    # probability < 1e-60 per query
    assert [m.query(0.0), m.query(0.0)] == [True, True]
    assert m.exhausted and m.positives == 2
    with pytest.raises(BudgetExhausted):
        m.query(0.0)
    m2 = M.SparseVector(threshold=0.5, sensitivity=0.01, lo=0.0, hi=1.0, c=1, epsilon=10.0, noise_seed=4)
    assert [m2.query(1.0) for _ in range(20)] == [False] * 20  # far above: rejected
    acc = A.PureDpAccountant()
    acc.compose(m.event)
    assert acc.get_epsilon(1e-9) <= 10.0 + 1e-9


def test_mechanism_parameter_errors():
    with pytest.raises(InvalidParameterError):
        M.Laplace(scale=-1.0, sensitivity=1.0, lo=0, hi=1)
    with pytest.raises(InvalidParameterError):
        M.Laplace(scale=1.0, epsilon=1.0, sensitivity=1.0, lo=0, hi=1)
    with pytest.raises(InvalidParameterError):
        M.Gaussian(sigma=1.0, sensitivity=1.0, lo=1, hi=0)
    with pytest.raises(InvalidParameterError):
        M.Gaussian(sigma=1.0, sensitivity=1.0, lo=0, hi=1, dim=2).release(0.5)
    with pytest.raises(InvalidParameterError):
        M.BinomialCurve(n=1, m=0, population=10)
