"""Why an episode failed, read from its trajectory: one primary reason, plus counts of the trouble met on the way.

Primary reasons, first match wins: `model_error` (the model failed and ended the episode: `traj.error`),
`budget_exhausted` (the environment's step budget ran out before a submission was accepted), `approval_denied` (a
mitigation failed while the approval gate refused a change), `format_error` (AIOpsLab judged the submission's format
invalid), `wrong_answer` (a well-formed submission, judged wrong). Step issues count steps by status: format errors
(`format_error`), tool errors (`error`, `refused`), approvals denied (`approval_denied`).
"""

from __future__ import annotations

from aoi.tasks import DETECTION_ACCURACY, INVALID_FORMAT, SUBMITTED, TaskType, succeeded
from aoi.trajectory import Trajectory

REASONS = ("model_error", "budget_exhausted", "approval_denied", "format_error", "wrong_answer")
ISSUES = {"format_error": ("format_error",), "tool_error": ("error", "refused"),
          "approval_denied": ("approval_denied",),
          "compressor_fallback": ("ungrounded", "oversized", "empty")}  # a summary replaced by the condenser


def submitted(traj: Trajectory) -> bool:
    """Return whether the environment accepted a submission in this episode.

    Example:
        >>> from aoi.trajectory import Step
        >>> t = Trajectory("p", "detection", steps=[Step("observer", "", action="submit(\\"Yes\\")", observation="1")])
        >>> submitted(t), submitted(Trajectory("p", "detection"))
        (True, False)
    """
    return any(s.role == "observer" and "submit(" in s.action and s.observation.strip() == SUBMITTED
               for s in traj.steps)


def step_issues(traj: Trajectory) -> dict[str, int]:
    """Count the steps of each issue kind (format errors, tool errors, approvals denied, Compressor fallbacks).

    Example:
        >>> from aoi.trajectory import Step
        >>> steps = [Step("probe", "", status=s) for s in ("ok", "format_error", "refused", "error", "ungrounded")]
        >>> step_issues(Trajectory("p", "detection", steps=steps))
        {'format_error': 1, 'tool_error': 2, 'approval_denied': 0, 'compressor_fallback': 1}
    """
    return {issue: sum(s.status in statuses for s in traj.steps) for issue, statuses in ISSUES.items()}


def failure_reason(traj: Trajectory) -> str | None:
    """Return the primary reason a (parity) failed episode failed, or None when it succeeded.

    Example:
        >>> failure_reason(Trajectory("p", "detection", results={"Detection Accuracy": "Correct"}))
        >>> failure_reason(Trajectory("p", "detection", error="ModelError: 401"))
        'model_error'
        >>> failure_reason(Trajectory("p", "detection", results={"Detection Accuracy": "Incorrect"}))
        'budget_exhausted'
    """
    if succeeded(traj.results):
        return None
    if traj.error:
        return "model_error"
    if not submitted(traj):
        return "budget_exhausted"
    if traj.task_type == TaskType.MITIGATION and step_issues(traj)["approval_denied"]:
        return "approval_denied"
    if traj.results.get(DETECTION_ACCURACY) == INVALID_FORMAT:
        return "format_error"
    return "wrong_answer"


def issue_totals(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Return, per issue kind, the steps counted and the episodes (and failed episodes) that met it at least once.

    Example:
        >>> rows = [{"issues": {"format_error": 2, "tool_error": 0}, "failure": "wrong_answer"},
        ...         {"issues": {"format_error": 1, "tool_error": 1}, "failure": None}]
        >>> issue_totals(rows)["format_error"]
        {'steps': 3, 'episodes': 2, 'failed_episodes': 1}
    """
    totals = {}
    for issue in ISSUES:
        counts = [((row.get("issues") or {}).get(issue, 0), bool(row.get("failure"))) for row in rows]
        totals[issue] = {"steps": sum(n for n, _ in counts), "episodes": sum(n > 0 for n, _ in counts),
                         "failed_episodes": sum(n > 0 and failed for n, failed in counts)}
    return totals
