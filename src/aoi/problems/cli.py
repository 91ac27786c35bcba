"""`aoi problems list` and `aoi problems show`: browse the problem catalogue."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from aoi.problems.families import FAMILIES
from aoi.problems.model import TASK_TYPES
from aoi.problems.registry import entry, list_problems, make
from aoi.problems.targets import describe

problems_app = typer.Typer(help="The AIOpsLab problem catalogue: ids, targets, answers.", no_args_is_help=True)


def _console() -> Console:
    return Console(width=200, soft_wrap=True)


@problems_app.command("list")
def list_command(
    task_type: Optional[str] = typer.Option(None, "--task-type", help=f"One of: {', '.join(TASK_TYPES)}."),
    app: Optional[str] = typer.Option(None, "--app", help="hotel-reservation, social-network, astronomy-shop, flower."),
) -> None:
    """Print the problems in registry order: id, task type, app, family, target, backend."""
    if task_type is not None and task_type not in TASK_TYPES:
        raise typer.BadParameter(f"unknown task type {task_type!r}; choose from {', '.join(TASK_TYPES)}",
                                 param_hint="--task-type")
    apps = sorted({f.app for f in FAMILIES})
    if app is not None and app not in apps:
        raise typer.BadParameter(f"unknown app {app!r}; choose from {', '.join(apps)}", param_hint="--app")
    table = Table("id", "task type", "app", "family", "target", "backend", box=None)
    problems = list_problems(task_type, app)
    for p in problems:
        table.add_row(p.id, p.task_type, p.app, p.family, p.target or "-", p.backend)
    _console().print(table)
    _console().print(f"{len(problems)} problems")


@problems_app.command("show")
def show_command(
    problem_id: str = typer.Argument(..., help="A problem id, e.g. revoke_auth_mongodb-mitigation-1."),
    target: Optional[str] = typer.Option(None, "--target", help="Aim the fault at another valid target."),
) -> None:
    """Print everything about one problem: answers, fault, workload, oracle, valid targets."""
    try:
        p = make(problem_id, target)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="PROBLEM_ID / --target") from None
    rows = [("id", p.id), ("task type", p.task_type), ("app", p.app), ("namespace", p.namespace),
            ("family", p.family), ("backend", p.backend), ("target", p.target or "-"),
            ("answer", _answers(p)), ("all answers", _all_answers(p)),
            ("fault", f"{p.fault.mechanism} {json.dumps(dict(p.fault.params))}"),
            ("expected after a fix", json.dumps(dict(p.fault.expect))),
            ("workload", _workload(p)), ("parity oracle", p.parity if p.task_type == "mitigation" else "-"),
            ("valid targets", f"{describe(entry(p.id).family.rule)}: {', '.join(p.valid_targets) or '-'}")]
    try:
        p.require_backend("twin")
    except ValueError as exc:
        rows.append(("note", str(exc)))
    table = Table(show_header=False, box=None)
    for key, value in rows:
        table.add_row(key, value)
    _console().print(table)


def _answers(p) -> str:
    """Return the answer the problem's task type expects, in submit() form."""
    a = p.answers
    return {"detection": f'submit("{a.detection}")',
            "localization": f"submit({list(a.localization[:1])})" + (f"  (also accepted: {list(a.localization[1:])})"
                                                                     if len(a.localization) > 1 else ""),
            "analysis": f'submit({{"system_level": "{a.system_level}", "fault_type": "{a.fault_type}"}})',
            "mitigation": "submit() after the fix"}[p.task_type]


def _all_answers(p) -> str:
    """Return the family's answers for every task type."""
    a = p.answers
    return (f"detection {a.detection!r}; localization {list(a.localization)}; "
            f"analysis {a.system_level!r} / {a.fault_type!r}")


def _workload(p) -> str:
    w = p.workload
    if w is None:
        return "none"
    return (f"wrk2 {w.script} -> http://<{w.service} ClusterIP>:{w.port}{w.path}  rate {w.rate}/s, {w.duration}s, "
            f"dist {w.dist}, {w.connections} connections, {w.threads} threads")
