"""Pods: not ready, crash loops, image pulls, pending, restarts after start, pods recreated recently."""

from __future__ import annotations

from statistics import median

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import age, owner, restarts, rows

STUCK = {"CrashLoopBackOff": "crash_loop", "Error": "crash_loop", "ImagePullBackOff": "image_pull",
         "ErrImagePull": "image_pull", "InvalidImageName": "image_pull", "CreateContainerConfigError": "crash_loop",
         "OOMKilled": "crash_loop", "Pending": "pending", "ContainerCreating": "pending", "Unknown": "not_ready"}
STARTUP_GRACE = 60  # a restart this soon after the pod started is the usual start-up race (Go services vs MongoDB)
RECENT = 300  # restarts older than this are history, not the incident
YOUNG_SHARE = 0.5  # a pod younger than half the namespace's median age was recreated during the incident
SETTLED = 180  # ...but only when the namespace itself has been up this long


def analyze(table: str) -> list[Evidence]:
    """Find unhealthy pods in `kubectl get pods` output.

    Example:
        >>> t = ("NAME                 READY   STATUS             RESTARTS      AGE\\n"
        ...      "api-6b4b89b5f5-xbcdz 0/1     CrashLoopBackOff   3 (23s ago)   36s\\n"
        ...      "db-7c8d9e0f5b-fghjk  1/1     Running            0             5m36s\\n"
        ...      "web-5d6f7f8c9b-klmnp 1/1     Running            0             5m36s\\n")
        >>> [(e.kind, e.component) for e in analyze(t)]
        [('crash_loop', 'api'), ('recreated', 'api')]
    """
    pods = rows(table)
    ages = [a for a in (age(p.get("AGE", "")) for p in pods) if a is not None]
    typical = median(ages) if ages else 0
    found = []
    for pod in pods:
        found += _pod(pod, typical)
    return found


def _pod(pod: dict, typical: float) -> list[Evidence]:
    """Return what is wrong with one pod row."""
    name, status = pod.get("NAME", ""), pod.get("STATUS", "")
    ready = _ready(pod.get("READY", "1/1"))
    count, ago = restarts(pod.get("RESTARTS", "0"))
    lived = age(pod.get("AGE", ""))
    facts = {"pod": name, "status": status, "restarts": count, "ready": ready}
    found = []
    if status in STUCK:
        found.append(Evidence(STUCK[status], owner(name), f"pod {name} is {status} ({count} restarts)", facts))
    elif status not in ("Running", "Completed", "Succeeded") and status:
        found.append(Evidence("not_ready", owner(name), f"pod {name} is {status}", facts))
    elif not ready and status == "Running":
        found.append(Evidence("not_ready", owner(name), f"pod {name} is Running but not Ready ({count} restarts)",
                              facts))
    elif count and ago is not None and ago < RECENT and (count > 1 or (lived or 0) - ago > STARTUP_GRACE):
        found.append(Evidence("restarted", owner(name), f"pod {name} restarted {count} times, last {ago}s ago "
                                                       f"(pod age {lived}s)", facts))
    if lived is not None and typical >= SETTLED and lived < typical * YOUNG_SHARE:
        found.append(Evidence("recreated", owner(name), f"pod {name} was recreated {lived}s ago (others are "
                                                       f"{int(typical)}s old)", facts))
    return found


def _ready(cell: str) -> bool:
    """Return whether a READY cell ("1/1") says every container is ready."""
    have, _, want = cell.partition("/")
    return not want or have == want


def unhealthy(table: str) -> list[str]:
    """Return the pods that keep a namespace from healthy (stuck, pending or not ready), for verification.

    Example:
        >>> unhealthy("NAME   READY   STATUS    RESTARTS   AGE\\nweb-1  1/1     Running   0          5s\\n")
        []
    """
    bad = ("crash_loop", "image_pull", "pending", "not_ready")
    return [e.facts["pod"] for e in analyze(table) if e.kind in bad]
