"""Serve a twin over HTTPS: the server, the kubeconfigs for each role, and the wall-clock ticker."""

from __future__ import annotations

import base64
import gc
import json
import threading
import time
from pathlib import Path

from aoi import runtime_dirs
from aoi.protocols import CREDENTIAL_ROLES
from aoi.twin.api import tls
from aoi.twin.api.server import TwinServer
from aoi.twin.kubectl import KubectlRunner, share_discovery
from aoi.twin.twin import WALL_PAUSE_HOOKS, Twin

TICK_SECONDS = 0.2
YOUNG_GC_SECONDS = 0.1  # wall seconds between the ticker's young collections during a long catch-up


def kubeconfig(url: str, role: str, token: str, namespace: str = "default") -> dict:
    """Return a kubeconfig for one role, carrying the twin's CA so TLS is verified."""
    ca = base64.b64encode(tls.certificate()[0]).decode()
    return {"apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": "aoi-twin", "cluster": {"server": url, "certificate-authority-data": ca}}],
            "users": [{"name": f"aoi-{role}", "user": {"token": token}}],
            "contexts": [{"name": f"aoi-twin-{role}",
                          "context": {"cluster": "aoi-twin", "user": f"aoi-{role}", "namespace": namespace}}],
            "current-context": f"aoi-twin-{role}"}


def write_kubeconfigs(twin: Twin, url: str, folder: Path) -> dict[str, Path]:
    """Write admin.yaml, probe.yaml and executor.yaml (0600) into folder (made 0700 if new); return role -> path.

    The files are JSON, which is YAML too: kubectl and the Python client read them alike, and json writes one in
    0.03 ms where PyYAML took 0.9 ms (every episode reset writes three).

    Example:
        >>> import yaml
        >>> twin = type("T", (), {"credentials": dict.fromkeys(CREDENTIAL_ROLES, "t0k3n")})()
        >>> paths = write_kubeconfigs(twin, "https://127.0.0.1:6443", runtime_dirs.private_dir("doctest") / "kube")
        >>> oct(paths["probe"].stat().st_mode & 0o777), yaml.safe_load(paths["probe"].read_text())["users"]
        ('0o600', [{'name': 'aoi-probe', 'user': {'token': 't0k3n'}}])
        >>> oct(paths["probe"].parent.stat().st_mode & 0o777)
        '0o700'
    """
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    paths = {}
    for role in CREDENTIAL_ROLES:
        text = json.dumps(kubeconfig(url, role, twin.credentials[role]), indent=1)
        paths[role] = runtime_dirs.write_private(folder / f"{role}.yaml", text.encode())
    return paths


def kubectl_runners(twin: Twin, url: str, folder: Path) -> tuple[dict[str, Path], dict[str, KubectlRunner]]:
    """Write each role's kubeconfig into folder/kubeconfigs; return them and a kubectl runner per role.

    The runners share one kubectl cache, in memory where the machine has a memory-backed folder (kubectl rewrites
    it on every call: see runtime_dirs.memory_root); its discovery is the process's one copy
    (kubectl.share_discovery). release_runners removes it, and so does the process's exit.
    """
    paths = write_kubeconfigs(twin, url, folder / "kubeconfigs")
    cache = runtime_dirs.private_dir("kubecache", root=runtime_dirs.memory_root())
    share_discovery(cache, url)
    return paths, {role: KubectlRunner(twin, path, cache) for role, path in paths.items()}


def release_runners(runners: dict[str, KubectlRunner]) -> None:
    """Remove the kubectl cache that kubectl_runners made for these runners."""
    for folder in {runner.cache_dir for runner in runners.values()}:
        runtime_dirs.remove(folder)


class Ticker:
    """Follow the wall clock: advance the twin's simulated time in small steps (interactive use only).

    With `young_gc` (the default) the ticker also keeps garbage collections short, so no API call waits on one:
    after each step, and every YOUNG_GC_SECONDS of a long catch-up (through cluster.WALL_PAUSE_HOOKS, with the
    lock let go), it collects the young generations and freezes what survived (gc.freeze), so a full
    collection never walks the whole twin (at 10,000 pods one took 0.9 s). The price: reference cycles that die
    after being frozen wait until stop(), which unfreezes them for the next full collection.
    """

    def __init__(self, twin: Twin, young_gc: bool = True):
        self.twin, self.young_gc = twin, young_gc
        self._stop = threading.Event()
        self._last_gc = 0.0
        self._origin = (time.monotonic(), twin.clock.now())
        self._thread = threading.Thread(target=self._run, name="twin-ticker", daemon=True)

    def start(self) -> Ticker:
        """Switch the twin to wall time and start ticking."""
        self.twin.clock_mode = "wall"
        if self.young_gc:
            gc.collect()
            gc.freeze()
            WALL_PAUSE_HOOKS.append(self._collect_young)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            wall0, sim0 = self._origin
            try:
                self.twin.advance_to(sim0 + time.monotonic() - wall0)
            except Exception as exc:  # noqa: BLE001 - the ticker must outlive any fault; health reports it
                with self.twin.lock:
                    self.twin.faults.record(self.twin, "ticker", ("", "tick"), exc, None)
            else:
                self.twin.faults.clear("ticker", ("", "tick"))
            if self.young_gc:
                self._collect_young()

    def _collect_young(self) -> None:
        """Collect the young generations and freeze the survivors, at most every YOUNG_GC_SECONDS."""
        now = time.monotonic()
        if now - self._last_gc >= YOUNG_GC_SECONDS:
            self._last_gc = now
            gc.collect(1)  # what died young goes now; the survivors join the frozen, never-walked objects
            gc.freeze()

    def stop(self) -> None:
        """Stop ticking (and hand frozen objects back to the collector)."""
        self._stop.set()
        self._thread.join(timeout=2)
        if self.young_gc:
            if self._collect_young in WALL_PAUSE_HOOKS:
                WALL_PAUSE_HOOKS.remove(self._collect_young)
            gc.unfreeze()


def serve(twin: Twin, port: int = 0) -> TwinServer:
    """Start the HTTPS API server for a twin in a background thread."""
    return TwinServer(twin, tls.server_context(), port).start()
