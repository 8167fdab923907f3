#!/usr/bin/env python3
"""A dpinfer worker in Python: the gaussian-mean model, y_i ~ N(mu, sigma^2), i = 1..outputs.

Protocol (see "Your own model" in crates/cli/README.md): read an Arrow IPC stream of request
batches (row, seed, one float64 column per parameter) from stdin; for each one write one
batch (row, output = fixed_size_list<float64>[outputs], reject = bool) to stdout, and flush.
Print diagnostics to stderr only: stdout belongs to the protocol.

Needs numpy and pyarrow (python3 -m venv venv && venv/bin/pip install numpy pyarrow).
"""
import sys

import numpy as np
import pyarrow as pa

SIGMA = 1.0


def simulate(mu, seeds, k):
    """One row per parameter value; each row draws from its own seed, so the output does not
    depend on how dpinfer batches the rows or how many workers it runs."""
    y = np.empty((len(mu), k))
    for i, s in enumerate(seeds):
        y[i] = mu[i] + SIGMA * np.random.default_rng(int(s)).standard_normal(k)
    reject = ~np.isfinite(mu)  # a θ this model cannot simulate would be marked here
    return y, reject


def main():
    requests = pa.ipc.open_stream(sys.stdin.buffer)
    k = int(requests.schema.metadata[b"dpinfer.outputs"])
    schema = pa.schema(
        [("row", pa.uint64()), ("output", pa.list_(pa.float64(), k)), ("reject", pa.bool_())]
    )
    out = sys.stdout.buffer
    with pa.ipc.new_stream(out, schema) as writer:
        out.flush()
        for batch in requests:
            mu = batch.column("mu").to_numpy()
            seeds = batch.column("seed").to_numpy()
            y, reject = simulate(mu, seeds, k)
            writer.write_batch(
                pa.record_batch(
                    [
                        batch.column("row"),
                        pa.FixedSizeListArray.from_arrays(pa.array(y.ravel()), k),
                        pa.array(reject),
                    ],
                    schema=schema,
                )
            )
            out.flush()


if __name__ == "__main__":
    main()
