"""The default scheduler: node filters (unschedulable, taints, selectors, affinity, volumes) and binding."""

from __future__ import annotations

import orjson

from aoi.twin.controllers.base import Controller
from aoi.twin.core.clock import rfc3339

RETRY_SECONDS = 300  # unschedulable pods are retried at least this often (podMaxInUnschedulablePodsDuration)
REASONS_KEPT = 256  # distinct pod placement fields whose per-node verdicts the scheduler remembers


def tolerates(pod: dict, taint: dict) -> bool:
    """Tell whether the pod tolerates a NoSchedule/NoExecute taint."""
    for tol in pod["spec"].get("tolerations") or []:
        key_ok = not tol.get("key") or tol.get("key") == taint.get("key")
        if tol.get("operator") == "Exists":
            value_ok = True
        else:
            value_ok = tol.get("value", "") == taint.get("value", "")
        effect_ok = not tol.get("effect") or tol.get("effect") == taint.get("effect")
        if key_ok and value_ok and effect_ok and (tol.get("key") or tol.get("operator") == "Exists"):
            return True
    return False


def _term_matches(term: dict, labels: dict, name: str = "") -> bool:
    """Evaluate one nodeSelectorTerm: matchExpressions over labels, matchFields over metadata.name."""
    fields = [{**f, "key": "metadata.name"} for f in term.get("matchFields") or [] if f.get("key") == "metadata.name"]
    if any(f.get("key") != "metadata.name" for f in term.get("matchFields") or []):
        return False
    for expr in (term.get("matchExpressions") or []) + fields:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        labels = {**labels, "metadata.name": name} if key == "metadata.name" else labels
        if (op == "In" and labels.get(key) not in values) or (op == "NotIn" and labels.get(key) in values):
            return False
        if (op == "Exists" and key not in labels) or (op == "DoesNotExist" and key in labels):
            return False
    return True


def node_selector_ok(pod: dict, node: dict) -> bool:
    """Check nodeSelector and required node affinity against the node's labels."""
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (pod["spec"].get("nodeSelector") or {}).items()):
        return False
    required = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    return not terms or any(_term_matches(t, labels, node["metadata"]["name"]) for t in terms)


def node_reason(pod: dict, node: dict) -> str | None:
    """Return why the pod cannot run on node (None when it can)."""
    cordon = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    if node["spec"].get("unschedulable") and not tolerates(pod, cordon):
        return "node(s) were unschedulable"
    for taint in node["spec"].get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(pod, taint):
            return f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"
    if not node_selector_ok(pod, node):
        return "node(s) didn't match Pod's node affinity/selector"
    return None


def volume_problem(twin, pod: dict) -> str | None:
    """Return a scheduling blocker from the pod's PersistentVolumeClaims, if any."""
    ns = pod["metadata"]["namespace"]
    for vol in pod["spec"].get("volumes") or []:
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim:
            continue
        pvc = twin.get("persistentvolumeclaims", ns, claim)
        if pvc is None:
            return f'persistentvolumeclaim "{claim}" not found'
        if pvc["metadata"].get("deletionTimestamp"):
            return f'persistentvolumeclaim "{claim}" is being deleted'
        if pvc.get("status", {}).get("phase") != "Bound" and not _waits_for_consumer(twin, pvc):
            return "pod has unbound immediate PersistentVolumeClaims"
    return None


def _waits_for_consumer(twin, pvc: dict) -> bool:
    """Tell whether a claim's class binds only once a pod uses it (WaitForFirstConsumer)."""
    name = pvc["spec"].get("storageClassName")
    cls = twin.get("storageclasses", "", name) if name else None
    return bool(cls and cls.get("volumeBindingMode") == "WaitForFirstConsumer")


class Scheduler(Controller):
    """Bind pending pods to nodes or explain why not."""

    name = "scheduler"
    watches = ("pods", "nodes", "persistentvolumeclaims")

    def __init__(self):
        self._retry_at: dict = {}
        self._reasons: dict[bytes, dict[str, str | None]] = {}  # placement fields -> node -> reason (nodes as now)

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "Node":
            self._reasons.clear()  # a node changed: where pods fit may have too
        if res.kind == "Pod":
            pending = not obj["spec"].get("nodeName") and kind != "DELETED"
            return super().keys_for(twin, kind, res, obj) if pending else []
        ns = obj["metadata"].get("namespace") if res.kind == "PersistentVolumeClaim" else None
        return [(p["metadata"]["namespace"], p["metadata"]["name"])
                for p in twin.list("pods", ns) if not p["spec"].get("nodeName")]

    def reconcile(self, twin, key):
        pod = twin.get("pods", *key)
        if pod is None or pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            return
        if pod["spec"].get("schedulerName", "default-scheduler") != "default-scheduler":
            return
        nodes = twin.list("nodes")
        problem = volume_problem(twin, pod)
        reasons = {} if problem else self._node_reasons(pod, nodes)
        fits = [n for n in nodes if not problem and reasons[n["metadata"]["name"]] is None]
        if fits:
            self._bind(twin, pod, self._pick(twin, fits))
        else:
            self._unschedulable(twin, pod, len(nodes), problem, reasons)

    def _node_reasons(self, pod: dict, nodes: list[dict]) -> dict[str, str | None]:
        """Return node name -> node_reason(pod, node), remembered for pods with the same placement fields."""
        spec = pod["spec"]
        fields = orjson.dumps([spec.get("tolerations"), spec.get("nodeSelector"), spec.get("affinity")])
        reasons = self._reasons.get(fields)
        if reasons is None:
            if len(self._reasons) >= REASONS_KEPT:
                self._reasons.clear()
            reasons = self._reasons[fields] = {n["metadata"]["name"]: node_reason(pod, n) for n in nodes}
        return reasons

    def _pick(self, twin, nodes: list[dict]) -> dict:
        """Pick the node with the fewest pods (ties by name), like a spreading score."""
        pods = twin.resource("pods")
        load = {n["metadata"]["name"]: twin.store.count_on_node(pods, n["metadata"]["name"]) for n in nodes}
        return min(nodes, key=lambda n: (load[n["metadata"]["name"]], n["metadata"]["name"]))

    def _bind(self, twin, pod: dict, node: dict) -> None:
        """Bind the pod and record Scheduled."""
        name = node["metadata"]["name"]
        pod["spec"]["nodeName"] = name
        self._set_scheduled(twin, pod, "True", None, None)
        twin.update("pods", pod)
        twin.record(pod, "Normal", "Scheduled",
                    f"Successfully assigned {pod['metadata']['namespace']}/{pod['metadata']['name']} to {name}",
                    "default-scheduler")

    def _unschedulable(self, twin, pod, count, problem, reasons) -> None:
        """Mark the pod Unschedulable, record FailedScheduling and retry later."""
        if problem:
            detail = f"{problem}."
        else:
            tally: dict[str, int] = {}
            for reason in reasons.values():
                tally[reason] = tally.get(reason, 0) + 1
            detail = ", ".join(sorted(f"{n} {r}" for r, n in tally.items())) + "."  # sorted as strings, as Go does
        message = (f"0/{count} nodes are available: {detail} preemption: 0/{count} nodes are available: "
                   f"{count} Preemption is not helpful for scheduling.")
        if self._set_scheduled(twin, pod, "False", "Unschedulable", message):
            twin.update("pods", pod)
        twin.record(pod, "Warning", "FailedScheduling", message, "default-scheduler")
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        if self._retry_at.get(key, -1.0) <= twin.clock.now():  # one pending retry per pod
            self._retry_at[key] = twin.clock.now() + RETRY_SECONDS
            twin.schedule(RETRY_SECONDS, self.name, key)

    def _set_scheduled(self, twin, pod, status, reason, message) -> bool:
        """Set the PodScheduled condition; return whether it changed."""
        conds = pod.setdefault("status", {}).setdefault("conditions", [])
        cond = {"type": "PodScheduled", "status": status, "lastProbeTime": None,
                "lastTransitionTime": rfc3339(twin.clock.now())}
        if reason:
            cond.update(reason=reason, message=message)
        old = next((c for c in conds if c.get("type") == "PodScheduled"), None)
        if old and {k: v for k, v in old.items() if k != "lastTransitionTime"} == \
                {k: v for k, v in cond.items() if k != "lastTransitionTime"}:
            return False
        conds[:] = [c for c in conds if c.get("type") != "PodScheduled"] + [cond]
        return True
