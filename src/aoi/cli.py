"""The `aoi` command line."""

from __future__ import annotations

import importlib
import signal
import threading
import time
from pathlib import Path
from typing import NamedTuple

import click
import typer
from typer.core import TyperGroup


class Subcommand(NamedTuple):
    """A subcommand living with its package: the module and attribute to import, and its help line."""

    module: str
    attribute: str
    help: str  # written here only: `aoi --help` lists it without importing the module, load() gives it to the command


# Imported only when one runs (each pulls in the twin, the problems or the evaluator; importing them all cost every
# `aoi` call ~0.4 s, `aoi --help` included). The modules give their commands no help line of their own.
LAZY = {
    "run": Subcommand("aoi.agents.cli", "run", "Diagnose (and for mitigation tasks, repair) one problem on the twin "
                      "or a cluster with the AOI agents."),
    "eval": Subcommand("aoi.evaluate.cli", "eval_command", "Run K attempts of each problem (on the twin, or a "
                       "cluster) with a worker pool; print and write the summary."),
    "report": Subcommand("aoi.evaluate.cli", "report_command", "Write the run's report as Markdown and as a "
                         "self-contained HTML page with charts."),
    "rbac": Subcommand("aoi.aiopslab.cli", "rbac_command", "Print the probe and executor identities as RBAC "
                       "manifests (pipe them into `kubectl apply -f -`)."),
    "aiopslab": Subcommand("aoi.aiopslab.cli", "aiopslab_app", "Run the AOI agents inside real AIOpsLab (needs "
                           "AIOpsLab and a cluster)."),
    "problems": Subcommand("aoi.problems.cli", "problems_app", "The AIOpsLab problem catalogue."),
    "serve-env": Subcommand("aoi.env.cli", "serve_env", "Serve the environment over HTTP on 127.0.0.1 (bearer "
                            "token)."),
    "serve-model": Subcommand("aoi.models.cli", "serve_model", "Serve a base model with runtime LoRA on vLLM at "
                              "127.0.0.1 until Ctrl-C or SIGTERM."),
    "trajectories": Subcommand("aoi.store.cli", "trajectories_app", "Browse the trajectory store: recent ids, one "
                               "episode step by step, JSONL export."),
    "train": Subcommand("aoi.echo.cli", "train_app", "Train a role's LoRA adapter: SFT on teacher data, GRPO on "
                        "rewards from the twin."),
    "data": Subcommand("aoi.data.cli", "data_app", "Trajectories as training data: SFT/RL datasets with splits, and "
                       "teacher data."),
    "scenarios": Subcommand("aoi.evolve.cli", "scenarios_app", "Fault scenarios: validate them by executing each in "
                            "a fresh twin; export the seeds."),
    "evolve": Subcommand("aoi.evolve.cli", "evolve_app", "The Evolvers: generate new fault scenarios; mine failed "
                         "runs into guidance."),
    "view": Subcommand("aoi.view.cli", "view_command", "Serve a read-only web viewer of runs on 127.0.0.1: results, "
                       "trajectories, comparisons, reward curves."),
}


class LazyGroup(TyperGroup):
    """The `aoi` group: lists the LAZY subcommands from the table and imports one only to run it."""

    listing = False  # True while help is printed: stand-ins with the table's help lines, nothing imported

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Return the eager commands (twin) and the lazy ones, in table order."""
        return [*LAZY, *super().list_commands(ctx)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """Return a command: a stand-in while help is listed, else the real one, imported now."""
        if name not in LAZY:
            return super().get_command(ctx, name)
        if self.listing:
            return click.Command(name, help=LAZY[name].help)
        return load(name)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra) -> click.Context:
        """Parse `aoi`'s own options; a usage error is one line on stderr."""
        from aoi.clierrors import one_line_usage_errors

        with one_line_usage_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context):
        """Run the subcommand; a usage error (unknown option, bad value) is one line on stderr, not a box."""
        from aoi.clierrors import one_line_usage_errors

        with one_line_usage_errors():
            return super().invoke(ctx)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Print help without importing any subcommand."""
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


def load(name: str) -> click.Command:
    """Import a LAZY subcommand and return it as a click command named `name`, with the table's help line."""
    module, attribute, help_line = LAZY[name]
    target = getattr(importlib.import_module(module), attribute)
    mount = typer.Typer(add_completion=False)  # mounted as a subcommand is mounted: no completion options
    if isinstance(target, typer.Typer):
        mount.add_typer(target, name=name, help=help_line)
    else:
        mount.command(name, help=help_line)(target)
    command = typer.main.get_group(mount).commands[name]
    command.name = name
    return command


app = typer.Typer(cls=LazyGroup, help="AOI: diagnose and repair faults in microservices on Kubernetes.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
twin_app = typer.Typer(help="The Kubernetes digital twin.", no_args_is_help=True)
app.add_typer(twin_app, name="twin")


@twin_app.command("up")
def twin_up(
    apps: list[str] | None = typer.Option(None, "--app", help="App to deploy (repeatable): hotel-reservation, "
                                          "social-network, astronomy-shop. Default: all three."),
    kubeconfig_dir: Path = typer.Option(..., "--kubeconfig-dir",
                                        help="Folder for admin.yaml, probe.yaml, executor.yaml."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0 picks a free one)."),
    seed: int = typer.Option(0, "--seed", help="Seed for names, IPs and hashes."),
) -> None:
    """Serve the twin until interrupted, following the wall clock (point kubectl at DIR/admin.yaml)."""
    from aoi.apps.catalog import APP_NAMES
    from aoi.clierrors import path_errors, writable_folder
    from aoi.twin import build_twin
    from aoi.twin.core.clock import SimClock
    from aoi.twin.factory import WARMUP_SECONDS
    from aoi.twin.serving import Ticker, serve, write_kubeconfigs

    chosen = apps or list(APP_NAMES)
    unknown = [a for a in chosen if a not in APP_NAMES]
    if unknown:
        raise typer.BadParameter(f"unknown app {unknown[0]!r}; choose from {', '.join(APP_NAMES)}", param_hint="--app")
    with path_errors(None, "pass --kubeconfig-dir DIR in a writable place"):
        # before the twin is built, not after; admin.yaml appears only once it is whole (a script may wait for it)
        writable_folder(kubeconfig_dir, 0o700)
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
        "scale deploy/geo --replicas 0 -n test-hotel-reservation",
        "get pods -n test-hotel-reservation -l io.kompose.service=search",
        "logs deploy/search -n test-hotel-reservation --tail 3")


@twin_app.command("tour")
def twin_tour(seed: int = typer.Option(0, "--seed", help="Seed for names, IPs and hashes.")) -> None:
    """Serve HotelReservation on the twin and drive it with the real kubectl (a two-minute walkthrough)."""
    import shlex

    from aoi import runtime_dirs
    from aoi.twin import build_twin
    from aoi.twin.serving import kubectl_runners, release_runners, serve

    twin = build_twin(["hotel-reservation"], seed=seed)
    server = serve(twin)
    kubeconfigs, runners = kubectl_runners(twin, server.url, runtime_dirs.private_dir("tour"))  # removed at exit
    typer.echo(f"# twin serving at {server.url}; kubeconfigs in {kubeconfigs['admin'].parent}\n")
    steps = [("admin", c) for c in TOUR] + [("probe", "delete deploy/search -n test-hotel-reservation")]
    for role, command in steps:
        done = runners[role].run(shlex.split(command))
        typer.echo(f"$ KUBECONFIG={kubeconfigs[role].name} kubectl {command}\n{done.stdout}{done.stderr}")
        twin.advance(30)
    server.stop()
    release_runners(runners)


def main() -> None:
    """Entry point for `python -m aoi` (named `aoi` in usage lines and errors, as the script is)."""
    app(prog_name="aoi")
