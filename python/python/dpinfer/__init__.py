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
* :mod:`dpinfer.errors` — the exceptions (``ValueError`` subclasses for invalid parameters,
  ``BudgetExceeded`` for the filter).

All numbers come from the Rust crates (``dpinfer-accountants``, ``dpinfer-mechanisms``,
``dpinfer-abc``); the package only converts arguments.
"""

from __future__ import annotations

from . import errors
from ._native import __version__
from . import accounting, mechanisms

__all__ = ["__version__", "accounting", "mechanisms", "errors", "priors", "abc", "mcmc"]


def __getattr__(name):  # lazy: importing dpinfer does not import the samplers
    if name in ("abc", "priors", "mcmc"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(name)
