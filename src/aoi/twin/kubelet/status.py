"""Render a pod's status from the kubelet's records, in the exact shape the API reports."""

from __future__ import annotations

from aoi.twin.core.clock import rfc3339
from aoi.twin.kubelet.runtime import image_digest, normalize_image


def qos_class(pod: dict) -> str:
    """Return Guaranteed, Burstable or BestEffort from container resources."""
    containers = pod["spec"].get("containers") or []
    res = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in res):
        return "BestEffort"
    for r in res:
        limits = r.get("limits") or {}
        requests = r.get("requests") or limits
        if not all(k in limits and requests.get(k) == limits[k] for k in ("cpu", "memory")):
            return "Burstable"
    return "Guaranteed"


def _state(c, now: float, waiting_for_init: bool) -> dict:
    """Return the container's current state block."""
    if c.phase == "running":
        return {"running": {"startedAt": rfc3339(c.started_at)}}
    if c.phase in ("exited", "done"):
        return {"terminated": terminated_block(c.exit_code, c.exit_reason, c.started_at, c.finished_at, c.container_id)}
    reason = "PodInitializing" if waiting_for_init and not c.init else (c.reason or "ContainerCreating")
    waiting = {"reason": reason}
    if c.message and reason not in ("ContainerCreating", "PodInitializing"):
        waiting["message"] = c.message
    return {"waiting": waiting}


def terminated_block(code, reason, started, finished, cid) -> dict:
    """Return a containerStateTerminated dict."""
    block = {"exitCode": code, "reason": reason, "startedAt": rfc3339(started or 0),
             "finishedAt": rfc3339(finished or started or 0)}
    if cid:
        block["containerID"] = cid
    return block


def container_status(c, spec: dict, now: float, waiting_for_init: bool) -> dict:
    """Return one containerStatuses entry."""
    running = c.phase == "running"
    ready = running and now >= (c.ready_at or now) and not c.forced_unready
    status = {"name": c.name, "state": _state(c, now, waiting_for_init), "lastState": {}, "ready": ready,
              "restartCount": c.restarts, "image": normalize_image(spec.get("image", "")),
              "imageID": "", "started": running}
    if c.last:
        last = c.last
        status["lastState"] = {"terminated": terminated_block(last["exitCode"], last["reason"], last["startedAt"],
                                                              last["finishedAt"], last["containerID"])}
    if c.ever_started:
        status["image"] = normalize_image(c.image)
        status["imageID"] = normalize_image(c.image).rsplit(":", 1)[0] + "@sha256:" + image_digest(c.image)
        status["containerID"] = c.container_id
    return status


def _phase(run, mains: list, inits_done: bool) -> str:
    """Return the pod phase from its containers."""
    if not run.ip or not inits_done:
        return "Pending"
    if mains and all(c.phase in ("exited", "done") and c.due is None for c in mains):
        return "Succeeded" if all(c.exit_code == 0 for c in mains) else "Failed"
    return "Running" if any(c.ever_started for c in mains) else "Pending"


def _condition(old: list, type_: str, ok: bool, now: float, reason: str = "", message: str = "") -> dict:
    """Build a condition, keeping lastTransitionTime when the status did not flip."""
    status = "True" if ok else "False"
    prev = next((c for c in old if c.get("type") == type_), None)
    since = prev.get("lastTransitionTime") if prev and prev.get("status") == status else None
    since = since or rfc3339(now)  # a status written through the API may have lost it
    cond = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": since}
    if not ok and reason:
        cond.update(reason=reason, message=message)
    return cond


def node_ip(node: dict | None) -> str:
    """Return a node's InternalIP."""
    for addr in (node or {}).get("status", {}).get("addresses") or []:
        if addr.get("type") == "InternalIP":
            return addr["address"]
    return "172.18.0.2"



def render_status(twin, pod: dict, run, now: float) -> dict:
    """Return the full pod status for the kubelet's current view of the pod."""
    old = pod.get("status") or {}
    old_conds = old.get("conditions") or []
    node = twin.get("nodes", "", pod["spec"]["nodeName"])
    host_ip = node_ip(node)
    inits = [c for c in run.containers.values() if c.init]
    mains = [c for c in run.containers.values() if not c.init]
    inits_done = all(c.phase == "done" for c in inits)
    specs = {c["name"]: c for c in (pod["spec"].get("initContainers") or []) + pod["spec"]["containers"]}
    main_statuses = [container_status(c, specs[c.name], now, not inits_done) for c in mains]
    if not run.ip:
        main_statuses = [{"name": c["name"], "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {},
                          "ready": False, "restartCount": 0, "image": normalize_image(c.get("image", "")),
                          "imageID": "", "started": False} for c in pod["spec"]["containers"]]
    unready = [s["name"] for s in main_statuses if not s["ready"]]
    incomplete = [c.name for c in inits if c.phase != "done"]
    terminal = _phase(run, mains, inits_done)
    ready_reason = "PodCompleted" if terminal in ("Succeeded", "Failed") else "ContainersNotReady"
    ready_msg = f"containers with unready status: [{' '.join(unready)}]"
    conds = [_condition(old_conds, "PodReadyToStartContainers", bool(run.ip), now),
             _condition(old_conds, "Initialized", inits_done, now, "ContainersNotInitialized",
                        f"containers with incomplete status: [{' '.join(incomplete)}]"),
             _condition(old_conds, "Ready", not unready, now, ready_reason, ready_msg),
             _condition(old_conds, "ContainersReady", not unready, now, ready_reason, ready_msg)]
    conds += [c for c in old_conds if c.get("type") == "PodScheduled"]
    status = {"phase": terminal, "conditions": conds, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}]}
    if run.ip:
        status.update(podIP=run.ip, podIPs=[{"ip": run.ip}])
    status["startTime"] = rfc3339(run.sandbox_at - 1.0)
    if inits:
        status["initContainerStatuses"] = [container_status(c, specs[c.name], now, False) for c in inits]
    status["containerStatuses"] = main_statuses
    status["qosClass"] = qos_class(pod)
    return status
