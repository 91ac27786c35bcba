"""`aoi scenarios` (validate, seeds) and `aoi evolve` (scenario generation, guidance mining)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

scenarios_app = typer.Typer(no_args_is_help=True)  # help lines of both groups: aoi.cli.LAZY
evolve_app = typer.Typer(no_args_is_help=True)


@scenarios_app.callback()
def scenarios_group() -> None:
    """Fault scenarios: validate them by executing each in a fresh twin; export the seeds."""


@evolve_app.callback()
def evolve_group() -> None:
    """The Evolvers: generate new fault scenarios; mine failed runs into guidance."""


def _lines(path: Path) -> list[tuple[int, str]]:
    """Return a JSON Lines file's non-blank lines with their numbers (a missing file is a usage error)."""
    if not path.is_file():
        raise typer.BadParameter(f"{path} does not exist; give a JSON Lines file of scenarios (`aoi scenarios seeds "
                                 f"--out FILE` writes one)", param_hint="FILE")
    numbered = enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
    lines = [(n, line) for n, line in numbered if line.strip()]
    if not lines:
        raise typer.BadParameter(f"{path} holds no scenario; write one JSON object per line", param_hint="FILE")
    return lines


def _seeds(path: Path | None) -> list:
    """Return the scenarios diversity is measured from: a file's, or the AIOpsLab seeds."""
    from aoi.problems.scenarios import load_scenarios
    from aoi.problems.seeds import seed_scenarios

    if path is None:
        return seed_scenarios()
    try:
        return load_scenarios(path)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--seeds") from None


def _report(number: int, rewarded, weights: dict) -> dict:
    """Return one scored line as JSON-ready data."""
    scenario = rewarded.record.scenario
    return {"line": number, "id": scenario.id if scenario else None, "total": rewarded.total,
            "valid": rewarded.valid, "problems": list(rewarded.problems), "zero_reason": rewarded.zero_reason,
            "scores": {name: {"score": s.value, "weight": weights.get(name, 0.0), "evidence": s.evidence}
                       for name, s in rewarded.scores.items()},
            "record": rewarded.record.to_dict()}


def _print(report: dict) -> None:
    """Print one scored scenario: its total and verdict, then every dimension with its evidence."""
    verdict = "valid" if report["valid"] else "INVALID"
    typer.echo(f"line {report['line']}: {report['id'] or '(no id)'}  total {report['total']:.2f}  {verdict}")
    if report["zero_reason"]:
        typer.echo(f"  scores zero: {report['zero_reason']}")
    for name, score in report["scores"].items():
        typer.echo(f"  {name:<23} {score['score']:.2f} (weight {score['weight']:.2f})  {score['evidence']}")


@scenarios_app.command("validate")
def validate_command(
    file: Path = typer.Argument(..., help="JSON Lines file of scenarios (one JSON object per line)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list: per scenario every dimension's score "
                                 "and evidence, and the whole execution record."),
    seeds: Path | None = typer.Option(None, "--seeds", help="Scenarios diversity is measured from (default: the "
                                      "AIOpsLab seed scenarios)."),
    weights: Path | None = typer.Option(None, "--weights", help="YAML mapping `dimension: weight` overriding the "
                                        "default weights."),
    judge: str | None = typer.Option(None, "--judge", help="Model spec of an optional LLM judge (adds the 'judge' "
                                     "dimension), e.g. openai:gpt-4o-mini or replay:FILE."),
    seed: int = typer.Option(0, "--seed", help="Seed of the twin each scenario runs in."),
) -> None:
    """Execute each scenario in a fresh twin and print every reward dimension with its evidence (exit 1: invalid)."""
    from aoi.evolve.diversity import Novelty
    from aoi.evolve.execute import execute
    from aoi.evolve.rewards import JUDGE, JUDGE_WEIGHT, load_weights, score_records

    lines = _lines(file)
    try:
        chosen = {JUDGE: JUDGE_WEIGHT} | load_weights(weights)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--weights") from None
    model = _judge(judge)
    records = [execute(text, seed=seed) for _, text in lines]
    scored = score_records(records, novelty=Novelty(_seeds(seeds)), weights=chosen, judge=model)
    reports = [_report(n, r, chosen) for (n, _), r in zip(lines, scored, strict=True)]
    if as_json:
        typer.echo(json.dumps(reports, indent=1))
    else:
        for report in reports:
            _print(report)
        typer.echo(f"{sum(r['valid'] for r in reports)}/{len(reports)} scenario(s) valid")
    if not all(r["valid"] for r in reports):
        raise typer.Exit(1)


def _judge(spec: str | None):
    """Return the judge model a spec names, or None (a bad spec is a usage error)."""
    if spec is None:
        return None
    from aoi.models.base import ModelError
    from aoi.models.registry import load_model

    try:
        return load_model(spec)
    except (ValueError, ModelError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--judge") from None


@scenarios_app.command("seeds")
def seeds_command(
    out: Path = typer.Option(..., "--out", help="JSON Lines file to write (one seed scenario per line)."),
) -> None:
    """Write the AIOpsLab problems with their reference solutions as seed scenarios, one JSON per line."""
    from rich.console import Console

    from aoi.clierrors import path_errors
    from aoi.problems.scenarios import dumps
    from aoi.problems.seeds import seed_scenarios

    scenarios = seed_scenarios()
    with path_errors(Console(stderr=True).print, "pass --out FILE in a writable place"):
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(dumps(s) + "\n" for s in scenarios), encoding="utf-8")
    typer.echo(f"wrote {len(scenarios)} seed scenarios to {out}")


from aoi.evolve.guidance_cli import guidance_command  # noqa: E402 - C's command, registered like the others

evolve_app.command("guidance")(guidance_command)

from aoi.evolve.generate import scenarios_command  # noqa: E402 - D's command, registered like the others

evolve_app.command("scenarios")(scenarios_command)
