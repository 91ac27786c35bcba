"""AIOpsLab's task types and wire strings: the facts every layer shares, declared once (reference/aiopslab.md).

`TaskType` names the four task types (a StrEnum: a member equals its string, so comparisons and JSON read as
before); `TASKS` holds, per type, AIOpsLab's time key, its submit signature, how a model's answer becomes the submit
argument, and the partial-credit rule. `succeeded` is AIOpsLab's verdict over a results dict, for every type. The
wire strings are the texts AIOpsLab's orchestrator and tasks put on the wire, which several layers read back. This
module imports nothing from aoi: it sits at the bottom of the layers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

# --- AIOpsLab's wire strings ---
NEXT_ACTION = "Please take the next action"  # the orchestrator's first observation, and every later one's last line
NEXT_SUFFIX = "\n" + NEXT_ACTION  # how the orchestrator appends it to an observation
SUBMITTED = "1"  # the observation of an accepted submit (SubmissionStatus.VALID_SUBMISSION)
SUCCESS = "success"  # the verdict key of every task type but detection
DETECTION_ACCURACY = "Detection Accuracy"  # detection's verdict key: CORRECT, "Incorrect" or INVALID_FORMAT
CORRECT, INVALID_FORMAT = "Correct", "Invalid Format"
LOCALIZATION_ACCURACY = "Localization Accuracy"  # a percentage: AIOpsLab's partial credit
SYSTEM_LEVEL_CORRECT, FAULT_TYPE_CORRECT = "system_level_correct", "fault_type_correct"
ANALYSIS_KEYS = ("system_level", "fault_type")  # the keys of an analysis answer
# the analysis answer's labels, in AIOpsLab's order (its task prompts' answer domains)
SYSTEM_LEVELS = ("Hardware", "Operating System", "Virtualization", "Application")
FAULT_TYPES = ("Misconfiguration", "Code Defect", "Authentication Issue", "Network/Storage Issue", "Operation Error",
               "Dependency Problem")


class TaskType(StrEnum):
    """AIOpsLab's task types, in its order."""

    DETECTION = "detection"
    LOCALIZATION = "localization"
    ANALYSIS = "analysis"
    MITIGATION = "mitigation"

    def __repr__(self) -> str:
        """Return the repr of the plain string, so a member reads as its string wherever a repr is written."""
        return str.__repr__(self)


TASK_TYPES = tuple(TaskType)  # for `in` tests on plain strings (Python 3.11's Enum refuses them)


# --- AIOpsLab's submit signatures: its class and parameter names, so Python words a refused call as AIOpsLab's ---
class DetectionActions:
    """Detection's submit signature."""

    @staticmethod
    def submit(has_anomaly):
        """Accept "Yes" or "No" (any value passes; the eval judges it)."""


class LocalizationActions:
    """Localization's submit signature."""

    @staticmethod
    def submit(faulty_components):
        """Accept a list of service names (any value passes; the eval judges it)."""


class AnalysisActions:
    """Analysis's submit signature."""

    @staticmethod
    def submit(analysis):
        """Accept a dict with system_level and fault_type (any value passes; the eval judges it)."""


class MitigationActions:
    """Mitigation's submit signature: no argument."""

    @staticmethod
    def submit():
        """Accept the end of a mitigation."""


def succeeded(results: dict | None) -> bool:
    """Return AIOpsLab's verdict on an episode's results: `success`, or for detection (whose results have no such
    key) whether `Detection Accuracy` is "Correct"; no results are no success.

    Example:
        >>> succeeded({"Detection Accuracy": "Correct", "TTD": 3.0}), succeeded({"success": False}), succeeded(None)
        (True, False, False)
    """
    results = results or {}
    if SUCCESS in results:
        return bool(results[SUCCESS])
    return results.get(DETECTION_ACCURACY) == CORRECT


# --- answer normalisation: a model's answer -> the submit argument (never raises, never guesses) ---
def _yes_no(answer: Any) -> str:
    text = str(answer).strip() if answer is not None else ""
    lower = text.lower()
    return "Yes" if lower.startswith(("yes", "true", "1")) else "No" if lower.startswith(("no", "false", "0")) else text


def _components(answer: Any) -> list[str]:
    if isinstance(answer, str):
        return [a.strip() for a in answer.split(",") if a.strip()]
    return [str(a) for a in answer] if isinstance(answer, (list, tuple)) else []


def _labels(answer: Any) -> dict[str, str]:
    return {key: str(answer[key]) for key in ANALYSIS_KEYS if answer.get(key)} if isinstance(answer, dict) else {}


def _nothing(answer: Any) -> None:
    return None


# --- partial credit: the share of the answer that was right, in [0, 1], from AIOpsLab's result keys ---
def _localized(results: dict) -> float:
    if LOCALIZATION_ACCURACY in results:
        return min(max(float(results[LOCALIZATION_ACCURACY] or 0.0) / 100.0, 0.0), 1.0)
    return float(succeeded(results))


def _analysed(results: dict) -> float:
    if SYSTEM_LEVEL_CORRECT in results or FAULT_TYPE_CORRECT in results:
        return (bool(results.get(SYSTEM_LEVEL_CORRECT)) + bool(results.get(FAULT_TYPE_CORRECT))) / 2
    return float(succeeded(results))


def _all_or_nothing(results: dict) -> float:
    return float(succeeded(results))


@dataclass(frozen=True, kw_only=True)
class Task:
    """What AIOpsLab fixes for one task type, and how AOI reads an answer of it."""

    type: TaskType
    time_key: str  # AIOpsLab's result key of the session's duration in seconds
    submit: Callable  # AIOpsLab's submit signature (its Actions class's static method)
    normalise: Callable[[Any], Any]  # a model's answer -> the submit argument ("" / [] / {} when unreadable)
    partial: Callable[[dict], float]  # results -> partial credit in [0, 1]
    strict: str  # where the strict verdict is implemented (it needs the Problem, which lives above this module)

    @property
    def argument(self) -> str | None:
        """Return the name of AIOpsLab's submit parameter (None: mitigation's submit takes none).

        Example:
            >>> TASKS["localization"].argument, TASKS["mitigation"].argument
            ('faulty_components', None)
        """
        return next(iter(inspect.signature(self.submit).parameters), None)


TASKS: dict[TaskType, Task] = {task.type: task for task in (
    Task(type=TaskType.DETECTION, time_key="TTD", submit=DetectionActions.submit, normalise=_yes_no,
         partial=_all_or_nothing, strict="aoi.env.scoring.strict_answer"),
    Task(type=TaskType.LOCALIZATION, time_key="TTL", submit=LocalizationActions.submit, normalise=_components,
         partial=_localized, strict="aoi.env.scoring.strict_answer"),
    Task(type=TaskType.ANALYSIS, time_key="TTA", submit=AnalysisActions.submit, normalise=_labels,
         partial=_analysed, strict="aoi.env.scoring.strict_answer"),
    Task(type=TaskType.MITIGATION, time_key="TTM", submit=MitigationActions.submit, normalise=_nothing,
         partial=_all_or_nothing, strict="aoi.problems.oracles.judge"),
)}


def task(task_type: str) -> Task:
    """Return the declaration of a task type; raise ValueError naming the four for anything else.

    Example:
        >>> task("analysis").time_key, task("detection").normalise("yes, geo"), task("localization").normalise("a, b")
        ('TTA', 'Yes', ['a', 'b'])
        >>> task("detection").normalise(None), task("analysis").normalise({"fault_type": "Code Defect", "x": 1})
        ('', {'fault_type': 'Code Defect'})
        >>> task("analysis").partial({"system_level_correct": True, "fault_type_correct": False})
        0.5
    """
    if task_type not in TASK_TYPES:
        raise ValueError(f"unknown task type {task_type!r}; choose from {', '.join(TASK_TYPES)}")
    return TASKS[task_type]


def partial_credit(task_type: str, results: dict | None) -> float:
    """Return the share of the answer that was right, in [0, 1], from AIOpsLab's result keys.

    Localization scores AIOpsLab's `Localization Accuracy` (a percentage); analysis scores half for each of the
    system level and the fault type; detection and mitigation are all or nothing.

    Example:
        >>> partial_credit("analysis", {"system_level_correct": True, "fault_type_correct": False})
        0.5
        >>> partial_credit("localization", {"Localization Accuracy": 50.0, "success": False})
        0.5
        >>> partial_credit("detection", {"Detection Accuracy": "Correct"}), partial_credit("mitigation", None)
        (1.0, 0.0)
    """
    return task(task_type).partial(results or {})
