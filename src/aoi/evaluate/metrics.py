"""Evaluation metrics as plain functions: avg@k, best@k, std over attempts, and per-group aggregates of result rows.

`outcomes` is one list per problem of per-attempt verdicts, attempt 0 first. A result row is one line of
`results.jsonl` (see aoi.evaluate.results); `group_stats` turns rows into the figures the summary and report show.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable

from aoi.tasks import TASK_TYPES

MEANS = ("ttx", "steps", "model_steps", "in_tokens", "out_tokens", "model_in_tokens", "model_out_tokens", "seconds")

__all__ = ["MEANS", "avg_at_k", "best_at_k", "forced", "group_by", "group_stats", "mean", "outcomes",
           "std_over_attempts", "summarize"]


def avg_at_k(outcomes: list[list[bool]]) -> float:
    """Return the mean success over every attempt of every problem (0.0 when there is none).

    Example:
        Two problems, k=2: one solved once, one never; 1 success out of 4 attempts.

        >>> avg_at_k([[True, False], [False, False]])
        0.25
        >>> avg_at_k([[True], [True], [False], [True]]), avg_at_k([])
        (0.75, 0.0)
    """
    flat = [bool(o) for attempts in outcomes for o in attempts]
    return sum(flat) / len(flat) if flat else 0.0


def best_at_k(outcomes: list[list[bool]]) -> float:
    """Return the share of problems solved by at least one of their attempts (0.0 when there is none).

    Example:
        Three problems, k=3: the first solved on its third try, the second never, the third every time.

        >>> best_at_k([[False, False, True], [False, False, False], [True, True, True]])
        0.6666666666666666
        >>> best_at_k([[True, False], [False, False]]), best_at_k([])
        (0.5, 0.0)
    """
    problems = [attempts for attempts in outcomes if attempts]
    return sum(any(a) for a in problems) / len(problems) if problems else 0.0


def std_over_attempts(outcomes: list[list[bool]]) -> float:
    """Return the population std of the per-attempt success rates (attempt j's rate over the problems that have it).

    This is the spread of avg@1 across the k repeated runs; 0.0 for k=1 or no data.

    Example:
        Attempt 0 solves both problems (rate 1.0), attempt 1 one of them (0.5): std of [1.0, 0.5] is 0.25.

        >>> std_over_attempts([[True, False], [True, True]])
        0.25
        >>> std_over_attempts([[True], [False]]), std_over_attempts([])
        (0.0, 0.0)
    """
    k = max((len(a) for a in outcomes), default=0)
    rates = [avg_at_k([[a[j]] for a in outcomes if len(a) > j]) for j in range(k)]
    return statistics.pstdev(rates) if len(rates) > 1 else 0.0


def mean(values: Iterable[float | None]) -> float:
    """Return the mean of the values that are not None (0.0 when there is none).

    Example:
        >>> mean([1, None, 2]), mean([])
        (1.5, 0.0)
    """
    given = [v for v in values if v is not None]
    return sum(given) / len(given) if given else 0.0


def group_by(rows: Iterable[dict], key: str | Callable[[dict], object]) -> dict:
    """Group rows by a field (or a function of the row), keeping first-seen order.

    Example:
        >>> group_by([{"t": "a"}, {"t": "b"}, {"t": "a"}], "t")
        {'a': [{'t': 'a'}, {'t': 'a'}], 'b': [{'t': 'b'}]}
    """
    pick = key if callable(key) else (lambda row: row.get(key))
    groups: dict = defaultdict(list)
    for row in rows:
        groups[pick(row)].append(row)
    return dict(groups)


def outcomes(rows: Iterable[dict], verdict: str = "success") -> list[list[bool]]:
    """Return per-problem (problem_id, target) lists of a verdict, ordered by attempt; None counts as a failure.

    Example:
        >>> rows = [{"problem_id": "p", "target": None, "attempt": 1, "success": True},
        ...         {"problem_id": "p", "target": None, "attempt": 0, "success": False},
        ...         {"problem_id": "q", "target": "x", "attempt": 0, "success": None}]
        >>> outcomes(rows)
        [[False, True], [False]]
    """
    problems = group_by(rows, lambda row: (row["problem_id"], row.get("target")))
    return [[bool(r.get(verdict)) for r in sorted(group, key=lambda r: r["attempt"])] for group in problems.values()]


def group_stats(rows: list[dict]) -> dict:
    """Return the figures of one group of result rows: k-metrics (parity and strict), means, failure counts.

    Example:
        >>> rows = [{"problem_id": "p", "attempt": a, "success": a == 0, "strict_success": False, "steps": 2,
        ...          "failure": None if a == 0 else "wrong_answer"} for a in range(2)]
        >>> s = group_stats(rows)
        >>> s["avg_at_k"], s["best_at_k"], s["strict_best_at_k"], s["steps"], s["failures"]
        (0.5, 1.0, 0.0, 2.0, {'wrong_answer': 1})
    """
    parity, strict = outcomes(rows, "success"), outcomes(rows, "strict_success")
    stats = {"problems": len(parity), "episodes": len(rows), "k": max((len(a) for a in parity), default=0),
             "avg_at_k": avg_at_k(parity), "best_at_k": best_at_k(parity), "std": std_over_attempts(parity),
             "strict_avg_at_k": avg_at_k(strict), "strict_best_at_k": best_at_k(strict),
             "strict_std": std_over_attempts(strict)}
    stats |= {name: mean(row.get(name) for row in rows) for name in MEANS}
    stats |= forced(rows)
    reasons = [row["failure"] for row in rows if row.get("failure")]
    stats["failures"] = {reason: reasons.count(reason) for reason in sorted(set(reasons))}
    return stats


def forced(rows: list[dict]) -> dict:
    """Return how many episodes ended in a forced submit (the Observer's iterations or the env's steps ran out) and
    how many successes came from one; None for both when no row records it (rows older than the field).

    Example:
        >>> forced([{"success": True, "forced_submit": True}, {"success": False, "forced_submit": True},
        ...         {"success": True, "forced_submit": False}])
        {'forced_submits': 2, 'forced_successes': 1}
        >>> forced([{"success": True}])
        {'forced_submits': None, 'forced_successes': None}
    """
    if not any("forced_submit" in row for row in rows):
        return {"forced_submits": None, "forced_successes": None}
    pushed = [row for row in rows if row.get("forced_submit")]
    return {"forced_submits": len(pushed), "forced_successes": sum(bool(row.get("success")) for row in pushed)}


def summarize(rows: list[dict]) -> dict:
    """Return group_stats overall, per task type (AIOpsLab's order) and per family.

    Example:
        >>> rows = [{"problem_id": "p", "task_type": "analysis", "family": "f", "attempt": 0, "success": True}]
        >>> sorted(summarize(rows)), list(summarize(rows)["by_task_type"])
        (['by_family', 'by_task_type', 'overall'], ['analysis'])
    """
    by_task = group_by(rows, "task_type")
    order = [str(t) for t in TASK_TYPES if t in by_task] + sorted(t for t in by_task if t not in TASK_TYPES)
    return {"overall": group_stats(rows),
            "by_task_type": {t: group_stats(by_task[t]) for t in order},
            "by_family": {f: group_stats(g)
                          for f, g in sorted(group_by(rows, "family").items(), key=lambda kv: str(kv[0]))}}
