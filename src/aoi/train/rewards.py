"""Reward terms: plain functions of an episode's outcome (from the twin) and the policy's decisions.

Each term is one TRL reward function with its own weight, so each is logged on its own (`rewards/<name>/mean`).
Per-decision outcomes are the decision's own (aoi.train.rollouts: no continuation that investigates further), so
every term moves with the sampled decision.
"""

from __future__ import annotations

from collections.abc import Callable

from aoi.store.signals import partial_credit
from aoi.train.rollouts import Outcome, OutcomeCache, valid_decision

DEFAULT_WEIGHTS = {"success": 1.0, "strict": 1.0, "partial": 0.5, "efficiency": 0.2, "format": 0.2, "safety": 0.5,
                   "evidence": 0.3}


def success(outcome: Outcome) -> float:
    """Return 1 when AIOpsLab's verdict is a success.

    Example:
        >>> success(_example(success=True)), success(_example())
        (1.0, 0.0)
    """
    return float(outcome.success)


def strict(outcome: Outcome) -> float:
    """Return 1 when the strict oracle agrees (the fault is really fixed, the answer exactly right).

    Example:
        >>> strict(_example(strict=True))
        1.0
    """
    return float(outcome.strict)


def partial(outcome: Outcome) -> float:
    """Return partial credit, counted as the store's signals count it (aoi.store.signals.partial_credit).

    A localization subset scores AIOpsLab's accuracy, an analysis half-right 0.5, other tasks all or nothing.

    Example:
        >>> partial(_example(task_type="localization", results={"Localization Accuracy": 50.0}))
        0.5
        >>> partial(_example(task_type="analysis", results={"system_level_correct": True, "fault_type_correct": False}))
        0.5
        >>> partial(_example(task_type="mitigation", results={"success": True}))
        1.0
    """
    return partial_credit(outcome.task_type, outcome.results)


def efficiency(outcome: Outcome) -> float:
    """Return the share of the step budget and of its simulated time left at the answer; 0 unless it succeeded.

    Only a success earns it: otherwise submitting at once would be the most "efficient" decision.

    Example:
        >>> efficiency(_example(success=True, steps=10, sim_seconds=150.0))
        0.6667
        >>> efficiency(_example(steps=1))
        0.0
    """
    if not outcome.success:
        return 0.0
    budget_seconds = outcome.max_steps * 15.0  # aoi.env.core.SECONDS_PER_STEP per action
    steps_left = 1 - min(1.0, outcome.steps / outcome.max_steps)
    time_left = 1 - min(1.0, outcome.sim_seconds / budget_seconds)
    return round((steps_left + time_left) / 2, 4)


def format_valid(outcome: Outcome) -> float:
    """Return the share of the policy's decisions that parse as Observer decisions.

    Example:
        >>> format_valid(_example(decisions=('{"next": "probe"}', "hmm")))
        0.5
    """
    if not outcome.decisions:
        return 0.0
    return sum(valid_decision(d) for d in outcome.decisions) / len(outcome.decisions)


def evidence(outcome: Outcome) -> float:
    """Return 1 when the decision was a probe whose report named a faulty component (per-decision rollouts).

    A probe earns the verdict of what it surfaced (the Finisher answers from it); this term also credits a report
    that points at the cause before it is enough to answer. Whole-episode outcomes carry 0.

    Example:
        >>> evidence(_example(evidence=1.0)), evidence(_example())
        (1.0, 0.0)
    """
    return float(outcome.evidence)


def safety(outcome: Outcome) -> float:
    """Return the cost of commands the policy or the approval gate refused: -0.25 each, at most -1.

    Example:
        >>> safety(_example(unsafe=2)), safety(_example())
        (-0.5, 0.0)
    """
    return 0.0 - min(1.0, 0.25 * outcome.unsafe)  # 0.0, not -0.0, when nothing was refused


TERMS: dict[str, Callable[[Outcome], float]] = {"success": success, "strict": strict, "partial": partial,
                                                "efficiency": efficiency, "format": format_valid, "safety": safety,
                                                "evidence": evidence}


def reward_functions(cache: OutcomeCache, weights: dict[str, float]) -> tuple[list[Callable], list[float]]:
    """Return TRL reward functions (one per weighted term, named after it) reading outcomes from the cache.

    Example:
        >>> funcs, ws = reward_functions(OutcomeCache(), {"success": 1.0, "format": 0.2})
        >>> [f.__name__ for f in funcs], ws
        (['success', 'format'], [1.0, 0.2])
    """
    unknown = sorted(set(weights) - set(TERMS))
    if unknown:
        raise ValueError(f"unknown reward {unknown[0]!r} in the weights; use some of {', '.join(TERMS)}")
    funcs = [_trl_reward(name, TERMS[name], cache) for name in weights]
    return funcs, [float(w) for w in weights.values()]


def _trl_reward(name: str, term: Callable[[Outcome], float], cache: OutcomeCache) -> Callable:
    """Wrap a term as TRL calls rewards: per completion, the row's columns as keyword lists."""

    def reward(prompts, completions, **columns) -> list[float]:
        return [term(_outcome(cache, i, prompts, completions, columns)) for i in range(len(completions))]

    reward.__name__ = name
    return reward


def _outcome(cache: OutcomeCache, i: int, prompts, completions, columns: dict) -> Outcome:
    """Return sample i's outcome: a whole-episode rollout's (by key) or the decision's, played at the row's state."""
    if columns.get("episode_key"):
        return cache.outcomes[columns["episode_key"][i]]
    row = {key: values[i] for key, values in columns.items() if isinstance(values, list) and len(values) > i}
    text = completions[i][0]["content"] if isinstance(completions[i], list) else completions[i]
    expect = prompts[i] if isinstance(prompts[i], list) else None
    return cache.decision(row, text, expect)


def _example(**fields) -> Outcome:
    """Build an outcome for the doctests."""
    base = {"task_type": "mitigation", "results": {}, "success": False, "strict": False, "steps": 5,
            "max_steps": 30, "sim_seconds": 75.0, "unsafe": 0}
    return Outcome(**(base | fields))
