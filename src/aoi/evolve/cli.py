"""`aoi scenarios` (validate, seeds) and `aoi evolve` (scenario generation, guidance mining)."""

from __future__ import annotations

import typer

scenarios_app = typer.Typer(help="Fault scenarios: validate them by executing each in a fresh twin; export the "
                            "seeds.", no_args_is_help=True)
evolve_app = typer.Typer(help="The Evolvers: generate new fault scenarios; mine failed runs into guidance.",
                         no_args_is_help=True)


@scenarios_app.callback()
def scenarios_group() -> None:
    """Fault scenarios: validate them by executing each in a fresh twin; export the seeds."""


@evolve_app.callback()
def evolve_group() -> None:
    """The Evolvers: generate new fault scenarios; mine failed runs into guidance."""


from aoi.evolve.guidance_cli import guidance_command  # noqa: E402 - C's command, registered like the others

evolve_app.command("guidance")(guidance_command)
