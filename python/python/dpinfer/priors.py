"""Priors for :mod:`dpinfer.abc` (independent one-dimensional priors of
``dpinfer-simulators``).

``Uniform(lo, hi)``, ``Normal(mean, sd)`` and ``LogNormal(mu, sigma)`` take scalars or
sequences (one entry per coordinate); ``Independent(p1, p2, ...)`` concatenates priors.
Each has ``dim``, ``sample(seeds) -> (len(seeds), dim)`` (row i drawn from a stream seeded
by ``seeds[i]``: public simulation randomness, never privacy noise) and
``log_pdf(theta) -> (n,)`` (normalised joint log density, −∞ outside the support).

Any object with the same ``sample(seeds)`` / ``log_pdf(theta)`` methods can be used as a
prior by the samplers (it is then called once per draw).
"""

from __future__ import annotations

from typing import Sequence, Union

from ._native import Prior

__all__ = ["Prior", "Uniform", "Normal", "LogNormal", "Independent"]

Num = Union[float, Sequence[float]]


def _seq(x: Num):
    try:
        return [float(v) for v in x]  # type: ignore[union-attr]
    except TypeError:
        return [float(x)]  # type: ignore[arg-type]


def _pair(a: Num, b: Num):
    a, b = _seq(a), _seq(b)
    if len(a) == 1 and len(b) > 1:
        a = a * len(b)
    if len(b) == 1 and len(a) > 1:
        b = b * len(a)
    return a, b


def Uniform(lo: Num, hi: Num) -> Prior:  # noqa: N802
    """Independent U(lo[i], hi[i]) coordinates (scalars broadcast)."""
    return Prior.uniform(*_pair(lo, hi))


def Normal(mean: Num, sd: Num) -> Prior:  # noqa: N802
    """Independent N(mean[i], sd[i]²) coordinates (scalars broadcast)."""
    return Prior.normal(*_pair(mean, sd))


def LogNormal(mu: Num, sigma: Num) -> Prior:  # noqa: N802
    """Independent LogNormal(mu[i], sigma[i]) coordinates (scalars broadcast)."""
    return Prior.lognormal(*_pair(mu, sigma))


def Independent(*parts: Prior) -> Prior:  # noqa: N802
    """The product of independent priors, coordinates in order."""
    return Prior.independent(list(parts))
