"""Privacy accounting (``dpinfer-accountants``) with an API a dp_accounting or opacus user
recognises.

Events
    :class:`Event` with static constructors (``Event.gaussian(sigma, sensitivity)``,
    ``Event.poisson_sampled(q, e)``, ``Event.self_composed(e, count)``, ...), and the
    dp_accounting spellings :func:`GaussianDpEvent`, :func:`LaplaceDpEvent`,
    :func:`PoissonSampledDpEvent`, :func:`SampledWithoutReplacementDpEvent`,
    :func:`SelfComposedDpEvent`, :func:`ComposedDpEvent`, :func:`EpsilonDeltaDpEvent`,
    :func:`RandomizedResponseDpEvent` (replace-one), :func:`SingleEpochTreeAggregationDpEvent`,
    :func:`MixtureOfGaussiansDpEvent`, :func:`TruncatedSubsampledGaussianDpEvent`,
    :func:`SampledWithReplacementDpEvent` (replace-one), :func:`RepeatAndSelectDpEvent` (RDP).
    :func:`parse_event` reads the event grammar of ``dpinfer account --event``
    (``"gaussian:sigma=1,poisson=0.01,count=10000"``); :func:`format_event` writes it.

Accountants
    :class:`RdpAccountant`, :class:`PldAccountant` (exact Gaussian PLD),
    :class:`ZcdpAccountant`, :class:`PureDpAccountant`, :class:`ApproxDpAccountant`, all with
    ``compose(event, count=1)``, ``get_epsilon(delta)``, ``get_delta(epsilon)`` and
    ``epsilon_report(delta)`` (which conversion produced the number).

opacus
    :class:`RDPAccountant` has the method names of opacus' ``IAccountant``
    (``step(noise_multiplier=, sample_rate=)``, ``get_epsilon(delta)``,
    ``get_privacy_spent``, ``history``, ``mechanism()``) and opacus' default orders, so an
    opacus user can swap it in; :class:`PRVAccountant` is the same interface for opacus'
    default accountant (``mechanism() == "prv"``), backed by the numerical PLD;
    :func:`get_noise_multiplier` has opacus' signature (``accountant="rdp"``, ``"prv"``).

Budget
    :class:`BudgetFilter` raises :class:`dpinfer.errors.BudgetExceeded` (and records nothing)
    when an event would exceed the budget.

Privacy notes. Every reported ε and δ is an upper bound of the exact value (rounded up; no
NaN, no optimistic value — an unevaluable bound raises). Every guarantee is for the
accountant's ``neighbouring`` relation: Poisson subsampling (MTZ19) under ``"add_remove"``,
sampling without replacement (WBK19) under ``"replace_one"``; sensitivities you give must be
for that relation. Composition is adaptive.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import List, Optional, Sequence, Tuple, Union

from ._native import (
    ApproxDpAccountant,
    BudgetFilter,
    Event,
    PldAccountant,
    PureDpAccountant,
    RdpAccountant,
    Report,
    ZcdpAccountant,
    default_rdp_orders,
    dp_barker_max_steps,
    dp_hmc_max_steps,
    dp_penalty_max_steps,
    format_event,
    gaussian_sigma,
    max_pld_mu,
    parse_event,
    poisson_gaussian_sigma_pld,
    poisson_gaussian_sigma_rdp,
    rdp_to_delta,
    rdp_to_epsilon,
    rho_for_epsilon_delta,
    zcdp_to_epsilon,
)
from .errors import InvalidParameterError, UnsupportedEventError

__all__ = [
    "Event",
    "Report",
    "RdpAccountant",
    "PldAccountant",
    "ZcdpAccountant",
    "PureDpAccountant",
    "ApproxDpAccountant",
    "BudgetFilter",
    "RDPAccountant",
    "PRVAccountant",
    "OPACUS_DEFAULT_ALPHAS",
    "DP_ACCOUNTING_DEFAULT_ORDERS",
    "GaussianDpEvent",
    "LaplaceDpEvent",
    "EpsilonDeltaDpEvent",
    "ZCDpEvent",
    "PoissonSampledDpEvent",
    "SampledWithoutReplacementDpEvent",
    "SampledWithReplacementDpEvent",
    "RepeatAndSelectDpEvent",
    "SelfComposedDpEvent",
    "ComposedDpEvent",
    "RandomizedResponseDpEvent",
    "SingleEpochTreeAggregationDpEvent",
    "MixtureOfGaussiansDpEvent",
    "TruncatedSubsampledGaussianDpEvent",
    "get_noise_multiplier",
    "gaussian_sigma",
    "poisson_gaussian_sigma_pld",
    "poisson_gaussian_sigma_rdp",
    "max_pld_mu",
    "rho_for_epsilon_delta",
    "rdp_to_epsilon",
    "rdp_to_delta",
    "zcdp_to_epsilon",
    "dp_penalty_max_steps",
    "dp_hmc_max_steps",
    "dp_barker_max_steps",
    "default_rdp_orders",
    "parse_event",
    "format_event",
]

#: opacus' ``RDPAccountant.DEFAULT_ALPHAS`` (151 orders from 1.1 to 63).
OPACUS_DEFAULT_ALPHAS: List[float] = [1 + x / 10.0 for x in range(1, 100)] + [
    float(a) for a in range(12, 64)
]
#: dp_accounting's ``DEFAULT_RDP_ORDERS`` (1.1 … 10.9, 11 … 63, 128, 256, 512, 1024).
DP_ACCOUNTING_DEFAULT_ORDERS: List[float] = (
    [1 + x / 10.0 for x in range(1, 100)]
    + [float(a) for a in range(11, 64)]
    + [128.0, 256.0, 512.0, 1024.0]
)


# dp_accounting spellings ------------------------------------------------------------------


def GaussianDpEvent(noise_multiplier: float) -> Event:  # noqa: N802 (dp_accounting name)
    """Gaussian mechanism with sensitivity 1 and σ = ``noise_multiplier``."""
    return Event.gaussian(noise_multiplier, 1.0)


def LaplaceDpEvent(noise_multiplier: float) -> Event:  # noqa: N802
    """Laplace mechanism with ℓ₁ sensitivity 1 and scale ``noise_multiplier``."""
    return Event.laplace(noise_multiplier, 1.0)


def EpsilonDeltaDpEvent(epsilon: float, delta: float = 0.0) -> Event:  # noqa: N802
    """Any (ε, δ)-DP mechanism (δ = 0: pure ε-DP)."""
    return Event.pure(epsilon) if delta == 0 else Event.approx_dp(epsilon, delta)


def ZCDpEvent(rho: float) -> Event:  # noqa: N802
    """Any ρ-zCDP mechanism."""
    return Event.zcdp(rho)


def RandomizedResponseDpEvent(noise_parameter: float, num_buckets: int) -> Event:  # noqa: N802
    """k-ary randomized response: the true bucket with probability 1 − ``noise_parameter``,
    else a uniformly random one of ``num_buckets`` (replace-one relation only)."""
    return Event.randomized_response(noise_parameter, num_buckets)


def SingleEpochTreeAggregationDpEvent(  # noqa: N802
    noise_multiplier: float, step_counts: Union[int, Sequence[int]]
) -> Event:
    """One epoch of tree aggregation (DP-FTRL), sensitivity 1 per node. As in dp_accounting,
    ``step_counts`` may list several trees of which each record is in at most one: the
    deepest tree (the most steps) bounds the cost."""
    counts = [step_counts] if isinstance(step_counts, int) else list(step_counts)
    if not counts:
        raise InvalidParameterError("step_counts must be a non-empty list or a positive int")
    return Event.tree_aggregation(noise_multiplier, max(counts), 1.0)


def MixtureOfGaussiansDpEvent(  # noqa: N802
    standard_deviation: float, sensitivities: Sequence[float], sampling_probs: Sequence[float]
) -> Event:
    """Gaussian noise ``standard_deviation`` on a query whose sensitivity is
    ``sensitivities[i]`` with probability ``sampling_probs[i]`` (add/remove relation;
    numerical PLD only)."""
    return Event.mixture_of_gaussians(
        standard_deviation, [float(c) for c in sensitivities], [float(p) for p in sampling_probs]
    )


def TruncatedSubsampledGaussianDpEvent(  # noqa: N802
    dataset_size: int,
    sampling_probability: float,
    truncated_batch_size: int,
    noise_multiplier: float,
) -> Event:
    """The Gaussian mechanism (sensitivity 1, σ = ``noise_multiplier``) on a Poisson sample
    (rate ``sampling_probability``) of ``dataset_size`` rows cut to at most
    ``truncated_batch_size`` rows (add/remove relation; numerical PLD only)."""
    return Event.truncated_subsampled_gaussian(
        noise_multiplier, sampling_probability, truncated_batch_size, dataset_size, 1.0
    )


def PoissonSampledDpEvent(sampling_probability: float, event: Event) -> Event:  # noqa: N802
    """Poisson subsampling with rate ``sampling_probability`` (add/remove relation)."""
    return Event.poisson_sampled(sampling_probability, event)


def SampledWithoutReplacementDpEvent(  # noqa: N802
    source_dataset_size: int, sample_size: int, event: Event
) -> Event:
    """Sampling ``sample_size`` of ``source_dataset_size`` rows without replacement
    (replace-one relation)."""
    return Event.sampled_without_replacement(sample_size, source_dataset_size, event)


def SampledWithReplacementDpEvent(  # noqa: N802
    source_dataset_size: int, sample_size: int, event: Event
) -> Event:
    """``sample_size`` draws with replacement from ``source_dataset_size`` rows (replace-one
    relation: one row substituted; numerical PLD only, Gaussian, Laplace or pure ``event``)."""
    return Event.sampled_with_replacement(sample_size, source_dataset_size, event)


def RepeatAndSelectDpEvent(event: Event, mean: float, shape: float) -> Event:  # noqa: N802
    """The best of a random number of runs of ``event`` (mean ``mean``; ``shape`` 0
    logarithmic, 1 geometric, ``math.inf`` Poisson, else truncated negative binomial; RDP
    only)."""
    return Event.repeat_and_select(event, mean, shape)


def SelfComposedDpEvent(event: Event, count: int) -> Event:  # noqa: N802
    """``count`` adaptive repetitions of ``event``."""
    return Event.self_composed(event, count)


def ComposedDpEvent(events: Sequence[Event]) -> Event:  # noqa: N802
    """Adaptive composition of ``events``."""
    return Event.composed(list(events))


# opacus ------------------------------------------------------------------------------------


class RDPAccountant:
    """Drop-in for ``opacus.accountants.RDPAccountant`` backed by the Rust RDP accountant.

    Same methods as opacus' ``IAccountant``: ``step(noise_multiplier=, sample_rate=)``,
    ``get_epsilon(delta, alphas=None)``, ``get_privacy_spent(delta=, alphas=None)``,
    ``history`` (list of ``(noise_multiplier, sample_rate, steps)``), ``len()``,
    ``mechanism()``, ``state_dict()``/``load_state_dict()``. Orders default to opacus'
    ``DEFAULT_ALPHAS``. Each ``step`` composes one Poisson-subsampled Gaussian (MTZ19,
    add/remove relation, sensitivity 1: σ = noise_multiplier × clipping norm); steps with the
    same (σ, q) are composed together at the next ``get_epsilon`` (exact: RDP adds).

    Differences from opacus, all on the safe side: ε is the better of the Mironov and
    Balle et al. conversions (opacus uses the latter), rounded up; ``noise_multiplier``
    must be > 0 (opacus returns ε = ∞ for 0; dpinfer raises ``InvalidParameterError``).
    """

    DEFAULT_ALPHAS = OPACUS_DEFAULT_ALPHAS

    def __init__(self) -> None:
        self.history: List[Tuple[float, float, int]] = []
        self._acc = RdpAccountant(self.DEFAULT_ALPHAS)
        self._done: List[int] = []  # steps of history[i] already composed into _acc
        self._probe = RdpAccountant([2.0])

    @classmethod
    def mechanism(cls) -> str:
        return "rdp"

    def __len__(self) -> int:
        return len(self.history)

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Records one DP-SGD step, O(1) like opacus (its parameters are validated now by
        the Rust crate on a one-order probe; the composition on all orders happens at the
        next ``get_epsilon``)."""
        ev = Event.poisson_sampled(sample_rate, Event.gaussian(noise_multiplier))
        if not self._probe.supports(ev):
            self._probe.copy().compose(ev)  # raises the typed error
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            nm, q, k = self.history[-1]
            self.history[-1] = (nm, q, k + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def _sync(self) -> RdpAccountant:
        """Composes the steps recorded since the last call (each (σ, q) group at once)."""
        for i, (nm, q, k) in enumerate(self.history):
            done = self._done[i] if i < len(self._done) else 0
            if k > done:
                self._acc.compose_poisson_gaussian(nm, q, k - done)
            if i < len(self._done):
                self._done[i] = k
            else:
                self._done.append(k)
        return self._acc

    def _accountant(self, alphas: Optional[Sequence[float]]) -> RdpAccountant:
        if alphas is None:
            return self._sync()
        acc = RdpAccountant([float(a) for a in alphas])
        for nm, q, k in self.history:
            acc.compose_poisson_gaussian(nm, q, k)
        return acc

    def get_privacy_spent(
        self, *, delta: float, alphas: Optional[Sequence[float]] = None
    ) -> Tuple[float, float]:
        """``(epsilon, best_alpha)`` at ``delta``."""
        if not self.history:
            return 0.0, 0.0
        r = self._accountant(alphas).epsilon_report(delta)
        return r.epsilon, (r.order if r.order is not None else math.nan)

    def get_epsilon(self, delta: float, alphas: Optional[Sequence[float]] = None, **kwargs) -> float:
        """ε spent so far at ``delta``."""
        eps, _ = self.get_privacy_spent(delta=delta, alphas=alphas)
        return eps

    def state_dict(self, destination=None):
        d = {} if destination is None else destination
        d["history"] = list(self.history)
        d["mechanism"] = self.__class__.mechanism()
        return d

    def load_state_dict(self, state_dict) -> None:
        hist = [tuple(h) for h in state_dict["history"]]
        acc = RdpAccountant(self.DEFAULT_ALPHAS)
        for nm, q, k in hist:
            acc.compose_poisson_gaussian(nm, q, k)
        self.history = hist
        self._acc = acc
        self._done = [k for (_, _, k) in hist]


class PRVAccountant:
    """Drop-in for ``opacus.accountants.PRVAccountant`` (opacus' default accountant) backed
    by the Rust numerical PLD.

    Same methods as opacus' ``IAccountant``: ``step(noise_multiplier=, sample_rate=)``,
    ``get_epsilon(delta, *, eps_error=0.01, delta_error=None)``,
    ``get_privacy_spent(delta=)``, ``history`` (list of
    ``(noise_multiplier, sample_rate, steps)``, merged like opacus; it may be assigned
    directly, as opacus' own ``get_noise_multiplier`` does), ``len()``, ``mechanism()``
    (``"prv"``), ``state_dict()``/``load_state_dict()`` (opacus' format and checks; a
    state dict of opacus' PRV accountant loads). Each step is one Poisson-subsampled
    Gaussian with sensitivity 1 (σ = noise_multiplier × clipping norm) under the
    add/remove relation, both directions, accounted by :class:`PldAccountant`:
    ``sample_rate == 1`` by the exact Gaussian PLD, ``sample_rate < 1`` by the numerical PLD
    (pessimistic connect-the-dots discretisation, FFT composition, truncated mass added to
    δ; see crates/accountants/README.md).

    Differences from opacus, all on the safe side: opacus' PRV accountant (Gopi et al.
    2021) returns its estimate plus ``eps_error`` (0.01), with ``delta_error = δ/1000``
    taken from δ; here ε is the numerical PLD's upper bound at δ itself, rounded up, and
    ``eps_error``/``delta_error`` are accepted for compatibility and ignored (they must be
    positive when given). ``noise_multiplier`` must be > 0 and ``sample_rate`` in (0, 1]
    (opacus accepts anything; dpinfer raises ``InvalidParameterError`` and records
    nothing). ``get_privacy_spent`` returns ``(epsilon, nan)`` (a PLD has no RDP order).
    """

    def __init__(self) -> None:
        self.history: List[Tuple[float, float, int]] = []
        self._probe = RdpAccountant([2.0])
        self._cache: Optional[Tuple[tuple, PldAccountant]] = None

    @classmethod
    def mechanism(cls) -> str:
        return "prv"

    def __len__(self) -> int:
        return len(self.history)

    def _check(self, noise_multiplier: float, sample_rate: float) -> None:
        # Parameters are validated by the Rust crate on a one-order RDP probe (the same
        # checks as the PLD's; O(1), like opacus' step).
        ev = Event.poisson_sampled(sample_rate, Event.gaussian(noise_multiplier))
        if not self._probe.supports(ev):
            self._probe.copy().compose(ev)  # raises the typed error

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Records one DP-SGD step (merged with the last entry when (σ, q) repeat)."""
        self._check(noise_multiplier, sample_rate)
        if self.history and tuple(self.history[-1][:2]) == (noise_multiplier, sample_rate):
            nm, q, k = self.history[-1]
            self.history[-1] = (nm, q, k + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    @staticmethod
    def _compose(history: Sequence[Tuple[float, float, int]]) -> PldAccountant:
        acc = PldAccountant()
        for entry in history:
            if len(entry) != 3:
                raise InvalidParameterError(
                    f"history entries are (noise_multiplier, sample_rate, steps), not {entry!r}"
                )
            nm, q, k = entry
            if isinstance(k, bool) or not isinstance(k, int) or k < 0:
                raise InvalidParameterError(f"steps must be an int >= 0, not {k!r}")
            g = Event.gaussian(nm)
            acc.compose(g if q == 1 else Event.poisson_sampled(q, g), k)
        return acc

    def _accountant(self) -> PldAccountant:
        key = tuple(tuple(h) for h in self.history)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._compose(self.history))
        return self._cache[1]

    def epsilon_report(self, delta: float) -> Report:
        """ε spent so far at ``delta`` with the conversion that produced it
        (``numerical_pld``, or ``gaussian_pld`` for full-batch steps only)."""
        return self._accountant().epsilon_report(delta)

    def get_epsilon(
        self,
        delta: float,
        *,
        eps_error: Optional[float] = None,
        delta_error: Optional[float] = None,
        **kwargs,
    ) -> float:
        """ε spent so far at ``delta`` (an upper bound; 0 before the first step)."""
        for name, v in (("eps_error", eps_error), ("delta_error", delta_error)):
            if v is not None and not (v > 0 and math.isfinite(v)):
                raise InvalidParameterError(f"{name} must be positive and finite, not {v!r}")
        if not self.history:
            if not (0 < delta < 1):
                raise InvalidParameterError(f"delta must be in (0, 1), not {delta!r}")
            return 0.0
        return self.epsilon_report(delta).epsilon

    def get_privacy_spent(self, *, delta: float, **kwargs) -> Tuple[float, float]:
        """``(epsilon, nan)`` at ``delta`` (the shape of ``RDPAccountant``'s answer)."""
        return self.get_epsilon(delta, **kwargs), math.nan

    def state_dict(self, destination=None):
        d = OrderedDict() if destination is None else destination
        d["history"] = [tuple(h) for h in self.history]
        d["mechanism"] = self.__class__.mechanism()
        return d

    def load_state_dict(self, state_dict) -> None:
        """Loads a state dict of this class or of opacus' ``PRVAccountant``; raises
        ``InvalidParameterError`` (a ``ValueError``, as opacus) for an empty one, a missing
        key, another mechanism or an invalid step, and then loads nothing."""
        if not state_dict:
            raise InvalidParameterError("state dict is empty or None")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise InvalidParameterError(f"state_dict has no key {key!r}")
        if state_dict["mechanism"] != self.mechanism():
            raise InvalidParameterError(
                f"a state_dict of {state_dict['mechanism']!r} cannot be loaded into the "
                f"{self.mechanism()!r} accountant"
            )
        hist = [tuple(h) for h in state_dict["history"]]
        for h in hist:
            if len(h) == 3:
                self._check(h[0], h[1])
        acc = self._compose(hist)
        self.history = hist
        self._cache = (tuple(hist), acc)


def get_noise_multiplier(
    *,
    target_epsilon: float,
    target_delta: float,
    sample_rate: float,
    epochs: Optional[float] = None,
    steps: Optional[int] = None,
    accountant: str = "rdp",
    orders: Optional[Sequence[float]] = None,
    **kwargs,
) -> float:
    """The smallest noise multiplier z = σ/Δ such that ``steps`` (or
    ``int(epochs / sample_rate)``, as opacus) Poisson-subsampled Gaussian steps are
    (target_epsilon, target_delta)-DP (opacus' signature; ``epsilon_tolerance`` is ignored:
    z is found to relative tolerance 1e-9 and rounded up, then re-verified).

    ``accountant="rdp"``: RDP on ``orders`` (default: the crate's 34 orders, at most 128);
    add/remove relation. ``"pld"`` (or ``"prv"``): the numerical PLD for ``sample_rate < 1``
    (tighter than RDP; add/remove), the exact Gaussian PLD for ``sample_rate == 1``.
    ``"zcdp"``: only for ``sample_rate == 1``.
    """
    if steps is None:
        if epochs is None:
            raise InvalidParameterError("get_noise_multiplier needs steps or epochs")
        if not (sample_rate > 0):
            raise InvalidParameterError(f"sample_rate must be in (0, 1], not {sample_rate!r}")
        steps = int(epochs / sample_rate)
    if accountant == "rdp":
        return poisson_gaussian_sigma_rdp(
            target_epsilon,
            target_delta,
            steps,
            sample_rate,
            None if orders is None else [float(o) for o in orders],
        )
    if accountant in ("pld", "prv") and sample_rate != 1.0:
        return poisson_gaussian_sigma_pld(target_epsilon, target_delta, steps, sample_rate)
    if accountant in ("pld", "zcdp", "gdp", "prv"):
        if sample_rate != 1.0:
            raise UnsupportedEventError(
                f"accountant={accountant!r} calibrates full-batch Gaussian releases only "
                "(sample_rate == 1); use accountant='rdp' for Poisson subsampling"
            )
        return gaussian_sigma(target_epsilon, target_delta, steps, 1.0, accountant)
    raise InvalidParameterError(f"accountant must be 'rdp', 'pld' or 'zcdp', not {accountant!r}")
