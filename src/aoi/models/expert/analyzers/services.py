"""Services: targetPorts that no selected pod listens on, and Services without endpoints."""

from __future__ import annotations

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import listed, mapping, rows


def port_mismatches(services: str, pods: str) -> list[Evidence]:
    """Compare each Service's targetPorts with the container ports of the pods its selector picks.

    `services` is `kubectl get svc -o custom-columns=NAME,SELECTOR,PORT,TARGET`, `pods` is
    `kubectl get pods -o custom-columns=NAME,LABELS,PORTS` (declared containerPorts).

    Example:
        >>> svc = "NAME   SELECTOR        PORT   TARGET\\napi    map[app:api]    80     9999\\n"
        >>> pod = "NAME        LABELS          PORTS\\napi-7d-x1y2z map[app:api]    8080\\n"
        >>> [(e.kind, e.component, e.facts["expected"]) for e in port_mismatches(svc, pod)]
        [('port_mismatch', 'api', 8080)]
    """
    pod_rows = [(mapping(r.get("LABELS", "")), [int(p) for p in listed(r.get("PORTS", "")) if p.isdigit()])
                for r in rows(pods)]
    found = []
    for svc in rows(services):
        selector = mapping(svc.get("SELECTOR", ""))
        if not selector:
            continue
        declared = {p for labels, ports in pod_rows if selector.items() <= labels.items() for p in ports}
        found += _service(svc, declared)
    return found


def _service(svc: dict, declared: set[int]) -> list[Evidence]:
    """Return the mismatched ports of one Service."""
    if not declared:
        return []
    ports, targets = listed(svc.get("PORT", "")), listed(svc.get("TARGET", ""))
    found = []
    for index, (port, target) in enumerate(zip(ports, targets)):
        if not target.isdigit() or int(target) in declared:
            continue
        expected = int(port) if port.isdigit() and int(port) in declared else min(declared)
        name = svc.get("NAME", "")
        found.append(Evidence("port_mismatch", name, f"service {name} port {port} targets {target}, but its pods "
                              f"listen on {sorted(declared)}", {"index": index, "port": port, "target": int(target),
                                                                 "expected": expected}))
    return found


def without_endpoints(table: str) -> list[Evidence]:
    """Return Services whose Endpoints list no address (`kubectl get endpoints`).

    Example:
        >>> [e.component for e in without_endpoints("NAME   ENDPOINTS   AGE\\napi    <none>      5m\\n")]
        ['api']
    """
    return [Evidence("no_endpoints", r["NAME"], f"service {r['NAME']} has no endpoints", {})
            for r in rows(table) if r.get("ENDPOINTS", "") in ("<none>", "")]
