"""Table rows for service networking and configuration objects (Kubernetes 1.32 printers.go formulas).

Services, Endpoints, EndpointSlices, ConfigMaps, Secrets, ServiceAccounts and (Cluster)RoleBindings.
"""

from __future__ import annotations

from aoi.twin.api.printers import age, format_labels, name


def _external_ip(spec: dict, status: dict) -> str:
    kind, external = spec.get("type") or "ClusterIP", spec.get("externalIPs") or []
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "ExternalName":
        return spec.get("externalName", "")
    if kind != "LoadBalancer":
        return "<unknown>"
    ingress = (status.get("loadBalancer") or {}).get("ingress") or []
    balancers = sorted({i.get("ip") or i.get("hostname") for i in ingress} - {None, ""})
    return ",".join(balancers + external) or "<pending>"  # the apiserver prints wide, so no 16-char clipping


def _port_text(port: dict) -> str:
    protocol = port.get("protocol") or "TCP"
    if port.get("nodePort"):
        return f"{port.get('port')}:{port['nodePort']}/{protocol}"
    return f"{port.get('port')}/{protocol}"


def service_cells(obj: dict, now: float) -> list:
    """Return Name, Type, Cluster-IP, External-IP, Port(s), Age, Selector."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    ports = ",".join(_port_text(p) for p in spec.get("ports") or []) or "<none>"
    return [name(obj), spec.get("type") or "ClusterIP", cluster_ips[0] if cluster_ips else "<none>",
            _external_ip(spec, status), ports, age(obj, now), format_labels(spec.get("selector"))]


def _host_port(ip: str, port: object) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"  # net.JoinHostPort brackets IPv6


def _more(shown: list[str], count: int, limit: int = 3) -> str:
    text = ",".join(shown[:limit])
    return f"{text} + {count - limit} more..." if count > limit else text


def endpoints_text(obj: dict) -> str:
    """Format an Endpoints object's addresses as `ip:port,...`, at most three then ` + N more...`.

    Example:
        >>> endpoints_text({"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]})
        '10.0.0.1:80'
    """
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    shown, count = [], 0
    for subset in subsets:
        ips = [a.get("ip", "") for a in subset.get("addresses") or []]
        ports = subset.get("ports") or []
        pairs = ips if not ports else [_host_port(ip, p.get("port")) for p in ports for ip in ips]
        count += len(pairs)
        shown += pairs[: max(0, 3 - len(shown))]
    return _more(shown, count)


def endpoints_cells(obj: dict, now: float) -> list:
    """Return Name, Endpoints, Age."""
    return [name(obj), endpoints_text(obj), age(obj, now)]


def endpointslice_cells(obj: dict, now: float) -> list:
    """Return Name, AddressType, Ports, Endpoints, Age."""
    ports = [str(p["port"]) if p.get("port") is not None else p.get("name") or "*" for p in obj.get("ports") or []]
    addresses = [a for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    return [name(obj), obj.get("addressType", ""), _more(ports, len(ports)) or "<unset>",
            _more(addresses, len(addresses)) or "<unset>", age(obj, now)]


def configmap_cells(obj: dict, now: float) -> list:
    """Return Name, Data, Age."""
    return [name(obj), len(obj.get("data") or {}) + len(obj.get("binaryData") or {}), age(obj, now)]


def secret_cells(obj: dict, now: float) -> list:
    """Return Name, Type, Data, Age; stringData keys count as data, as after the apiserver's conversion."""
    keys = set(obj.get("data") or {}) | set(obj.get("stringData") or {})
    return [name(obj), obj.get("type") or "Opaque", len(keys), age(obj, now)]


def serviceaccount_cells(obj: dict, now: float) -> list:
    """Return Name, Secrets, Age."""
    return [name(obj), len(obj.get("secrets") or []), age(obj, now)]


def rolebinding_cells(obj: dict, now: float) -> list:
    """Return Name, Role, Age, Users, Groups, ServiceAccounts (also for ClusterRoleBindings)."""
    ref = obj.get("roleRef") or {}
    users, groups, accounts = [], [], []
    for subject in obj.get("subjects") or []:
        kind, who = subject.get("kind"), subject.get("name", "")
        if kind == "ServiceAccount":
            accounts.append(f"{subject.get('namespace', '')}/{who}")
        elif kind in ("User", "Group"):
            (users if kind == "User" else groups).append(who)
    return [name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", age(obj, now),
            ", ".join(users), ", ".join(groups), ", ".join(accounts)]
