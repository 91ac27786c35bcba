"""The policy both ends hold: a base model with a LoRA adapter, and the log-probabilities the GRPO loss needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aoi.train.common import Lora


def load_policy(base: str, *, init: str | Path | None = None, lora: Lora | None = None, device: str = "cpu",
                trainable: bool = False, seed: int = 0) -> tuple[Any, Any]:
    """Return (PEFT model, tokenizer): the base with the init adapter, else a fresh LoRA seeded by `seed`.

    Example:
        >>> model, tokenizer = load_policy("tiny")  # doctest: +SKIP
        >>> model.peft_config["default"].r  # doctest: +SKIP
        8
    """
    import torch
    from peft import PeftModel, get_peft_model

    from aoi.models.bases import load_base

    model, tokenizer = load_base(base, device)
    if init is not None:
        model = PeftModel.from_pretrained(model, str(init), is_trainable=trainable)
    else:
        with torch.random.fork_rng(devices=[]):  # the same seed gives the same fresh LoRA A matrices
            torch.manual_seed(seed)
            model = get_peft_model(model, (lora or Lora()).peft())
    return (model.train() if trainable else model.eval()), tokenizer


def completion_logprobs(model: Any, prompt_ids: list[int], completion_ids: list[int], temperature: float) -> Any:
    """Return log pi(token) of each completion token given the prompt (a 1-D tensor with the graph kept).

    Logits are divided by the sampling temperature, as the sampler's recorded log-probs were (aoi.models.local).
    """
    import torch

    device = next(model.parameters()).device
    ids = torch.tensor([prompt_ids + completion_ids], device=device)
    # Only the completion's positions go through the LM head: over a 1,000-token prompt and a 49k vocabulary the
    # full logits would dominate the update's time and memory.
    keep = len(completion_ids) + 1
    logits = model(input_ids=ids, attention_mask=torch.ones_like(ids), logits_to_keep=keep).logits[0, -keep:-1]
    scaled = logits.float() / (temperature if temperature > 0 else 1.0)
    targets = torch.tensor(completion_ids, device=device).view(-1, 1)
    return torch.log_softmax(scaled, dim=-1).gather(1, targets).view(-1)
