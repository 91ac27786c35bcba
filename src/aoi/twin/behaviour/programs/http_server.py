"""An HTTP request from a pod, end to end: URL, connection, what listens there, and the answer (or the failure)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from aoi.twin.behaviour.programs import http_infra, http_routes
from aoi.twin.behaviour.programs.common import Dial, behaviour_of, component_of_service, dial, via_service
from aoi.twin.behaviour.programs.http_routes import Request, Response, text

MONGO_HTTP = "It looks like you are trying to access MongoDB over HTTP on the native driver port.\n"
DEFAULT_CONNECT = 130.0  # the kernel gives up a SYN after about two minutes
PROGRAM_HANDLERS = {"jaeger": http_infra.jaeger, "prometheus": http_infra.prometheus, "consul": http_infra.consul,
                    "flagd": http_infra.flagd, "flagd-ui": http_infra.flagd, "nginx-thrift": http_routes.nginx_thrift,
                    "media-frontend": http_routes.nginx_thrift, "hotel-frontend": http_routes.hotel_frontend,
                    "frontend": http_routes.demo_frontend}
TRANSPORT = {"memcached": "http09", "redis-server": "empty", "valkey-server": "empty", "kafka": "empty"}
PROTOCOLS = {"grpc": "http09", "thrift": "empty", "kafka": "empty", "mongodb": "mongo", "redis": "empty",
             "memcached": "http09", "jaeger": "empty", "other": "empty"}


@dataclass
class Exchange:
    """The outcome of one request: an HTTP response, or why there is none."""

    url: str
    host: str
    port: int
    ip: str = ""
    error: str = ""  # "" | bad-url | unsupported | unresolved | refused | timeout | slow | http09 | empty | tls | cert
    response: Response | None = None
    connect: float = 0.0  # seconds until connected
    total: float = 0.0
    version: str = "HTTP/1.1"
    now: float = 0.0

    def headers(self) -> list[str]:
        """Return the status line and headers as the server sent them."""
        r = self.response
        date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(self.now))
        lines = [f"{self.version} {r.status} {r.reason}"] + [f"{k}: {v}" for k, v in r.headers]
        return lines + [f"Content-Type: {r.content_type}", f"Date: {date}", f"Content-Length: {len(r.body.encode())}"]


def parse_url(url: str) -> tuple[str, str, int, str, str]:
    """Split a URL into (scheme, host, port, path, query); a missing scheme means http."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    return parts.scheme, parts.hostname or "", port, parts.path or "/", parts.query


def fetch(twin, ctx, url: str, method: str = "GET", headers: dict | None = None, body: str = "",
          insecure: bool = False, connect_timeout: float | None = None, max_time: float | None = None) -> Exchange:
    """Send one request from the program's pod and return what came back."""
    try:
        scheme, host, port, path, query = parse_url(url)
    except ValueError:
        return Exchange(url, "", 0, error="bad-url")
    ex = Exchange(url, host, port, now=ctx.now)
    if scheme not in ("http", "https"):
        ex.error = f"unsupported:{scheme}"
        return ex
    if not host:
        ex.error = "bad-url"
        return ex
    reach = dial(twin, ctx, host, port)
    ex.ip, ex.connect = reach.ip, reach.delay
    limit = min(x for x in (connect_timeout, max_time, DEFAULT_CONNECT) if x is not None)
    if not reach.ok or ex.connect > limit:
        ex.error = "timeout" if reach.error == "timeout" or reach.ok else reach.error
        ex.connect = limit if ex.error == "timeout" else 0.0
        return ex
    _exchange(twin, ctx, ex, reach, scheme, method, path, query, headers or {}, body, insecure)
    ex.total = ex.connect + 2 * reach.delay + ex.total + 0.0012
    if max_time is not None and ex.total > max_time and not ex.error:
        ex.error, ex.total = "slow", max_time
    return ex


def _exchange(twin, ctx, ex: Exchange, reach: Dial, scheme, method, path, query, headers, body, insecure) -> None:
    """Fill in the answer of whatever listens behind the connection."""
    kind, handler, app, component = identify(twin, reach)
    if kind == "api":
        if scheme == "http":
            ex.response = text(400, "Client sent an HTTP request to an HTTPS server.\n")
            return
        if not insecure:
            ex.error = "cert"
            return
    elif scheme == "https":
        ex.error = "tls"
        return
    if kind == "mongo":
        ex.version, ex.response = "HTTP/1.0", Response(200, MONGO_HTTP, "text/plain", [("Connection", "close")])
        return
    if kind != "http" and kind != "api":
        ex.error = kind
        return
    lowered = {k.lower(): v for k, v in headers.items()} | {":port": str(reach.target_port),
                                                           ":namespace": ctx.pod["metadata"]["namespace"]}
    req = Request(twin, reach.pod, app, component, method, path, query, body, lowered, ctx.now)
    ex.response = handler(req, lambda op, pod=reach.pod, name=component: _serve(twin, ex, app, pod, name, op))


def identify(twin, reach: Dial):
    """Return (kind, handler, app, component) of the server behind a connection."""
    app, component, spec = component_of_service(twin, reach.service)
    if reach.service is not None and reach.pod is None:
        return "api", http_infra.api_server, None, "kubernetes"
    behaviour = behaviour_of(twin)
    if not component:
        component = behaviour.component_of(reach.pod) or ""
        app = behaviour.apps.get(reach.pod["metadata"]["namespace"])
        spec = (app.components.get(component) or {}) if app else {}
    program = _program(behaviour, reach.pod, reach.target_port)
    if program == "mongod":
        return "mongo", None, app, component
    if program in TRANSPORT:
        return TRANSPORT[program], None, app, component
    if program == "frontend-proxy" or spec.get("protocol") == "envoy":
        return "http", envoy, app, component
    handler = PROGRAM_HANDLERS.get(program) or (http_infra.simple if spec.get("protocol") == "http" else None)
    if handler is None:
        return PROTOCOLS.get(spec.get("protocol", "other"), "empty"), None, app, component
    return "http", handler, app, component


def _program(behaviour, pod: dict, port: int) -> str:
    """Return the program of the container serving a port (its main process otherwise)."""
    for c in pod["spec"]["containers"]:
        proc = behaviour.process(pod, c["name"])
        declared = {p.get("containerPort") for p in c.get("ports") or []}
        if proc is not None and (port in declared or proc.port == port):
            return proc.program
    first = behaviour.process(pod, pod["spec"]["containers"][0]["name"])
    return first.program if first else ""


def _serve(twin, ex: Exchange, app, pod: dict, component: str, operation: str) -> str:
    """Send the request through the app's call graph; return why it failed ("" when it worked)."""
    if app is None or f"{component}:{operation}" not in (app.behaviour.get("operations") or {}):
        return ""
    sample = (app.behaviour.get("tracing") or {}).get("sample", 1.0)
    outcome = behaviour_of(twin).engine.request(app, pod, component, operation, ex.now, sample)
    ex.total += outcome.latency
    return "" if outcome.ok else (outcome.detail or "Internal Server Error")


def envoy(req: Request, serve) -> Response:
    """The demo's frontend-proxy: route by path prefix to an upstream, as its Envoy config does."""
    routes = (req.app.components.get(req.component) or {}).get("routes") or {"/": "frontend"}
    prefix = max((p for p in routes if req.path.startswith(p) or req.path + "/" == p), key=len, default="/")
    upstream = routes[prefix]
    svc = req.twin.get("services", req.pod["metadata"]["namespace"], upstream)
    port = (req.app.components.get(upstream) or {}).get("port", 8080)
    reach = via_service(req.twin, svc, upstream, port) if svc else Dial(False, "refused", upstream, "", port)
    envoy_headers = [("server", "envoy")]
    if not reach.ok:
        reason = "no healthy upstream" if reach.pod is None else (
            "upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, "
            "transport failure reason: delayed connect error: 111")
        return Response(503, reason, "text/plain", envoy_headers)
    kind, handler, app, component = identify(req.twin, reach)
    if kind != "http":
        return Response(503, "upstream connect error or disconnect/reset before headers. reset reason: protocol "
                             "error", "text/plain", envoy_headers)
    ops = [op.split(":", 1)[1] for op in (req.app.behaviour.get("operations") or {})
           if op.startswith(f"{req.component}:ingress {req.method} ")]
    ingress = max((op for op in ops if req.path.startswith(op.split(" ", 2)[2])), key=len, default=None)
    failure = serve(ingress) if ingress else None
    inner = Request(req.twin, reach.pod, app, component, req.method, req.path, req.query, req.body, req.headers,
                    req.now)
    upstream_serve = (lambda op: failure) if ingress else (lambda op: serve(op, reach.pod, component))
    response = handler(inner, upstream_serve)
    response.headers = envoy_headers + [("x-envoy-upstream-service-time", "3")] + response.headers
    return response
