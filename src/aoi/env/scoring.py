"""Score an episode with AIOpsLab's result keys and rules (reference/aiopslab.md 2.1-2.2), plus `strict_success`.

Every metric is a plain function. Quirks are kept where they change numbers: kwargs submissions arrive as [] (see
aoi.env.parser), a bare-string localization counts as exact but is never a subset, partial credit is
(1 / len(answer)) * 100, and a localization without a submission lists its keys in a different order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aoi.models.tokens import count_tokens
from aoi.problems.model import Problem
from aoi.problems.oracles import OracleResult
from aoi.tasks import (
    CORRECT,
    DETECTION_ACCURACY,
    FAULT_TYPE_CORRECT,
    INVALID_FORMAT,
    LOCALIZATION_ACCURACY,
    SUCCESS,
    SYSTEM_LEVEL_CORRECT,
    TaskType,
    task,
)


def _items(trace: Iterable) -> list[tuple[str, str]]:
    """Return (role, content) for session items given as dicts or objects with .role/.content."""
    return [(i["role"], str(i["content"])) if isinstance(i, dict) else (i.role, str(i.content)) for i in trace]


def steps(trace: Iterable) -> int:
    """Count the assistant items, malformed replies included.

    Example:
        >>> steps([{"role": "assistant", "content": "x"}, {"role": "env", "content": "y"}])
        1
    """
    return sum(role == "assistant" for role, _ in _items(trace))


def in_tokens(trace: Iterable) -> int:
    """Count tokens of every non-assistant content, concatenated."""
    return count_tokens("".join(c for role, c in _items(trace) if role != "assistant"))


def out_tokens(trace: Iterable) -> int:
    """Count tokens of every assistant content, concatenated."""
    return count_tokens("".join(c for role, c in _items(trace) if role == "assistant"))


def detection_accuracy(solution: Any, expected: str) -> str:
    """Return "Correct", "Incorrect" or "Invalid Format" (anything but a string).

    Example:
        >>> detection_accuracy(" yes ", "Yes"), detection_accuracy("No", "Yes"), detection_accuracy([], "Yes")
        ('Correct', 'Incorrect', 'Invalid Format')
    """
    if not isinstance(solution, str):
        return INVALID_FORMAT
    return CORRECT if solution.strip().lower() == expected.lower() else "Incorrect"


def _members(solution: Any) -> tuple[set, int]:
    """Return set(solution) and len(solution); a value Python cannot iterate or hash counts as empty."""
    try:
        return set(solution), len(solution)
    except TypeError:  # AIOpsLab would crash here (e.g. submit(3)); we score it as no match
        return set(), 0


def localization_accuracy(solution: Any, accepted: tuple[str, ...]) -> tuple[float, bool, bool]:
    """Return (accuracy, success, is_subset) with AIOpsLab's partial credit; any accepted name counts.

    Example:
        >>> localization_accuracy(["geo"], ("mongodb-geo", "geo"))
        (100.0, True, True)
        >>> localization_accuracy(["a", "b", "user"], ("user",))
        (33.33333333333333, False, True)
        >>> localization_accuracy("user", ("user",))
        (100.0, True, False)
    """
    members, size = _members(solution)
    exact = any(solution == name for name in accepted)
    subset = any(name in members for name in accepted)
    accuracy = 100.0 if exact else (1 / size) * 100.0 if subset else 0.0
    return accuracy, exact or (subset and size == 1), subset


def analysis_correct(solution: Any, system_level: str, fault_type: str) -> tuple[bool, bool]:
    """Return (system_level_correct, fault_type_correct): case-insensitive, stripped equality on a dict.

    Example:
        >>> analysis_correct({"system_level": " application", "fault_type": "Misconfiguration"},
        ...                  "Application", "Misconfiguration")
        (True, True)
    """
    if not isinstance(solution, dict):
        return False, False
    return _same(solution.get("system_level", ""), system_level), _same(solution.get("fault_type", ""), fault_type)


def _same(value: Any, expected: str) -> bool:
    return isinstance(value, str) and value.strip().lower() == expected.strip().lower()


def strict_answer(problem: Problem, solution: Any) -> bool:
    """Read the answer strictly: exact "Yes"/"No", exactly the canonical component, exact analysis labels.

    Example:
        >>> from aoi.problems import make
        >>> strict_answer(make("revoke_auth_mongodb-localization-1"), ["geo"])
        False
    """
    expected = problem.answers
    if problem.task_type == TaskType.DETECTION:
        return solution == expected.detection
    if problem.task_type == TaskType.LOCALIZATION:
        return ([solution] if isinstance(solution, str) else solution) == list(expected.localization[:1])
    if problem.task_type == TaskType.ANALYSIS:
        return isinstance(solution, dict) and (solution.get("system_level"), solution.get("fault_type")) == (
            expected.system_level, expected.fault_type)
    raise ValueError(f"{problem.id} is a {problem.task_type} problem; its strict verdict comes from the oracle")


def score(problem: Problem, solution: Any, trace: Iterable, duration: float,
          mitigation: OracleResult | None = None, accepted: bool = True) -> dict:
    """Return AIOpsLab's results for an episode, in its key order, plus `strict_success`.

    `mitigation` is `aoi.problems.oracles.judge(...)` for mitigation problems (None when it could not be judged).
    `accepted` is False when the episode ended without an accepted submit: AIOpsLab still scores the solution a
    refused submit stored (aoi.env.submission), the strict verdict gives an answer no credit unless it was accepted.

    Example:
        >>> from aoi.problems import make
        >>> trace = [{"role": "assistant", "content": "```\\nsubmit(\\"Yes\\")\\n```"}, {"role": "env", "content": "1"}]
        >>> results = score(make("noop_detection_hotel_reservation-1"), "Yes", trace, 2.5)
        >>> list(results.items())[:3], results["strict_success"]
        ([('Detection Accuracy', 'Incorrect'), ('TTD', 2.5), ('steps', 1)], False)
    """
    trace = list(trace)
    common = {task(problem.task_type).time_key: duration, "steps": steps(trace), "in_tokens": in_tokens(trace),
              "out_tokens": out_tokens(trace)}
    return {**_RESULTS[problem.task_type](problem, solution, common, mitigation), "strict_success": _strict(
        problem, solution, mitigation, accepted)}


def _strict(problem: Problem, solution: Any, mitigation: OracleResult | None, accepted: bool) -> bool:
    if problem.task_type == TaskType.MITIGATION:
        return mitigation is not None and mitigation.ok
    return accepted and strict_answer(problem, solution)


def _detection(problem: Problem, solution: Any, common: dict, mitigation) -> dict:
    return {DETECTION_ACCURACY: detection_accuracy(solution, problem.answers.detection), **common}


def _localization(problem: Problem, solution: Any, common: dict, mitigation) -> dict:
    if solution is None:  # AIOpsLab records these three before the common keys in this case
        return {LOCALIZATION_ACCURACY: 0.0, SUCCESS: False, "is_subset": False, **common}
    accuracy, success, subset = localization_accuracy(solution, problem.answers.localization)
    return {LOCALIZATION_ACCURACY: accuracy, **common, SUCCESS: success, "is_subset": subset}


def _analysis(problem: Problem, solution: Any, common: dict, mitigation) -> dict:
    level, kind = analysis_correct(solution, problem.answers.system_level, problem.answers.fault_type)
    return {SYSTEM_LEVEL_CORRECT: level, FAULT_TYPE_CORRECT: kind, SUCCESS: level and kind, **common}


def _mitigation(problem: Problem, solution: Any, common: dict, mitigation: OracleResult | None) -> dict:
    if mitigation is not None and mitigation.parity is None:
        raise ValueError("score() needs both verdicts for mitigation: pass aoi.problems.oracles.judge(problem, kube)")
    return {**common, SUCCESS: bool(mitigation and mitigation.parity)}


_RESULTS = {TaskType.DETECTION: _detection, TaskType.LOCALIZATION: _localization, TaskType.ANALYSIS: _analysis,
            TaskType.MITIGATION: _mitigation}
