"""The environment the kubelet gives a container: env, envFrom, downward API and service links."""

from __future__ import annotations

import re

from aoi.twin.kubelet.files import DEFAULT_PATH, Lookup, container_spec, fetch, pod_field, resource_field

_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")


def expand_refs(value: str, env: dict[str, str]) -> str:
    """Expand $(VAR) references as the kubelet does: unknown ones stay, $$ escapes.

    Example:
        >>> expand_refs("$(HOST):$(PORT)/$$(X)", {"HOST": "db"})
        'db:$(PORT)/$(X)'
    """
    def repl(m: re.Match) -> str:
        return "$" if m[0] == "$$" else env.get(m[1], m[0])
    return re.sub(r"\$\$|\$\(([A-Za-z_][-._A-Za-z0-9]*)\)", repl, value)


def _service_vars(svc: dict) -> dict[str, str]:
    name = (svc.get("metadata") or {}).get("name", "").upper().replace("-", "_")
    spec = svc.get("spec") or {}
    ip, ports = spec.get("clusterIP", ""), spec.get("ports") or []
    out = {f"{name}_SERVICE_HOST": ip}
    for i, p in enumerate(ports):
        if i == 0:
            out[f"{name}_SERVICE_PORT"] = str(p.get("port"))
        if p.get("name"):
            out[f"{name}_SERVICE_PORT_{p['name'].upper().replace('-', '_')}"] = str(p.get("port"))
    for i, p in enumerate(ports):
        proto, port = (p.get("protocol") or "TCP"), str(p.get("port"))
        url, pre = f"{proto.lower()}://{ip}:{port}", f"{name}_PORT_{port}_{proto.upper()}"
        if i == 0:
            out[f"{name}_PORT"] = url
        out |= {pre: url, f"{pre}_PROTO": proto.lower(), f"{pre}_PORT": port, f"{pre}_ADDR": ip}
    return out


def service_env(pod: dict, services: list[dict]) -> dict[str, str]:
    """Return the docker-link variables for the pod's services (always those of default/kubernetes)."""
    ns = (pod.get("metadata") or {}).get("namespace", "default")
    links = (pod.get("spec") or {}).get("enableServiceLinks", True) is not False
    master = {"metadata": {"name": "kubernetes", "namespace": "default"},
              "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]}}
    chosen = {}
    for svc in services:
        meta, ip = svc.get("metadata") or {}, (svc.get("spec") or {}).get("clusterIP")
        if meta.get("namespace", "default") == "default" and meta.get("name") == "kubernetes":
            master = svc
        elif links and meta.get("namespace", "default") == ns and ip and ip != "None":
            chosen[meta.get("name", "")] = svc
    chosen["kubernetes"] = master
    return {k: v for name in sorted(chosen) for k, v in _service_vars(chosen[name]).items()}


def _env_value(var: dict, pod: dict, c: dict, lookup: Lookup, env: dict[str, str]) -> str | None:
    if "value" in var or "valueFrom" not in var:
        return expand_refs(str(var.get("value", "")), env)
    src, ns = var["valueFrom"], (pod.get("metadata") or {}).get("namespace", "default")
    if "fieldRef" in src:
        return pod_field(pod, src["fieldRef"].get("fieldPath", ""))
    if "resourceFieldRef" in src:
        return resource_field(pod, c, src["resourceFieldRef"])
    for kind, key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
        if key in src:
            value = fetch(lookup, kind, ns, src[key].get("name", "")).get(src[key].get("key"))
            return None if value is None else value.decode("utf-8", "replace")
    return None


def build_env(pod: dict, container: str, lookup: Lookup, services: list[dict]) -> dict[str, str]:
    """Return the container's environment as the kubelet makes it (PATH, HOSTNAME, service links, env, HOME).

    Example:
        >>> pod = {"metadata": {"name": "web-0"}, "spec": {"containers": [{"name": "web", "env": [
        ...     {"name": "A", "value": "1"}, {"name": "B", "value": "$(A)2"}]}]}}
        >>> build_env(pod, "web", lambda kind, ns, name: None, [])["B"]
        '12'
    """
    c, ns = container_spec(pod, container), (pod.get("metadata") or {}).get("namespace", "default")
    env = {"PATH": DEFAULT_PATH, "HOSTNAME": (pod.get("spec") or {}).get("hostname")
           or (pod.get("metadata") or {}).get("name", "")}
    env |= service_env(pod, services)
    for source in c.get("envFrom") or []:
        kind = "ConfigMap" if "configMapRef" in source else "Secret"
        ref = source.get("configMapRef") or source.get("secretRef") or {}
        for key, value in fetch(lookup, kind, ns, ref.get("name", "")).items():
            if _ENV_NAME.fullmatch(source.get("prefix", "") + key):
                env[source.get("prefix", "") + key] = value.decode("utf-8", "replace")
    for var in c.get("env") or []:
        value = _env_value(var, pod, c, lookup, env)
        if value is not None:
            env[var["name"]] = value
    env.setdefault("HOME", "/root")
    return env
