"""``dpinfer.calibrate``: simulation-based calibration of a config's sampler, mechanism in the
loop, from Python — the summary of ``dpinfer calibrate``, shards that merge bit-identically
(in one folder, on a Dask LocalCluster and on a local Ray cluster, each with a worker killed
mid-shard), a calibrated exact kernel against a flagged over-confident chain, bad
arguments."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

import dpinfer
from dpinfer.errors import InvalidParameterError


def rwmh(scale: float = 0.2, iterations: int = 1500, burn_in: int = 300) -> dict:
    """Random-walk Metropolis (an exact kernel) on the conjugate Gaussian mean."""
    return {
        "model": {"name": "gaussian-mean", "n": 100, "prior_sd": 1.0},
        "sampler": {
            "kind": "rwmh",
            "iterations": iterations,
            "burn_in": burn_in,
            "proposal_scale": scale,
        },
        "seeds": {"run": 3},
    }


def test_summary_shards_and_the_cli_agree(tmp_path):
    one = tmp_path / "one"
    s = dpinfer.calibrate(rwmh(), replicates=24, out=one, alpha=0.01)
    assert s["summary"]["verdict"] == "Calibrated"
    assert s["verdict_line"].startswith("calibrated")
    assert s["parameters"] == ["mu"] and s["epsilon"] is None
    assert json.loads((one / "summary.json").read_text()) == s
    for f in ("ranks-mu.svg", "ecdf-mu.svg", "tarp.svg"):
        assert (one / f).read_text().rstrip().endswith("</svg>")

    # two shards into one folder: the first leaves replicates missing, the second summarises
    both = tmp_path / "both"
    assert dpinfer.calibrate(rwmh(), replicates=24, out=both, alpha=0.01, shard=0, shards=2) is None
    s2 = dpinfer.calibrate(rwmh(), replicates=24, out=both, alpha=0.01, shard=1, shards=2)
    assert s2 == s
    assert (both / "summary.json").read_bytes() == (one / "summary.json").read_bytes()

    exe = os.environ.get("DPINFER_BIN")
    if exe:  # the CLI writes the same summary.json, byte for byte
        cfg = tmp_path / "rwmh.toml"
        cfg.write_text(dpinfer.pipeline._native.config_toml(json.dumps(rwmh())))
        cli = tmp_path / "cli"
        r = subprocess.run(
            [exe, "calibrate", str(cfg), "--replicates", "24", "--alpha", "0.01", "--out", str(cli)],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        assert (cli / "summary.json").read_bytes() == (one / "summary.json").read_bytes()


def test_a_stuck_chain_is_flagged_over_confident(tmp_path):
    s = dpinfer.calibrate(rwmh(scale=0.001, iterations=60, burn_in=10), replicates=40, out=tmp_path, alpha=0.01)
    assert s["summary"]["verdict"] == "OverConfident"
    assert s["verdict_line"].startswith("WARNING: over-confident")


def test_bad_arguments_name_the_option(tmp_path):
    with pytest.raises(InvalidParameterError) as e:
        dpinfer.calibrate(rwmh(), replicates=0, out=tmp_path)
    assert e.value.name == "replicates"
    with pytest.raises(InvalidParameterError) as e:
        dpinfer.calibrate(rwmh(), replicates=20, out=tmp_path, shard=2, shards=2)
    assert e.value.name == "shard"
    with pytest.raises(InvalidParameterError) as e:
        dpinfer.calibrate(rwmh(), replicates=20, out=tmp_path, alpha=1.0)
    assert e.value.name == "alpha"
    # the cluster routes: no shard would leave every replicate to the calling process
    for shards in (0, -1, 1.5, True):
        with pytest.raises(InvalidParameterError) as e:
            dpinfer.calibrate_dask(None, rwmh(), replicates=20, shards=shards, out=tmp_path)
        assert e.value.name == "shards"
        with pytest.raises(InvalidParameterError) as e:
            dpinfer.calibrate_ray(rwmh(), replicates=20, shards=shards, out=tmp_path)
        assert e.value.name == "shards"


def shard_killing_its_worker_once(config, out, marker, shard, shards, replicates):
    """Runs a shard and, the first time, kills its worker process once the shard has stored
    two replicates (a crash mid-shard); the scheduler reruns the task on a fresh worker,
    which resumes from the stored replicates."""
    if shard == 0 and not os.path.exists(marker):
        open(marker, "w").close()
        file = pathlib.Path(out) / f"replicates-{shard:05}-of-{shards:05}.jsonl"
        args = dict(replicates=replicates, out=out, shard=shard, shards=shards, threads=1)
        threading.Thread(target=dpinfer.calibrate, args=(config,), kwargs=args, daemon=True).start()
        t0 = time.time()
        while time.time() - t0 < 60:
            if file.exists() and file.read_text().count("\n") >= 2:
                break
            time.sleep(0.005)
        os._exit(1)
    return dpinfer.calibrate(config, replicates=replicates, out=out, shard=shard, shards=shards, threads=1)


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed", reason="dask[distributed] is installed by the xtask")
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as c:
            yield c


def test_dask_shards_match_one_machine_also_with_a_killed_worker(client, tmp_path):
    config = rwmh(iterations=20_000, burn_in=1000)
    serial = dpinfer.calibrate(config, replicates=30, out=tmp_path / "serial")
    on_dask = dpinfer.calibrate_dask(client, config, replicates=30, shards=3, out=tmp_path / "dask")
    assert on_dask == serial

    out, marker = tmp_path / "killed", str(tmp_path / "marker")
    futures = [
        client.submit(shard_killing_its_worker_once, config, str(out), marker, i, 3, 30, pure=False)
        for i in range(3)
    ]
    client.gather(futures)
    assert os.path.exists(marker)  # a worker really died mid-shard
    s = dpinfer.calibrate(config, replicates=30, out=out)
    assert s == serial
    assert (out / "summary.json").read_bytes() == (tmp_path / "serial" / "summary.json").read_bytes()


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="ray is installed by the xtask")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
    )
    yield ray
    ray.shutdown()


def task_processes(title: bytes) -> list:
    """PIDs of the processes whose command line Ray set to ``title`` (a worker running it)."""
    pids = []
    for d in pathlib.Path("/proc").iterdir():
        try:
            if d.name.isdigit() and (d / "cmdline").read_bytes().startswith(title):
                pids.append(int(d.name))
        except OSError:
            pass
    return pids


def kill_a_worker_mid_shard(out: pathlib.Path, shards: int, per_shard: int, killed: list) -> None:
    """Once a shard file holds two replicates, SIGKILLs a worker process still running a
    ``calibrate`` task (Ray titles it ``ray::calibrate``) and records (pid, lines stored)."""
    files = [out / f"replicates-{i:05}-of-{shards:05}.jsonl" for i in range(shards)]
    t0 = time.time()
    while time.time() - t0 < 60 and not killed:
        lines = [f.read_text().count("\n") if f.exists() else 0 for f in files]
        if max(lines) >= 2:
            for pid in task_processes(b"ray::calibrate"):
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    continue
                killed.append((pid, lines))
                return
        time.sleep(0.005)


def test_ray_shards_match_one_machine_also_with_a_killed_worker(local_ray, tmp_path):
    config = rwmh(iterations=20_000, burn_in=1000)
    serial = dpinfer.calibrate(config, replicates=30, out=tmp_path / "serial")
    on_ray = dpinfer.calibrate_ray(config, replicates=30, shards=3, out=tmp_path / "ray")
    assert on_ray == serial
    assert (tmp_path / "ray" / "summary.json").read_bytes() == (tmp_path / "serial" / "summary.json").read_bytes()

    out, killed = tmp_path / "killed", []
    killer = threading.Thread(target=kill_a_worker_mid_shard, args=(out, 3, 10, killed), daemon=True)
    killer.start()
    s = dpinfer.calibrate_ray(config, replicates=30, shards=3, out=out)
    killer.join()
    assert killed, "no worker was killed"
    pid, lines = killed[0]
    assert sum(lines) < 30 and pid not in task_processes(b"ray::")  # killed mid-run, gone
    assert s == serial  # Ray reran the lost task, which resumed from its shard file
    assert (out / "summary.json").read_bytes() == (tmp_path / "serial" / "summary.json").read_bytes()
    assert sum(f.read_text().count("\n") for f in out.glob("replicates-*.jsonl")) == 30
