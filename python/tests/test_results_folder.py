"""One results folder for both front ends: ``dpinfer run CONFIG --out A`` and
``dpinfer.run(CONFIG, out=B)`` leave the same files with the same bytes.

The pipeline library writes the whole folder for both (``dpinfer_pipeline::folder``):
samples (CSV, Arrow, Parquet where built), ``summary.json``, the diagnostics CSVs, the
SVG plots and ``report.html`` (issue 32: one page with everything, deterministic), beside the ledger, the stored release and the pairs table. Nothing in these files
carries a timestamp or an absolute path; the only file left out of the comparison is the
folder's lock file ``.dpinfer.lock`` (it holds the id of the process that locked it).

Before the writer moved into the pipeline, Python's folder lacked ``samples.csv``,
``samples.arrow``, ``summary.json`` and the plots, so these tests failed.
"""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

import dpinfer

from test_run import cli, soft_mixture, svt

# Not compared: the lock file names the process holding it.
EXCLUDED = {".dpinfer.lock"}

CONFIGS = {
    # one parameter, a true θ, unweighted samples (fixed noise seed: a test setting)
    "svt-gaussian-mean": svt(),
    # five parameters (pair plot), weighted samples, a soft-ABC weights table
    "soft-uniform-mixture": soft_mixture(n=500, features=50, pairs=1000),
}


def files(d: pathlib.Path):
    return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and p.name not in EXCLUDED}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_cli_and_python_write_the_same_results_folder(tmp_path, name):
    exe = cli()
    config = tmp_path / "run.toml"
    config.write_text(CONFIGS[name])
    cli_out = tmp_path / "cli"
    done = subprocess.run(
        [os.fspath(exe), "run", os.fspath(config), "--out", os.fspath(cli_out)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
        text=True,
    )
    py_out = tmp_path / "py"
    r = dpinfer.run(config, out=py_out)
    a, b = files(cli_out), files(py_out)
    written = len(a)
    # `samples.parquet` is written only by builds with the `parquet` feature: the CLI that CI
    # tests has it (the workspace test build), the wheel does not; every other file must match
    if "samples.parquet" not in b:
        a.pop("samples.parquet", None)
    assert sorted(a) == sorted(b)
    for must in ("samples.csv", "samples.arrow", "summary.json", "release.json", "report.html"):
        assert must in b, must
    assert any(n.startswith("marginal-") and n.endswith(".svg") for n in b)
    if len(r.names) > 1:
        assert "pairs.svg" in b
    for n in sorted(a):
        assert a[n] == b[n], f"{n} differs between the CLI's and Python's folder"
    # the CLI's count of the files it wrote is the folder's (the lock file aside)
    assert f"({written} files)" in done.stdout
