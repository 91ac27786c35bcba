"""The problem registry: AIOpsLab's 89 ids in registry order, and `make(id, target)` to resolve one."""

from __future__ import annotations

import difflib
import functools
from typing import NamedTuple

from aoi.problems import build, scenarios
from aoi.problems.families import FAMILIES, WORKLOADS
from aoi.problems.model import Family, Problem
from aoi.problems.targets import describe, valid_targets
from aoi.tasks import TASK_TYPES


class Entry(NamedTuple):
    """Where an id comes from: its family, task type and default target."""

    family: Family
    task_type: str
    target: str | None


@functools.cache
def _index() -> dict[str, Entry]:
    """Build every id from the family table: task types in order, then families, then instances."""
    index: dict[str, Entry] = {}
    for task in TASK_TYPES:
        for family in FAMILIES:
            if task in family.tasks:
                for n, target in enumerate(family.targets, 1):
                    index[family.id_format.format(task=task, n=n)] = Entry(family, task, target)
    return index


def problem_ids(task_type: str | None = None) -> list[str]:
    """Return the ids in registry order; `task_type` filters by substring, as AIOpsLab's registry does.

    Example:
        >>> len(problem_ids()), len(problem_ids("mitigation"))
        (89, 14)
    """
    return [pid for pid in _index() if task_type is None or task_type in pid]


def entry(problem_id: str) -> Entry:
    """Return the registry entry of an id, or raise ValueError naming the closest ids."""
    try:
        return _index()[problem_id]
    except KeyError:
        close = difflib.get_close_matches(problem_id, list(_index()), n=3)
        hint = f"did you mean {', '.join(close)}?" if close else "run `aoi problems list` to see them"
        raise ValueError(f"unknown problem id {problem_id!r}; {hint}") from None


def targets_of(family: Family) -> tuple[str, ...]:
    """Return every target a family accepts."""
    return _targets(family.rule, family.app, family.targets)


@functools.cache
def _targets(rule: str, app: str, defaults: tuple[str | None, ...]) -> tuple[str, ...]:
    return valid_targets(rule, app, defaults)


def _check_target(problem_id: str, family: Family, target: str) -> None:
    """Raise ValueError when a family cannot aim at `target`."""
    valid = targets_of(family)
    if not valid:
        raise ValueError(f"{problem_id} takes no target (family {family.name}); call make() without target=")
    if target not in valid:
        raise ValueError(f"{target!r} is not a valid target of {problem_id} ({describe(family.rule)} of "
                         f"{family.app}); choose one of: {', '.join(valid)}")


def make(problem_id: str, target: str | None = None) -> Problem:
    """Resolve a problem id, optionally aimed at another compatible target.

    Example:
        >>> make("revoke_auth_mongodb-localization-1", target="mongodb-rate").answers.localization
        ('mongodb-rate', 'rate')
    """
    if problem_id.startswith(scenarios.PREFIX):  # a registered scenario's problem (aoi.problems.scenarios)
        if target is not None:
            raise ValueError(f"{problem_id} takes no target: a scenario's fault names its own components")
        return scenarios.make_problem(problem_id)
    family, task, default = entry(problem_id)
    if target is not None:
        _check_target(problem_id, family, target)
    chosen = default if target is None else target
    return Problem(id=problem_id, task_type=task, app=family.app, namespace=build.namespace(family.app),
                   family=family.name, target=chosen, backend=family.backend, fault=build.fault(family, chosen),
                   answers=build.answers(family, chosen), parity=family.parity,
                   workload=WORKLOADS.get(family.workload) if family.workload else None,
                   valid_targets=targets_of(family))


def list_problems(task_type: str | None = None, app: str | None = None) -> list[Problem]:
    """Return the problems in registry order, filtered by exact task type and app."""
    ids = [pid for pid, e in _index().items()
           if (task_type is None or e.task_type == task_type) and (app is None or e.family.app == app)]
    return [make(pid) for pid in ids]
