"""`aoi run`: one problem, the AOI team, live progress, the verdict, the trajectory saved."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from aoi.config.schema import models_line

ROLE_STYLE = {"observer": "bold cyan", "probe": "green", "executor": "yellow", "compressor": "dim"}
# What keeps third-party libraries quiet (transformers' warnings, tqdm bars such as GGUF de-quantizing and weight
# loading, Python warnings, the tokenizers fork notice); set in the environment so eval's worker processes inherit it.
QUIET_ENV = {"TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1",
             "PYTHONWARNINGS": "ignore", "TOKENIZERS_PARALLELISM": "false"}
VERBOSE_HELP = "Show third-party warnings, logs and progress bars (transformers, Hugging Face, tqdm)."
GUIDANCE_HELP = ("Guidance JSONL from `aoi evolve guidance`: the entries most similar to the findings go into the "
                 "Observer's prompt (config agent.guidance; the trajectory records which were shown).")


def quiet_libraries(verbose: bool = False) -> None:
    """Silence third-party warnings and progress bars unless `verbose`; a variable the user set is kept.

    Example:
        >>> quiet_libraries(verbose=True)  # changes nothing
    """
    if verbose:
        return
    for name, value in QUIET_ENV.items():
        os.environ.setdefault(name, value)
    warnings.simplefilter("ignore")
    if "transformers" in sys.modules:  # imported already: its logger read the environment before we set it
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()


ACTION_WIDTH, DECISION_WIDTH = 200, 300  # characters of a command / a decision shown live (the trajectory keeps all)
# The verdict's labels: AIOpsLab's result keys say neither what they count nor their unit.
LABELS = {"TTD": "TTD (s)", "TTL": "TTL (s)", "TTA": "TTA (s)", "TTM": "TTM (s)", "steps": "env steps",
          "strict_success": "strict success", "strict_settle_seconds": "strict settle (s)"}


def _show_step(console: Console, step) -> None:
    """Print one step of the episode as it happens; a long command or decision is cut with an ellipsis."""
    from aoi.clierrors import clip

    style = ROLE_STYLE.get(step.role, "white")
    if step.role == "observer" and not step.action:
        try:
            decision = json.loads(step.text[step.text.find("{"):step.text.rfind("}") + 1])
        except ValueError:
            decision = {}
        summary = f"{decision.get('phase', '?')} -> {decision.get('next', '?')}: {decision.get('instruction', '')}"
        console.print(f"[{style}]observer[/] {escape(clip(summary, DECISION_WIDTH) if decision else step.status)}")
        return
    what = step.action.replace("```", "").strip() or step.status
    console.print(f"  [{style}]{step.role}[/] {escape(clip(what, ACTION_WIDTH))}")
    if step.observation and step.status != "ok":
        console.print(f"    [dim]{escape(clip(step.observation, ACTION_WIDTH))}[/]")


def verdict_rows(traj) -> list[tuple[str, str]]:
    """Return the verdict as labelled rows: times in seconds, environment steps and tokens apart from the model's.

    Example:
        >>> from aoi.trajectory import Step, Trajectory
        >>> traj = Trajectory("p", "mitigation", id="t1", steps=[Step("probe", "{}", input_tokens=36338)],
        ...                   results={"TTM": 225.0, "steps": 15, "in_tokens": 9412, "out_tokens": 608})
        >>> verdict_rows(traj)[:3]
        [('TTM (s)', '225.0'), ('env steps', '15'), ('env tokens (in/out)', '9,412/608')]
        >>> verdict_rows(traj)[3:]
        [('model calls', '1'), ('model tokens (in/out)', '36,338/0'), ('trajectory', 't1')]
    """
    results = traj.results or {}
    rows = [(LABELS.get(str(key), str(key)), str(value)) for key, value in results.items()
            if key not in ("in_tokens", "out_tokens")]
    if "in_tokens" in results:
        rows.append(("env tokens (in/out)", f"{results['in_tokens']:,}/{results.get('out_tokens', 0):,}"))
    inputs, outputs = traj.tokens()
    return [*rows, ("model calls", str(len(traj.steps))), ("model tokens (in/out)", f"{inputs:,}/{outputs:,}"),
            ("trajectory", traj.id)]


def _verdict(console: Console, traj) -> None:
    """Print the results table (the trajectory id never wraps)."""
    table = Table(title=f"{traj.problem_id} ({traj.task_type})")
    table.add_column("key", no_wrap=True)
    table.add_column("value", overflow="fold", min_width=len(traj.id))
    for key, value in verdict_rows(traj):
        table.add_row(key, escape(value))
    console.print(table)


def run(
    problem_id: str = typer.Argument(..., help="An AIOpsLab problem id (see `aoi problems list`)."),
    model: str | None = typer.Option(None, "--model", help="Model spec, e.g. expert, openai:gpt-4o-mini, "
                                     "ollama:qwen2.5:7b, local:smollm2 (default: config or expert)."),
    target: str | None = typer.Option(None, "--target", help="Move the fault to another valid component."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the twin (names, IPs, timings)."),
    max_steps: int | None = typer.Option(None, "--max-steps", help="Environment actions before the episode ends."),
    config_file: Path | None = typer.Option(None, "--config", help="A YAML/TOML config (default: ./aoi.yaml)."),
    approval: str | None = typer.Option(None, "--approval", help="Executor approval: auto, ask or deny."),
    backend: str | None = typer.Option(None, "--backend", help="twin (default) or cluster (your own cluster: "
                                       "apps deployed, `aoi rbac` applied)."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help="Admin kubeconfig of the cluster "
                                           "(--backend cluster)."),
    guidance: Path | None = typer.Option(None, "--guidance", help=GUIDANCE_HELP),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
) -> None:
    """Play one problem with the AOI team, showing its progress; save the trajectory (help line: aoi.cli.LAZY)."""
    quiet_libraries(verbose)
    from aoi.agents.runtime import check_models, models_from_config, run_episode
    from aoi.clierrors import RUN_FIX, fail, path_errors, writable
    from aoi.config import ConfigError, load_config
    from aoi.env import backend_options, make
    from aoi.env.cluster_access import ClusterError
    from aoi.interrupts import interruptible
    from aoi.models.base import ModelError
    from aoi.safety.approval import require_terminal
    from aoi.safety.audit import AuditLog
    from aoi.store.sqlite import TrajectoryStore

    console = Console()
    overrides = {"model": model, "env.seed": seed, "env.max_steps": max_steps, "env.target": target,
                 "approval.mode": approval, "env.backend": backend, "env.kubeconfig": kubeconfig,
                 "agent.guidance.file": guidance}
    try:
        config = load_config(config_file, {k: v for k, v in overrides.items() if v is not None})
        require_terminal(config.approval.mode)
        check_models(config)
        env = make(problem_id, seed=config.env.seed, target=config.env.target, max_steps=config.env.max_steps,
                   **backend_options(config.env))
        models = models_from_config(config)
    except (ConfigError, ValueError, ModelError) as exc:
        raise fail(str(exc)) from None
    with path_errors(None, RUN_FIX):  # runs/ in a read-only folder: say so before any work
        writable(config.store.path, config.store.audit_log)
        store = TrajectoryStore(config.store.path)
    audit = AuditLog(config.store.audit_log)
    where = f"the twin (seed {config.env.seed})" if config.env.backend == "twin" else f"{config.env.kubeconfig}"
    console.print(f"[bold]{problem_id}[/] on {where} with {escape(models_line(config.role_specs()))}")
    try:
        with interruptible():  # Ctrl-C (or kill -INT of a job started with `&`) saves the partial trajectory
            traj = run_episode(env, config, models, audit=audit, on_step=lambda s: _show_step(console, s))
    except ClusterError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt as exc:  # keep what the episode did so far, marked interrupted (traj.error)
        partial = getattr(exc, "trajectory", None)
        if partial is None:  # stopped while the environment was still being set up
            console.print("[yellow]interrupted[/] before the episode started; nothing to save")
        else:
            store.save(partial)
            console.print(f"[yellow]interrupted:[/] partial trajectory saved as {partial.id} in {config.store.path}")
        raise typer.Exit(130) from None
    finally:
        env.close()
    store.save(traj)
    _verdict(console, traj)
    if traj.error:
        raise fail(f"the episode ended early: {traj.error}", code=1)
