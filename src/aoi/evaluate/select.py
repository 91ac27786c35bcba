"""Choose what an eval runs: problem ids (all or a list), filtered by task type and app, optionally every target."""

from __future__ import annotations

from aoi.problems import TASK_TYPES, Problem, list_problems
from aoi.problems import make as make_problem
from aoi.problems.families import FAMILIES


def _problems(ids: str, task_type: str | None, app: str | None) -> list[Problem]:
    """Resolve `all` or a comma-separated id list, then apply the filters."""
    if task_type is not None and task_type not in TASK_TYPES:
        raise ValueError(f"unknown task type {task_type!r}; choose from {', '.join(TASK_TYPES)}")
    apps = sorted({f.app for f in FAMILIES})
    if app is not None and app not in apps:
        raise ValueError(f"unknown app {app!r}; choose from {', '.join(apps)}")
    if ids.strip() == "all":
        return list_problems(task_type, app)
    chosen = [make_problem(pid.strip()) for pid in ids.split(",") if pid.strip()]
    if not chosen:
        raise ValueError("--problems is empty; pass all or a comma-separated list of ids (see `aoi problems list`)")
    return [p for p in chosen if (task_type in (None, p.task_type)) and (app in (None, p.app))]


def select(ids: str = "all", task_type: str | None = None, app: str | None = None,
           targets: str | None = None) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Return ((problem_id, target) pairs to run, notes on what was skipped).

    `targets="all"` expands each problem to every valid target of its family; problems that need another backend
    than the twin (the Flower ids) are skipped with a note.

    Example:
        >>> pairs, notes = select("all", task_type="detection")
        >>> len(pairs), "flower_node_stop-detection" in notes[0]
        (32, True)
        >>> len(select("k8s_target_port-misconfig-mitigation-1", targets="all")[0]) > 1
        True
    """
    if targets not in (None, "default", "all"):
        raise ValueError(f"--targets takes 'all' (every valid target) or nothing (each problem's default), "
                         f"not {targets!r}")
    problems = _problems(ids, task_type, app)
    skipped = [p.id for p in problems if p.backend != "twin"]
    note = (f"skipped {len(skipped)} problem(s) that need the aiopslab backend (Docker Compose apps the twin does "
            f"not simulate): {', '.join(skipped)}")
    notes = [note] if skipped else []
    pairs: list[tuple[str, str | None]] = []
    for p in (p for p in problems if p.backend == "twin"):
        every = targets == "all" and p.valid_targets
        pairs += [(p.id, t) for t in p.valid_targets] if every else [(p.id, None)]
    return pairs, notes
