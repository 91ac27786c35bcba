"""Two runs per problem: each one's successes, and which problems flipped between them (the viewer and the report)."""

from __future__ import annotations

from collections import defaultdict


def problem_label(problem_id: str, target: str | None) -> str:
    """Return a problem's name: its id, with the target when it is not the id's own (`--targets all`).

    Example:
        >>> problem_label("revoke_auth_mongodb-detection-1", "mongodb-geo"), problem_label("p", "geo")
        ('revoke_auth_mongodb-detection-1', 'p @geo')
    """
    from aoi.problems.registry import entry

    try:
        own = entry(problem_id).target
    except ValueError:
        own = None  # an id this AOI does not know (a run of a newer one, a scenario)
    return problem_id if target is None or own == target else f"{problem_id} @{target}"


def outcomes(rows: list[dict]) -> dict[str, dict]:
    """Return per problem (problem_label) its attempts, parity and strict successes, and trajectory ids (attempts).

    Example:
        >>> rows = [{"problem_id": "p", "attempt": 1, "success": False, "trajectory_id": "b"},
        ...         {"problem_id": "p", "attempt": 0, "success": True, "strict_success": True, "trajectory_id": "a"}]
        >>> outcomes(rows)["p"]
        {'attempts': 2, 'successes': 1, 'strict': 1, 'trajectories': ['a', 'b'], 'task_type': None}
    """
    by_problem: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_problem[problem_label(row["problem_id"], row.get("target"))].append(row)
    result = {}
    for problem, group in sorted(by_problem.items()):
        group = sorted(group, key=lambda r: r.get("attempt") or 0)
        result[problem] = {"attempts": len(group), "successes": sum(bool(r.get("success")) for r in group),
                           "strict": sum(bool(r.get("strict_success")) for r in group),
                           "trajectories": [r.get("trajectory_id") for r in group],
                           "task_type": group[0].get("task_type")}
    return result


def flip(before: dict, after: dict, key: str = "successes") -> str | None:
    """Return "fixed" or "broken" when a problem was solved (any attempt, as best@k) in one run only, else None.

    Example:
        >>> flip({"successes": 0}, {"successes": 2}), flip({"successes": 1}, {"successes": 0})
        ('fixed', 'broken')
        >>> flip({"successes": 1}, {"successes": 3}) is None
        True
    """
    solved_before, solved_after = before[key] > 0, after[key] > 0
    if solved_before == solved_after:
        return None
    return "fixed" if solved_after else "broken"


def compare(rows_a: list[dict], rows_b: list[dict]) -> dict:
    """Return the problems both runs ran, each with both outcomes and its flips, and the problems only one ran.

    Example:
        >>> a = [{"problem_id": "p", "success": True}, {"problem_id": "q", "success": True}]
        >>> b = [{"problem_id": "p", "success": False}]
        >>> result = compare(a, b)
        >>> [(p["problem_id"], p["flip"]) for p in result["problems"]], result["only_a"], result["flipped"]
        ([('p', 'broken')], ['q'], 1)
    """
    a, b = outcomes(rows_a), outcomes(rows_b)
    common = [p for p in a if p in b]
    problems = [{"problem_id": p, "task_type": a[p]["task_type"], "a": a[p], "b": b[p], "flip": flip(a[p], b[p]),
                 "strict_flip": flip(a[p], b[p], "strict")} for p in common]
    return {"problems": problems, "flipped": sum(p["flip"] is not None for p in problems),
            "only_a": [p for p in a if p not in b], "only_b": [p for p in b if p not in a]}
