#!/usr/bin/env python3
"""Single-epoch tree aggregation (Event::TreeAggregation): dp_accounting 0.6.0 references for
tests/suite/tree_aggregation.rs.

Lines (comma separated):
  rdp,z,T,alpha,dp_accounting
      dp_accounting's RDP of SingleEpochTreeAggregationDpEvent(noise_multiplier=z,
      step_counts=T) at order alpha (RdpAccountant([alpha], REPLACE_SPECIAL) after one
      compose), i.e. alpha * ceil(log2(T + 1)) / (2 z^2).
  eps,z,T,count,delta,dp_accounting
      its get_epsilon(delta) after compose(event, count), on dp_accounting's default orders.

Run (a throw-away venv outside the repository):
  python3 -m venv /work/venv-events && /work/venv-events/bin/pip install dp-accounting==0.6.0 mpmath
  /work/venv-events/bin/python gen_tree_aggregation.py > tree_aggregation.txt
"""
import dp_accounting

REL = dp_accounting.NeighboringRelation.REPLACE_SPECIAL

print("# single-epoch tree aggregation: gen_tree_aggregation.py (dp_accounting 0.6.0)")
for z in [0.5, 1.0, 3.7]:
    for t in [1, 2, 3, 4, 7, 8, 100, 1023, 1024, 10**6]:
        for alpha in [1.5, 2.0, 10.0, 256.0]:
            acc = dp_accounting.rdp.RdpAccountant([alpha], REL)
            acc.compose(dp_accounting.SingleEpochTreeAggregationDpEvent(z, t))
            print(f"rdp,{z!r},{t},{alpha!r},{float(acc._rdp[0])!r}")
for z, t, count in [(1.0, 100, 1), (2.0, 1000, 10), (10.0, 10**4, 100), (0.8, 16, 5)]:
    acc = dp_accounting.rdp.RdpAccountant(neighboring_relation=REL)
    acc.compose(dp_accounting.SingleEpochTreeAggregationDpEvent(z, t), count)
    for delta in [1e-3, 1e-6]:
        print(f"eps,{z!r},{t},{count},{delta!r},{float(acc.get_epsilon(delta))!r}")
