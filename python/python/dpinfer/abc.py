"""ABC with your own simulator (``dpinfer-abc``).

Simulators are Python callables ``simulator(theta, seeds) -> outputs`` taking a 2-D float64
array ``theta`` of shape (n, d) and a 1-D uint64 array ``seeds`` of length n, and returning a
2-D float64 array (n, k) — one simulated summary per row, row i drawn with randomness seeded
by ``seeds[i]`` (e.g. ``np.random.default_rng(seed)``), so results are reproducible and any
row range can be simulated anywhere. Priors come from :mod:`dpinfer.priors` or are any
object with ``sample(seeds)`` and ``log_pdf(theta)``.

Non-private samplers (they read the observation without noise):

* :func:`rejection_abc` — rejection ABC (threshold or k nearest).
* :func:`smc_abc` — SMC-ABC with adaptive tolerances (Beaumont et al. 2009, Del Moral et
  al. 2012).

The private two-party workflow of ABCDP (Park, Vinaroz & Jitkrittum 2021, §3):

1. the modeler simulates **public pairs** (θ_t, Y_t) with :func:`simulate_pairs`
   (batched: the simulator is called on blocks of rows; any row range — a shard — can be
   computed separately and the concatenation is bit-identical to the serial table);
2. the data owner computes distances to the private observation
   (:class:`RffMmd` — the papers' random-feature MMD with its Lemma 1 sensitivity —,
   :func:`euclidean_distances`, or their own) and runs a private pass:
   :func:`svt_abc` (sparse vector, pure ε-DP) or :func:`gaussian_abcdp` (Gaussian
   mechanism, pure ε-DP by Theorem 3.1). Only the accepted θs (and indices) are released.

Sensitivities are :class:`Sensitivity` values: a ``float`` that also carries the
neighbouring relation(s) it was proved for (``RffMmd.sensitivity()`` returns one); the
private passes put that relation into ``result.privacy["relation"]``.

Results are :class:`AbcResult` objects with ``.samples`` (numpy), ``.weights``,
``.to_pandas()``, ``.to_datatree()`` / ``.to_arviz()`` (ArviZ ≥ 1.0's ``xarray.DataTree``; needs xarray), ``.privacy`` (the claim:
ε, event, relation) and ``.diagnostics``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
import math
from typing import Any, Callable, Dict, Optional, Sequence, Union

import numpy as np

from . import _native
from ._native import euclidean_distances, row_seeds

__all__ = [
    "AbcResult",
    "rejection_abc",
    "smc_abc",
    "simulate_pairs",
    "euclidean_distances",
    "RffMmd",
    "Sensitivity",
    "row_seeds",
    "svt_abc",
    "gaussian_abcdp",
]

Simulator = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: stream indices of :func:`row_seeds` used by :func:`simulate_pairs`
PRIOR_STREAM, SIMULATOR_STREAM = 0, 1


@dataclass
class AbcResult:
    """Samples of an ABC run.

    ``samples``: (n, d) array; ``weights``: (n,) normalised importance weights (uniform for
    rejection and the private passes); ``privacy``: ``None`` for the non-private samplers,
    else a dict with ``epsilon``, ``delta`` (0), ``event`` (compose it into an accountant)
    and ``relation``; ``diagnostics``: sampler-specific numbers.
    """

    samples: np.ndarray
    weights: Optional[np.ndarray]
    privacy: Optional[Dict[str, Any]] = None
    diagnostics: Dict[str, Any] = field(default_factory=dict)
    names: Optional[Sequence[str]] = None

    def _names(self):
        d = self.samples.shape[1] if self.samples.ndim == 2 else 0
        return list(self.names) if self.names is not None else [f"theta_{i}" for i in range(d)]

    def mean(self) -> np.ndarray:
        """Weighted posterior mean (NaN for an empty sample; ``weights`` ``None`` means
        equal weights)."""
        if len(self.samples) == 0:
            return np.full(self.samples.shape[1], np.nan)
        return np.average(self.samples, axis=0, weights=self.weights)

    def to_pandas(self):
        """A DataFrame with one column per θ coordinate and a ``weight`` column (left out
        when ``weights`` is ``None``)."""
        import pandas as pd

        df = pd.DataFrame(self.samples, columns=self._names())
        if self.weights is not None:
            df["weight"] = self.weights
        return df

    def _privacy_attrs(self) -> Dict[str, Any]:
        """The privacy claim as netCDF-safe attributes (strings and floats)."""
        p = self.privacy
        if not p:
            return {"privacy": "not private: no privacy claim"}
        attrs: Dict[str, Any] = {}
        for key in ("epsilon", "delta"):
            if p.get(key) is not None:
                attrs[key] = float(p[key])
        relation = p.get("relation", p.get("neighbouring"))
        if relation is not None:
            attrs["relation"] = str(relation)
        event = p.get("event")
        if event is not None:
            attrs["event"] = event if isinstance(event, str) else json.dumps(event, default=str)
        return attrs

    def _sample_stats(self) -> Dict[str, np.ndarray]:
        """Per-draw statistics: ``weight`` (normalised) and ``distance`` where present."""
        n = len(self.samples)
        stats: Dict[str, np.ndarray] = {}
        if self.weights is not None:
            w = np.asarray(self.weights, dtype=np.float64)
            total = np.sum(w)
            stats["weight"] = w / total if total > 0 else w
        dist = self.diagnostics.get("distances") if isinstance(self.diagnostics, dict) else None
        if dist is not None and np.ndim(dist) == 1 and len(dist) == n:
            stats["distance"] = np.asarray(dist, dtype=np.float64)
        return stats

    def to_datatree(self, *, resample: bool = False, observed_data=None):
        """The samples as an ``xarray.DataTree`` in ArviZ ≥ 1.0's layout (needs xarray):
        ``posterior`` with one variable per parameter over dims ``(chain, draw)`` (one
        chain, the draws in released order); ``sample_stats`` with ``weight`` (normalised)
        for weighted samplers and ``distance`` where the sampler returns per-draw
        distances; ``observed_data`` only when you pass it (a mapping of name → array: the
        data a private run read are never put here by the library — they are the private
        input); the privacy claim (``epsilon``, ``delta``, ``event``, ``relation``, …) as
        attributes of the root and of ``posterior``. ``resample=True`` replaces weighted
        draws by a seeded resample proportional to the weights (so unweighted summaries such
        as ``az.summary`` describe the weighted posterior); ``sample_stats`` then keeps no
        per-draw weights. Save it with ``r.to_datatree().to_netcdf("posterior.nc")``
        (needs h5netcdf or netCDF4) or ``.to_zarr("posterior.zarr")`` (needs zarr)."""
        import xarray as xr

        s = np.asarray(self.samples, dtype=np.float64)
        names = self._names()
        stats = self._sample_stats()
        if resample and len(s) and self.weights is not None:
            w = stats.get("weight")
            idx = np.random.default_rng(0).choice(len(s), size=len(s), p=w)
            s = s[idx]
            stats = {k: v[idx] for k, v in stats.items() if k != "weight"}
        attrs = self._privacy_attrs()
        attrs.update(self._extra_attrs())
        d = s.shape[1] if s.ndim == 2 else 0
        posterior = xr.Dataset(
            {n: (("chain", "draw"), s[None, :, i]) for i, n in enumerate(names[:d])},
            coords={"chain": [0], "draw": np.arange(len(s))},
            attrs=attrs,
        )
        groups = {"posterior": posterior}
        if stats:
            groups["sample_stats"] = xr.Dataset(
                {k: (("chain", "draw"), v[None, :]) for k, v in stats.items()},
                coords={"chain": [0], "draw": np.arange(len(s))},
            )
        if observed_data is not None:
            groups["observed_data"] = xr.Dataset(
                {
                    k: ((f"{k}_dim_{j}" for j in range(np.ndim(v))), np.asarray(v))
                    for k, v in dict(observed_data).items()
                }
            )
        tree = xr.DataTree.from_dict(groups)
        tree.attrs = dict(attrs)
        return tree

    def _extra_attrs(self) -> Dict[str, Any]:
        return {}

    def to_arviz(self, *, observed_data=None):
        """ArviZ ≥ 1.0's data: :meth:`to_datatree` with weighted draws resampled
        proportionally to their weights (seeded), so ArviZ's unweighted functions
        (``az.summary``, ``az.plot_rank``) describe the weighted posterior."""
        return self.to_datatree(resample=True, observed_data=observed_data)

    def __len__(self) -> int:
        return len(self.samples)


def _uniform(n: int) -> np.ndarray:
    return np.full(n, 1.0 / n) if n else np.zeros(0)


def _obs(observed) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(observed, dtype=np.float64).reshape(-1))


def rejection_abc(
    prior,
    simulator: Simulator,
    observed,
    *,
    budget: int,
    threshold: Optional[float] = None,
    nearest: Optional[int] = None,
    target: Optional[int] = None,
    seed: int = 0,
    batch_size: int = 4096,
    names: Optional[Sequence[str]] = None,
) -> AbcResult:
    """Rejection ABC with Euclidean distance to ``observed``. Give ``threshold`` (accept
    ρ ≤ threshold; stop after ``target`` acceptances) or ``nearest`` (keep the k closest of
    ``budget`` proposals). **Not private.**

    ``simulator(theta, seeds)`` is called on blocks of up to ``batch_size`` rows; every
    proposal has its own stream, so the result does not depend on ``batch_size``."""
    r = _native.rejection_abc(
        prior,
        simulator,
        _obs(observed),
        budget=budget,
        threshold=threshold,
        nearest=nearest,
        target=(2**64 - 1) if target is None else target,
        seed=seed,
        batch_size=batch_size,
    )
    n = len(r["samples"])
    return AbcResult(
        r["samples"],
        _uniform(n),
        None,
        {k: r[k] for k in ("distances", "tolerance", "simulations", "acceptance_rate")},
        names,
    )


def smc_abc(
    prior,
    simulator: Simulator,
    observed,
    *,
    particles: int = 1000,
    initial_tolerance: float = float("inf"),
    quantile: float = 0.5,
    geometric_factor: Optional[float] = None,
    tolerances: Optional[Sequence[float]] = None,
    final_tolerance: float = 0.0,
    max_generations: int = 20,
    simulation_budget: int = 10_000_000,
    min_acceptance_rate: float = 0.0,
    ess_fraction: float = 0.5,
    kernel_scale: Optional[float] = None,
    seed: int = 0,
    batch_size: int = 0,
    names: Optional[Sequence[str]] = None,
    kernel: str = "twice-covariance",
    first_tolerance: str = "infinity",
) -> AbcResult:
    """SMC-ABC (population Monte Carlo with a Gaussian perturbation kernel) with Euclidean
    distance to ``observed``. Tolerances: the weighted ``quantile`` of the previous
    generation's distances (default), a ``geometric_factor`` schedule, or an explicit list.
    **Not private.**

    ``kernel``: ``"twice-covariance"`` (default: ``kernel_scale`` × the weighted covariance,
    Beaumont et al. 2009), ``"olcm"`` (each ancestor with its own optimal local covariance,
    Filippi et al. 2013) or ``"mvn"`` (``kernel_scale`` × Silverman's factor² × the weighted
    covariance, as pyabc's ``MultivariateNormalTransition``); ``kernel_scale`` defaults to 2
    for the first and 1 for the others. ``first_tolerance="prior-quantile"``: generation 0's
    tolerance is the ``quantile`` of ``particles`` prior-predictive distances (pyabc's
    default) instead of ∞ (the prior); quantile schedule only.

    Each generation proposes in rounds: ``simulator(theta, seeds)`` is called once per round
    on every particle of a block of ``batch_size`` (0: all particles) that is not yet
    accepted. Every particle has its own stream, so the result does not depend on
    ``batch_size``."""
    r = _native.smc_abc(
        prior,
        simulator,
        _obs(observed),
        particles=particles,
        initial_tolerance=initial_tolerance,
        quantile=quantile,
        geometric_factor=geometric_factor,
        tolerances=None if tolerances is None else [float(t) for t in tolerances],
        final_tolerance=final_tolerance,
        max_generations=max_generations,
        simulation_budget=simulation_budget,
        min_acceptance_rate=min_acceptance_rate,
        ess_fraction=ess_fraction,
        kernel_scale=kernel_scale,
        seed=seed,
        batch_size=batch_size,
        kernel=kernel,
        first_tolerance=first_tolerance,
    )
    diag = {k: r[k] for k in ("distances", "stop_reason", "simulations", "history")}
    return AbcResult(r["samples"], r["weights"], None, diag, names)


def simulate_pairs(
    prior,
    simulator: Simulator,
    *,
    seed: int,
    start: int = 0,
    stop: int,
    batch_size: int = 4096,
) -> "tuple[np.ndarray, np.ndarray]":
    """Public pairs (θ_t, Y_t) for rows ``start <= t < stop``: θ_t = prior.sample of
    ``row_seeds(seed, ..., stream=0)[t]``, Y_t = simulator(θ_t, ``row_seeds(..., stream=1)[t]``),
    the simulator called on blocks of ``batch_size`` rows. A plain function of a row range:
    map it over shards with dask/ray/concurrent.futures and concatenate — the table is
    bit-identical to the serial one. Everything returned is public."""
    if not (0 <= start <= stop):
        from .errors import InvalidParameterError

        raise InvalidParameterError(f"need 0 <= start <= stop, got [{start}, {stop})")
    thetas, outputs = [], []
    for lo in range(start, stop, max(1, int(batch_size))):
        hi = min(stop, lo + max(1, int(batch_size)))
        th = np.ascontiguousarray(prior.sample(row_seeds(seed, lo, hi, PRIOR_STREAM)), dtype=np.float64)
        y = np.asarray(simulator(th, row_seeds(seed, lo, hi, SIMULATOR_STREAM)), dtype=np.float64)
        if y.ndim != 2 or y.shape[0] != hi - lo:
            from .errors import ModelError

            raise ModelError(f"simulator returned shape {y.shape}, expected ({hi - lo}, k)")
        thetas.append(th)
        outputs.append(y)
    if not thetas:
        return np.zeros((0, prior.dim)), np.zeros((0, 0))
    return np.concatenate(thetas), np.concatenate(outputs)


#: accepted spellings of a relation (the accountants' ``replace_one`` / ``add_remove``, the
#: CLI's ``replace-one`` / ``add-remove``) -> the name ``dpinfer_distances::Relations``
#: prints, which is what :attr:`Sensitivity.relation` and ``privacy["relation"]`` hold
_RELATIONS = {
    "replace-one": "replace-one",
    "replace_one": "replace-one",
    "add/remove": "add/remove",
    "add-remove": "add/remove",
    "add_remove": "add/remove",
    "replace-one and add/remove": "replace-one and add/remove",
    "both": "replace-one and add/remove",
    "any pair": "any pair",
    "any-pair": "any pair",
    "any_pair": "any pair",
}

#: ``privacy["relation"]`` of a pass given a plain ``float`` sensitivity
PLAIN_FLOAT_RELATION = (
    "not stated (a plain float sensitivity): the relation under which it bounds the clipped distance"
)


class Sensitivity(float):
    """A global sensitivity Δ together with the neighbouring relation(s) it holds for — the
    Python form of the library's ``dpinfer_distances::Sensitivity`` (a value and its
    ``Relations``).

    A ``float`` subclass, so it goes wherever a float goes (``svt_abc(...,
    sensitivity=s)``, arithmetic, numpy); arithmetic returns a plain ``float``, since a
    bound scaled by hand is no longer the proved one. ``relation`` is one of
    ``"replace-one"`` (same size, one record replaced), ``"add/remove"`` (one record added
    or removed), ``"replace-one and add/remove"`` or ``"any pair"`` (a bound on the range,
    holding for any two data sets) — the words the Rust ``Relations`` type prints; the
    spellings ``replace_one``/``add_remove`` (the accountants'), ``add-remove`` (the CLI's)
    and ``both`` are accepted.

    Raises :class:`~dpinfer.errors.InvalidParameterError` for a value that is not finite and
    > 0 (as ``Sensitivity::declared``), or a relation not named above.
    """

    __slots__ = ("_relation",)

    def __new__(cls, value: float, relation: str) -> "Sensitivity":
        from .errors import InvalidParameterError

        try:
            v = float(value)
        except (TypeError, ValueError):
            err = InvalidParameterError(f"sensitivity must be a number, not {value!r}")
            err.name, err.value = "sensitivity", None
            raise err from None
        if not (math.isfinite(v) and v > 0.0):
            err = InvalidParameterError(f"sensitivity must be finite and > 0, got {v!r}")
            err.name, err.value = "sensitivity", v
            raise err
        canonical = _RELATIONS.get(relation) if isinstance(relation, str) else None
        if canonical is None:
            names = ", ".join(repr(k) for k in _RELATIONS)
            err = InvalidParameterError(f"unknown neighbouring relation {relation!r} (expected one of {names})")
            err.name, err.value = "relation", None
            raise err
        s = super().__new__(cls, v)
        s._relation = canonical
        return s

    @property
    def relation(self) -> str:
        """The neighbouring relation(s) the bound holds for (``"replace-one"``, …)."""
        return self._relation

    @property
    def value(self) -> float:
        """Δ as a plain ``float``."""
        return float(self)

    def __repr__(self) -> str:
        return f"Sensitivity({float(self)!r}, relation={self._relation!r})"

    def __reduce__(self):
        return (Sensitivity, (float(self), self._relation))



def _relation_of(sensitivity: Union[float, Sensitivity]) -> str:
    """``privacy["relation"]`` of a pass run with ``sensitivity``."""
    if isinstance(sensitivity, Sensitivity):
        return sensitivity.relation
    return PLAIN_FLOAT_RELATION


class RffMmd:
    """The ABCDP distance: random-feature MMD between each simulated data set and the
    private observation ``observed`` (shape (N, d), or (N,) for d = 1), computed by the
    library over all cores.

    The feature map is public: ``features`` standard-normal frequencies from ``seed`` (the
    library's setup stream, as ``dpinfer simulate`` uses), and the Gaussian-kernel bandwidth
    given, or by the median heuristic on ``median_data`` — a **public** data set such as one
    prior-predictive simulation, never the observation (the bandwidth is released with every
    result).

    ``sensitivity()`` is Δ = 2/N (Park, Vinaroz & Jitkrittum 2021, Lemma 1) plus a
    floating-point slack, for **replace-one** neighbours of the observation, as a
    :class:`Sensitivity` carrying that relation; pass it to :func:`svt_abc` /
    :func:`gaussian_abcdp` with ``clip = 2`` (the distance lies in [0, 2]) and the claim
    names the relation.
    """

    relation = "replace-one"

    def __init__(self, observed, *, seed: int, features: int = 100, bandwidth: Optional[float] = None, median_data=None):
        obs = np.asarray(observed, dtype=np.float64)
        if obs.ndim == 1:
            obs = obs[:, None]
        if obs.ndim != 2:
            from .errors import InvalidParameterError

            raise InvalidParameterError(f"observed must be 1-D or 2-D, got shape {obs.shape}")
        md = None
        if median_data is not None:
            md = np.asarray(median_data, dtype=np.float64).ravel()
            d = obs.shape[1]
            if d == 0 or md.size % d != 0:
                from .errors import InvalidParameterError

                raise InvalidParameterError(f"median_data must hold whole rows of {d} values, got {md.size}")
            md = np.ascontiguousarray(md.reshape(-1, d))
        self._native = _native.RffMmd(
            np.ascontiguousarray(obs), seed=int(seed), features=int(features), bandwidth=bandwidth, median_data=md
        )

    @property
    def bandwidth(self) -> float:
        return self._native.bandwidth

    @property
    def num_features(self) -> int:
        return self._native.num_features

    @property
    def frequencies(self) -> np.ndarray:
        return self._native.frequencies

    def sensitivity(self, sim_rows: Optional[int] = None) -> Sensitivity:
        """Δ of the distance under replace-one neighbours of the observation, for simulated
        sets of up to ``sim_rows`` rows (default: as many as the observation), with its
        relation (:attr:`RffMmd.relation`)."""
        return Sensitivity(self._native.sensitivity(sim_rows), self.relation)

    def distances(self, sets) -> np.ndarray:
        """RFF MMD ∈ [0, 2] of every set: ``sets`` of shape (m, n·d) (the outputs of
        :func:`simulate_pairs`) or (m, n, d)."""
        a = np.asarray(sets, dtype=np.float64)
        if a.ndim == 3:
            a = a.reshape(a.shape[0], -1)
        return self._native.distances(np.ascontiguousarray(a))


def _private(r: Dict[str, Any], relation: str, names) -> AbcResult:
    n = len(r["samples"])
    privacy = {
        "epsilon": r["epsilon"],
        "delta": 0.0,
        "event": r["event"],
        "relation": relation,
    }
    diag = {k: v for k, v in r.items() if k not in ("samples", "epsilon", "event")}
    return AbcResult(r["samples"], _uniform(n), privacy, diag, names)


def svt_abc(
    thetas,
    distances,
    *,
    epsilon_abc: float,
    epsilon_total: float,
    c: int,
    sensitivity: Union[float, Sensitivity],
    clip: float,
    resample: bool = False,
    noise_seed: Optional[int] = None,
    names: Optional[Sequence[str]] = None,
) -> AbcResult:
    """SVT-ABC (ABCDP Algorithm 1): the data owner's private pass over public pairs with
    distances ρ_t to the private observation; stops after ``c`` acceptances.

    Privacy: the indicator stream (hence the accepted θs) is pure ε-DP with
    ε = ``result.privacy["epsilon"]`` ≤ ``epsilon_total`` (Theorem 1 with the grid-rounded
    sensitivity), for the neighbouring relation under which ``sensitivity`` bounds the
    change of min(ρ, clip) for every public Y (replace-one with Δ = 2√B/N for MMD; Δ = clip
    when the distance has no bounded sensitivity). A :class:`Sensitivity` states that
    relation and ``result.privacy["relation"]`` is it; a plain ``float`` leaves it unstated
    (:data:`PLAIN_FLOAT_RELATION`). The whole budget is charged even with fewer than c
    acceptances. Noise: OS CSPRNG unless ``noise_seed`` (NOT private)."""
    r = _native.svt_abc(
        np.ascontiguousarray(thetas, dtype=np.float64),
        np.ascontiguousarray(distances, dtype=np.float64),
        epsilon_abc=epsilon_abc,
        epsilon_total=epsilon_total,
        c=c,
        sensitivity=sensitivity,
        clip=clip,
        resample=resample,
        noise_seed=noise_seed,
    )
    return _private(r, _relation_of(sensitivity), names)


def gaussian_abcdp(
    thetas,
    distances,
    *,
    epsilon_abc: float,
    epsilon_total: float,
    sensitivity: Union[float, Sensitivity],
    bound: float,
    noise_seed: Optional[int] = None,
    names: Optional[Sequence[str]] = None,
) -> AbcResult:
    """Gaussian-mechanism ABCDP rejection (Park & Jitkrittum, Theorem 3.1): every one of the
    T pairs gets a noisy decision; ε_total over all T decisions by linear composition (each
    decision's grid-exact ε ≤ ε_total/T). Same relation note as :func:`svt_abc`."""
    r = _native.gaussian_abcdp(
        np.ascontiguousarray(thetas, dtype=np.float64),
        np.ascontiguousarray(distances, dtype=np.float64),
        epsilon_abc=epsilon_abc,
        epsilon_total=epsilon_total,
        sensitivity=sensitivity,
        bound=bound,
        noise_seed=noise_seed,
    )
    return _private(r, _relation_of(sensitivity), names)
