"""Shared pieces of the server-side printers: columns, durations, label and selector strings.

The cell formulas follow Kubernetes 1.32 `pkg/printers/internalversion/printers.go`; the row functions live in
`printers_workloads.py` and `printers_resources.py`, and `tables.py` assembles the Table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aoi.twin.core.clock import parse_time

Cells = list[Any]


@dataclass(frozen=True)
class Printer:
    """How one resource becomes Table rows: its columns, a cell function and optional row conditions."""

    columns: tuple[dict, ...]
    cells: Callable[[dict, float], Cells]
    conditions: Callable[[dict], list[dict] | None] | None = None


def column(name: str, description: str, type: str = "string", *, wide: bool = False, format: str = "") -> dict:
    """Return a TableColumnDefinition; `wide` columns (priority 1) show only with `-o wide`.

    Example:
        >>> column("IP", "The pod's IP address.", wide=True)["priority"]
        1
    """
    return {"name": name, "type": type, "format": format, "description": description, "priority": 1 if wide else 0}


NAME = column("Name", "The object's name, unique within its namespace.", format="name")
AGE = column("Age", "How long ago the object was created.")
CONTAINERS = column("Containers", "Names of the containers in the pod template.", wide=True)
IMAGES = column("Images", "Images of the containers in the pod template.", wide=True)
SELECTOR = column("Selector", "The label selector that picks the pods.", wide=True)


def human_duration(seconds: float) -> str:
    """Format a duration like apimachinery's `duration.HumanDuration` (about 2-3 significant figures).

    Example:
        >>> [human_duration(s) for s in (45, 303, 17940, 277200)]
        ['45s', '5m3s', '4h59m', '3d5h']
    """
    s = int(seconds)  # truncates toward zero, as Go's int(d.Seconds()) does
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes, hours = s // 60, s // 3600
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    return _long_duration(hours)


def _long_duration(hours: int) -> str:
    """Format a duration of 8 hours or more, given in whole hours, in hours, days or years as HumanDuration does."""
    days = hours // 24
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    if hours < 24 * 365 * 8:
        return f"{days // 365}y{days % 365}d" if days % 365 else f"{days // 365}y"
    return f"{days // 365}y"


def since(timestamp: str | None, now: float) -> str:
    """Return the human age of an RFC 3339 timestamp at `now`, or `<unknown>` when it is unset.

    Example:
        >>> since("1970-01-01T00:00:00Z", 90.0), since(None, 90.0)
        ('90s', '<unknown>')
    """
    t = parse_time(timestamp)
    return "<unknown>" if t is None else human_duration(now - t)


def age(obj: dict, now: float) -> str:
    """Return the Age cell: time since metadata.creationTimestamp."""
    return since(obj.get("metadata", {}).get("creationTimestamp"), now)


def name(obj: dict) -> str:
    """Return metadata.name."""
    return obj.get("metadata", {}).get("name", "")


def format_labels(labels: dict | None) -> str:
    """Format a label map as sorted `k=v,...`, or `<none>` when empty (labels.FormatLabels).

    Example:
        >>> format_labels({"b": "2", "a": "1"}), format_labels(None)
        ('a=1,b=2', '<none>')
    """
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


_OPERATORS = {"In": " in ", "NotIn": " notin "}


def selector_string(selector: dict | None) -> str | None:
    """Render a LabelSelector the way labels.Selector.String() does; None when an operator is invalid.

    Example:
        >>> selector_string({"matchLabels": {"app": "geo"},
        ...                  "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]})
        'app=geo,tier in (a,b)'
    """
    selector = selector or {}
    reqs = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator"), sorted(expr.get("values") or [])
        if op in _OPERATORS:
            reqs.append((key, f"{key}{_OPERATORS[op]}({','.join(values)})"))
        elif op in ("Exists", "DoesNotExist"):
            reqs.append((key, key if op == "Exists" else f"!{key}"))
        else:
            return None
    return ",".join(text for _, text in sorted(reqs, key=lambda r: r[0]))


def format_selector(selector: dict | None) -> str:
    """Format a LabelSelector for a Selector cell (metav1.FormatLabelSelector): `<none>` or `<error>`."""
    text = selector_string(selector)
    return "<error>" if text is None else (text or "<none>")


def container_cells(pod_spec: dict | None) -> list[str]:
    """Return the comma-joined container names and images of a pod spec."""
    containers = (pod_spec or {}).get("containers") or []
    return [",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)]


def template_spec(obj: dict) -> dict:
    """Return spec.template.spec of a workload (empty when absent)."""
    return ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}


def bool_text(value: bool | None) -> str:
    """Format an optional bool as `True`, `False` or `<unset>` (printBoolPtr)."""
    return "<unset>" if value is None else ("True" if value else "False")
