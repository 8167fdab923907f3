"""Privacy mechanisms with secure, exact samplers (``dpinfer-mechanisms``).

Every mechanism draws its noise from ChaCha20 seeded from the operating system's CSPRNG
(``noise_seed=None``, the default). ``noise_seed=<int>`` makes releases reproducible and is
**not private** (anyone who knows the seed can subtract the noise) — use it in tests only.
Every ``release`` returns ``(value, event)``; compose the event into an accountant from
:mod:`dpinfer.accounting`.

Values are clamped to the public bounds ``[lo, hi]`` and rounded to a public grid before
noise is added; the reported cost uses the grid-rounded sensitivity (never below the declared
one), so the certified ε/ρ is an upper bound of the true cost. The neighbouring relation of
each guarantee is the relation the declared sensitivity was computed for.

* :class:`Laplace` — pure ε-DP (reported as ``Event.pure``), exact discrete Laplace noise.
* :class:`Gaussian` — ρ-zCDP (reported as ``Event.zcdp``), exact discrete Gaussian noise.
* :class:`BinomialCurve` — Xiong et al. Prop. 4, ε = n·ln(1+1/m) per release (replace-one).
* :class:`SparseVector` — AboveThreshold with c positives, ε = (c+1)Δ′/b (2cΔ′/b with
  resampling), charged in full.
"""

from __future__ import annotations

from ._native import BinomialCurve, Gaussian, Laplace, SparseVector

__all__ = ["Laplace", "Gaussian", "BinomialCurve", "SparseVector"]
