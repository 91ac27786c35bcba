"""`aoi train`: `sft` (aoi.train.cli's) and `grpo`, declared here once with train's options and Echo's.

aoi.echo sits above aoi.train, so the one `grpo` command lives here: `--engine trl` (the default) runs train's GRPO
(TRL's GRPOTrainer), `--engine echo` runs the same options on Echo's samplers and trainer (aoi.echo.engine) in the
chosen `--mode`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from aoi.train import cli as train

ENGINES = ("trl", "echo")
ENGINE = typer.Option("trl", "--engine", help="trl (TRL's GRPOTrainer, one process) or echo (samplers and trainer "
                      "decoupled, on Ray for sequential and async).")
MODE = typer.Option("colocated", "--mode", help="Echo: colocated (generate then train, one process), sequential "
                    "(pull, staleness 0) or async (push-pull through a replay buffer).")
SAMPLERS = typer.Option(1, "--samplers", min=1, help="Echo: sampler actors (each loads the policy).")
STALENESS = typer.Option(1, "--staleness", min=0, help="Echo async: train on groups at most S policy versions old; "
                         "older ones are dropped and counted.")
RAY_ADDRESS = typer.Option(None, "--ray-address", help="Echo: the Ray cluster to join (auto, or HOST:PORT of `ray "
                           "start --head`); default: a local Ray instance.")
SAMPLER_MODEL = typer.Option(None, "--sampler-model", help="Echo: the base's model name on --sampler-url (default: "
                             "the first it lists).")
SAMPLER_ADAPTER_DIR = typer.Option(None, "--sampler-adapter-dir", help="Echo: a folder the server can read where "
                                   "samplers write each adapter version (default: a temp folder on the sampler's "
                                   "machine).")

train_app = typer.Typer(no_args_is_help=True)  # its help line: aoi.cli.LAZY
train_app.command("sft")(train.sft)


@train_app.command("grpo")
def grpo(role: str = train.ROLE, data: Path = train.DATA, out: Path = train.OUT, init: Path | None = train.INIT,
         base: str | None = train.GRPO_BASE, split: str = train.SPLIT, max_steps: int = train.GRPO_MAX_STEPS,
         config: Path | None = train.CONFIG, resume: bool = train.RESUME, device: str = train.DEVICE,
         precision: str = train.PRECISION, seed: int = train.SEED, sampler_url: str | None = train.SAMPLER_URL,
         engine: str = ENGINE, mode: str = MODE, samplers: int = SAMPLERS, staleness: int = STALENESS,
         ray_address: str | None = RAY_ADDRESS, sampler_model: str | None = SAMPLER_MODEL,
         sampler_adapter_dir: str | None = SAMPLER_ADAPTER_DIR) -> None:
    """Train the Observer with GRPO; rewards are the verdicts of real episodes in the twin."""
    from aoi.train.grpo import GrpoOptions

    if engine not in ENGINES:
        typer.echo(f"error: --engine {engine!r} is unknown; use trl or echo", err=True)
        raise typer.Exit(2)
    options = GrpoOptions(data=data, out=out, role=role, init=init, base=base, split=split, max_steps=max_steps,
                          config=config, resume=resume, device=device, precision=precision, seed=seed,
                          sampler_url=sampler_url)
    if engine == "trl":
        return train.run_grpo(options)
    from aoi.echo.engine import train_echo
    from aoi.echo.run import EchoOptions

    echo = EchoOptions(grpo=options, mode=mode, samplers=samplers, staleness=staleness, ray_address=ray_address,
                       sampler_url=sampler_url, sampler_model=sampler_model, sampler_adapter_dir=sampler_adapter_dir)
    train.print_manifest(lambda: train_echo(echo))
