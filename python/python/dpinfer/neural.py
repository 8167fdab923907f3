"""Neural inference from a privatized statistic (``dpinfer-neural``): SPPE and SPLE of
Xiong, Ju & Zhang (sequential private posterior / likelihood estimation, Algorithms 1–2).

You give the prior, a numpy simulator of the **confidential** statistic
``simulator(theta, seeds) -> (n, k)`` (as in :mod:`dpinfer.abc`: row i drawn with randomness
seeded by ``seeds[i]``; each round's simulations are one call), the released statistic
``observed`` and the :mod:`dpinfer.mechanisms` mechanism that released it (``Laplace``,
``Gaussian`` or ``BinomialCurve``, counts). Each simulated statistic is released ``M`` times
through the mechanism's noise map with scrambled-Sobol (``sampling="rqmc"``, default) or
Monte Carlo uniforms — public, seeded simulation randomness, never the mechanism's privacy
noise — and a conditional flow is trained over ``rounds`` rounds.

**Privacy:** inference from an already-released statistic is post-processing; it adds no
privacy cost. The cost is the release's (``mechanism.release`` returned its event).

Unset settings keep the library's defaults (the paper's: 10 rounds of 1000 simulations,
``M = 8``, the 8-layer neural spline flow, Adam with early stopping). ``spline=2`` trains the
spline flow with the fused spline (``dpinfer_neural::SplineImpl`` version 2: the same
densities for the same weights, about 1.6× less CPU per SPPE epoch from round 2; trained
weights differ in the last bits, so the default stays version 1 and seeded results reproduce).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _native
from .abc import Simulator, _obs

__all__ = ["NeuralResult", "sppe", "sple", "sample_estimator"]


@dataclass
class NeuralResult:
    """``samples`` (n, d) posterior draws; ``rounds`` one dict per round (simulations,
    rejected, rows, epochs, best_epoch, train_loss/validation_loss per epoch, proposal and
    its acceptance — and SPLE's MCMC ``rhat``/``ess_bulk``); ``diagnostics`` the rest
    (SPPE: truncation acceptance; SPLE: the final MCMC's acceptance, ``rhat``,
    ``ess_bulk``)."""

    samples: np.ndarray
    rounds: List[Dict[str, Any]]
    diagnostics: Dict[str, Any] = field(default_factory=dict)
    names: Optional[Sequence[str]] = None


def _run(kind, prior, simulator, observed, mechanism, **kw) -> NeuralResult:
    names = kw.pop("names", None)
    r = _native.neural_run(kind, prior, simulator, _obs(observed), mechanism, **kw)
    diag = {k: v for k, v in r.items() if k not in ("samples", "rounds")}
    return NeuralResult(r["samples"], r["rounds"], diag, names)


def sppe(
    prior,
    simulator: Simulator,
    observed,
    mechanism,
    *,
    rounds: Optional[int] = None,
    simulations: Optional[int] = None,
    noise_draws: Optional[int] = None,
    sampling: str = "rqmc",
    flow: str = "nsf",
    layers: Optional[int] = None,
    hidden: Optional[int] = None,
    spline: Optional[int] = None,
    max_epochs: Optional[int] = None,
    samples: Optional[int] = None,
    seed: int = 0,
    estimator_path: Optional[str] = None,
    names: Optional[Sequence[str]] = None,
) -> NeuralResult:
    """SPPE: trains ``q(θ | s_dp)`` (atomic APT loss from round 2) and draws ``samples``
    posterior draws at ``observed``, truncated to the prior's support. With
    ``estimator_path`` the trained flow is saved there (safetensors):
    :func:`sample_estimator` draws from it again without retraining."""
    return _run(
        "sppe", prior, simulator, observed, mechanism,
        rounds=rounds, simulations=simulations, noise_draws=noise_draws,
        sampling=sampling, flow=flow, layers=layers, hidden=hidden,
        spline=spline, max_epochs=max_epochs, samples=samples, seed=seed,
        estimator_path=estimator_path, names=names,
    )


def sple(
    prior,
    simulator: Simulator,
    observed,
    mechanism,
    *,
    rounds: Optional[int] = None,
    simulations: Optional[int] = None,
    noise_draws: Optional[int] = None,
    sampling: str = "rqmc",
    flow: str = "nsf",
    layers: Optional[int] = None,
    hidden: Optional[int] = None,
    spline: Optional[int] = None,
    max_epochs: Optional[int] = None,
    samples: Optional[int] = None,
    seed: int = 0,
    estimator_path: Optional[str] = None,
    names: Optional[Sequence[str]] = None,
) -> NeuralResult:
    """SPLE: trains the likelihood ``q(s_dp | θ)`` and draws each round's proposal — and
    ``samples`` posterior draws — from ``π(θ)·q(s_dp° | θ)`` by random-walk Metropolis chains
    (check ``diagnostics["rhat"]`` and ``["ess_bulk"]``). ``estimator_path``: the trained
    likelihood flow, saved (safetensors)."""
    return _run(
        "sple", prior, simulator, observed, mechanism,
        rounds=rounds, simulations=simulations, noise_draws=noise_draws,
        sampling=sampling, flow=flow, layers=layers, hidden=hidden,
        spline=spline, max_epochs=max_epochs, samples=samples, seed=seed,
        estimator_path=estimator_path, names=names,
    )


def sample_estimator(
    path: str, prior, observed, n: int, *, seed: int = 0, min_acceptance: float = 0.01
) -> np.ndarray:
    """``n`` draws of a saved SPPE estimator at ``observed`` (truncated to the prior's
    support); the same ``seed`` as the run gives the run's draws."""
    return _native.neural_sample(
        path, prior, _obs(observed), n, seed=seed, min_acceptance=min_acceptance
    )
