"""ControllerRevisions: the pod-template history StatefulSets and DaemonSets keep (like pkg/controller/history)."""

from __future__ import annotations

import copy

from aoi.twin.controllers.base import controller_ref, owned, owned_by
from aoi.twin.core import operations
from aoi.twin.core.ids import template_hash

HASH_LABEL = "controller-revision-hash"
MAX_COLLISIONS = 10  # hash collisions one revision may take before the sync gives up (a fault of that owner)


def revision_data(template: dict) -> dict:
    """Return the patch a ControllerRevision stores for a pod template."""
    tmpl = copy.deepcopy(template)
    tmpl["$patch"] = "replace"
    return {"spec": {"template": tmpl}}


def revision_hash(owner: dict) -> str:
    """Return the hash naming the revision of the owner's current template."""
    collisions = (owner.get("status") or {}).get("collisionCount", 0)
    # The same bytes as hashing revision_data(template), without its deep copy (this runs on every reconcile).
    return template_hash({"spec": {"template": {**owner["spec"]["template"], "$patch": "replace"}}}, collisions)


def revision_template(rev: dict) -> dict:
    """Return the pod template a revision holds."""
    tmpl = copy.deepcopy(rev["data"]["spec"]["template"])
    tmpl.pop("$patch", None)
    return tmpl


def owned_revisions(twin, owner: dict) -> list[dict]:
    """Return the owner's ControllerRevisions, oldest revision first."""
    revs = owned(twin, "controllerrevisions", owner)
    return sorted(revs, key=lambda r: (r.get("revision", 0), r["metadata"]["name"]))


def sync_revision(twin, owner: dict) -> tuple[dict, list[dict]]:
    """Find or create the revision of the owner's current template; return it and all revisions.

    A template that matches an older revision (a rollback) becomes the newest revision again.
    """
    revs = owned_revisions(twin, owner)
    data = revision_data(owner["spec"]["template"])
    top = max((r.get("revision", 0) for r in revs), default=0)
    for rev in revs:
        if rev["data"] == data:
            if rev.get("revision", 0) < top:
                rev["revision"] = top + 1
                twin.update("controllerrevisions", rev)
            return rev, owned_revisions(twin, owner)
    rev = _create(twin, owner, data, top + 1)
    return rev, owned_revisions(twin, owner)


def _create(twin, owner: dict, data: dict, number: int) -> dict:
    """Create one ControllerRevision named <owner>-<hash>; a name taken by other data is a hash collision, which
    bumps the owner's status.collisionCount for a new hash (as pkg/controller/history does)."""
    for _ in range(MAX_COLLISIONS):
        rev = _revision(owner, data, number)
        taken = twin.get("controllerrevisions", rev["metadata"]["namespace"], rev["metadata"]["name"])
        if taken is None:
            return operations.create(twin, twin.resource("controllerrevisions"), rev["metadata"]["namespace"], rev)
        if taken.get("data") == data and owned_by(taken, owner):
            return taken
        status = owner.setdefault("status", {})
        status["collisionCount"] = status.get("collisionCount", 0) + 1
        twin.update(owner["kind"], owner)
    raise RuntimeError(f"{MAX_COLLISIONS} ControllerRevision names of {owner['metadata']['name']} collided")


def _revision(owner: dict, data: dict, number: int) -> dict:
    """Build the ControllerRevision of a template (not yet stored)."""
    h = revision_hash(owner)
    labels = dict((owner["spec"]["template"].get("metadata") or {}).get("labels") or {})
    labels[HASH_LABEL] = h
    meta = {"name": f"{owner['metadata']['name'][:223]}-{h}", "namespace": owner["metadata"]["namespace"],
            "labels": labels, "ownerReferences": [controller_ref(owner)]}
    if owner["metadata"].get("annotations"):
        meta["annotations"] = dict(owner["metadata"]["annotations"])
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta, "data": data, "revision": number}


def prune_revisions(twin, owner: dict, revs: list[dict], live: set[str]) -> None:
    """Delete the oldest revisions beyond revisionHistoryLimit that no live pod or status names."""
    limit = owner["spec"].get("revisionHistoryLimit", 10)
    idle = [r for r in revs if r["metadata"]["name"] not in live]
    for rev in idle[:max(len(idle) - limit, 0)]:
        operations.delete(twin, twin.resource("controllerrevisions"), rev["metadata"]["namespace"],
                          rev["metadata"]["name"])
