"""ReplicaSet controller: keep spec.replicas pods alive, report counts."""

from __future__ import annotations

import copy

from aoi.twin.controllers.base import Controller, controller_ref, owned, owner_keys
from aoi.twin.core import operations
from aoi.twin.core.podstatus import pod_rank

BURST_REPLICAS = 500  # pods created or deleted per sync at most, as kube-controller-manager's burstReplicas


def active_pods(twin, owner: dict) -> list[dict]:
    """Return the owner's pods that are neither terminating nor finished."""
    return [p for p in owned(twin, "pods", owner) if not p["metadata"].get("deletionTimestamp")
            and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]


def new_pod(twin, owner: dict, name: str, extra_labels: dict | None = None) -> dict:
    """Build a pod from the owner's template (not yet stored)."""
    tmpl = copy.deepcopy(owner["spec"]["template"])
    meta = tmpl.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    labels.update(extra_labels or {})
    pod_meta = {"name": name, "namespace": owner["metadata"]["namespace"], "labels": labels,
                "ownerReferences": [controller_ref(owner)]}
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": tmpl.get("spec") or {}}


def free_name(twin, owner: dict) -> str:
    """Return <owner>-<suffix> naming no pod yet (thousands of pods make a repeated 5-letter suffix likely)."""
    while True:
        name = f"{owner['metadata']['name']}-{twin.ids.suffix()}"
        if twin.get("pods", owner["metadata"]["namespace"], name) is None:
            return name


def create_owned_pod(twin, owner: dict, name: str, component: str, extra_labels: dict | None = None) -> dict:
    """Create one pod for a workload and record the SuccessfulCreate event."""
    pod = new_pod(twin, owner, name, extra_labels)
    stored = operations.create(twin, twin.resource("pods"), pod["metadata"]["namespace"], pod)
    twin.record(owner, "Normal", "SuccessfulCreate", f"Created pod: {name}", component)
    return stored


def delete_owned_pod(twin, owner: dict, pod: dict, component: str) -> None:
    """Delete one pod of a workload and record the SuccessfulDelete event."""
    operations.delete(twin, twin.resource("pods"), pod["metadata"]["namespace"], pod["metadata"]["name"])
    twin.record(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}", component)


def set_status(twin, resource: str, obj: dict, status: dict, keep: tuple[str, ...] = ()) -> None:
    """Write status only when it changed; zero counts are omitted (omitempty) except the `keep` fields."""
    status = {k: v for k, v in status.items() if k in keep or v not in (0, None, [])}
    if obj.get("status") != status:
        obj["status"] = status
        twin.update(resource, obj)


class ReplicaSetController(Controller):
    """Create and delete pods to match spec.replicas."""

    name = "replicaset"
    watches = ("replicasets", "pods")

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "Pod":
            return owner_keys(obj, "ReplicaSet")
        return super().keys_for(twin, kind, res, obj)

    def reconcile(self, twin, key):
        rs = twin.get("replicasets", *key)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return
        # Counts come from the store's tally of the pods rs controls: a reconcile costs O(1) unless it scales down.
        # Status reports the pods seen before this sync's creations (a copy: the tally itself follows the store).
        tally = dict(twin.store.tally(twin.resource("pods"), rs))
        missing = rs["spec"].get("replicas", 1) - sum(n for (active, _, _), n in tally.items() if active)
        diff = max(min(missing, BURST_REPLICAS), -BURST_REPLICAS)
        for _ in range(max(diff, 0)):
            create_owned_pod(twin, rs, free_name(twin, rs), "replicaset-controller")
        if diff < 0:
            for pod in sorted(active_pods(twin, rs), key=pod_rank)[:-diff]:
                delete_owned_pod(twin, rs, pod, "replicaset-controller")
            tally = twin.store.tally(twin.resource("pods"), rs)
        self._status(twin, rs, tally)
        if diff != missing:
            twin.enqueue(self.name, key)  # the rest at the next sync

    def _status(self, twin, rs, tally: dict):
        """Write replicas, fullyLabeledReplicas, readyReplicas and availableReplicas from the tally."""
        wanted = (rs["spec"].get("template", {}).get("metadata", {}).get("labels") or {}).items()
        active = [(ready, has >= wanted, n) for (on, ready, has), n in tally.items() if on]
        ready = sum(n for pod_ready, _, n in active if pod_ready)
        set_status(twin, "replicasets", rs, {
            "replicas": sum(n for _, _, n in active), "fullyLabeledReplicas": sum(n for _, full, n in active if full),
            "readyReplicas": ready,
            "availableReplicas": ready, "observedGeneration": rs["metadata"].get("generation", 1)}, keep=("replicas",))
