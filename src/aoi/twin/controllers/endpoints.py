"""Endpoints and EndpointSlice controllers: follow Service selectors, pod readiness and (named) target ports."""

from __future__ import annotations

from aoi.twin.controllers.base import Controller, controller_ref
from aoi.twin.podstatus import is_ready
from aoi.twin.selectors import map_matches

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"


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


def _slice_ports(ports: tuple) -> list[dict]:
    """Return EndpointSlice ports: name is a pointer there, always set ("" when unnamed); kubectl relies on it."""
    return [{"name": n, "port": p, "protocol": proto} for n, p, proto in ports]


def endpoint_subsets(svc: dict, pods: list[dict]) -> list[dict]:
    """Group pods by served port set into Endpoints subsets (ready and not-ready addresses)."""
    groups: dict[tuple, dict] = {}
    for pod in sorted(pods, key=lambda p: p["status"]["podIP"]):
        ports = _ports_for(svc, pod)
        if not ports:
            continue
        group = groups.setdefault(ports, {"addresses": [], "notReadyAddresses": []})
        addr = {"ip": pod["status"]["podIP"], "nodeName": pod["spec"].get("nodeName"), "targetRef": _target_ref(pod)}
        group["addresses" if is_ready(pod) and not pod["metadata"].get("deletionTimestamp") else "notReadyAddresses"].append(addr)
    subsets = []
    for ports, group in groups.items():
        subset = {k: v for k, v in group.items() if v}
        subset["ports"] = _port_dicts(ports)
        subsets.append(subset)
    return subsets


class EndpointsController(Controller):
    """Maintain one Endpoints and one EndpointSlice per selector Service."""

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
        self._slice(twin, svc, pods)

    def _drop(self, twin, key) -> None:
        """Remove what a deleted Service left behind."""
        if twin.get("endpoints", *key) is not None:
            twin.store.delete(twin.resource("endpoints"), *key)
        for s in twin.list("endpointslices", key[0]):
            if s["metadata"].get("labels", {}).get(SERVICE_NAME) == key[1]:
                twin.store.delete(twin.resource("endpointslices"), key[0], s["metadata"]["name"])

    def _endpoints(self, twin, svc: dict, subsets: list[dict]) -> None:
        """Create or update the Endpoints object when its subsets changed."""
        ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        ep = twin.get("endpoints", ns, name)
        if ep is None:
            ep = {"apiVersion": "v1", "kind": "Endpoints",
                  "metadata": {"name": name, "namespace": ns, "labels": dict(svc["metadata"].get("labels") or {})}}
            if subsets:
                ep["subsets"] = subsets
            twin.store.create(twin.resource("endpoints"), ep)
        elif (ep.get("subsets") or []) != subsets:
            if subsets:
                ep["subsets"] = subsets
            else:
                ep.pop("subsets", None)
            twin.update("endpoints", ep)

    def _slice(self, twin, svc: dict, pods: list[dict]) -> None:
        """Create or update the service's EndpointSlice."""
        ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        endpoints, ports = [], ()
        for pod in sorted(pods, key=lambda p: p["status"]["podIP"]):
            served = _ports_for(svc, pod)
            if not served:
                continue
            ports = served
            ready = is_ready(pod)
            terminating = bool(pod["metadata"].get("deletionTimestamp"))
            endpoints.append({"addresses": [pod["status"]["podIP"]],
                              "conditions": {"ready": ready and not terminating, "serving": ready,
                                             "terminating": terminating},
                              "nodeName": pod["spec"].get("nodeName"), "targetRef": _target_ref(pod)})
        existing = next((s for s in twin.list("endpointslices", ns)
                         if s["metadata"].get("labels", {}).get(SERVICE_NAME) == name), None)
        body = {"addressType": "IPv4", "endpoints": endpoints or None, "ports": _slice_ports(ports) if ports else None}
        if existing is None:
            labels = dict(svc["metadata"].get("labels") or {})
            labels.update({SERVICE_NAME: name, MANAGED_BY: "endpointslice-controller.k8s.io"})
            obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                   "metadata": {"name": f"{name}-{twin.ids.suffix()}", "generateName": f"{name}-", "namespace": ns,
                                "labels": labels, "ownerReferences": [controller_ref(svc)]}, **body}
            twin.store.create(twin.resource("endpointslices"), obj)
        elif any(existing.get(k) != v for k, v in body.items()):
            existing.update(body)
            twin.update("endpointslices", existing)
