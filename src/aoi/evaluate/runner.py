"""`run_eval`: K attempts per problem over a worker pool, recorded episode by episode, resumable after any stop.

Resume: results.jsonl is the source of truth. A new session repairs it (drops a torn last line and any garbled or
duplicate line), refuses rows of another aoi.env.ENV_VERSION (unless forced), skips every (problem_id, target,
attempt) already there, deletes stored trajectories that have no
line (their process died before recording them) and runs the rest. Only this process writes results.jsonl, one
fsynced line per episode, so kill -9 loses at most the episodes in flight. One eval at a time per directory: a second
one exits naming the first (aoi.evaluate.lock). Each session is on record as interrupted from its start until it ends
on its own terms, so a killed one stays marked interrupted in summary.json. Ctrl-C lets the episodes in flight finish
and records them (a second Ctrl-C abandons them); SIGTERM, a request to stop now, abandons them at once: worker
processes are terminated, the session's `abandoned` lists their keys, and they run again on resume (thread workers
cannot be stopped: the process exits once they end, their episodes unrecorded).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Future, as_completed, wait
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from aoi.config import ROLES, RunConfig, resolved
from aoi.env.version import ENV_VERSION
from aoi.evaluate import pool as pools
from aoi.evaluate.lock import run_lock
from aoi.evaluate.results import ResultsLog, check_versions, episode_key
from aoi.evaluate.runconfig import pin_config, prepare_config
from aoi.evaluate.summary import Summary, build_summary, read_sessions, write_summary
from aoi.interrupts import interruptible
from aoi.models.registry import shared_servers
from aoi.problems import make as make_problem
from aoi.store.sqlite import TrajectoryStore


@dataclass(frozen=True, kw_only=True)
class Job:
    """One episode to run: a problem aimed at a target, one attempt with its own seed."""

    problem_id: str
    target: str | None      # the resolved target (the problem's identity in results)
    env_target: str | None  # what aoi.env.make receives (None: the problem's default)
    attempt: int
    seed: int

    @property
    def key(self) -> tuple:
        """Return the results key of this episode."""
        return self.problem_id, self.target, self.attempt


def plan(problems: list[tuple[str, str | None]], k: int, seed: int) -> list[Job]:
    """Return the jobs of K attempts per (problem_id, target), attempt-major so early results cover every problem.

    Example:
        >>> jobs = plan([("k8s_target_port-misconfig-detection-1", None)], 2, 5)
        >>> [(j.problem_id[:15], j.attempt, j.seed) for j in jobs]
        [('k8s_target_port', 0, 5), ('k8s_target_port', 1, 6)]
    """
    if k < 1:
        raise ValueError(f"k must be at least 1 (got {k}); pass -k 1 or more")
    resolved_targets = []
    for problem_id, target in problems:
        problem = make_problem(problem_id, target)
        problem.require_backend("twin")
        resolved_targets.append((problem_id, problem.target, target))
    return [Job(problem_id=pid, target=target, env_target=env_target, attempt=attempt, seed=seed + attempt)
            for attempt in range(k) for pid, target, env_target in resolved_targets]


class _Session:
    """The parent side of one invocation: records finished episodes, keeps summary.json current."""

    def __init__(self, out_dir: Path, run: dict, jobs: list[Job], console: Console, force_version: bool = False):
        self.out_dir, self.run, self.console = out_dir, run, console
        self.log = ResultsLog(out_dir / "results.jsonl")
        dropped = self.log.repair()
        if dropped:
            console.print(f"[yellow]note:[/] dropped {dropped} torn, garbled or duplicate line(s) from "
                          f"{self.log.path}; those episodes run again")
        self.rows, _ = self.log.read()
        mixed = check_versions(self.rows, ENV_VERSION, self.log.path, force_version)
        if mixed:
            console.print(f"[yellow]note:[/] {mixed}")
        done = {episode_key(row) for row in self.rows}
        self.todo = [job for job in jobs if job.key not in done]
        self.selected = {job.key for job in jobs}
        self.sessions = read_sessions(out_dir / "summary.json")
        self.started, self.finished, self.not_run, self.interrupted = time.monotonic(), 0, [], False
        self.abandoned: list[list] = []  # keys of the episodes stopped in flight (SIGTERM, a second Ctrl-C)
        self.done = False  # set once the session ends on its own terms; until then it is on record as interrupted
        _prune_orphans(TrajectoryStore(out_dir / "trajectories.db"), done)
        self.save()  # the session is on record before its first episode, even if it is killed

    def record(self, job: Job, future: Future) -> str:
        """Append a finished episode's row (or note why it could not run); return a one-line account."""
        try:
            row = future.result()
        except Exception as exc:  # noqa: BLE001 - an episode that could not run is retried by the next session
            self.not_run.append({"key": list(job.key), "error": f"{type(exc).__name__}: {exc}"})
            return f"[red]could not run[/] {_name(job)}: {type(exc).__name__}: {exc}"
        row |= {"split": self.run["split"]} if self.run.get("split") else {}
        self.log.append(row)
        self.rows.append(row)
        self.finished += 1
        self.save()
        mark = "[green]ok[/]" if row["success"] else f"[red]failed[/] ({row['failure']})"
        return f"{mark} {_name(job)} in {row['seconds']:.1f}s"

    def summary(self) -> Summary:
        """Return the summary of every recorded row, this session included."""
        session = {"started_at": time.time() - (time.monotonic() - self.started),
                   "wall_seconds": round(time.monotonic() - self.started, 3), "episodes": self.finished,
                   "not_run": self.not_run, "abandoned": self.abandoned,
                   "interrupted": self.interrupted or not self.done}
        done = {episode_key(row) for row in self.rows}
        return build_summary(self.rows, self.run, [*self.sessions, session], len(self.selected - done))

    def save(self) -> Summary:
        """Rewrite summary.json and return the summary."""
        summary = self.summary()
        write_summary(summary, self.out_dir / "summary.json")
        return summary


def _prune_orphans(store: TrajectoryStore, done: set) -> None:
    """Delete stored trajectories whose episode has no results line (it died between saving and recording)."""
    for episode in store.summaries():
        if (episode["problem_id"], episode["target"], episode["attempt"]) not in done:
            store.delete(episode["id"])


def _name(job: Job) -> str:
    """Return a short label of a job for progress lines."""
    return escape(f"{job.problem_id}{f' [{job.target}]' if job.target else ''} #{job.attempt}")


def run_eval(problems: list[tuple[str, str | None]], k: int, workers: int, config: RunConfig,
             out_dir: str | Path, seed: int | None = None, executor: str = pools.DEFAULT,
             console: Console | None = None, force_version: bool = False, split: dict | None = None,
             ray_address: str | None = None) -> Summary:
    """Run K attempts of each (problem_id, target) into out_dir, skipping what an earlier session finished.

    Args:
        problems: (problem_id, target) pairs; target None means the problem's default.
        k: attempts per problem; attempt a runs with seed + a.
        workers: episodes run at once.
        config: the run configuration; its store and audit paths are moved into out_dir.
        out_dir: the run directory (results.jsonl, summary.json, trajectories.db, config.json, audit.jsonl).
        seed: the base seed (None: config.env.seed).
        executor: "process" (default), "thread" (see aoi.evaluate.pool) or "ray" (aoi.evaluate.ray_pool).
        console: where progress goes (default: a new rich Console).
        force_version: resume even when results.jsonl holds rows of another env version (they are mixed).
        split: what `aoi eval --split` ran, {"split": "RULE:PART", "data": DIR}: kept in summary.json's run, and
            "split" on every row this session records (a run directory may hold several splits' rows).
        ray_address: the Ray cluster of executor "ray" (None: a local Ray instance with `workers` CPUs).

    Example:
        >>> from aoi.config import load_config
        >>> summary = run_eval([("noop_detection_hotel_reservation-1", None)], k=2, workers=2,
        ...                    config=load_config(overrides={"model": "expert"}), out_dir="runs/demo")  # doctest: +SKIP
        >>> summary.overall["avg_at_k"]  # doctest: +SKIP
        1.0
    """
    console = console or Console()
    out_dir = Path(out_dir)
    seed = config.env.seed if seed is None else seed
    config, jobs = prepare_config(config, out_dir, seed), plan(problems, k, seed)
    with run_lock(out_dir):
        return _run_locked(config, jobs, out_dir, k, seed, len(problems), console, (executor, ray_address), workers,
                           force_version, split or {})


def _run_locked(config: RunConfig, jobs: list[Job], out_dir: Path, k: int, seed: int, problems: int,
                console: Console, executor: tuple, workers: int, force_version: bool, split: dict) -> Summary:
    """Run the jobs not yet recorded in out_dir (its lock held) and return the summary."""
    pin_config(out_dir / "config.json", resolved(config))
    run = {"model": config.model.spec, "k": k, "seed": seed, "max_steps": config.env.max_steps,
           "problems": problems, "out_dir": str(out_dir), "env_version": ENV_VERSION, **split}
    session = _Session(out_dir, run, jobs, console, force_version)
    if not session.todo:
        console.print(f"nothing to run: all {len(session.selected)} episodes are in {session.log.path}")
        session.done = True
        return session.save()
    with shared_servers(model_specs(config)) as specs:  # local:...+engine=vllm: one vLLM server per base for all
        _drive(session, _with_specs(config, specs), max(1, min(workers, len(session.todo))), executor)
    session.done = True  # a kill -9 never gets here: its session stays on record as interrupted
    summary = session.save()
    if summary.interrupted or summary.pending:
        console.print(f"[yellow]{summary.pending} episode(s) missing[/]; run the same command again (same --out "
                      f"{out_dir}) to resume: finished episodes are kept and skipped")
    return summary


def model_specs(config: RunConfig) -> list[str]:
    """Return the specs a run's models are built from: the main model's and each role override's."""
    overrides = (getattr(config.models, role) for role in ROLES)
    return [config.model.spec, *(override.spec for override in overrides if override is not None)]


def _with_specs(config: RunConfig, specs: dict[str, str]) -> RunConfig:
    """Return the config with each model spec replaced by its entry in `specs` (the same config when none changes)."""
    if all(specs[spec] == spec for spec in model_specs(config)):
        return config
    roles = {role: override.model_copy(update={"spec": specs[override.spec]})
             for role in ROLES if (override := getattr(config.models, role)) is not None}
    return config.model_copy(update={"model": config.model.model_copy(update={"spec": specs[config.model.spec]}),
                                     "models": config.models.model_copy(update=roles)})


def _start_pool(executor: tuple, workers: int, config: RunConfig, out_dir: Path, jobs: list[Job]):
    """Start the pool: processes or threads, or Ray actors at executor[1] (Ray is imported only when asked for);
    process workers start with the base twins of the jobs, (app, seed) in order of first use, built."""
    if executor[0] == "ray":
        from aoi.evaluate.ray_pool import RayPool

        return RayPool(workers, config, executor[1])
    twins = dict.fromkeys((make_problem(job.problem_id, job.target).app, job.seed) for job in jobs)
    return pools.start(executor[0], workers, config, out_dir, list(twins))


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: stop now, abandoning the episodes in flight (Ctrl-C lets them finish)."""


def _terminate(signum, frame) -> None:
    raise Terminated()


@contextlib.contextmanager
def _stoppable():
    """Let Ctrl-C raise KeyboardInterrupt and SIGTERM Terminated inside the block (handlers restored after it)."""
    with interruptible():
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _terminate)  # interruptible() restores the handler it found
        yield


def _drive(session: _Session, config: RunConfig, workers: int, executor: tuple) -> None:
    """Run the session's jobs with a progress bar and ETA; Ctrl-C finishes the episodes in flight (twice abandons
    them), SIGTERM abandons them at once."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    pool, running = _start_pool(executor, workers, config, session.out_dir, session.todo), {}
    with _stoppable(), Progress(*columns, console=session.console) as progress:
        bar = progress.add_task(f"{config.model.spec}: {len(session.todo)} episodes", total=len(session.todo))

        def finish(future: Future) -> None:
            progress.console.print(session.record(running.pop(future), future))
            progress.advance(bar)

        try:
            _loop(pool, running, iter(session.todo), workers, finish)
        except Terminated:
            session.interrupted = True
            _abandon(session, pool, running, finish, "interrupted by SIGTERM")
        except KeyboardInterrupt:
            session.interrupted = True
            _wind_down(session, pool, running, finish)
        except BrokenExecutor as exc:
            session.interrupted = True
            session.console.print(f"[red]the worker pool broke[/] ({exc}): a worker died (out of memory? killed?)")
        finally:
            pool.shutdown(wait=not session.interrupted, cancel_futures=True)


def _loop(pool, running: dict, todo, workers: int, finish) -> None:
    """Keep `workers` jobs in flight until none is left, recording each as it finishes.

    The workers that finished get their next jobs before the finished ones are recorded (an fsync and the summary's
    rewrite), so they do not wait for that; a finished job stays in `running` until it is recorded, so Ctrl-C in
    between records it with the rest (_wind_down)."""
    _fill(pool, running, todo, workers)
    while running:
        done = wait(running, return_when=FIRST_COMPLETED)[0]
        _fill(pool, running, todo, workers + len(done))
        for future in done:
            finish(future)


def _fill(pool, running: dict, todo, limit: int) -> None:
    """Submit jobs until `limit` are in `running` or none is left (lazily, so Ctrl-C leaves nothing queued)."""
    while len(running) < limit and (job := next(todo, None)) is not None:
        running[pool.submit(pools.run_job, job)] = job


def _wind_down(session: _Session, pool, running: dict, finish) -> None:
    """After Ctrl-C: wait for the episodes in flight and record them; a second Ctrl-C (or SIGTERM) abandons them."""
    session.console.print(f"[yellow]interrupted:[/] finishing {len(running)} episode(s) in flight "
                          f"(Ctrl-C again to abandon them)")
    try:
        for future in as_completed(list(running)):
            finish(future)
    except KeyboardInterrupt as stop:
        _abandon(session, pool, running, finish, "interrupted by SIGTERM" if isinstance(stop, Terminated) else
                 "interrupted again")


def _abandon(session: _Session, pool, running: dict, finish, why: str) -> None:
    """Record the episodes that already finished, stop the rest (their keys go on record as abandoned)."""
    for future in [f for f in running if f.done() and not f.cancelled()]:
        finish(future)
    session.abandoned = [list(job.key) for job in running.values()]
    session.console.print(f"[yellow]{why}: abandoned {len(running)} episode(s) in flight[/]; they run again on "
                          "resume")
    pools.abandon(pool)
