"""The worker pool: each worker builds its own models and audit log, runs one episode per job and saves it.

Processes are the default. Measured (benchmarks/eval_pool.py, expert model, 24 episodes, 2 workers, 2 cores):
processes 2953-3565 episodes/h, threads 3079-3910, one process 2501. On 2 cores it is a draw, but a profile of
sequential episodes shows why processes win with more cores: of 25.8 CPU seconds per 24 episodes, 9.2 are Python in
the eval process (the twin's API server, controllers and behaviour model, the agents: all under one GIL) and 16.5
the real kubectl subprocesses, so threads cap at about one core of twin work while processes scale with cores; a
process also isolates a crashing or leaking episode and can be terminated on a second Ctrl-C. `--executor thread`
remains for small machines (threads share the parent's cached base twins). Workers are forked from a fork server
(the parent runs a progress thread, and forking a threaded process is unsafe) that has imported the workers' code and
built the run's base twins (aoi.evaluate.prefork): ~2.5 s of CPU once instead of per worker. The server lives as long
as the parent and keeps what it loaded first (a later eval in the same process whose twins differ builds its own in
each worker) and the environment variables of that moment (workers take the parent's sys.path and working directory
anew). Workers ignore SIGINT so Ctrl-C reaches only the parent, which decides whether in-flight episodes finish
or are abandoned.

A run with one process worker per core it may use pins each worker, and so its kubectl processes and API server
threads, to a core of its own. An episode is a chain of hand-offs (the worker starts kubectl, kubectl calls the
twin's server thread, the answer goes back) with about one runnable thread at a time, so a core per chain suffices;
unpinned, the scheduler moves the chain's threads between cores (wake-ups onto a busy core, cold caches: a likely
cause, not one traced; the CPU per episode drops too). Measured on 2 cores with benchmarks/episodes.py (2 workers,
all 87 problems), 8 alternating pairs: median 8,312 -> 8,979 episodes/h, 0.745 -> 0.705 CPU s per episode, pinned
faster in 7 of 8. With fewer workers than cores nothing is pinned: the cores left belong to the rest of the machine,
and a pinned worker could not move off one that something else keeps busy.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from aoi.config import RunConfig

EXECUTORS = ("process", "thread")
PREFORK_TWINS = "AOI_PREFORK_TWINS"  # the base twins the fork server builds: "app@seed,..." (aoi.evaluate.prefork)
DEFAULT = "process"
_local = threading.local()


class Worker:
    """What one worker keeps between episodes: the config, its models (built once) and audit log."""

    def __init__(self, config: RunConfig, audit=None):
        """Set up a worker; a Ray actor passes its own audit log and saves nothing (aoi.evaluate.ray_pool)."""
        from aoi.safety.audit import AuditLog

        self.config = config
        self.audit = audit or AuditLog(config.store.audit_log)
        self._models = self._store = None

    def models(self) -> dict:
        """Return the models per role; scripted (replay) models are rebuilt per episode since a script is used up."""
        from aoi.agents.runtime import models_from_config
        from aoi.protocols import MODEL_ROLES

        scripted = any(self.config.model_for(role).spec.startswith("replay:") for role in MODEL_ROLES)
        if self._models is None or scripted:
            self._models = models_from_config(self.config)
        return self._models

    def run(self, job) -> dict:
        """Run one episode, save its trajectory, and return its results row."""
        from aoi.store.sqlite import TrajectoryStore

        traj, row = self.episode(job)
        self._store = self._store or TrajectoryStore(self.config.store.path)  # opened once: opening migrates
        self._store.save(traj)
        return row

    def episode(self, job) -> tuple:
        """Run one episode and return (trajectory, results row), saving nothing."""
        from aoi.agents.runtime import run_episode
        from aoi.env import backend_options, make
        from aoi.evaluate.results import result_row

        config = self.config.model_copy(deep=True)
        config.env.seed, config.env.target = job.seed, job.env_target
        options = {k: v for k, v in backend_options(config.env).items() if v is not None}
        env = make(job.problem_id, seed=job.seed, target=job.env_target, max_steps=config.env.max_steps, **options)
        try:
            traj = run_episode(env, config, self.models(), attempt=job.attempt, audit=self.audit)
        finally:
            env.close()
        return traj, result_row(traj, app=env.problem.app)


def cores_for(workers: int, allowed: set[int]) -> list[int] | None:
    """Return the cores to pin `workers` process workers to, one each, or None to leave them to the OS scheduler:
    only a run with one worker per core it may use is pinned (see the module's docstring).

    Example:
        >>> cores_for(2, {0, 1}), cores_for(1, {0, 1}), cores_for(3, {0, 1}), cores_for(1, {5})
        ([0, 1], None, None, None)
    """
    return sorted(allowed) if workers == len(allowed) > 1 else None


def _pin(taken, cores: list[int]) -> None:
    """Pin the calling process to the next core of `cores` not yet taken (`taken`: a shared counter). Threads and
    processes it starts from here on inherit the core."""
    with taken.get_lock():
        index, taken.value = taken.value, taken.value + 1
    os.sched_setaffinity(0, {cores[index % len(cores)]})


def _init(config: RunConfig, process: bool, pinning: tuple | None = None) -> None:
    """Set up the calling worker (a process ignores Ctrl-C, exits when its parent is gone, and takes a core of its
    own when `pinning`, a (counter, cores) pair, says so)."""
    if process:
        if pinning:
            _pin(*pinning)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        threading.Thread(target=_watch_parent, daemon=True).start()
    _local.worker = Worker(config)


def _watch_parent() -> None:
    """Exit this worker once the eval that started it has died (kill -9 would leave workers waiting on the call queue
    forever); that eval is not the worker's OS parent, the fork server, which lives on while workers do."""
    multiprocessing.parent_process().join()  # returns when the eval's end of the worker's pipe closes
    os._exit(1)


def run_job(job) -> dict:
    """Run one job in the calling worker (the pool's task function)."""
    return _local.worker.run(job)


def start(kind: str, workers: int, config: RunConfig, out_dir: Path, base_twins=()) -> Executor:
    """Start a pool of `workers` processes or threads, each set up with the config (Ray: aoi.evaluate.ray_pool);
    processes start with the (app, seed) base twins built, and one per core when there are as many as cores (see
    the module's docstring)."""
    if kind not in EXECUTORS:
        raise ValueError(f"unknown executor {kind!r}; use one of {', '.join(EXECUTORS)}")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    if kind == "thread":
        return ThreadPoolExecutor(workers, thread_name_prefix="aoi-eval", initializer=_init, initargs=(config, False))
    context = _fork_server(base_twins)
    cores = cores_for(workers, os.sched_getaffinity(0))
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_init,
                               initargs=(config, True, (context.Value("i", 0), cores) if cores else None))


def twins_spec(twins) -> str:
    """Return the PREFORK_TWINS value naming (app, seed) pairs.

    Example:
        >>> twins_spec([("hotel-reservation", 0), ("social-network", 3)])
        'hotel-reservation@0,social-network@3'
    """
    return ",".join(f"{app}@{seed}" for app, seed in twins)


def _fork_server(base_twins) -> multiprocessing.context.BaseContext:
    """Return the forkserver context, its server started (if it is not yet) with aoi.evaluate.prefork loaded (only
    there: importing it builds the twins)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["aoi.evaluate.prefork"])
    with _environ(PREFORK_TWINS, twins_spec(base_twins)):
        multiprocessing.forkserver.ensure_running()  # the server copies the environment now
    return context


@contextlib.contextmanager
def _environ(name: str, value: str):
    """Set an environment variable for the block, then restore it."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def abandon(pool: Executor) -> None:
    """Stop a pool without waiting: worker processes are terminated; threads cannot be, and finish unrecorded."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):  # no public API before Python 3.14
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
