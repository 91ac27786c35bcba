"""`aoi data export|generate`: trajectories become datasets; the expert (or any model) makes teacher data."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

data_app = typer.Typer(no_args_is_help=True)  # its help line: aoi.cli.LAZY
SPLIT_SEED = typer.Option(0, "--split-seed", help="Seed of the split rules (held-out targets, families, app).")
TARGET_RATIO = typer.Option(0.3, "--target-ratio", help="Share of each parametric family's targets held out.")
FAMILY_RATIO = typer.Option(0.25, "--family-ratio", help="Share of fault families held out.")
HOLDOUT_APP = typer.Option(None, "--holdout-app", help="The app held out by by_app (default: chosen by seed).")
NO_FAULT_RATIO = typer.Option(0.5, "--no-fault-ratio", help="Share of the no-fault keys on the test side of "
                              "by_target and by_family (at least one stays in train).")


def _rules(seed: int, target_ratio: float, family_ratio: float, app: str | None, no_fault_ratio: float):
    """Return the split rules of the options, or exit 2 saying which option is wrong."""
    from aoi.data.splits import SplitRules

    try:
        return SplitRules(seed, target_ratio, family_ratio, app, no_fault_ratio)
    except ValueError as exc:
        raise _fail(str(exc)) from None


def _fail(message: str) -> typer.Exit:
    """Print one red line and return the exit to raise (status 2)."""
    Console(stderr=True).print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    return typer.Exit(2)


@data_app.command("export")
def export_command(
    runs: list[Path] = typer.Argument(..., help="Run directories (`aoi eval --out`, `aoi data generate --out`) "
                                      "or trajectory .db files."),
    out: Path = typer.Option(..., "--out", help="Dataset folder: sft/<role>/ (+ .parquet), rl/ (+ .parquet), "
                             "splits.json, card.md."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an earlier export in --out."),
    split_seed: int = SPLIT_SEED, target_ratio: float = TARGET_RATIO, family_ratio: float = FAMILY_RATIO,
    holdout_app: str | None = HOLDOUT_APP, no_fault_ratio: float = NO_FAULT_RATIO,
) -> None:
    """Write the runs' trajectories as Hugging Face datasets (SFT per role, RL), splits.json and card.md."""
    from aoi.clierrors import path_errors
    from aoi.data.export import export

    rules = _rules(split_seed, target_ratio, family_ratio, holdout_app, no_fault_ratio)
    command = "aoi data " + shlex.join(sys.argv[sys.argv.index("export"):] if "export" in sys.argv else ["export"])
    try:
        with path_errors(Console(stderr=True).print, "pass --out DIR in a writable place"):
            counts = export(runs, out, rules, command, overwrite)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    roles = ", ".join(f"{role} {n}" for role, n in counts["sft"].items())
    typer.echo(f"{counts['episodes']} episodes -> {out}: SFT rows {roles}; RL rows {counts['rl']} "
               f"({counts['rl_starts']} episode starts); see {out / 'card.md'}")


@data_app.command("generate")
def generate_command(
    out: Path = typer.Option(..., "--out", help="Run directory (resumable, as `aoi eval --out`)."),
    model: str = typer.Option("expert", "--model", help="Model spec of the team (the teacher)."),
    problems: str = typer.Option("all", "--problems", help="all, or comma-separated problem ids."),
    targets: str | None = typer.Option(None, "--targets", help="all (every valid target), comma-separated "
                                       "target names, or nothing (each problem's own target)."),
    task_type: str | None = typer.Option(None, "--task-type", help="detection, localization, analysis or "
                                         "mitigation."),
    app: str | None = typer.Option(None, "--app", help="hotel-reservation, social-network or astronomy-shop."),
    split: str | None = typer.Option(None, "--split", help="by_target, by_family or by_app: run only that "
                                     "split's train side (the same options make the same split in export)."),
    k: int = typer.Option(1, "-k", "--k", help="Attempts per problem (attempt a runs with seed + a)."),
    workers: int = typer.Option(1, "--workers", help="Episodes run at once (one process each)."),
    seed: int | None = typer.Option(None, "--seed", help="Base seed of the episodes (default: config, else 0)."),
    config_file: Path | None = typer.Option(None, "--config", help="A YAML/TOML config (default: ./aoi.yaml)."),
    split_seed: int = SPLIT_SEED, target_ratio: float = TARGET_RATIO, family_ratio: float = FAMILY_RATIO,
    holdout_app: str | None = HOLDOUT_APP, no_fault_ratio: float = NO_FAULT_RATIO,
) -> None:
    """Produce teacher data: run the team on the chosen problems and targets into a run directory."""
    from aoi.config import ConfigError, load_config
    from aoi.data.generate import choose, generate

    rules = _rules(split_seed, target_ratio, family_ratio, holdout_app, no_fault_ratio)
    console = Console()
    try:
        config = load_config(config_file, {key: v for key, v in {"model": model, "env.seed": seed}.items()
                                           if v is not None})
        pairs, notes = choose(problems, targets, task_type, app, split, rules)
        for note in notes:
            console.print(f"[yellow]note:[/] {escape(note)}")
        selection = {"model": model, "problems": problems, "targets": targets, "task_type": task_type, "app": app,
                     "split": split, "rules": vars(rules)}
        summary = generate(pairs, out, config, k, max(workers, 1), selection, console)
    except (ConfigError, ValueError, OSError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"{len(pairs)} problem(s) x k={k} with {model} -> {out}: avg@k "
               f"{100 * summary.overall.get('avg_at_k', 0):.0f}%; `aoi data export {out} --out DIR` makes datasets")
    if summary.interrupted:
        raise typer.Exit(130)
