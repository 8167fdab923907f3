"""MCMC on your own model (``dpinfer-mcmc``): random-walk Metropolis–Hastings, the DP
penalty algorithm (Yildirim & Ermiş 2019; thesis §3.1, Theorems 6–7), Barker and DP Barker,
HMC and DP HMC.

The model is a prior (:mod:`dpinfer.priors` or any object with ``sample``/``log_pdf``) and a
vectorised per-row log-likelihood ``log_lik(theta) -> (n,)`` with ``theta`` of shape (1, d):
ℓ_j(θ) for every data row j. It is evaluated once per θ (current and proposed) and the
sampler reads rows from it.

Every function is a thin front end to the library's run (``dpinfer_mcmc::run::Run``, the
driver the ``dpinfer`` CLI uses): the chain loop, the iteration cap from the budget, burn-in,
the privacy claim and the diagnostics are the library's, so the same kernel, seeds and model
give the same draws and the same ε as the library and the CLI. The public randomness is the
library's chain stream (``SimStream::with_domain(seed, CHAIN_DOMAIN, 0)``).

Privacy (``epsilon``/``delta`` given): replace-one neighbours with public n; each per-row
log-likelihood ratio is clipped to ±clip·‖θ′−θ‖₂ and Gaussian noise of standard deviation
τ·n^α·(2T·clip·‖θ′−θ‖₂) is added (noise from the OS CSPRNG unless ``noise_seed``, which is
NOT private). The run stops at the largest iteration count the (ε, δ) target allows under
``accounting`` ("pld": Theorem 7, exact Gaussian PLD; "zcdp": Theorem 6); a chain cut short
by its budget discards at most half of what it ran as burn-in, and a budget that allows
fewer than two iterations raises ``BudgetExhausted``. The released chain is (ε, δ)-DP with
the reported ``privacy["epsilon"]`` ≤ ε; ``privacy["claim"]`` is the library's claim (events,
accountant, conversion, relation) in words and ``privacy["claim_epsilon"]`` its ε.

``chains`` (every sampler; default 1) runs that many chains from ``init``, each on its own
public stream (chain i: ``SimStream::with_domain(seed, CHAIN_DOMAIN, i)``) and, when
private, its own noise CSPRNG (OS-seeded, or ``noise_seed + i``). The chains read the same
data, so they **compose**: they share the one (ε, δ) target, the budget's iteration count
for that many chains is split evenly between them (``max_iterations`` is the total) and
``privacy["epsilon"]`` is the composition over every iteration of every chain.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from . import _native
from .abc import AbcResult

__all__ = ["McmcResult", "rwmh", "dp_penalty", "barker", "dp_barker", "hmc", "dp_hmc"]


class McmcResult(AbcResult):
    """Draws of the chains (``samples`` (m, d) after burn-in, chain 0 first, uniform
    ``weights``), the privacy claim (``None`` for the exact samplers) and diagnostics:
    ``iterations`` (summed over the chains) and ``chain_iterations``, ``chain`` (each draw's
    chain), the pooled acceptance rate and clip fraction, the noise sd of every iteration, and
    per coordinate the library's bulk ``ess`` and split-``rhat`` (over the chains; over the two
    halves of the kept draws of one chain)."""


def _run(prior, log_lik, n, init, names, kernel=None, **kw) -> McmcResult:
    init = np.ascontiguousarray(np.asarray(init, dtype=np.float64).reshape(-1))
    if kernel is None or kernel is _native.barker:
        step = kw.pop("step_size")
        kw["step_size"] = [float(s) for s in np.broadcast_to(np.asarray(step, dtype=np.float64), init.shape)]
        r = (kernel or _native.penalty)(prior, log_lik, int(n), init, **kw)
    else:
        r = kernel(prior, log_lik, kw.pop("grad_log_lik"), int(n), init, **kw)
    m = len(r["samples"])
    privacy = None
    if r["epsilon"] is not None:
        privacy = {
            "epsilon": r["epsilon"],
            "delta": r["delta"],
            "max_iterations": r["max_iterations"],
            "relation": "replace_one (public n)",
            "claim": r["claim"],
            "claim_epsilon": r["claim_epsilon"],
            "accountant": r["accountant"],
        }
    diag = {k: r[k] for k in ("iterations", "chain_iterations", "chain", "acceptance_rate",
                              "clip_fraction", "noise_sd", "ess", "rhat")}
    w = np.full(m, 1.0 / m) if m else np.zeros(0)
    return McmcResult(r["samples"], w, privacy, diag, names)


def rwmh(
    prior,
    log_lik: Callable[[np.ndarray], np.ndarray],
    n: int,
    init,
    *,
    iterations: int,
    step_size,
    proposal: str = "gaussian",
    temperature: float = 1.0,
    clip: Optional[float] = None,
    burn_in: int = 0,
    chains: int = 1,
    seed: int = 0,
    names: Optional[Sequence[str]] = None,
) -> McmcResult:
    """Exact random-walk Metropolis–Hastings on p(X|θ)^T p(θ) (optionally with per-row
    ratio clipping, no noise). **Not private.**"""
    return _run(prior, log_lik, n, init, names, iterations=iterations, step_size=step_size,
                proposal_kind=proposal, temperature=temperature, clip=clip, burn_in=burn_in,
                chains=chains,
                seed=seed)


def dp_penalty(
    prior,
    log_lik: Callable[[np.ndarray], np.ndarray],
    n: int,
    init,
    *,
    epsilon: float,
    delta: float,
    clip: float,
    tau: float,
    step_size,
    iterations: Optional[int] = None,
    n_exponent: float = 0.5,
    accounting: str = "pld",
    proposal: str = "gaussian",
    temperature: float = 1.0,
    burn_in: int = 0,
    chains: int = 1,
    seed: int = 0,
    noise_seed: Optional[int] = None,
    names: Optional[Sequence[str]] = None,
) -> McmcResult:
    """The DP penalty sampler; runs ``min(iterations, allowed)`` iterations (all the budget
    allows when ``iterations`` is None). See the module docstring for the privacy claim."""
    return _run(prior, log_lik, n, init, names,
                iterations=(2**64 - 1) if iterations is None else iterations,
                step_size=step_size, proposal_kind=proposal, temperature=temperature,
                clip=clip, tau=tau, n_exponent=n_exponent, epsilon=epsilon, delta=delta,
                accounting=accounting, burn_in=burn_in, chains=chains, seed=seed,
                noise_seed=noise_seed)


def barker(
    prior,
    log_lik: Callable[[np.ndarray], np.ndarray],
    n: int,
    init,
    *,
    iterations: int,
    step_size,
    proposal: str = "gaussian",
    temperature: float = 1.0,
    burn_in: int = 0,
    chains: int = 1,
    seed: int = 0,
    names: Optional[Sequence[str]] = None,
) -> McmcResult:
    """Exact MCMC with the Barker acceptance test on p(X|θ)^T p(θ). **Not private.**"""
    return _run(prior, log_lik, n, init, names, kernel=_native.barker, iterations=iterations,
                step_size=step_size, proposal_kind=proposal, temperature=temperature,
                burn_in=burn_in, chains=chains, seed=seed)


def dp_barker(
    prior,
    log_lik: Callable[[np.ndarray], np.ndarray],
    n: int,
    init,
    *,
    epsilon: float,
    delta: float,
    batch: int,
    temperature: float,
    step_size,
    iterations: Optional[int] = None,
    proposal: str = "gaussian",
    burn_in: int = 0,
    chains: int = 1,
    seed: int = 0,
    noise_seed: Optional[int] = None,
    names: Optional[Sequence[str]] = None,
) -> McmcResult:
    """DP Barker (Heikkilä et al. 2019; thesis §3.2, Theorem 8). Privacy: replace-one
    neighbours, public n; each iteration reads a batch of ``batch`` rows drawn without
    replacement (WBK19 amplification), tempered per-row ratios are clipped to √|B|/n₀
    (T = n₀/n = ``temperature``) and the Barker test's noise (total variance 2) is drawn from
    the OS CSPRNG unless ``noise_seed`` (NOT private). The run stops at the largest
    iteration count whose RDP bound meets (ε, δ)."""
    return _run(prior, log_lik, n, init, names, kernel=_native.barker,
                iterations=(2**64 - 1) if iterations is None else iterations,
                step_size=step_size, proposal_kind=proposal, temperature=temperature,
                batch=batch, epsilon=epsilon, delta=delta, burn_in=burn_in, chains=chains,
                seed=seed,
                noise_seed=noise_seed)


def hmc(
    prior,
    log_lik: Callable[[np.ndarray], np.ndarray],
    grad_log_lik: Callable[[np.ndarray], np.ndarray],
    n: int,
    init,
    *,
    iterations: int,
    step_size: float,
    leapfrog_steps: int,
    inv_mass: Optional[Sequence[float]] = None,
    temperature: float = 1.0,
    burn_in: int = 0,
    chains: int = 1,
    seed: int = 0,
    names: Optional[Sequence[str]] = None,
) -> McmcResult:
    """Exact HMC. ``grad_log_lik(theta (1, d)) -> (n, d)`` are the per-row gradients; the
    prior is ``priors.Normal(mean, sd)`` (one mean and sd) or an object with ``sample``,
    ``log_pdf`` and ``grad_log_pdf(theta (1, d)) -> (d,)``. **Not private.**"""
    return _run(prior, log_lik, n, init, names, kernel=_native.hmc, grad_log_lik=grad_log_lik,
                iterations=iterations, step_size=step_size, leapfrog_steps=leapfrog_steps,
                inv_mass=None if inv_mass is None else [float(m) for m in inv_mass],
                temperature=temperature, burn_in=burn_in, chains=chains, seed=seed)


def dp_hmc(
    prior,
    log_lik: Callable[[np.ndarray], np.ndarray],
    grad_log_lik: Callable[[np.ndarray], np.ndarray],
    n: int,
    init,
    *,
    epsilon: float,
    delta: float,
    ratio_clip: float,
    grad_clip: float,
    tau_l: float,
    tau_g: float,
    step_size: float,
    leapfrog_steps: int,
    iterations: Optional[int] = None,
    inv_mass: Optional[Sequence[float]] = None,
    temperature: float = 1.0,
    accounting: str = "pld",
    reuse_gradient: bool = True,
    burn_in: int = 0,
    chains: int = 1,
    seed: int = 0,
    noise_seed: Optional[int] = None,
    names: Optional[Sequence[str]] = None,
) -> McmcResult:
    """DP HMC (thesis §5.2; Algorithm 3 with ``reuse_gradient``). Privacy: replace-one
    neighbours, public n; per-row log-likelihood ratios clipped to ±ratio_clip·‖θ′−θ‖₂ and
    per-row gradients to L2 norm grad_clip, Gaussian noise with scales τ_l, τ_g (OS CSPRNG
    unless ``noise_seed``, NOT private); the run stops at the largest iteration count the
    (ε, δ) target allows under ``accounting`` (kL + 1 gradient releases with reuse,
    k(L + 1) without)."""
    return _run(prior, log_lik, n, init, names, kernel=_native.hmc, grad_log_lik=grad_log_lik,
                iterations=(2**64 - 1) if iterations is None else iterations,
                step_size=step_size, leapfrog_steps=leapfrog_steps,
                inv_mass=None if inv_mass is None else [float(m) for m in inv_mass],
                temperature=temperature, ratio_clip=ratio_clip, grad_clip=grad_clip,
                tau_l=tau_l, tau_g=tau_g, epsilon=epsilon, delta=delta, accounting=accounting,
                reuse_gradient=reuse_gradient, burn_in=burn_in, chains=chains, seed=seed,
                noise_seed=noise_seed)
