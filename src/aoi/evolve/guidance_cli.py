"""`aoi evolve guidance`: mine the failed episodes of runs into a guidance file (registered in aoi.evolve.cli)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer


def guidance_command(
    runs: list[Path] = typer.Option(..., "--from", metavar="RUN_DIR", help="An `aoi eval --out` folder, or a "
                                    "trajectory store (`aoi run`'s runs/trajectories.db); repeat for more runs."),
    out: Path = typer.Option(..., "--out", help="Guidance JSON Lines to write (`aoi run/eval --guidance FILE`)."),
    model: str | None = typer.Option(None, "--model", help="Model spec that writes each lesson from the mined "
                                     "evidence, e.g. openai:gpt-4o-mini or replay:FILE (default: the "
                                     "deterministic miner's lessons)."),
) -> None:
    """Mine failed episodes (wrong answers, refused or repeated calls, wasted steps) into guidance entries."""
    from rich.console import Console

    from aoi.agents.guidance import write_guidance
    from aoi.clierrors import path_errors
    from aoi.evolve.guidance import mine, write_lessons
    from aoi.models.base import ModelError

    console = Console(stderr=True)
    try:
        entries, failures = mine(runs)
        if model is not None and entries:
            write_lessons(entries, _model(model))
    except (ValueError, ModelError) as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    with path_errors(console.print, "pass --out FILE in a writable place"):
        out.parent.mkdir(parents=True, exist_ok=True)
        write_guidance(entries, out)
    reasons = ", ".join(f"{n} {reason}" for reason, n in Counter(f.reason for f in failures).most_common())
    kinds = ", ".join(f"{n} {kind}" for kind, n in Counter(e.kind for e in entries).most_common())
    typer.echo(f"{len(failures)} failed episode(s) ({reasons or 'none'}) -> {len(entries)} entries ({kinds or 'none'})"
               f" in {out}")


def _model(spec: str):
    """Load the lesson writer a spec names (a bad spec is a ValueError naming the forms)."""
    from aoi.models.registry import load_model

    return load_model(spec)
