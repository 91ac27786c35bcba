"""Deployments: scaled to zero, unavailable, node selectors, and images or commands unlike their siblings'.

Reads the survey's custom-columns table (NAME, REPLICAS, READY, CONTAINERS, NODESELECTOR, IMAGE, COMMAND): sibling
Deployments built from one image that each run their own binary (command == their name, in some spelling) make a
convention, and a Deployment that breaks it is a strong lead.
"""

from __future__ import annotations

import re
from collections import Counter
from statistics import median

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import listed, mapping, rows

MIN_SIBLINGS = 3


def analyze(table: str) -> list[Evidence]:
    """Find Deployments that are scaled down, unavailable, pinned to nodes or unlike their siblings.

    Example:
        >>> t = ("NAME   REPLICAS   READY    CONTAINERS   NODESELECTOR   IMAGE          COMMAND\\n"
        ...      "bill   1          1        bill         <none>         shop/app:1.0   [bill]\\n"
        ...      "pay    1          1        pay          <none>         shop/app:1.0   [bill]\\n"
        ...      "ship   0          <none>   ship         <none>         shop/app:1.0   [ship]\\n"
        ...      "web    1          1        web          <none>         shop/web:2.0   [web]\\n"
        ...      "mail   1          1        mail         <none>         shop/app:1.0   [mail]\\n")
        >>> [(e.kind, e.component) for e in analyze(t)]
        [('replicas_zero', 'ship'), ('command_unlike_siblings', 'pay'), ('image_unlike_siblings', 'web')]
    """
    deps = [_deployment(r) for r in rows(table)]
    return _scaling(deps) + _selectors(deps) + _siblings(deps)


def _deployment(row: dict) -> dict:
    """Return one table row as typed values."""
    return {"name": row.get("NAME", ""), "replicas": _int(row.get("REPLICAS")), "ready": _int(row.get("READY")),
            "containers": listed(row.get("CONTAINERS", "")), "selector": mapping(row.get("NODESELECTOR", "")),
            "images": listed(row.get("IMAGE", "")), "command": listed(row.get("COMMAND", ""))}


def _int(cell: str | None) -> int | None:
    return int(cell) if cell and cell.isdigit() else None


def _scaling(deps: list[dict]) -> list[Evidence]:
    """Return Deployments scaled to zero (while their siblings run) or with fewer ready pods than wanted."""
    wanted = [d["replicas"] for d in deps if d["replicas"]]
    typical = int(median(wanted)) if wanted else 1
    found = []
    for d in deps:
        if d["replicas"] == 0:
            found.append(Evidence("replicas_zero", d["name"], f"deployment {d['name']} is scaled to 0 replicas "
                                  f"(its siblings run {typical})", {"replicas": typical}))
        elif d["replicas"] and (d["ready"] or 0) < d["replicas"]:
            found.append(Evidence("unavailable", d["name"], f"deployment {d['name']} has {d['ready'] or 0}/"
                                  f"{d['replicas']} pods ready", {}))
    return found


def _selectors(deps: list[dict]) -> list[Evidence]:
    """Return Deployments pinned by a nodeSelector that few siblings have."""
    pinned = [d for d in deps if d["selector"]]
    if not pinned or len(pinned) * 3 > len(deps):
        return []
    return [Evidence("node_selector", d["name"], f"deployment {d['name']} has nodeSelector {d['selector']}, which "
                     "its siblings do not", {"selector": d["selector"]}) for d in pinned]


def _siblings(deps: list[dict]) -> list[Evidence]:
    """Return Deployments whose command or image breaks the convention their image siblings follow."""
    group = [d for d in deps if d["command"] and d["images"]]
    templates = Counter(_template(d) for d in group)
    if not templates or templates.most_common(1)[0][1] < MIN_SIBLINGS:
        return []
    major = templates.most_common(1)[0][0]
    peers = [d for d in group if _template(d) == major]
    following = [d for d in peers if _own(d)]
    if len(following) * 2 <= len(peers):
        return []
    found = [_wrong_command(d, following, deps) for d in peers if not _own(d)]
    found += [_wrong_image(d, major) for d in group if _template(d) != major and _own(d)]
    return found


def _wrong_command(d: dict, following: list[dict], deps: list[dict]) -> Evidence:
    """Describe a Deployment that runs another binary than its own."""
    runs = d["command"][0]
    other = next((o["name"] for o in deps if o is not d and _norm(o["name"]) == _norm(runs)), None)
    expected = [spelling(d["name"], following)]
    why = f", the binary of deployment {other}" if other else ""
    return Evidence("command_unlike_siblings", d["name"], f"deployment {d['name']} runs command {d['command']}{why}; "
                    f"its siblings each run their own binary (expected {expected})",
                    {"command": d["command"], "expected": expected, "runs": other or runs,
                     "container": d["containers"][0] if d["containers"] else d["name"]})


def _wrong_image(d: dict, major: str) -> Evidence:
    """Describe a Deployment whose image differs from its siblings' image."""
    expected = major.replace("{name}", d["name"])
    return Evidence("image_unlike_siblings", d["name"], f"deployment {d['name']} runs image {d['images'][0]}; its "
                    f"siblings run {expected}", {"image": d["images"][0], "expected": expected,
                                                  "container": d["containers"][0] if d["containers"] else d["name"]})


def _template(d: dict) -> str:
    """Return the first image with the Deployment's own name (as a whole word) abstracted."""
    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(d['name'])}(?![A-Za-z0-9])", "{name}", d["images"][0])


def _own(d: dict) -> bool:
    """Return whether a Deployment's command is its own name (in any spelling)."""
    return _norm(d["command"][0]) == _norm(d["name"])


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower().rsplit("/", 1)[-1])


def spelling(name: str, following: list[dict]) -> str:
    """Return `name` spelled the way the siblings spell their commands (as is, or CamelCase).

    Example:
        >>> spelling("text-api", [{"name": "user-api", "command": ["UserApi"]}])
        'TextApi'
    """
    camel = sum(d["command"][0] == _camel(d["name"]) for d in following)
    plain = sum(d["command"][0] == d["name"] for d in following)
    return _camel(name) if camel > plain else name


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[-_]", name))
