#!/usr/bin/env python3
"""A dpinfer worker in Python: the SIR epidemic of Xiong, Ju & Zhang (section 4.1) by
tau-leaping, the same approximation as dpinfer's built-in `sir` model (`SirTauLeap`).

K people start at (S, I, R) = (K - 1, 1, 0). Each step of length tau (shortened to land on an
observation time) draws infections ~ Poisson(beta S I / K * h) and recoveries
~ Poisson(gamma I * h) from the state at the start of the step, clamps infections to S and
recoveries to I + infections, and moves on. The output is I(t) at the observation times
t = 0, 17, 34, ..., 153 (the authors' grid). theta = (beta, gamma).

Vectorised over the batch with numpy: every row keeps its own generator, seeded from the row's
seed, so the table does not depend on how dpinfer batches rows or how many workers it runs.
Protocol: "Your own model" in crates/cli/README.md. Diagnostics go to stderr only.
Needs numpy and pyarrow.
"""
import sys

import numpy as np
import pyarrow as pa

K = 1_000_000  # population
TAU = 0.5  # tau-leaping step (days)
TIMES = [17.0 * l for l in range(10)]  # observation times


def simulate(beta, gamma, seeds):
    """I(t) at TIMES for each row; reject marks a theta outside the support (beta, gamma >= 0)."""
    n = len(beta)
    reject = ~(np.isfinite(beta) & np.isfinite(gamma) & (beta >= 0) & (gamma >= 0))
    rngs = [np.random.default_rng(int(s)) for s in seeds]
    b = np.where(reject, 0.0, beta) / K
    g = np.where(reject, 0.0, gamma)
    s = np.full(n, K - 1.0)
    i = np.ones(n)
    t = 0.0
    out = np.empty((n, len(TIMES)))
    for col, t_stop in enumerate(TIMES):
        while t < t_stop:
            h = min(TAU, t_stop - t)
            lam_inf = b * s * i * h
            lam_rec = g * i * h
            inf = np.empty(n)
            rec = np.empty(n)
            for r, rng in enumerate(rngs):
                # a finished epidemic (I = 0) draws nothing, as in the built-in model
                inf[r] = rng.poisson(lam_inf[r]) if i[r] > 0 else 0.0
                rec[r] = rng.poisson(lam_rec[r]) if i[r] > 0 else 0.0
            inf = np.minimum(inf, s)
            rec = np.minimum(rec, i + inf)
            s -= inf
            i += inf - rec
            t += h
        out[:, col] = i
    return out, reject


def main():
    requests = pa.ipc.open_stream(sys.stdin.buffer)
    k = int(requests.schema.metadata[b"dpinfer.outputs"])
    if k != len(TIMES):
        sys.exit(f"sir_worker.py: model.outputs = {k}, this model has {len(TIMES)} outputs")
    schema = pa.schema(
        [("row", pa.uint64()), ("output", pa.list_(pa.float64(), k)), ("reject", pa.bool_())]
    )
    out = sys.stdout.buffer
    with pa.ipc.new_stream(out, schema) as writer:
        out.flush()
        for batch in requests:
            y, reject = simulate(
                batch.column("beta").to_numpy(),
                batch.column("gamma").to_numpy(),
                batch.column("seed").to_numpy(),
            )
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
