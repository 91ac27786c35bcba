"""Chaos Mesh experiments: an injected failure is the most direct evidence there is."""

from __future__ import annotations

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import mapping, rows


def analyze(table: str) -> list[Evidence]:
    """Turn the survey's chaos table (KIND, NAME, ACTION, SELECTOR, DURATION) into evidence on the selected service.

    Example:
        >>> t = ("KIND           NAME    ACTION   SELECTOR            DURATION\\n"
        ...      "NetworkChaos   delay   delay    map[app:orders]     200s\\n")
        >>> [(e.kind, e.component, e.facts["action"]) for e in analyze(t)]
        [('chaos', 'orders', 'delay')]
    """
    found = []
    for row in rows(table):
        kind, name, action = row.get("KIND", ""), row.get("NAME", ""), row.get("ACTION", "")
        selector = mapping(row.get("SELECTOR", ""))
        if not kind or not name:
            continue
        target = next(iter(selector.values()), name)
        found.append(Evidence("chaos", target, f"{kind} {name} ({action}, {row.get('DURATION', '?')}) selects "
                              f"{selector or 'pods'}", {"kind": kind.lower(), "name": name, "action": action,
                                                        "selector": selector}))
    return found
