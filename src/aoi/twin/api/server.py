"""The twin's HTTPS API server: one thread per connection, Kubernetes routing, Status errors."""

from __future__ import annotations

import logging
import selectors
import socket
import ssl
import threading
from http.server import ThreadingHTTPServer

from aoi.twin.api import authz, discovery, handlers, health, pods, routes
from aoi.twin.api.connection import READ_TIMEOUT, Connection
from aoi.twin.api.handlers import Call, Reply
from aoi.twin.api.watch import pull_for_poll, serve_watch
from aoi.twin.core import errors
from aoi.twin.core.errors import ApiError
from aoi.twin.core.resources import SUBRESOURCE_VERBS

log = logging.getLogger(__name__)
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")  # the rest answer 405 once authenticated

VERBS = {"list": handlers.list_objects, "get": handlers.get_object, "create": handlers.create_object,
         "update": handlers.update_object, "patch": handlers.patch_object, "delete": handlers.delete_object,
         "deletecollection": handlers.delete_object}


class Handler(Connection):
    """One Kubernetes API connection: authenticate, route, authorize, answer."""

    # --- HTTP methods ---
    def do_GET(self):
        self.dispatch("GET")

    def do_HEAD(self):
        self.dispatch("HEAD")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def do_OPTIONS(self):
        self.dispatch("OPTIONS")

    def __getattr__(self, name: str):
        """Route any other method (TRACE, CONNECT, lower-case or made-up ones) to dispatch, which answers 405."""
        if name.startswith("do_"):
            return lambda: self.dispatch(name[3:])
        raise AttributeError(name)

    # --- dispatch ---
    def dispatch(self, method: str) -> None:
        """Authenticate, read the body, route, authorize and answer one request; every failure gets a Status."""
        self.streaming, self.head_only, self.unread = False, method == "HEAD", False
        body = b""
        try:
            user = self.authenticate()
            body = self.read_body()
            self.route_and_answer(method, user, body)
        except ApiError as exc:
            self.fail(exc)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - a bug must cost one request a Status, never the connection
            self.fail(unexpected(exc, body))
        if self.unread:
            self.linger()

    def authenticate(self) -> authz.User:
        """Return the caller; an unauthenticated request is refused before its body is read."""
        try:
            return authz.authenticate(self.server.twin.tokens, self.headers.get("Authorization"))
        except ApiError:
            self.close_connection = self.unread = self.declares_body()  # an unread body cannot be skipped
            raise

    def route_and_answer(self, method: str, user: authz.User, body: bytes) -> None:
        """Answer a resource request, or a version, discovery or health path."""
        twin = self.server.twin
        if method not in METHODS:
            raise not_allowed()
        headers = {k.lower(): v for k, v in self.headers.items()}
        route = routes.parse(self.path)
        if route is None:
            accept = headers.get("accept") or ""
            reply = health.answer(twin, self.path) or discovery.non_resource(self.path, accept) \
                if method in ("GET", "HEAD") else None
            if reply is None:
                raise ApiError(404, "NotFound", routes.NOT_FOUND) if method in ("GET", "HEAD") else not_allowed()
            return self.send_reply(reply)
        routes.check_query(method, route.query)
        call = Call(method, route, user, headers, body)
        self.authorize(twin, call)
        self.answer(twin, call)

    def fail(self, exc: ApiError) -> None:
        """Answer an error with its Status; once a stream has started, only closing is left."""
        if self.streaming:
            self.close_connection = True
            return
        self.send_reply(Reply(exc.code, *exc.body()))

    def authorize(self, twin, call: Call) -> None:
        """Refuse what RBAC does not allow, with the authorizer's message."""
        r = call.route
        verb = routes.verb(call.method, r)
        if r.subresource == "exec":
            verb = "create"
        with twin.lock:
            permitted = authz.allowed(twin, call.user, verb, r.group, r.plural, r.subresource, r.namespace, r.name)
        if not permitted:
            resource = f"{r.plural}/{r.subresource}" if r.subresource else r.plural
            raise errors_forbidden(call, verb, resource)

    def answer(self, twin, call: Call) -> None:
        """Run the verb's handler (streaming ones write directly)."""
        r = call.route
        verb = routes.verb(call.method, r)
        served = SUBRESOURCE_VERBS.get(r.subresource, ()) if r.subresource else r.resource.verbs
        if verb not in served or (self.head_only and (verb == "watch" or r.subresource == "exec")):
            raise not_allowed()  # a stream has no headers-only form either
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

def not_allowed() -> ApiError:
    """Return the 405 for a method the requested resource does not serve."""
    return errors.method_not_allowed("the server does not allow this method on the requested resource")


def unexpected(exc: Exception, body: bytes) -> ApiError:
    """Turn an exception no handler expected into a Status: a body of the wrong shape is the client's error."""
    if body and isinstance(exc, (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError)):
        return errors.bad_request(f"the request body does not have the shape its kind needs ({type(exc).__name__}: "
                                  f"{str(exc)[:120]}); compare its fields with the API reference")
    log.exception("unexpected failure in the twin's API server")
    return ApiError(500, "InternalError", f"an internal error occurred: {type(exc).__name__}: {str(exc)[:120]}")


def errors_forbidden(call: Call, verb: str, resource: str) -> ApiError:
    """Build the RBAC denial for a call."""
    from aoi.twin.core.errors import forbidden

    r = call.route
    return forbidden(call.user.name, verb, r.resource, resource, r.group, r.namespace, r.name)


class TwinServer(ThreadingHTTPServer):
    """Serve one twin over HTTPS on 127.0.0.1; stopping wakes the accept loop at once (no polling)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, twin, tls: ssl.SSLContext, port: int = 0):
        super().__init__(("127.0.0.1", port), Handler)
        self.twin = twin
        self.tls = tls
        self.read_timeout = READ_TIMEOUT
        self._thread: threading.Thread | None = None
        self.unhandled = 0  # connections whose thread ended on an exception no handler caught (a bug)
        self._stopping = threading.Event()
        self._wake_reader, self._wake_writer = socket.socketpair()

    @property
    def url(self) -> str:
        """Return the https URL clients use."""
        return f"https://127.0.0.1:{self.server_address[1]}"

    def start(self) -> TwinServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="twin-api", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self, poll_interval: float | None = None) -> None:
        """Accept connections until shutdown() writes to the wake-up socket; poll_interval is not used."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.socket, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is self.socket and not self._stopping.is_set():
                        self._accept()

    def _accept(self) -> None:
        """Hand one waiting connection to its own thread."""
        try:
            request, address = self.get_request()
        except OSError:
            return
        try:
            self.process_request(request, address)
        except Exception:  # noqa: BLE001 - as socketserver does: one bad connection must not end the loop
            self.handle_error(request, address)
            self.shutdown_request(request)

    def handle_error(self, request, client_address):
        """Ignore clients that hang up (kubectl often closes watch and exec connections abruptly)."""
        import sys

        if not isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError, TimeoutError, OSError)):
            self.unhandled += 1
            super().handle_error(request, client_address)

    def shutdown(self) -> None:
        """Stop the accept loop now and wait for it to finish."""
        self._stopping.set()
        self._wake_writer.send(b"\0")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def stop(self) -> None:
        """Stop serving and close the sockets."""
        self.shutdown()
        self.server_close()
        self._wake_reader.close()
        self._wake_writer.close()
