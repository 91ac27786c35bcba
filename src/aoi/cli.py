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


def _mount_subcommands() -> None:
    """Attach the sub-apps that live with their packages."""
    from aoi.agents.cli import run
    from aoi.aiopslab.cli import aiopslab_app, rbac_command
    from aoi.env.cli import serve_env
    from aoi.evaluate.cli import eval_command, report_command
    from aoi.problems.cli import problems_app

    app.command("run")(run)
    app.command("eval")(eval_command)
    app.command("report")(report_command)
    app.command("rbac")(rbac_command)
    app.add_typer(aiopslab_app, name="aiopslab", help="Run the AOI agents inside real AIOpsLab (needs AIOpsLab and a cluster).")
    app.add_typer(problems_app, name="problems", help="The AIOpsLab problem catalogue.")
    app.command("serve-env", help="Serve the environment over HTTP on 127.0.0.1 (bearer token).")(serve_env)


_mount_subcommands()


@twin_app.command("up")
def twin_up(
    apps: Optional[list[str]] = typer.Option(None, "--app", help="App to deploy (repeatable): hotel-reservation, "
                                             "social-network, astronomy-shop. Default: all three."),
    kubeconfig_dir: Path = typer.Option(..., "--kubeconfig-dir", help="Folder for admin.yaml, probe.yaml, executor.yaml."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0 picks a free one)."),
    seed: int = typer.Option(0, "--seed", help="Seed for names, IPs and hashes."),
) -> None:
    """Serve the twin until interrupted, following the wall clock (point kubectl at DIR/admin.yaml)."""
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


TOUR = ("get nodes -o wide", "get pods -n test-hotel-reservation", "get svc geo -n test-hotel-reservation",
        "describe deploy geo -n test-hotel-reservation", "logs deploy/geo -n test-hotel-reservation --tail 5",
        "exec deploy/mongodb-geo -n test-hotel-reservation -- mongo admin -u admin -p admin --quiet --eval "
        "\"printjson(db.getUser('admin'))\"", "top pods -n test-hotel-reservation",
        "scale deploy/geo --replicas 0 -n test-hotel-reservation", "get pods -n test-hotel-reservation -l io.kompose.service=search",
        "logs deploy/search -n test-hotel-reservation --tail 3")


@twin_app.command("tour")
def twin_tour(seed: int = typer.Option(0, "--seed", help="Seed for names, IPs and hashes.")) -> None:
    """Serve HotelReservation on the twin and drive it with the real kubectl (a two-minute walkthrough)."""
    import shlex

    from aoi import runtime_dirs
    from aoi.twin import build_twin
    from aoi.twin.kubectl import KubectlRunner
    from aoi.twin.serving import serve, write_kubeconfigs

    twin = build_twin(["hotel-reservation"], seed=seed)
    server = serve(twin)
    folder = runtime_dirs.private_dir("tour")  # 0700, removed at exit
    kubeconfigs = write_kubeconfigs(twin, server.url, folder)
    runners = {role: KubectlRunner(twin, path, folder / "cache") for role, path in kubeconfigs.items()}
    typer.echo(f"# twin serving at {server.url}; kubeconfigs in {folder}\n")
    steps = [("admin", c) for c in TOUR] + [("probe", "delete deploy/search -n test-hotel-reservation")]
    for role, command in steps:
        done = runners[role].run(shlex.split(command))
        typer.echo(f"$ KUBECONFIG={kubeconfigs[role].name} kubectl {command}\n{done.stdout}{done.stderr}")
        twin.advance(30)
    server.stop()


def main() -> None:
    """Entry point for `python -m aoi`."""
    app()
