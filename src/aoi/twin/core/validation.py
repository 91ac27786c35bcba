"""Validation on every write: the (field, message) causes of a 422 Invalid, as the API server's validators word them."""

from __future__ import annotations

import re

from aoi.twin.core.cron import parse_schedule
from aoi.twin.core.resources import Resource

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAMED = {"Namespace", "Service"}  # kinds whose names must be DNS-1123 labels
PERCENT = re.compile(r"^[0-9]+%$")
WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job")
ROLLED = ("Deployment", "StatefulSet", "DaemonSet")  # kinds with rolling update parameters


def causes(res: Resource, obj: dict, old: dict | None) -> list[tuple[str, str]]:
    """Return what makes a defaulted object invalid (nothing when it is valid); `old` is the stored version.

    Example:
        >>> from aoi.twin.core.resources import CATALOG
        >>> causes(CATALOG.find("", "v1", "configmaps"), {"kind": "ConfigMap", "metadata": {"name": "A"}}, None)[0][0]
        'metadata.name'
    """
    found = _name_causes(res, obj["metadata"].get("name", ""))
    if res.kind in WORKLOADS:
        found += _workload_causes(obj) + (_rollout_causes(obj) if res.kind in ROLLED else [])
    elif res.kind == "Pod":
        found += _containers_causes(obj.get("spec") or {}, "spec")
    elif res.kind == "Service":
        found += _service_causes(obj)
    elif res.kind == "CronJob":
        found += _schedule_causes(obj)
    return found + _immutable_causes(obj, old)


def _name_causes(res: Resource, name: str) -> list[tuple[str, str]]:
    """Validate metadata.name."""
    pattern = DNS_LABEL if res.kind in LABEL_NAMED else DNS_SUBDOMAIN
    limit = 63 if res.kind in LABEL_NAMED else 253
    if not name:
        return [("metadata.name", "Required value: name or generateName is required")]
    if len(name) > limit or not pattern.match(name):
        return [("metadata.name", f'Invalid value: "{name}": a lowercase RFC 1123 '
                 f'{"label" if res.kind in LABEL_NAMED else "subdomain"} must consist of lower case alphanumeric '
                 "characters, '-' or '.', and must start and end with an alphanumeric character")]
    return []


def _containers_causes(spec: dict, prefix: str) -> list[tuple[str, str]]:
    """Validate the containers of a pod spec."""
    containers = spec.get("containers") or []
    if not containers:
        return [(f"{prefix}.containers", "Required value")]
    causes = []
    for i, c in enumerate(containers):
        if not c.get("name"):
            causes.append((f"{prefix}.containers[{i}].name", "Required value"))
        if not c.get("image"):
            causes.append((f"{prefix}.containers[{i}].image", "Required value"))
    return causes


def _workload_causes(obj: dict) -> list[tuple[str, str]]:
    """Validate replicas, selector and template of a workload."""
    from aoi.twin.core.selectors import selector_matches  # local: selectors imports nothing from here

    spec = obj.get("spec") or {}
    causes = []
    replicas = spec.get("replicas", 1)
    if isinstance(replicas, int) and replicas < 0:
        causes.append(("spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0"))
    tmpl = spec.get("template") or {}
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    if obj["kind"] != "Job":
        if not spec.get("selector"):
            causes.append(("spec.selector", "Required value"))
        elif not selector_matches(spec["selector"], labels):
            causes.append(("spec.template.metadata.labels",
                           f"Invalid value: {labels}: `selector` does not match template `labels`"))
    return causes + _containers_causes(tmpl.get("spec") or {}, "spec.template.spec")


def _service_causes(obj: dict) -> list[tuple[str, str]]:
    """Validate service ports."""
    causes = []
    for i, port in enumerate((obj.get("spec") or {}).get("ports") or []):
        number = port.get("port")
        if not isinstance(number, int) or not 0 < number < 65536:
            causes.append((f"spec.ports[{i}].port", f"Invalid value: {number}: must be between 1 and 65535, inclusive"))
        target = port.get("targetPort")
        if isinstance(target, int) and not 0 < target < 65536:
            causes.append((f"spec.ports[{i}].targetPort",
                           f"Invalid value: {target}: must be between 1 and 65535, inclusive"))
    return causes


def _int_or_percent(field: str, value) -> list[tuple[str, str]]:
    """Validate an int-or-percent (maxSurge, maxUnavailable): a non-negative integer or a string such as "25%"."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return []
    if isinstance(value, str) and PERCENT.match(value):
        return []
    return [(field, f'Invalid value: "{value}": a valid percent string must be a numeric string followed by an '
                    "ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%'), or a non-negative "
                    "integer")]


def _rollout_causes(obj: dict) -> list[tuple[str, str]]:
    """Validate the rolling update parameters of a Deployment, DaemonSet or StatefulSet."""
    spec = obj.get("spec") or {}
    strategy = spec.get("strategy") if obj["kind"] == "Deployment" else spec.get("updateStrategy")
    field = "spec.strategy" if obj["kind"] == "Deployment" else "spec.updateStrategy"
    rolling = (strategy or {}).get("rollingUpdate") if isinstance(strategy, dict) else None
    if not isinstance(rolling, dict):
        return []
    return [cause for key in ("maxSurge", "maxUnavailable", "partition")
            for cause in _int_or_percent(f"{field}.rollingUpdate.{key}", rolling.get(key))]


def _schedule_causes(obj: dict) -> list[tuple[str, str]]:
    """Validate a CronJob's schedule (the controller could never run a malformed one)."""
    schedule = (obj.get("spec") or {}).get("schedule")
    if not isinstance(schedule, str) or not schedule.strip():
        return [("spec.schedule", "Required value")]
    try:
        parse_schedule(schedule)
    except ValueError as exc:
        return [("spec.schedule", f'Invalid value: "{schedule}": {exc}')]
    return []


def _immutable_causes(obj: dict, old: dict | None) -> list[tuple[str, str]]:
    """Reject changes to fields Kubernetes makes immutable."""
    if old is None:
        return []
    kind, spec, old_spec = obj["kind"], obj.get("spec") or {}, old.get("spec") or {}
    workload = kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
    if workload and spec.get("selector") != old_spec.get("selector"):
        return [("spec.selector", f"Invalid value: {spec.get('selector')}: field is immutable")]
    if kind == "Service" and old_spec.get("clusterIP") and spec.get("clusterIP") not in (None, old_spec["clusterIP"]):
        return [("spec.clusterIPs[0]", f'Invalid value: "{spec.get("clusterIP")}": may not change once set')]
    if kind == "Job" and spec.get("template") != old_spec.get("template"):
        return [("spec.template", "Invalid value: field is immutable")]
    return []
