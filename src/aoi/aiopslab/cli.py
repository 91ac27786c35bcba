"""`aoi aiopslab run|eval` (AOI inside real AIOpsLab) and `aoi rbac` (the probe/executor identities for a cluster)."""

from __future__ import annotations

from pathlib import Path

import typer

aiopslab_app = typer.Typer(no_args_is_help=True)  # its help line: aoi.cli.LAZY
MODEL_HELP = "Model spec, e.g. expert, openai:gpt-4o-mini, ollama:qwen2.5:7b (default: config or expert)."


def _config(config_file: Path | None, overrides: dict):
    """Load the run configuration, turning errors into a clean exit."""
    from aoi.config import ConfigError, load_config

    try:
        return load_config(config_file, {k: v for k, v in overrides.items() if v is not None})
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _fail(exc: Exception) -> None:
    """Print an error that says how to fix things, and exit."""
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2) from None


@aiopslab_app.command("run")
def aiopslab_run(
    problem_id: str = typer.Argument(..., help="An AIOpsLab problem id (see `aoi problems list`)."),
    model: str | None = typer.Option(None, "--model", help=MODEL_HELP),
    max_steps: int | None = typer.Option(None, "--max-steps", help="AIOpsLab's max_steps (default: env.max_steps)."),
    out: Path = typer.Option(Path("runs/aiopslab"), "--out", help="Folder for the episode's JSON record."),
    config_file: Path | None = typer.Option(None, "--config", help="A YAML/TOML config (default: ./aoi.yaml)."),
    approval: str | None = typer.Option(None, "--approval", help="Executor approval: auto, ask or deny."),
) -> None:
    """Solve one AIOpsLab problem on AIOpsLab's own cluster with the AOI agents; save both records side by side."""
    from aoi.aiopslab.runner import AIOpsLabMissing, episode_path, orchestrator, run_problem

    config = _config(config_file, {"model": model, "env.max_steps": max_steps, "approval.mode": approval})
    try:
        make = orchestrator()  # checks the installation before any model loads
        record = run_problem(problem_id, config, out=out, make_orchestrator=lambda: make)
    except AIOpsLabMissing as exc:
        _fail(exc)
    typer.echo(f"{problem_id}: success={record['success']} results={record['aiopslab']['results']}")
    typer.echo(f"saved {episode_path(out, problem_id, 0)} (trajectory {record['trajectory']['id']})")
    if record["error"]:
        typer.echo(f"error: the episode ended early: {record['error']}", err=True)
        raise typer.Exit(1)


@aiopslab_app.command("eval")
def aiopslab_eval(
    problems: str = typer.Option("all", "--problems", help="all, or comma-separated problem ids."),
    task_type: str | None = typer.Option(None, "--task-type", help="Keep ids containing this (e.g. detection)."),
    k: int = typer.Option(1, "-k", min=1, help="Attempts per problem."),
    model: str | None = typer.Option(None, "--model", help=MODEL_HELP),
    max_steps: int | None = typer.Option(None, "--max-steps", help="AIOpsLab's max_steps (default: env.max_steps)."),
    out: Path = typer.Option(Path("runs/aiopslab"), "--out", help="Folder for episode records, results.jsonl "
                             "and summary.json; rerun the same command to resume."),
    config_file: Path | None = typer.Option(None, "--config", help="A YAML/TOML config (default: ./aoi.yaml)."),
) -> None:
    """Run problems x k attempts on AIOpsLab, one after another, resuming what is missing; print the summary."""
    from aoi.aiopslab.runner import AIOpsLabMissing, eval_problems, orchestrator, select_problems

    config = _config(config_file, {"model": model, "env.max_steps": max_steps})
    try:
        ids = select_problems(problems, task_type, getattr(orchestrator(), "probs", None))
        summary = eval_problems(ids, config, k=k, out=out, make_orchestrator=orchestrator,
                                on_episode=lambda r: typer.echo(f"{r['problem_id']} a{r['attempt']}: "
                                                                f"success={r['success']}"))
    except AIOpsLabMissing as exc:
        _fail(exc)
    for name, row in summary.items():
        typer.echo(f"{name:14} episodes={row['episodes']} avg@k={row['avg@k']} best@k={row['best@k']}")


def rbac_command(
    namespace: list[str] = typer.Option(..., "--namespace", "-n", help="An app namespace the executor may change "
                                        "(repeatable)."),
) -> None:
    """Print the RBAC manifests of the probe and executor for the given namespaces (help line: aoi.cli.LAZY)."""
    from aoi.rbac import render

    typer.echo(render(list(dict.fromkeys(namespace))), nl=False)
