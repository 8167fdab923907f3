"""sbi's sequential NPE (SNPE-C, atomic loss) on the paper's SIR experiment: the peer of
`examples/sir_sppe.rs`'s SPPE (Xiong, Ju & Zhang, App. E.1.1, Fig. 1B, Table 1; issue 28).

The private-data simulator, in numpy, is the one `sir_sppe` gives SPPE:

* theta = (beta, gamma) from the paper's prior, log beta ~ N(log 0.4, 0.5), log gamma ~
  N(log 0.125, 0.2) (variances), on theta's own scale (as `paper_prior`);
* the SIR with K = 10^6, (S, I) = (K - 1, 1) at t = 0, by tau-leaping with tau = 0.05 (Poisson
  infections of rate beta S I / K and recoveries of rate gamma I from the state at the start of
  the step, infections clamped to S, recoveries to I + infections; `SirTauLeap`), I(t)
  observed at the authors' L = 10 times t = 0, 17, ..., 153 (`SirSettings::paper`);
* the binomial infection-curve mechanism with n = m = 1000 (epsilon = nL/m = 10):
  s_l ~ Binomial(n, (I(t_l) + m)/(K + 2m)), divided by n (`BinomialCurve` through its noise
  map, `Proportions` in `sir_sppe`); M releases of each simulated curve (`--m`, as SPPE's
  `noise_draws`; sbi sees them as M pairs with the same theta);
* the observation: the paper's printed s_dp.

sbi: `NPE` (SNPE-C) with `num_atoms = 10` (the atomic loss of Greenberg et al. 2019 from round
2 on), `posterior_nn("maf", hidden_features=50, num_transforms=5)` (the MAF closest to
dpinfer's default `MafSettings`: 5 layers of 50 units; sbi's have tanh and random
permutations where ours have ReLU and reversals) or `--flow nsf` (the paper's spline flow:
8 layers, 2 residual blocks of 50, 10 bins, tail bound 5, as `benches/sbi_epoch.py`), or
`--flow maf-relu` (sbi's nflows MAF made like ours where nflows allows: ReLU, two hidden
layers per MADE, reversed order; `maf_like_ours`), the one-variable experiment of the README;
minibatches of 100, learning rate 5e-4, 5 % validation, patience 20 (the paper's and
SPPE's), at most `--max-epochs` per round (sbi's default: none); every other setting sbi's
default (no weight decay, gradient clipped to norm 5, z-scoring fitted on round 1's data,
all rounds' pairs kept, the flow continued between rounds, proposals and posterior draws
rejected outside the prior's support).

After every round: 1000 draws of the posterior given s_dp (from a forked torch RNG, so the
run's numbers do not depend on this evaluation), their mean +- sd, the MMD to the
importance-sampling reference of the exact posterior (`--exact FILE`, written by
`sir_sppe --exact-reference 8000 --exact-cache FILE`; Gaussian kernel, median heuristic on
200 points of each sample, V-statistic, as `sir_sppe`'s `mmd`, but with numpy's index draws:
`sir_sppe --score FILE DRAWS...` recomputes it with the Rust estimator's own bits from the
draws written with `--out DIR`), and the sampler's wall and CPU time so far (simulation,
training and proposal sampling; the evaluation excluded).

`--check-simulator FILE` compares this simulator with dpinfer's in distribution instead:
FILE holds curves and releases at theta* written by `sir_sppe --dump-releases FILE 2000`;
the same number are simulated here and compared coordinate by coordinate (Welch z of the
means, z of the log-sd ratio, two-sample Kolmogorov-Smirnov) and by the fraction of
epidemics that died out.

Needs a throw-away venv with sbi (0.27) and torch; not a dependency of the repository
(measured 2026-11-30: `pip install --no-deps torch==2.15.0 sbi==0.27.0`, then torch's and
sbi's other requirements, among them the CUDA libraries libtorch links against: 5.8 GB):

    python sbi_sir.py --exact exact.txt [--seed 1] [--flow maf|nsf] [--rounds 10] [--sims 1000]
        [--m 2] [--max-epochs 40] [--out DIR] [--threads 1]
    python sbi_sir.py --check-simulator releases.txt
"""

import argparse
import os
import sys
import time

import numpy as np

K = 1_000_000
N = 1000  # trials per release
M_PSEUDO = 1000  # the mechanism's pseudo-count m (epsilon = N * L / m = 10)
TAU = 0.05
TIMES = [17.0 * l for l in range(10)]  # t = 0, 17, ..., 153
S_DP = [0.0010, 0.0310, 0.6140, 0.2630, 0.1230, 0.0470, 0.0180, 0.0090, 0.0050, 0.0030]
THETA_STAR = (np.exp(-0.5), np.exp(-3.0))
PRIOR_LOC = (np.log(0.4), np.log(0.125))
PRIOR_SCALE = (np.sqrt(0.5), np.sqrt(0.2))


def sir_curves(theta, rng):
    """I(t_l) of the tau-leaping SIR at each row of `theta` (n x 2): n x 10 counts."""
    theta = np.asarray(theta, dtype=np.float64)
    beta_over_k, gamma = theta[:, 0] / K, theta[:, 1]
    s = np.full(len(theta), K - 1.0)
    i = np.ones(len(theta))
    out = np.empty((len(theta), len(TIMES)))
    t = 0.0
    for l, t_stop in enumerate(TIMES):
        steps = int(round((t_stop - t) / TAU))
        for _ in range(steps):
            inf = np.minimum(rng.poisson(beta_over_k * s * i * TAU), s)
            rec = np.minimum(rng.poisson(gamma * i * TAU), i + inf)
            s -= inf
            i += inf - rec
        t = t_stop
        out[:, l] = i
    return out


def release(curves, rng, m_pseudo=M_PSEUDO):
    """The binomial infection curve's release, as proportions of n."""
    p = (np.minimum(curves, K) + m_pseudo) / (K + 2 * m_pseudo)
    return rng.binomial(N, p) / N


def mmd(x, y, rng):
    """MMD (square root of the biased V-statistic) with the Gaussian kernel
    exp(-|a - b|^2 / (2 h^2)), h the median pairwise distance of 200 points drawn with
    replacement from each sample (the estimator of `sir_sppe`'s `mmd`)."""
    pts = np.concatenate([x[rng.integers(0, len(x), 200)], y[rng.integers(0, len(y), 200)]])
    d = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
    dists = np.sort(d[np.triu_indices(len(pts), 1)])
    h = dists[len(dists) // 2]

    def mean_k(a, b):
        d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
        return np.exp(-d2 / (2 * h * h)).mean()

    return np.sqrt(max(mean_k(x, x) + mean_k(y, y) - 2 * mean_k(x, y), 0.0))


def read_draws(path):
    """θ draws in `sir_sppe`'s cache format: a `# ...` line, then `beta gamma` per line."""
    with open(path) as f:
        head = f.readline().strip()
        rows = np.array([[float(v) for v in line.split()] for line in f if line.strip()])
    return head, rows


def write_draws(path, what, draws):
    with open(path, "w") as f:
        f.write(f"# {what}\n")
        for b, g in draws:
            f.write(f"{float(b)!r} {float(g)!r}\n")


def check_simulator(path, seed):
    """Equality in distribution against dpinfer's simulator at theta*."""
    from scipy import stats

    rows = np.loadtxt(path)
    n = len(rows)
    ours_curve, ours_rel = rows[:, :10], rows[:, 10:]
    rng = np.random.default_rng(seed)
    curve = sir_curves(np.tile(THETA_STAR, (n, 1)), rng)
    rel = release(curve, rng)
    print(f"{n} simulations at theta* from each simulator ({path}; numpy seed {seed})")
    print("| quantity | t | dpinfer mean (sd) | numpy mean (sd) | z (means) | z (log sd) | KS p |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for name, a, b in [("I(t)", ours_curve, curve), ("s_dp", ours_rel, rel)]:
        for l in range(10):
            x, y = a[:, l], b[:, l]
            se = np.sqrt(x.var(ddof=1) / n + y.var(ddof=1) / n)
            z_mean = (x.mean() - y.mean()) / se if se > 0 else 0.0
            # log of the sd ratio; its sd from each sample's kurtosis (delta method)
            kx = stats.kurtosis(x, fisher=False) if x.var() > 0 else 3.0
            ky = stats.kurtosis(y, fisher=False) if y.var() > 0 else 3.0
            if x.var() > 0 and y.var() > 0:
                z_sd = (0.5 * np.log(x.var(ddof=1) / y.var(ddof=1))) / (
                    0.5 * np.sqrt((kx - 1) / n + (ky - 1) / n)
                )
            else:
                z_sd = 0.0
            ks = stats.ks_2samp(x, y).pvalue
            worst = max(worst, abs(z_mean), abs(z_sd))
            print(
                f"| {name} | {TIMES[l]:.0f} | {x.mean():.5g} ({x.std():.4g}) | "
                f"{y.mean():.5g} ({y.std():.4g}) | {z_mean:+.2f} | {z_sd:+.2f} | {ks:.3f} |"
            )
    # extinct epidemics: I(t = 153) = 0 and the peak never above 100
    ext_a = np.mean(ours_curve.max(1) < 100)
    ext_b = np.mean(curve.max(1) < 100)
    pooled = (ext_a + ext_b) / 2
    z_ext = (ext_a - ext_b) / np.sqrt(max(pooled * (1 - pooled) * 2 / n, 1e-300))
    worst = max(worst, abs(z_ext))
    print(f"died out (peak < 100): dpinfer {ext_a:.4f}, numpy {ext_b:.4f}, z {z_ext:+.2f}")
    # 41 z-scores, each |z| > 4.5 with probability 6.8e-6 under equality: a false failure
    # of at most 41 * 6.8e-6 = 2.8e-4 (Bonferroni)
    ok = worst < 4.5
    print(f"largest |z| {worst:.2f}: {'equal in distribution at this power' if ok else 'DIFFER'}")
    return 0 if ok else 1


def maf_like_ours(batch_theta, batch_x):
    """sbi's `build_maf` (nflows) made like dpinfer's default MAF where nflows allows it: ReLU
    instead of tanh, two hidden layers per MADE instead of three (`num_blocks=1`), the
    target's order reversed between layers instead of a random permutation; still nflows'
    own context path (a ReLU'd linear map added to the first layer) and its near-zero
    initialisation of each MADE's output layer. The z-scoring as sbi's (round 1's data)."""
    import torch
    from nflows import flows, transforms
    from sbi.neural_nets.estimators import NFlowsFlow
    from sbi.neural_nets.net_builders.flow import _prepare_y_embedding, get_base_dist
    from sbi.utils.sbiutils import standardizing_transform
    from torch.nn import functional

    layers = [standardizing_transform(batch_theta, False)]
    for _ in range(5):
        layers += [
            transforms.MaskedAffineAutoregressiveTransform(
                features=2,
                hidden_features=50,
                context_features=batch_x.shape[1],
                num_blocks=1,
                use_residual_blocks=False,
                random_mask=False,
                activation=functional.relu,
            ),
            transforms.ReversePermutation(features=2),
        ]
    net = flows.Flow(
        transforms.CompositeTransform(layers),
        get_base_dist(2),
        _prepare_y_embedding("independent", batch_x, torch.nn.Identity()),
    )
    return NFlowsFlow(net, input_shape=batch_theta[0].shape, condition_shape=batch_x[0].shape)


def cpu_seconds():
    return time.process_time()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--flow", default="maf", choices=["maf", "maf-relu", "nsf"])
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--sims", type=int, default=1000)
    p.add_argument("--m", type=int, default=2, help="releases per simulated curve")
    p.add_argument("--max-epochs", type=int, default=2**31 - 1)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--validation", type=float, default=0.05)
    p.add_argument("--patience", type=int, default=20)
    p.add_argument("--atoms", type=int, default=10)
    p.add_argument("--exact", help="the exact posterior's draws (sir_sppe --exact-cache)")
    p.add_argument("--out", help="directory for every round's 1000 draws")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--check-simulator", help="sir_sppe --dump-releases file")
    a = p.parse_args()
    if a.check_simulator:
        sys.exit(check_simulator(a.check_simulator, a.seed))

    import torch
    from sbi.inference import NPE

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    prior = torch.distributions.Independent(
        torch.distributions.LogNormal(
            torch.tensor(PRIOR_LOC, dtype=torch.float32),
            torch.tensor(PRIOR_SCALE, dtype=torch.float32),
        ),
        1,
    )
    # sbi_epoch.py (beside this script) builds the per-epoch benchmark's MAF and NSF; the
    # same two estimators here.
    from sbi_epoch import estimator

    net = maf_like_ours if a.flow == "maf-relu" else estimator(a.flow)
    exact = read_draws(a.exact)[1] if a.exact else None
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    x_o = torch.tensor([S_DP], dtype=torch.float32)
    inference = NPE(prior=prior, density_estimator=net, show_progress_bars=False)
    print(
        f"sbi SNPE-C, torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
        f"flow {a.flow}, {a.rounds} rounds x {a.sims} simulations, M = {a.m}, "
        f"<= {a.max_epochs} epochs/round, batch {a.batch}, seed {a.seed}, "
        f"load average {os.getloadavg()}"
    )
    print(
        "| round | simulations | epochs | best val. loss | beta mean +- sd | gamma mean +- sd "
        "| MMD to exact | CPU s | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    proposal = prior
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    spent_wall = spent_cpu = 0.0  # the evaluation's, subtracted
    eval_rng = np.random.default_rng(99)
    for r in range(1, a.rounds + 1):
        if r == 1:
            theta = proposal.sample((a.sims,))
        else:
            theta = proposal.sample((a.sims,), show_progress_bars=False)
        curves = sir_curves(theta.numpy(), rng)
        x = release(np.repeat(curves, a.m, axis=0), rng)
        theta_rep = theta.repeat_interleave(a.m, dim=0)
        inference.append_simulations(
            theta_rep, torch.tensor(x, dtype=torch.float32), proposal=proposal
        )
        estimator = inference.train(
            num_atoms=a.atoms,
            training_batch_size=a.batch,
            learning_rate=5e-4,
            validation_fraction=a.validation,
            stop_after_epochs=a.patience,
            # sbi's loop runs while epoch <= max_num_epochs: max_num_epochs + 1 epochs
            max_num_epochs=a.max_epochs - 1,
        )
        posterior = inference.build_posterior(estimator).set_default_x(x_o)
        proposal = posterior
        wall = time.perf_counter() - wall0 - spent_wall
        cpu = cpu_seconds() - cpu0 - spent_cpu
        # evaluation (not timed): 1000 draws from a forked RNG
        t1, c1 = time.perf_counter(), cpu_seconds()
        with torch.random.fork_rng():
            torch.manual_seed(1_000_003 * a.seed + r)
            draws = posterior.sample((1000,), show_progress_bars=False).numpy().astype(np.float64)
        mean, sd = draws.mean(0), draws.std(0)
        value = mmd(draws, exact, eval_rng) if exact is not None else float("nan")
        summary = inference._summary
        epochs = summary["epochs_trained"][-1]
        best = summary["best_validation_loss"][-1]
        if a.out:
            write_draws(
                os.path.join(a.out, f"sbi-{a.flow}-seed{a.seed}-round{r:02}.txt"),
                f"sbi SNPE-C {a.flow}, seed {a.seed}, round {r}, M = {a.m}, "
                f"max epochs {a.max_epochs}",
                draws,
            )
        print(
            f"| {r} | {r * a.sims} | {epochs} | {best:.4f} | {mean[0]:.4f} +- {sd[0]:.4f} | "
            f"{mean[1]:.5f} +- {sd[1]:.5f} | {value:.4f} | {cpu:.1f} | {wall:.1f} |",
            flush=True,
        )
        spent_wall += time.perf_counter() - t1
        spent_cpu += cpu_seconds() - c1
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
