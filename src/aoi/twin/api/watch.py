"""Watch streams: replay changes after a resource version, then follow new ones as chunked JSON lines."""

from __future__ import annotations

import time

import orjson

from aoi.twin.api.handlers import TABLE, JSON, Call, matcher
from aoi.twin.api.tables import render_table

WAIT_SLICE = 0.25  # seconds between checks for a closed connection or a deadline


def _event(twin, call: Call, type_: str, obj: dict) -> bytes:
    """Encode one watch event line (a one-row Table when the client prints tables)."""
    if call.wants_table:
        table = render_table(call.route.resource.key, [obj], twin.clock.now(),
                             include_object=call.route.arg("includeObject", "Metadata"))
        table["metadata"]["resourceVersion"] = obj["metadata"].get("resourceVersion", "")
        obj = table
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


def _fast_forward(twin, call: Call, rv: int, match) -> None:
    """In manual time, let simulated time run toward the next timer within the command's budget."""
    deadline = twin.sim_deadline
    nxt = twin.next_timer()
    if deadline is None or nxt is None or nxt > deadline:
        twin.stalled = True
        return
    twin.advance_to(deadline, stop=lambda: bool(_pending(twin, call, rv, match)[0]))


def serve_watch(handler, twin, call: Call) -> None:
    """Stream watch events until timeoutSeconds (wall time) passes or the client goes away."""
    route = call.route
    base = matcher(route)
    match = base if not route.name else (lambda o: base(o) and o["metadata"]["name"] == route.name)
    timeout = float(route.arg("timeoutSeconds") or 1800)
    stop_at = time.monotonic() + timeout
    handler.start_stream(TABLE if call.wants_table else JSON)
    with twin.lock:
        start = route.arg("resourceVersion")
        rv = int(start) if start and start != "0" else twin.store.rv
        if not start or start == "0":
            initial = [_event(twin, call, "ADDED", o) for o in
                       twin.store.list(route.resource, route.namespace or None, match)]
        else:
            initial = []
    if initial and not handler.write_chunk(b"".join(initial)):
        return
    while time.monotonic() < stop_at:
        with twin.lock:
            lines, rv = _pending(twin, call, rv, match)
            if not lines and twin.clock_mode == "manual":
                _fast_forward(twin, call, rv, match)
                lines, rv = _pending(twin, call, rv, match)
            if not lines:
                twin.store.changed.wait(WAIT_SLICE)
                lines, rv = _pending(twin, call, rv, match)
        if lines and not handler.write_chunk(b"".join(lines)):
            return
        if not lines and not handler.connection_alive():
            return
    handler.end_stream()
