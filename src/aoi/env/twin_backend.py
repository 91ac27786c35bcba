"""The twin backend: a settled app cloned per episode, served over HTTPS, faulted through the Kubernetes API."""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path

from aoi.apps.catalog import load_app
from aoi.env import telemetry
from aoi.env.roles import credential
from aoi.env.scenario import inject
from aoi.env.workload import start_workload
from aoi.kube import Kube
from aoi.problems.model import Problem
from aoi.twin import build_twin
from aoi.twin.behaviour import metrics
from aoi.twin.kubectl import KubectlRunner
from aoi.twin.serving import kubectl_runners, release_runners, serve

INJECT_BUDGET = 600.0  # simulated seconds injection may pull the clock forward (namespace deletion, rollouts)
AFTER_INJECT = 6.0  # AIOpsLab's injector base sleeps this long after each injection
FIRST_LOOK = 30.0  # simulated seconds between the workload's start and the agent's first action
SETTLE_LIMIT = 120.0  # simulated seconds the system may settle before the strict mitigation verdict
SNAPSHOTS = 4  # just-reset twins a process keeps (a few MB each), for episodes that reset to the same state again


@functools.lru_cache(maxsize=6)
def base_twin(app: str, seed: int):
    """Return a settled twin running one app (built once per process and app/seed, then cloned).

    What is alive once it is built (base twins, modules, models) is frozen out of the garbage collector's full
    collections, which walked it all every few episodes (~12 ms per expert episode). Once the cache is full, each
    build drops a twin and unfreezes first, so a dropped twin is collected at the next build. Before that nothing was
    dropped, and the collection after a build walks only what was not frozen (in the eval's fork server, which
    freezes its imports first, that saves 0.12-0.16 s of CPU per build).
    """
    cache = base_twin.cache_info()
    if cache.currsize == cache.maxsize:
        gc.unfreeze()
    twin = build_twin([app], seed=seed)
    gc.collect()
    gc.freeze()
    return twin


class Snapshots:
    """Twins just reset for a (problem, seed), kept so that a later reset to the same state clones one.

    A reset is a function of the problem and the seed: the clone of the state it reached once (watch history
    included) is the state it reaches again, without injecting the fault and running the first simulated seconds
    over. The first reset of a key only notes it and the second keeps a clone of its result, so a run that resets
    every problem once (aoi eval -k 1) pays nothing; training and repeated attempts at one seed clone from the third.
    """

    def __init__(self, size: int = SNAPSHOTS):
        self.size = size
        self.kept: OrderedDict[tuple, tuple] = OrderedDict()  # key -> (problem, twin)
        self.seen: OrderedDict[tuple, None] = OrderedDict()
        self.hits = 0  # resets served from a kept twin
        self.lock = threading.Lock()  # eval threads share it

    def get(self, key: tuple, problem: Problem):
        """Return the kept twin of key, if it was reset for this very problem definition."""
        with self.lock:
            kept = self.kept.get(key)
            if kept is None or kept[0] != problem:
                return None
            self.kept.move_to_end(key)
            self.hits += 1
            return kept[1]

    def clear(self) -> None:
        """Forget every kept twin and every key seen (benchmarks measure the first reset this way)."""
        with self.lock:
            self.kept.clear()
            self.seen.clear()

    def offer(self, key: tuple, problem: Problem, twin, shared: list) -> None:
        """Keep a clone of a twin just reset for key when key was reset before (note it otherwise)."""
        with self.lock:
            again = key in self.seen
            self.seen[key] = None
            self.seen.move_to_end(key)
            while len(self.seen) > 64 * self.size:
                self.seen.popitem(last=False)
        if not again:
            return
        kept = twin.clone(shared, history=True)  # a full copy: the episode goes on changing `twin`
        with self.lock:
            self.kept[key] = (problem, kept)
            while len(self.kept) > self.size:
                self.kept.popitem(last=False)


SNAPSHOTS_KEPT = Snapshots()


@contextlib.contextmanager
def sim_budget(twin, seconds: float):
    """Let API waits (watches) pull the twin's clock forward by up to `seconds` while the block runs."""
    with twin.lock:
        twin.sim_deadline, twin.stalled = twin.clock.now() + seconds, False
    try:
        yield
    finally:
        with twin.lock:
            twin.sim_deadline = None


class TwinBackend:
    """Run one problem on a private twin."""

    name = "twin"

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.twin = None
        self.server = None
        self.kube = None
        self.runners: dict[str, KubectlRunner] = {}

    # --- lifecycle ---
    def start(self, problem: Problem, seed: int) -> None:
        """Clone the app settled under `seed`, serve it, inject the fault and start the workload (or clone the
        state a reset of this problem and seed reached before: see Snapshots)."""
        self.close()
        shared = [load_app(problem.app), load_app("platform")]
        key = (problem.id, problem.target, seed)
        kept = SNAPSHOTS_KEPT.get(key, problem)
        # base twins and kept snapshots never change: their clones copy each object on first use
        self.twin = (kept or base_twin(problem.app, seed)).clone(shared, history=kept is not None, lazy=True)
        self._serve()
        if kept is None:
            self._fault(problem)
            SNAPSHOTS_KEPT.offer(key, problem, self.twin, shared)

    def _serve(self) -> None:
        """Serve the twin and set up the clients of every role."""
        self.server = serve(self.twin)
        self.kubeconfigs, self.runners = kubectl_runners(self.twin, self.server.url, self.workdir)
        self.kube = Kube.from_kubeconfig(self.kubeconfigs["admin"], clock=self.twin.clock.now)

    def _fault(self, problem: Problem) -> None:
        """Inject the fault, let AIOpsLab's pause pass, start the workload and run up to the agent's first look."""
        with sim_budget(self.twin, INJECT_BUDGET):
            inject(problem, self.kube, self.runner(None))  # an injector, or a scenario's operations
        self.twin.advance(AFTER_INJECT)
        if problem.workload is not None:
            start_workload(self.kube, problem.namespace, problem.workload)
        self.twin.advance(FIRST_LOOK)

    def close(self) -> None:
        """Close the episode's API client, stop serving its twin and remove its kubectl cache."""
        if self.kube is not None:
            self.kube.close()
            self.kube = None
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.runners:
            release_runners(self.runners)
            self.runners = {}

    # --- time ---
    def now(self) -> float:
        """Return the twin's clock."""
        return self.twin.clock.now()

    def tick(self, seconds: float) -> None:
        """Let simulated time pass (each action costs some)."""
        self.twin.advance(seconds)

    def wait(self, seconds: float) -> None:
        """Let simulated time pass while a verdict waits (AIOpsLab's polls sleep)."""
        self.twin.advance(seconds)

    def settle(self) -> None:
        """Let the system settle (bounded: SETTLE_LIMIT) before the strict verdict; AIOpsLab's own does not wait."""
        from aoi.twin.core.podstatus import is_ready

        end = self.now() + SETTLE_LIMIT
        while self.now() < end:
            self.twin.advance(5.0)
            pods = [p for p in self.twin.list("pods") if p["status"].get("phase") not in ("Succeeded", "Failed")]
            if all(is_ready(p) for p in pods):
                return

    # --- actions ---
    def runner(self, role: str | None) -> KubectlRunner:
        """Return the kubectl runner of the identity a role acts as."""
        return self.runners[credential(role)]

    def _stamp(self) -> str:
        return datetime.fromtimestamp(self.now(), tz=UTC).strftime("%Y%m%d_%H%M%S")

    def get_metrics(self, namespace: str, duration: int = 5) -> str:
        """Export the last `duration` minutes of container metrics as CSV files."""
        folder = self.workdir / "metrics_output" / f"metric_{self._stamp()}"
        metrics.export(self.twin, namespace, self.now() - duration * 60, self.now(), folder)
        return telemetry.metrics_message(folder)

    def get_traces(self, namespace: str, duration: int = 5) -> str:
        """Export the last `duration` minutes of traces as one CSV file."""
        folder = self.workdir / "trace_output"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"traces_{int(self.now())}.csv"
        traces = self.twin.extensions.behaviour.traces
        path.write_text(traces.to_csv(namespace, self.now() - duration * 60, self.now()))
        return telemetry.traces_message(path)

    def admin_kubeconfig(self) -> Path:
        """Return the admin kubeconfig (oracles read the cluster with it)."""
        return self.kubeconfigs["admin"]
