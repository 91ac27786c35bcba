"""Supervised fine-tuning of a role (TRL SFTTrainer + PEFT LoRA) on the dataset's `sft/<role>` view.

The view is in TRL's conversational prompt-completion format (prompt: the messages the role was sent; completion:
the assistant's decision), so the loss covers the decision tokens only (`completion_only_loss`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aoi.train.common import Lora, callbacks, device_arguments, offline
from aoi.train.dataset import data_sha256, load_view
from aoi.train.manifest import write_manifest

COLUMNS = ("prompt", "completion")


@dataclass(kw_only=True)
class SftOptions:
    """One SFT run."""

    data: Path  # the dataset folder (`aoi data export --out`)
    out: Path  # the adapter folder to write
    role: str = "observer"
    base: str = "tiny"  # tiny, smollm2, or a model directory
    split: str = "by_target"  # which split's train part to train on
    max_steps: int = 100
    device: str = "cpu"
    seed: int = 0
    learning_rate: float = 2e-4
    batch_size: int = 1
    gradient_accumulation: int = 1
    max_length: int | None = None  # tokens per example; longer ones are dropped (TRL would cut the decision off)
    lora: Lora = field(default_factory=Lora)

    def hyper_parameters(self) -> dict:
        """Return what the manifest records about how the adapter was trained."""
        chosen = asdict(self)
        return {k: v for k, v in chosen.items() if k not in ("data", "out", "base", "split", "role", "device")}


def train_sft(options: SftOptions) -> dict:
    """Train a LoRA adapter for a role on the train part of a split; write it and its manifest; return the manifest.

    Example:
        >>> train_sft(SftOptions(data=Path("runs/data"), out=Path("runs/sft"), max_steps=10))  # doctest: +SKIP
        {'base': 'tiny', ...}
    """
    offline()
    device_args = device_arguments(options.device)  # before the slow imports and loads: bad input fails at once
    digest = data_sha256(options.data)
    rows = load_view(options.data, f"sft/{options.role}", options.split, "train")
    from trl import SFTConfig, SFTTrainer

    from aoi.models.bases import base_identity, load_base

    model, tokenizer = load_base(options.base, options.device)
    rows, dropped = _fitting(rows.select_columns(list(COLUMNS)), tokenizer, options.max_length)
    out = Path(options.out)
    config = SFTConfig(output_dir=str(out / "checkpoints"), max_steps=options.max_steps, seed=options.seed,
                       learning_rate=options.learning_rate, per_device_train_batch_size=options.batch_size,
                       gradient_accumulation_steps=options.gradient_accumulation, completion_only_loss=True,
                       max_length=None, logging_steps=1, save_strategy="no", report_to="none",
                       gradient_checkpointing=False, **device_args)
    trainer = SFTTrainer(model=model.train(), args=config, train_dataset=rows, processing_class=tokenizer,
                         peft_config=options.lora.peft(), callbacks=callbacks(out))
    started = time.perf_counter()
    result = trainer.train()
    wall = time.perf_counter() - started
    trainer.model.save_pretrained(str(out))
    metrics = {"train_loss": result.training_loss, "steps": result.global_step, "rows": len(rows),
               "rows_dropped_too_long": dropped, "wall_seconds": round(wall, 3),
               "steps_per_second": round(result.global_step / wall, 4) if wall else None}
    return write_manifest(out, base=base_identity(options.base), data_sha256=digest, split=options.split,
                          role=options.role, hyper_parameters=options.hyper_parameters(), metrics=metrics,
                          kind="sft", extra={"device": options.device})


def _fitting(rows, tokenizer, max_length: int | None):
    """Drop the examples longer than max_length tokens (prompt and decision); return (rows, how many dropped)."""
    if max_length is None:
        return rows, 0

    def fits(row) -> bool:
        ids = tokenizer.apply_chat_template(row["prompt"] + row["completion"], tokenize=True)
        return len(ids["input_ids"] if isinstance(ids, dict) else ids) <= max_length

    kept = rows.filter(fits, keep_in_memory=True)
    return kept, len(rows) - len(kept)
