"""What the viewer shows of a run, as JSON-ready data: its rows and summary, an episode step by step, its curves."""

from __future__ import annotations

import json
import re

from aoi.store.sqlite import TrajectoryStore
from aoi.store.steps import read_steps
from aoi.tasks import TaskType, succeeded
from aoi.view.runs import (
    AUDIT,
    CONFIG,
    MANIFEST,
    METRICS,
    RESULTS,
    SUMMARY,
    Run,
    in_progress,
    inside,
    read_json,
    read_jsonl,
    stamp,
)

STORE = "trajectories.db"


def run_info(run: Run) -> dict:
    """Return what the runs list shows of a run: key, kind, model, episodes so far, whether it is running."""
    summary = read_json(run, SUMMARY) or {}
    return {"key": run.key, "kind": run.kind, "path": str(run.path), "in_progress": in_progress(run),
            "model": (summary.get("run") or {}).get("model"), "episodes": len(rows_of(run)),
            "stamp": live_stamp(run)}


def live_stamp(run: Run) -> str:
    """Return a token that changes when the run's files change or its eval starts or stops."""
    return f"{stamp(run)}|running:{in_progress(run)}"


def run_data(run: Run) -> dict:
    """Return a run as the run page shows it: info, summary.json, config.json and one row per episode."""
    return {**run_info(run), "summary": read_json(run, SUMMARY), "config": read_json(run, CONFIG),
            "rows": rows_of(run)}


def rows_of(run: Run) -> list[dict]:
    """Return the run's episodes as results.jsonl rows (a store-only run's are made from the store's columns)."""
    if run.kind == "eval":
        return read_jsonl(run, RESULTS)
    if run.kind != "store":
        return []
    return [_store_row(s) for s in _store(run).summaries()]


def _store_row(summary: dict) -> dict:
    """Return a store's indexed columns under the names results.jsonl rows use."""
    return {"trajectory_id": summary["id"], "problem_id": summary["problem_id"], "task_type": summary["task_type"],
            "family": summary["family"], "target": summary["target"], "attempt": summary["attempt"],
            "seed": summary["seed"], "model": summary["model"], "success": summary["success"],
            "strict_success": summary["strict_success"], "model_steps": summary["steps_count"],
            "model_in_tokens": summary["input_tokens"], "model_out_tokens": summary["output_tokens"],
            "seconds": (summary["ended_at"] or 0) - (summary["started_at"] or 0), "error": summary["error"],
            "failure": None if summary["success"] else ("model_error" if summary["error"] else "failed")}


def _store(run: Run) -> TrajectoryStore:
    """Open the run's store (it exists: runs are found by their files)."""
    return TrajectoryStore(inside(run, STORE), readonly=True)


def episode(run: Run, trajectory_id: str) -> dict | None:
    """Return one episode of the run: its trajectory with each step's reply parsed, audit lines, row and verdicts."""
    if not (run.path / STORE).is_file():
        return None
    traj = _store(run).get(trajectory_id)
    if traj is None:
        return None
    data = traj.to_dict()
    for step in data["steps"]:
        step["messages"] = len(step["messages"] or [])  # the prompts are training data, not the story
        step["reply"] = _parsed(step["text"])
    row = next((r for r in rows_of(run) if r.get("trajectory_id") == traj.id), {})
    audit = [line for line in read_jsonl(run, AUDIT) if line.get("episode") == traj.id]
    return {**data, "run": run.key, "row": row, "audit": audit, "verdicts": verdicts(traj, row),
            "tokens": dict(zip(("input", "output"), traj.tokens()))}


def _parsed(text: str) -> dict | None:
    """Return a reply's JSON object (an Observer decision, a tool call), or None when it is not one."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def verdicts(traj, row: dict) -> dict:
    """Return both verdicts with what they rest on: AIOpsLab's results, the strict rule, the expected answer."""
    from aoi.problems import make

    try:
        answers = make(traj.problem_id, traj.target).answers
        expected = {TaskType.DETECTION: answers.detection, TaskType.LOCALIZATION: list(answers.localization),
                    TaskType.ANALYSIS: {"system_level": answers.system_level, "fault_type": answers.fault_type},
                    }.get(traj.task_type)
    except (ValueError, KeyError):
        expected = None  # a scenario or a problem this catalogue no longer has
    strict_rule = ("the faulted component restored and the whole app healthy once it settled"
                   if traj.task_type == TaskType.MITIGATION else "an accepted submit of exactly the expected answer")
    return {"aiopslab": succeeded(traj.results), "strict": traj.strict_success, "results": traj.results,
            "submission": traj.submission, "expected": expected, "strict_rule": strict_rule,
            "failure": row.get("failure"), "error": traj.error, "forced_submit": traj.forced_submit}


def training(run: Run) -> dict:
    """Return a training run's manifest and its reward lines by step (the last line of a step wins)."""
    try:
        steps = read_steps(inside(run, METRICS))
    except OSError:
        steps = []  # no metrics yet
    return {"manifest": read_json(run, MANIFEST), "steps": steps}


def problem_href(problem: str) -> str:
    """Return the file name of a problem's static page (the report links to it); a target's " @" becomes "@".

    Example:
        >>> problem_href("noop_detection_hotel_reservation-1"), problem_href("p @geo")
        ('p-noop_detection_hotel_reservation-1.html', 'p-p@geo.html')
    """
    return "p-" + re.sub(r"[^A-Za-z0-9._@-]", "", problem.replace(" @", "@")) + ".html"


def trajectory_href(trajectory_id: str) -> str:
    """Return the file name of a trajectory's static page (the report links to it).

    Example:
        >>> trajectory_href("a99f8ac4")
        't-a99f8ac4.html'
    """
    return "t-" + re.sub(r"[^A-Za-z0-9._-]", "", trajectory_id) + ".html"
