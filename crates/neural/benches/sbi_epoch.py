"""Per-epoch training time of sbi (PyTorch, CPU) on the SIR round-10 training-set shape.

The twin of `examples/epoch_time.rs` (dpinfer-neural, candle) for the speed comparison in
the crate README: 10 000 pairs, theta 2-D (the target), s_dp 10-D (the context), minibatches
of 100, 5 % held out for validation, learning rate 5e-4; sbi's `posterior_nn` with the
architecture closest to dpinfer-neural's defaults:

* nsf: 8 rational-quadratic coupling layers, residual conditioners of 2 blocks x 50 units,
  10 bins, tail bound 5 (dpinfer's `NsfSettings::default()`);
* maf: 5 affine autoregressive layers of 50 hidden units (2 masked layers each;
  dpinfer's `MafSettings::default()`);
* atomic: the nsf trained in a second round on all 10 000 pairs with sbi's atomic (APT)
  loss, 10 atoms (dpinfer's `fit_atomic` with 10 atoms; SPPE rounds >= 2).

An epoch's time is the difference of two `train` calls (on fresh estimators) of `lo` and `hi`
epochs divided by `hi - lo` (the setup of a call is not counted: in sbi's favour), after a
warm-up call; wall time and the process's CPU time (all threads; on a shared machine the
steadier of the two). Needs a throw-away venv with
`sbi` (0.27) and `torch`; not a dependency of the repository.

    python sbi_epoch.py [--threads 1] [--only nsf|maf|atomic] [--lo 1] [--hi 4]
"""

import argparse
import time

import torch
from sbi.inference import NPE
from sbi.neural_nets import posterior_nn

PAIRS, THETA, S_DP = 10_000, 2, 10


def data(n, gen):
    theta = torch.randn(n, THETA, generator=gen)
    t = torch.arange(S_DP, dtype=torch.float32) / S_DP
    x = torch.sin(theta[:, :1] * t) + theta[:, 1:] * t * t
    return theta, x + 0.1 * torch.randn(n, S_DP, generator=gen)


def estimator(kind):
    if kind == "maf":
        return posterior_nn(model="maf", hidden_features=50, num_transforms=5)
    return posterior_nn(
        model="nsf",
        hidden_features=50,
        num_transforms=8,
        num_bins=10,
        tail_bound=5.0,
        num_blocks=2,
    )


def train(inference, epochs):
    """(wall seconds, CPU seconds of the process: every thread) of one `train` call."""
    t0, c0 = time.perf_counter(), time.process_time()
    inference.train(
        training_batch_size=100,
        learning_rate=5e-4,
        validation_fraction=0.05,
        stop_after_epochs=epochs + 1,
        max_num_epochs=epochs,
        show_train_summary=False,
    )
    return time.perf_counter() - t0, time.process_time() - c0


def run(kind, prior, epochs):
    """A fresh estimator trained for `epochs` epochs on the 10 000 pairs: the seconds of that
    `train` call (for `atomic`, of the second round's call, after one epoch of a first round on
    half the pairs)."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    inference = NPE(prior=prior, density_estimator=estimator(kind), show_progress_bars=False)
    if kind == "atomic":
        theta, x = data(PAIRS // 2, gen)
        inference.append_simulations(theta, x)
        train(inference, 1)
        proposal = inference.build_posterior().set_default_x(x[:1])
        theta, x = data(PAIRS // 2, gen)
        inference.append_simulations(theta, x, proposal=proposal)
    else:
        theta, x = data(PAIRS, gen)
        inference.append_simulations(theta, x)
    return train(inference, epochs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--only", default="all")
    p.add_argument("--lo", type=int, default=1)
    p.add_argument("--hi", type=int, default=4)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    prior = torch.distributions.MultivariateNormal(torch.zeros(THETA), torch.eye(THETA))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for kind in ["nsf", "maf", "atomic"]:
        if a.only not in ("all", kind):
            continue
        run(kind, prior, a.lo)  # warm-up: the first call pays one-time costs
        t_lo = run(kind, prior, a.lo)
        t_hi = run(kind, prior, a.hi)
        per = (t_hi[0] - t_lo[0]) / (a.hi - a.lo)
        cpu = (t_hi[1] - t_lo[1]) / (a.hi - a.lo)
        print(
            f"{kind}: {per:.3f} s per epoch, CPU {cpu:.3f} s per epoch "
            f"({a.lo} epochs {t_lo[0]:.2f} s, {a.hi} epochs {t_hi[0]:.2f} s)"
        )


if __name__ == "__main__":
    main()
