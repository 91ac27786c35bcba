"""Whole-episode rollouts for GRPO: the policy plays the Observer from an episode's start to its verdict.

TRL's `rollout_func` hands back one completion per prompt, so each episode contributes one of its Observer decisions
(drawn uniformly, seeded) as the trained sample, carrying the episode's outcome (the `outcome` column the reward
terms read): every decision shares the episode's advantage in expectation (an unbiased estimate of the
whole-episode gradient up to a 1/decisions factor), without training on a context the policy never saw.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from aoi.models.compact import prompt_format
from aoi.train.decisions import batch_rows
from aoi.train.rollouts import Outcome, OutcomeCache, State, play
from aoi.train.sampling import Draw, GenerativeObserver, batch, policy_observer, sample_seed

__all__ = ["GenerativeObserver", "rollout_function"]  # GenerativeObserver: its old home


def rollout_function(cache: OutcomeCache, episode_steps: int, seed: int, max_iterations: int | None = None,
                     constrained: bool = True) -> Callable:
    """Return a TRL rollout_func playing one whole episode per incoming prompt (prompts arrive repeated G times).

    The policy's decisions are sampled as aoi.train.sampling does (`constrained`: masked to the Observer's schema),
    in the decision format of the start row's prompt (the format the data was recorded in).
    """

    def rollout(prompts: list, trainer) -> dict:
        draws, outcomes = [], []
        for index, row in enumerate(batch_rows(trainer, prompts)):
            key = f"episode-{trainer.state.global_step}-{index}"
            policy = policy_observer(trainer, constrained=constrained, seed=sample_seed(seed, key),
                                     decision_format=prompt_format(row["prompt"]))
            draw, outcome = _episode(row, policy, (episode_steps, max_iterations), random.Random(f"{seed}-{key}"))
            cache.played += 1
            draws.append(draw)
            outcomes.append(outcome)
        return {**batch(draws), "outcome": outcomes}

    return rollout


def _episode(row: dict, policy: GenerativeObserver, limits: tuple, rng: random.Random) -> tuple[Draw, Outcome]:
    """Play one episode with the policy as Observer; return one of its decisions as the sample, and its outcome."""
    outcome = play(State.from_row(row), policy, max_steps=limits[0], max_iterations=limits[1])
    if not policy.calls:  # the episode ended before the Observer spoke: sample its first decision to train on
        policy.complete(row["prompt"], role="observer")
    decisions = tuple(draw.text for draw in policy.calls)
    return policy.calls[rng.randrange(len(policy.calls))], Outcome(**{**outcome.__dict__, "decisions": decisions})
