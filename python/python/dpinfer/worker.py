"""Your own simulator as a ``dpinfer`` worker, without protocol code.

A ``[model] kind = "command"`` model (the ``dpinfer`` CLI and :func:`dpinfer.run`) is a
program that dpinfer starts as a pool of worker processes and talks to over stdin/stdout in
Arrow IPC streams (protocol version 1, in the ``dpinfer-workers`` crate's README). With
:func:`serve` the program is only the model::

    # my_worker.py
    import numpy as np
    from dpinfer.worker import serve

    def simulate(theta, seeds):
        # theta: (rows, parameters) float64, columns in [[model.prior]] order
        # seeds: (rows,) uint64 -- simulate row i from seeds[i] only
        return np.stack([t[0] + np.random.default_rng(s).standard_normal(200)
                         for t, s in zip(theta, seeds)])

    def summarise(y):          # optional: raw data sets (rows, values) -> summaries
        return np.column_stack([y.mean(axis=1), y.std(axis=1, ddof=1)])

    serve(simulate, summarise)

``[model] outputs`` is the number of values per row that dpinfer receives: the summary's
length when ``summarise`` is given, else the simulation's. With ``summarise`` the same
function also answers dpinfer's *summarise request* for the observed raw data
(``[model.summary] kind = "simulator"``, ``observed = "raw"``), so raw data and one summary
function suffice.

Rules :func:`serve` enforces, each with a clear error on stderr (dpinfer shows the worker's
stderr when it fails): ``simulate`` returns ``(rows, k)`` finite numbers, or a pair
``(y, reject)`` where ``reject`` is a ``(rows,)`` bool array marking θ the model cannot
simulate (dpinfer then draws a fresh θ for that row); ``summarise`` returns ``(rows,
outputs)`` finite numbers. While serving, ``print`` goes to stderr: stdout belongs to the
protocol. Needs ``pyarrow`` (imported when :func:`serve` starts).
"""

from __future__ import annotations

import sys
from typing import Any, BinaryIO, Callable, Optional

import numpy as np

__all__ = ["serve"]

#: schema metadata keys of protocol version 1
_PROTOCOL = b"dpinfer.protocol"
_OUTPUTS = b"dpinfer.outputs"
_REQUEST = b"dpinfer.request"


def _rows(values: Any, rows: int, k: int, what: str) -> np.ndarray:
    """``values`` as a C-contiguous ``(rows, k)`` float64 array of finite numbers."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim == 1 and rows == 1:
        a = a.reshape(1, -1)
    if a.shape != (rows, k):
        raise ValueError(
            f"dpinfer.worker: {what} returned shape {a.shape}, expected ({rows}, {k}) "
            f"(one row per request row, [model] outputs = {k} values each)"
        )
    if not np.isfinite(a).all():
        bad = int(np.argwhere(~np.isfinite(a))[0][0])
        raise ValueError(
            f"dpinfer.worker: {what} returned a non-finite value in row {bad} "
            "(mark a θ the model cannot simulate with reject instead)"
        )
    return np.ascontiguousarray(a)


def _observed(values: Any) -> np.ndarray:
    """The observed data of a summarise request as one ``(1, values)`` row."""
    return np.asarray(values, dtype=np.float64).reshape(1, -1)


def serve(
    simulate: Callable[[np.ndarray, np.ndarray], Any],
    summarise: Optional[Callable[[np.ndarray], Any]] = None,
    *,
    stdin: Optional[BinaryIO] = None,
    stdout: Optional[BinaryIO] = None,
) -> None:
    """Serves dpinfer's requests until dpinfer closes the stream (then returns).

    ``simulate(theta, seeds)`` gets ``theta`` as a ``(rows, parameters)`` float64 array
    (columns in the order of the request's parameter columns, i.e. ``[[model.prior]]``) and
    ``seeds`` as a ``(rows,)`` uint64 array, and returns the rows' simulations (or ``(y,
    reject)``); each row must depend on its own seed only, so dpinfer's results do not depend
    on its batch size or number of workers. ``summarise(y)``, if given, maps raw simulations
    ``(rows, values)`` to their summaries and is applied to the observed raw data too.
    ``stdin``/``stdout`` default to the process's binary streams (tests pass others).

    Raises ``ValueError`` for an answer of the wrong shape or with NaN/±∞, and whatever the
    model raises: the worker then exits with the traceback on stderr, which dpinfer reports
    with the row it was simulating.
    """
    import pyarrow as pa  # the protocol's only dependency, needed only by a worker

    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    requests = pa.ipc.open_stream(source)
    meta = requests.schema.metadata or {}
    if meta.get(_PROTOCOL, b"1") != b"1":
        raise ValueError(
            f"dpinfer.worker: protocol version {meta.get(_PROTOCOL)!r}, this helper speaks 1"
        )
    k = int(meta[_OUTPUTS])
    summarising = meta.get(_REQUEST) == b"summarise"
    if summarising and summarise is None:
        raise ValueError(
            "dpinfer.worker: dpinfer asks to summarise the observed data "
            '(model.summary.observed = "raw"), but serve() was given no summarise function'
        )
    params = [n for n in requests.schema.names if n not in ("row", "seed")]
    schema = pa.schema(
        [("row", pa.uint64()), ("output", pa.list_(pa.float64(), k)), ("reject", pa.bool_())]
    )
    # print() inside the model must not corrupt the protocol: it goes to stderr meanwhile.
    saved = sys.stdout
    if stdout is None:
        sys.stdout = sys.stderr
    try:
        with pa.ipc.new_stream(sink, schema) as writer:
            sink.flush()
            for batch in requests:
                n = batch.num_rows
                reject = np.zeros(n, dtype=bool)
                if summarising:
                    data = batch.column("data").to_pylist()
                    out = np.vstack(
                        [
                            _rows(summarise(_observed(d)), 1, k, "summarise")
                            for d in data
                        ]
                    )
                else:
                    theta = np.column_stack(
                        [batch.column(p).to_numpy().astype(np.float64) for p in params]
                    ).reshape(n, len(params))
                    seeds = batch.column("seed").to_numpy().astype(np.uint64)
                    result = simulate(theta, seeds)
                    if isinstance(result, tuple):
                        if len(result) != 2:
                            raise ValueError(
                                "dpinfer.worker: simulate returned a tuple of "
                                f"{len(result)}; expected y or (y, reject)"
                            )
                        result, rej = result
                        reject = np.asarray(rej, dtype=bool).reshape(-1)
                        if reject.shape != (n,):
                            raise ValueError(
                                f"dpinfer.worker: reject has shape {reject.shape}, expected ({n},)"
                            )
                    y = np.asarray(result, dtype=np.float64)
                    if y.ndim == 1 and n == 1:
                        y = y.reshape(1, -1)
                    if y.ndim != 2 or y.shape[0] != n:
                        raise ValueError(
                            f"dpinfer.worker: simulate returned shape {y.shape}, expected "
                            f"({n}, values): one row per request row"
                        )
                    if summarise is not None:
                        keep = ~reject
                        out = np.zeros((n, k))
                        if keep.any():
                            out[keep] = _rows(summarise(y[keep]), int(keep.sum()), k, "summarise")
                    else:
                        out = np.zeros((n, k))
                        keep = ~reject
                        if keep.any():
                            out[keep] = _rows(y[keep], int(keep.sum()), k, "simulate")
                writer.write_batch(
                    pa.record_batch(
                        [
                            batch.column("row"),
                            pa.FixedSizeListArray.from_arrays(pa.array(out.ravel()), k),
                            pa.array(reject),
                        ],
                        schema=schema,
                    )
                )
                sink.flush()
    finally:
        sys.stdout = saved
