"""The installed package: import surface, stubs shipped, the example script runs."""

from __future__ import annotations

import pathlib
import runpy

import dpinfer

HERE = pathlib.Path(__file__).resolve().parent


def test_public_modules_and_stubs():
    import dpinfer.abc
    import dpinfer.accounting
    import dpinfer.errors
    import dpinfer.mcmc
    import dpinfer.mechanisms
    import dpinfer.priors  # noqa: F401

    pkg = pathlib.Path(dpinfer.__file__).parent
    assert (pkg / "_native.pyi").is_file() and (pkg / "py.typed").is_file()
    for name in dpinfer.accounting.__all__:
        assert getattr(dpinfer.accounting, name).__doc__, name


def test_quickstart_example_runs(capsys):
    runpy.run_path(str(HERE.parent / "examples" / "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "SVT-ABC" in out and "opacus-compatible" in out
