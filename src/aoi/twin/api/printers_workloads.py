"""Table rows for pods and the workloads that own them (Kubernetes 1.32 printers.go formulas).

Fields a real apiserver always defaults (replicas, suspend, job completions) are read with those defaults, so that an
object the twin stored without them still prints like one read back from a real cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from aoi.twin.api.printers import (
    age,
    bool_text,
    container_cells,
    format_labels,
    format_selector,
    human_duration,
    name,
    selector_string,
    since,
    template_spec,
)
from aoi.twin.core.clock import parse_time


@dataclass
class _Restarts:
    """Restart count and time of the newest `lastState.terminated.finishedAt` over some containers."""

    count: int = 0
    last: float | None = None

    def add(self, status: dict) -> None:
        """Count one container status."""
        self.count += int(status.get("restartCount") or 0)
        finished = parse_time(((status.get("lastState") or {}).get("terminated") or {}).get("finishedAt"))
        if finished is not None and (self.last is None or finished > self.last):
            self.last = finished

    def text(self, now: float) -> str:
        """Format as `3` or `3 (10m ago)`."""
        if self.count and self.last is not None:
            return f"{self.count} ({human_duration(now - self.last)} ago)"
        return str(self.count)


def _terminated_reason(terminated: dict) -> str:
    if terminated.get("reason"):
        return terminated["reason"]
    if terminated.get("signal"):
        return f"Signal:{terminated['signal']}"
    return f"ExitCode:{terminated.get('exitCode', 0)}"


def _condition_true(status: dict, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


def _restartable(container: dict | None) -> bool:
    return bool(container) and container.get("restartPolicy") == "Always"


def _scan_init(pod: dict) -> tuple[str | None, int, _Restarts, _Restarts]:
    """Return (Init:… reason or None, ready sidecars, restarts of init containers seen, of sidecars)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    inits = spec.get("initContainers") or []
    specs = {c.get("name"): c for c in inits}
    seen, sidecars, ready = _Restarts(), _Restarts(), 0
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        seen.add(cs)
        restartable = _restartable(specs.get(cs.get("name")))
        if restartable:
            sidecars.add(cs)
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting") or {}
        if terminated is not None and not terminated.get("exitCode"):
            continue
        if restartable and cs.get("started"):
            ready += bool(cs.get("ready"))
            continue
        if terminated is not None:
            return "Init:" + _terminated_reason(terminated), ready, seen, sidecars
        if waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return "Init:" + waiting["reason"], ready, seen, sidecars
        return f"Init:{i}/{len(inits)}", ready, seen, sidecars
    return None, ready, seen, sidecars


def _scan_containers(status: dict, reason: str, restarts: _Restarts) -> tuple[str, int]:
    """Fold the app containers (last to first, so the first one wins) into the reason; count the ready ones."""
    ready, running = 0, False
    for cs in reversed(status.get("containerStatuses") or []):
        restarts.add(cs)
        state = cs.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif state.get("terminated") is not None:
            reason = _terminated_reason(state["terminated"])
        elif cs.get("ready") and state.get("running") is not None:
            running, ready = True, ready + 1
    if reason == "Completed" and running:
        reason = "Running" if _condition_true(status, "Ready") else "NotReady"
    return reason, ready


def _pod_reason(pod: dict) -> tuple[str, int, _Restarts]:
    """Return the Status cell, the ready-container count and the restarts to show."""
    status, meta = pod.get("status") or {}, pod.get("metadata") or {}
    phase = status.get("phase", "")
    reason = status.get("reason") or phase
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in status.get("conditions") or []):
        reason = "SchedulingGated"
    init_reason, ready, restarts, sidecars = _scan_init(pod)
    reason = init_reason or reason
    if init_reason is None or _condition_true(status, "Initialized"):
        restarts = sidecars
        reason, ready_apps = _scan_containers(status, reason, restarts)
        ready += ready_apps
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return reason, ready, restarts


def pod_cells(pod: dict, now: float) -> list:
    """Return Name, Ready, Status, Restarts, Age, IP, Node, Nominated Node, Readiness Gates."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    reason, ready, restarts = _pod_reason(pod)
    total = len(spec.get("containers") or []) + sum(_restartable(c) for c in spec.get("initContainers") or [])
    ip = status.get("podIP") or ((status.get("podIPs") or [{}])[0]).get("ip") or "<none>"
    gates = [g.get("conditionType") for g in spec.get("readinessGates") or []]
    gates_text = f"{sum(_condition_true(status, g) for g in gates)}/{len(gates)}" if gates else "<none>"
    return [name(pod), f"{ready}/{total}", reason, restarts.text(now), age(pod, now), ip,
            spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>", gates_text]


def pod_conditions(pod: dict) -> list[dict] | None:
    """Mark finished pods with a Completed row condition, as the apiserver does."""
    phase = (pod.get("status") or {}).get("phase")
    message = {"Succeeded": "The pod has completed successfully.", "Failed": "The pod failed."}.get(phase)
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}] if message else None


def deployment_cells(obj: dict, now: float) -> list:
    """Return Name, Ready, Up-to-date, Available, Age, Containers, Images, Selector."""
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    selector = selector_string(spec.get("selector"))
    return [name(obj), f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}", st.get("updatedReplicas", 0),
            st.get("availableReplicas", 0), age(obj, now), *container_cells(template_spec(obj)),
            "<invalid>" if selector is None else selector]


def replicaset_cells(obj: dict, now: float) -> list:
    """Return Name, Desired, Current, Ready, Age, Containers, Images, Selector."""
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    return [name(obj), spec.get("replicas", 1), st.get("replicas", 0), st.get("readyReplicas", 0), age(obj, now),
            *container_cells(template_spec(obj)), format_selector(spec.get("selector"))]


def replicationcontroller_cells(obj: dict, now: float) -> list:
    """Return the ReplicaSet cells, with the RC's map selector."""
    cells = replicaset_cells({**obj, "spec": {**(obj.get("spec") or {}), "selector": None}}, now)
    return cells[:-1] + [format_labels((obj.get("spec") or {}).get("selector"))]


def statefulset_cells(obj: dict, now: float) -> list:
    """Return Name, Ready, Age, Containers, Images."""
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    return [name(obj), f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}", age(obj, now),
            *container_cells(template_spec(obj))]


def daemonset_cells(obj: dict, now: float) -> list:
    """Return Name, Desired, Current, Ready, Up-to-date, Available, Node Selector, Age, Containers, Images, Selector."""
    st = obj.get("status") or {}
    counts = [st.get(k, 0) for k in ("desiredNumberScheduled", "currentNumberScheduled", "numberReady",
                                     "updatedNumberScheduled", "numberAvailable")]
    return [name(obj), *counts, format_labels(template_spec(obj).get("nodeSelector")), age(obj, now),
            *container_cells(template_spec(obj)), format_selector((obj.get("spec") or {}).get("selector"))]


def _job_status(obj: dict) -> str:
    conditions = {c.get("type"): c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or []}
    if conditions.get("Complete"):
        return "Complete"
    if conditions.get("Failed"):
        return "Failed"
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    for kind in ("Suspended", "FailureTarget"):
        if conditions.get(kind):
            return kind
    return "Running"


def job_cells(obj: dict, now: float) -> list:
    """Return Name, Status, Completions, Duration, Age, Containers, Images, Selector."""
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    succeeded, completions, parallelism = st.get("succeeded", 0), spec.get("completions"), spec.get("parallelism")
    if completions is None and parallelism is None:
        completions = 1  # the apiserver defaults both to 1 when neither is given
    if completions is not None:
        done = f"{succeeded}/{completions}"
    else:
        done = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start, end = parse_time(st.get("startTime")), parse_time(st.get("completionTime"))
    duration = "" if start is None else human_duration((now if end is None else end) - start)
    return [name(obj), _job_status(obj), done, duration, age(obj, now), *container_cells(template_spec(obj)),
            format_selector(spec.get("selector"))]


def cronjob_cells(obj: dict, now: float) -> list:
    """Return Name, Schedule, Timezone, Suspend, Active, Last Schedule, Age, Containers, Images, Selector."""
    spec, st = obj.get("spec") or {}, obj.get("status") or {}
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    last = st.get("lastScheduleTime")
    return [name(obj), spec.get("schedule", ""), spec.get("timeZone") or "<none>",
            bool_text(spec.get("suspend", False)), len(st.get("active") or []),
            since(last, now) if last else "<none>", age(obj, now),
            *container_cells(template_spec({"spec": job_spec})), format_selector(job_spec.get("selector"))]
