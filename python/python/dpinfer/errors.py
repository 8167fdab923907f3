"""Exceptions raised by dpinfer.

Every error of the Rust crates maps to one of these. Invalid parameters (NaN, negative σ,
δ outside (0, 1), a sampling scheme used under the wrong neighbouring relation, ...) raise
subclasses of :class:`ValueError`, so ``except ValueError`` keeps working. Errors carry the
offending *parameter* (name, value), never private data.
"""

from __future__ import annotations

__all__ = [
    "DpinferError",
    "InvalidParameterError",
    "IncompatibleRelationError",
    "UnsupportedEventError",
    "DeltaTooSmallError",
    "InfeasibleError",
    "NumericalError",
    "BudgetExceeded",
    "BudgetExhausted",
    "EntropyError",
    "ModelError",
    "LedgerRefusedError",
]


class DpinferError(Exception):
    """Base class of every dpinfer error."""


class InvalidParameterError(DpinferError, ValueError):
    """A parameter is NaN, infinite, negative, zero where zero is invalid, or out of range.

    ``name`` and ``value`` hold the parameter (``None`` when not applicable).
    """

    name = None
    value = None


class IncompatibleRelationError(InvalidParameterError):
    """The event needs another neighbouring relation (Poisson sampling is analysed under
    add/remove, sampling without replacement under replace-one)."""


class UnsupportedEventError(InvalidParameterError):
    """This accountant cannot express this event (e.g. a Gaussian in a pure-DP accountant,
    a Poisson-subsampled Gaussian in the Gaussian-PLD accountant)."""


class DeltaTooSmallError(InvalidParameterError):
    """The requested δ is not larger than the δ already spent by approximate-DP events."""


class InfeasibleError(DpinferError, ValueError):
    """No parameter meets the request (e.g. ε = 0 needs infinite noise)."""


class NumericalError(DpinferError, ArithmeticError):
    """A bound could not be evaluated reliably. dpinfer raises rather than report a NaN or
    an optimistic value."""


class BudgetExceeded(DpinferError):
    """A :class:`dpinfer.accounting.BudgetFilter` refused an event: composing it would
    exceed the (ε, δ) budget. Nothing was recorded; the filter stays usable.

    ``epsilon`` is the ε the composition would have reached (``inf`` if the δ budget was
    already spent), ``budget`` the filter's ε budget.
    """

    epsilon = None
    budget = None


class BudgetExhausted(DpinferError):
    """A stateful mechanism (the sparse vector's ``c`` positive answers) has used its budget;
    it releases nothing more."""


class EntropyError(DpinferError, OSError):
    """The noise RNG (the operating system's CSPRNG) failed; nothing was released."""


class ModelError(DpinferError, RuntimeError):
    """The prior or simulator failed (or returned malformed output)."""


class LedgerRefusedError(DpinferError):
    """The results folder's restart-safe ledger refused a config-driven run
    (:func:`dpinfer.run`, :func:`dpinfer.private_step`, ...): the folder already holds a
    private release of a *different* input (another config, data or seed), a release that
    cannot be reproduced without running it again (a DP MCMC chain), a private step that
    started and did not finish (its noise may already have been drawn), or a release whose
    checksum or privacy ledger does not match. Drawing new noise could spend the budget
    twice, so nothing was run. Use another output folder (``out=``), or delete the folder
    only if you accept charging the budget again.
    """
