"""The `aoi` command line."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="AOI: diagnose and repair faults in microservices on Kubernetes.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)
twin_app = typer.Typer(help="The Kubernetes digital twin.", no_args_is_help=True)
app.add_typer(twin_app, name="twin")


@twin_app.command("up")
def twin_up(
    apps: Optional[list[str]] = typer.Option(None, "--app", help="App to deploy (repeatable): hotel-reservation, "
                                             "social-network, astronomy-shop. Default: all three."),
    kubeconfig_dir: Path = typer.Option(..., "--kubeconfig-dir", help="Folder for admin.yaml, probe.yaml, executor.yaml."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0 picks a free one)."),
    seed: int = typer.Option(0, "--seed", help="Seed for names, IPs and hashes."),
) -> None:
    """Serve the twin until interrupted, following the wall clock."""
    from aoi.twin import build_twin
    from aoi.twin.catalog import APP_NAMES
    from aoi.twin.clock import SimClock
    from aoi.twin.factory import WARMUP_SECONDS
    from aoi.twin.serving import Ticker, serve, write_kubeconfigs

    chosen = apps or list(APP_NAMES)
    unknown = [a for a in chosen if a not in APP_NAMES]
    if unknown:
        raise typer.BadParameter(f"unknown app {unknown[0]!r}; choose from {', '.join(APP_NAMES)}", param_hint="--app")
    # The apps were deployed `warmup` seconds ago, so the twin's clock meets the wall clock now.
    twin = build_twin(chosen, seed=seed, clock=SimClock(time.time() - WARMUP_SECONDS))
    try:
        server = serve(twin, port)
    except OSError as exc:
        raise typer.BadParameter(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); pick another --port",
                                 param_hint="--port") from exc
    paths = write_kubeconfigs(twin, server.url, kubeconfig_dir)
    ticker = Ticker(twin).start()
    typer.echo(f"twin ready at {server.url} with {', '.join(chosen)}; kubeconfigs: "
               f"{', '.join(str(p) for p in paths.values())}", )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        ticker.stop()
        server.stop()


def main() -> None:
    """Entry point for `python -m aoi`."""
    app()
