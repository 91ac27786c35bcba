"""The trace export's CSV text is what csv.writer writes for the same spans, names that need quoting included."""

from __future__ import annotations

import csv
import io

from aoi.twin import build_twin
from aoi.twin.behaviour.requests import Span
from aoi.twin.behaviour.telemetry import TRACE_COLUMNS

HOTEL = "test-hotel-reservation"


def written_by_csv(spans: list[Span]) -> str:
    """Render spans the way the export did with csv.writer."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(TRACE_COLUMNS)
    for s in sorted(spans, key=lambda s: (s.start, s.trace_id, s.span_id)):
        writer.writerow([s.trace_id, s.span_id, s.parent or "ROOT", s.service, s.operation,
                         int(s.start * 1e6), max(int(s.duration * 1e6), 1), s.error, s.response])
    return out.getvalue()


def test_trace_csv_is_what_csv_writer_writes():
    twin = build_twin(["hotel-reservation"])
    behaviour = twin.extensions.behaviour
    frontend = next(p for p in twin.list("pods", HOTEL) if behaviour.component_of(p) == "frontend")
    routes = behaviour.workload_routes("mixed-workload_type_1.lua")
    for k in range(20):
        behaviour.request(frontend, routes, 10.0 + k)
    traces = behaviour.traces
    odd = [Span("ab", "cd", "", 'say "hi", then', "GET /a,b", 30.0, 0.0, True, ""),
           Span("ab", "ce", "cd", "", "multi\nline", 30.0, 0.5, False, "Unknown")]
    for span in odd:
        traces.add(HOTEL, span)
    now = twin.clock.now()
    spans = traces.window(HOTEL, 0, now)
    assert len(spans) > len(odd)
    assert traces.to_csv(HOTEL, 0, now) == written_by_csv(spans)
