"""The object store: Kubernetes objects as JSON dicts, resource versions, and a replayable change log for watches."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable

import orjson

from aoi.twin.changelog import HISTORY_BYTES, ChangeLog
from aoi.twin.clock import SimClock, rfc3339
from aoi.twin.ids import Ids
from aoi.twin.resources import Resource

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
        self._objects: dict[Resource, dict[tuple[str, str], dict]] = {}

    def __deepcopy__(self, memo) -> "Store":
        """Copy the store (used by Twin.clone): objects through a JSON round trip, far faster than deepcopy."""
        import copy

        new = Store.__new__(Store)
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            if key != "_objects":
                setattr(new, key, copy.deepcopy(value, memo))
        new._objects = {res: {k: orjson.loads(orjson.dumps(obj)) for k, obj in table.items()}
                        for res, table in self._objects.items()}
        return new

    # --- reads ---
    def get(self, res: Resource, namespace: str, name: str) -> dict | None:
        """Return the stored object or None."""
        return self._objects.get(res, {}).get((namespace if res.namespaced else "", name))

    def list(self, res: Resource, namespace: str | None = None, match: Callable[[dict], bool] | None = None) -> list[dict]:
        """Return objects of a resource (one namespace or all), sorted by namespace and name."""
        table = self._objects.get(res, {})
        keys = sorted(k for k in table if namespace is None or not res.namespaced or k[0] == namespace)
        objs = (table[k] for k in keys)
        return [o for o in objs if match is None or match(o)]

    def count(self, res: Resource) -> int:
        """Return how many objects of a resource exist."""
        return len(self._objects.get(res, {}))

    # --- writes ---
    def create(self, res: Resource, obj: dict) -> dict:
        """Store a new object, filling uid, resourceVersion, creationTimestamp and generation."""
        meta = obj.setdefault("metadata", {})
        key = (meta.get("namespace", "") if res.namespaced else "", meta["name"])
        table = self._objects.setdefault(res, {})
        if key in table:
            raise KeyError(key)
        if not res.namespaced:
            meta.pop("namespace", None)
        meta["uid"] = self.ids.uid()
        meta["creationTimestamp"] = rfc3339(self.clock.now())
        if res.kind in GENERATION_KINDS:
            meta["generation"] = 1
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        table[key] = obj
        self._record("ADDED", res, obj)
        return obj

    def update(self, res: Resource, obj: dict, old: dict | None = None) -> dict:
        """Replace (or re-save) an object; bump generation when the spec changed against `old`."""
        meta = obj["metadata"]
        key = (meta.get("namespace", "") if res.namespaced else "", meta["name"])
        current = self._objects.get(res, {}).get(key)
        if current is None:
            raise KeyError(key)
        previous = old if old is not None else current
        if res.kind in GENERATION_KINDS and previous is not obj and previous.get("spec") != obj.get("spec"):
            meta["generation"] = previous["metadata"].get("generation", 1) + 1
        self._objects[res][key] = obj
        self._record("MODIFIED", res, obj)
        return obj

    def delete(self, res: Resource, namespace: str, name: str) -> dict | None:
        """Remove an object and return it (None when absent)."""
        key = (namespace if res.namespaced else "", name)
        obj = self._objects.get(res, {}).pop(key, None)
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
