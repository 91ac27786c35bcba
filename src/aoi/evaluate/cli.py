"""`aoi eval` (problems x K attempts, resumable) and `aoi report` (Markdown + HTML, run comparisons)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from aoi.agents.cli import GUIDANCE_HELP, VERBOSE_HELP, quiet_libraries


def _console() -> Console:
    """Return a console as wide as the terminal (or COLUMNS); logs and pipes get the wide summary table."""
    console = Console()
    return console if console.is_terminal or os.environ.get("COLUMNS") else Console(width=200)


def eval_command(
    out: Path = typer.Option(..., "--out", help="Run directory: results.jsonl, summary.json, trajectories.db, "
                             "config.json. The same command with the same --out resumes; one eval per DIR at a time."),
    problems: str | None = typer.Option(None, "--problems", help="all (default), comma-separated problem ids, or "
                                        "scenarios:FILE (the four task types of each valid scenario in a JSON Lines "
                                        "file)."),
    keys: str | None = typer.Option(None, "--keys", help="Comma-separated problem keys problem_id@target (as "
                                    "splits.json writes them; ID@ runs the id's own target) instead of --problems; "
                                    "--task-type and --app filter them."),
    keys_file: Path | None = typer.Option(None, "--keys-file", help="A file of problem keys, one per line (# starts "
                                          "a comment), instead of --problems."),
    task_type: str | None = typer.Option(None, "--task-type", help="detection, localization, analysis or "
                                            "mitigation."),
    app: str | None = typer.Option(None, "--app", help="hotel-reservation, social-network or astronomy-shop."),
    targets: str | None = typer.Option(None, "--targets", help="all: every valid target of each problem's "
                                          "family (default: each problem's own target)."),
    k: int = typer.Option(1, "-k", "--k", help="Attempts per problem (attempt a runs with seed + a)."),
    workers: int = typer.Option(1, "--workers", help="Episodes run at once (one process each)."),
    model: str | None = typer.Option(None, "--model", help="Model spec, e.g. expert, openai:gpt-4o-mini "
                                        "(default: config or expert)."),
    seed: int | None = typer.Option(None, "--seed", help="Base seed (default: config, else 0)."),
    max_steps: int | None = typer.Option(None, "--max-steps", help="Environment actions per episode."),
    config_file: Path | None = typer.Option(None, "--config", help="A YAML/TOML config (default: ./aoi.yaml)."),
    executor: str = typer.Option("process", "--executor", help="process (default) or thread workers."),
    engine: str = typer.Option("local", "--engine", help="local: workers here (--executor); ray: episodes "
                               "spread over a Ray cluster, an actor per worker (pip install 'aoi\\[swarm]')."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="The Ray cluster of --engine ray, e.g. "
                                              "10.0.0.5:6379 (default: a local Ray instance with --workers CPUs)."),
    backend: str | None = typer.Option(None, "--backend", help="twin (default) or cluster: your own cluster "
                                          "(apps deployed, `aoi rbac` applied), faulted by AOI's injectors."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help="Admin kubeconfig of the cluster backend."),
    force_version: bool = typer.Option(False, "--force-version", help="Resume even though --out holds results of "
                                       "another environment version (aoi.env.ENV_VERSION); they are mixed."),
    split: str | None = typer.Option(None, "--split", help="Run one part of a dataset's split instead of "
                                        "--problems: [RULE:]PART, e.g. test or by_family:test (RULE: by_target)."),
    data: Path | None = typer.Option(None, "--data", help="The dataset folder (`aoi data export --out`) whose "
                                        "splits.json --split reads."),
    guidance: Path | None = typer.Option(None, "--guidance", help=GUIDANCE_HELP),
    approval: str | None = typer.Option(None, "--approval", help="Executor approval: auto (default), deny, or ask "
                                        "(on this terminal: --executor thread only)."),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
) -> None:
    """Play K attempts of each chosen problem into the run folder, resuming it (help line: aoi.cli.LAZY)."""
    quiet_libraries(verbose)
    from aoi.evaluate.runner import run_eval
    from aoi.evaluate.summary import summary_table

    console = _console()
    with _errors(console):
        overrides = {"model": model, "env.seed": seed, "env.max_steps": max_steps, "env.backend": backend,
                     "env.kubeconfig": str(kubeconfig) if kubeconfig else None,
                     "agent.guidance.file": str(guidance) if guidance else None, "approval.mode": approval}
        chosen = {"--keys": keys, "--keys-file": keys_file, "--split": split}
        config, pairs = _setup(console, config_file, overrides, (problems, task_type, app, targets, chosen, data),
                               workers)
        executor = engine_executor(engine, executor, ray_address)
        if config.approval.mode == "ask" and executor != "thread":
            raise ValueError(f"approval mode ask asks on this terminal, which {executor} workers cannot reach; pass "
                             "--executor thread, or --approval auto or deny")
        if config.env.backend == "cluster" and workers > 1:
            console.print("[yellow]note:[/] a cluster is shared by its episodes: running one at a time")
            workers = 1
        where = f" on Ray ({ray_address or 'a local instance'})" if executor == "ray" else ""
        console.print(f"{len(pairs)} problem(s) x k={k} with {config.model.spec}, {workers} worker(s){where} -> {out}")
        started = time.monotonic()
        summary = run_eval(pairs, k, workers, config, out, executor=executor, console=console,
                           force_version=force_version, ray_address=ray_address,
                           split={"split": split_name(split), "data": str(data)} if split else None)
    console.print(summary_table(summary, title=f"{out} ({config.model.spec})", width=console.width))
    console.print(f"wall {time.monotonic() - started:.0f}s this session; {summary.episodes_per_hour:.0f} episodes/h "
                  f"overall; summary in {out / 'summary.json'}; `aoi report {out}` writes the report")
    if summary.interrupted:
        raise typer.Exit(130)
    if summary.sessions and summary.sessions[-1].get("not_run"):
        from aoi.clierrors import fail

        not_run = summary.sessions[-1]["not_run"]
        raise fail(f"{len(not_run)} episode(s) could not run (first: {not_run[0]['error']}); fix that and run the "
                   f"same command again to run them", code=1)


@contextlib.contextmanager
def _errors(console: Console) -> Iterator[None]:
    """Turn a configuration, selection, model, lock or path error into one line on stderr and exit status 2."""
    from aoi.clierrors import OUT_FIX, fail, os_message
    from aoi.config import ConfigError
    from aoi.models.base import ModelError

    try:
        yield
    except (ConfigError, ValueError, ModelError) as exc:
        raise fail(str(exc)) from None
    except OSError as exc:  # --out unwritable, a file, under a file, or on a special filesystem
        raise fail(os_message(exc, OUT_FIX)) from None


def engine_executor(engine: str, executor: str, ray_address: str | None) -> str:
    """Return the pool `run_eval` takes for --engine (ray needs Ray installed); ValueError on a bad combination.

    Example:
        >>> engine_executor("local", "thread", None)
        'thread'
    """
    if engine not in ("local", "ray"):
        raise ValueError(f"unknown --engine {engine!r}; use local or ray")
    if engine == "local":
        if ray_address:
            raise ValueError("--ray-address needs --engine ray")
        return executor
    from aoi.evaluate.ray_pool import require_ray

    require_ray()
    return "ray"


def split_name(split: str) -> str:
    """Return a --split value in full, RULE:PART (the rule defaults to by_target), as runs record it.

    Example:
        >>> split_name("test"), split_name("by_family:test")
        ('by_target:test', 'by_family:test')
    """
    rule, _, part = split.rpartition(":")
    return f"{rule or 'by_target'}:{part}"


def split_keys(split: str, data: Path | None) -> list[str]:
    """Return the problem keys of one part of a dataset's split ("[RULE:]PART", RULE by_target).

    Example:
        >>> import json, tempfile; folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "splits.json").write_text(json.dumps({"by_target": {"test": ["p@geo", "q@"]}}))
        >>> split_keys("test", folder)
        ['p@geo', 'q@']
    """
    import json

    rule, _, part = split.rpartition(":")
    path = Path(data or "") / "splits.json"
    if data is None or not path.is_file():
        raise ValueError(f"--split needs --data DIR holding splits.json (`aoi data export --out DIR`); {path} is "
                         "missing")
    keys = json.loads(path.read_text()).get(rule or "by_target", {}).get(part)
    if not keys:
        raise ValueError(f"{path} has no keys in {rule or 'by_target'}:{part}; use by_target, by_family or by_app and "
                         "train, test or held_out")
    return keys


def choose(problems: str | None, task_type: str | None, app: str | None, targets: str | None, chosen: dict,
           data: Path | None) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Return ((problem_id, target) pairs, notes): of --problems (and --targets), or of the keys that --keys,
    --keys-file or --split (`chosen`: option -> value) names, each filtered by --task-type and --app."""
    from aoi.evaluate.select import read_keys, select, select_keys

    given = [name for name, value in chosen.items() if value]
    if len(given) > 1:
        raise ValueError(f"{' and '.join(given)} each choose the problems to run; pass one of them")
    if not given:
        return select(problems or "all", task_type, app, targets)
    if problems or targets:
        raise ValueError(f"{given[0]} chooses the problem keys itself; drop --problems and --targets (--task-type "
                         "and --app still filter)")
    keys, keys_file, split = chosen.values()
    raw = keys.split(",") if keys else read_keys(keys_file) if keys_file else split_keys(split, data)
    return select_keys(raw, task_type, app), []


def _setup(console: Console, config_file: Path | None, overrides: dict, selection: tuple, workers: int):
    """Return (config, (problem_id, target) pairs), printing notes on skipped problems; ValueError (ModelError) when
    unusable: the selection, the workers, ask mode without a terminal, or a model that cannot be used (checked once,
    before the run folder is made, as `aoi run` checks it)."""
    from aoi.agents.runtime import check_models
    from aoi.config import load_config
    from aoi.evaluate.select import with_scenarios
    from aoi.safety.approval import require_terminal

    config = load_config(config_file, {key: v for key, v in overrides.items() if v is not None})
    require_terminal(config.approval.mode)
    pairs, notes = choose(*selection)
    config = with_scenarios(config, selection[0] or "all")  # workers and resumes rebuild scenario problems from it
    for note in notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
    if not pairs:
        raise ValueError("no problem matches; check --problems (or --keys, --keys-file, --split), --task-type and "
                         "--app")
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, not {workers}")
    check_models(config)
    return config, pairs


def report_command(
    run_dir: str = typer.Argument(..., metavar="[LABEL=]RUN_DIR", help="A run directory written by `aoi eval "
                                  "--out` or `aoi train grpo --out`, as DIR or LABEL=DIR (the label names the run "
                                  "in tables; default: the folder's name)."),
    compare: list[str] | None = typer.Option(None, "--compare", metavar="[LABEL=]DIR", help="Another run to compare "
                                                "with, DIR or LABEL=DIR, e.g. sft=runs/sft (repeatable); deltas are "
                                                "against RUN_DIR, per split part the runs ran (`aoi eval --split`)."),
    out: Path | None = typer.Option(None, "--out", help="Report path without suffix or with .md/.html; "
                                       "both files are written (default: RUN_DIR/report)."),
) -> None:
    """Write report.md and report.html of a run, or of a training run's rewards (help line: aoi.cli.LAZY)."""
    from aoi.clierrors import fail, path_errors
    from aoi.evaluate.report import comparison, gain_sections, judged_section, load_runs, run_arg, write_report
    from aoi.evaluate.summary import summary_table
    from aoi.evaluate.training import is_training_run

    console = _console()
    try:
        if is_training_run(run_arg(run_dir)[1]):
            return _training_report(console, run_dir, list(compare or []), out)
        with path_errors(None, "pass --out PATH in a writable place"):
            paths = write_report(run_dir, list(compare or []), out)
            runs = load_runs([run_dir, *(compare or [])])
        console.print(summary_table(runs[0].summary, title=run_dir, width=console.width))
        if compare:  # say what the deltas cover: only the problems every run has
            console.print(comparison(runs)[1])
            for section in gain_sections(runs):
                console.print(_rich_table(section, console.width))
            console.print(_plain_table(judged_section(runs)))  # every run beside its constant answer
    except ValueError as exc:
        raise fail(str(exc)) from None
    console.print("wrote " + ", ".join(str(p) for p in paths))


def _training_report(console: Console, run_dir: str, compare: list[str], out: Path | None) -> None:
    """Write the training runs' report; print their tables and text charts."""
    from aoi.clierrors import path_errors
    from aoi.evaluate.linecharts import text
    from aoi.evaluate.training import load_trainings, reward_lines, training_sections, write_training_report

    with path_errors(None, "pass --out PATH in a writable place"):
        paths = write_training_report(run_dir, compare, out)
    runs = load_trainings([run_dir, *compare])
    for section in training_sections(runs):
        if section.tables and section.title != "Reward by step":
            console.print(_plain_table(section))
    for lines in reward_lines(runs):
        console.print(escape(text(lines, width=min(72, max(console.width - 20, 20)))), highlight=False)
    console.print("wrote " + ", ".join(str(p) for p in paths))


def _plain_table(section):
    """Return a section's first table for the terminal."""
    from rich.table import Table

    table = Table(title=section.title, header_style="bold", title_justify="left")
    for i, header in enumerate(section.tables[0].headers):
        table.add_column(header, justify="left" if i == 0 else "right", overflow="fold")  # values never cut
    for row in section.tables[0].rows:
        table.add_row(*row)
    return table


def _rich_table(section, width: int):
    """Return a split section's table for the terminal: short headers, a caption saying what they hold; under
    NARROW columns no box and no problem/episode counts (the report has them)."""
    from rich import box
    from rich.table import Table

    from aoi.evaluate.gains import console_headers
    from aoi.evaluate.summary import NARROW

    headers, caption = console_headers(section.tables[0].headers)
    keep = [i for i in range(len(headers)) if width >= NARROW or i not in (2, 3)]
    table = Table(title=section.title, caption=caption, header_style="bold", title_justify="left",
                  caption_justify="left", box=box.HEAVY_HEAD if width >= NARROW else None)
    for i in keep:
        table.add_column(headers[i], justify="left" if i == 0 else "right")
    for row in section.tables[0].rows:
        table.add_row(*(row[i] for i in keep))
    return table
