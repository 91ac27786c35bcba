"""The constant-answer baseline: what one answer, given to every problem of a task type in a run, would score.

Detection answers "Yes" (right on every faulted problem); localization the component name that the most of the
run's problems accept; analysis the most frequent (system level, fault type) pair among the run's problems;
mitigation has no constant answer (a fix is a change, not an answer): n/a. The answer is scored on each of the run's
problems (problem_id, target) with AIOpsLab's scoring (aoi.env.scoring.score), parity and strict, and the rate is the
share of those problems it solves. A learned figure that this baseline also reaches shows no learning.
"""

from __future__ import annotations

import functools
from collections import Counter

from aoi.env.scoring import score
from aoi.evaluate.metrics import group_by, mean
from aoi.evaluate.render import Section, Table
from aoi.problems import Problem
from aoi.problems import make as make_problem
from aoi.tasks import TaskType, succeeded

NO_CONSTANT = "n/a: a mitigation is a change to the system, not an answer"


@functools.cache
def _problem(problem_id: str, target: str | None) -> Problem | None:
    """Return the problem of a row's key, or None for one this catalogue cannot build (an unloaded scenario)."""
    try:
        return make_problem(problem_id, target)
    except ValueError:
        return None


def _most(counts: Counter):
    """Return the most frequent item, the smallest one among equals (so the choice never depends on row order)."""
    return min(counts, key=lambda item: (-counts[item], item))


def constant_answer(task_type: str, problems: list[Problem]):
    """Return the constant answer of a task type over these problems (None: mitigation, or nothing to count).

    Example:
        >>> from aoi.problems import make
        >>> problems = [make("revoke_auth_mongodb-localization-1", t) for t in ("mongodb-geo", "mongodb-rate")]
        >>> constant_answer("detection", []), constant_answer("localization", problems)
        ('Yes', ['geo'])
        >>> constant_answer("mitigation", problems) is None
        True
    """
    if task_type == TaskType.DETECTION:
        return "Yes"
    if task_type == TaskType.LOCALIZATION:
        names = Counter(name for p in problems for name in dict.fromkeys(p.answers.localization))
        return [_most(names)] if names else None
    if task_type == TaskType.ANALYSIS and problems:
        level, kind = _most(Counter((p.answers.system_level, p.answers.fault_type) for p in problems))
        return {"system_level": level, "fault_type": kind}
    return None


def scored(problem: Problem, answer) -> tuple[bool, bool]:
    """Return (parity success, strict success) of submitting `answer` to the problem, as AIOpsLab scores it.

    Example:
        >>> from aoi.problems import make
        >>> scored(make("noop_detection_hotel_reservation-1"), "Yes")
        (False, False)
    """
    results = score(problem, answer, [], 0.0)
    return succeeded(results), bool(results["strict_success"])


def task_baseline(task_type: str, rows: list[dict]) -> dict:
    """Return one task type's baseline over the problems of its rows: the answer, how many problems it was scored on
    (and how many this catalogue could not build), and its parity and strict success rates (None: n/a)."""
    keys = sorted({(row["problem_id"], row.get("target")) for row in rows}, key=str)
    problems = [p for p in (_problem(*key) for key in keys) if p is not None]
    answer = constant_answer(task_type, problems)
    figures = {"answer": answer, "problems": len(problems), "unknown": len(keys) - len(problems)}
    if answer is None or not problems:
        return figures | {"success": None, "strict_success": None,
                          **({"note": NO_CONSTANT} if task_type == TaskType.MITIGATION else {})}
    verdicts = [scored(problem, answer) for problem in problems]
    return figures | {"success": mean(v[0] for v in verdicts), "strict_success": mean(v[1] for v in verdicts)}


def baseline(rows: list[dict]) -> dict:
    """Return the constant-answer baseline per task type of the rows, and "overall" over all their problems (n/a
    when a task type without a constant answer is among them).

    Example:
        >>> rows = [{"problem_id": p, "task_type": "detection", "target": None, "attempt": 0}
        ...         for p in ("noop_detection_hotel_reservation-1", "revoke_auth_mongodb-detection-1")]
        >>> figures = baseline(rows)
        >>> figures["detection"]["answer"], figures["detection"]["success"], figures["overall"]["success"]
        ('Yes', 0.5, 0.5)
    """
    groups = {task_type: task_baseline(task_type, group) for task_type, group in group_by(rows, "task_type").items()}
    scorable = all(g["success"] is not None for g in groups.values())
    problems = sum(g["problems"] for g in groups.values())
    overall = {"problems": problems, "success": None, "strict_success": None}
    if groups and scorable and problems:
        overall |= {key: sum(g[key] * g["problems"] for g in groups.values()) / problems
                    for key in ("success", "strict_success")}
    return {**groups, "overall": overall}


def answer_text(answer) -> str:
    """Return a constant answer as a table shows it.

    Example:
        >>> answer_text(["geo"]), answer_text({"system_level": "Application", "fault_type": "Misconfiguration"})
        ('geo', 'Application / Misconfiguration')
    """
    if answer is None:
        return "n/a"
    if isinstance(answer, dict):
        return f"{answer['system_level']} / {answer['fault_type']}"
    return ", ".join(answer) if isinstance(answer, list) else str(answer)


HEADERS = ["run", "task type", "episodes", "avg@k %", "successes", "forced", "avg@k % unforced", "constant answer",
           "constant %", "constant strict %", "Δ avg@k − constant pp"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _cells(stats: dict, const: dict) -> list[str]:
    """Return one group's cells: its success, the successes a limit forced, and the constant answer beside it."""
    successes = round(stats["avg_at_k"] * stats["episodes"])
    forced = stats.get("forced_successes")
    unforced = None if forced is None or not stats["episodes"] else (successes - forced) / stats["episodes"]
    gain = None if const.get("success") is None else stats["avg_at_k"] - const["success"]
    return [str(stats["episodes"]), _pct(stats["avg_at_k"]), str(successes), "-" if forced is None else str(forced),
            "-" if unforced is None else _pct(unforced), answer_text(const.get("answer")), _pct(const.get("success")),
            _pct(const.get("strict_success")), "n/a" if gain is None else f"{100 * gain:+.1f}"]


def baseline_section(names: list[str], summaries: list) -> Section:
    """Return every run's success per task type beside the successes that forced submits gave it and beside the
    constant-answer baseline on the run's own problems."""
    rows = []
    for name, summary in zip(names, summaries):
        groups = {**summary.by_task_type, "overall": summary.overall}
        rows += [[name, group, *_cells(stats, summary.baseline.get(group, {}))] for group, stats in groups.items()]
    return Section("Forced submits and the constant-answer baseline", "forced: successes whose submit the limits "
                   "forced (the Observer's iterations or the environment's steps ran out), not the model's choice; "
                   "unforced: avg@k without them. Constant: one answer given to every problem of the task type in "
                   "the run (detection \"Yes\", elsewhere the most frequent expected answer), scored with AIOpsLab's "
                   "scoring; mitigation has none (n/a). A gain the constant answer also reaches is no learning.",
                   [Table(HEADERS, rows)])
