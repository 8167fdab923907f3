#!/usr/bin/env python3
"""Repeat-and-select (Event::RepeatAndSelect; Papernot & Steinke 2022): references for
tests/suite/repeat_and_select.rs from dp_accounting 0.6.0's RdpAccountant on dpinfer's
DEFAULT_ORDERS (34 orders; the inner minimum of their Theorem 2 and the monotone envelope
then run over the same grid as ours).

Lines (comma separated):
  rdp,case,sigma,q,steps,mean,shape,r_1|r_2|...|r_34
      RepeatAndSelectDpEvent(event, mean, shape) with event = GaussianDpEvent(sigma)
      (q = 1, steps = 1) or SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)),
      steps); shape 'inf' is the Poisson distribution. The RDP values at the 34 orders.

Run (a throw-away venv outside the repository):
  /work/venv-events/bin/python gen_repeat_and_select.py > repeat_and_select.txt
"""
import math
import dp_accounting
from dp_accounting import dp_event as E
from dp_accounting.rdp import rdp_privacy_accountant as rdp

ORDERS = [1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
          13.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 28.0, 32.0, 40.0, 48.0, 56.0, 64.0, 80.0, 96.0,
          128.0, 256.0]

CASES = [
    (2.0, 1.0, 1, 10.0, 0.0),
    (2.0, 1.0, 1, 10.0, 1.0),
    (2.0, 1.0, 1, 10.0, 0.5),
    (2.0, 1.0, 1, 10.0, 3.0),
    (2.0, 1.0, 1, 10.0, math.inf),
    (4.0, 1.0, 1, 1.0, 1.0),
    (1.0, 0.01, 1000, 5.0, 1.0),
    (1.0, 0.01, 1000, 20.0, math.inf),
]
print("# repeat-and-select references: gen_repeat_and_select.py (dp_accounting 0.6.0)")
for i, (sigma, q, steps, mean, shape) in enumerate(CASES):
    g = E.GaussianDpEvent(sigma)
    inner = g if q == 1.0 else E.SelfComposedDpEvent(E.PoissonSampledDpEvent(q, g), steps)
    acc = rdp.RdpAccountant(ORDERS)
    acc.compose(E.RepeatAndSelectDpEvent(inner, mean, shape))
    vals = "|".join(repr(float(v)) for v in acc._rdp)
    print(f"rdp,{i},{sigma!r},{q!r},{steps},{mean!r},{'inf' if math.isinf(shape) else repr(shape)},{vals}")
