"""Supervised fine-tuning of a role (TRL SFTTrainer + PEFT LoRA) on the dataset's `sft/<role>` view.

The view is in TRL's conversational prompt-completion format (prompt: the messages the role was sent; completion:
the assistant's decision), so the loss covers the decision tokens only (`completion_only_loss`). A run lasts
`max_steps` optimizer steps, or `epochs` passes over the rows; its loss per decision position (the first decision
apart from the later ones) is measured on the train rows and on the split's test rows (aoi.train.positions).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aoi.train.common import Lora, callbacks, device_arguments, offline, read_jsonl, resolve_precision
from aoi.train.dataset import DatasetError, data_sha256, load_view
from aoi.train.manifest import write_manifest
from aoi.train.positions import position_losses, token_ids

COLUMNS = ("prompt", "completion")
POSITION_COLUMNS = (*COLUMNS, "decision_index")
log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class SftOptions:
    """One SFT run."""

    data: Path  # the dataset folder (`aoi data export --out`)
    out: Path  # the adapter folder to write
    role: str = "observer"
    base: str = "tiny"  # tiny, smollm2, or a model directory
    split: str = "by_target"  # which split's train part to train on (its test part is the held-out loss set)
    max_steps: int = 100
    epochs: float | None = None  # passes over the train rows; set, it replaces max_steps
    device: str = "cpu"
    precision: str = "auto"  # fp32, bf16 (autocast) or auto: bf16 on CUDA and on a CPU with native bf16
    seed: int = 0
    learning_rate: float = 2e-4
    batch_size: int = 1
    gradient_accumulation: int = 1
    max_length: int | None = None  # tokens per example; longer ones are dropped (TRL would cut the decision off)
    eval_every: float = 0.25  # per-position losses every N steps (below 1: that share of the run's steps)
    eval_rows: int = 16  # rows per decision position and set in those measurements (a seeded sample)
    save_steps: float | None = None  # checkpoint every N steps (below 1: that share of the steps); None: none
    resume: bool = False  # continue from the newest complete checkpoint in OUT/checkpoints (none: start afresh)
    lora: Lora = field(default_factory=Lora)

    def hyper_parameters(self) -> dict:
        """Return what the manifest records about how the adapter was trained."""
        chosen = asdict(self)
        return {k: v for k, v in chosen.items() if k not in ("data", "out", "base", "split", "role", "device",
                                                             "precision", "resume")}


def train_sft(options: SftOptions) -> dict:
    """Train a LoRA adapter for a role on the train part of a split; write it and its manifest; return the manifest.

    Example:
        >>> train_sft(SftOptions(data=Path("runs/data"), out=Path("runs/sft"), epochs=3))  # doctest: +SKIP
        {'base': 'tiny', ...}
    """
    offline()
    precision = resolve_precision(options.precision, options.device, options.base)
    device_args = device_arguments(options.device, precision)  # before the slow loads: bad input fails at once
    digest = data_sha256(options.data)
    rows = load_view(options.data, f"sft/{options.role}", options.split, "train")
    held = _held_out(options)
    from aoi.models.bases import base_identity, load_base

    model, tokenizer = load_base(options.base, options.device)
    rows, dropped = fitting(rows.select_columns(list(POSITION_COLUMNS)), tokenizer, options.max_length)
    out = Path(options.out)
    trainer = _trainer(options, model, tokenizer, rows, held, device_args)
    started = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=_checkpoint(out) if options.resume else None)
    wall = time.perf_counter() - started
    trainer.model.save_pretrained(str(out))
    metrics = {"train_loss": result.training_loss, "steps": result.global_step, "rows": len(rows),
               "eval_rows": len(held) if held is not None else 0, "rows_dropped_too_long": dropped,
               "epochs": round(trainer.state.epoch or 0.0, 3), "wall_seconds": round(wall, 3),
               "steps_per_second": round(result.global_step / wall, 4) if wall else None,
               "position_losses": _position_figures(out)}
    return write_manifest(out, base=base_identity(options.base), data_sha256=digest, split=options.split,
                          role=options.role, hyper_parameters=options.hyper_parameters(), metrics=metrics,
                          kind="sft", extra={"device": options.device, "precision": precision})


def _trainer(options: SftOptions, model, tokenizer, rows, held, device_args: dict):
    """Build the SFTTrainer: steps or epochs, checkpoints, metric sinks and the per-position losses."""
    from trl import SFTConfig, SFTTrainer

    out = Path(options.out)
    length = {"max_steps": -1, "num_train_epochs": options.epochs} if options.epochs else \
        {"max_steps": options.max_steps}
    saving = {"save_strategy": "steps", "save_steps": options.save_steps, "save_total_limit": None} \
        if options.save_steps else {"save_strategy": "no"}
    config = SFTConfig(output_dir=str(out / "checkpoints"), seed=options.seed, learning_rate=options.learning_rate,
                       per_device_train_batch_size=options.batch_size,
                       gradient_accumulation_steps=options.gradient_accumulation, completion_only_loss=True,
                       max_length=None, logging_steps=1, report_to="none", gradient_checkpointing=False,
                       **length, **saving, **device_args)
    losses = position_losses(tokenizer, {"train": rows, "eval": held}, every=options.eval_every,
                             rows=options.eval_rows, seed=options.seed, path=out / "metrics.jsonl")
    return SFTTrainer(model=model.train(), args=config, train_dataset=rows.select_columns(list(COLUMNS)),
                      processing_class=tokenizer, peft_config=options.lora.peft(),
                      callbacks=[*callbacks(out), losses])


def _held_out(options: SftOptions):
    """Return the split's test rows of the view (the held-out loss set), or None when the dataset has none."""
    try:
        rows = load_view(options.data, f"sft/{options.role}", options.split, "test")
    except DatasetError:
        return None
    return rows.select_columns(list(POSITION_COLUMNS))


def _checkpoint(out: Path) -> str | None:
    """Return the newest checkpoint that was written to the end (it has trainer_state.json), else None."""
    done = [p for p in (out / "checkpoints").glob("checkpoint-*") if (p / "trainer_state.json").is_file()]
    newest = max(done, key=lambda p: int(p.name.rpartition("-")[2]), default=None)
    return str(newest) if newest else None


def _position_figures(out: Path) -> dict:
    """Return the first and the last per-position measurement of the run ({} when none was made)."""
    lines = [line for line in read_jsonl(out / "metrics.jsonl") if any(k.endswith("/loss_first") for k in line)]
    if not lines:
        return {}
    return {"start": _losses(lines[0]), "end": _losses(lines[-1])}


def _losses(line: dict) -> dict:
    """Return a measurement's step and losses."""
    return {k: v for k, v in line.items() if "/loss_" in k or k == "step"}


def fitting(rows, tokenizer, max_length: int | None):
    """Drop the examples longer than max_length tokens (prompt and decision); return (rows, how many dropped)."""
    if max_length is None:
        return rows, 0
    kept = rows.filter(lambda row: len(token_ids(tokenizer, row["prompt"] + row["completion"])) <= max_length,
                       keep_in_memory=True)
    dropped = len(rows) - len(kept)
    if dropped:
        log.warning("dropped %d of %d examples longer than --max-length %d tokens", dropped, len(rows), max_length)
    if len(kept) == 0:
        raise DatasetError(f"every one of the {len(rows)} examples is longer than --max-length {max_length} tokens; "
                           "raise --max-length or leave it out")
    return kept, dropped
