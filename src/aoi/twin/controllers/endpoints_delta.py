"""What the Endpoints controller remembers of one Service, so a pod's change costs O(log n), not O(n).

A ServiceState holds the Service's backends sorted by (IP, pod name) per served port set, split ready / not ready,
and where each endpoint sits among the Service's EndpointSlices. The controller marks pods dirty as they change;
a reconcile re-reads only those, builds the Endpoints from the sorted rows (cutting at the capacity before any
address list is built) and rewrites only the slices a dirty pod was in or that take new endpoints. Every write is
the one a full rebuild would make, in the same order (tests/twin/controllers/test_endpoints_incremental.py checks it).
"""

from __future__ import annotations

import bisect

from aoi.twin.controllers.endpointslices import MAX_ENDPOINTS_PER_SLICE, ports_key, slice_body, write_slice


def port_dicts(ports: tuple) -> list[dict]:
    """Return Endpoints ports (an unnamed port has no name key)."""
    return [{**({"name": n} if n else {}), "port": p, "protocol": proto} for n, p, proto in ports]


def row_key(row) -> tuple:
    """Return a backend's sort key: IP, then pod name (the full rebuild's stable sort of a name-sorted list)."""
    ref = row.address["targetRef"]
    return row.ip, ref["name"], ref["uid"]


class AddressView:
    """The first `stop` backends of a sorted run, seen as Endpoints addresses; cutting its head stays a view.

    truncate_subsets only ever cuts heads (`[:share]`), so a view passes through it without building a list, and
    the controller can tell from the views' tags and lengths whether the Endpoints can have changed at all.
    """

    def __init__(self, keys: list, rows: dict, tag: tuple, stop: int | None = None):
        self.keys, self.rows, self.tag = keys, rows, tag
        self.stop = len(keys) if stop is None else stop

    def __len__(self) -> int:
        return self.stop

    def __getitem__(self, index):
        if isinstance(index, slice) and index.start is None and index.step is None and (index.stop or 0) >= 0:
            stop = self.stop if index.stop is None else min(index.stop, self.stop)
            return AddressView(self.keys, self.rows, self.tag, stop)
        return self.addresses()[index]

    def addresses(self) -> list[dict]:
        """Return the addresses this view shows."""
        return [self.rows[k].address for k in self.keys[:self.stop]]


def materialize(subsets: list[dict]) -> list[dict]:
    """Turn the views left in subsets (after truncation) into lists."""
    for subset in subsets:
        for name, value in subset.items():
            if isinstance(value, AddressView):
                subset[name] = value.addresses()
    return subsets


class ServiceState:
    """One Service's backends, sorted per port set, and the slice each endpoint is in."""

    def __init__(self, svc_rv: str, rows: dict, slices: list[dict]):
        self.svc_rv = svc_rv
        self.rows: dict[str, tuple] = {}  # pod uid -> (pod resourceVersion, Backend)
        self.pending: dict[str, str] = {}  # pod uid -> pod name: changed since the last reconcile
        self.groups: dict[tuple, tuple[list, list]] = {}  # ports -> (ready keys, not-ready keys), sorted
        self.by_key: dict[tuple, object] = {}  # row key -> Backend
        self.horizon: dict[tuple, int] = {}  # (ports, 0 ready / 1 not) -> lowest index changed since last look
        self.shown = None  # what the Endpoints last showed: per subset, its keys and its views' (tag, length)
        for uid, (rv, row) in rows.items():
            self.rows[uid] = (rv, row)
            if row.ports:
                self.groups.setdefault(row.ports, ([], []))[0 if row.ready_for_traffic else 1].append(row_key(row))
                self.by_key[row_key(row)] = row
        for run in (run for lists in self.groups.values() for run in lists):
            run.sort()
        self.slice_ports: dict[str, tuple] = {s["metadata"]["name"]: ports_key(s) for s in slices}
        self.names = sorted(self.slice_ports)
        self.where = {e["targetRef"]["uid"]: s["metadata"]["name"] for s in slices for e in s.get("endpoints") or []}

    def replace(self, uid: str, old: tuple | None, new: tuple | None) -> None:
        """Swap a pod's (resourceVersion, Backend) entry, keeping the sorted groups in step."""
        if old is not None and old[1].ports:
            key = row_key(old[1])
            lists = self.groups[old[1].ports]
            tag = (old[1].ports, 0 if old[1].ready_for_traffic else 1)
            run = lists[tag[1]]
            at = bisect.bisect_left(run, key)
            del run[at]
            del self.by_key[key]
            self.horizon[tag] = min(self.horizon.get(tag, at), at)
            if not lists[0] and not lists[1]:
                del self.groups[old[1].ports]
        if new is not None and new[1].ports:
            key = row_key(new[1])
            if new[1].ports not in self.groups:
                self.groups[new[1].ports] = ([], [])
                self.horizon.update({(new[1].ports, 0): 0, (new[1].ports, 1): 0})
            tag = (new[1].ports, 0 if new[1].ready_for_traffic else 1)
            run = self.groups[new[1].ports][tag[1]]
            at = bisect.bisect_left(run, key)
            run.insert(at, key)
            self.by_key[key] = new[1]
            self.horizon[tag] = min(self.horizon.get(tag, at), at)
        if new is None:
            self.rows.pop(uid, None)
        else:
            self.rows[uid] = new

    def order(self) -> list[tuple]:
        """Return the port sets in the order their first backend (by IP) appears."""
        return sorted(self.groups, key=lambda p: min(run[0] for run in self.groups[p] if run))

    def subsets(self, order: list[tuple]) -> list[dict]:
        """Return Endpoints subsets whose address lists are views (truncate, then materialize them)."""
        out = []
        for ports in order:
            ready, not_ready = self.groups[ports]
            subset = {k: AddressView(v, self.by_key, (ports, i)) for i, (k, v) in
                      enumerate((("addresses", ready), ("notReadyAddresses", not_ready))) if v}
            subset["ports"] = port_dicts(ports)
            out.append(subset)
        return out

    def endpoints_unchanged(self, subsets: list[dict], truncated: bool) -> bool:
        """Tell whether truncated view subsets show what the Endpoints showed last time (then it needs no write).

        They do when each subset has the same keys and views of the same runs and lengths, and no run changed
        within the part shown. Either way, remember what they show now.
        """
        shown = truncated, [(tuple(s), tuple((v.tag, len(v)) for v in s.values() if isinstance(v, AddressView)))
                            for s in subsets]
        same = shown == self.shown and all(self.horizon.get(tag, n) >= n for _, views in shown[1] for tag, n in views)
        self.shown, self.horizon = shown, {}
        return same

    def patch_slices(self, twin, svc: dict, changed: dict, order: list[tuple]) -> bool:
        """Rewrite only the slices that changed, as sync_slices would; False when only a full sync can say how.

        That is when a slice serves ports no endpoint serves now (it may be reused or become the placeholder),
        or when the Service has no endpoints left.
        """
        if not order or any(p not in self.groups for p in self.slice_ports.values()):
            return False
        touched = {self.where.pop(uid) for uid, (_, new) in changed.items()
                   if uid in self.where and (new is None or new.ports != self.slice_ports[self.where[uid]])}
        touched |= {self.where[uid] for uid, (_, new) in changed.items() if uid in self.where}
        fresh: dict[tuple, list] = {}
        for uid, (_, new) in changed.items():
            if new is not None and new.ports and uid not in self.where:
                fresh.setdefault(new.ports, []).append(row_key(new))
        emptied = []
        for ports in order:
            emptied += self._patch_group(twin, svc, ports, touched, sorted(fresh.get(ports, [])), changed)
        for name in sorted(emptied):
            twin.store.delete(twin.resource("endpointslices"), svc["metadata"]["namespace"], name)
            del self.slice_ports[name]
            self.names.remove(name)
        return True

    def _patch_group(self, twin, svc: dict, ports: tuple, touched: set, fresh: list, changed: dict) -> list[str]:
        """Update one port set's slices in name order, then add slices for what is left; return emptied ones."""
        ns, emptied = svc["metadata"]["namespace"], []
        for name in [n for n in self.names if self.slice_ports[n] == ports]:
            s = twin.get("endpointslices", ns, name)
            group = self._kept(s, changed, ports) if name in touched else s.get("endpoints") or []
            room = MAX_ENDPOINTS_PER_SLICE - len(group)
            fill, fresh = fresh[:room], fresh[room:]
            if not fill and name not in touched:
                continue
            group = list(group) + [self.by_key[k].endpoint for k in fill]
            if not group:
                emptied.append(name)
                continue
            write_slice(twin, svc, s, slice_body(ports, group))
            self.where.update((k[2], name) for k in fill)
        for i in range(0, len(fresh), MAX_ENDPOINTS_PER_SLICE):
            chunk = fresh[i:i + MAX_ENDPOINTS_PER_SLICE]
            name = write_slice(twin, svc, None, slice_body(ports, [self.by_key[k].endpoint for k in chunk]))
            self.slice_ports[name] = ports
            bisect.insort(self.names, name)
            self.where.update((k[2], name) for k in chunk)
        return emptied

    def _kept(self, s: dict, changed: dict, ports: tuple) -> list[dict]:
        """Return the endpoints a touched slice keeps, in its order, with changed pods' entries renewed."""
        kept = []
        for e in s.get("endpoints") or []:
            uid = e["targetRef"]["uid"]
            if uid not in changed:
                kept.append(e)
            elif changed[uid][1] is not None and changed[uid][1].ports == ports:
                kept.append(changed[uid][1].endpoint)
        return kept
