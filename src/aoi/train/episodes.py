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

from aoi.models.base import Message
from aoi.models.compact import prompt_format
from aoi.train.rollouts import Outcome, OutcomeCache, State, play
from aoi.train.sampling import GenerativeObserver, policy_observer, sample_seed

__all__ = ["GenerativeObserver", "prompt_key", "rollout_function"]  # GenerativeObserver: its old home


def prompt_key(messages: list[Message]) -> str:
    """Return a key identifying a prompt by its messages' roles and contents.

    Example:
        >>> prompt_key([{"role": "user", "content": "hi"}])
        '[["user", "hi"]]'
    """
    return json.dumps([[m["role"], m["content"]] for m in messages])


def rollout_function(rows, cache: OutcomeCache, episode_steps: int, seed: int,
                     max_iterations: int | None = None, constrained: bool = True) -> Callable:
    """Return a TRL rollout_func playing one whole episode per incoming prompt (prompts arrive repeated G times).

    The policy's decisions are sampled as aoi.train.sampling does (`constrained`: masked to the Observer's schema),
    in the decision format of the start row's prompt (the format the data was recorded in).
    """
    starts = {prompt_key(row["prompt"]): row for row in rows}

    def rollout(prompts: list, trainer) -> dict:
        out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "episode_key": []}
        for index, prompt in enumerate(prompts):
            key = f"episode-{trainer.state.global_step}-{index}"
            policy = policy_observer(trainer, constrained=constrained, seed=sample_seed(seed, key),
                                     decision_format=prompt_format(prompt))
            sample = _episode(starts[prompt_key(prompt)], policy, cache, key, (episode_steps, max_iterations),
                              random.Random(f"{seed}-{key}"))
            for name, value in sample.items():
                out[name].append(value)
        return out

    return rollout


def _episode(row: dict, policy: GenerativeObserver, cache: OutcomeCache, key: str, limits: tuple,
             rng: random.Random) -> dict:
    """Play one episode with the policy as Observer; keep its outcome; return one of its decisions as the sample."""
    outcome = play(State.from_row(row), policy, max_steps=limits[0], max_iterations=limits[1])
    if not policy.calls:  # the episode ended before the Observer spoke: sample its first decision to train on
        policy.complete(row["prompt"], role="observer")
    cache.played += 1
    decisions = tuple(call["text"] for call in policy.calls)
    cache.put(key, Outcome(**{**outcome.__dict__, "decisions": decisions}))
    call = policy.calls[rng.randrange(len(policy.calls))]
    return {"prompt_ids": call["prompt_ids"], "completion_ids": call["completion_ids"], "logprobs": call["logprobs"],
            "episode_key": key}
