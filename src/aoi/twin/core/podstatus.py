"""Small readers of pod state shared by controllers, the behaviour model and the oracles."""

from __future__ import annotations


def condition(obj: dict, type_: str) -> dict | None:
    """Return the status condition of the given type, or None."""
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return cond
    return None


def is_ready(pod: dict) -> bool:
    """Tell whether the pod's Ready condition is True and it is not terminating."""
    cond = condition(pod, "Ready")
    return bool(cond and cond.get("status") == "True" and not pod["metadata"].get("deletionTimestamp"))


def is_active(pod: dict) -> bool:
    """Tell whether a pod counts toward its owner's replicas."""
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in (
        "Succeeded", "Failed")


def restarts(pod: dict) -> int:
    """Return the sum of container restart counts."""
    return sum(cs.get("restartCount", 0) for cs in (pod.get("status") or {}).get("containerStatuses") or [])


def pod_rank(pod: dict) -> tuple:
    """Order pods for scale-down as the ReplicaSet controller does: worst (unscheduled, pending, not ready) first."""
    status = pod.get("status") or {}
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase"), 2)
    return (bool(pod["spec"].get("nodeName")), phase_rank, is_ready(pod), -restarts(pod),
            # newer pods go first among equals
            "".join(chr(0x10FFFF - ord(c)) for c in pod["metadata"].get("creationTimestamp", "")))


def container_status(pod: dict, name: str) -> dict | None:
    """Return the status entry of one container."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") == name:
            return cs
    return None
