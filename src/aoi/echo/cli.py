"""`aoi train`: Learning I's training commands, with `--engine trl|echo` (and Echo's options) on `aoi train grpo`.

`aoi train grpo` has one definition, aoi.train.cli's; this module wraps it (aoi.echo sits above aoi.train, so the
engine choice lives here): `--engine trl` (the default) runs it unchanged, `--engine echo` runs the same options on
Echo's samplers and trainer (aoi.echo.engine) in the chosen `--mode`.
"""

from __future__ import annotations

import functools
import inspect
import json
from dataclasses import fields

import typer

from aoi.train import cli as train_cli

ENGINES = ("trl", "echo")
ECHO_OPTIONS = [  # (name, type, option): appended to train's grpo parameters
    ("engine", str, typer.Option("trl", "--engine", help="trl (TRL's GRPOTrainer, one process) or echo (samplers "
                                 "and trainer decoupled, on Ray for sequential and async).")),
    ("mode", str, typer.Option("colocated", "--mode", help="Echo: colocated (generate then train, one process), "
                               "sequential (pull, staleness 0) or async (push-pull through a replay buffer).")),
    ("samplers", int, typer.Option(1, "--samplers", min=1, help="Echo: sampler actors (each loads the policy).")),
    ("staleness", int, typer.Option(1, "--staleness", min=0, help="Echo async: train on groups at most S policy "
                                    "versions old; older ones are dropped and counted.")),
    ("ray_address", str | None, typer.Option(None, "--ray-address", help="Echo: the Ray cluster to join (auto, or "
                                             "HOST:PORT of `ray start --head`); default: a local Ray instance.")),
    ("sampler_model", str | None, typer.Option(None, "--sampler-model", help="Echo: the base's model name on "
                                               "--sampler-url (default: the first it lists).")),
    ("sampler_adapter_dir", str | None, typer.Option(None, "--sampler-adapter-dir", help="Echo: a folder the "
                                                     "server can read where samplers write each adapter version "
                                                     "(default: a temp folder on the sampler's machine).")),
]


def with_engine(grpo):
    """Return train's grpo command with the engine options: trl runs it as it is, echo runs Echo on its options."""

    @functools.wraps(grpo)
    def command(**kwargs):
        echo = {name: kwargs.pop(name) for name, _, _ in ECHO_OPTIONS}
        engine = echo.pop("engine")
        if engine not in ENGINES:
            typer.echo(f"error: --engine {engine!r} is unknown; use trl or echo", err=True)
            raise typer.Exit(2)
        if engine == "trl":
            return grpo(**kwargs)
        return _echo(kwargs, echo)

    signature = inspect.signature(grpo)
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
             for name, kind, option in ECHO_OPTIONS]
    command.__signature__ = signature.replace(parameters=[*signature.parameters.values(), *extra])
    command.__annotations__ = {**grpo.__annotations__, **{name: kind for name, kind, _ in ECHO_OPTIONS}}
    return command


def _echo(kwargs: dict, echo: dict) -> None:
    """Run Echo with train's grpo options; print the manifest, or the error in one line with exit status 2."""
    from aoi.echo.engine import train_echo
    from aoi.echo.run import EchoOptions
    from aoi.models.base import ModelError
    from aoi.train.dataset import DatasetError
    from aoi.train.grpo import GrpoOptions
    from aoi.train.manifest import ManifestError

    known = {f.name for f in fields(GrpoOptions)}
    grpo = GrpoOptions(**{k: v for k, v in kwargs.items() if k in known})
    options = EchoOptions(grpo=grpo, sampler_url=grpo.sampler_url, **echo)
    try:
        manifest = train_echo(options)
    except (DatasetError, ManifestError, ModelError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(json.dumps(manifest, indent=2, default=str))


def _train_app() -> typer.Typer:
    """Return `aoi train`: train's commands, its grpo with the engine options."""
    source = train_cli.train_app
    app = typer.Typer(help=source.info.help, no_args_is_help=True)
    for info in source.registered_commands:
        callback = with_engine(info.callback) if info.name == "grpo" else info.callback
        app.command(info.name, help=info.help)(callback)
    app.registered_groups = list(source.registered_groups)
    return app


train_app = _train_app()
