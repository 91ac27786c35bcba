"""SFT loss by decision position: the first decision of an episode apart from the later ones, train and held out.

Later decisions can copy much of what earlier ones (already in their prompt) said, so an overall loss mostly measures
copying; the first decision has nothing to copy. `PositionLosses` (a TrainerCallback) measures the mean loss over the
decision tokens of each group (`train/loss_first`, `train/loss_later`, `eval/loss_first`, `eval/loss_later`) at step 0,
every `every` steps (a float below 1: that share of the run's steps) and at the end, and appends one line per
measurement to `metrics.jsonl`. Each group is a seeded sample of at most `rows` examples, the same at every
measurement, so the figures are comparable along the run.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aoi.train.common import append_jsonl

GROUPS = ("first", "later")


def token_ids(tokenizer, messages: list[dict], *, generation_prompt: bool = False) -> list[int]:
    """Return the chat template's token ids of messages (a plain list whatever transformers returns).

    transformers 5 returns a BatchEncoding (a Mapping, not a dict) from `apply_chat_template(tokenize=True)`.

    Example:
        >>> from aoi.models.bases import smollm2_tokenizer  # doctest: +SKIP
        >>> len(token_ids(smollm2_tokenizer(), [{"role": "user", "content": "hi"}])) > 2  # doctest: +SKIP
        True
    """
    ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=generation_prompt)
    ids = ids["input_ids"] if isinstance(ids, Mapping) else ids
    return list(ids[0]) if ids and isinstance(ids[0], list) else list(ids)


def position(row: dict) -> str:
    """Return a row's group: "first" for an episode's first decision, else "later".

    Example:
        >>> position({"decision_index": 0}), position({"decision_index": 3})
        ('first', 'later')
    """
    return "first" if int(row.get("decision_index") or 0) == 0 else "later"


def sample_groups(rows, limit: int, seed: int) -> dict[str, list[dict]]:
    """Return {group: at most `limit` rows}, a seeded sample of the rows of each decision position."""
    groups: dict[str, list[dict]] = {name: [] for name in GROUPS}
    for row in rows:
        groups[position(row)].append(row)
    rng = random.Random(seed)
    return {name: rng.sample(items, min(limit, len(items))) for name, items in groups.items()}


def decision_loss(model, tokenizer, row: dict) -> float:
    """Return the mean negative log-likelihood of a row's decision tokens given its prompt (no gradient)."""
    import torch

    prompt = token_ids(tokenizer, row["prompt"], generation_prompt=True)
    full = token_ids(tokenizer, row["prompt"] + row["completion"])
    device = next(model.parameters()).device
    ids = torch.tensor([full], device=device)
    labels = ids.clone()
    labels[0, :len(prompt)] = -100  # the loss covers the decision only, as in training (completion_only_loss)
    with torch.no_grad():
        return float(model(input_ids=ids, labels=labels).loss)


def group_losses(model, tokenizer, groups: dict[str, list[dict]], prefix: str) -> dict[str, float]:
    """Return {"<prefix>/loss_<group>": mean decision loss} for the groups that have rows."""
    was_training = model.training
    model.eval()
    try:
        return {f"{prefix}/loss_{name}": round(sum(decision_loss(model, tokenizer, r) for r in rows) / len(rows), 5)
                for name, rows in groups.items() if rows}
    finally:
        model.train(was_training)


def position_losses(tokenizer, sets: dict[str, Any], *, every: float, rows: int, seed: int, path: str | Path) -> Any:
    """Return the TrainerCallback measuring each set's loss per decision position (sets: {"train": rows, ...})."""
    from transformers import TrainerCallback

    samples = {prefix: sample_groups(data, rows, seed) for prefix, data in sets.items() if data is not None}

    class PositionLosses(TrainerCallback):
        """Measure at step 0, every `every` steps and at the end; append each measurement to metrics.jsonl."""

        last = -1

        def on_train_begin(self, args, state, control, model=None, **kwargs):
            """Measure the starting point (not again when a run resumes from a checkpoint)."""
            if state.global_step == 0:
                self.measure(state, model)

        def on_step_end(self, args, state, control, model=None, **kwargs):
            """Measure every `every` steps."""
            interval = max(1, math.ceil(every * state.max_steps)) if every < 1 else int(every)
            if state.global_step % interval == 0:
                self.measure(state, model)

        def on_train_end(self, args, state, control, model=None, **kwargs):
            """Measure the end of the run once."""
            if self.last != state.global_step:
                self.measure(state, model)

        def measure(self, state, model) -> None:
            """Append one line of every set's per-position loss."""
            self.last = state.global_step
            figures = {}
            for prefix, groups in samples.items():
                figures |= group_losses(model, tokenizer, groups, prefix)
            line = {"step": state.global_step, "epoch": state.epoch or 0.0, "time": time.time(), **figures}
            append_jsonl(path, line)

    return PositionLosses()
