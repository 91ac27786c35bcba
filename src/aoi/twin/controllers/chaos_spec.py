"""Chaos Mesh object semantics the twin needs: Go durations, pod selection by mode, and the status Chaos Mesh writes."""

from __future__ import annotations

import math
import re

from aoi.twin.core.clock import rfc3339

UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str | None) -> float:
    """Parse a Go duration ("200s", "1m30s", "1.5h") to seconds; empty means forever (infinity).

    Example:
        >>> parse_duration("1m30s"), parse_duration("500ms"), parse_duration(None)
        (90.0, 0.5, inf)
    """
    if not text:
        return math.inf
    pos, total = 0, 0.0
    for part in _PART.finditer(text):
        if part.start() != pos:
            break
        total, pos = total + float(part.group(1)) * UNITS[part.group(2)], part.end()
    if pos != len(text) or pos == 0:
        raise ValueError(f'time: invalid duration "{text}"; use a Go duration such as "200s" or "1m30s"')
    return total


def parse_percent(text) -> float:
    """Parse a Chaos Mesh percentage string ("99", "25.5") to a number.

    Example:
        >>> parse_percent("99")
        99.0
    """
    return float(str(text or "0").strip().rstrip("%") or 0)


def check_spec(spec: dict) -> float:
    """Return a chaos spec's duration once every number in it parses (as Chaos Mesh's webhook checks them);
    raise ValueError naming the field that does not.

    Example:
        >>> check_spec({"duration": "30s", "mode": "fixed-percent", "value": "50"})
        30.0
        >>> check_spec({"mode": "fixed", "value": "many"})
        Traceback (most recent call last):
        ...
        ValueError: spec.value: "many" is not a number; use digits such as "1" or "50"
    """
    duration = parse_duration(spec.get("duration"))
    loss, delay = spec.get("loss") or {}, spec.get("delay") or {}
    numbers = {"spec.value": spec.get("value"), "spec.gracePeriod": spec.get("gracePeriod"),
               "spec.loss.loss": loss.get("loss"), "spec.loss.correlation": loss.get("correlation"),
               "spec.delay.correlation": delay.get("correlation")}
    for field, value in numbers.items():
        try:
            ok = math.isfinite(parse_percent(value)) and (field != "spec.value" or spec.get("mode") != "fixed"
                                                          or int(str(value or 1)) >= 0)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f'{field}: "{value}" is not a number; use digits such as "1" or "50"')
    for field in ("latency", "jitter"):
        parse_duration(delay.get(field) or "0s")
    return duration


def _subset(wanted: dict, have: dict | None) -> bool:
    """Tell whether every wanted key/value is present (an empty map selects everything, as in Chaos Mesh)."""
    have = have or {}
    return all(have.get(k) == v for k, v in wanted.items())


def _candidate(pod: dict, sel: dict, twin) -> bool:
    """Tell whether a pod passes the label, annotation, node and phase selectors."""
    meta = pod["metadata"]
    if meta.get("deletionTimestamp"):
        return False
    if not _subset(sel.get("labelSelectors") or {}, meta.get("labels")):
        return False
    if not _subset(sel.get("annotationSelectors") or {}, meta.get("annotations")):
        return False
    node = pod["spec"].get("nodeName")
    if sel.get("nodes") and node not in sel["nodes"]:
        return False
    if sel.get("nodeSelectors"):
        node_obj = twin.get("nodes", "", node or "")
        if node_obj is None or not _subset(sel["nodeSelectors"], node_obj["metadata"].get("labels")):
            return False
    phases = sel.get("podPhaseSelectors") or ["Running"]
    return pod.get("status", {}).get("phase") in phases


def select_pods(twin, chaos: dict) -> list[dict]:
    """Return the pods a chaos object acts on: selector matches (sorted by namespace, name), cut down by mode.

    Mode `one` takes the first match by name (deterministic where Chaos Mesh picks at random).
    """
    spec = chaos.get("spec") or {}
    sel = spec.get("selector") or {}
    if sel.get("pods"):
        found = [twin.get("pods", ns, name) for ns in sorted(sel["pods"]) for name in sorted(sel["pods"][ns])]
        pods = [p for p in found if p is not None and not p["metadata"].get("deletionTimestamp")]
    else:
        namespaces = sel.get("namespaces") or [chaos["metadata"]["namespace"]]
        pods = [p for ns in sorted(namespaces) for p in twin.list("pods", ns) if _candidate(p, sel, twin)]
    return _by_mode(pods, spec.get("mode", "one"), spec.get("value"))


def _by_mode(pods: list[dict], mode: str, value) -> list[dict]:
    """Apply the selection mode: one, all, fixed, fixed-percent, random-max-percent."""
    if not pods:
        return []
    if mode == "all":
        return pods
    if mode == "fixed":
        return pods[:max(int(value or 1), 0)]
    if mode in ("fixed-percent", "random-max-percent"):
        return pods[:max(1, math.floor(len(pods) * parse_percent(value) / 100))]
    return pods[:1]


def applied(record_id: str, now: float) -> dict:
    """Return a containerRecords entry for a target the chaos was just applied to."""
    return {"events": [{"operation": "Apply", "timestamp": rfc3339(now), "type": "Succeeded"}], "id": record_id,
            "injectedCount": 1, "phase": "Injected", "recoveredCount": 0, "selectorKey": "."}


def recovered(entry: dict, now: float) -> dict:
    """Return a containerRecords entry after its target was recovered."""
    events = entry["events"] + [{"operation": "Recover", "timestamp": rfc3339(now), "type": "Succeeded"}]
    return {**entry, "events": events, "phase": "Not Injected", "recoveredCount": entry["recoveredCount"] + 1}


def status(records: list[dict], selected: bool, injected: bool, running: bool) -> dict:
    """Return the status block Chaos Mesh 2.x writes: four conditions and the experiment records."""
    flag = lambda ok: "True" if ok else "False"  # noqa: E731
    recovered = selected and not injected and bool(records)
    conditions = [{"status": flag(recovered), "type": "AllRecovered"}, {"status": "False", "type": "Paused"},
                  {"status": flag(selected), "type": "Selected"}, {"status": flag(injected), "type": "AllInjected"}]
    return {"conditions": conditions,
            "experiment": {"containerRecords": records, "desiredPhase": "Run" if running else "Stop"}}
