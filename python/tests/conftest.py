"""Shared fixtures: the peers (opacus' RDP analysis, dp_accounting) loaded without their heavy
dependencies.

opacus' package ``__init__`` imports torch; its RDP analysis module
(``opacus/accountants/analysis/rdp.py``) needs only numpy and scipy, so it is loaded by file
path. The xtask installs opacus with ``--no-deps`` for exactly this reason.
"""

from __future__ import annotations

import importlib.util
import pathlib

import pytest


def _load_opacus_rdp():
    spec = importlib.util.find_spec("opacus")
    if spec is None or spec.origin is None:
        return None
    path = pathlib.Path(spec.origin).parent / "accountants" / "analysis" / "rdp.py"
    mod_spec = importlib.util.spec_from_file_location("_opacus_rdp_analysis", path)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def opacus_rdp():
    mod = _load_opacus_rdp()
    if mod is None:
        pytest.fail("opacus is not installed (the xtask installs it with --no-deps)")
    return mod


@pytest.fixture(scope="session")
def dp_accounting():
    try:
        import dp_accounting  # noqa: F401
        from dp_accounting.rdp import rdp_privacy_accountant
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError as e:  # pragma: no cover
        pytest.fail(f"dp_accounting is not installed: {e}")
    import dp_accounting as dpa

    return dpa
