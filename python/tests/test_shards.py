"""Shards of the public simulation step on a Dask LocalCluster (worker processes): the merged
table is bit-identical to the serial one, also when a worker is killed mid-run."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))
import dask_shards  # noqa: E402

distributed = pytest.importorskip("distributed", reason="dask[distributed] is installed by the xtask")


def shard_killing_its_worker_once(start, stop, marker):
    """Kills the worker process that first runs it (a crash mid-run); the scheduler
    reschedules the task on a fresh worker, which computes it normally."""
    if start == 5_000 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return dask_shards.shard(start, stop)


@pytest.fixture(scope="module")
def client():
    import cloudpickle

    cloudpickle.register_pickle_by_value(dask_shards)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as c:
            yield c


def test_dask_merge_is_bit_identical(client):
    n, size = 10_000, 1_500
    futures = [client.submit(dask_shards.shard, a, min(a + size, n), pure=False) for a in range(0, n, size)]
    th, y = dask_shards.merged(client.gather(futures))
    serial = dask_shards.shard(0, n)
    assert th.tobytes() == serial[0].tobytes() and y.tobytes() == serial[1].tobytes()


def test_killed_worker_run_completes_with_the_same_table(client, tmp_path):
    n, size = 10_000, 2_500
    marker = str(tmp_path / "killed")
    futures = [client.submit(shard_killing_its_worker_once, a, min(a + size, n), marker, pure=False)
               for a in range(0, n, size)]
    th, y = dask_shards.merged(client.gather(futures))
    assert os.path.exists(marker)  # a worker really died
    serial = dask_shards.shard(0, n)
    assert th.tobytes() == serial[0].tobytes() and y.tobytes() == serial[1].tobytes()
