"""Report sections built per problem and per app, and the problem sets two or more runs have in common."""

from __future__ import annotations

from collections import Counter

from aoi.evaluate.metrics import group_by, group_stats
from aoi.evaluate.render import Section, Table
from aoi.view.compare import compare, problem_label

PROBLEM_HEADERS = ["problem", "app", "task type", "success", "strict", "failure reason", "steps", "trajectory id(s)"]
LISTED = 10  # problem ids named when a comparison leaves some out (the rest are counted)


def _entry(problem_id: str):
    """Return the registry entry of an id, or None for an id this AOI does not know (a run of a newer one)."""
    from aoi.problems.registry import entry

    try:
        return entry(problem_id)
    except ValueError:
        return None


def app_of(row: dict) -> str:
    """Return a row's app: the `app` field eval writes, else the registry's (rows written before the field existed).

    Example:
        >>> app_of({"app": "social-network"}), app_of({"problem_id": "revoke_auth_mongodb-detection-1"})
        ('social-network', 'hotel-reservation')
    """
    known = row.get("app") or _entry(row["problem_id"])
    return "?" if known is None else known if isinstance(known, str) else known.family.app


def problem_key(row: dict) -> tuple:
    """Return the problem a row belongs to: (problem_id, target)."""
    return row["problem_id"], row.get("target")


def _label(key: tuple) -> str:
    """Return a problem's name: its id, with the target when it is not the id's own (`--targets all`).

    Example:
        >>> _label(("revoke_auth_mongodb-detection-1", "mongodb-geo")), _label(("p", "geo"))
        ('revoke_auth_mongodb-detection-1', 'p @geo')
    """
    return problem_label(*key)


def _won(attempts: list[dict], verdict: str) -> str:
    """Return 'successes/attempts' for a verdict (success or strict_success)."""
    return f"{sum(bool(r.get(verdict)) for r in attempts)}/{len(attempts)}"


def _problem_row(key: tuple, attempts: list[dict]) -> list[str]:
    """Return one problem's cells: successes over attempts, failure reasons with counts, steps and ids per attempt."""
    attempts = sorted(attempts, key=lambda r: r["attempt"])
    reasons = Counter(r["failure"] for r in attempts if r.get("failure"))
    failures = ", ".join(f"{reason} x{n}" if n > 1 else reason for reason, n in reasons.items()) or "-"
    steps = " / ".join("-" if r.get("steps") is None else str(r["steps"]) for r in attempts)
    ids = ", ".join(r.get("trajectory_id") or "-" for r in attempts)
    return [_label(key), app_of(attempts[0]), attempts[0]["task_type"], _won(attempts, "success"),
            _won(attempts, "strict_success"), failures, steps, ids]


def problems_section(rows: list[dict], links: dict[str, str] | None = None) -> Section:
    """Return one row per problem: successes of its attempts (parity, strict), why attempts failed, steps, ids.

    Example:
        >>> row = {"problem_id": "p", "app": "a", "task_type": "detection", "attempt": 0, "success": False,
        ...        "strict_success": False, "failure": "wrong_answer", "steps": 3, "trajectory_id": "t0"}
        >>> problems_section([row]).tables[0].rows
        [['p', 'a', 'detection', '0/1', '0/1', 'wrong_answer', '3', 't0']]
    """
    groups = group_by(rows, problem_key)
    table = Table(PROBLEM_HEADERS, [_problem_row(key, attempts) for key, attempts in groups.items()], links or {})
    return Section("Per problem", "Success and strict: attempts that succeeded out of k. Steps and trajectory ids are "
                   "per attempt, in attempt order; each opens its trajectory (`aoi trajectories show ID` prints "
                   "one).", [table])


def flipped_section(names: list[str], row_sets: list[list[dict]], links: dict[str, str]) -> Section:
    """Return the problems each compared run flipped against the first: solved (any attempt) in only one of them."""
    rows = [[p["problem_id"], p["task_type"], name, f"{p['a']['successes']}/{p['a']['attempts']}",
             f"{p['b']['successes']}/{p['b']['attempts']}", p["flip"] or "-", p["strict_flip"] or "-"]
            for name, other in zip(names[1:], row_sets[1:]) for p in compare(row_sets[0], other)["problems"]
            if p["flip"] or p["strict_flip"]]
    text = (f"Problems solved (in any attempt) in only one of {names[0]} and the run named: fixed or broken by it; "
            "each opens the runs' trajectories side by side." + ("" if rows else " None flipped."))
    headers = ["problem", "task type", "run", f"{names[0]} success", "run's success", "flip", "strict flip"]
    return Section("Flipped problems", text, [Table(headers, rows, links)])


def app_section(rows: list[dict], k_headers: list[str], cells) -> Section:
    """Return success per app and overall, in the columns of the per-task-type table (`cells` formats a group)."""
    groups = {**group_by(rows, app_of), "overall": rows}
    table = Table(["app", *k_headers], [[name, *cells(group_stats(group))] for name, group in groups.items()])
    return Section("Success by app", "", [table])


def common_problems(row_sets: list[list[dict]]) -> tuple[set, list[list[tuple]]]:
    """Return the problems every run has, and per run the problems it has that are not common, in row order.

    Example:
        >>> a = [{"problem_id": "p"}, {"problem_id": "q"}]
        >>> common_problems([a, [{"problem_id": "p"}, {"problem_id": "r"}]])
        ({('p', None)}, [[('q', None)], [('r', None)]])
    """
    keys = [list(dict.fromkeys(problem_key(row) for row in rows)) for rows in row_sets]
    common = set.intersection(*(set(k) for k in keys)) if keys else set()
    return common, [[key for key in k if key not in common] for k in keys]


def _named(keys: list[tuple]) -> str:
    """Return up to LISTED problem names, and how many more there are."""
    names = ", ".join(_label(key) for key in keys[:LISTED])
    return names + (f" and {len(keys) - LISTED} more" if len(keys) > LISTED else "")


def common_note(names: list[str], common: set, extra: list[list[tuple]]) -> str:
    """Return the sentence that says what a comparison covers.

    Example:
        >>> common_note(["a", "b"], {("p", None)}, [[("q", None)], []])
        'Comparing 1 common problem; 1 only in a (q), 0 only in b.'
    """
    where = "only in {}" if len(names) == 2 else "in {} but not in every run"
    parts = [f"{len(keys)} {where.format(name)}" + (f" ({_named(keys)})" if keys else "")
             for name, keys in zip(names, extra)]
    plural = "" if len(common) == 1 else "s"
    return f"Comparing {len(common)} common problem{plural}; " + ", ".join(parts) + "."
