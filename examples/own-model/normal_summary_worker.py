#!/usr/bin/env python3
"""A dpinfer worker that summarises: y_i ~ N(mu, sigma^2), i = 1..200, reduced to its
summary (mean, standard deviation) by `summarise` — which is also applied to the observed raw
data, so the data file holds the raw observations (`[model.summary] kind = "simulator"`,
`observed = "raw"`).

Two kinds of request stream (see "Your own model" in crates/cli/README.md):
* simulations: columns row, seed, mu, sigma; answer row, output (the summary of each row);
* dpinfer.request = "summarise" in the schema metadata: columns row, data (the observed raw
  values); answer row, output (their summary, by the same function).
stdout belongs to the protocol; diagnostics go to stderr.

Needs numpy and pyarrow. With the dpinfer Python package, `dpinfer.worker.serve(simulate,
summarise=summarise)` replaces `main` below.
"""
import sys

import numpy as np
import pyarrow as pa

N = 200


def simulate(mu, sigma, seeds):
    """Raw data sets, one row per parameter pair, each from its own seed."""
    y = np.empty((len(mu), N))
    for i, s in enumerate(seeds):
        y[i] = mu[i] + sigma[i] * np.random.default_rng(int(s)).standard_normal(N)
    return y


def summarise(y):
    """The summary of raw data sets (rows): mean and standard deviation."""
    y = np.atleast_2d(y)
    return np.column_stack([y.mean(axis=1), y.std(axis=1, ddof=1)])


def main():
    requests = pa.ipc.open_stream(sys.stdin.buffer)
    meta = requests.schema.metadata
    k = int(meta[b"dpinfer.outputs"])
    schema = pa.schema([("row", pa.uint64()), ("output", pa.list_(pa.float64(), k))])
    out = sys.stdout.buffer
    with pa.ipc.new_stream(out, schema) as writer:
        out.flush()
        for batch in requests:
            if meta.get(b"dpinfer.request") == b"summarise":
                s = np.vstack([summarise(np.asarray(d)) for d in batch.column("data").to_pylist()])
            else:
                mu = batch.column("mu").to_numpy()
                sigma = batch.column("sigma").to_numpy()
                s = summarise(simulate(mu, sigma, batch.column("seed").to_numpy()))
            writer.write_batch(
                pa.record_batch(
                    [batch.column("row"), pa.FixedSizeListArray.from_arrays(pa.array(s.ravel()), k)],
                    schema=schema,
                )
            )
            out.flush()


if __name__ == "__main__":
    main()
