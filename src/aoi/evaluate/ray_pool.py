"""The Ray pool of `aoi eval --engine ray`: episodes spread over a Ray cluster, recorded as the local pool records them.

Each actor is one eval worker (aoi.evaluate.pool.Worker: its own models, twins and envs, built once), placed SPREAD
over the cluster's nodes. Only the eval process writes the run directory: an actor returns the episode's trajectory,
its results row and the audit lines it wrote; the parent saves the trajectory and appends the audit lines before the
runner records the row. So the nodes need no shared filesystem, and results.jsonl, resume, the lock and the report
are the local pool's (aoi.evaluate.runner drives both through the same `Executor` interface). Without `address` a
local Ray instance with `workers` CPUs is started and stopped with the pool; an existing connection is reused and
left open. Ray is optional: without it `--engine ray` says how to install it.

Measured (benchmarks/eval_ray.py, expert, 8 hotel problems x k=3 = 24 episodes, 2 workers, 2 shared cores at load
5-9, 3 interleaved rounds): local process pool median 38.8 s (2228 episodes/h), Ray pool 41.5 s (2082 episodes/h,
its local instance's start included); every episode's outcome the same on both. On one machine Ray buys nothing;
it is for spreading episodes over several.
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import Executor, Future
from concurrent.futures import wait as wait_all
from pathlib import Path

from aoi.config import RunConfig
from aoi.evaluate.pool import Worker, run_job
from aoi.safety.audit import AuditLog
from aoi.store.sqlite import TrajectoryStore

INSTALL = "pip install 'aoi[swarm]'"


def require_ray():
    """Return the ray module; ValueError saying how to install it when it is missing."""
    try:
        import ray
    except ImportError:
        raise ValueError(f"--engine ray needs Ray, which is not installed; install it with {INSTALL} (or use "
                         "--engine local)") from None
    return ray


class _KeptAudit(AuditLog):
    """An audit log that keeps its lines in memory for the eval process to append to the run's audit.jsonl."""

    def __init__(self):
        super().__init__(Path(os.devnull))  # never written: _append keeps the lines instead
        self.lines: list[bytes] = []

    def _append(self, line: bytes) -> None:
        """Keep one line."""
        with self._lock:
            self.lines.append(line)

    def take(self) -> bytes:
        """Return the lines kept since the last call and forget them."""
        with self._lock:
            kept, self.lines = b"".join(self.lines), []
        return kept


class EpisodeActor:
    """One eval worker on a Ray node: builds its models once, runs episodes, keeps nothing on the node."""

    def __init__(self, config: RunConfig):
        self.audit = _KeptAudit()
        self.worker = Worker(config, audit=self.audit)

    def run(self, job) -> tuple:
        """Run one episode; return (trajectory, results row, audit lines), or (None, its error, audit lines)."""
        try:
            traj, row = self.worker.episode(job)
        except Exception as exc:  # noqa: BLE001 - raised again in the eval process, after its audit lines are kept
            return None, exc, self.audit.take()
        return traj, row, self.audit.take()

    def node(self) -> str:
        """Return the id of the Ray node this actor runs on."""
        import ray

        return ray.get_runtime_context().get_node_id()


class RayPool(Executor):
    """`workers` EpisodeActors behind concurrent.futures' Executor interface (submit, shutdown).

    Example:
        >>> pool = RayPool(2, config, address="127.0.0.1:6379")  # doctest: +SKIP
        >>> pool.submit(run_job, job).result()["success"]  # doctest: +SKIP
        True
    """

    def __init__(self, workers: int, config: RunConfig, address: str | None = None):
        self.ray = require_ray()
        self.owned = connect_ray(self.ray, address, workers)
        try:
            _check_cpus(self.ray, workers)
        except ValueError:
            self._disconnect()
            raise
        actor = self.ray.remote(num_cpus=1, max_restarts=1, scheduling_strategy="SPREAD")(EpisodeActor)
        self.actors = [actor.remote(config) for _ in range(workers)]
        self.load = [0] * workers  # episodes in flight per actor
        self.store, self.audit_path = TrajectoryStore(config.store.path), Path(config.store.audit_log)
        self.futures: set[Future] = set()
        self._lock = threading.Lock()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        """Run run_job(job) on the least loaded actor; the Future's result is the row, its trajectory saved."""
        if fn is not run_job or kwargs or len(args) != 1:
            raise TypeError("a RayPool runs eval jobs only: submit(aoi.evaluate.pool.run_job, job)")
        with self._lock:
            index = min(range(len(self.actors)), key=self.load.__getitem__)
            self.load[index] += 1
        outer = Future()
        self.futures.add(outer)
        inner = self.actors[index].run.remote(args[0]).future()
        inner.add_done_callback(lambda done: self._finish(index, done, outer))
        return outer

    def nodes(self) -> list[str]:
        """Return the Ray node id of each actor (where its episodes run)."""
        return self.ray.get([actor.node.remote() for actor in self.actors])

    def _finish(self, index: int, done: Future, outer: Future) -> None:
        """Save a finished episode's trajectory and audit lines, then hand its row to the runner."""
        with self._lock:
            self.load[index] -= 1
        if not outer.set_running_or_notify_cancel():
            return  # abandoned: nothing is saved, so the episode runs again on resume
        try:
            traj, row, audit = done.result()
            _append(self.audit_path, audit)  # a failed episode's changes are on record too, as in the local pool
            if traj is None:
                raise row
            self.store.save(traj)
        except Exception as exc:  # noqa: BLE001 - the runner records it as an episode that could not run
            outer.set_exception(_cause(exc))
        else:
            outer.set_result(row)
        self.futures.discard(outer)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the actors (after the episodes in flight unless wait is False) and the Ray instance this pool began."""
        if cancel_futures:
            for future in list(self.futures):
                future.cancel()
        if wait:
            wait_all(self.futures)
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
        self._disconnect()

    def _disconnect(self) -> None:
        """Shut Ray down if this pool connected it."""
        if self.owned:
            self.ray.shutdown()
            self.owned = False


def connect_ray(ray, address: str | None, num_cpus: int | None = None) -> bool:
    """Connect to Ray unless connected (a cluster at address, else a new local instance); return whether we did.

    Eval and Echo (aoi.echo.swarm) connect this one way: usage stats off, Ray's INFO lines and workers' logs off.
    """
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # nothing leaves the machine unless the user opts in
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}  # AOI's own lines say what runs where
    if address:
        ray.init(address=address, **quiet)
    else:
        # "local": a new instance even when this machine runs a cluster already (that one is --ray-address's)
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, **quiet)
    return True


def _check_cpus(ray, workers: int) -> None:
    """Refuse more workers than the cluster has CPUs (the extra actors would wait forever to be placed)."""
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if workers > cpus:
        raise ValueError(f"the Ray cluster has {cpus} CPU(s) for {workers} eval workers; pass --workers {cpus} or "
                         "fewer, or add nodes")


def _append(path: Path, data: bytes) -> None:
    """Append audit lines to the run's audit log with one O_APPEND write (as aoi.safety.audit does)."""
    if not data:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _cause(exc: BaseException) -> BaseException:
    """Return the episode's own exception from Ray's wrapper (a RayTaskError carries it as .cause)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc
