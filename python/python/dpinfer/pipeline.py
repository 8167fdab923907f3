"""Config-driven runs: the ``dpinfer`` CLI's TOML configs, run from Python.

:func:`run` is ``dpinfer run CONFIG`` as a function: the same library (``dpinfer-pipeline``)
reads the config, runs the public step, the private pass (or SMC-ABC, or MCMC) and the
diagnostics, and guards the results folder with the same restart-safe ledger, so a config
gives **bit-identical samples** from the CLI and from Python. The sharded steps of a cluster
run are here too: :func:`simulate_shard` (rows of the public pairs table),
:func:`merge_shards` (``dpinfer merge``), :func:`private_step` (the data owner's pass over
the merged table) and :func:`smc_step` (the central step of a sharded SMC-ABC generation). :func:`calibrate` is
``dpinfer calibrate``: simulation-based calibration of the config's sampler with its
mechanism in the loop, on one machine, in shards, or on a Dask or Ray cluster
(:func:`calibrate_dask`, :func:`calibrate_ray`).

**The config.** Pass a path (``str`` or ``os.PathLike``): relative paths inside the file
(``[data] path``, a ``kind = "command"`` model's program) are resolved against the file's
folder, as the CLI does. Or pass TOML text with ``text=`` (never as the first argument: a
``str`` first argument is always a path), or the config as a mapping of tables
(``{"model": {"name": "gaussian-mean"}, "sampler": {...}}``, converted to TOML with every
float exact; ``pathlib`` paths and numpy scalars are accepted, ``None`` and NaN are not);
relative paths in text or a mapping are resolved against ``base_dir`` (default: the
working directory). ``[output] dir`` (and ``out=``) is relative to
the working directory, as for the CLI.

**The results folder.** The pipeline writes the privacy ledger (``private-step.json``), the
stored release (``release.json``) and the pairs table or populations into it and holds the
folder's lock while it runs; the CLI additionally writes ``samples.csv``, ``summary.json``
and plots. Running the same config into the same folder again reproduces the stored release
without drawing noise (``RunResult.reproduced`` is ``True``, no new privacy cost); a folder
holding a release of another input is refused with
:class:`~dpinfer.errors.LedgerRefusedError`. With ``[seeds] noise = "os"`` (the default,
the only private choice) the noise comes from the OS CSPRNG; a fixed noise seed is for
tests and is labelled NOT private in the ledger.

**Errors.** A config the library rejects — when it is read (TOML syntax, an unknown key, an
invalid value) or when the run builds the model and sampler (an unknown model, a setting
the model refuses) — raises :class:`~dpinfer.errors.InvalidParameterError` (a
``ValueError``) whose ``name`` is the key the message names (``"epsilon_abcc"``,
``"privacy.epsilon"``, ``"model.name"``; ``None`` if it names none); a ledger refusal
:class:`~dpinfer.errors.LedgerRefusedError`; a failing simulator or worker
:class:`~dpinfer.errors.ModelError`; an OS entropy failure
:class:`~dpinfer.errors.EntropyError`; anything else (unreadable data, I/O)
:class:`~dpinfer.errors.DpinferError`, always with the library's message. The GIL is
released while the run works: other Python threads run, and Ctrl-C takes effect when the
run returns.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _native
from .abc import AbcResult

__all__ = [
    "run",
    "RunResult",
    "simulate_shard",
    "merge_shards",
    "private_step",
    "smc_step",
    "Population",
    "calibrate",
    "calibrate_dask",
    "calibrate_ray",
]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class RunResult(AbcResult):
    """The outcome of a config-driven run (:func:`run`, :func:`private_step`).

    ``samples``: (n, d) float64 array; ``weights``: (n,) importance weights for weighted
    samplers (soft-ABC, SMC-ABC) else ``None``; ``names``: the parameter names; ``model``,
    ``sampler``: their names; ``ledger``: the privacy ledger as a dict — ``epsilon``
    (``inf`` for a non-private run), ``delta``, ``accountant``, ``conversion``,
    ``neighbouring``, ``mechanism``, ``noise`` and ``claim`` (the library's privacy claim:
    relation, events, accountant, conversion rule and report, as nested dicts; ``None`` for a
    non-private run) —, ``claim_text`` its one-line statement; ``facts``: the sampler's
    numbers (noise scales, counts, acceptance, R̂ …) as a dict; ``warnings``: what a
    statistician should read before trusting the posterior; ``reproduced``: ``True`` when
    the release was reproduced from the results folder (no noise drawn, no new privacy
    cost); ``truth``: the true θ of a simulated data set, when known; ``out``: the results
    folder; ``marginals``: per parameter the library's (weighted) ``mean``, ``sd``,
    ``quantiles`` at ``quantile_levels`` (2.5 %, 25 %, 50 %, 75 %, 97.5 %) and ``truth`` —
    the numbers the CLI prints and stores in ``summary.json`` (:meth:`summary` as a
    DataFrame) —; ``tables``: the sampler's diagnostics tables (the CLI's ``<stem>.csv``:
    SMC generations, MCMC traces, …) as ``{stem: (columns, (rows, columns) array)}``.

    ``mean()``, ``to_pandas()``, ``to_datatree()`` / ``to_arviz()`` (ArviZ ≥ 1.0's
    ``xarray.DataTree``, the privacy claim as attributes) and ``len()`` are :class:`AbcResult`'s;
    ``privacy`` is ``ledger`` and ``diagnostics`` is ``facts``.
    """

    model: str = ""
    sampler: str = ""
    ledger: Dict[str, Any] = field(default_factory=dict)
    claim_text: Optional[str] = None
    facts: Dict[str, float] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    reproduced: bool = False
    truth: Optional[List[float]] = None
    out: Optional[str] = None
    marginals: List[Dict[str, Any]] = field(default_factory=list)
    quantile_levels: List[float] = field(default_factory=list)
    tables: Dict[str, Tuple[List[str], np.ndarray]] = field(default_factory=dict)

    def summary(self):
        """The posterior summary (``marginals``) as a pandas DataFrame, one row per
        parameter: ``mean``, ``sd``, one column per quantile level (``q0.025``, …) and
        ``truth``."""
        import pandas as pd

        rows = [
            {"mean": m["mean"], "sd": m["sd"],
             **{f"q{lv:g}": q for lv, q in zip(self.quantile_levels, m["quantiles"])},
             "truth": np.nan if m["truth"] is None else m["truth"]}
            for m in self.marginals
        ]
        return pd.DataFrame(rows, index=[m["name"] for m in self.marginals])

    def _extra_attrs(self) -> Dict[str, Any]:
        """The rest of the ledger (accountant, conversion, mechanism, noise, the claim as
        JSON text and in words), the model and the sampler, as DataTree attributes."""
        led = self.ledger
        attrs: Dict[str, Any] = {"model": self.model, "sampler": self.sampler}
        for key in ("accountant", "conversion", "mechanism", "noise"):
            if led.get(key) is not None:
                attrs[key] = str(led[key])
        claim = led.get("claim")
        if claim is not None:
            attrs["event"] = json.dumps(claim.get("events"), default=str)
            attrs["claim"] = json.dumps(claim, default=str)
        if self.claim_text:
            attrs["claim_text"] = self.claim_text
        return attrs

    def __repr__(self) -> str:
        eps = self.ledger.get("epsilon")
        kind = "weighted " if self.weights is not None else ""
        return (
            f"RunResult({self.sampler} on {self.model}: {len(self)} {kind}samples of "
            f"{self.names}, epsilon={eps}, delta={self.ledger.get('delta')}, "
            f"reproduced={self.reproduced}, {len(self.warnings)} warning(s), out={self.out!r})"
        )

    @classmethod
    def _from_native(cls, r: Dict[str, Any]) -> "RunResult":
        ledger = json.loads(r["ledger_json"])
        ledger.setdefault("claim", None)  # omitted from the JSON of a non-private run
        eps = ledger.get("epsilon")
        if isinstance(eps, str):  # JSON has no ∞: the library writes "inf"
            ledger["epsilon"] = float(eps)
        facts = dict(r["facts"])
        return cls(
            samples=r["samples"],
            weights=r["weights"],
            privacy=ledger,
            diagnostics=facts,
            names=list(r["names"]),
            model=r["model"],
            sampler=r["sampler"],
            ledger=ledger,
            claim_text=r["claim_text"],
            facts=facts,
            warnings=list(r["warnings"]),
            reproduced=bool(r["reproduced"]),
            truth=None if r["truth"] is None else list(r["truth"]),
            out=os.fspath(r["out"]),
            marginals=[dict(m) for m in r["marginals"]],
            quantile_levels=list(r["quantile_levels"]),
            tables={k: (list(c), v) for k, (c, v) in r["tables"].items()},
        )


@dataclass
class Population:
    """One generation of a sharded SMC-ABC (:func:`smc_step`): ``samples`` (N, d),
    normalised ``weights``, the ``tolerance``, the Kish ``ess``, the number of
    ``proposals`` and the population ``file`` the next generation's shards read."""

    generation: int
    tolerance: float
    ess: float
    proposals: int
    samples: np.ndarray
    weights: np.ndarray
    file: str


def _json_default(o: Any) -> Any:
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    if isinstance(o, (np.generic, np.ndarray)):
        return o.tolist()
    raise TypeError(f"a config value of type {type(o).__name__} has no TOML form")


def _source(
    config: Union[None, PathLike, Mapping[str, Any]], text: Optional[str]
) -> Tuple[Optional[str], Optional[str]]:
    """(path, text) for the native calls: a path, a mapping (as TOML text) or ``text``."""
    if (config is None) == (text is None):
        raise TypeError("give a config (a path or a mapping) or text=..., not both and not neither")
    if config is None:
        return None, text
    if isinstance(config, Mapping):
        return None, _native.config_toml(json.dumps(config, default=_json_default))
    if not isinstance(config, (str, os.PathLike)):
        raise TypeError(
            f"config must be a path (str or os.PathLike) or a mapping, got {type(config).__name__}"
        )
    return os.fspath(config), None


def _opt_path(p: Optional[PathLike]) -> Optional[str]:
    return None if p is None else os.fspath(p)


def run(
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    text: Optional[str] = None,
    base_dir: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
    threads: Optional[int] = None,
    kernel_version: Optional[int] = None,
) -> RunResult:
    """Run the inference a TOML config describes — ``dpinfer run CONFIG`` — and return it.

    ``config``: path of the config file, or the config as a mapping of tables, or ``None``
    with ``text=`` the TOML text (relative paths in a mapping or text resolved against
    ``base_dir``, default the working directory); ``out``:
    the results folder (default the config's ``[output] dir``); ``threads``: workers of the
    public simulation, and a command model's worker processes (also under SMC-ABC)
    (default ``[output] threads``; 0 = all cores; the samples do not depend on it);
    ``kernel_version``: overrides ``[distance] kernel_version`` (the random features'
    ``sin``/``cos``: 1, the default that reproduces earlier seeded runs, or 2; recorded as the
    fact ``kernel_version``). See the module documentation for the results folder and the errors.
    """
    path, text = _source(config, text)
    r = _native.run_config(
        path,
        text=text,
        base_dir=_opt_path(base_dir),
        out=_opt_path(out),
        threads=threads,
        kernel_version=kernel_version,
    )
    return RunResult._from_native(r)


def simulate_shard(
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    shard: int,
    shards: int,
    out: PathLike,
    text: Optional[str] = None,
    base_dir: Optional[PathLike] = None,
    generation: int = 0,
    population: Optional[PathLike] = None,
    threads: int = 0,
) -> Tuple[str, int, int]:
    """Shard ``shard`` of ``shards`` of the public pairs table — ``dpinfer simulate`` —
    written into the folder ``out``; returns (file, first row, end row). An SMC-ABC
    generation ``generation`` ≥ 1 draws its proposals from ``population`` (the file
    :func:`smc_step` wrote for generation − 1). Public: reads no private data values."""
    path, text = _source(config, text)
    file, start, end = _native.simulate_shard(
        path,
        shard=shard,
        shards=shards,
        out=os.fspath(out),
        text=text,
        base_dir=_opt_path(base_dir),
        generation=generation,
        population=_opt_path(population),
        threads=threads,
    )
    return os.fspath(file), start, end


def merge_shards(
    dir: PathLike, *, out: PathLike, generation: int = 0, force: bool = False
) -> int:
    """Join the shards of generation ``generation`` in the folder ``dir`` (every shard
    present, checksums verified, one config) into the merged table ``out`` — ``dpinfer
    merge`` —; an existing ``out`` is refused unless ``force``. Returns the row count."""
    return _native.merge_shards(
        os.fspath(dir), out=os.fspath(out), generation=generation, force=force
    )


def private_step(
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    pairs: PathLike,
    text: Optional[str] = None,
    base_dir: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
) -> RunResult:
    """The data owner's private pass over the merged pairs table ``pairs`` (``dpinfer
    merge``'s output) — ``dpinfer private-step`` — into the results folder ``out`` (default
    ``[output] dir``), under the same restart-safe ledger as :func:`run`. Any table of the
    same model, prior, seeds and pair count serves — a non-private run's, or one of another
    clip, declared sensitivity, ε or sampler —; another table is refused naming what
    differs."""
    path, text = _source(config, text)
    r = _native.private_step(
        path,
        pairs=os.fspath(pairs),
        text=text,
        base_dir=_opt_path(base_dir),
        out=_opt_path(out),
    )
    return RunResult._from_native(r)


def smc_step(
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    pairs: PathLike,
    generation: int,
    text: Optional[str] = None,
    base_dir: Optional[PathLike] = None,
    population: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
) -> Population:
    """The central (non-private) step of generation ``generation`` of a sharded SMC-ABC
    (``sampler.pairs`` set) over the merged table ``pairs`` — ``dpinfer smc-step`` —;
    ``population`` is generation − 1's file (none for generation 0). Writes the new
    population into ``out`` (default ``[output] dir``) and returns it."""
    path, text = _source(config, text)
    r = _native.smc_step(
        path,
        pairs=os.fspath(pairs),
        generation=generation,
        text=text,
        base_dir=_opt_path(base_dir),
        population=_opt_path(population),
        out=_opt_path(out),
    )
    return Population(
        generation=r["generation"],
        tolerance=r["tolerance"],
        ess=r["ess"],
        proposals=r["proposals"],
        samples=r["samples"],
        weights=r["weights"],
        file=os.fspath(r["file"]),
    )


def calibrate(
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    replicates: int,
    text: Optional[str] = None,
    base_dir: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
    draws: int = 19,
    thin: int = 1,
    alpha: float = 0.05,
    shard: int = 0,
    shards: int = 1,
    threads: Optional[int] = None,
) -> Optional[Dict[str, Any]]:
    """Are the config's credible intervals honest at its ε? — ``dpinfer calibrate CONFIG
    --replicates K`` as a function (simulation-based calibration, the mechanism in the loop).

    ``replicates`` = K replicates each draw θ from the config's prior, simulate the
    confidential data, apply the release's mechanism with seeded *public* noise (a replicate
    is synthetic: nothing is released, no privacy is spent), run the configured sampler and
    rank θ among ``draws`` = L of its posterior draws (``draws · thin`` asked, every
    ``thin``-th kept). Results go into the folder ``out`` (default ``[output] dir`` +
    ``/calibration``), one line per finished replicate: an interrupted call resumes where it
    stopped, and every ``replicates-*.jsonl`` in the folder counts, so shards
    (``shard``/``shards``) merge by sharing or copying their folder.

    Returns the summary (``summary.json`` as a dict: ``verdict_line`` — starting with
    ``"WARNING:"`` when over-confident —, per-parameter tests with their Holm-adjusted
    p-values, rank histograms, the ECDF band, TARP, coverage) once all K replicates are in the
    folder, else ``None`` (a shard finished, others missing). Errors as :func:`run`.
    """
    path, text = _source(config, text)
    summary, _present, _computed, _reused, _dir = _native.calibrate(
        path,
        replicates=replicates,
        text=text,
        base_dir=_opt_path(base_dir),
        out=_opt_path(out),
        draws=draws,
        thin=thin,
        alpha=alpha,
        shard=shard,
        shards=shards,
        threads=threads,
    )
    return None if summary is None else json.loads(summary)


def calibrate_dask(
    client: Any,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    replicates: int,
    shards: int,
    out: PathLike,
    text: Optional[str] = None,
    base_dir: Optional[PathLike] = None,
    draws: int = 19,
    thin: int = 1,
    alpha: float = 0.05,
    threads: int = 1,
    retries: int = 2,
) -> Dict[str, Any]:
    """:func:`calibrate` on a Dask cluster: one task per shard (``shards`` of them, each
    :func:`calibrate` with ``shard=i``) writing into the folder ``out``, which every worker
    must see (a shared file system), then the summary on the client. A task lost with its
    worker is retried by Dask (``retries``) and resumes from the replicates its shard file
    already holds; the summary is bit-identical to one machine's. Returns it."""

    def run_shards(path: Optional[str], kwargs: Dict[str, Any]) -> None:
        futures = [
            client.submit(
                calibrate, path, shard=i, shards=shards, pure=False, retries=retries, **kwargs
            )
            for i in range(shards)
        ]
        client.gather(futures)

    return _calibrate_sharded(
        run_shards, shards, config, text, base_dir, out, draws, thin, alpha, threads, replicates
    )


def calibrate_ray(
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    replicates: int,
    shards: int,
    out: PathLike,
    text: Optional[str] = None,
    base_dir: Optional[PathLike] = None,
    draws: int = 19,
    thin: int = 1,
    alpha: float = 0.05,
    threads: int = 1,
    max_retries: int = 3,
) -> Dict[str, Any]:
    """:func:`calibrate` on a Ray cluster: one Ray task per shard (``shards`` of them, each
    :func:`calibrate` with ``shard=i`` on ``threads`` threads, asking Ray for as many CPUs)
    writing into the folder ``out``, which every node must see (a shared file system), then
    the summary in the calling process. Ray is used as it is set up: call ``ray.init(...)``
    first to choose the cluster (else Ray starts a local one). A task whose worker process
    dies is rerun by Ray (``max_retries``) and resumes from the replicates its shard file
    already holds; an exception raised by a task (an invalid config) is not retried. The
    summary is bit-identical to one machine's. Returns it."""
    import ray

    def run_shards(path: Optional[str], kwargs: Dict[str, Any]) -> None:
        task = ray.remote(num_cpus=threads, max_retries=max_retries, retry_exceptions=False)(
            calibrate
        )
        ray.get([task.remote(path, shard=i, shards=shards, **kwargs) for i in range(shards)])

    return _calibrate_sharded(
        run_shards, shards, config, text, base_dir, out, draws, thin, alpha, threads, replicates
    )


def _calibrate_sharded(
    run_shards: Any,
    shards: int,
    config: Union[None, PathLike, Mapping[str, Any]],
    text: Optional[str],
    base_dir: Optional[PathLike],
    out: PathLike,
    draws: int,
    thin: int,
    alpha: float,
    threads: int,
    replicates: int,
) -> Dict[str, Any]:
    """The cluster routes' shared part: ``run_shards(path, kwargs)`` runs every shard's
    :func:`calibrate` (``shard=i, shards=n`` plus ``kwargs``) on the cluster and returns when
    all have finished; then the summary of the folder ``out`` in this process. ``shards`` must
    be a positive int (0 shards would leave every replicate to this process)."""
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        from .errors import InvalidParameterError

        err = InvalidParameterError(f"shards must be a positive int, got {shards!r}")
        err.name, err.value = "shards", shards
        raise err
    path, text = _source(config, text)
    out = os.fspath(out)
    kwargs = dict(
        text=text,
        base_dir=_opt_path(base_dir),
        out=out,
        draws=draws,
        thin=thin,
        alpha=alpha,
        threads=threads,
        replicates=replicates,
    )
    run_shards(path, kwargs)
    summary = calibrate(path, **kwargs)
    if summary is None:  # pragma: no cover - every shard returned, so all K are present
        raise RuntimeError(f"replicates missing in {out} after every shard finished")
    return summary
