"""Watch streams: replay changes after a resource version, then follow new ones as chunked JSON lines."""

from __future__ import annotations

import re
import time

import orjson

from aoi.twin.api.handlers import JSON, TABLE, Call, matcher
from aoi.twin.api.presentation import clock_shift, present
from aoi.twin.api.tables import render_table

WAIT_SLICE = 0.25  # seconds between checks for a closed connection or a deadline
HANG_UP_GRACE = 0.05  # manual time: how long a client that has what it waited for gets to hang up
DEFAULT_TIMEOUT = 1800.0
_GO_DURATION = re.compile(r"(\d+(?:\.\d*)?)(h|ms|us|µs|ns|m|s)")
_UNITS = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def go_duration(text: str) -> float | None:
    """Parse a Go duration such as `5s`, `1m30s` or `250ms` into seconds (None when malformed).

    Example:
        >>> go_duration("1m30s"), go_duration("250ms"), go_duration("soon")
        (90.0, 0.25, None)
    """
    parts = _GO_DURATION.findall(text or "")
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNITS[u] for n, u in parts)


def watch_timeout(route) -> float:
    """Return how long a watch lasts: timeoutSeconds, else the client's request timeout (`--request-timeout`).

    A real server ignores `timeout` on watches and the client hangs up when it passes; the twin ends the stream
    itself, so in manual time the client's deadline counts on the twin's clock like every other wait.
    """
    if route.arg("timeoutSeconds"):
        return float(route.arg("timeoutSeconds"))
    return go_duration(route.arg("timeout")) or DEFAULT_TIMEOUT


def _event(twin, call: Call, type_: str, obj: dict) -> bytes:
    """Encode one watch event line (a one-row Table when the client prints tables)."""
    if call.wants_table:
        table = render_table(call.route.resource.key, [obj], twin.clock.now(),
                             include_object=call.route.arg("includeObject", "Metadata"))
        table["metadata"]["resourceVersion"] = obj["metadata"].get("resourceVersion", "")
        obj = table
    else:
        obj = present(obj, call.route.resource.kind, clock_shift(twin, call.headers, call.route), listed=True)
    return orjson.dumps({"type": type_, "object": obj}) + b"\n"


def _pending(twin, call: Call, rv: int, match) -> tuple[list[bytes], int]:
    """Collect encoded events after rv that pass the selectors; return them and the newest rv."""
    out = []
    for change in twin.store.changes_since(rv, call.route.resource, call.route.namespace or None):
        rv = change.rv
        obj = orjson.loads(change.data)
        if change.type == "DELETED":
            obj["metadata"]["resourceVersion"] = str(change.rv)
        if match(obj):
            out.append(_event(twin, call, change.type, obj))
    return out, rv


def _fast_forward(twin, call: Call, rv: int, match, sim_end: float) -> None:
    """In manual time, let simulated time run toward the next change, within the command's budget."""
    limit = min(twin.sim_deadline, sim_end) if twin.sim_deadline is not None else None
    nxt = twin.next_timer()
    if limit is None or twin.clock.now() >= limit or (nxt is None and limit < sim_end):
        twin.stalled = True
        return
    twin.advance_to(limit, stop=lambda: bool(_pending(twin, call, rv, match)[0]))


def _start(twin, call: Call, match) -> tuple[list[bytes], int | None]:
    """Return the events a watch opens with and the version it follows from (None: the stream ends at once).

    Without a resourceVersion every current object comes first as ADDED; a version older than the change log
    can replay is answered as a real server does, with an ERROR event carrying 410 Expired.
    """
    start = call.route.arg("resourceVersion")
    if not start or start == "0":
        objects = twin.store.list(call.route.resource, call.route.namespace or None, match)
        return [_event(twin, call, "ADDED", o) for o in objects], twin.store.rv
    if not start.isdigit() or int(start) < twin.store.oldest_rv():
        status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Expired",
                  "message": f"too old resource version: {start} ({twin.store.oldest_rv()})", "code": 410}
        return [orjson.dumps({"type": "ERROR", "object": status}) + b"\n"], None
    return [], int(start)


def serve_watch(handler, twin, call: Call) -> None:
    """Stream watch events until timeoutSeconds (wall time) passes or the client goes away."""
    route = call.route
    base = matcher(route)
    match = base if not route.name else (lambda o: base(o) and o["metadata"]["name"] == route.name)
    timeout = watch_timeout(route)
    stop_at = time.monotonic() + timeout
    handler.start_stream(TABLE if call.wants_table else JSON)
    with twin.lock:
        initial, rv = _start(twin, call, match)
    if initial and not handler.write_chunk(b"".join(initial)):
        return
    if rv is None:
        return handler.end_stream()
    sim_end = twin.clock.now() + timeout  # in manual time the request timeout runs on the twin's clock
    while time.monotonic() < stop_at:
        lines, rv, ended = _next_lines(handler, twin, call, rv, match, sim_end)
        if ended:
            break
        if lines and not handler.write_chunk(b"".join(lines)):
            return
        if not lines and not handler.connection_alive():
            return
    handler.end_stream()


def _next_lines(handler, twin, call: Call, rv: int, match, sim_end: float) -> tuple[list[bytes], int, bool]:
    """Wait for the next events: real time in wall mode; in manual mode pull simulated time forward.

    In manual time the client gets a moment to hang up first: one that already has what it waited for (a rollout
    that finished, a pod that is gone) closes now, and simulated time must not run on for it.
    Returns (lines, newest rv, stream over).
    """
    with twin.lock:
        lines, rv = _pending(twin, call, rv, match)
    if lines:
        return lines, rv, False
    if twin.clock_mode == "manual":
        if not handler.connection_alive(HANG_UP_GRACE):
            return [], rv, True
        with twin.lock:
            if twin.clock.now() >= sim_end:
                return [], rv, True
            _fast_forward(twin, call, rv, match, sim_end)
            lines, rv = _pending(twin, call, rv, match)
        if lines or not twin.stalled:
            return lines, rv, False
    with twin.lock:
        twin.store.changed.wait(WAIT_SLICE)
        lines, rv = _pending(twin, call, rv, match)
    return lines, rv, False


POLLING_COMMANDS = ("kubectl drain",)  # they wait for deletions by GETting each object once a second


def pull_for_poll(twin, call: Call) -> None:
    """In manual time, let a polling command's wait pass on the twin's clock.

    A GET of an object being deleted runs simulated time (within the command's budget) until the object is gone,
    as a watch would; `kubectl drain` polls its evicted pods this way.
    """
    r = call.route
    if twin.clock_mode != "manual" or call.method != "GET" or not r.name or r.subresource:
        return
    if (call.headers.get("kubectl-command") or "") not in POLLING_COMMANDS:
        return
    with twin.lock:
        obj = twin.store.get(r.resource, r.namespace, r.name)
        if obj is None or not obj["metadata"].get("deletionTimestamp") or twin.sim_deadline is None:
            return
        uid = obj["metadata"]["uid"]
        twin.advance_to(twin.sim_deadline, stop=lambda: _uid(twin, r) != uid)


def _uid(twin, route) -> str | None:
    """Return the uid of the object a route names (a same-name successor, as a StatefulSet makes, differs)."""
    obj = twin.store.get(route.resource, route.namespace, route.name)
    return obj["metadata"]["uid"] if obj else None
