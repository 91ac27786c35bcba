"""A state-space soak of the twin: random API operations of every identity, clock advances and reconciles, with the
invariants checked after every step (aoi.twin.soak_ops draws the operations).

After each step: no connection thread died, no connection was dropped and no request got a 5xx, the API answers
(/readyz is ok, so no reconcile faulted), and every object the step changed round-trips through the official
Kubernetes Python client's models. Callers add their own checks (the apps' health checks: tests/twin/test_soak.py,
benchmarks/twin_soak.py).
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from aoi.twin.api.models import model_of
from aoi.twin.serving import kubeconfig, serve
from aoi.twin.soak_ops import Draw, Request, request

ADVANCES = (1.0, 5.0, 15.0, 60.0, 300.0)
TIMEOUT = 30.0  # seconds one request may take before it counts as a hang


class Soak:
    """Drive clones of a base twin through drawn steps and report what broke.

    Example:
        >>> soak = Soak(build_twin(["hotel-reservation"]))  # doctest: +SKIP
        >>> soak.step(RandomDraw(random.Random(0))); soak.check()  # doctest: +SKIP
        []
    """

    def __init__(self, base, shared: Sequence = (), checks: Sequence[Callable[[Soak], list[str]]] = ()):
        self.base, self.shared, self.checks = base, list(shared), list(checks)
        self.twin = None
        self.server = None
        self.sequence = 0  # how many fresh clones begin() has made
        self.begin()
        with self.twin.lock:  # the first check reads every stored object back, the later ones what changed
            self.changed = {(res, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]): None
                            for res in self.twin.store.resources() for obj in self.twin.store.list(res)}

    # --- lifecycle ---
    def begin(self) -> None:
        """Start a fresh sequence on a clone of the base twin (the server stays, serving the new clone)."""
        self.twin = self.base.clone(self.shared, lazy=True)
        self.twin.store.listeners.append(self._changed)
        if self.server is None:
            self.server = serve(self.twin)
        self.server.twin = self.twin
        self.sequence += 1
        self.changed: dict[tuple, object] = {}
        self.pending: list[str] = []  # what went wrong during the step itself
        self.faults, self.unhandled = self.twin.faults.total, self.server.unhandled
        self._conns: dict[str, http.client.HTTPSConnection] = {}

    def close(self) -> None:
        """Stop serving."""
        for conn in self._conns.values():
            conn.close()
        self.server.stop()

    def kubeconfig(self, role: str = "admin") -> dict:
        """Return a kubeconfig of the current clone for a role (the clients of callers' checks)."""
        return kubeconfig(self.server.url, role, self.twin.credentials[role])

    # --- steps ---
    def step(self, draw: Draw) -> str:
        """Take one drawn step (an API request, a clock advance or a reconcile); return it in one line."""
        pick = draw.integer(0, 19)
        if pick < 16:
            req = request(draw, self.twin)
            return f"{req.label()} -> {self.send(req)}"
        if pick < 19:
            seconds = draw.choice(ADVANCES)
            self.twin.advance(seconds)
            return f"advance {seconds:g}s"
        with self.twin.lock:
            return f"settle: {self.twin.settle()} reconciles"

    def send(self, req: Request):
        """Send a request as its role; return the status code ('dropped' or 'hang' when none came)."""
        for attempt in (0, 1):  # a kept-alive connection the server closed meanwhile gets one fresh try
            conn = self._conn(req.role)
            try:
                conn.request(req.method, req.path, body=req.body, headers=self._headers(req))
                resp = conn.getresponse()
                data = resp.read()
            except TimeoutError:
                return self._failed(conn, req, "hang")
            except (ConnectionError, http.client.HTTPException, ssl.SSLError, OSError):
                if attempt:
                    return self._failed(conn, req, "dropped")
                conn.close()
                continue
            if resp.status >= 500 and resp.status != 505:
                self.pending.append(f"{req.label()} answered {resp.status}: {data[:300]!r}")
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
            return resp.status
        return "dropped"

    def _failed(self, conn, req: Request, outcome: str) -> str:
        """Note a request that got no answer."""
        conn.close()
        self.pending.append(f"{req.label()}: {outcome}")
        return outcome

    def _headers(self, req: Request) -> dict:
        return {"Authorization": f"Bearer {self.twin.credentials[req.role]}", "Content-Type": req.ctype,
                "Accept": req.accept}

    def _conn(self, role: str) -> http.client.HTTPSConnection:
        """Return the kept-alive connection of a role, opening it when it was closed."""
        conn = self._conns.get(role)
        if conn is None or conn.sock is None:
            url = urlsplit(self.server.url)
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # the loopback self-signed cert
            conn = self._conns[role] = http.client.HTTPSConnection(url.hostname, url.port, context=context,
                                                                   timeout=TIMEOUT)
        return conn

    def _changed(self, kind: str, res, obj: dict) -> None:
        """Note an object a step changed (a store listener)."""
        meta = obj["metadata"]
        self.changed[(res, meta.get("namespace", ""), meta["name"])] = None

    # --- invariants ---
    def check(self) -> list[str]:
        """Return what broke since the last check (nothing, when all is well)."""
        found, self.pending = self.pending, []
        if self.server.unhandled != self.unhandled or not self.server._thread.is_alive():
            found.append(f"{self.server.unhandled - self.unhandled} connection thread(s) died (see stderr)")
            self.unhandled = self.server.unhandled
        found += self._answers() + self._faulted() + self._round_trips()
        for check in self.checks:
            found += check(self)
        return found

    def _answers(self) -> list[str]:
        """Ask /readyz as admin: the API must answer, and ok."""
        status = self.send(Request("admin", "GET", "/readyz?verbose"))
        return [] if status == 200 else [f"/readyz answered {status}: {self.twin.faults.report()}"]

    def _faulted(self) -> list[str]:
        """Report reconciles that raised since the last check."""
        faults = self.twin.faults
        if faults.total == self.faults:
            return []
        new, self.faults = faults.total - self.faults, faults.total
        return [f"{new} reconcile fault(s), the last: {faults.last.line()}"]

    def _round_trips(self) -> list[str]:
        """Read every object changed since the last check back through the client's models."""
        from kubernetes.client import ApiClient

        api, found = ApiClient(), []
        with self.twin.lock:
            changed, self.changed = self.changed, {}
            objects = [(res, obj) for res, ns, name in changed if (obj := self.twin.store.get(res, ns, name))]
            texts = [(res, obj["metadata"], json.dumps(obj)) for res, obj in objects]
        for res, meta, text in texts:
            model = model_of(res.kind, res.version)
            if model is None:
                continue
            try:
                api.sanitize_for_serialization(api.deserialize(text, model.__name__, "application/json"))
            except Exception as exc:  # noqa: BLE001 - whatever the client raises is the finding
                found.append(f"{res.kind} {meta.get('namespace', '')}/{meta['name']} does not round-trip through "
                             f"{model.__name__}: {' '.join(str(exc).split())[:300]}")
        return found
