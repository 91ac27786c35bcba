"""One request through an app's call graph: health decides each hop; out come spans, error logs and load."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from aoi.apps.catalog import App
from aoi.twin.behaviour.network import Reach, connect

STORES = ("mongodb", "memcached", "redis", "kafka")
HOP_SECONDS = 0.0015
ID_FORMATS = {64: "%016x", 128: "%032x"}  # span and trace ids in hex (% formats fastest: millions of ids)


@dataclass
class Span:
    """One span, as Jaeger stores it."""

    trace_id: str
    span_id: str
    parent: str  # "" for a root span
    service: str
    operation: str
    start: float
    duration: float
    error: bool
    response: str  # http status code or "Unknown"


@dataclass
class Outcome:
    """What a hop returns to its caller."""

    ok: bool
    latency: float
    detail: str = ""


@functools.lru_cache(maxsize=1024)  # a handful of call-graph edges, split thousands of times per batch
def parse_call(text: str) -> tuple[str, str, bool]:
    """Split 'component:operation?' into (component, operation, optional)."""
    optional = text.endswith("?")
    component, _, operation = text.rstrip("?").partition(":")
    return component, operation, optional


@dataclass(frozen=True)
class CallGraph:
    """An app's request data, read once: what each operation calls, and each component's name in traces."""

    calls: dict[str, tuple[tuple[str, str, bool], ...]]  # "component:operation" -> ((child, operation, optional), ...)
    names: dict[str, str]  # component -> its service name in traces (absent: its own name)

    @classmethod
    def of(cls, app: App) -> CallGraph:
        """Read an app's operations and tracing names."""
        operations = app.behaviour.get("operations") or {}
        return cls({key: tuple(parse_call(call) for call in calls) for key, calls in operations.items()},
                   (app.behaviour.get("tracing") or {}).get("names", {}))


class RequestEngine:
    """Evaluate requests against the current cluster state (one engine per twin)."""

    def __init__(self, behaviour, traces, load):
        self.behaviour = behaviour
        self.twin = behaviour.twin
        self.traces = traces  # TraceStore
        self.load = load  # LoadBook
        self._sampled = True
        self._trace = ""
        self._graphs: dict[str, CallGraph] = {}  # app name -> its call graph (app data never changes)

    def _graph(self, app: App) -> CallGraph:
        """Return the app's call graph, read on first use."""
        graph = self._graphs.get(app.name)
        if graph is None:
            graph = self._graphs[app.name] = CallGraph.of(app)
        return graph

    def _new_id(self, bits: int = 64) -> str:
        return ID_FORMATS[bits] % self.behaviour.rng.getrandbits(bits)

    def request(self, app: App, pod: dict, component: str, operation: str, t: float, sample: float) -> Outcome:
        """Serve one request arriving at a pod of `component`; return its outcome."""
        self._trace = self._new_id(128)
        self._sampled = self.behaviour.rng.random() < sample
        return self.serve(app, pod, component, operation, t, "")

    def serve(self, app: App, pod: dict, component: str, operation: str, t: float, parent: str) -> Outcome:
        """Handle an operation in a pod: apply flags, call the children, record the span."""
        span_id = self._new_id()
        ok, latency, detail = True, HOP_SECONDS * (1 + self.behaviour.rng.random()), ""
        effect = self.behaviour.flag_effect(app, component, operation)
        latency += effect.latency
        if effect.error_rate and self.behaviour.rng.random() < effect.error_rate:
            ok, detail = False, effect.message
            self.behaviour.log_error(pod, app, "failed", callee=component, operation=operation, detail=detail)
        for child, child_op, optional in self._graph(app).calls.get(f"{component}:{operation}", ()):
            result = self.call(app, pod, component, child, child_op, t + latency, span_id, effect)
            latency += result.latency
            if not result.ok and not optional:
                ok, detail = False, detail or result.detail
        self.load.served(pod, t)
        self._record(component, operation, span_id, parent, t, latency, not ok, app)
        return Outcome(ok, latency, detail)

    def call(self, app: App, pod: dict, component: str, child: str, operation: str, t: float, parent: str,
             effect) -> Outcome:
        """Call a child component from a pod of `component`."""
        spec = app.components.get(child, {})
        if child in effect.unreachable:
            reach = Reach(False, "unresolved")
        else:
            reach = connect(self.twin, self.behaviour, pod["metadata"]["namespace"], child, spec.get("port", 0),
                            self.behaviour.rng.randrange(1 << 16))
        if spec.get("protocol") in STORES:
            return self._store_call(app, pod, component, child, operation, t, parent, reach)
        if not reach.ok:
            return self._failed_hop(app, pod, component, child, operation, t, parent, reach)
        result = self.serve(app, reach.pod, child, operation, t + reach.delay, parent)
        if not result.ok:
            self.behaviour.log_error(pod, app, "failed", callee=child, operation=operation, detail=result.detail)
        return Outcome(result.ok, result.latency + reach.delay, result.detail)

    def _failed_hop(self, app, pod, component, child, operation, t, parent, reach: Reach) -> Outcome:
        """Record a client span that never reached its server, and the caller's error log."""
        wait = 1.0 if reach.error == "timeout" else 0.001
        port = app.components.get(child, {}).get("port", "")
        detail = self.behaviour.log_error(pod, app, reach.error, callee=child, operation=operation, port=port,
                                          address=reach.address or f"{child}:{port}")
        self._record(component, operation, self._new_id(), parent, t, wait, True, app)
        return Outcome(False, wait, detail)

    def _store_call(self, app, pod, component, store, operation, t, parent, reach: Reach) -> Outcome:
        """Call a datastore: reachability plus (for MongoDB) TLS and authorization."""
        problem = "" if reach.ok else reach.error
        if reach.ok and app.components[store].get("protocol") == "mongodb":
            problem = self.behaviour.mongo_access_problem(app, component, reach)
        latency = 0.0008 + reach.delay if not problem else (1.0 if problem == "timeout" else 0.002)
        if problem:
            detail = self.behaviour.log_error(pod, app, problem if problem in ("refused", "timeout", "unresolved")
                                              else "failed", callee=store, operation=operation,
                                              port=app.components[store].get("port", ""), address=reach.address,
                                              detail=problem)
            self._record(component, operation, self._new_id(), parent, t, latency, True, app)
            return Outcome(False, latency, detail)
        self._record(component, operation, self._new_id(), parent, t, latency, False, app)
        return Outcome(True, latency)

    def _record(self, component, operation, span_id, parent, t, latency, error, app: App) -> None:
        """Keep a span of a sampled trace."""
        if not self._sampled:
            return
        service = self._graph(app).names.get(component, component)
        response = ("500" if error else "200") if operation.startswith(("HTTP", "GET", "POST", "/wrk2")) else "Unknown"
        self.traces.add(app.namespace, Span(self._trace, span_id, parent, service, operation, t, latency, error,
                                            response))
