"""`aoi trajectories list|show|export`: read the trajectory store by the ids `aoi run` and reports print."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

trajectories_app = typer.Typer(no_args_is_help=True)  # its help line: aoi.cli.LAZY
STORE_HELP = "The store: a .db file, or a run directory of `aoi eval --out` (default: store.path of the config)."
SHORT = 12  # characters of an id listed (48 bits: unambiguous in any store of a realistic size)
EXCERPT = 240  # characters of an observation shown per step (--full and --json have them whole)


def _fail(message: str) -> typer.Exit:
    """Print one red line on stderr and return the exit to raise (status 2)."""
    from aoi.clierrors import fail

    return fail(message)


def open_store(store: Path | None, config_file: Path | None = None):
    """Return the TrajectoryStore named by --store (a file or a run directory) or by the config; never create one."""
    from aoi.config import ConfigError, load_config
    from aoi.store.sqlite import StoreError, TrajectoryStore

    try:
        path = Path(store) if store else load_config(config_file).store.path
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    path = path / "trajectories.db" if path.is_dir() else path
    if not path.is_file():
        raise _fail(f"no trajectory store at {path}; pass --store with a .db file or an `aoi eval --out` directory")
    try:
        return TrajectoryStore(path)
    except StoreError as exc:
        raise _fail(str(exc)) from None


def resolve(store, given: str):
    """Return the trajectory whose id is `given` or starts with it; exit 2 when none or several match."""
    traj = store.get(given)
    if traj is not None:
        return traj
    matches = store.ids_starting(given) if given else []
    if len(matches) == 1:
        return store.get(matches[0])
    if matches:
        raise _fail(f"{given!r} starts more than one trajectory id in {store.path}; give more characters")
    raise _fail(f"no trajectory {given!r} in {store.path}; `aoi trajectories list --store {store.path}` shows the ids")


def _when(timestamp: float | None) -> str:
    """Return a start time as UTC 'YYYY-MM-DD HH:MM'."""
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(timestamp or 0))


def _verdict(success: bool | None) -> str:
    return "-" if success is None else "yes" if success else "no"


@trajectories_app.command("list")
def list_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    limit: int = typer.Option(20, "--limit", min=1, help="How many of the most recent episodes."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line (every indexed column)."),
    config_file: Path | None = typer.Option(None, "--config", help="A YAML/TOML config (default: ./aoi.yaml)."),
) -> None:
    """List the most recent episodes, newest first: id, start, problem, model, success/strict, model calls."""
    rows = open_store(store, config_file).recent(limit)
    if as_json:
        typer.echo("".join(json.dumps(row) + "\n" for row in rows), nl=False)
        return
    console = Console()
    table, note = _listing(rows, console.width)
    console.print(table)
    console.print(f"{len(rows)} trajectories (started: UTC); `aoi trajectories show ID` prints one"
                  + (f"; {note}" if note else ""))


LIST_COLUMNS = ("id", "started", "problem", "model", "ok/strict", "model calls")


def _listing(rows: list[dict], width: int) -> tuple[Table, str | None]:
    """Return the listing as wide as `width` and a note naming any column left out: ids (trajectory and problem)
    are never cut; the model is cut with an ellipsis first, then model, started and model calls are hidden."""
    from aoi.clierrors import fit_columns, table_width

    cells = [{"id": row["id"][:SHORT], "started": _when(row["started_at"])[5:], "problem": row["problem_id"],
              "model": row["model"] or "-", "model calls": str(row["steps_count"]),
              "ok/strict": f"{_verdict(row['success'])}/{_verdict(row['strict_success'])}"} for row in rows]
    widths = {name: max([len(name), *(len(row[name]) for row in cells)]) for name in LIST_COLUMNS}
    shown, hidden = fit_columns(widths, width, ["model", "started", "model calls"], {"model": 12})
    table = Table(box=None, pad_edge=False)
    for name, size in shown.items():  # ids cut to SHORT (git-style): `show` takes any unambiguous prefix
        table.add_column(name, width=size, no_wrap=True, overflow="ellipsis",
                         justify="right" if name == "model calls" else "left")
    for row in cells:
        table.add_row(*(escape(row[name]) for name in shown))
    if not hidden:
        return table, None
    return table, (f"{', '.join(c for c in LIST_COLUMNS if c in hidden)} not shown at {width} columns: --json or a "
                   f"terminal of {table_width(widths)}+ columns shows them")


def _models(traj) -> str:
    """Return each role's model as the run's resolved config recorded it (older records: the policy's model)."""
    from aoi.config.schema import models_line

    roles = traj.config.get("models") or {}
    specs = {role: m["spec"] for role, m in roles.items() if isinstance(m, dict) and m.get("spec")}
    return models_line(specs) if specs else traj.policy.model


def header_rows(traj) -> list[tuple[str, str]]:
    """Return the header of a trajectory: what ran, on what, with which models, and the verdicts."""
    from aoi.tasks import succeeded

    inputs, outputs = traj.tokens()
    seconds = max(traj.ended_at - traj.started_at, 0)
    rows = [("trajectory", traj.id),
            ("problem", f"{traj.problem_id} ({traj.task_type}, family {traj.family or '-'}, "
                        f"target {traj.target or '-'})"),
            ("run", f"{traj.backend}, seed {traj.seed}, attempt {traj.attempt}, started {_when(traj.started_at)} UTC, "
                    f"{seconds:.1f} s"),
            ("model(s)", _models(traj)),
            ("success", f"parity {_verdict(succeeded(traj.results))}, strict {_verdict(traj.strict_success)}"),
            ("results", json.dumps(traj.results, default=str)), ("model tokens", f"{inputs} in, {outputs} out")]
    return rows + ([("error", traj.error)] if traj.error else [])


def _excerpt(text: str) -> str:
    """Return the start of a text, cut at EXCERPT characters (saying how long it was)."""
    text = text.strip()
    return text if len(text) <= EXCERPT else text[:EXCERPT].rstrip() + f" ... ({len(text)} chars)"


def print_trajectory(console: Console, traj, full: bool = False) -> None:
    """Print a trajectory's header, then each step: role, status, action, observation (an excerpt unless full)."""
    header = Table(show_header=False, box=None)
    header.add_column(style="bold", no_wrap=True)
    header.add_column(overflow="fold")
    for key, value in header_rows(traj):
        header.add_row(key, escape(value))
    console.print(header)
    for n, step in enumerate(traj.steps, 1):
        status = "" if step.status == "ok" else f" [{step.status}]"
        console.print(f"\n[bold]#{n} {step.role}[/]{escape(status)}  t={step.t:.1f}s  model tokens "
                      f"{step.input_tokens} in / {step.output_tokens} out")
        what = step.action.strip() or _excerpt(step.text)
        console.print(escape(what.replace("```", "").strip()) or "-", style="cyan")
        if step.observation:
            console.print(escape(step.observation.strip() if full else _excerpt(step.observation)), style="dim")


@trajectories_app.command("show")
def show_command(
    trajectory_id: str = typer.Argument(..., help="A trajectory id (as `aoi run` prints it) or its unique prefix."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP + " Without it, the run folders under the "
                                      "working directory are searched for the id too."),
    as_json: bool = typer.Option(False, "--json", help="Print the stored record as JSON instead."),
    full: bool = typer.Option(False, "--full", help="Print every observation whole (by default each is cut at "
                              f"{EXCERPT} characters)."),
    config_file: Path | None = typer.Option(None, "--config", help="A YAML/TOML config (default: ./aoi.yaml)."),
) -> None:
    """Print one trajectory: problem, models, verdicts, then every step with its action and observation."""
    traj = resolve(open_store(store, config_file), trajectory_id) if store else find(trajectory_id, config_file)
    if as_json:
        typer.echo(json.dumps(traj.to_dict(), indent=2, default=str, ensure_ascii=False))
        return
    print_trajectory(Console(), traj, full=full)


def find(given: str, config_file: Path | None):
    """Return the trajectory `given` names from the configured store, else from the one run folder that holds it."""
    from aoi.config import ConfigError, load_config
    from aoi.store.locate import find_stores, stores_holding

    try:
        default = load_config(config_file).store.path
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    default = default / "trajectories.db" if default.is_dir() else default
    searched = [default] if default.is_file() else []
    searched += [p for p in find_stores(Path.cwd()) if not (default.is_file() and p.samefile(default))]
    holding = stores_holding(given, searched)
    if len(holding) == 1 and len(holding[0][1]) == 1:
        return open_store(holding[0][0]).get(holding[0][1][0])
    if len(holding) == 1:
        raise _fail(f"{given!r} starts more than one trajectory id in {holding[0][0]}; give more characters")
    if holding:
        raise _fail(f"{given!r} is in {len(holding)} stores ({', '.join(str(p) for p, _ in holding)}); pass --store "
                    "with the one you mean")
    where = default if default.is_file() else f"{default} (no such file)"
    others = len(searched) - default.is_file()
    raise _fail(f"no trajectory {given!r} in {where} or the {others} other store(s) under {Path.cwd()}; pass "
                "--store RUN_DIR (the folder of `aoi eval --out`) or --store FILE.db")


@trajectories_app.command("export")
def export_command(
    trajectory_ids: list[str] = typer.Argument(..., help="Trajectory ids (or unique prefixes)."),
    out: Path = typer.Option(..., "--out", help="The JSONL file to write (one trajectory per line)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    config_file: Path | None = typer.Option(None, "--config", help="A YAML/TOML config (default: ./aoi.yaml)."),
) -> None:
    """Write trajectories to a JSONL file, one stored record per line, in the order given."""
    from aoi.clierrors import path_errors
    from aoi.store.export import to_jsonl

    opened = open_store(store, config_file)
    trajs = [resolve(opened, given) for given in trajectory_ids]
    with path_errors(None, "pass --out FILE in a writable place"):
        count = to_jsonl(trajs, out)
    typer.echo(f"wrote {count} trajectories to {out}")
