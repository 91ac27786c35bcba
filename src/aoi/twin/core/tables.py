"""One resource's objects with the indexes that keep reads proportional to what they return.

Names are kept sorted per namespace (lists come out in the order they always had without sorting the whole
resource on every call) and keys are indexed by their controller owner's uid (a ReplicaSet finds its pods without
scanning its namespace). A lazy copy shares the objects of a table that never changes again (a base twin's) and
copies each one on its first use: an episode pays only for the objects it touches.
"""

from __future__ import annotations

import bisect

import orjson

from aoi.twin.core.podstatus import is_ready

Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects
Summary = tuple[bool, bool, frozenset]  # (active, ready, labels) of an owned object


def summary(obj: dict) -> Summary:
    """Return what an owner counts of an object it controls: active (not terminating or finished), ready, labels."""
    meta = obj["metadata"]
    active = not meta.get("deletionTimestamp") and (obj.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    return active, is_ready(obj), frozenset((meta.get("labels") or {}).items())


def controller_uids(obj: dict) -> tuple[str, ...]:
    """Return the uids of obj's controller owner references (normally none or one)."""
    refs = obj["metadata"].get("ownerReferences")
    if not refs:
        return ()
    return tuple(ref.get("uid") for ref in refs if ref.get("controller") and ref.get("uid"))


def bound_node(obj: dict) -> str | None:
    """Return the node a pod is bound to (spec.nodeName), or None."""
    spec = obj.get("spec")
    return spec.get("nodeName") if isinstance(spec, dict) else None


class Table:
    """Objects of one resource by key, sorted names per namespace, keys per controller owner uid.

    Example:
        >>> t = Table()
        >>> t.put(("b", "x"), {"metadata": {"name": "x"}}); t.put(("a", "y"), {"metadata": {"name": "y"}})
        >>> t.keys(None)
        [('a', 'y'), ('b', 'x')]
    """

    __slots__ = ("objects", "shared", "names", "owned", "owners", "on_node", "node_of", "tally", "summary_of")

    def __init__(self):
        self.objects: dict[Key, dict] = {}
        self.shared: set[Key] = set()  # keys whose object is still the one of the table lazily copied (read-only)
        self.names: dict[str, list[str]] = {}  # namespace -> names, sorted
        self.owned: dict[str, dict[Key, None]] = {}  # controller owner uid -> keys (a set that keeps order)
        self.owners: dict[Key, tuple[str, ...]] = {}  # key -> the owner uids it is indexed under
        self.on_node: dict[str, dict[Key, None]] = {}  # spec.nodeName -> keys (pods bound to a node)
        self.node_of: dict[Key, str] = {}
        self.tally: dict[tuple[str, str], dict[Summary, int]] = {}  # (owner uid, namespace) -> summary -> count
        self.summary_of: dict[Key, Summary] = {}

    def __len__(self) -> int:
        return len(self.objects)

    def get(self, key: Key) -> dict | None:
        """Return the object stored under key (this table's own: a shared one is copied first), or None."""
        obj = self.objects.get(key)
        if obj is not None and key in self.shared:
            obj = self.objects[key] = orjson.loads(orjson.dumps(obj))
            self.shared.discard(key)
        return obj

    def get_all(self, keys) -> list[dict]:
        """Return the objects stored under keys (all present), this table's own."""
        if not self.shared:
            objs = self.objects
            return [objs[k] for k in keys]
        return [self.get(k) for k in keys]

    def put(self, key: Key, obj: dict) -> None:
        """Store obj under key (new or replacing) and index it."""
        if key not in self.objects:
            bisect.insort(self.names.setdefault(key[0], []), key[1])
        self.objects[key] = obj
        self.shared.discard(key)
        uids = controller_uids(obj)
        self._count(key, uids, summary(obj) if uids else None)
        self._index_owner(key, uids)
        self._index_node(key, bound_node(obj))

    def pop(self, key: Key) -> dict | None:
        """Remove and return the object under key (None when absent)."""
        obj = self.get(key)
        if obj is None:
            return None
        del self.objects[key]
        names = self.names[key[0]]
        del names[bisect.bisect_left(names, key[1])]
        if not names:
            del self.names[key[0]]
        self._count(key, (), None)
        self._index_owner(key, ())
        self._index_node(key, None)
        return obj

    def _index_owner(self, key: Key, uids: tuple[str, ...]) -> None:
        """Move key to the owner uids it now has."""
        old = self.owners.get(key, ())
        if old == uids:
            return
        for uid in old:
            keys = self.owned[uid]
            del keys[key]
            if not keys:
                del self.owned[uid]
        for uid in uids:
            self.owned.setdefault(uid, {})[key] = None
        if uids:
            self.owners[key] = uids
        else:
            self.owners.pop(key, None)

    def _count(self, key: Key, uids: tuple[str, ...], new: Summary | None) -> None:
        """Move key's summary in its owners' tallies (call before _index_owner moves the key itself)."""
        old = self.summary_of.get(key)
        old_uids = self.owners.get(key, ())
        if old == new and old_uids == uids:
            return
        for uid in old_uids:
            counts = self.tally[(uid, key[0])]
            counts[old] -= 1
            if not counts[old]:
                del counts[old]
                if not counts:
                    del self.tally[(uid, key[0])]
        for uid in uids:
            counts = self.tally.setdefault((uid, key[0]), {})
            counts[new] = counts.get(new, 0) + 1
        if new is None:
            self.summary_of.pop(key, None)
        else:
            self.summary_of[key] = new

    def _index_node(self, key: Key, node: str | None) -> None:
        """Move key to the node it is now bound to."""
        old = self.node_of.get(key)
        if old == node:
            return
        if old is not None:
            keys = self.on_node[old]
            del keys[key]
            if not keys:
                del self.on_node[old]
            del self.node_of[key]
        if node:
            self.on_node.setdefault(node, {})[key] = None
            self.node_of[key] = node

    def keys(self, namespace: str | None) -> list[Key]:
        """Return the keys of one namespace (or all, namespace by namespace), sorted."""
        if namespace is not None:
            return [(namespace, name) for name in self.names.get(namespace, ())]
        return [(ns, name) for ns in sorted(self.names) for name in self.names[ns]]

    def owned_keys(self, uid: str, namespace: str | None) -> list[Key]:
        """Return the sorted keys whose controller owner has this uid (in one namespace, or all)."""
        keys = self.owned.get(uid, ())
        return sorted(k for k in keys if namespace is None or k[0] == namespace)

    def copy(self, lazy: bool = False) -> Table:
        """Return an independent copy (objects through a JSON round trip: far faster than deepcopy).

        `lazy` shares the objects and copies each on first use: only for a table that never changes again.
        """
        new = Table()
        if lazy:
            new.objects, new.shared = dict(self.objects), set(self.objects)
        else:
            new.objects = {k: orjson.loads(orjson.dumps(obj)) for k, obj in self.objects.items()}
        new.names = {ns: list(names) for ns, names in self.names.items()}
        new.owned = {uid: dict(keys) for uid, keys in self.owned.items()}
        new.owners = dict(self.owners)
        new.on_node = {node: dict(keys) for node, keys in self.on_node.items()}
        new.node_of = dict(self.node_of)
        new.tally = {owner: dict(counts) for owner, counts in self.tally.items()}
        new.summary_of = dict(self.summary_of)
        return new
