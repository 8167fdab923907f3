"""dpinfer: differentially private simulation-based inference (Rust core, Python API).

Submodules:

* :mod:`dpinfer.accounting` — privacy events, RDP / Gaussian-PLD / zCDP / pure / approximate
  accountants with a dp_accounting-style API, an opacus-compatible ``RDPAccountant``,
  calibration (``get_noise_multiplier``), maximum step counts and the budget filter.
* :mod:`dpinfer.mechanisms` — Laplace, Gaussian, binomial infection-curve and sparse-vector
  mechanisms with exact samplers and OS-CSPRNG noise; every release returns its event.
* :mod:`dpinfer.priors` — priors usable by the samplers.
* :mod:`dpinfer.abc` — ABC with your own (numpy) simulator: public pairs, private ABCDP
  passes (sparse vector, Gaussian), rejection and SMC-ABC.
* :mod:`dpinfer.mcmc` — random-walk MH and the DP penalty sampler with a vectorised per-row
  log-likelihood.
* :func:`dpinfer.run` (and :mod:`dpinfer.pipeline`) — a TOML config of the ``dpinfer`` CLI
  run from Python by the same library: the same samples, ledger and restart-safe results
  folder; ``simulate_shard``, ``merge_shards``, ``private_step`` and ``smc_step`` for sharded
  runs; ``calibrate`` (and ``calibrate_dask``, ``calibrate_ray``) — simulation-based
  calibration of a config's sampler with its mechanism in the loop (``dpinfer calibrate``).
* :mod:`dpinfer.worker` — ``serve(simulate, summarise=None)``: your own simulator as a
  ``kind = "command"`` worker of the CLI and :func:`dpinfer.run`, without protocol code
  (needs pyarrow).
* :mod:`dpinfer.errors` — the exceptions (``ValueError`` subclasses for invalid parameters,
  ``BudgetExceeded`` for the filter).

All numbers come from the Rust crates (``dpinfer-accountants``, ``dpinfer-mechanisms``,
``dpinfer-abc``); the package only converts arguments.
"""

from __future__ import annotations

from . import errors
from ._native import __version__
from . import accounting, mechanisms

#: what ``dpinfer.<name>`` gives from :mod:`dpinfer.pipeline` (config-driven runs)
_PIPELINE = (
    "run",
    "RunResult",
    "simulate_shard",
    "merge_shards",
    "private_step",
    "smc_step",
    "calibrate",
    "calibrate_dask",
    "calibrate_ray",
)
_SUBMODULES = ("abc", "priors", "mcmc", "pipeline", "worker")

__all__ = ["__version__", "accounting", "mechanisms", "errors", *_SUBMODULES, *_PIPELINE]


def __getattr__(name):  # lazy: importing dpinfer does not import the samplers
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _PIPELINE:
        return getattr(importlib.import_module(f"{__name__}.pipeline"), name)
    raise AttributeError(name)
