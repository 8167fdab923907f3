#!/usr/bin/env python3
"""Reads a results folder's samples.arrow and an exported pairs table with pyarrow and checks
them against samples.csv and the raw DPISHRD1 shard (a peer reader for the Arrow output; the
test suite itself checks the same with the Rust reader).

  python3 -m venv target/venv-arrow && target/venv-arrow/bin/pip install pyarrow pandas numpy
  cargo run --release -p dpinfer-cli -- run examples/rejection-toy.toml --out target/tmp/rt
  cargo run --release -p dpinfer-cli -- export target/tmp/rt/pairs-gen000.dpshard \
      --out target/tmp/rt/pairs.arrow --config examples/rejection-toy.toml
  target/venv-arrow/bin/python crates/cli/scripts/check_arrow_pyarrow.py target/tmp/rt
"""
import struct
import sys

import numpy as np
import pandas as pd
import pyarrow.ipc as ipc

d = sys.argv[1]
t = ipc.open_file(f"{d}/samples.arrow").read_all()
csv = pd.read_csv(f"{d}/samples.csv")
df = t.to_pandas()
assert list(df.columns) == list(csv.columns), (df.columns, csv.columns)
assert np.array_equal(df.values, csv.values), "samples.arrow differs from samples.csv"
print(f"samples.arrow: {t.num_rows} rows x {t.num_columns} columns, equal to samples.csv")

raw = open(f"{d}/pairs-gen000.dpshard", "rb").read()
hdr = struct.Struct("<8sQQIIIQQQII")
(magic, _h, _seed, _g, _s, _n, _total, _start, rows, tdim, odim) = hdr.unpack_from(raw)
assert magic == b"DPISHRD1"
vals = np.frombuffer(raw, dtype="<f8", count=rows * (tdim + odim), offset=hdr.size)
p = ipc.open_file(f"{d}/pairs.arrow").read_all()
assert np.array_equal(p.to_pandas().values, vals.reshape(rows, tdim + odim))
meta = {k.decode(): v.decode() for k, v in p.schema.metadata.items()}
print(f"pairs.arrow: {p.num_rows} rows x {p.num_columns} columns, equal to the shard; {meta}")
