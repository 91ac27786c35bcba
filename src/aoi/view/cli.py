"""`aoi view [RUN_DIR ...] [--port N]`: serve the run viewer on 127.0.0.1 until Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import typer


def view_command(
    run_dirs: list[Path] | None = typer.Argument(None, help="Run folders, or folders holding runs (searched 4 levels "
                                                "deep). Default: ./runs, else the working directory."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0 picks a free one)."),
) -> None:
    """Find the runs under the folders and serve their pages until stopped (help line: aoi.cli.LAZY)."""
    from aoi.view.runs import find_runs
    from aoi.view.server import serve

    roots = run_dirs or [Path("runs") if Path("runs").is_dir() else Path(".")]
    missing = [str(p) for p in roots if not p.is_dir()]
    if missing:
        _fail(f"{missing[0]} is not a folder; pass run folders (`aoi eval --out DIR`, `aoi train ... --out DIR`) "
              "or folders holding them")
    found = find_runs(roots)
    try:
        server = serve(roots, port)
    except OSError as exc:
        _fail(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); pick another --port")
    signal.signal(signal.SIGTERM, _interrupt)
    typer.echo(f"aoi view: {len(found)} run(s) under {', '.join(map(str, roots))} at {server.url} (Ctrl-C stops it)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _interrupt(*_) -> None:
    """Stop serving on SIGTERM as on Ctrl-C."""
    raise KeyboardInterrupt


def _fail(message: str) -> None:
    """Print one line on stderr and exit 2."""
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(2)
