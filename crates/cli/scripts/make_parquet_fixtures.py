#!/usr/bin/env python3
"""Writes the Parquet fixtures of crates/cli/tests/external.rs (the `parquet` feature) with
pyarrow, an independent Parquet writer: the 50 observations y_i = 1 + ((37 i mod 17) - 8)/8,
i = 0..49, of the test's obs.csv, as

  tests/data/obs-snappy.parquet  one float64 column "y", snappy (the pandas / R arrow default)
  tests/data/obs-zstd.parquet    one float32 column "y", zstd (the polars default)

Usage: python3 crates/cli/scripts/make_parquet_fixtures.py   (needs pyarrow)
"""
import os

import pyarrow as pa
import pyarrow.parquet as pq

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")
y = [1.0 + ((i * 37 % 17) - 8) / 8 for i in range(50)]
pq.write_table(
    pa.table({"y": pa.array(y, pa.float64())}),
    os.path.join(here, "obs-snappy.parquet"),
    compression="snappy",
)
pq.write_table(
    pa.table({"y": pa.array(y, pa.float32())}),
    os.path.join(here, "obs-zstd.parquet"),
    compression="zstd",
)
