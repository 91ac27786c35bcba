"""Deployment controller: one ReplicaSet per pod template, rolling updates, revisions, status and conditions."""

from __future__ import annotations

import copy
import math

import orjson

from aoi.twin.controllers.base import Controller, controller_ref, owned, owner_keys
from aoi.twin.core import operations
from aoi.twin.core.clock import parse_time, rfc3339
from aoi.twin.core.ids import template_hash

REVISION = "deployment.kubernetes.io/revision"
HASH = "pod-template-hash"
COMPONENT = "deployment-controller"
MAX_COLLISIONS = 10  # template-hash collisions one new ReplicaSet may take before the sync gives up


def revision(rs: dict) -> int:
    """Return a ReplicaSet's revision number (0 when unset or not a number, as the real controller reads it)."""
    text = str((rs["metadata"].get("annotations") or {}).get(REVISION, "0") or 0)
    return int(text) if text.isascii() and text.isdigit() else 0


def resolve_percent(value, total: int, round_up: bool) -> int:
    """Resolve an int-or-percent (maxSurge, maxUnavailable) against total replicas."""
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value or 0)


def strip_hash(template: dict) -> dict:
    """Return the template without the pod-template-hash label, for comparisons (a shallow copy where it has one).

    Example:
        >>> strip_hash({"metadata": {"labels": {"app": "a", HASH: "x"}}, "spec": {}})
        {'metadata': {'labels': {'app': 'a'}}, 'spec': {}}
    """
    labels = (template.get("metadata") or {}).get("labels", {})
    if HASH not in labels:
        return template
    return {**template, "metadata": {**template["metadata"], "labels": {k: v for k, v in labels.items() if k != HASH}}}


def _snapshot(value):
    """Return a deep copy of JSON data (status and annotations hold nothing else): a JSON round trip is fastest."""
    return orjson.loads(orjson.dumps(value))


class DeploymentController(Controller):
    """Reconcile Deployments into ReplicaSets."""

    name = "deployment"
    watches = ("deployments", "replicasets")

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "ReplicaSet":
            return owner_keys(obj, "Deployment")
        return super().keys_for(twin, kind, res, obj)

    def reconcile(self, twin, key):
        d = twin.get("deployments", *key)
        if d is None or d["metadata"].get("deletionTimestamp"):
            return
        before = (_snapshot(d.get("status")), _snapshot(d["metadata"].get("annotations")))
        rss = owned(twin, "replicasets", d)
        new = self._new_rs(twin, d, rss)
        old = [rs for rs in rss if rs is not new]
        if not d["spec"].get("paused"):
            self._rollout(twin, d, new, old)
            self._cleanup(twin, d, old)
        self._status(twin, d, new, owned(twin, "replicasets", d))
        d["status"] = {k: v for k, v in d["status"].items() if v not in (0, None, [])}
        if new is not None:  # the deployment carries its current revision, as the real controller writes it
            d["metadata"].setdefault("annotations", {})[REVISION] = str(revision(new))
        if (d["status"], d["metadata"].get("annotations")) != before:
            twin.update("deployments", d)

    # --- the ReplicaSet for the current template ---
    def _new_rs(self, twin, d, rss):
        """Find or create the ReplicaSet whose template equals the deployment's; keep its revision newest."""
        wanted = strip_hash(d["spec"]["template"])
        top = max((revision(rs) for rs in rss), default=0)
        for rs in rss:
            if strip_hash(rs["spec"]["template"]) == wanted:
                if revision(rs) < top:  # a rollback to an older template becomes the newest revision
                    rs["metadata"].setdefault("annotations", {})[REVISION] = str(top + 1)
                    twin.update("replicasets", rs)
                return rs
        if d["spec"].get("paused"):
            return None
        return self._create_rs(twin, d, top + 1, not rss)

    def _create_rs(self, twin, d, rev, first):
        """Create the ReplicaSet for the deployment's current template."""
        h = self._free_hash(twin, d)
        tmpl = copy.deepcopy(d["spec"]["template"])
        tmpl.setdefault("metadata", {}).setdefault("labels", {})[HASH] = h
        selector = copy.deepcopy(d["spec"]["selector"])
        selector.setdefault("matchLabels", {})[HASH] = h
        recreate = d["spec"].get("strategy", {}).get("type") == "Recreate"
        replicas = d["spec"].get("replicas", 1) if first or not recreate else 0
        annotations = {"deployment.kubernetes.io/desired-replicas": str(d["spec"].get("replicas", 1)),
                       "deployment.kubernetes.io/max-replicas": str(self._max_total(d)), REVISION: str(rev)}
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": f"{d['metadata']['name']}-{h}", "namespace": d["metadata"]["namespace"],
                           "labels": dict(tmpl["metadata"]["labels"]), "annotations": annotations,
                           "ownerReferences": [controller_ref(d)]},
              "spec": {"replicas": 0, "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                       "selector": selector, "template": tmpl}}
        stored = operations.create(twin, twin.resource("replicasets"), d["metadata"]["namespace"], rs)
        created = f'Created new replica set "{rs["metadata"]["name"]}"'
        self._set_progress(d, "True", "NewReplicaSetCreated", created, twin)
        if replicas:
            self._scale(twin, d, stored, min(replicas, self._room(d, [stored]) if not first else replicas))
        return stored

    @staticmethod
    def _free_hash(twin, d) -> str:
        """Return the template hash naming no ReplicaSet yet: a name taken (by a ReplicaSet whose template was
        changed since) is a collision, counted in status.collisionCount as the real controller does."""
        for _ in range(MAX_COLLISIONS):
            h = template_hash(d["spec"]["template"], (d.get("status") or {}).get("collisionCount", 0))
            if twin.get("replicasets", d["metadata"]["namespace"], f"{d['metadata']['name']}-{h}") is None:
                return h
            status = d.setdefault("status", {})
            status["collisionCount"] = status.get("collisionCount", 0) + 1
        raise RuntimeError(f"{MAX_COLLISIONS} ReplicaSet names of deployment {d['metadata']['name']} collided")

    # --- scaling ---
    def _max_total(self, d) -> int:
        """Return replicas + maxSurge."""
        desired = d["spec"].get("replicas", 1)
        ru = d["spec"].get("strategy", {}).get("rollingUpdate") or {}
        return desired + resolve_percent(ru.get("maxSurge", "25%"), desired, True)

    def _room(self, d, rss) -> int:
        """Return how many more pods the surge allows."""
        return max(self._max_total(d) - sum(rs["spec"].get("replicas", 0) for rs in rss), 0)

    def _scale(self, twin, d, rs, replicas: int) -> None:
        """Set a ReplicaSet's replicas and record ScalingReplicaSet."""
        before = rs["spec"].get("replicas", 0)
        if before == replicas:
            return
        rs["spec"]["replicas"] = replicas
        annotations = rs["metadata"].setdefault("annotations", {})
        annotations["deployment.kubernetes.io/desired-replicas"] = str(d["spec"].get("replicas", 1))
        annotations["deployment.kubernetes.io/max-replicas"] = str(self._max_total(d))
        twin.update("replicasets", rs)
        verb = "up" if replicas > before else "down"
        twin.record(d, "Normal", "ScalingReplicaSet",
                    f"Scaled {verb} replica set {rs['metadata']['name']} from {before} to {replicas}", COMPONENT)

    def _rollout(self, twin, d, new, old) -> None:
        """Move replicas from old ReplicaSets to the new one within the strategy's bounds."""
        desired = d["spec"].get("replicas", 1)
        active_old = [rs for rs in old if rs["spec"].get("replicas", 0) > 0]
        if d["spec"].get("strategy", {}).get("type") == "Recreate":
            for rs in active_old:
                self._scale(twin, d, rs, 0)
            if not any(rs.get("status", {}).get("replicas", 0) for rs in old):
                self._scale(twin, d, new, desired)
            return
        if not active_old:
            self._scale(twin, d, new, desired)
            return
        room = self._room(d, [new] + active_old)
        if new["spec"].get("replicas", 0) < desired and room:
            self._scale(twin, d, new, min(desired, new["spec"].get("replicas", 0) + room))
        self._scale_down_old(twin, d, new, active_old, desired)

    def _scale_down_old(self, twin, d, new, active_old, desired) -> None:
        """Remove old replicas as far as availability allows."""
        ru = d["spec"].get("strategy", {}).get("rollingUpdate") or {}
        max_unavailable = resolve_percent(ru.get("maxUnavailable", "25%"), desired, False)
        if max_unavailable == 0 and resolve_percent(ru.get("maxSurge", "25%"), desired, True) == 0:
            max_unavailable = 1
        for rs in sorted(active_old, key=revision):  # unhealthy old replicas can always go
            unhealthy = rs["spec"]["replicas"] - rs.get("status", {}).get("availableReplicas", 0)
            if unhealthy > 0:
                self._scale(twin, d, rs, rs["spec"]["replicas"] - unhealthy)
        available = sum(rs.get("status", {}).get("availableReplicas", 0) for rs in [new] + active_old)
        removable = available - (desired - max_unavailable)
        for rs in sorted(active_old, key=revision):
            if removable <= 0:
                break
            cut = min(rs["spec"]["replicas"], removable)
            self._scale(twin, d, rs, rs["spec"]["replicas"] - cut)
            removable -= cut

    def _cleanup(self, twin, d, old) -> None:
        """Delete the oldest empty ReplicaSets beyond revisionHistoryLimit."""
        limit = d["spec"].get("revisionHistoryLimit", 10)
        empty = sorted((rs for rs in old if rs["spec"].get("replicas", 0) == 0
                        and not rs.get("status", {}).get("replicas")), key=revision)
        for rs in empty[:max(len(empty) - limit, 0)]:
            operations.delete(twin, twin.resource("replicasets"), rs["metadata"]["namespace"], rs["metadata"]["name"])

    # --- status ---
    def _status(self, twin, d, new, rss) -> None:
        """Report counts and the Available / Progressing conditions."""
        desired = d["spec"].get("replicas", 1)
        total = sum(rs.get("status", {}).get("replicas", 0) for rs in rss)
        available = sum(rs.get("status", {}).get("availableReplicas", 0) for rs in rss)
        updated = (new or {}).get("status", {}).get("replicas", 0) if new else 0
        status = d.setdefault("status", {})
        status.update({"observedGeneration": d["metadata"].get("generation", 1), "replicas": total,
                       "updatedReplicas": updated, "availableReplicas": available,
                       "readyReplicas": sum(rs.get("status", {}).get("readyReplicas", 0) for rs in rss),
                       "unavailableReplicas": max(sum(rs["spec"].get("replicas", 0) for rs in rss) - available, 0)})
        self._conditions(twin, d, new, desired, available, updated, total)

    def _conditions(self, twin, d, new, desired, available, updated, total) -> None:
        """Update the Available and Progressing conditions."""
        ru = d["spec"].get("strategy", {}).get("rollingUpdate") or {}
        min_available = desired - resolve_percent(ru.get("maxUnavailable", "25%"), desired, False)
        ok = available >= min_available
        self._set_condition(d, "Available", "True" if ok else "False",
                            "MinimumReplicasAvailable" if ok else "MinimumReplicasUnavailable",
                            "Deployment has minimum availability." if ok else
                            "Deployment does not have minimum availability.", twin)
        if new is None:
            return
        name = new["metadata"]["name"]
        complete = updated == desired == available == total and new["spec"].get("replicas") == desired
        progressing = next((c for c in d["status"].get("conditions", []) if c.get("type") == "Progressing"), None)
        if complete:
            done = f'ReplicaSet "{name}" has successfully progressed.'
            self._set_progress(d, "True", "NewReplicaSetAvailable", done, twin)
        elif progressing and progressing.get("reason") != "ProgressDeadlineExceeded":
            self._check_deadline(twin, d, progressing, name)

    def _check_deadline(self, twin, d, progressing, name) -> None:
        """Flag ProgressDeadlineExceeded once the rollout has stalled past its deadline."""
        deadline = d["spec"].get("progressDeadlineSeconds", 600)
        since = parse_time(progressing.get("lastUpdateTime")) or twin.clock.now()
        if progressing.get("reason") == "NewReplicaSetAvailable":
            self._set_progress(d, "True", "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.', twin)
            since = twin.clock.now()
        if twin.clock.now() - since >= deadline:
            late = f'ReplicaSet "{name}" has timed out progressing.'
            self._set_progress(d, "False", "ProgressDeadlineExceeded", late, twin)
        else:
            twin.schedule(since + deadline - twin.clock.now(), self.name,
                          (d["metadata"]["namespace"], d["metadata"]["name"]))

    def _set_progress(self, d, status, reason, message, twin) -> None:
        """Set the Progressing condition."""
        self._set_condition(d, "Progressing", status, reason, message, twin)

    def _set_condition(self, d, type_, status, reason, message, twin) -> None:
        """Set one condition, moving lastTransitionTime only when the status flips."""
        now = rfc3339(twin.clock.now())
        conds = d.setdefault("status", {}).setdefault("conditions", [])
        cur = next((c for c in conds if c.get("type") == type_), None)
        if cur is None:
            conds.append({"type": type_, "status": status, "lastUpdateTime": now, "lastTransitionTime": now,
                          "reason": reason, "message": message})
            conds.sort(key=lambda c: c.get("type") != "Available")
        elif (cur.get("status"), cur.get("reason"), cur.get("message")) != (status, reason, message):
            if cur.get("status") != status:
                cur["lastTransitionTime"] = now
            cur.update({"status": status, "reason": reason, "message": message, "lastUpdateTime": now})
