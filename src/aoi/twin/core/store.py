"""The object store: Kubernetes objects as JSON dicts, resource versions, and a replayable change log for watches."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import orjson

from aoi.twin.core.changelog import HISTORY_BYTES, ChangeLog
from aoi.twin.core.clock import SimClock, rfc3339
from aoi.twin.core.ids import Ids
from aoi.twin.core.resources import Resource
from aoi.twin.core.tables import Table

# Kinds whose metadata.generation tracks spec changes (custom resources always do).
GENERATION_KINDS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "PodChaos",
                    "NetworkChaos", "HorizontalPodAutoscaler", "NetworkPolicy", "Ingress", "PodDisruptionBudget",
                    "CustomResourceDefinition"}


@dataclass(frozen=True)
class Change:
    """One entry of the change log: what a watch replays."""

    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    resource: Resource
    namespace: str
    data: bytes  # the object as JSON at the time of the change


Listener = Callable[[str, Resource, dict], None]


class Store:
    """Objects by resource, keyed by (namespace, name); every write bumps the resource version.

    Objects returned by get/list are the stored dicts: a caller that changes one must pass it back
    through update(). Watch history keeps JSON snapshots, so later in-place edits never leak into it.
    """

    def __init__(self, clock: SimClock, ids: Ids, lock: threading.RLock | None = None,
                 history_bytes: int = HISTORY_BYTES):
        self.clock = clock
        self.ids = ids
        self.lock = lock or threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.rv = 1
        self.log = ChangeLog(history_bytes)  # bounded by bytes: see changelog.py
        self.listeners: list[Listener] = []
        self._objects: dict[Resource, Table] = {}

    def clone(self, clock: SimClock, ids: Ids, lock: threading.RLock, history: bool = False,
              lazy: bool = False) -> Store:
        """Return a copy for a cloned twin: same objects and version, no listeners, a fresh watch history (or the
        same one, with `history`); `lazy` copies each object on first use (only when this store never changes
        again)."""
        new = Store(clock, ids, lock)
        new.rv = self.rv
        new.log = self.log.copy() if history else self.log.fresh()  # watches on a clone start afresh
        new._objects = {res: table.copy(lazy) for res, table in self._objects.items()}
        return new

    # --- reads ---
    def get(self, res: Resource, namespace: str, name: str) -> dict | None:
        """Return the stored object or None."""
        table = self._objects.get(res)
        return table.get((namespace if res.namespaced else "", name)) if table is not None else None

    def list(self, res: Resource, namespace: str | None = None,
             match: Callable[[dict], bool] | None = None) -> list[dict]:
        """Return objects of a resource (one namespace or all), sorted by namespace and name."""
        table = self._objects.get(res)
        if table is None:
            return []
        keys = table.keys(namespace if res.namespaced else None)
        if match is not None:  # a selector only reads: a shared object need not be copied to be rejected
            objs = table.objects
            keys = [k for k in keys if match(objs[k])]
        return table.get_all(keys)

    def owned(self, res: Resource, owner: dict) -> list[dict]:
        """Return the objects whose controller reference names owner (by uid), in list order, from the index."""
        table = self._objects.get(res)
        if table is None:
            return []
        ns = owner["metadata"].get("namespace") if res.namespaced else None
        return table.get_all(table.owned_keys(owner["metadata"]["uid"], ns))

    def tally(self, res: Resource, owner: dict) -> dict:
        """Return {(active, ready, labels): count} over the objects owner controls (a read-only view)."""
        table = self._objects.get(res)
        meta = owner["metadata"]
        return table.tally.get((meta["uid"], meta.get("namespace", "") if res.namespaced else ""), {}) if table else {}

    def on_node(self, res: Resource, node: str) -> list[dict]:
        """Return the objects (pods) whose spec.nodeName is node, in list order, from the index."""
        table = self._objects.get(res)
        if table is None:
            return []
        return table.get_all(sorted(table.on_node.get(node, ())))

    def count_on_node(self, res: Resource, node: str) -> int:
        """Return how many objects (pods) are bound to node."""
        table = self._objects.get(res)
        return len(table.on_node.get(node, ())) if table is not None else 0

    def count(self, res: Resource) -> int:
        """Return how many objects of a resource exist."""
        return len(self._objects.get(res, {}))

    # --- writes ---
    def create(self, res: Resource, obj: dict) -> dict:
        """Store a new object, filling uid, resourceVersion, creationTimestamp and generation."""
        meta = obj.setdefault("metadata", {})
        key = (meta.get("namespace", "") if res.namespaced else "", meta["name"])
        table = self._objects.get(res)
        if table is None:
            table = self._objects[res] = Table()
        if key in table.objects:
            raise KeyError(key)
        if not res.namespaced:
            meta.pop("namespace", None)
        meta["uid"] = self.ids.uid()
        meta["creationTimestamp"] = rfc3339(self.clock.now())
        if res.kind in GENERATION_KINDS:
            meta["generation"] = 1
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        table.put(key, obj)
        self._record("ADDED", res, obj)
        return obj

    def update(self, res: Resource, obj: dict, old: dict | None = None) -> dict:
        """Replace (or re-save) an object; bump generation when the spec changed against `old`."""
        meta = obj["metadata"]
        key = (meta.get("namespace", "") if res.namespaced else "", meta["name"])
        table = self._objects.get(res)
        current = table.objects.get(key) if table is not None else None
        if current is None:
            raise KeyError(key)
        previous = old if old is not None else current
        if res.kind in GENERATION_KINDS and previous is not obj and previous.get("spec") != obj.get("spec"):
            meta["generation"] = previous["metadata"].get("generation", 1) + 1
        table.put(key, obj)
        self._record("MODIFIED", res, obj)
        return obj

    def delete(self, res: Resource, namespace: str, name: str) -> dict | None:
        """Remove an object and return it (None when absent)."""
        key = (namespace if res.namespaced else "", name)
        table = self._objects.get(res)
        obj = table.pop(key) if table is not None else None
        if obj is not None:
            self._record("DELETED", res, obj)
        return obj

    def _record(self, kind: str, res: Resource, obj: dict) -> None:
        """Bump the resource version, log the change, wake watchers and tell listeners."""
        self.rv += 1
        if kind != "DELETED":
            obj["metadata"]["resourceVersion"] = str(self.rv)
        ns = obj["metadata"].get("namespace", "")
        self.log.append(Change(self.rv, kind, res, ns, orjson.dumps(obj)))
        self.changed.notify_all()
        for listener in self.listeners:
            listener(kind, res, obj)

    # --- watch support ---
    def changes_since(self, rv: int, res: Resource, namespace: str | None) -> Iterable[Change]:
        """Yield logged changes of a resource after resource version rv."""
        for change in self.log.since(rv):
            if change.resource == res and (namespace is None or change.namespace == namespace):
                yield change

    def oldest_rv(self) -> int:
        """Return the oldest resource version the log can replay from."""
        return self.log.oldest_rv(self.rv)

    def resources(self) -> list[Resource]:
        """Return the resources that hold objects."""
        return [r for r, t in self._objects.items() if t]
