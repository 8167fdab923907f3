#!/usr/bin/env python3
"""Benchmark worker: a trivial simulator vectorised over the batch with numpy.

y_ij = mu_i + z_ij, j = 1..outputs, with z_ij standard normal from a counter-based generator
(splitmix64 of seed_i + j, then Box-Muller), so each row depends only on its seed and the whole
batch is a few numpy array operations (no per-row Python loop).
"""
import sys

import numpy as np
import pyarrow as pa

M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
GOLD = np.uint64(0x9E3779B97F4A7C15)


def splitmix(x):
    x = x + GOLD
    x = (x ^ (x >> np.uint64(30))) * M1
    x = (x ^ (x >> np.uint64(27))) * M2
    return x ^ (x >> np.uint64(31))


def normals(seeds, k):
    with np.errstate(over="ignore"):
        j = np.arange(2 * k, dtype=np.uint64)
        u = splitmix(seeds[:, None] * GOLD + j[None, :])
    u = ((u >> np.uint64(11)).astype(np.float64) + 0.5) / 9007199254740992.0
    u1, u2 = u[:, :k], u[:, k:]
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def simulate(mu, seeds, k):
    return mu[:, None] + normals(seeds, k)


def main():
    requests = pa.ipc.open_stream(sys.stdin.buffer)
    k = int(requests.schema.metadata[b"dpinfer.outputs"])
    schema = pa.schema([("row", pa.uint64()), ("output", pa.list_(pa.float64(), k))])
    out = sys.stdout.buffer
    with pa.ipc.new_stream(out, schema) as writer:
        out.flush()
        for batch in requests:
            y = simulate(batch.column("mu").to_numpy(), batch.column("seed").to_numpy(), k)
            writer.write_batch(
                pa.record_batch(
                    [batch.column("row"), pa.FixedSizeListArray.from_arrays(pa.array(y.ravel()), k)],
                    schema=schema,
                )
            )
            out.flush()


if __name__ == "__main__":
    main()
