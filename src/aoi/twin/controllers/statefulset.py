"""StatefulSet controller: ordinal pods with stable names, claims from templates, ordered rolling updates."""

from __future__ import annotations

import copy

from aoi.twin.controllers.base import Controller, controller_ref, owned, owner_keys
from aoi.twin.controllers.history import HASH_LABEL, prune_revisions, revision_template, sync_revision
from aoi.twin.controllers.replicaset import set_status
from aoi.twin.core import operations
from aoi.twin.core.clock import parse_time
from aoi.twin.core.podstatus import condition, is_ready

COMPONENT = "statefulset-controller"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def ordinal_of(sts: dict, pod: dict) -> int:
    """Return the pod's ordinal in the set (-1 when its name is not <set>-<n>)."""
    prefix, name = sts["metadata"]["name"] + "-", pod["metadata"]["name"]
    tail = name[len(prefix):] if name.startswith(prefix) else ""
    return int(tail) if tail.isdigit() else -1


def running_ready(pod: dict) -> bool:
    """Tell whether the pod is Running and Ready."""
    return (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)


def ready_for(pod: dict, now: float) -> float:
    """Return for how many seconds the pod has been ready (negative when it is not)."""
    if not running_ready(pod):
        return -1.0
    since = parse_time((condition(pod, "Ready") or {}).get("lastTransitionTime"))
    return now - (since if since is not None else now)


def claim_name(template: dict, sts: dict, ordinal: int) -> str:
    """Return the name of the claim a volumeClaimTemplate gives one ordinal."""
    return f"{template['metadata']['name']}-{sts['metadata']['name']}-{ordinal}"


class StatefulSetController(Controller):
    """Reconcile StatefulSets into pods <set>-0..N-1 and their PersistentVolumeClaims."""

    name = "statefulset"
    watches = ("statefulsets", "pods")

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "Pod":
            return owner_keys(obj, "StatefulSet")
        return super().keys_for(twin, kind, res, obj)

    def reconcile(self, twin, key):
        sts = twin.get("statefulsets", *key)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return
        update, revs = sync_revision(twin, sts)
        current_name = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revs if r["metadata"]["name"] == current_name), update)
        self._sync_pods(twin, sts, self._pods(twin, sts), current, update)
        pods = self._pods(twin, sts)
        self._status(twin, sts, pods, current, update)
        live = {p["metadata"]["labels"].get(HASH_LABEL) for p in pods.values()} | {
            sts["status"].get("currentRevision"), sts["status"].get("updateRevision")}
        prune_revisions(twin, sts, revs, live)

    def _pods(self, twin, sts) -> dict[int, dict]:
        """Return the set's pods by ordinal."""
        pods = owned(twin, "pods", sts)
        return {ordinal_of(sts, p): p for p in pods if ordinal_of(sts, p) >= 0}

    # --- the ordered pod lifecycle ---
    def _sync_pods(self, twin, sts, pods, current, update) -> None:
        """Create missing ordinals, replace failed pods, scale down, then roll, waiting where OrderedReady says."""
        replicas = sts["spec"].get("replicas", 1)
        ordered = sts["spec"].get("podManagementPolicy", "OrderedReady") != "Parallel"
        for i in range(replicas):
            if not self._ensure(twin, sts, pods.get(i), i, current, update) and ordered:
                return
        for i in sorted((o for o in pods if o >= replicas), reverse=True):
            if not pods[i]["metadata"].get("deletionTimestamp"):
                self._delete(twin, sts, pods[i])
            if ordered:
                return
        if (sts["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
            self._roll(twin, sts, pods, update)

    def _ensure(self, twin, sts, pod, i, current, update) -> bool:
        """Make ordinal i exist and run; return whether it is Running and Ready."""
        if pod is None:
            self._create(twin, sts, i, current, update)
            return False
        if pod["metadata"].get("deletionTimestamp"):
            return False
        if (pod.get("status") or {}).get("phase") == "Failed":
            twin.record(sts, "Warning", "RecreatingFailedPod", f"StatefulSet {sts['metadata']['namespace']}/"
                        f"{sts['metadata']['name']} is recreating failed Pod {pod['metadata']['name']}", COMPONENT)
            self._delete(twin, sts, pod)
            return False
        return running_ready(pod)

    def _roll(self, twin, sts, pods, update) -> None:
        """Replace the highest-ordinal pod not at the update revision, one at a time, down to the partition."""
        partition = ((sts["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition", 0)
        for i in range(sts["spec"].get("replicas", 1) - 1, partition - 1, -1):
            pod = pods.get(i)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                return
            if pod["metadata"]["labels"].get(HASH_LABEL) != update["metadata"]["name"]:
                self._delete(twin, sts, pod)
                return
            if not running_ready(pod):
                return

    # --- pods and claims ---
    def _create(self, twin, sts, i, current, update) -> None:
        """Create the claims and then the pod of ordinal i, from the revision its ordinal gets."""
        strategy = sts["spec"].get("updateStrategy") or {}
        partition = (strategy.get("rollingUpdate") or {}).get("partition", 0)
        rev = current if strategy.get("type", "RollingUpdate") == "RollingUpdate" and i < partition else update
        pod = self._new_pod(sts, i, revision_template(rev), rev["metadata"]["name"])
        for tmpl in sts["spec"].get("volumeClaimTemplates") or []:
            self._ensure_claim(twin, sts, tmpl, pod)
        operations.create(twin, twin.resource("pods"), sts["metadata"]["namespace"], pod)
        twin.record(sts, "Normal", "SuccessfulCreate",
                    f"create Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful",
                    COMPONENT)

    def _new_pod(self, sts, i, template, rev_name) -> dict:
        """Build pod <set>-i with its identity, revision label and claim volumes."""
        name = f"{sts['metadata']['name']}-{i}"
        meta = copy.deepcopy(template.get("metadata") or {})
        labels = dict(meta.get("labels") or {})
        labels.update({POD_NAME_LABEL: name, POD_INDEX_LABEL: str(i), HASH_LABEL: rev_name})
        pod_meta = {"name": name, "namespace": sts["metadata"]["namespace"], "labels": labels,
                    "ownerReferences": [controller_ref(sts)]}
        if meta.get("annotations"):
            pod_meta["annotations"] = dict(meta["annotations"])
        spec = copy.deepcopy(template.get("spec") or {})
        spec["hostname"] = name
        if sts["spec"].get("serviceName"):
            spec["subdomain"] = sts["spec"]["serviceName"]
        claims = {t["metadata"]["name"]: claim_name(t, sts, i) for t in sts["spec"].get("volumeClaimTemplates") or []}
        spec["volumes"] = [{"name": n, "persistentVolumeClaim": {"claimName": c}} for n, c in claims.items()] + [
            v for v in spec.get("volumes") or [] if v.get("name") not in claims]
        if not spec["volumes"]:
            del spec["volumes"]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}

    def _ensure_claim(self, twin, sts, tmpl, pod) -> None:
        """Create a pod's claim from a volumeClaimTemplate unless it exists (claims outlive their pods)."""
        ns, name = sts["metadata"]["namespace"], claim_name(tmpl, sts, int(pod["metadata"]["labels"][POD_INDEX_LABEL]))
        if twin.get("persistentvolumeclaims", ns, name) is not None:
            return
        claim = copy.deepcopy(tmpl)
        meta = claim.setdefault("metadata", {})
        meta.update(name=name, namespace=ns)
        meta["labels"] = {**(meta.get("labels") or {}), **(sts["spec"]["selector"].get("matchLabels") or {})}
        claim.pop("status", None)
        claim.update(apiVersion="v1", kind="PersistentVolumeClaim")
        operations.create(twin, twin.resource("persistentvolumeclaims"), ns, claim)
        twin.record(sts, "Normal", "SuccessfulCreate", f"create Claim {name} Pod {pod['metadata']['name']} in "
                    f"StatefulSet {sts['metadata']['name']} success", COMPONENT)

    def _delete(self, twin, sts, pod) -> None:
        """Delete one pod of the set and record SuccessfulDelete."""
        operations.delete(twin, twin.resource("pods"), pod["metadata"]["namespace"], pod["metadata"]["name"])
        twin.record(sts, "Normal", "SuccessfulDelete",
                    f"delete Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful",
                    COMPONENT)

    # --- status ---
    def _status(self, twin, sts, pods, current, update) -> None:
        """Report counts and revisions; finish a rollout once every replica is updated and ready."""
        now, min_ready = twin.clock.now(), sts["spec"].get("minReadySeconds", 0)
        live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]
        ready = [p for p in pods.values() if running_ready(p)]
        waits = [min_ready - ready_for(p, now) for p in ready if ready_for(p, now) < min_ready]
        status = {"observedGeneration": sts["metadata"].get("generation", 1), "replicas": len(pods),
                  "readyReplicas": len(ready), "availableReplicas": len(ready) - len(waits),
                  "currentRevision": current["metadata"]["name"], "updateRevision": update["metadata"]["name"],
                  "collisionCount": (sts.get("status") or {}).get("collisionCount", 0)}
        revisions = [p["metadata"]["labels"].get(HASH_LABEL) for p in live]
        status["currentReplicas"] = revisions.count(status["currentRevision"])
        status["updatedReplicas"] = revisions.count(status["updateRevision"])
        rolling = (sts["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if rolling and status["updatedReplicas"] == status["replicas"] == status["readyReplicas"]:
            status["currentRevision"], status["currentReplicas"] = status["updateRevision"], status["updatedReplicas"]
        set_status(twin, "statefulsets", sts, status, keep=("replicas", "availableReplicas", "collisionCount"))
        if waits:
            twin.schedule(min(waits), self.name, (sts["metadata"]["namespace"], sts["metadata"]["name"]))
