"""Table rows for network and scheduling policy objects (Kubernetes 1.32 printers.go formulas).

NetworkPolicies, Ingresses, IngressClasses, PodDisruptionBudgets and PriorityClasses.
"""

from __future__ import annotations

from aoi.twin.api.printers import AGE, NAME, Printer, age, column, format_selector, name


def networkpolicy_cells(obj: dict, now: float) -> list:
    """Return the cells Name, Pod-Selector, Age."""
    return [name(obj), format_selector((obj.get("spec") or {}).get("podSelector")), age(obj, now)]


def _hosts(rules: list[dict]) -> str:
    """Return the Hosts cell: at most three hosts, then `+ N more...`; `*` when no rule names one."""
    hosts = [r["host"] for r in rules if r.get("host")]
    if not hosts:
        return "*"
    shown = ",".join(hosts[:3])
    return shown + (f" + {len(hosts) - 3} more..." if len(hosts) > 3 else "")


def ingress_cells(obj: dict, now: float) -> list:
    """Return the cells Name, Class, Hosts, Address, Ports, Age."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ingress = (status.get("loadBalancer") or {}).get("ingress") or []
    address = ",".join(i.get("ip") or i.get("hostname") or "" for i in ingress)
    ports = "80, 443" if spec.get("tls") else "80"
    return [name(obj), spec.get("ingressClassName") or "<none>", _hosts(spec.get("rules") or []), address, ports,
            age(obj, now)]


def ingressclass_cells(obj: dict, now: float) -> list:
    """Return the cells Name, Controller, Parameters, Age."""
    spec = obj.get("spec") or {}
    params = spec.get("parameters")
    shown = "<none>" if not params else f"{params.get('kind', '')}/{params.get('name', '')}"
    return [name(obj), spec.get("controller", ""), shown, age(obj, now)]


def pdb_cells(obj: dict, now: float) -> list:
    """Return the cells Name, Min Available, Max Unavailable, Allowed Disruptions, Age."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    text = lambda v: "N/A" if v is None else str(v)  # noqa: E731
    return [name(obj), text(spec.get("minAvailable")), text(spec.get("maxUnavailable")),
            int(status.get("disruptionsAllowed") or 0), age(obj, now)]


def priorityclass_cells(obj: dict, now: float) -> list:
    """Return the cells Name, Value, Global-Default, Age, Preemption-Policy."""
    return [name(obj), int(obj.get("value") or 0), bool(obj.get("globalDefault")), age(obj, now),
            obj.get("preemptionPolicy") or "PreemptLowerPriority"]


PRINTERS = {
    "networkpolicies.networking.k8s.io": Printer((
        NAME, column("Pod-Selector", "The pods the policy applies to."), AGE), networkpolicy_cells),
    "ingresses.networking.k8s.io": Printer((
        NAME, column("Class", "The ingress class."), column("Hosts", "Hosts the rules match."),
        column("Address", "Addresses of the load balancer."), column("Ports", "Ports served."), AGE), ingress_cells),
    "ingressclasses.networking.k8s.io": Printer((
        NAME, column("Controller", "The controller that implements the class."),
        column("Parameters", "The class's parameters object."), AGE), ingressclass_cells),
    "poddisruptionbudgets.policy": Printer((
        NAME, column("Min Available", "Pods that must stay available."),
        column("Max Unavailable", "Pods that may be unavailable."),
        column("Allowed Disruptions", "Evictions allowed now.", "integer"), AGE), pdb_cells),
    "priorityclasses.scheduling.k8s.io": Printer((
        NAME, column("Value", "The priority of pods of this class.", "integer"),
        column("Global-Default", "Whether pods without a class get this one.", "boolean"), AGE,
        column("Preemption-Policy", "Whether pods of this class preempt lower ones.")), priorityclass_cells),
}
