"""What the observability stack would hold: Jaeger spans and per-container load, and their CSV exports."""

from __future__ import annotations

import csv
import functools
import io
from collections import defaultdict, deque

from aoi.twin.behaviour.requests import Span

TRACE_COLUMNS = ["trace_id", "span_id", "parent_span", "service_name", "operation_name", "start_time", "duration",
                 "has_error", "response"]
BUCKET = 15.0  # seconds: Prometheus' query step in AIOpsLab's exports


@functools.lru_cache(maxsize=4096)  # a few hundred names (services, operations) fill every trace export
def csv_field(text: str) -> str:
    """Return a text field as csv.writer writes it inside a row (quoted only where it must be).

    Example:
        >>> csv_field("HTTP GET /hotels"), csv_field('say "hi", then go')
        ('HTTP GET /hotels', '"say ""hi"", then go"')
    """
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([text, ""])  # two fields: a lone empty field would be quoted
    return out.getvalue()[:-2]


class TraceStore:
    """Spans per namespace, bounded like a Jaeger in-memory store."""

    def __init__(self, limit: int = 100_000):
        self.limit = limit
        self.spans: dict[str, deque[Span]] = defaultdict(lambda: deque(maxlen=limit))

    def __deepcopy__(self, memo) -> TraceStore:
        """Copy the per-namespace queues; spans are immutable and shared."""
        new = TraceStore(self.limit)
        for namespace, spans in self.spans.items():
            new.spans[namespace].extend(spans)
        return new

    def add(self, namespace: str, span: Span) -> None:
        """Keep one span."""
        self.spans[namespace].append(span)

    def window(self, namespace: str, since: float, until: float) -> list[Span]:
        """Return the spans of traces that started in [since, until]."""
        return [s for s in self.spans.get(namespace, ()) if since <= s.start <= until]

    def to_csv(self, namespace: str, since: float, until: float) -> str:
        """Render spans as AIOpsLab's trace export (times in microseconds, ROOT for root spans), as csv.writer would.

        Ids are hex and numbers need no quoting; the names (service, operation, response) go through csv_field.
        """
        spans = sorted(self.window(namespace, since, until), key=lambda s: (s.start, s.trace_id, s.span_id))
        return ",".join(TRACE_COLUMNS) + "\n" + "".join(
            f"{s.trace_id},{s.span_id},{s.parent or 'ROOT'},{csv_field(s.service)},{csv_field(s.operation)},"
            f"{int(s.start * 1e6)},{max(int(s.duration * 1e6), 1)},{s.error},{csv_field(s.response)}\n" for s in spans)


class LoadBook:
    """Requests served per pod and 15-second bucket (drives CPU and network metrics)."""

    def __init__(self):
        self.requests: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))

    def served(self, pod: dict, t: float) -> None:
        """Count one request served by a pod at time t."""
        self.requests[pod["metadata"]["uid"]][int(t // BUCKET)] += 1

    def rate(self, uid: str, t: float) -> float:
        """Return requests per second served by a pod in the bucket holding t."""
        return self.requests.get(uid, {}).get(int(t // BUCKET), 0) / BUCKET

    def total(self, uid: str, until: float) -> int:
        """Return all requests a pod served up to time until."""
        last = int(until // BUCKET)
        return sum(n for b, n in self.requests.get(uid, {}).items() if b <= last)
