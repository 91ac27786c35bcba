"""Test helpers that ship with the package: a twin served over HTTPS and driven by the real kubectl."""

from __future__ import annotations

import shlex
from pathlib import Path

from aoi.twin.kubectl import Completed
from aoi.twin.serving import kubectl_runners, release_runners, serve


class Served:
    """A twin with its API server, kubeconfigs and a kubectl runner per role.

    Example:
        >>> served = Served(build_twin(["hotel-reservation"]), tmp_path)  # doctest: +SKIP
        >>> served.ok("get pods -n test-hotel-reservation")  # doctest: +SKIP
    """

    def __init__(self, twin, folder: Path):
        self.twin = twin
        self.server = serve(twin)
        self.kubeconfigs, self._runners = kubectl_runners(twin, self.server.url, folder)  # as episodes do

    def kubectl(self, command: str | list[str], role: str = "admin", stdin: bytes | None = None,
                timeout: float = 30.0) -> Completed:
        """Run kubectl (a shell-like string or an argv list) as a role."""
        args = shlex.split(command) if isinstance(command, str) else command
        return self._runners[role].run(args, stdin=stdin, timeout=timeout)

    def ok(self, command: str | list[str], role: str = "admin", stdin: bytes | None = None) -> str:
        """Run kubectl and return stdout, failing (AssertionError) on a non-zero exit."""
        done = self.kubectl(command, role, stdin)
        assert done.returncode == 0, f"kubectl {command} failed ({done.returncode}): {done.stderr}"
        return done.stdout

    def close(self) -> None:
        """Stop the server and remove the kubectl cache."""
        self.server.stop()
        release_runners(self._runners)
