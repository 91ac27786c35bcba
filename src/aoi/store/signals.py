"""The reward signals of a finished episode, read from its trajectory: the one place training and datasets get them
(it lives below both in the layers, so aoi.train and aoi.data can import it).

Every signal comes from what the environment judged or what the steps record, never from another model: AIOpsLab's
verdict (`success`), the strict oracle (`strict_success`), partial credit from AIOpsLab's own result keys, the
simulated time and environment steps to the answer, and the counts of malformed, refused and denied steps.
"""

from __future__ import annotations

from aoi.protocols import Status
from aoi.tasks import partial_credit, succeeded, task
from aoi.trajectory import Trajectory

# Step statuses a signal counts (a Status equals its plain string, so old stores' strings count too).
FORMAT_ERRORS = (Status.FORMAT_ERROR,)
REFUSED = (Status.REFUSED,)
DENIED = (Status.APPROVAL_DENIED,)


def _count(traj: Trajectory, statuses: tuple[str, ...], role: str | None = None) -> int:
    """Count the steps (of one role, or all) whose status is one of `statuses`."""
    return sum(step.status in statuses for step in traj.steps if role is None or step.role == role)


def episode_signals(traj: Trajectory) -> dict:
    """Return the episode's reward signals as one flat dict of numbers and flags (None where there is no value).

    Example:
        >>> from aoi.trajectory import Step
        >>> traj = Trajectory("p", "analysis", results={"success": False, "system_level_correct": True,
        ...                   "TTA": 90.0, "steps": 6}, steps=[Step("observer", "x", status="format_error")])
        >>> signals = episode_signals(traj)
        >>> signals["success"], signals["partial"], signals["ttx"], signals["env_steps"], signals["format_errors"]
        (False, 0.5, 90.0, 6, 1)
    """
    results = traj.results or {}
    return {"success": succeeded(results), "strict_success": bool(traj.strict_success),
            "partial": partial_credit(traj.task_type, results), "ttx": results.get(task(traj.task_type).time_key),
            "env_steps": results.get("steps"), "model_calls": sum(1 for step in traj.steps if step.messages),
            "format_errors": _count(traj, FORMAT_ERRORS),
            "observer_format_errors": _count(traj, FORMAT_ERRORS, "observer"), "refused": _count(traj, REFUSED),
            "approval_denied": _count(traj, DENIED), "ended_by_error": bool(traj.error)}
