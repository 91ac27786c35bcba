"""Fixtures for fault injector tests: private twins served over HTTPS, a `Kube` client each, simulated-time budgets."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from aoi.kube import Kube
from aoi.twin import build_twin
from aoi.twin.controllers.chaos import ChaosController
from aoi.twin.kubectl import KubectlRunner
from aoi.twin.serving import serve, write_kubeconfigs


class Cluster:
    """A twin (with the chaos controller), its server, an admin `Kube` bound to the twin's clock, and kubectl."""

    def __init__(self, apps: tuple[str, ...], folder: Path):
        self.twin = build_twin(list(apps), seed=0)
        if "chaos" not in self.twin.controllers:
            self.twin.add_controller(ChaosController())
        self.server = serve(self.twin)
        self.kubeconfigs = write_kubeconfigs(self.twin, self.server.url, folder / "kubeconfigs")
        self.kube = Kube.from_kubeconfig(self.kubeconfigs["admin"], clock=self.twin.clock.now)
        self._kubectl = KubectlRunner(self.twin, self.kubeconfigs["admin"], folder / "kubecache")

    def kubectl(self, command: str) -> str:
        """Run kubectl as admin and return stdout, failing the test on a non-zero exit."""
        done = self._kubectl.run(command.split())
        assert done.returncode == 0, f"kubectl {command}: {done.stderr}"
        return done.stdout

    @contextlib.contextmanager
    def budget(self, seconds: float):
        """Let watches pull the twin's manual clock forward by up to `seconds` while the block runs."""
        with self.twin.lock:
            self.twin.sim_deadline = self.twin.clock.now() + seconds
        try:
            yield
        finally:
            with self.twin.lock:
                self.twin.sim_deadline = None

    def pods(self, namespace: str, service_label: str, value: str) -> list[dict]:
        """Return the twin's pods with one label value, sorted by name."""
        return self.twin.list("pods", namespace,
                              lambda p: (p["metadata"].get("labels") or {}).get(service_label) == value)

    def close(self) -> None:
        """Stop the server."""
        self.server.stop()


@pytest.fixture
def make_cluster(tmp_path):
    """Return a factory of private served twins, closed after the test."""
    made: list[Cluster] = []

    def make(*apps: str) -> Cluster:
        made.append(Cluster(apps, tmp_path / f"c{len(made)}"))
        return made[-1]

    yield make
    for cluster in made:
        cluster.close()


@pytest.fixture(scope="module")
def all_apps(tmp_path_factory):
    """One served twin with every app, for tests that only read (target validation)."""
    cluster = Cluster(("hotel-reservation", "social-network", "astronomy-shop"), tmp_path_factory.mktemp("all"))
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def social_net(tmp_path_factory):
    """One served social-network twin for a module whose tests each change a different object."""
    cluster = Cluster(("social-network",), tmp_path_factory.mktemp("social"))
    yield cluster
    cluster.close()
