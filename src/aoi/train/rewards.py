"""Reward terms: plain TRL reward functions of the outcomes the rollout played in the twin.

The rollout (aoi.train.decisions per decision, aoi.train.episodes per episode) plays every sample and hands its
`Outcome` on in the `outcome` column; each term is `f(prompts, completions, outcome, **kwargs) -> list[float]` and
reads only that column. Each term has its own weight, so each is logged on its own (`rewards/<name>/mean`); a
sample's reward is the weighted sum (`weighted`: TRL sums the same terms with the same weights, Echo calls it).
Per-decision outcomes are the decision's own (aoi.train.rollouts: no continuation that investigates further), so
every term moves with the sampled decision.
"""

from __future__ import annotations

from collections.abc import Callable

from aoi.env.core import SECONDS_PER_STEP
from aoi.tasks import TaskType, partial_credit
from aoi.train.rollouts import Outcome, valid_decision

DEFAULT_WEIGHTS = {"success": 1.0, "strict": 1.0, "partial": 0.5, "efficiency": 0.2, "format": 0.2, "safety": 0.5,
                   "evidence": 0.3}


def success(prompts: list, completions: list, outcome: list[Outcome], **kwargs) -> list[float]:
    """Return 1 for each sample whose episode AIOpsLab's verdict calls a success.

    Example:
        >>> success([], [], outcome=[_example(success=True), _example()])
        [1.0, 0.0]
    """
    return [float(o.success) for o in outcome]


def strict(prompts: list, completions: list, outcome: list[Outcome], **kwargs) -> list[float]:
    """Return 1 for each sample the strict oracle passes (the fault is really fixed, the answer exactly right).

    Example:
        >>> strict([], [], outcome=[_example(strict=True)])
        [1.0]
    """
    return [float(o.strict) for o in outcome]


def partial(prompts: list, completions: list, outcome: list[Outcome], **kwargs) -> list[float]:
    """Return partial credit by the task type's rule, as the store's signals count it (aoi.tasks.partial_credit).

    A localization subset scores AIOpsLab's accuracy, an analysis half-right 0.5, other tasks all or nothing.

    Example:
        >>> partial([], [], outcome=[
        ...     _example(task_type="localization", results={"Localization Accuracy": 50.0}),
        ...     _example(task_type="analysis", results={"system_level_correct": True, "fault_type_correct": False}),
        ...     _example(task_type="mitigation", results={"success": True})])
        [0.5, 0.5, 1.0]
    """
    return [partial_credit(o.task_type, o.results) for o in outcome]


def efficiency(prompts: list, completions: list, outcome: list[Outcome], **kwargs) -> list[float]:
    """Return the share of the step budget and of its simulated time left at the answer; 0 unless it succeeded.

    Only a success earns it: otherwise submitting at once would be the most "efficient" decision.

    Example:
        >>> efficiency([], [], outcome=[_example(success=True, steps=10, sim_seconds=150.0), _example(steps=1)])
        [0.6667, 0.0]
    """
    return [_left(o) if o.success else 0.0 for o in outcome]


def _left(outcome: Outcome) -> float:
    """Return the mean of the step budget's and the simulated time budget's shares left."""
    budget_seconds = outcome.max_steps * SECONDS_PER_STEP  # the environment's simulated seconds per action
    steps_left = 1 - min(1.0, outcome.steps / outcome.max_steps)
    time_left = 1 - min(1.0, outcome.sim_seconds / budget_seconds)
    return round((steps_left + time_left) / 2, 4)


def format_valid(prompts: list, completions: list, outcome: list[Outcome], **kwargs) -> list[float]:
    """Return the share of each sample's policy decisions that parse as Observer decisions.

    Example:
        >>> format_valid([], [], outcome=[_example(decisions=('{"next": "probe"}', "hmm")), _example()])
        [0.5, 0.0]
    """
    return [sum(map(valid_decision, o.decisions)) / len(o.decisions) if o.decisions else 0.0 for o in outcome]


format_valid.__name__ = "format"  # TRL names a reward function's logs after it: rewards/format/mean


def evidence(prompts: list, completions: list, outcome: list[Outcome], **kwargs) -> list[float]:
    """Return 1 for each decision that was a probe whose report named a faulty component, or another decision that
    succeeded itself (per-decision rollouts).

    A probe earns the verdict of what it surfaced (the Finisher answers from it); this term also credits a report
    that points at the cause before it is enough to answer. A right submission or fix earns it too: it had the evidence
    in hand, and must not score below a probe after which the Finisher gives the same answer (learning-v3's GRPO,
    rewarded so, learned to put off submitting). Whole-episode outcomes carry 0.

    Example:
        >>> evidence([], [], outcome=[_example(evidence=1.0), _example()])
        [1.0, 0.0]
    """
    return [float(o.evidence) for o in outcome]


def safety(prompts: list, completions: list, outcome: list[Outcome], **kwargs) -> list[float]:
    """Return the cost of commands the policy or the approval gate refused: -0.25 each, at most -1.

    Example:
        >>> safety([], [], outcome=[_example(unsafe=2), _example()])
        [-0.5, 0.0]
    """
    return [0.0 - min(1.0, 0.25 * o.unsafe) for o in outcome]  # 0.0, not -0.0, when nothing was refused


TERMS: dict[str, Callable[..., list[float]]] = {"success": success, "strict": strict, "partial": partial,
                                                "efficiency": efficiency, "format": format_valid,
                                                "safety": safety, "evidence": evidence}


def reward_functions(weights: dict[str, float]) -> tuple[list[Callable], list[float]]:
    """Return TRL's reward functions and weights: one per weighted term, named after it.

    Example:
        >>> funcs, ws = reward_functions({"success": 1.0, "format": 0.2})
        >>> [f.__name__ for f in funcs], ws
        (['success', 'format'], [1.0, 0.2])
    """
    checked = check_weights(weights)
    return [TERMS[name] for name in checked], list(checked.values())


def check_weights(weights: dict[str, float]) -> dict[str, float]:
    """Return the weights as floats; a name that is not a term is an error saying which names are.

    Example:
        >>> check_weights({"success": 1, "format": 0.2})
        {'success': 1.0, 'format': 0.2}
    """
    unknown = sorted(set(weights) - set(TERMS))
    if unknown:
        raise ValueError(f"unknown reward {unknown[0]!r} in the weights; use some of {', '.join(TERMS)}")
    return {name: float(weight) for name, weight in weights.items()}


def term_values(outcome: Outcome) -> dict[str, float]:
    """Return every term's value for one sample's outcome.

    Example:
        >>> values = term_values(_example(success=True, strict=True))
        >>> values["success"], values["efficiency"], list(values) == list(TERMS)
        (1.0, 0.8333, True)
    """
    return {name: float(term([], [], outcome=[outcome])[0]) for name, term in TERMS.items()}


def weighted(values: dict[str, float], weights: dict[str, float]) -> float:
    """Return a sample's reward from its term values: the weighted sum GRPO's advantages are computed from.

    Example:
        >>> weighted({"success": 1.0, "format": 1.0, "safety": -0.5}, {"success": 1.0, "format": 0.5})
        1.5
    """
    return sum(weight * values[name] for name, weight in check_weights(weights).items())


def _example(**fields) -> Outcome:
    """Build an outcome for the doctests."""
    base = {"task_type": TaskType.MITIGATION, "results": {}, "success": False, "strict": False, "steps": 5,
            "max_steps": 30, "sim_seconds": 75.0, "unsafe": 0}
    return Outcome(**(base | fields))
