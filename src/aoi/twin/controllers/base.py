"""The controller protocol: level-triggered reconcilers fed by store changes and timers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aoi.twin.core.interface import TwinView
    from aoi.twin.core.resources import Resource

Key = tuple[str, str]  # (namespace, name)


class Controller:
    """Reconcile one kind of object; `watches` names the resources whose changes enqueue keys."""

    name = "controller"
    watches: tuple[str, ...] = ()

    def keys_for(self, twin: TwinView, kind: str, res: Resource, obj: dict) -> Iterable[Key]:
        """Return the keys to reconcile after a change to obj (default: the object itself)."""
        meta = obj["metadata"]
        return [(meta.get("namespace", ""), meta["name"])]

    def reconcile(self, twin: TwinView, key: Key) -> None:
        """Drive the object named by key toward its desired state."""
        raise NotImplementedError

    def subject(self, twin: TwinView, key: object) -> dict | None:
        """Return the object a key names (the Event of a failed reconcile is about it), or its namespace."""
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(part, str) for part in key)):
            return None
        namespace, name = key
        found = twin.get(self.watches[0], namespace, name) if self.watches and "/" not in name else None
        return found or (twin.get("namespaces", "", namespace) if namespace else None)


def owner_keys(obj: dict, kind: str) -> list[Key]:
    """Return the (namespace, name) of obj's controller owner of the given kind, if any."""
    meta = obj["metadata"]
    return [(meta.get("namespace", ""), ref["name"]) for ref in meta.get("ownerReferences") or []
            if ref.get("kind") == kind and ref.get("controller")]


def controller_ref(owner: dict) -> dict:
    """Return an ownerReference marking owner as the controller."""
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def owned(twin, resource: str, owner: dict) -> list[dict]:
    """Return the objects of a resource controlled by owner, in list order (from the store's owner index)."""
    return twin.store.owned(twin.resource(resource), owner)


def owned_by(obj: dict, owner: dict) -> bool:
    """Tell whether obj's controller reference points at owner (by uid)."""
    uid = owner["metadata"]["uid"]
    return any(ref.get("uid") == uid and ref.get("controller") for ref in obj["metadata"].get("ownerReferences") or [])
