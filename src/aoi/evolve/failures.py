"""Evidence of failed episodes, read from `aoi eval` run folders and `aoi run` stores, for the guidance miner.

A `Failure` holds what went wrong in one episode, taken from its trajectory and nothing else: the answer submitted
against the expected one (the problem registry's answers), the primary failure reason (aoi.evaluate.failures), the
sub-agents' refused and repeated calls, the steps that brought nothing new, the error lines the probe saw and the
commands it ran.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from aoi.evaluate.failures import failure_reason
from aoi.models.expert import contract
from aoi.store.sqlite import TrajectoryStore
from aoi.trajectory import Trajectory

ANOMALY = re.compile(r"(?i)\b(error|fail\w*|refused|crashloop\w*|backoff|pending|oomkilled|evicted|not ready|"
                     r"unauthori[sz]ed|not authorized|denied|timed? ?out|unreachable|no endpoints|0/\d+)\b")
SYMPTOM_CHARS, SYMPTOMS_KEPT = 120, 5
WASTED = ("repeated", "refused", "format_error", "error", "budget")  # step statuses that brought nothing new
SKIPPED = ("model_error",)  # the model or its endpoint failed: nothing the Observer could learn from


@dataclass(kw_only=True)
class Failure:
    """What went wrong in one failed episode."""

    trajectory: str
    problem_id: str
    task_type: str
    app: str = ""
    family: str = ""
    reason: str  # aoi.evaluate.failures.REASONS
    submitted: object = None
    expected: object = None  # None: the registry does not know the problem (e.g. a scenario file's)
    components: list[str] = field(default_factory=list)  # the faulty components' accepted names
    symptoms: list[str] = field(default_factory=list)  # error lines the sub-agents saw, first seen first
    commands: list[str] = field(default_factory=list)  # the sub-agents' calls that ran, in order
    refused: list[tuple[str, str]] = field(default_factory=list)  # (call, first line of the refusal)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (call, first line of its error): the call's fault
    repeated: Counter = field(default_factory=Counter)  # call -> refused repeats
    changes: list[str] = field(default_factory=list)  # the executor's calls
    wasted: int = 0  # sub-agent and Observer steps with a WASTED status
    steps: int = 0  # environment actions taken
    outputs: list[str] = field(default_factory=list, repr=False)  # the calls' observations

    def seen(self, name: str) -> bool:
        """Return whether a call or its output named this component."""
        return any(name in text for text in [*self.commands, *self.outputs])


def run_trajectories(run: str | Path) -> list[Trajectory]:
    """Return the trajectories of a run: an `aoi eval` folder (its results.jsonl rows' trajectories), or a
    trajectory store (`aoi run`'s runs/trajectories.db, or a folder holding one): every episode in it.

    Example:
        >>> run_trajectories("/nonexistent")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: /nonexistent holds no results.jsonl or trajectories.db; pass an `aoi eval --out` folder or ...
    """
    run = Path(run)
    db = run if run.suffix == ".db" else run / "trajectories.db"
    if not db.is_file():
        raise ValueError(f"{run} holds no results.jsonl or trajectories.db; pass an `aoi eval --out` folder or a "
                         "trajectory store")
    store = TrajectoryStore(db)
    results = run / "results.jsonl"
    if not results.is_file():
        return store.query()
    ids = [row.get("trajectory_id") for row in _rows(results)]
    return [traj for traj in map(store.get, filter(None, ids)) if traj is not None]


def _rows(path: Path) -> list[dict]:
    """Read results.jsonl rows, skipping a torn or garbled line (as the evaluator does)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return [row for row in rows if isinstance(row, dict)]


def failure_of(traj: Trajectory) -> Failure | None:
    """Return the evidence of a failed episode, or None when it succeeded or its model failed (nothing to learn)."""
    reason = failure_reason(traj)
    if reason is None or reason in SKIPPED:
        return None
    app, expected, components = _expected(traj)
    found = Failure(trajectory=traj.id, problem_id=traj.problem_id, task_type=traj.task_type, app=app,
                    family=traj.family, reason=reason, submitted=traj.submission, expected=expected,
                    components=components, steps=int((traj.results or {}).get("steps") or 0))
    for step in traj.steps:
        _read_step(found, step)
    return found


def _read_step(found: Failure, step) -> None:
    """Add one step's evidence to a failure."""
    status = str(step.status)
    found.wasted += status in WASTED
    if step.role not in ("probe", "executor") or not step.messages:
        return
    call = _call(step.text)
    if status == "repeated":
        found.repeated[call] += 1
    elif status == "refused":
        found.refused.append((call, _first_line(step.observation)))
    elif call and not call.startswith("finish"):
        (found.changes if step.role == "executor" else found.commands).append(call)
        found.outputs.append(step.observation)
        if status == "error" or step.observation.lstrip().startswith(contract.FAILED):  # the call failed, not the app
            found.failed.append((call, _first_line(step.observation)))
        else:
            _add_symptoms(found.symptoms, step.observation)


def _first_line(text: str) -> str:
    """Return the first line of an observation, cut to SYMPTOM_CHARS."""
    lines = text.strip().splitlines()
    return lines[0][:SYMPTOM_CHARS] if lines else "(no output)"


def _call(text: str) -> str:
    """Return a sub-agent's tool call in short: the command of exec_shell, else tool(args).

    Example:
        >>> _call('{"tool": "exec_shell", "args": {"command": "kubectl get pods -n x"}}')
        'kubectl get pods -n x'
        >>> _call('{"tool": "get_logs", "args": {"namespace": "x", "service": "geo"}}')
        'get_logs(namespace=x, service=geo)'
    """
    try:
        data = json.loads(text[text.find("{"):text.rfind("}") + 1])
        tool, args = str(data.get("tool", "")), data.get("args") or {}
    except (ValueError, AttributeError):
        return ""
    if tool == "exec_shell" and isinstance(args, dict):
        return str(args.get("command", "")).strip()
    inner = ", ".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, dict) else str(args)
    return f"{tool}({inner})"


def _add_symptoms(symptoms: list[str], output: str) -> None:
    """Keep the distinct error lines of an output (whitespace collapsed, cut), up to SYMPTOMS_KEPT in all."""
    for raw in output.splitlines():
        line = " ".join(raw.split())[:SYMPTOM_CHARS]
        if len(symptoms) >= SYMPTOMS_KEPT:
            return
        if ANOMALY.search(line) and line not in symptoms:
            symptoms.append(line)


def _expected(traj: Trajectory) -> tuple[str, object, list[str]]:
    """Return (app, expected answer, faulty components' names) from the problem registry ("", None, [] if unknown)."""
    from aoi.problems.registry import make

    try:
        problem = make(traj.problem_id, traj.target)
    except (KeyError, ValueError):
        return "", None, []
    return problem.app, problem.expected_answer(), list(problem.answers.localization)
