"""Config-driven runs from Python (:func:`dpinfer.run`): the same library and results-folder
ledger as the ``dpinfer`` CLI.

* a fixed-noise-seed SVT-ABC run reproduces itself from its folder and a changed config in
  that folder is refused (:class:`~dpinfer.errors.LedgerRefusedError`);
* the Python samples equal the CLI's ``samples.csv`` bit for bit (the xtask builds the CLI
  and passes its path in ``DPINFER_BIN``);
* non-private rejection ABC on the Gaussian-mean model against its exact conjugate posterior;
* two threads into one folder draw once; a DP MCMC run is once-only;
* a user's own model (``[model] kind = "command"``, the Python reference worker; a dying
  worker is a ModelError);
* the sharded steps (simulate two shards, merge them, private step; and three SMC-ABC
  generations with smc_step) give the whole run's samples;
* bad input: an unknown key is named, arguments are checked.
"""

from __future__ import annotations

import csv
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dpinfer
from dpinfer.errors import DpinferError, InvalidParameterError, LedgerRefusedError

REPO = pathlib.Path(__file__).resolve().parents[2]
OWN_MODEL = REPO / "examples" / "own-model"

# Gaussian mean, n = 100 embedded observations, RFF-MMD, SVT-ABC (ABCDP), FIXED noise seed
# (reproducible, labelled NOT private in the ledger: a test setting).
SVT = """
[model]
name = "gaussian-mean"
n = 100

[distance]
kind = "rff-mmd"
features = 50

[sampler]
kind = "svt-abc"
pairs = 2000
epsilon_abc = 0.1
c = 20

[privacy]
epsilon = {eps}

[seeds]
run = 5
noise = 777
"""


def svt(eps: float = 5.0) -> str:
    return SVT.format(eps=eps)


# The five-weight uniform mixture, RFF-MMD, soft-ABC at (2, 1e-6), FIXED noise seed (a test
# setting): weighted samples.
SOFT_MIXTURE = """
[model]
name = "uniform-mixture"
n = {n}

[distance]
kind = "rff-mmd"
features = {features}

[sampler]
kind = "soft-abc"
pairs = {pairs}
epsilon_abc = 0.05
clip = 0.3

[privacy]
epsilon = 2.0
delta = 1e-6

[seeds]
run = 11
noise = 4242
"""


def soft_mixture(n: int, features: int, pairs: int) -> str:
    return SOFT_MIXTURE.format(n=n, features=features, pairs=pairs)


def cli() -> pathlib.Path:
    exe = os.environ.get("DPINFER_BIN")
    if not exe:
        pytest.skip("DPINFER_BIN is not set (cargo xtask python builds the CLI and sets it)")
    path = pathlib.Path(exe)
    assert path.is_file(), f"DPINFER_BIN={exe} does not exist"
    return path


def read_samples_csv(path: pathlib.Path):
    """samples.csv as (names, float64 values, weights or None): Rust writes shortest
    round-trip decimals, so float() recovers every bit."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    values = np.array([[float(v) for v in r] for r in body], dtype=np.float64).reshape(
        len(body), len(header)
    )
    if header[-1] == "weight":
        return header[:-1], values[:, :-1], values[:, -1]
    return header, values, None


def test_svt_run_from_text_reproduces_and_refuses_a_changed_config(tmp_path):
    out = tmp_path / "results"
    r = dpinfer.run(text=svt(), out=out, threads=1)
    assert isinstance(r, dpinfer.RunResult)
    assert (r.model, r.sampler, r.names) == ("gaussian-mean", "svt-abc", ["mu"])
    assert r.samples.dtype == np.float64 and r.samples.ndim == 2 and r.samples.shape[1] == 1
    assert 1 <= len(r) <= 20  # at most c = 20 acceptances
    assert r.weights is None and not r.reproduced
    assert r.out == os.fspath(out)
    # the ledger: the session's exact cost rounded up to the next float, never above the budget
    led = r.ledger
    assert set(led) >= {
        "epsilon", "delta", "accountant", "conversion", "neighbouring", "mechanism", "noise",
        "claim",
    }
    assert 5.0 * (1 - 1e-9) <= led["epsilon"] <= 5.0 and led["delta"] == 0.0
    assert "NOT private" in led["noise"]  # a fixed noise seed is labelled
    assert isinstance(led["claim"], dict) and r.claim_text
    assert r.privacy is r.ledger and r.diagnostics is r.facts
    assert all(isinstance(k, str) and isinstance(v, float) for k, v in r.facts.items())
    assert (out / "private-step.json").is_file() and (out / "release.json").is_file()
    # conveniences shared with AbcResult (unweighted: no weight column, plain mean)
    assert r.mean()[0] == pytest.approx(r.samples[:, 0].mean(), rel=1e-12)
    df = r.to_pandas()
    assert list(df.columns) == ["mu"] and len(df) == len(r)

    # the same config again in the same folder: the stored release, bit for bit, no new noise
    again = dpinfer.run(text=svt(), out=out, threads=2)
    assert again.reproduced
    assert np.array_equal(again.samples, r.samples)
    assert again.ledger == r.ledger

    # another config (another ε) in that folder: refused, the folder is untouched
    before = (out / "release.json").read_bytes()
    with pytest.raises(LedgerRefusedError, match="different input"):
        dpinfer.run(text=svt(eps=4.0), out=out)
    assert issubclass(LedgerRefusedError, DpinferError)
    assert (out / "release.json").read_bytes() == before


def test_kernel_version_keyword(tmp_path):
    """``kernel_version=`` overrides ``[distance] kernel_version``: 1 is the default (the same
    release), 2 is recorded (fact and ledger) and is another input for a folder of version 1;
    other numbers, and the keyword on an l2 distance, are named config errors."""
    base = dpinfer.run(text=svt(), out=tmp_path / "v1", threads=1)
    assert base.facts["kernel_version"] == 1.0
    one = dpinfer.run(text=svt(), out=tmp_path / "v1b", threads=1, kernel_version=1)
    assert np.array_equal(one.samples, base.samples) and one.ledger == base.ledger
    two = dpinfer.run(text=svt(), out=tmp_path / "v2", threads=1, kernel_version=2)
    assert two.facts["kernel_version"] == 2.0
    assert "kernel version 2" in two.ledger["mechanism"]
    assert "kernel version" not in base.ledger["mechanism"]
    with pytest.raises(LedgerRefusedError, match="different input"):
        dpinfer.run(text=svt(), out=tmp_path / "v1", kernel_version=2)
    with pytest.raises(InvalidParameterError) as e:
        dpinfer.run(text=svt(), out=tmp_path / "bad", kernel_version=3)
    assert e.value.name == "distance.kernel_version"
    l2 = svt().replace('kind = "rff-mmd"\nfeatures = 50', 'kind = "l2"\nclip = 1.0')
    assert 'kind = "l2"' in l2
    with pytest.raises(InvalidParameterError, match="kernel_version"):
        dpinfer.run(text=l2, out=tmp_path / "l2", kernel_version=2)
    assert not (tmp_path / "bad").exists() and not (tmp_path / "l2").exists()


def test_concurrent_runs_into_one_folder_draw_once(tmp_path):
    """Two threads run the same config into one folder at once (the GIL is released during a
    run): the folder's lock serialises them, one draws the release and the other reproduces
    it."""
    from concurrent.futures import ThreadPoolExecutor

    out = tmp_path / "shared"
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(lambda _: dpinfer.run(text=svt(), out=out, threads=1), range(2))
    assert sorted([a.reproduced, b.reproduced]) == [False, True]
    assert np.array_equal(a.samples, b.samples) and a.ledger == b.ledger


def test_samples_do_not_depend_on_the_thread_count(tmp_path):
    one = dpinfer.run(text=svt(), out=tmp_path / "one", threads=1)
    two = dpinfer.run(text=svt(), out=tmp_path / "two", threads=2)
    assert not one.reproduced and not two.reproduced
    assert np.array_equal(one.samples, two.samples) and one.ledger == two.ledger


def test_config_as_a_mapping_equals_the_text(tmp_path):
    """A config given as a dict of tables (numpy scalars, pathlib paths) runs as the same
    TOML text: same samples, same ledger; a value with no TOML form is refused."""
    np.savetxt(tmp_path / "obs.csv", np.random.default_rng(4).normal(0.3, 1.0, 60))
    text = svt().replace("[distance]", '[data]\npath = "obs.csv"\n\n[distance]')
    mapping = {
        "model": {"name": "gaussian-mean", "n": np.int64(100)},
        "data": {"path": pathlib.Path("obs.csv")},
        "distance": {"kind": "rff-mmd", "features": 50},
        "sampler": {"kind": "svt-abc", "pairs": 2000, "epsilon_abc": np.float64(0.1), "c": 20},
        "privacy": {"epsilon": 5.0},
        "seeds": {"run": 5, "noise": 777},
    }
    a = dpinfer.run(text=text, base_dir=tmp_path, out=tmp_path / "text")
    b = dpinfer.run(mapping, base_dir=tmp_path, out=tmp_path / "mapping")
    assert not b.reproduced and len(b) > 0
    assert np.array_equal(a.samples, b.samples) and a.ledger == b.ledger
    # the same input: the mapping run reproduces the text run's release in its folder
    assert dpinfer.run(mapping, base_dir=tmp_path, out=tmp_path / "text").reproduced
    with pytest.raises(InvalidParameterError):
        dpinfer.run({"model": {"name": None}})
    with pytest.raises(TypeError):
        dpinfer.run({"model": {"name": object()}})
    with pytest.raises(InvalidParameterError, match="bandwith"):
        dpinfer.run({**mapping, "distance": {"kind": "rff-mmd", "bandwith": 1.0}})


def test_dp_mcmc_run_is_once_only(tmp_path):
    """A DP MCMC chain cannot be reproduced without running it again: dpinfer.run marks the
    folder's once-only ledger released when the chain is done (Finished.close) and refuses
    any rerun into that folder."""
    text = """
[model]
name = "gaussian-mean"
n = 1000

[sampler]
kind = "dp-penalty"
iterations = 500
burn_in = 100
proposal_scale = 0.05
ratio_clip = 5.0
tau = 0.5
accounting = "pld"

[privacy]
epsilon = 4.0
delta = 1e-5

[seeds]
run = 3
noise = 5
"""
    out = tmp_path / "mcmc"
    r = dpinfer.run(text=text, out=out)
    assert r.sampler == "dp-penalty" and not r.reproduced and len(r) > 0
    assert 0.0 < r.ledger["epsilon"] <= 4.0 and r.ledger["delta"] == 1e-5
    assert "split_rhat_mu" in r.facts and "iterations" in r.facts
    assert json.loads((out / "private-step.json").read_text())["status"] == "released"
    with pytest.raises(LedgerRefusedError, match="MCMC"):
        dpinfer.run(text=text, out=out)


def test_python_run_equals_the_cli_bit_for_bit(tmp_path):
    exe = cli()
    # a config file with a relative data path (resolved against the config's folder)
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    rng = np.random.default_rng(3)
    np.savetxt(conf_dir / "obs.csv", rng.normal(0.7, 1.0, 80), fmt="%.17g")
    text = svt().replace("[distance]", '[data]\npath = "obs.csv"\n\n[distance]')
    config = conf_dir / "run.toml"
    config.write_text(text)

    cli_out = tmp_path / "cli"
    subprocess.run(
        [os.fspath(exe), "run", os.fspath(config), "--out", os.fspath(cli_out)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    names, values, weights = read_samples_csv(cli_out / "samples.csv")

    r = dpinfer.run(config, out=tmp_path / "py")
    assert not r.reproduced
    assert names == r.names and weights is None and r.weights is None
    assert values.shape == r.samples.shape and len(r) > 0
    assert np.array_equal(values, r.samples)  # exact float64 equality
    summary = json.loads((cli_out / "summary.json").read_text())
    assert summary["privacy"]["epsilon"] == r.ledger["epsilon"]
    assert summary["privacy"]["claim"] == r.ledger["claim"]
    assert summary["warnings"] == r.warnings
    assert summary["quantile_levels"] == r.quantile_levels
    # the posterior summary: the same library numbers, exactly
    assert len(summary["parameters"]) == len(r.marginals) == 1
    for cli_m, m in zip(summary["parameters"], r.marginals):
        assert cli_m["name"] == m["name"]
        assert [cli_m["mean"], cli_m["sd"], *cli_m["quantiles"]] == [
            m["mean"], m["sd"], *m["quantiles"]
        ]
    assert list(r.summary().index) == r.names
    # every diagnostics table the CLI wrote as CSV, value for value
    for f in cli_out.glob("*.csv"):
        if f.name == "samples.csv":
            continue
        columns, values = r.tables[f.stem]
        with open(f, newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == columns
        assert np.array_equal(
            np.array([[float(v) for v in row] for row in rows[1:]]).reshape(values.shape),
            values,
            equal_nan=True,
        )

    # The CLI in Python's folder reproduces Python's release (one ledger format).
    subprocess.run(
        [os.fspath(exe), "run", os.fspath(config), "--out", os.fspath(tmp_path / "py")],
        check=True,
        capture_output=True,
    )
    summary = json.loads((tmp_path / "py" / "summary.json").read_text())
    assert summary["reproduced_release"] is True


def test_rejection_abc_matches_the_exact_conjugate_posterior(tmp_path):
    """Non-private rejection ABC on one observation x of N(μ, σ²) with the Euclidean
    distance |y − x|: as the tolerance shrinks the ABC posterior tends to the exact
    posterior N(μ_n, τ_n²), τ_n² = 1/(1/s₀² + 1/σ²), μ_n = τ_n² (m₀/s₀² + x/σ²)
    (conjugate normal; prior N(m₀, s₀²)). Keeping the k = 400 nearest of T = 40 000 pairs
    gives a tolerance h ≈ k/(2 T p(x)) ≈ 0.04, whose effect on the mean and variance
    (O(h²): ≤ 1e-3 of τ_n²) is far below the Monte Carlo error.

    Checks, at the fixed run seed: |mean − μ_n| ≤ 4 τ_n/√k (two-sided normal tail 6.3e-5)
    and (k−1) s²/τ_n² inside the χ²_{k−1} central 1 − 2e-4 interval; false-failure rate
    ≤ 2.7e-4 for an independent seed."""
    from scipy import stats

    m0, s0, sigma, x = 0.0, 3.0, 1.0, 1.3
    (tmp_path / "x.csv").write_text(f"# one observation\n{x}\n")
    text = f"""
[model]
name = "gaussian-mean"
sigma = {sigma}
prior_mean = {m0}
prior_sd = {s0}

[data]
path = "x.csv"

[distance]
kind = "l2"

[sampler]
kind = "rejection"
pairs = 40000
accept = 400

[seeds]
run = 11
"""
    r = dpinfer.run(text=text, base_dir=tmp_path, out=tmp_path / "out")
    k = 400
    assert r.samples.shape == (k, 1)
    assert math.isinf(r.ledger["epsilon"]) and r.ledger["claim"] is None  # not private
    tau2 = 1.0 / (1.0 / s0**2 + 1.0 / sigma**2)
    mu_n = tau2 * (m0 / s0**2 + x / sigma**2)
    s = r.samples[:, 0]
    z = (s.mean() - mu_n) / math.sqrt(tau2 / k)
    assert abs(z) <= 4.0, (s.mean(), mu_n, z)
    chi = (k - 1) * s.var(ddof=1) / tau2
    lo, hi = stats.chi2.ppf([1e-4, 1 - 1e-4], k - 1)
    assert lo <= chi <= hi, (s.var(ddof=1), tau2)


def test_own_model_command_worker_from_python(tmp_path):
    """A user's own simulator in Python (examples/own-model/gaussian_worker.py, run by the
    pipeline's worker pool) from dpinfer.run: the privacy ledger equals the built-in
    Gaussian-mean model's under the same settings (the privacy claim depends on the
    settings, not on who simulates), and the run reproduces from its folder."""
    pytest.importorskip(
        "pyarrow", reason="the reference worker needs pyarrow (the xtask installs it)"
    )
    # the worker runs under this interpreter (which has numpy and pyarrow), not PATH's python3
    command = json.dumps([sys.executable, "gaussian_worker.py"])
    own = (OWN_MODEL / "gaussian-python.toml").read_text()
    own = own.replace('command = ["python3", "gaussian_worker.py"]', f"command = {command}")
    assert sys.executable in own
    builtin = (OWN_MODEL / "builtin-gaussian.toml").read_text()
    # smaller and reproducible: 1000 pairs, a fixed noise seed
    fast = {"pairs = 4000": "pairs = 1000", 'noise = "os"': "noise = 99"}
    for a, b in fast.items():
        assert a in own and a in builtin
        own, builtin = own.replace(a, b), builtin.replace(a, b)

    r = dpinfer.run(text=own, base_dir=OWN_MODEL, out=tmp_path / "own", threads=1)
    assert (r.model, r.sampler, r.names) == ("command", "svt-abc", ["mu"])
    assert 1 <= len(r) <= 50 and np.all(np.isfinite(r.samples))
    b = dpinfer.run(text=builtin, base_dir=OWN_MODEL, out=tmp_path / "builtin", threads=1)
    assert r.ledger == b.ledger
    again = dpinfer.run(text=own, base_dir=OWN_MODEL, out=tmp_path / "own", threads=1)
    assert again.reproduced and np.array_equal(again.samples, r.samples)


def test_failing_worker_is_a_model_error(tmp_path):
    """A command model whose worker dies raises ModelError, whose one message carries the
    worker's own failure (the row, the attempts and its exit status)."""
    own = (OWN_MODEL / "gaussian-python.toml").read_text()
    dying = json.dumps([sys.executable, "-c", "import sys; sys.exit(3)"])
    own = own.replace('command = ["python3", "gaussian_worker.py"]', f"command = {dying}")
    assert dying in own
    with pytest.raises(dpinfer.errors.ModelError, match="external simulator") as e:
        dpinfer.run(text=own, base_dir=OWN_MODEL, out=tmp_path / "out")
    assert "exit status: 3" in str(e.value)


def test_sharded_steps_equal_the_whole_run(tmp_path):
    """simulate_shard × 2 → merge_shards → private_step gives the samples of one dpinfer.run
    of the same config (same pairs table, same fixed noise seed); merge refuses to overwrite."""
    whole = dpinfer.run(text=svt(), out=tmp_path / "whole")
    shards = tmp_path / "shards"
    shards.mkdir()
    ranges = [
        dpinfer.simulate_shard(text=svt(), shard=i, shards=2, out=shards)[1:] for i in range(2)
    ]
    assert ranges == [(0, 1000), (1000, 2000)]
    merged = tmp_path / "pairs.dpshard"
    assert dpinfer.merge_shards(shards, out=merged) == 2000
    # the merged table is byte-identical to the one the whole run kept
    assert merged.read_bytes() == (tmp_path / "whole" / "pairs-gen000.dpshard").read_bytes()
    with pytest.raises(DpinferError, match="already exists"):
        dpinfer.merge_shards(shards, out=merged)
    r = dpinfer.private_step(text=svt(), pairs=merged, out=tmp_path / "private")
    assert np.array_equal(r.samples, whole.samples)
    assert r.ledger == whole.ledger


def test_sharded_smc_abc_generations_equal_the_whole_run(tmp_path):
    """A sharded SMC-ABC from Python (per generation: simulate_shard × 2 with the previous
    population → merge_shards → smc_step) writes the same population files, byte for byte,
    as one dpinfer.run; the last population is the run's posterior."""
    text = (REPO / "examples" / "sir-smc-sharded.toml").read_text()
    for a, b in {"pairs = 4000": "pairs = 600", "particles = 400": "particles = 60",
                 "generations = 5": "generations = 3"}.items():
        assert a in text
        text = text.replace(a, b)
    whole = dpinfer.run(text=text, out=tmp_path / "whole")
    assert whole.sampler.startswith("smc-abc") and whole.weights is not None
    columns, gens = whole.tables["smc-generations"]
    assert columns == ["generation", "tolerance", "ess", "proposals"] and gens.shape == (3, 4)
    assert "weighted samples" in repr(whole) and "reproduced=False" in repr(whole)
    pops = tmp_path / "pops"
    prev = None
    for g in range(3):
        shards = tmp_path / f"gen{g}"
        for i in range(2):
            dpinfer.simulate_shard(
                text=text, shard=i, shards=2, out=shards, generation=g, population=prev
            )
        merged = tmp_path / f"m{g}.dpshard"
        assert dpinfer.merge_shards(shards, out=merged, generation=g) == 600
        p = dpinfer.smc_step(text=text, pairs=merged, generation=g, population=prev, out=pops)
        assert isinstance(p, dpinfer.pipeline.Population) and p.generation == g
        assert p.samples.shape == (60, whole.samples.shape[1]) and p.weights.shape == (60,)
        name = f"population-gen{g:03}.json"
        assert pathlib.Path(p.file) == pops / name
        assert (pops / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), g
        # the run's generations table (the CLI's smc-generations.csv) holds the same numbers
        assert list(gens[g]) == [g, p.tolerance, p.ess, p.proposals]
        prev = p.file
    assert np.array_equal(p.samples, whole.samples)
    assert np.array_equal(p.weights, whole.weights)


def test_bad_config_key_is_named():
    bad = svt().replace("c = 20", "c = 20\nepsilon_abcc = 0.1")
    with pytest.raises(InvalidParameterError, match="epsilon_abcc") as e:
        dpinfer.run(text=bad)
    assert e.value.name == "epsilon_abcc"
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    "old, new, key",
    [
        ("epsilon = 5.0", "epsilon = -5.0", "privacy.epsilon"),  # checked when read
        ("epsilon = 5.0", "", "privacy.epsilon"),  # required by a private sampler
        ('kind = "svt-abc"', 'kind = "svt"', "sampler.kind"),
        ("n = 100", "n = 100\nsigma = -1.0", "model.sigma"),
        ('name = "gaussian-mean"', 'name = "gauss"', "model.name"),  # checked when built
    ],
)
def test_bad_config_values_are_named(tmp_path, old, new, key):
    text = svt()
    assert old in text
    with pytest.raises(InvalidParameterError, match=key.replace(".", r"\.")) as e:
        dpinfer.run(text=text.replace(old, new, 1), out=tmp_path / "out")
    assert e.value.name == key
    assert not (tmp_path / "out").exists()  # nothing written


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError):
        dpinfer.run()
    with pytest.raises(TypeError):
        dpinfer.run(tmp_path / "a.toml", text=svt())
    with pytest.raises(TypeError):
        dpinfer.run(svt().encode())
    with pytest.raises(TypeError):
        dpinfer.run({"model": {}}, text=svt())
    (tmp_path / "a.toml").write_text(svt())
    with pytest.raises(InvalidParameterError, match="base_dir"):
        dpinfer.run(tmp_path / "a.toml", base_dir=tmp_path)
    with pytest.raises(InvalidParameterError):
        dpinfer.run(tmp_path / "missing.toml")
    # a data file that does not exist: found when the run loads the data, nothing written
    text = svt().replace("[distance]", '[data]\npath = "nope.csv"\n\n[distance]')
    with pytest.raises(DpinferError, match="nope.csv"):
        dpinfer.run(text=text, base_dir=tmp_path, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_parquet_data_file_without_the_feature_says_how_to_enable_it(tmp_path):
    """The wheel is built without the pipeline's `parquet` feature: a `.parquet` data file is
    refused with one error naming the rebuild, and nothing is written. (CI's Rust tests build
    the CLI with the feature, so this is where the feature-off path is checked.)"""
    fixture = REPO / "crates" / "cli" / "tests" / "data" / "obs-snappy.parquet"
    (tmp_path / "obs.parquet").write_bytes(fixture.read_bytes())
    text = svt().replace("[distance]", '[data]\npath = "obs.parquet"\n\n[distance]')
    with pytest.raises(DpinferError, match="built without Parquet support") as e:
        dpinfer.run(text=text, base_dir=tmp_path, out=tmp_path / "out")
    assert "--features parquet" in str(e.value)
    assert not (tmp_path / "out").exists()


def test_readme_example_runs(tmp_path, monkeypatch):
    """The "Config-driven runs" example of python/README.md, run as written (in a scratch
    working directory: it writes results/gaussian)."""
    text = (REPO / "python" / "README.md").read_text()
    section = text.split("## Config-driven runs", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    r = scope["r"]
    assert r.sampler == "svt-abc" and r.samples.shape[1] == 1
    assert 5.0 * (1 - 1e-9) <= r.ledger["epsilon"] <= 5.0 and "OS CSPRNG" in r.ledger["noise"]
    assert (tmp_path / "results" / "gaussian" / "private-step.json").is_file()


def test_pipeline_api_is_documented_and_reachable_from_the_package():
    import dpinfer.pipeline as P

    for name in P.__all__:
        assert getattr(P, name).__doc__, name
    for name in ("run", "RunResult", "simulate_shard", "merge_shards", "private_step", "smc_step"):
        assert getattr(dpinfer, name) is getattr(P, name) and name in dpinfer.__all__
    assert dpinfer.errors.LedgerRefusedError.__doc__
    assert "LedgerRefusedError" in dpinfer.errors.__all__


def test_model_datasets_passes_through_the_config_mapping(tmp_path):
    # `[model] datasets` (ABCDP §6.3): the config mapping reaches the pipeline unchanged, so
    # the averaged clipped l2 design runs from Python with Δ = C/n in the ledger and facts
    # (replace-one of one whole data set), and a bad count is an InvalidParameterError whose
    # name is the key.
    config = {
        "model": {"name": "gaussian-mean", "n": 1, "datasets": 200},
        "distance": {"kind": "l2", "clip": 5.0},
        "sampler": {"kind": "svt-abc", "pairs": 500, "epsilon_abc": 1.4, "c": 10},
        "privacy": {"epsilon": 1.0},
        "seeds": {"run": 2021, "noise": 7},
    }
    r = dpinfer.run(config, out=tmp_path / "many", threads=1)
    assert r.facts["sensitivity"] == pytest.approx(5.0 / 200, rel=1e-12)
    assert r.facts["sensitivity"] >= 5.0 / 200
    assert r.ledger["neighbouring"] == "replace-one"
    assert "averaged over the model.datasets" in r.ledger["mechanism"]
    assert r.samples.shape[1] == 1 and 1 <= r.samples.shape[0] <= 10
    config["model"]["datasets"] = 0
    with pytest.raises(InvalidParameterError, match="model.datasets") as e:
        dpinfer.run(config, out=tmp_path / "bad")
    assert e.value.name == "model.datasets"
