"""`python -m aoi.evaluate eval|report ...`: the eval commands on their own (the same ones `aoi` mounts)."""

from __future__ import annotations

import typer

from aoi.evaluate.cli import eval_command, report_command

app = typer.Typer(help="AOI evaluation: aoi eval and aoi report.", no_args_is_help=True, add_completion=False,
                  pretty_exceptions_enable=False)
app.command("eval")(eval_command)
app.command("report")(report_command)

if __name__ == "__main__":  # spawned eval workers import this module as __mp_main__ and must not run the CLI
    app()
