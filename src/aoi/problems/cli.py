"""`aoi problems list` and `aoi problems show`: browse the problem catalogue."""

from __future__ import annotations

import json
import os

import typer
from rich.console import Console
from rich.table import Table

from aoi.problems.families import FAMILIES
from aoi.problems.registry import entry, list_problems, make
from aoi.problems.targets import describe
from aoi.tasks import TASK_TYPES, TaskType

problems_app = typer.Typer(no_args_is_help=True)  # its help line: aoi.cli.LAZY
WIDE = 200  # width for pipes (grep, less -S): one problem a line, ids never folded


def _console() -> Console:
    """Return a console as wide as the terminal (or COLUMNS); output to a pipe gets WIDE lines, unfolded."""
    console = Console()
    return console if console.is_terminal or os.environ.get("COLUMNS") else Console(width=WIDE, soft_wrap=True)


def aiopslab_order(problems: list) -> list:
    """Return problems in AIOpsLab's PROBLEM_REGISTRY order: family by family, each instance's task types in turn.

    (aoi.problems.registry lists task type by task type, as AIOpsLab's get_problem_ids(task_type) returns them.)

    Example:
        >>> [p.id for p in aiopslab_order(list_problems(app="social-network"))][:2]
        ['k8s_target_port-misconfig-detection-1', 'k8s_target_port-misconfig-localization-1']
    """
    position = {id(family): n for n, family in enumerate(FAMILIES)}

    def key(p):
        family = entry(p.id).family
        return position[id(family)], family.targets.index(entry(p.id).target), family.tasks.index(p.task_type)
    return sorted(problems, key=key)


def problem_record(p) -> dict:
    """Return one problem as JSON-ready data: id, app, task type, family, target, backend, namespace, targets."""
    return {"id": p.id, "app": p.app, "task_type": p.task_type, "family": p.family, "target": p.target,
            "backend": p.backend, "namespace": p.namespace, "valid_targets": list(p.valid_targets)}


COLUMNS = ("id", "task type", "app", "family", "target", "backend")
DROP = ["backend", "family", "task type", "app", "target"]  # hidden in this order where the ids need the room
SHRINK = {"family": 12, "target": 12}  # cut with an ellipsis down to this many characters before anything is hidden


def _table(problems: list, width: int) -> tuple[Table, str | None]:
    """Return the listing as wide as `width` and a note naming any column left out: ids are never cut or folded;
    family and target are cut with an ellipsis first, then columns are hidden (backend, family, task type, app)."""
    from aoi.clierrors import fit_columns, table_width

    cells = [{"id": p.id, "task type": p.task_type, "app": p.app, "family": p.family, "target": p.target or "-",
              "backend": p.backend} for p in problems]
    widths = {name: max([len(name), *(len(row[name]) for row in cells)]) for name in COLUMNS}
    shown, hidden = fit_columns(widths, width, DROP, SHRINK)
    table = Table(box=None, pad_edge=False)
    for name, size in shown.items():
        table.add_column(name, width=size, no_wrap=True, overflow="ellipsis")
    for row in cells:
        table.add_row(*(row[name] for name in shown))
    note = None
    if hidden:
        left_out = ", ".join(c for c in COLUMNS if c in hidden)
        note = (f"{left_out} not shown at {width} columns: `aoi problems list --json` or a terminal of "
                f"{table_width(widths)}+ columns shows every column")
    return table, note


@problems_app.command("list")
def list_command(
    task_type: str | None = typer.Option(None, "--task-type", help=f"One of: {', '.join(TASK_TYPES)}."),
    app: str | None = typer.Option(None, "--app", help="hotel-reservation, social-network, astronomy-shop, flower."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list, one object per problem."),
) -> None:
    """Print the problems in AIOpsLab's registry order: id, task type, app, family, target, backend (on a narrow
    terminal the ids stay whole and a line names the columns left out)."""
    if task_type is not None and task_type not in TASK_TYPES:
        raise typer.BadParameter(f"unknown task type {task_type!r}; choose from {', '.join(TASK_TYPES)}",
                                 param_hint="--task-type")
    apps = sorted({f.app for f in FAMILIES})
    if app is not None and app not in apps:
        raise typer.BadParameter(f"unknown app {app!r}; choose from {', '.join(apps)}", param_hint="--app")
    problems = aiopslab_order(list_problems(task_type, app))
    if as_json:
        typer.echo(json.dumps([problem_record(p) for p in problems], indent=1))
        return
    console = _console()
    table, note = _table(problems, console.width)
    console.print(table)
    console.print(f"{len(problems)} problems" + (f"; {note}" if note else ""))


@problems_app.command("show")
def show_command(
    problem_id: str = typer.Argument(..., help="A problem id, e.g. revoke_auth_mongodb-mitigation-1."),
    target: str | None = typer.Option(None, "--target", help="Aim the fault at another valid target."),
) -> None:
    """Print everything about one problem: its id on a line of its own, answers, fault, workload, oracle, targets."""
    try:
        p = make(problem_id, target)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="PROBLEM_ID / --target") from None
    rows = [("task type", p.task_type), ("app", p.app), ("namespace", p.namespace),
            ("family", p.family), ("backend", p.backend), ("target", p.target or "-"),
            ("answer", _answers(p)), ("all answers", _all_answers(p)),
            ("fault", f"{p.fault.mechanism} {json.dumps(dict(p.fault.params))}"),
            ("expected after a fix", json.dumps(dict(p.fault.expect))),
            ("workload", _workload(p)), ("parity oracle", p.parity if p.task_type == TaskType.MITIGATION else "-"),
            ("valid targets", f"{describe(entry(p.id).family.rule)}: {', '.join(p.valid_targets) or '-'}")]
    try:
        p.require_backend("twin")
    except ValueError as exc:
        rows.append(("note", str(exc)))
    table = Table(show_header=False, box=None)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")  # long paths and lists fold, never cut
    for key, value in rows:
        table.add_row(key, value)
    console = _console()
    console.print(f"[bold]{p.id}[/]", soft_wrap=True)  # the id on a line of its own: never folded
    console.print(table)


def _answers(p) -> str:
    """Return the answer the problem's task type expects, in submit() form."""
    a = p.answers
    also = f"  (also accepted: {list(a.localization[1:])})" if len(a.localization) > 1 else ""
    return {TaskType.DETECTION: f'submit("{a.detection}")',
            TaskType.LOCALIZATION: f"submit({list(a.localization[:1])}){also}",
            TaskType.ANALYSIS: f'submit({{"system_level": "{a.system_level}", "fault_type": "{a.fault_type}"}})',
            TaskType.MITIGATION: "submit() after the fix"}[p.task_type]


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
