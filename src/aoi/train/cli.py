"""`aoi train sft` and `aoi train grpo`: train a role's LoRA adapter (CPU by default, --device cuda in bf16)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

train_app = typer.Typer(help="Train a role's LoRA adapter: SFT on teacher data, GRPO on rewards from the twin.",
                        no_args_is_help=True)

ROLE = typer.Option("observer", "--role", help="The role to train (GRPO: observer, or evolver: the scenario "
                    "generator).")
DATA = typer.Option(..., "--data", help="Dataset folder written by `aoi data export` (GRPO --role evolver: "
                    "a seed scenario file, JSON Lines).")
OUT = typer.Option(..., "--out", help="Adapter folder to write (adapter, manifest.json, metrics.jsonl, tensorboard/).")
SPLIT = typer.Option("by_target", "--split", help="Train on this split's train part: by_target, by_family, by_app.")
DEVICE = typer.Option("cpu", "--device", help="cpu (fp32) or cuda (bf16).")
SEED = typer.Option(0, "--seed", help="Seed of initialisation, shuffling and sampling: same seed, same run.")


@train_app.command("sft")
def sft(role: str = ROLE, data: Path = DATA, out: Path = OUT,
        base: str = typer.Option("smollm2", "--base", help="tiny (2-layer random, for smoke runs), smollm2, or a "
                                 "model directory."),
        split: str = SPLIT, max_steps: int = typer.Option(100, "--max-steps", min=1, help="Optimizer steps."),
        epochs: float | None = typer.Option(None, "--epochs", min=0.01, help="Passes over the train rows "
                                               "(replaces --max-steps)."),
        device: str = DEVICE, seed: int = SEED,
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
        resume: bool = typer.Option(False, "--resume", help="Continue from the newest checkpoint in OUT.")) -> None:
    """Fine-tune a role on the teacher's decisions (loss on the decision tokens only); write the adapter."""
    from aoi.train.sft import SftOptions, train_sft

    options = SftOptions(data=data, out=out, role=role, base=base, split=split, max_steps=max_steps, epochs=epochs,
                         device=device, seed=seed, learning_rate=learning_rate, max_length=max_length,
                         eval_every=eval_every, eval_rows=eval_rows, save_steps=save_steps, resume=resume)
    _report(lambda: train_sft(options))


@train_app.command("grpo")
def grpo(role: str = ROLE, data: Path = DATA, out: Path = OUT,
         init: Path | None = typer.Option(None, "--init", help="SFT adapter to start from (its base is used)."),
         base: str | None = typer.Option(None, "--base", help="Base without --init: tiny, smollm2 or a model "
                                            "directory (default tiny)."),
         split: str = SPLIT, max_steps: int = typer.Option(20, "--max-steps", min=1, help="Optimizer steps."),
         config: Path | None = typer.Option(None, "--config", help="YAML/JSON file: grpo (GRPOConfig fields: "
                                               "loss_type, beta, num_generations...), rewards (weights), rollout "
                                               "(mode: per_decision|whole_episode), lora."),
         resume: bool = typer.Option(False, "--resume", help="Continue from the newest checkpoint in OUT."),
         device: str = DEVICE, seed: int = SEED,
         sampler_url: str | None = typer.Option(None, "--sampler-url", help="Draw the groups on this vLLM server "
                                                "(`aoi serve-model --base BASE`, e.g. http://127.0.0.1:8000/v1), or "
                                                "`vllm` to start one for the run; it loads each new adapter "
                                                "version (--engine echo: every sampler draws there). Default: "
                                                "sample in this process.")) -> None:
    """Train the Observer with GRPO; rewards are the verdicts of real episodes in the twin."""
    from aoi.train.evolver import train_evolver
    from aoi.train.grpo import GrpoOptions, train_grpo

    options = GrpoOptions(data=data, out=out, role=role, init=init, base=base, split=split, max_steps=max_steps,
                          config=config, resume=resume, device=device, seed=seed, sampler_url=sampler_url)
    if role == "evolver" and sampler_url:
        typer.echo("error: --sampler-url draws the Observer's decisions; the evolver samples in this process", err=True)
        raise typer.Exit(2)
    train = train_evolver if role == "evolver" else train_grpo  # the scenario generator, or the Observer
    _report(lambda: train(options))


def _report(train) -> None:
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
