"""How GRPO samples the policy's Observer decisions: through the `local:` backend, schema-constrained by default.

TRL's own generation samples free text, and a small model's free decisions rarely parse: every sample of a group
then scores alike and the group teaches nothing. `local_draws` samples each decision of a batch with
aoi.models.local (the schema mask of aoi.models.constrained, the stop at the JSON's close) and returns what TRL's
rollout_func hands back: the prompt ids, completion ids and the policy's own log-probabilities (from the raw logits,
before the schema mask); aoi.train.decisions then plays them. `GenerativeObserver` is the same sampler as a Model,
for whole-episode rollouts, Echo's samplers and the learning benchmark; each call it answers is kept as a `Draw`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aoi.models.base import Completion, Message
from aoi.models.compact import COMPACT


@dataclass(frozen=True, kw_only=True)
class Draw:
    """One sampled decision: its prompt's and its own token ids, the behaviour log-probs and its text."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float] | None  # log pi_behaviour(token) per completion token, as the sampler recorded them
    text: str
    logprobs_temperature: float | None = None  # the temperature of `logprobs` (None: the sampling one; a server's: 1)


def batch(draws: list[Draw]) -> dict[str, list | None]:
    """Return draws as a TRL rollout_func hands them back: prompt ids, completion ids and log-probs per sample
    (`logprobs` None when the draws have none: a server's draws that were not scored).

    Example:
        >>> batch([Draw(prompt_ids=[1], completion_ids=[2, 3], logprobs=[-0.5, -0.1], text="{}")])
        {'prompt_ids': [[1]], 'completion_ids': [[2, 3]], 'logprobs': [[-0.5, -0.1]]}
        >>> batch([Draw(prompt_ids=[1], completion_ids=[2], logprobs=None, text="{}")])["logprobs"] is None
        True
    """
    logprobs = [d.logprobs for d in draws]
    return {"prompt_ids": [d.prompt_ids for d in draws], "completion_ids": [d.completion_ids for d in draws],
            "logprobs": None if any(lp is None for lp in logprobs) else logprobs}


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
        self.calls: list[Draw] = []
        self.decision_format = decision_format

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None, context: Any = None) -> Completion:
        """Generate one decision; keep its prompt ids, completion ids, log-probabilities and text."""
        # The run config's max_tokens and temperature are ignored: the samples must be the trainer's (TRL's
        # max_completion_length and temperature), or the log-probabilities would not be the policy's.
        completion = self.local.complete(messages, role=role, schema=schema)
        prompt_ids = self.local.encode(self.local.prompt(messages))[0].tolist()
        self.calls.append(Draw(prompt_ids=prompt_ids, completion_ids=completion.meta["token_ids"],
                               logprobs=completion.logprobs, text=completion.text))
        return completion


def policy_observer(trainer: Any, *, constrained: bool, seed: int,
                    decision_format: str = COMPACT) -> GenerativeObserver:
    """Return the model being trained as the Observer, at the trainer's temperature and completion length."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    return GenerativeObserver(model, trainer.processing_class, max_new_tokens=trainer.args.max_completion_length,
                              temperature=trainer.args.temperature, constrained=constrained, seed=seed,
                              decision_format=decision_format)


def local_draws(seed: int) -> Callable:
    """Return a sampler of one schema-constrained Observer decision per incoming prompt, by the model being trained
    (prompts arrive repeated G times); it answers as a TRL rollout_func does (`batch`).

    Example:
        >>> draw = local_draws(seed=0)
        >>> sorted(draw(prompts, trainer))  # doctest: +SKIP
        ['completion_ids', 'logprobs', 'prompt_ids']
    """
    batches = {"count": 0}  # calls so far: each draws fresh samples, also after a resume (seeded by step)

    def draw(prompts: list, trainer) -> dict:
        batches["count"] += 1
        policy = policy_observer(trainer, constrained=True,
                                 seed=sample_seed(seed, trainer.state.global_step, batches["count"]))
        for prompt in prompts:
            policy.complete(prompt, role="observer")
        return batch(policy.calls)

    return draw
