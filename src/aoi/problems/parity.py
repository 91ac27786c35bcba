"""AIOpsLab's own mitigation checks, predicate for predicate (reference/aiopslab.md 3.1 and 2.2).

Each check returns what is wrong (an empty list means success). The holes are kept on purpose: these checks
reproduce AIOpsLab's scores; aoi.problems.strict is the one that asks whether the fault is really gone.
"""

from __future__ import annotations

from collections.abc import Callable

from aoi.kube import Kube
from aoi.problems.model import Problem

# The checks AIOpsLab polls instead of reading once: (sleep, max_wait) seconds. Only misconfig_app's eval waits
# (misconfig_app_hotel_res.py:171 calls kubectl.wait_for_ready(ns, sleep=5, max_wait=60), kubectl.py:114-143);
# every other mitigation eval reads the cluster once, at once (aoi.env.verdict applies both).
POLLS = {"wait_ready": (5.0, 60.0)}
CRASH = frozenset({"CrashLoopBackOff"})
CRASH_OR_PULL = frozenset({"CrashLoopBackOff", "Error", "ImagePullBackOff", "ErrImagePull"})  # wrong_bin_usage


def container_problem(cs: dict, waiting: frozenset[str]) -> str | None:
    """Judge one container status the way AIOpsLab's common if/elif chain does; return what is wrong or None.

    The chain tests `waiting and reason in <list>` as one condition, so a container waiting for another reason
    (ContainerCreating, PodInitializing) falls through to the readiness test and fails there.

    Example:
        >>> container_problem({"name": "geo", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}, CRASH)
        'container geo is waiting (CrashLoopBackOff)'
        >>> container_problem({"name": "geo", "state": {"waiting": {"reason": "ContainerCreating"}}}, CRASH)
        'container geo is not ready'
    """
    waiting_state = _state(cs, "waiting")
    if waiting_state is not None and waiting_state.get("reason") in waiting:
        return f"container {cs['name']} is waiting ({waiting_state.get('reason')})"
    return _terminated_or_unready(cs)


def _state(cs: dict, which: str) -> dict | None:
    """Return the container's waiting, running or terminated state (None when it is not in that state)."""
    return (cs.get("state") or {}).get(which)


def wrong_bin_container_problem(cs: dict) -> str | None:
    """Judge one container status as wrong_bin_usage's eval does; return what is wrong or None.

    Its chain branches on `waiting` alone (AIOpsLab wrong_bin_usage/wrong_bin_usage.py:173-183): a waiting
    container fails only for the four listed reasons, and any other waiting reason (ContainerCreating,
    CreateContainerConfigError) passes without the readiness test.
    """
    waiting_state = _state(cs, "waiting")
    if waiting_state is not None:
        reason = waiting_state.get("reason")
        return f"container {cs['name']} is waiting ({reason})" if reason in CRASH_OR_PULL else None
    return _terminated_or_unready(cs)


def _terminated_or_unready(cs: dict) -> str | None:
    """Return the tail of both chains: terminated for a reason other than Completed, or not ready."""
    terminated = _state(cs, "terminated")
    if terminated is not None and terminated.get("reason") != "Completed":
        return f"container {cs['name']} terminated ({terminated.get('reason')})"
    if not cs.get("ready"):  # a Completed container that is not ready fails here too, as in AIOpsLab
        return f"container {cs['name']} is not ready"
    return None


def pods_normal(pods: list[dict], guarded: bool, judge: Callable[[dict], str | None] | None = None) -> list[str]:
    """Return AIOpsLab's "all pods normal" verdict, stopping at the first abnormal pod as it does.

    `guarded` skips pods without container statuses (Pending, unscheduled). Unguarded variants iterate
    `container_statuses` directly, so in AIOpsLab a Pending pod raises TypeError inside eval and the episode
    ends in an exception instead of a score; we model that as a failed check with a reason saying so.
    `judge` judges one container status (default: the common chain, CrashLoopBackOff the only waiting reason).
    """
    judge = judge or (lambda cs: container_problem(cs, CRASH))
    for pod in pods:
        status = pod.get("status") or {}
        statuses = status.get("containerStatuses")
        if statuses is None and not guarded:
            return [f"pod {pod['metadata']['name']} has no container statuses (phase {status.get('phase')}); "
                    f"AIOpsLab's unguarded check raises TypeError here, counted as a failure"]
        found = [f"pod {pod['metadata']['name']}: {why}" for cs in statuses or [] if (why := judge(cs))]
        if found:
            return found
    return []


def _normal(guarded: bool) -> Callable[[Kube, Problem], list[str]]:
    return lambda kube, p: pods_normal(kube.list("pods", p.namespace), guarded)


def target_port(kube: Kube, p: Problem) -> list[str]:
    """Check the first port's targetPort is back to the original number, then pods normal (Pending skipped)."""
    ports = kube.get("services", p.namespace, p.target)["spec"].get("ports")
    if not ports:  # AIOpsLab indexes ports[0] and raises here; counted as a failure
        return [f"service {p.target} has no ports"]
    port = ports[0].get("targetPort")
    expected = p.fault.expect["original_target_port"]
    if port != expected:
        return [f"service {p.target} targets port {port!r}, expected {expected}"]
    return pods_normal(kube.list("pods", p.namespace), guarded=True)


def scale(kube: Kube, p: Problem) -> list[str]:
    """Check replicas and available replicas equal the original count, then pods normal (unguarded)."""
    dep, want = kube.get("deployments", p.namespace, p.target), p.fault.expect["original_replicas"]
    replicas, available = dep["spec"].get("replicas"), (dep.get("status") or {}).get("availableReplicas")
    if replicas != want or available != want:
        return [f"deployment {p.target} has {replicas} replicas, {available} available; expected {want} and {want}"]
    return pods_normal(kube.list("pods", p.namespace), guarded=False)


def assign_node(kube: Kube, p: Problem) -> list[str]:
    """Check some pod's name contains the target, then pods normal (Pending skipped: the check's blind spot)."""
    pods = kube.list("pods", p.namespace)
    if not any(p.target in pod["metadata"]["name"] for pod in pods):
        return [f"no pod name contains {p.target}"]
    return pods_normal(pods, guarded=True)


def all_ready(pod: dict) -> bool:
    """Tell whether a pod has container statuses and every one is ready.

    Example:
        >>> all_ready({"status": {"containerStatuses": [{"ready": True}]}}), all_ready({"status": {}})
        (True, False)
    """
    statuses = (pod.get("status") or {}).get("containerStatuses")
    return bool(statuses) and all(cs.get("ready") for cs in statuses)


def wait_ready(kube: Kube, p: Problem) -> list[str]:
    """Check every pod is Ready or Succeeded (one poll of AIOpsLab's wait_for_ready; POLLS says how it repeats)."""
    pods = kube.list("pods", p.namespace)
    if not pods:
        return [f"namespace {p.namespace} has no pods"]
    return [f"pod {pod['metadata']['name']} is not ready (phase {pod['status'].get('phase')})" for pod in pods
            if pod["status"].get("phase") != "Succeeded" and not all_ready(pod)]


def wrong_bin(kube: Kube, p: Problem) -> list[str]:
    """Check pods normal (unguarded, its own waiting rule) and every container command holds the target binary."""
    found = pods_normal(kube.list("pods", p.namespace), guarded=False, judge=wrong_bin_container_problem)
    for box in kube.get("deployments", p.namespace, p.target)["spec"]["template"]["spec"]["containers"]:
        if p.target not in (box.get("command") or []):  # list membership, as `"profile" in container.command`
            found.append(f"container {box['name']} of deployment {p.target} runs {box.get('command')}, not {p.target}")
    return found


PARITY: dict[str, Callable[[Kube, Problem], list[str]]] = {
    "target_port": target_port,
    "pods_normal": _normal(guarded=False),
    "pods_normal_guarded": _normal(guarded=True),
    "scale": scale,
    "assign_node": assign_node,
    "wait_ready": wait_ready,
    "wrong_bin": wrong_bin,
}
