"""`aoi train`'s parts in train's layer: the `sft` command, the options `grpo` takes from train, and the runners.

aoi.echo.cli declares `aoi train` (Echo sits above train, and `grpo` offers its engine): it mounts `sft` as it is and
declares `grpo` once, with the options below and Echo's. Training runs on the CPU by default (--device cuda on a GPU),
in bf16 autocast where the hardware computes bf16 natively (CUDA, or a CPU with AVX512-BF16 or AMX), else fp32.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # aoi.train.grpo imports TRL: the command line imports it only when a run starts
    from aoi.train.grpo import GrpoOptions

ROLE = typer.Option("observer", "--role", help="The role to train (GRPO: observer, or evolver: the scenario "
                    "generator).")
DATA = typer.Option(..., "--data", help="Dataset folder written by `aoi data export` (GRPO --role evolver: "
                    "a seed scenario file, JSON Lines).")
OUT = typer.Option(..., "--out", help="Adapter folder to write (adapter, manifest.json, metrics.jsonl, tensorboard/).")
SPLIT = typer.Option("by_target", "--split", help="Train on this split's train part: by_target, by_family, by_app.")
DEVICE = typer.Option("cpu", "--device", help="cpu or cuda.")
PRECISION = typer.Option("auto", "--precision", help="fp32, bf16 (autocast; the LoRA weights stay fp32) or auto: bf16 "
                         "on CUDA and on a CPU with AVX512-BF16 or AMX (not for the tiny model), else fp32.")
SEED = typer.Option(0, "--seed", help="Seed of initialisation, shuffling and sampling: same seed, same run.")
RESUME = typer.Option(False, "--resume", help="Continue from the newest checkpoint in OUT.")

# GRPO's own options (the `grpo` command in aoi.echo.cli takes them with ROLE ... RESUME).
INIT = typer.Option(None, "--init", help="SFT adapter to start from (its base is used).")
GRPO_BASE = typer.Option(None, "--base", help="Base without --init: tiny, smollm2 or a model directory (default "
                         "tiny).")
GRPO_MAX_STEPS = typer.Option(20, "--max-steps", min=1, help="Optimizer steps.")
CONFIG = typer.Option(None, "--config", help="YAML/JSON file: grpo (GRPOConfig fields: loss_type, beta, "
                      "num_generations...), rewards (weights), rollout (mode: per_decision|whole_episode, constrained, "
                      "varied_states: train on the states whose draws end differently), lora.")
SAMPLER_URL = typer.Option(None, "--sampler-url", help="Draw the groups on this vLLM server (`aoi serve-model --base "
                           "BASE`, e.g. http://127.0.0.1:8000/v1), or `vllm` to start one for the run; it loads each "
                           "new adapter version (--engine echo: every sampler draws there). Default: sample in this "
                           "process.")


def sft(role: str = ROLE, data: Path = DATA, out: Path = OUT,
        base: str = typer.Option("smollm2", "--base", help="tiny (2-layer random, for smoke runs), smollm2, or a "
                                 "model directory."),
        split: str = SPLIT, max_steps: int = typer.Option(100, "--max-steps", min=1, help="Optimizer steps."),
        epochs: float | None = typer.Option(None, "--epochs", min=0.01, help="Passes over the train rows "
                                               "(replaces --max-steps)."),
        device: str = DEVICE, precision: str = PRECISION, seed: int = SEED,
        learning_rate: float = typer.Option(2e-4, "--lr", help="Learning rate of the LoRA weights."),
        max_length: int | None = typer.Option(None, "--max-length", help="Drop examples longer than this many "
                                                 "tokens (default: keep all)."),
        eval_every: float = typer.Option(0.25, "--eval-every", min=0.0001, help="Loss per decision position (first "
                                         "apart) on train and held-out rows every N steps; below 1: that share "
                                         "of the steps."),
        eval_rows: int = typer.Option(16, "--eval-rows", min=1, help="Rows per position and set in each of those "
                                      "measurements."),
        save_steps: float | None = typer.Option(None, "--save-steps", min=0.0001, help="Checkpoint every N steps "
                                                   "(below 1: that share of the steps) into OUT/checkpoints."),
        resume: bool = RESUME) -> None:
    """Fine-tune a role on the teacher's decisions (loss on the decision tokens only); write the adapter."""
    from aoi.train.sft import SftOptions, train_sft

    options = SftOptions(data=data, out=out, role=role, base=base, split=split, max_steps=max_steps, epochs=epochs,
                         device=device, precision=precision, seed=seed, learning_rate=learning_rate,
                         max_length=max_length, eval_every=eval_every, eval_rows=eval_rows, save_steps=save_steps,
                         resume=resume)
    print_manifest(lambda: train_sft(options))


def run_grpo(options: GrpoOptions) -> None:
    """Train with TRL's GRPOTrainer: the Observer, or (--role evolver) the scenario generator; print the manifest."""
    from aoi.train.evolver import train_evolver
    from aoi.train.grpo import train_grpo

    if options.role == "evolver" and options.sampler_url:
        typer.echo("error: --sampler-url draws the Observer's decisions; the evolver samples in this process", err=True)
        raise typer.Exit(2)
    train = train_evolver if options.role == "evolver" else train_grpo
    print_manifest(lambda: train(options))


def print_manifest(train) -> None:
    """Run the training; print its manifest, or the error as one line with exit status 2."""
    from aoi.models.base import ModelError
    from aoi.train.dataset import DatasetError
    from aoi.train.manifest import ManifestError

    try:
        manifest = train()
    except (DatasetError, ManifestError, ModelError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(json.dumps(manifest, indent=2, default=str))
