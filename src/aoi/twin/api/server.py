"""The twin's HTTPS API server: one thread per connection, Kubernetes routing, Status errors."""

from __future__ import annotations

import select
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson

from aoi.twin.api import authz, discovery, handlers, pods, routes
from aoi.twin.api.handlers import Call, Reply, ok
from aoi.twin.api.watch import pull_for_poll, serve_watch
from aoi.twin.errors import ApiError

VERBS = {"list": handlers.list_objects, "get": handlers.get_object, "create": handlers.create_object,
         "update": handlers.update_object, "patch": handlers.patch_object, "delete": handlers.delete_object,
         "deletecollection": handlers.delete_object}


def non_resource(path: str, accept: str) -> Reply | None:
    """Answer version, discovery and OpenAPI paths; None when the path is not one of them."""
    segments, _ = routes.split(path)
    joined = "/".join(segments)
    aggregated = "as=APIGroupDiscoveryList" in accept
    if joined == "version":
        return ok(discovery.VERSION)
    if joined in ("api", "apis"):
        core = joined == "api"
        if aggregated:
            return Reply(200, orjson.dumps(discovery.aggregated(core)), discovery.AGGREGATED)
        return ok(discovery.legacy_root(core))
    if joined in ("healthz", "livez", "readyz"):
        return Reply(200, b"ok", "text/plain")
    if len(segments) in (2, 3) and segments[0] in ("api", "apis"):
        group, version = ("", segments[1]) if segments[0] == "api" else (segments[1], segments[2] if len(segments) > 2 else "")
        doc = discovery.resource_list(group, version)
        return ok(doc) if doc else None
    if joined == "openapi/v3":
        return ok(discovery.openapi_root())
    if segments[:2] == ["openapi", "v3"] and len(segments) > 2:
        rest = segments[2:]
        group, version = ("", rest[1]) if rest[0] == "api" and len(rest) == 2 else (
            (rest[1], rest[2]) if rest[0] == "apis" and len(rest) == 3 else (None, None))
        doc = discovery.openapi_document(group, version) if group is not None else None
        return ok(doc) if doc else None
    return None


class Handler(BaseHTTPRequestHandler):
    """One Kubernetes API connection."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one response, one segment: avoids the 40 ms delayed-ACK stall

    def setup(self):
        """Do the TLS handshake in this connection's own thread, not in the accept loop."""
        self.request = self.server.tls.wrap_socket(self.request, server_side=True)
        super().setup()

    def handle(self):
        """Serve the connection; a client that drops mid-handshake is not an error."""
        try:
            super().handle()
        except (ssl.SSLError, ConnectionResetError, BrokenPipeError, TimeoutError):
            self.close_connection = True

    def log_message(self, format, *args):  # noqa: A002 - silence the stdlib access log
        """Keep quiet; the twin is not a web server for humans."""

    # --- HTTP methods ---
    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    # --- dispatch ---
    def dispatch(self, method: str) -> None:
        """Authenticate, route, authorize and answer one request."""
        twin = self.server.twin
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            user = authz.authenticate(twin.tokens, headers.get("authorization"))
            route = routes.parse(self.path)
            if route is None:
                reply = non_resource(self.path, headers.get("accept") or "")
                if reply is None:
                    raise ApiError(404, "NotFound", "the server could not find the requested resource")
                return self.send_reply(reply)
            call = Call(method, route, user, headers, body)
            self.authorize(twin, call)
            self.answer(twin, call)
        except ApiError as exc:
            self.send_reply(Reply(exc.code, *exc.body()))
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def authorize(self, twin, call: Call) -> None:
        """Refuse what RBAC does not allow, with the authorizer's message."""
        r = call.route
        verb = routes.verb(call.method, r)
        if r.subresource == "exec":
            verb = "create"
        with twin.lock:
            permitted = authz.allowed(twin, call.user, verb, r.group, r.plural, r.subresource, r.namespace, r.name)
        if not permitted and r.resource.kind not in ("SelfSubjectAccessReview", "SelfSubjectRulesReview",
                                                     "SelfSubjectReview"):
            resource = f"{r.plural}/{r.subresource}" if r.subresource else r.plural
            raise errors_forbidden(call, verb, resource)

    def answer(self, twin, call: Call) -> None:
        """Run the verb's handler (streaming ones write directly)."""
        r = call.route
        verb = routes.verb(call.method, r)
        if r.subresource == "exec":
            return pods.serve_exec(self, twin, call)
        if verb == "watch":
            return serve_watch(self, twin, call)
        pull_for_poll(twin, call)
        with twin.lock:
            if r.group == "metrics.k8s.io":
                reply = pods.metrics(twin, call)
            elif r.subresource == "log":
                reply = pods.pod_logs(twin, call)
            else:
                reply = VERBS[verb](twin, call)
        self.send_reply(reply)

    # --- writing ---
    def send_reply(self, reply: Reply) -> None:
        """Write a whole response in one send."""
        head = (f"HTTP/1.1 {reply.code} {self.responses.get(reply.code, ('',))[0]}\r\n"
                f"Content-Type: {reply.content_type}\r\nContent-Length: {len(reply.body)}\r\n"
                f"Cache-Control: no-cache, private\r\n\r\n")
        self.wfile.write(head.encode() + reply.body)
        self.wfile.flush()

    def start_stream(self, content_type: str) -> None:
        """Begin a chunked response (watch)."""
        # the stream ends by closing the connection, so say so: clients must not reuse it
        self.wfile.write(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n"
                         f"Cache-Control: no-cache, private\r\nConnection: close\r\n\r\n".encode())
        self.wfile.flush()

    def write_chunk(self, data: bytes) -> bool:
        """Write one chunk; return False when the client has gone."""
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
            return False

    def end_stream(self) -> None:
        """Finish a chunked response."""
        self.write_chunk(b"")
        self.close_connection = True

    def connection_alive(self, wait: float = 0.0) -> bool:
        """Tell whether the client is still connected, waiting up to `wait` seconds for it to hang up."""
        try:
            readable, _, _ = select.select([self.connection], [], [], wait)
            if not readable:
                return True
            return bool(self.connection.recv(1, socket.MSG_PEEK))
        except (OSError, ssl.SSLError, ValueError):
            return False

    def upgrade(self, accept: str, protocol: str) -> None:
        """Switch the connection to WebSocket with the chosen channel protocol."""
        self.wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n").encode())
        self.wfile.flush()
        self.close_connection = True

    def send_raw(self, data: bytes) -> None:
        """Write raw bytes on an upgraded connection."""
        self.wfile.write(data)
        self.wfile.flush()


def errors_forbidden(call: Call, verb: str, resource: str) -> ApiError:
    """Build the RBAC denial for a call."""
    from aoi.twin.errors import forbidden

    r = call.route
    return forbidden(call.user.name, verb, r.resource, resource, r.group, r.namespace, r.name)


class TwinServer(ThreadingHTTPServer):
    """Serve one twin over HTTPS on 127.0.0.1."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, twin, tls: ssl.SSLContext, port: int = 0):
        super().__init__(("127.0.0.1", port), Handler)
        self.twin = twin
        self.tls = tls
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Return the https URL clients use."""
        return f"https://127.0.0.1:{self.server_address[1]}"

    def start(self) -> "TwinServer":
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="twin-api", daemon=True)
        self._thread.start()
        return self

    def handle_error(self, request, client_address):
        """Ignore clients that hang up (kubectl often closes watch and exec connections abruptly)."""
        import sys

        if not isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError, TimeoutError, OSError)):
            super().handle_error(request, client_address)

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.shutdown()
        self.server_close()
