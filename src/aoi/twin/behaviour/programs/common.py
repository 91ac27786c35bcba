"""What the client programs share: the behaviour model, pod addresses, and dialling host:port as a pod does."""

from __future__ import annotations

from dataclasses import dataclass

from aoi.twin.behaviour.network import connect
from aoi.twin.behaviour.programs.dns import resolve
from aoi.twin.core.selectors import map_matches

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "ip6-localhost")


@dataclass
class Dial:
    """The outcome of a client opening host:port: what it reached, or why not."""

    ok: bool
    error: str  # "" | unresolved | refused | timeout
    host: str  # as the user wrote it
    ip: str  # the address dialled ("" when unresolved)
    port: int
    pod: dict | None = None  # the pod that answered (or refused)
    service: dict | None = None
    target_port: int = 0  # the pod port the connection lands on
    delay: float = 0.0  # network chaos latency

    def seen_as(self, ip: str, service: dict | None = None) -> Dial:
        """Return the dial with the address the client saw (and the Service it went through)."""
        self.ip, self.service = ip, service or self.service
        return self






def behaviour_of(twin):
    """Return the behaviour model attached to the twin."""
    return twin.extensions.behaviour


def namespace(ctx) -> str:
    """Return the namespace of the pod a program runs in."""
    return ctx.pod["metadata"].get("namespace", "default")


def pod_ip(pod: dict | None) -> str:
    """Return a pod's IP ("" before it has one)."""
    return ((pod or {}).get("status") or {}).get("podIP", "")


def container_running(twin, pod: dict, container: str) -> bool:
    """Tell whether the kubelet has the container running."""
    kubelet = twin.controllers.get("kubelet")
    run = kubelet.runs.get((pod["metadata"]["namespace"], pod["metadata"]["name"])) if kubelet else None
    state = run.containers.get(container) if run else None
    return state is not None and state.phase == "running"


def started_at(twin, pod: dict, container: str) -> float | None:
    """Return when the container last started."""
    kubelet = twin.controllers.get("kubelet")
    run = kubelet.runs.get((pod["metadata"]["namespace"], pod["metadata"]["name"])) if kubelet else None
    state = run.containers.get(container) if run else None
    return state.started_at if state is not None else None


def serving_ports(twin, pod: dict) -> set[int]:
    """Return the TCP ports a pod accepts connections on.

    The behaviour model knows each process's main port; a serving process whose code is the pod's own component
    (Jaeger's query port 16686 next to its agent port, Consul's 8300/8500) also serves its other declared ports.
    """
    behaviour = behaviour_of(twin)
    ports = set(behaviour.listening_ports(pod))
    labels = pod["metadata"].get("labels")
    own = {behaviour.component_of(pod)} | {s["metadata"]["name"] for s in twin.list("services", pod["metadata"][
        "namespace"]) if s["spec"].get("selector") and map_matches(s["spec"]["selector"], labels)}
    for c in pod["spec"]["containers"]:
        proc = behaviour.process(pod, c["name"])
        if proc and proc.listening and proc.port in ports and proc.component in own and \
                container_running(twin, pod, c["name"]):
            ports.update(p["containerPort"] for p in c.get("ports") or [] if p.get("protocol", "TCP") == "TCP")
    return ports


def find_pod_by_ip(twin, ip: str) -> dict | None:
    """Return the pod that has an IP."""
    return next((p for p in twin.list("pods") if pod_ip(p) == ip), None)


def dial_pod(twin, pod: dict, host: str, port: int) -> Dial:
    """Connect straight to a pod's IP (no Service in between)."""
    ip = pod_ip(pod)
    if port not in serving_ports(twin, pod):
        return Dial(False, "refused", host, ip, port, pod, target_port=port)
    lost, delay = behaviour_of(twin).chaos_effect(pod, 0)
    return Dial(not lost, "timeout" if lost else "", host, ip, port, pod, target_port=port, delay=delay)


def dial(twin, ctx, host: str, port: int) -> Dial:
    """Open host:port from the program's pod: itself, a pod IP, or a Service name (via `network.connect`)."""
    if host in LOCAL_NAMES or host in (pod_ip(ctx.pod), ctx.hostname):
        return dial_pod(twin, ctx.pod, host, port).seen_as("127.0.0.1" if host in LOCAL_NAMES else pod_ip(ctx.pod))
    answer = resolve(twin, ctx, host)
    if answer is None or not answer.addresses:
        return Dial(False, "unresolved", host, "", port)
    if answer.service is None or answer.service["spec"].get("clusterIP") in (None, "None"):
        pod = find_pod_by_ip(twin, answer.addresses[0])
        return dial_pod(twin, pod, host, port) if pod else Dial(False, "timeout", host, answer.addresses[0], port)
    return via_service(twin, answer.service, host, port)


def via_service(twin, svc: dict, host: str, port: int) -> Dial:
    """Connect through a Service's ClusterIP as kube-proxy routes it (the API server answers for `kubernetes`)."""
    meta, ip = svc["metadata"], svc["spec"].get("clusterIP", "")
    if (meta["namespace"], meta["name"]) == ("default", "kubernetes"):
        ok = any(p.get("port") == port for p in svc["spec"].get("ports") or [])
        return Dial(ok, "" if ok else "timeout", host, ip, port, None, svc, 6443)
    reach = connect(twin, behaviour_of(twin), meta["namespace"], meta["name"], port)
    if reach.error == "refused" and reach.pod is not None and reach.port in serving_ports(twin, reach.pod):
        return dial_pod(twin, reach.pod, host, reach.port).seen_as(ip, svc)
    return Dial(reach.ok, reach.error, host, ip, port, reach.pod, reach.service, reach.port, reach.delay)


def component_of_service(twin, svc: dict | None) -> tuple[object, str, dict] | tuple[None, str, dict]:
    """Return (app, component name, component spec) for the Service a client reached."""
    if svc is None:
        return None, "", {}
    name, ns = svc["metadata"]["name"], svc["metadata"]["namespace"]
    for app in behaviour_of(twin).by_name.values():
        if name in app.components and app.namespace in (ns, None):
            return app, name, app.components[name]
    return None, name, {}


def split_hostport(text: str, default_port: int) -> tuple[str, int]:
    """Split 'host:port' (or '[v6]:port') into its parts, with a default port.

    Example:
        >>> split_hostport("redis:6380", 6379), split_hostport("redis", 6379)
        (('redis', 6380), ('redis', 6379))
    """
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else default_port
    host, sep, port = text.rpartition(":")
    if sep and port.isdigit() and ":" not in host:
        return host, int(port)
    return text, default_port
