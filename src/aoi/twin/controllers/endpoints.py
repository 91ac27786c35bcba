"""Endpoints and EndpointSlice controllers: follow Service selectors, pod readiness and (named) target ports.

The Endpoints object is cut at 1,000 addresses and annotated `endpoints.kubernetes.io/over-capacity: truncated`,
as Kubernetes does; the EndpointSlices (endpointslices.py) hold every endpoint, 100 to a slice.
"""

from __future__ import annotations

from aoi.twin.controllers.base import Controller
from aoi.twin.controllers.endpointslices import service_slices, sync_slices
from aoi.twin.podstatus import is_ready
from aoi.twin.selectors import map_matches

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


def backends(twin, svc: dict) -> list[dict]:
    """Return the pods a Service selects that have an IP and are not terminating."""
    selector = svc["spec"].get("selector")
    return [p for p in twin.list("pods", svc["metadata"]["namespace"])
            if map_matches(selector, p["metadata"].get("labels")) and p.get("status", {}).get("podIP")
            and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]


def _target_ref(pod: dict) -> dict:
    return {"kind": "Pod", "namespace": pod["metadata"]["namespace"], "name": pod["metadata"]["name"],
            "uid": pod["metadata"]["uid"]}


def _ports_for(svc: dict, pod: dict) -> tuple:
    """Return the (name, port, protocol) triples the pod serves for this Service."""
    out = []
    for port in svc["spec"].get("ports") or []:
        number = resolve_target_port(pod, port.get("targetPort", port.get("port")))
        if number is not None:
            out.append((port.get("name", ""), number, port.get("protocol", "TCP")))
    return tuple(out)


def _port_dicts(ports: tuple) -> list[dict]:
    """Return Endpoints ports (an unnamed port has no name key)."""
    return [{**({"name": n} if n else {}), "port": p, "protocol": proto} for n, p, proto in ports]


def _serving(pod: dict) -> tuple[bool, bool]:
    """Return (ready, terminating): a terminating pod is never ready for traffic."""
    return is_ready(pod), bool(pod["metadata"].get("deletionTimestamp"))


def endpoint_subsets(svc: dict, pods: list[dict]) -> list[dict]:
    """Group pods by served port set into Endpoints subsets (ready and not-ready addresses)."""
    groups: dict[tuple, dict] = {}
    for pod in sorted(pods, key=lambda p: p["status"]["podIP"]):
        ports = _ports_for(svc, pod)
        if not ports:
            continue
        group = groups.setdefault(ports, {"addresses": [], "notReadyAddresses": []})
        addr = {"ip": pod["status"]["podIP"], "nodeName": pod["spec"].get("nodeName"), "targetRef": _target_ref(pod)}
        ready, terminating = _serving(pod)
        group["addresses" if ready and not terminating else "notReadyAddresses"].append(addr)
    subsets = []
    for ports, group in groups.items():
        subset = {k: v for k, v in group.items() if v}
        subset["ports"] = _port_dicts(ports)
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


def slice_groups(svc: dict, pods: list[dict]) -> dict[tuple, list[dict]]:
    """Return the Service's EndpointSlice endpoints grouped by the ports they serve, each sorted by IP."""
    groups: dict[tuple, list[dict]] = {}
    for pod in sorted(pods, key=lambda p: p["status"]["podIP"]):
        ports = _ports_for(svc, pod)
        if ports:
            ready, terminating = _serving(pod)
            groups.setdefault(ports, []).append({
                "addresses": [pod["status"]["podIP"]],
                "conditions": {"ready": ready and not terminating, "serving": ready, "terminating": terminating},
                "nodeName": pod["spec"].get("nodeName"), "targetRef": _target_ref(pod)})
    return groups


class EndpointsController(Controller):
    """Maintain one Endpoints (at most 1,000 addresses) and EndpointSlices of 100 endpoints per selector Service."""

    name = "endpoints"
    watches = ("services", "pods")

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "Service":
            return super().keys_for(twin, kind, res, obj)
        ns = obj["metadata"]["namespace"]
        labels = obj["metadata"].get("labels")
        return [(ns, s["metadata"]["name"]) for s in twin.list("services", ns)
                if map_matches(s["spec"].get("selector"), labels)]

    def reconcile(self, twin, key):
        svc = twin.get("services", *key)
        if svc is None:
            self._drop(twin, key)
            return
        if not svc["spec"].get("selector"):
            return
        pods = backends(twin, svc)
        self._endpoints(twin, svc, endpoint_subsets(svc, pods))
        sync_slices(twin, svc, slice_groups(svc, pods))

    def _drop(self, twin, key) -> None:
        """Remove what a deleted Service left behind."""
        if twin.get("endpoints", *key) is not None:
            twin.store.delete(twin.resource("endpoints"), *key)
        for s in service_slices(twin, *key):
            twin.store.delete(twin.resource("endpointslices"), key[0], s["metadata"]["name"])

    def _endpoints(self, twin, svc: dict, subsets: list[dict]) -> None:
        """Create or update the Endpoints object when its subsets (or their truncation) changed."""
        ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        truncated = truncate_subsets(subsets)
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
