"""Whole-episode rollouts for GRPO: the policy plays the Observer from an episode's start to its verdict.

TRL's `rollout_func` hands back one completion per prompt, so each episode contributes one of its Observer decisions
(drawn uniformly, seeded) as the trained sample, carrying the episode's reward: every decision shares the episode's
advantage in expectation (an unbiased estimate of the whole-episode gradient up to a 1/decisions factor), without
training on a context the policy never saw.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from aoi.models.base import Completion, Message
from aoi.train.rollouts import Outcome, OutcomeCache, State, play


def prompt_key(messages: list[Message]) -> str:
    """Return a key identifying a prompt by its messages' roles and contents.

    Example:
        >>> prompt_key([{"role": "user", "content": "hi"}])
        '[["user", "hi"]]'
    """
    return json.dumps([[m["role"], m["content"]] for m in messages])


class GenerativeObserver:
    """A causal LM answering as the Observer (sampling, or greedy at temperature 0); it keeps every call's tokens."""

    name = "policy"

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = 256, temperature: float = 1.0):
        self.model, self.tokenizer, self.calls = model, tokenizer, []
        self.max_new_tokens, self.temperature = max_new_tokens, temperature

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None) -> Completion:
        """Generate one decision; keep its prompt ids, completion ids, log-probabilities and text."""
        import torch

        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"].to(self.model.device)
        with torch.no_grad():
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), **self._sampling())
        new = out.sequences[0, ids.shape[1]:]
        scores = torch.stack([step[0] for step in out.scores]).float()
        logprobs = torch.log_softmax(scores, dim=-1).gather(1, new.view(-1, 1)).view(-1).tolist()
        decoded = self.tokenizer.decode(new, skip_special_tokens=True).strip()
        self.calls.append({"prompt_ids": ids[0].tolist(), "completion_ids": new.tolist(), "logprobs": logprobs,
                           "text": decoded})
        return Completion(decoded, input_tokens=int(ids.shape[1]), output_tokens=int(new.shape[0]))

    def _sampling(self) -> dict:
        """Return generate() options: TRL's sampling (no top-k/top-p cut) or greedy decoding."""
        pad = self.tokenizer.pad_token_id
        opts = {"max_new_tokens": self.max_new_tokens, "return_dict_in_generate": True, "output_scores": True,
                "pad_token_id": self.tokenizer.eos_token_id if pad is None else pad}
        if self.temperature > 0:
            return opts | {"do_sample": True, "temperature": self.temperature, "top_k": 0, "top_p": 1.0}
        return opts | {"do_sample": False, "temperature": None, "top_k": None, "top_p": None}


def policy_observer(trainer: Any) -> GenerativeObserver:
    """Return the model being trained as the Observer, at the trainer's temperature and completion length."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    return GenerativeObserver(model, trainer.processing_class, max_new_tokens=trainer.args.max_completion_length,
                              temperature=trainer.args.temperature)


def rollout_function(rows, cache: OutcomeCache, episode_steps: int, seed: int,
                     max_iterations: int | None = None) -> Callable:
    """Return a TRL rollout_func playing one whole episode per incoming prompt (prompts arrive repeated G times)."""
    starts = {prompt_key(row["prompt"]): row for row in rows}

    def rollout(prompts: list, trainer) -> dict:
        out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "episode_key": []}
        for index, prompt in enumerate(prompts):
            key = f"episode-{trainer.state.global_step}-{index}"
            sample = _episode(starts[prompt_key(prompt)], trainer, cache, key, (episode_steps, max_iterations),
                              random.Random(f"{seed}-{key}"))
            for name, value in sample.items():
                out[name].append(value)
        return out

    return rollout


def _episode(row: dict, trainer, cache: OutcomeCache, key: str, limits: tuple, rng: random.Random) -> dict:
    """Play one episode with the policy as Observer; keep its outcome; return one of its decisions as the sample."""
    policy = policy_observer(trainer)
    outcome = play(State.from_row(row), policy, max_steps=limits[0], max_iterations=limits[1])
    if not policy.calls:  # the episode ended before the Observer spoke: sample its first decision to train on
        policy.complete(row["prompt"], role="observer")
    cache.played += 1
    decisions = tuple(call["text"] for call in policy.calls)
    cache.put(key, Outcome(**{**outcome.__dict__, "decisions": decisions}))
    call = policy.calls[rng.randrange(len(policy.calls))]
    return {"prompt_ids": call["prompt_ids"], "completion_ids": call["completion_ids"], "logprobs": call["logprobs"],
            "episode_key": key}
