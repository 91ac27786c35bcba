"""Pod subresources and metrics: logs, exec over WebSocket, and metrics.k8s.io."""

from __future__ import annotations

from aoi.twin.api import websocket as ws
from aoi.twin.api.handlers import Call, Reply, matcher, ok
from aoi.twin.core import errors, operations
from aoi.twin.core.clock import parse_time, rfc3339, rfc3339_micro
from aoi.twin.core.errors import ApiError


def pick_container(pod: dict, requested: str) -> str:
    """Return the container a request means: the named one, the default annotation, or the only one."""
    containers = [c["name"] for c in pod["spec"]["containers"]]
    inits = [c["name"] for c in pod["spec"].get("initContainers") or []]
    if requested:
        if requested not in containers + inits:
            raise errors.bad_request(f"container {requested} is not valid for pod {pod['metadata']['name']}")
        return requested
    default = (pod["metadata"].get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    if default in containers:
        return default
    if len(containers) == 1:
        return containers[0]
    msg = (f"a container name must be specified for pod {pod['metadata']['name']}, "
           f"choose one of: [{' '.join(containers)}]")
    if inits:
        msg += f" or one of the init containers: [{' '.join(inits)}]"
    raise errors.bad_request(msg)


def _log_lines(twin, pod: dict, container: str, previous: bool) -> list[tuple[float, str]]:
    """Return the (time, line) pairs of the current or previous run of a container."""
    kubelet = twin.controllers["kubelet"]
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
    run = kubelet.runs.get(key)
    state = run.containers.get(container) if run else None
    name = pod["metadata"]["name"]
    if state is None or not state.ever_started:
        reason = state.reason if state else "ContainerCreating"
        if reason in ("ImagePullBackOff", "ErrImagePull"):
            reason = "trying and failing to pull image"
        raise errors.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    instance = state.restarts - 1 if previous else state.restarts
    if previous and state.restarts == 0:
        raise errors.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
    return kubelet.logs.lines(pod["metadata"]["uid"], container, instance, twin.clock.now())


def pod_logs(twin, call: Call) -> Reply:
    """Answer GET pods/NAME/log with plain text, honouring tailLines, sinceSeconds, timestamps, limitBytes."""
    r = call.route
    pod = operations.get(twin, r.resource, r.namespace, r.name)
    container = pick_container(pod, r.arg("container"))
    lines = _log_lines(twin, pod, container, r.flag("previous"))
    since = r.arg("sinceSeconds")
    if since:
        lines = [(t, line) for t, line in lines if t >= twin.clock.now() - int(since)]
    if r.arg("sinceTime"):
        lines = [(t, line) for t, line in lines if t >= (parse_time(r.arg("sinceTime")) or 0)]
    tail = r.arg("tailLines")
    if tail and int(tail) >= 0:
        lines = lines[len(lines) - int(tail):] if int(tail) else []
    stamp = r.flag("timestamps")
    text = "".join(f"{rfc3339_micro(t).replace('Z', '000Z')} {line}\n" if stamp else f"{line}\n" for t, line in lines)
    data = text.encode()
    if r.arg("limitBytes"):
        data = data[:int(r.arg("limitBytes"))]
    return Reply(200, data, "text/plain")


def exec_preflight(twin, call: Call) -> tuple[dict, str, list[str]]:
    """Validate an exec request before the upgrade; return (pod, container, argv)."""
    r = call.route
    pod = operations.get(twin, r.resource, r.namespace, r.name)
    container = pick_container(pod, r.arg("container"))
    argv = r.query.get("command") or []
    if not argv:
        raise errors.bad_request("you must specify at least one command for the container")
    if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        raise errors.bad_request(f"cannot exec into a container in a completed pod; current phase is "
                                 f"{pod['status']['phase']}")
    if not pod["spec"].get("nodeName"):
        raise errors.bad_request(f"pod {r.name} does not have a host assigned")
    run = twin.controllers["kubelet"].runs.get((r.namespace, r.name))
    state = run.containers.get(container) if run else None
    if state is None or state.phase != "running":  # the kubelet's answer, which the API server passes through
        raise errors.PlainError(500, "InternalError", f'container not found ("{container}")')
    return pod, container, argv


def serve_exec(handler, twin, call: Call) -> None:
    """Run a command in a container over WebSocket (v5.channel.k8s.io)."""
    from aoi.twin.kubelet.execution import run_in_container

    protocol = ws.choose_protocol(call.headers.get("sec-websocket-protocol"))
    with twin.lock:
        pod, container, argv = exec_preflight(twin, call)
    if protocol is None or "websocket" not in (call.headers.get("upgrade") or "").lower():
        raise ApiError(400, "BadRequest", "Upgrade request required")
    handler.upgrade(ws.accept_key(call.headers.get("sec-websocket-key", "")), protocol)
    stdin = ws.read_stdin(handler.rfile) if call.route.flag("stdin") else b""
    with twin.lock:
        result = run_in_container(twin, pod, container, argv, stdin)
    frames = []
    if result.stdout:
        frames.append(ws.frame(bytes([ws.STDOUT]) + result.stdout))
    if result.stderr:
        frames.append(ws.frame(bytes([ws.STDERR]) + result.stderr))
    frames.append(ws.frame(bytes([ws.ERROR]) + ws.exit_status(result.exit_code, argv)))
    frames.append(ws.frame(b"\x03\xe8", opcode=0x8))
    handler.send_raw(b"".join(frames))


def _pod_metrics(twin, pod: dict) -> dict | None:
    """Return the PodMetrics of a running pod (None for pods with no running container)."""
    kubelet = twin.controllers["kubelet"]
    run = kubelet.runs.get((pod["metadata"]["namespace"], pod["metadata"]["name"]))
    if run is None:
        return None
    containers = []
    for c in pod["spec"]["containers"]:
        state = run.containers.get(c["name"])
        if state is None or state.phase != "running":
            continue
        cpu, memory = twin.usage.container(pod, c["name"], twin.clock.now())
        containers.append({"name": c["name"], "usage": {"cpu": f"{int(cpu * 1e9)}n", "memory": f"{memory // 1024}Ki"}})
    if not containers:
        return None
    meta = pod["metadata"]
    return {"metadata": {"name": meta["name"], "namespace": meta["namespace"], "labels": meta.get("labels") or {},
                         "creationTimestamp": rfc3339(twin.clock.now())},
            "timestamp": rfc3339(twin.clock.now() - 5), "window": "15.006s", "containers": containers}


def metrics(twin, call: Call) -> Reply:
    """Answer metrics.k8s.io pods and nodes (list or get)."""
    r = call.route
    if r.resource.kind == "NodeMetrics":
        items = [_node_metrics(twin, n) for n in twin.list("nodes") if not r.name or n["metadata"]["name"] == r.name]
    else:
        pods = twin.list("pods", r.namespace or None, matcher(r))
        items = [m for m in (_pod_metrics(twin, p) for p in pods if not r.name or p["metadata"]["name"] == r.name) if m]
    if r.name:
        if not items:
            raise ApiError(404, "NotFound", f'podmetrics.metrics.k8s.io "{r.namespace}/{r.name}" not found'
                           if r.resource.kind == "PodMetrics" else f'nodemetrics.metrics.k8s.io "{r.name}" not found')
        return ok({"kind": r.resource.kind, "apiVersion": "metrics.k8s.io/v1beta1", **items[0]})
    return ok({"kind": f"{r.resource.kind}List", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {},
               "items": items})


def _node_metrics(twin, node: dict) -> dict:
    """Sum the running containers of a node, plus system overhead."""
    name = node["metadata"]["name"]
    cpu, memory = twin.usage.node_overhead(name)
    for pod in twin.list("pods", None, lambda p: p["spec"].get("nodeName") == name):
        m = _pod_metrics(twin, pod)
        for c in (m or {}).get("containers", []):
            cpu += int(c["usage"]["cpu"][:-1]) / 1e9
            memory += int(c["usage"]["memory"][:-2]) * 1024
    return {"metadata": {"name": name, "labels": node["metadata"].get("labels") or {},
                         "creationTimestamp": rfc3339(twin.clock.now())},
            "timestamp": rfc3339(twin.clock.now() - 5), "window": "20.029s",
            "usage": {"cpu": f"{int(cpu * 1e9)}n", "memory": f"{memory // 1024}Ki"}}
