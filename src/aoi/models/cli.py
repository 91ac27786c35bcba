"""`aoi serve-model`: a managed vLLM server for a base with runtime LoRA (mounted by aoi.cli)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from aoi.models.vllm_launch import SCORING_FLAGS, ServerSpec, start_error


def serve_model(
    base: str = typer.Option("smollm2", "--base", help="tiny, smollm2 or a model folder (config, safetensors, "
                             "tokenizer). vLLM's CPU backend cannot serve tiny (16-dimension heads)."),
    adapter: list[str] = typer.Option([], "--adapter", help="NAME=DIR: a LoRA adapter `aoi train` wrote (its "
                                      "manifest must name the base), loaded at start; repeatable. More load at run "
                                      "time through /v1/load_lora_adapter."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0 picks a free one)."),
    log: Path | None = typer.Option(None, "--log", help="The server's log file (default: a temporary file, named "
                                    "when it starts)."),
    memory: float = typer.Option(ServerSpec.memory, "--memory", min=0.01, max=1.0, help="Share of memory vLLM "
                                 "reserves (--gpu-memory-utilization; on CPU a share of RAM)."),
    max_lora_rank: int = typer.Option(ServerSpec.max_lora_rank, "--max-lora-rank", min=1, help="The largest "
                                      "adapter rank it will load."),
    dtype: str = typer.Option(ServerSpec.dtype, "--dtype", help="bfloat16 or float32."),
    for_samplers: bool = typer.Option(False, "--for-samplers", help="Serve Echo's samplers (--sampler-url): one "
                                      "sequence per step, since vLLM 0.32 crashes on a prompt_logprobs request "
                                      "batched beside another under a LoRA adapter (slower for anything else)."),
) -> None:
    """Start vLLM on the base with its adapters and keep it serving until stopped (help line: aoi.cli.LAZY)."""
    from aoi.interrupts import interruptible
    from aoi.models.base import ModelError
    from aoi.models.vllm_server import ManagedServer

    adapters = [_adapter(text) for text in adapter]
    server = ManagedServer(base=base, port=port, log=log, memory=memory, max_lora_rank=max_lora_rank, dtype=dtype,
                           extra=list(SCORING_FLAGS) if for_samplers else [])
    with interruptible():
        try:
            _serve(server, adapters)
        except ModelError as err:
            typer.secho(f"error: {err}", fg="red", err=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            typer.echo("stopping the vLLM server", err=True)
        finally:
            server.stop()


def _serve(server, adapters: list[tuple[str, str]]) -> None:
    """Start the server, load the adapters, say where it is, and wait until it stops or is stopped."""
    started = time.monotonic()
    typer.echo(f"starting vLLM for {server.spec.base} (log: {server.spec.log or 'a temporary file'})", err=True)
    server.start()
    for name, folder in adapters:
        version = server.load_adapter(name, folder).get("version")
        typer.echo(f"adapter {name}: {folder}" + (f" ({version})" if version else ""), err=True)
    typer.echo(f"serving {server.name} at {server.url} (ready in {time.monotonic() - started:.0f} s; log "
               f"{server.log}); Ctrl-C stops it", err=True)
    typer.echo(server.url)  # stdout holds the URL alone, for scripts
    while server.process.poll() is None:
        time.sleep(1)
    raise start_error(server.log, server.process.returncode, when="while serving")


def _adapter(text: str) -> tuple[str, str]:
    """Parse --adapter NAME=DIR."""
    name, sep, folder = text.partition("=")
    if not sep or not name or not folder:
        raise typer.BadParameter(f"{text!r} is not NAME=DIR (e.g. sft=runs/sft)", param_hint="--adapter")
    return name, folder
