"""How GRPO samples the policy's Observer decisions: through the `local:` backend, schema-constrained by default.

TRL's own generation samples free text, and a small model's free decisions rarely parse: every sample of a group
then scores alike and the group teaches nothing. `decision_rollout` is a TRL `rollout_func` that samples each decision
with aoi.models.local (the schema mask of aoi.models.constrained, the stop at the JSON's close) and hands TRL the
prompt ids, completion ids and the policy's own log-probabilities (from the raw logits, before the schema mask).
`GenerativeObserver` is the same sampler as a Model, for whole-episode rollouts and the learning benchmark.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from aoi.models.base import Completion, Message
from aoi.models.compact import COMPACT


def sample_seed(*parts: Any) -> int:
    """Return a sampling seed that is a function of its parts (run seed, step, index), stable across processes.

    Example:
        >>> sample_seed(0, 3, 1) == sample_seed(0, 3, 1) != sample_seed(0, 3, 2)
        True
    """
    digest = hashlib.sha256("-".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") % 2**31


class GenerativeObserver:
    """A causal LM answering as the Observer through aoi.models.local; it keeps every call's tokens and log-probs.

    Sampling (temperature > 0) uses no top-k/top-p cut, as TRL's GRPO defaults; temperature 0 is greedy.
    `constrained` masks the decision to the schema its prompt asks for (aoi.models.compact.reply_schema); either way
    the reply stops when its JSON closes. `decision_format` is the format it decides in when it plays whole episodes
    (compact, as every local model, unless the data it learned from is standard).
    """

    name = "policy"

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = 256, temperature: float = 1.0,
                 constrained: bool = False, seed: int = 0, decision_format: str = COMPACT):
        from aoi.models.local import LocalModel

        self.local = LocalModel.from_loaded(model, tokenizer, name="local:policy", max_new_tokens=max_new_tokens,
                                            temperature=temperature, seed=seed, logprobs=True,
                                            constrained=constrained, progress=False)
        self.calls: list[dict] = []
        self.decision_format = decision_format

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None) -> Completion:
        """Generate one decision; keep its prompt ids, completion ids, log-probabilities and text."""
        # The run config's max_tokens and temperature are ignored: the samples must be the trainer's (TRL's
        # max_completion_length and temperature), or the log-probabilities would not be the policy's.
        completion = self.local.complete(messages, role=role)
        prompt_ids = self.local.encode(self.local.prompt(messages))[0].tolist()
        self.calls.append({"prompt_ids": prompt_ids, "completion_ids": completion.meta["token_ids"],
                           "logprobs": completion.logprobs, "text": completion.text})
        return completion


def policy_observer(trainer: Any, *, constrained: bool, seed: int,
                    decision_format: str = COMPACT) -> GenerativeObserver:
    """Return the model being trained as the Observer, at the trainer's temperature and completion length."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    return GenerativeObserver(model, trainer.processing_class, max_new_tokens=trainer.args.max_completion_length,
                              temperature=trainer.args.temperature, constrained=constrained, seed=seed,
                              decision_format=decision_format)


def decision_rollout(seed: int, constrained: bool = True) -> Callable:
    """Return a TRL rollout_func sampling one Observer decision per incoming prompt (prompts arrive repeated G times).

    Example:
        >>> rollout = decision_rollout(seed=0)
        >>> out = rollout(prompts, trainer)  # doctest: +SKIP
        >>> sorted(out)  # doctest: +SKIP
        ['completion_ids', 'logprobs', 'prompt_ids']
    """
    batches = {"count": 0}  # rollout calls so far: each draws fresh samples, also after a resume (seeded by step)

    def rollout(prompts: list, trainer) -> dict:
        batches["count"] += 1
        policy = policy_observer(trainer, constrained=constrained,
                                 seed=sample_seed(seed, trainer.state.global_step, batches["count"]))
        for prompt in prompts:
            policy.complete(prompt, role="observer")
        return {name: [call[name] for call in policy.calls] for name in ("prompt_ids", "completion_ids", "logprobs")}

    return rollout
