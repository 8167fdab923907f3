"""``dpinfer.worker.serve``: a user's simulator as a ``kind = "command"`` worker without
protocol code (issue 31, item 7 of the issue; item 4 of the work).

* the protocol, driven from the test with pyarrow: answers in order with the values the
  user's function returns, the reject marker, ``print`` kept off the protocol stream;
* the summarise request for the observed raw data, answered by the same summary function;
* answers of the wrong shape or with NaN stop the worker with a clear error on stderr;
* end to end through :func:`dpinfer.run`: raw data (a CSV with a header line) and one summary
  function to a private SVT-ABC posterior, the summary's user-declared sensitivity labelled.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dpinfer

pa = pytest.importorskip("pyarrow", reason="a worker needs pyarrow (the xtask installs it)")

WORKER = """
import numpy as np
from dpinfer.worker import serve

N = 50

def simulate(theta, seeds):
    print("this line must not reach the protocol stream")
    y = np.stack([t[0] + t[1] * np.random.default_rng(int(s)).standard_normal(N)
                  for t, s in zip(theta, seeds)])
    return y, theta[:, 1] <= 0.0

def summarise(y):
    return np.column_stack([y.mean(axis=1), y.std(axis=1, ddof=1)])

serve(simulate, {summarise})
"""


def _script(tmp_path, name="worker.py", summarise="summarise", body=WORKER):
    p = tmp_path / name
    p.write_text(textwrap.dedent(body).replace("{summarise}", summarise))
    return p


def _exchange(script, schema, batches):
    """Runs ``script`` as a worker, sends ``batches`` under ``schema``; returns (answers,
    stderr, exit code)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as w:
        for b in batches:
            w.write_batch(b)
    p = subprocess.run(
        [sys.executable, str(script)],
        input=sink.getvalue().to_pybytes(),
        capture_output=True,
        timeout=120,
    )
    answers = list(pa.ipc.open_stream(p.stdout)) if p.returncode == 0 else []
    return answers, p.stderr.decode(), p.returncode


def _requests(outputs, thetas, seeds):
    schema = pa.schema(
        [("row", pa.uint64()), ("seed", pa.uint64()), ("mu", pa.float64()), ("sigma", pa.float64())],
        metadata={"dpinfer.protocol": "1", "dpinfer.outputs": str(outputs)},
    )
    thetas = np.asarray(thetas, dtype=float)
    batch = pa.record_batch(
        [
            pa.array(np.arange(len(seeds), dtype=np.uint64) + 10),
            pa.array(np.asarray(seeds, dtype=np.uint64)),
            pa.array(thetas[:, 0]),
            pa.array(thetas[:, 1]),
        ],
        schema=schema,
    )
    return schema, batch


def _expected(theta, seed, n=50):
    return theta[0] + theta[1] * np.random.default_rng(seed).standard_normal(n)


def test_serve_answers_simulations_with_rejects_and_a_clean_stdout(tmp_path):
    thetas = [[1.0, 2.0], [0.5, -1.0], [-2.0, 0.5]]
    seeds = [7, 8, 2**63 + 5]
    schema, batch = _requests(50, thetas, seeds)
    answers, err, code = _exchange(_script(tmp_path, summarise="None"), schema, [batch, batch])
    assert code == 0, err
    assert "must not reach the protocol" in err  # print() went to stderr
    assert len(answers) == 2
    for a in answers:
        assert a.column("row").to_pylist() == [10, 11, 12]
        assert a.column("reject").to_pylist() == [False, True, False]
        out = a.column("output").to_pylist()
        for i in (0, 2):
            np.testing.assert_array_equal(out[i], _expected(thetas[i], seeds[i]))


def test_serve_summarises_simulations_and_the_observed_data_by_one_function(tmp_path):
    script = _script(tmp_path)
    thetas = [[1.0, 2.0], [3.0, 0.5]]
    schema, batch = _requests(2, thetas, [4, 5])
    answers, err, code = _exchange(script, schema, [batch])
    assert code == 0, err
    out = answers[0].column("output").to_pylist()
    for i, s in enumerate([4, 5]):
        y = _expected(thetas[i], s)
        np.testing.assert_allclose(out[i], [y.mean(), y.std(ddof=1)], rtol=0, atol=0)
    # the summarise request: one row holding the observed raw values
    data = np.linspace(-1.0, 3.0, 37)
    sschema = pa.schema(
        [("row", pa.uint64()), ("data", pa.list_(pa.float64()))],
        metadata={
            "dpinfer.protocol": "1",
            "dpinfer.outputs": "2",
            "dpinfer.request": "summarise",
        },
    )
    sbatch = pa.record_batch(
        [pa.array([0], type=pa.uint64()), pa.array([data.tolist()], type=pa.list_(pa.float64()))],
        schema=sschema,
    )
    answers, err, code = _exchange(script, sschema, [sbatch])
    assert code == 0, err
    assert answers[0].column("row").to_pylist() == [0]
    np.testing.assert_array_equal(
        answers[0].column("output").to_pylist()[0], [data.mean(), data.std(ddof=1)]
    )
    # without a summarise function the request is refused with a clear message
    _, err, code = _exchange(_script(tmp_path, "plain.py", summarise="None"), sschema, [sbatch])
    assert code != 0 and "no summarise function" in err


def test_serve_refuses_wrong_shapes_and_nan(tmp_path):
    schema, batch = _requests(50, [[1.0, 2.0], [0.0, 1.0]], [1, 2])
    short = WORKER.replace("return y, theta[:, 1] <= 0.0", "return y[:, :10]")
    _, err, code = _exchange(_script(tmp_path, "short.py", "None", short), schema, [batch])
    assert code != 0 and "simulate returned shape (2, 10), expected (2, 50)" in err
    nan = WORKER.replace("return y, theta[:, 1] <= 0.0", "y[1, 3] = np.nan\n    return y")
    _, err, code = _exchange(_script(tmp_path, "nan.py", "None", nan), schema, [batch])
    assert code != 0 and "non-finite value in row 1" in err


def test_raw_data_and_one_summary_function_to_a_private_posterior(tmp_path):
    """A new user's path: the model and its summary in Python (serve), the raw observations
    in a CSV with a header, a private SVT-ABC run from dpinfer.run — no protocol code, no
    precomputed summary. The summary's sensitivity is the user's declaration, labelled so."""
    _script(tmp_path)
    rng = np.random.default_rng(3)
    obs = 1.0 + 2.0 * rng.standard_normal(50)
    (tmp_path / "obs.csv").write_text("y\n" + "".join(f"{float(v)!r}\n" for v in obs))
    command = json.dumps([sys.executable, "worker.py"])
    config = f"""
[model]
name = "my-normal"
kind = "command"
command = {command}
outputs = 2

[model.summary]
kind = "simulator"
observed = "raw"
sensitivity = 0.2
relation = "replace-one"

[[model.prior]]
name = "mu"
dist = "uniform"
lo = -5.0
hi = 5.0

[[model.prior]]
name = "sigma"
dist = "uniform"
lo = 0.1
hi = 5.0

[data]
path = "obs.csv"

[distance]
kind = "l2"
clip = 2.0

[sampler]
kind = "svt-abc"
pairs = 3000
epsilon_abc = 0.5
c = 20
clip = 2.0

[privacy]
epsilon = 20.0

[seeds]
run = 5
noise = 17
"""
    r = dpinfer.run(text=config, base_dir=tmp_path, out=tmp_path / "out", threads=1)
    assert (r.model, r.sampler, r.names) == ("command", "svt-abc", ["mu", "sigma"])
    assert 1 <= len(r) <= 20 and np.all(np.isfinite(r.samples))
    assert r.ledger["epsilon"] <= 20.0 * (1 + 1e-12)
    assert "USER-DECLARED" in json.dumps(r.ledger)
    # the accepted θ sit near the data's summary (mean 1, sd 2, noisy SVT threshold)
    assert abs(float(np.mean(r.samples[:, 0])) - obs.mean()) < 1.0
