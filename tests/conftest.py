"""Shared fixtures: twins served over HTTPS and driven by the real kubectl."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from aoi.twin import build_twin
from aoi.twin.catalog import load_app
from aoi.twin.kubectl import Completed, KubectlRunner
from aoi.twin.serving import serve, write_kubeconfigs


class Served:
    """A twin with its API server, kubeconfigs and a kubectl runner per role."""

    def __init__(self, twin, folder: Path):
        self.twin = twin
        self.server = serve(twin)
        self.kubeconfigs = write_kubeconfigs(twin, self.server.url, folder / "kubeconfigs")
        self.cache = folder / "kubecache"  # a fresh discovery cache per served twin
        self._runners = {role: KubectlRunner(twin, path, self.cache) for role, path in self.kubeconfigs.items()}

    def kubectl(self, command: str | list[str], role: str = "admin", stdin: bytes | None = None,
                timeout: float = 30.0) -> Completed:
        """Run kubectl (a shell-like string or an argv list) as a role."""
        args = shlex.split(command) if isinstance(command, str) else command
        return self._runners[role].run(args, stdin=stdin, timeout=timeout)

    def ok(self, command: str | list[str], role: str = "admin", stdin: bytes | None = None) -> str:
        """Run kubectl and return stdout, failing the test on a non-zero exit."""
        done = self.kubectl(command, role, stdin)
        assert done.returncode == 0, f"kubectl {command} failed ({done.returncode}): {done.stderr}"
        return done.stdout

    def close(self) -> None:
        """Stop the server."""
        self.server.stop()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory) -> Served:
    """All three apps, shared by tests that only read."""
    served = Served(build_twin(seed=0), tmp_path_factory.mktemp("cluster"))
    yield served
    served.close()


@pytest.fixture(scope="session")
def settled_hotel():
    """A HotelReservation twin built once per session, never served: `hotel` hands out clones of it."""
    return build_twin(["hotel-reservation"], seed=0)


@pytest.fixture
def hotel(settled_hotel, tmp_path) -> Served:
    """A private HotelReservation twin for tests that change things (a clone: same state as a fresh build)."""
    shared = [load_app("hotel-reservation"), load_app("platform")]
    served = Served(settled_hotel.clone(shared), tmp_path)
    yield served
    served.close()
