"""Endpoints and EndpointSlice controllers: follow Service selectors, pod readiness and (named) target ports.

The Endpoints object is cut at 1,000 addresses and annotated `endpoints.kubernetes.io/over-capacity: truncated`,
as Kubernetes does; the EndpointSlices (endpointslices.py) hold every endpoint, 100 to a slice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aoi.twin.controllers.base import Controller
from aoi.twin.controllers.endpoints_delta import ServiceState, materialize, port_dicts
from aoi.twin.controllers.endpointslices import SERVICE_NAME, service_slices, sync_slices
from aoi.twin.core.podstatus import is_ready
from aoi.twin.core.selectors import map_matches

MAX_ENDPOINTS_ADDRESSES = 1000  # the endpoints controller's cap on one Endpoints object
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"


def resolve_target_port(pod: dict, target) -> int | None:
    """Resolve a Service targetPort against a pod: numbers pass through, names look up container ports."""
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in pod["spec"].get("containers") or []:
        for port in c.get("ports") or []:
            if port.get("name") == target:
                return port.get("containerPort")
    return None


def serves(selector: dict, pod: dict) -> bool:
    """Tell whether a selector picks a pod that has an IP and has not finished."""
    status = pod.get("status", {})
    return bool(map_matches(selector, pod["metadata"].get("labels")) and status.get("podIP")
                and status.get("phase") not in ("Succeeded", "Failed"))


def backends(twin, svc: dict) -> list[dict]:
    """Return the pods a Service selects that have an IP and are not terminating."""
    selector = svc["spec"].get("selector")
    return [p for p in twin.list("pods", svc["metadata"]["namespace"]) if serves(selector, p)]


@dataclass(frozen=True)
class Backend:
    """What one pod gives a Service: its IP, the ports it serves for it, and its Endpoints and slice entries.

    The entries are built once per pod version and go into every Endpoints and EndpointSlice written while the pod
    holds still: nothing edits a stored object's entries in place (API writes copy), so sharing them is safe.
    """

    ip: str
    ports: tuple  # ((name, port, protocol), ...); empty when the pod serves none of the Service's ports
    ready_for_traffic: bool  # Ready and not terminating: an Endpoints `addresses` entry, else `notReadyAddresses`
    address: dict = field(compare=False)  # the Endpoints address
    endpoint: dict = field(compare=False)  # the EndpointSlice endpoint


def backend(svc: dict, pod: dict) -> Backend:
    """Return what a pod gives a Service."""
    meta, ip, node = pod["metadata"], pod["status"]["podIP"], pod["spec"].get("nodeName")
    ready, terminating = is_ready(pod), bool(meta.get("deletionTimestamp"))
    ref = {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}
    return Backend(ip=ip, ports=_ports_for(svc, pod), ready_for_traffic=ready and not terminating,
                   address={"ip": ip, "nodeName": node, "targetRef": ref},
                   endpoint={"addresses": [ip],
                             "conditions": {"ready": ready and not terminating, "serving": ready,
                                            "terminating": terminating},
                             "nodeName": node, "targetRef": dict(ref)})


def _ports_for(svc: dict, pod: dict) -> tuple:
    """Return the (name, port, protocol) triples the pod serves for this Service."""
    out = []
    for port in svc["spec"].get("ports") or []:
        number = resolve_target_port(pod, port.get("targetPort", port.get("port")))
        if number is not None:
            out.append((port.get("name", ""), number, port.get("protocol", "TCP")))
    return tuple(out)


def endpoint_subsets(rows: list[Backend]) -> list[dict]:
    """Group backends (sorted by IP, each serving some port) by port set into Endpoints subsets."""
    groups: dict[tuple, dict] = {}
    for row in rows:
        group = groups.setdefault(row.ports, {"addresses": [], "notReadyAddresses": []})
        group["addresses" if row.ready_for_traffic else "notReadyAddresses"].append(row.address)
    subsets = []
    for ports, group in groups.items():
        subset = {k: v for k, v in group.items() if v}
        subset["ports"] = port_dicts(ports)
        subsets.append(subset)
    return subsets


def truncate_subsets(subsets: list[dict], capacity: int = MAX_ENDPOINTS_ADDRESSES) -> bool:
    """Cut subsets down to `capacity` addresses as the endpoints controller does; return whether it cut.

    Ready addresses go first: when they alone exceed the capacity, every not-ready address goes and each subset
    keeps its share of the ready ones (rounded up, the last subsets getting what is left); otherwise only the
    not-ready addresses are cut, shared the same way.

    Example:
        >>> subsets = [{"addresses": [{"ip": str(i)} for i in range(3)], "notReadyAddresses": [{"ip": "9"}]}]
        >>> truncate_subsets(subsets, capacity=2), subsets
        (True, [{'addresses': [{'ip': '0'}, {'ip': '1'}]}])
    """
    ready = sum(len(s.get("addresses") or []) for s in subsets)
    not_ready = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
    if ready + not_ready <= capacity:
        return False
    field, total, room = ("addresses", ready, capacity) if ready > capacity else \
        ("notReadyAddresses", not_ready, capacity - ready)
    left = room
    for subset in subsets:
        share = min(-(-len(subset.get(field) or []) * room // total), left)  # ceiling division
        kept = (subset.get(field) or [])[:share]
        left -= len(kept)
        subset.pop("notReadyAddresses", None)
        if field == "notReadyAddresses" and kept:
            subset["notReadyAddresses"] = kept
        elif field == "addresses":
            subset.pop("addresses", None)
            subset.update({"addresses": kept} if kept else {})
    return True


def slice_groups(rows: list[Backend]) -> dict[tuple, list[dict]]:
    """Return EndpointSlice endpoints grouped by the ports they serve, each group sorted by IP."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(row.ports, []).append(row.endpoint)
    return groups


class EndpointsController(Controller):
    """Maintain one Endpoints (at most 1,000 addresses) and EndpointSlices of 100 endpoints per selector Service.

    The first reconcile of a Service, and any after the Service changed or someone else wrote its Endpoints or
    slices, rebuilds from every pod; the others patch in the pods that changed since (endpoints_delta.py).
    """

    name = "endpoints"
    watches = ("services", "pods", "endpoints", "endpointslices")
    capacity = MAX_ENDPOINTS_ADDRESSES  # addresses one Endpoints holds before it is cut

    def __init__(self):
        self._states: dict[tuple, ServiceState] = {}  # service key -> what the last reconcile left
        self._writing = False  # the store changes during a reconcile are this controller's own
        # namespace -> [(service key, selector)] in list order, for the pod changes there; a Service change there
        # (this controller watches them all) drops it
        self._selectors: dict[str, list[tuple[tuple, dict | None]]] = {}

    def __deepcopy__(self, memo) -> EndpointsController:
        """Copy without the per-Service states: a clone rebuilds them on demand, cheaper than copying them."""
        return type(self)()

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "Service":
            self._selectors.pop(obj["metadata"].get("namespace", ""), None)
            return super().keys_for(twin, kind, res, obj)
        meta = obj["metadata"]
        if res.kind != "Pod":
            if not self._writing:  # written by someone else: the state no longer knows what is stored
                owner = meta["name"] if res.kind == "Endpoints" else (meta.get("labels") or {}).get(SERVICE_NAME)
                self._states.pop((meta["namespace"], owner), None)
            return []
        return self._pod_keys(twin, meta)

    def _pod_keys(self, twin, meta: dict) -> list[tuple]:
        """Return the Services selecting a pod; mark it dirty in those and in any that held it."""
        ns, labels, keys = meta["namespace"], meta.get("labels"), []
        for key, selector in self._service_selectors(twin, ns):
            selected = map_matches(selector, labels)
            if selected:
                keys.append(key)
            state = self._states.get(key)
            if state is not None and (selected or meta["uid"] in state.rows):
                state.pending[meta["uid"]] = meta["name"]
        return keys

    def _service_selectors(self, twin, ns: str) -> list[tuple[tuple, dict | None]]:
        """Return the (key, selector) of a namespace's Services, in list order (read once between Service changes:
        every pod change asks)."""
        found = self._selectors.get(ns)
        if found is None:
            found = self._selectors[ns] = [((ns, s["metadata"]["name"]), s["spec"].get("selector"))
                                           for s in twin.list("services", ns)]
        return found

    def reconcile(self, twin, key):
        self._writing = True
        try:
            self._reconcile(twin, key)
        finally:
            self._writing = False

    def _reconcile(self, twin, key) -> None:
        """Rebuild or patch one Service's Endpoints and slices."""
        svc = twin.get("services", *key)
        if svc is None:
            self._states.pop(key, None)
            self._drop(twin, key)
            return
        if not svc["spec"].get("selector"):
            return
        state = self._states.get(key)
        if state is None or state.svc_rv != svc["metadata"].get("resourceVersion") or not self._patch(twin, svc, state):
            self._rebuild(twin, svc, key)

    def _rebuild(self, twin, svc: dict, key) -> None:
        """Write the Endpoints and slices from every pod, then remember the result."""
        memo = self._backends(twin, svc, key)
        rows = sorted((row for _, row in memo.values() if row.ports), key=lambda row: row.ip)
        subsets = endpoint_subsets(rows)
        self._endpoints(twin, svc, subsets, truncate_subsets(subsets, self.capacity))
        sync_slices(twin, svc, slice_groups(rows))
        self._states[key] = ServiceState(svc["metadata"].get("resourceVersion"), memo, service_slices(twin, *key))

    def _patch(self, twin, svc: dict, state: ServiceState) -> bool:
        """Apply the pods changed since the last reconcile; False when the slices need a full sync."""
        changed = self._reread(twin, svc, state)
        order = state.order()
        subsets = state.subsets(order)
        truncated = truncate_subsets(subsets, self.capacity)
        if not state.endpoints_unchanged(subsets, truncated):
            self._endpoints(twin, svc, materialize(subsets), truncated)
        return state.patch_slices(twin, svc, changed, order)

    def _reread(self, twin, svc: dict, state: ServiceState) -> dict:
        """Refresh the dirty pods' rows; return {pod uid: (old Backend, new Backend)} for those that changed."""
        changed, ns, selector = {}, svc["metadata"]["namespace"], svc["spec"]["selector"]
        for uid, name in state.pending.items():
            pod, old = twin.get("pods", ns, name), state.rows.get(uid)
            new = None
            if pod is not None and pod["metadata"]["uid"] == uid and serves(selector, pod):
                rv = pod["metadata"].get("resourceVersion")
                new = old if old and old[0] == rv else (rv, backend(svc, pod))
            if new is not old:
                state.replace(uid, old, new)
                changed[uid] = (old and old[1], new and new[1])
        state.pending.clear()
        return changed

    def _backends(self, twin, svc: dict, key) -> dict[str, tuple]:
        """Return {pod uid: (pod resourceVersion, Backend)} of the Service's pods, reusing unchanged pods' rows.

        A pod's row changes only with the pod or the Service, so a Service of n pods costs n lookups per
        rebuild rather than n port resolutions and readiness checks.
        """
        svc_rv = svc["metadata"].get("resourceVersion")
        state = self._states.get(key)
        memo = state.rows if state is not None and state.svc_rv == svc_rv else {}
        rows = {}
        for pod in backends(twin, svc):
            meta = pod["metadata"]
            hit = memo.get(meta["uid"])
            rows[meta["uid"]] = hit if hit and hit[0] == meta.get("resourceVersion") else (
                meta.get("resourceVersion"), backend(svc, pod))
        return rows

    def _drop(self, twin, key) -> None:
        """Remove what a deleted Service left behind."""
        if twin.get("endpoints", *key) is not None:
            twin.store.delete(twin.resource("endpoints"), *key)
        for s in service_slices(twin, *key):
            twin.store.delete(twin.resource("endpointslices"), key[0], s["metadata"]["name"])

    def _endpoints(self, twin, svc: dict, subsets: list[dict], truncated: bool) -> None:
        """Create or update the Endpoints object when its (truncated) subsets or the truncation changed."""
        ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        ep = twin.get("endpoints", ns, name)
        if ep is None:
            ep = {"apiVersion": "v1", "kind": "Endpoints",
                  "metadata": {"name": name, "namespace": ns, "labels": dict(svc["metadata"].get("labels") or {})}}
            _set_subsets(ep, subsets, truncated)
            twin.store.create(twin.resource("endpoints"), ep)
        elif (ep.get("subsets") or []) != subsets or _is_truncated(ep) != truncated:
            _set_subsets(ep, subsets, truncated)
            twin.update("endpoints", ep)


def _is_truncated(ep: dict) -> bool:
    return OVER_CAPACITY in (ep["metadata"].get("annotations") or {})


def _set_subsets(ep: dict, subsets: list[dict], truncated: bool) -> None:
    """Store subsets (none: no key) and the over-capacity annotation, present only while addresses were cut."""
    if subsets:
        ep["subsets"] = subsets
    else:
        ep.pop("subsets", None)
    annotations = ep["metadata"].setdefault("annotations", {})
    if truncated:
        annotations[OVER_CAPACITY] = "truncated"
    else:
        annotations.pop(OVER_CAPACITY, None)
    if not annotations:
        del ep["metadata"]["annotations"]
