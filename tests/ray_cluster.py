"""A simulated multi-node Ray cluster on this machine for tests: a head and a worker node, each its own raylet.

Use the fixture factory in a test module (one cluster per module; Ray is slow to start on this loaded machine):

    from tests.ray_cluster import module_cluster
    ray_cluster = module_cluster()          # a module-scoped fixture; the test process is connected to it

    def test_spread(ray_cluster):
        ...  # ray.remote work runs on both nodes; pass ray_cluster.address as --ray-address to code under test

or the context manager directly (`with two_node_cluster() as cluster: ...`). Without Ray installed the tests that
use it are skipped. Ray is always shut down on exit, also when a test fails.
"""

from __future__ import annotations

import contextlib
import os

import pytest

# Node settings kept tiny: two cores are shared by every test, and a test never needs the dashboard or usage stats.
NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
HEAD = {**NODE, "include_dashboard": False}


@contextlib.contextmanager
def two_node_cluster(head_cpus: int = 1, worker_cpus: int = 1, connect: bool = True):
    """Start a head and one worker node (separate raylets), connect this process if asked; shut all down on exit.

    Yields the `ray.cluster_utils.Cluster`; its `.address` is what `--ray-address` takes.
    """
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'aoi[swarm]'")
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no network traffic from tests
    cluster = Cluster(initialize_head=True, head_node_args={**HEAD, "num_cpus": head_cpus})
    try:
        cluster.add_node(**{**NODE, "num_cpus": worker_cpus})
        cluster.wait_for_nodes()
        if connect:
            if ray.is_initialized():  # an earlier test in this worker (Echo's swarm) left its own Ray connected
                ray.shutdown()
            ray.init(address=cluster.address)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def module_cluster(head_cpus: int = 1, worker_cpus: int = 1, connect: bool = True):
    """Return a module-scoped pytest fixture that yields a connected two-node cluster (see two_node_cluster)."""

    @pytest.fixture(scope="module")
    def ray_cluster():
        with two_node_cluster(head_cpus, worker_cpus, connect) as cluster:
            yield cluster

    return ray_cluster
