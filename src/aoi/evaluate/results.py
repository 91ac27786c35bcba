"""`results.jsonl`: one line per finished episode, appended atomically, read back tolerating a torn last line.

A line is written with one `write` on an O_APPEND descriptor and fsynced before the next episode is recorded, so a
crash (even kill -9) leaves at most one torn last line. Reading skips lines that are not complete result rows and
keeps the first row of each (problem_id, target, attempt) key, so no episode is counted twice.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from aoi.evaluate.failures import failure_reason, step_issues
from aoi.tasks import succeeded, task
from aoi.trajectory import Trajectory

REQUIRED = ("problem_id", "task_type", "attempt", "success")


def episode_key(row: dict) -> tuple:
    """Return the identity of an episode in a run: (problem_id, target, attempt).

    Example:
        >>> episode_key({"problem_id": "p", "target": "geo", "attempt": 2})
        ('p', 'geo', 2)
    """
    return row["problem_id"], row.get("target"), int(row["attempt"])


def result_row(traj: Trajectory, **extra) -> dict:
    """Return the results.jsonl row of a finished episode (extra fields, e.g. app=..., are added as given);
    `forced_submit` says the Observer submitted because its iterations or the env's steps ran out.

    Example:
        >>> row = result_row(Trajectory("p", "detection", results={"Detection Accuracy": "Correct", "TTD": 30.0,
        ...                                                         "steps": 2}))
        >>> row["success"], row["ttx"], row["steps"], row["failure"], row["forced_submit"]
        (True, 30.0, 2, None, False)
    """
    results = {k: v for k, v in (traj.results or {}).items() if k != "strict_success"}
    model_in, model_out = traj.tokens()
    return {"problem_id": traj.problem_id, "task_type": traj.task_type, "family": traj.family, **extra,
            "target": traj.target, "attempt": traj.attempt, "seed": traj.seed, "model": traj.policy.model,
            "success": succeeded(results), "strict_success": bool(traj.strict_success),
            "forced_submit": traj.forced_submit, "results": results,
            "ttx": results.get(task(traj.task_type).time_key), "steps": results.get("steps"),
            "in_tokens": results.get("in_tokens"), "out_tokens": results.get("out_tokens"),
            "model_steps": len(traj.steps), "model_in_tokens": model_in, "model_out_tokens": model_out,
            "seconds": round(max(traj.ended_at - traj.started_at, 0.0), 3), "failure": failure_reason(traj),
            "issues": step_issues(traj), "replies": replies(traj), "error": traj.error, "trajectory_id": traj.id,
            "finished_at": traj.ended_at, "env_version": traj.env_version}


def replies(traj: Trajectory) -> dict[str, dict[str, int]]:
    """Count each role's model replies (steps that sent messages, failed calls excluded) and those that did not parse.

    Example:
        >>> from aoi.trajectory import Step
        >>> sent = [{"role": "user", "content": "go"}]
        >>> steps = [Step("observer", text, status=status, messages=sent)
        ...          for text, status in (("{}", "ok"), ("x", "format_error"), ("", "error"))]
        >>> replies(Trajectory("p", "detection", steps=[*steps, Step("observer", "", action="submit()")]))
        {'observer': {'replies': 2, 'format_errors': 1}}
    """
    counts: dict[str, dict[str, int]] = {}
    for step in traj.steps:
        if step.messages and (step.text or str(step.status) != "error"):  # no text + error: the call itself failed
            role = counts.setdefault(step.role, {"replies": 0, "format_errors": 0})
            role["replies"] += 1
            role["format_errors"] += str(step.status) == "format_error"
    return counts


def other_versions(rows: list[dict], version: str) -> dict[str, int]:
    """Return {env version: rows} of the rows recorded under another env version ("unrecorded": before versions).

    Example:
        >>> other_versions([{"env_version": "1"}, {"env_version": "2"}, {}], "2")
        {'1': 1, 'unrecorded': 1}
    """
    return dict(Counter(row.get("env_version") or "unrecorded" for row in rows if row.get("env_version") != version))


def check_versions(rows: list[dict], version: str, path: Path, force: bool = False) -> str | None:
    """Refuse (ValueError) to resume a run whose rows another env version made; with force, return a note instead.

    Example:
        >>> check_versions([{"env_version": "1"}], "1", Path("r.jsonl")) is None
        True
    """
    other = other_versions(rows, version)
    if not other:
        return None
    counts = ", ".join(f"{count} row(s) from env version {name}" for name, count in sorted(other.items()))
    if force:
        return f"{path} holds {counts}; this code is env version {version}; mixing them as --force-version asked"
    raise ValueError(f"{path} holds {counts}, but this code is env version {version}: resuming would mix two "
                     f"environments' results; pass another --out, or --force-version to resume anyway")


def _parse(line: str) -> dict | None:
    """Return the row a line holds, or None when it is torn, garbled or not a result row."""
    try:
        row = json.loads(line)
    except ValueError:
        return None
    if not isinstance(row, dict) or any(key not in row for key in REQUIRED):
        return None
    return row


class ResultsLog:
    """The results file of one run directory.

    Example:
        >>> import tempfile
        >>> log = ResultsLog(Path(tempfile.mkdtemp()) / "results.jsonl")
        >>> log.append({"problem_id": "p", "task_type": "detection", "attempt": 0, "success": True})
        >>> with open(log.path, "a") as f: _ = f.write('{"problem_id": "p", "task')  # a torn write
        >>> rows, dropped = log.read(); len(rows), dropped
        (1, 1)
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def read(self) -> tuple[list[dict], int]:
        """Return (rows, dropped): the first valid row of each episode key, and how many lines were skipped."""
        if not self.path.exists():
            return [], 0
        rows, seen, dropped = [], set(), 0
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            row = _parse(line) if line.strip() else None
            if row is None or episode_key(row) in seen:
                dropped += bool(line.strip())
                continue
            seen.add(episode_key(row))
            rows.append(row)
        return rows, dropped

    def repair(self) -> int:
        """Rewrite the file without torn, garbled or duplicate lines (atomically); return how many were dropped."""
        rows, dropped = self.read()
        if not self.path.exists() or (not dropped and self.path.read_bytes().endswith(b"\n")):
            return dropped
        tmp = self.path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(_line(row) for row in rows), encoding="utf-8")
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
        return dropped

    def append(self, row: dict) -> None:
        """Append one row as one line: a single write on an append-only descriptor, then fsync."""
        data = _line(row).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, data)
            while written < len(data):  # a short write (rare: signals, full disks) continues where it stopped
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)


def _line(row: dict) -> str:
    """Return a row as one JSON line."""
    return json.dumps(row, default=str, ensure_ascii=False) + "\n"
