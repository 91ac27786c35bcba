"""EndpointSlices as the EndpointSlice controller keeps them: at most 100 endpoints a slice, updated in place.

A Service's endpoints are grouped by the ports they serve; each group fills the slices that already serve those
ports, keeping every endpoint in the slice it was in, so one pod's change rewrites one slice, not all of them.
New endpoints go where there is room, then into new slices named `<service>-<suffix>`; emptied slices are deleted,
except one placeholder (no endpoints, no ports) that a Service with no endpoints keeps, as a real cluster shows.
"""

from __future__ import annotations

from aoi.twin.controllers.base import controller_ref

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
MAX_ENDPOINTS_PER_SLICE = 100  # kube-controller-manager's --max-endpoints-per-slice default

Ports = tuple  # ((name, port, protocol), ...) as a Service port resolves against a pod


def service_slices(twin, namespace: str, service: str) -> list[dict]:
    """Return the EndpointSlices of a Service, by name.

    Example:
        >>> [s["metadata"]["name"] for s in service_slices(twin, "default", "web")]  # doctest: +SKIP
        ['web-7kq2x', 'web-b9mzp']
    """
    return [s for s in twin.list("endpointslices", namespace)
            if (s["metadata"].get("labels") or {}).get(SERVICE_NAME) == service]


def ready_pod_names(twin, namespace: str, service: str) -> list[str]:
    """Return the pods a Service's slices list as ready, sorted (what kube-proxy routes to)."""
    return sorted({(e.get("targetRef") or {}).get("name") for s in service_slices(twin, namespace, service)
                   for e in s.get("endpoints") or [] if (e.get("conditions") or {}).get("ready")
                   and (e.get("targetRef") or {}).get("kind") == "Pod"})


def sync_slices(twin, svc: dict, groups: dict[Ports, list[dict]]) -> None:
    """Make the Service's slices hold `groups` (endpoints by served ports, sorted by IP), changing what differs."""
    ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
    slices = service_slices(twin, ns, name)
    by_ports: dict[Ports, list[dict]] = {}
    for s in slices:
        by_ports.setdefault(ports_key(s), []).append(s)
    spare = [s for ports, ss in by_ports.items() if ports not in groups for s in ss]  # reusable for new ports
    plan: list[tuple[dict | None, Ports, list[dict]]] = []
    for ports, endpoints in groups.items():
        plan += _pack(by_ports.get(ports, []), ports, endpoints)
    plan = _reuse(plan, spare)
    if not any(endpoints for _, _, endpoints in plan):
        plan = [(slices[0] if slices else None, (), [])]  # the placeholder of a Service without endpoints
    _apply(twin, svc, slices, plan)


def ports_key(s: dict) -> Ports:
    """Return the (name, port, protocol) triples a slice serves."""
    return tuple((p.get("name", ""), p.get("port"), p.get("protocol", "TCP")) for p in s.get("ports") or [])


def _key(endpoint: dict) -> str:
    return endpoint["targetRef"]["uid"]


def _pack(slices: list[dict], ports: Ports, endpoints: list[dict]) -> list[tuple[dict | None, Ports, list[dict]]]:
    """Keep endpoints in the slice that holds them, put new ones where there is room, then in new slices."""
    desired = {_key(e): e for e in endpoints}
    kept = [[desired.pop(_key(e)) for e in s.get("endpoints") or [] if _key(e) in desired] for s in slices]
    fresh = list(desired.values())
    for group in kept:
        room = MAX_ENDPOINTS_PER_SLICE - len(group)
        group += fresh[:room]
        fresh = fresh[room:]
    plan = [(s, ports, group) for s, group in zip(slices, kept)]
    chunks = range(0, len(fresh), MAX_ENDPOINTS_PER_SLICE)
    return plan + [(None, ports, fresh[i:i + MAX_ENDPOINTS_PER_SLICE]) for i in chunks]


def _reuse(plan: list, spare: list[dict]) -> list:
    """Let slices whose ports no endpoint serves any more take the new slices' place (update, not create)."""
    spare = list(spare)
    return [(spare.pop(0) if s is None and spare else s, ports, group) for s, ports, group in plan]


def _apply(twin, svc: dict, slices: list[dict], plan: list) -> None:
    """Write the plan: update slices whose body changed, create new ones, delete the ones left out."""
    placeholder = len(plan) == 1 and not plan[0][2]
    used = set()
    for s, ports, group in plan:
        if group or placeholder:
            body = slice_body(ports, group)
            write_slice(twin, svc, s, body)
            used.add(id(s))
    for s in slices:
        if id(s) not in used:
            twin.store.delete(twin.resource("endpointslices"), s["metadata"]["namespace"], s["metadata"]["name"])


def slice_body(ports: Ports, group: list[dict]) -> dict:
    """Return a slice's addressType, endpoints (sorted by IP) and ports; ports carry a name, "" when unnamed."""
    endpoints = sorted(group, key=lambda e: e["addresses"][0])
    return {"addressType": "IPv4", "endpoints": endpoints or None,
            "ports": [{"name": n, "port": p, "protocol": proto} for n, p, proto in ports] or None}


def write_slice(twin, svc: dict, existing: dict | None, body: dict) -> str:
    """Create a slice, or update one whose body differs; return its name."""
    if existing is not None:
        if any(existing.get(k) != v for k, v in body.items()):
            existing.update(body)
            twin.update("endpointslices", existing)
        return existing["metadata"]["name"]
    ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
    labels = dict(svc["metadata"].get("labels") or {})
    labels.update({SERVICE_NAME: name, MANAGED_BY: CONTROLLER_NAME})
    obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
           "metadata": {"name": f"{name}-{twin.ids.suffix()}", "generateName": f"{name}-", "namespace": ns,
                        "labels": labels, "ownerReferences": [controller_ref(svc)]}, **body}
    twin.store.create(twin.resource("endpointslices"), obj)
    return obj["metadata"]["name"]
